/* The structure pass of the datasets file in one scan (part of the _scan module; the
 * reference is kagreport.kag._datasets, which runs where this declines).
 *
 * datasets_structure(data) reads a datasets file's bytes once and returns (depth, fields,
 * names): depth, the deepest nesting of containers (what _datasets._nests tells, level by
 * level); fields, True when no entry (level three) gives "input" or "output" twice and no
 * MCQ output (the object value of an entry's "output") gives "type", "options" or "answer"
 * twice: kag's serde refuses such a field given twice, msgspec keeps the last. False means
 * "not sure" (a field given twice, or one of those keys spelt with an escape): Python then
 * looks for the repeat and says where. names, True when every key of the two outer levels
 * (dataset and question names) is a valid component name written plainly (False: Python
 * checks them and says which is not). numbers, True when no number has an exponent of
 * three digits or more, or 200 digits in a row: then each is a finite f64 however serde_json
 * rounds it (False: Python reads the numbers kag's serde reads). None when the brackets are
 * not balanced and matched, or nest deeper than the pass follows: Python does the whole pass
 * then.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "_scan.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_DEPTH 1024

/* The first '"' or '\\' at or after p (end if none): sixteen bytes at a time, as most of
 * the file is the text of questions and options. */
static inline const unsigned char *quote_or_backslash(const unsigned char *p,
                                                      const unsigned char *end)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        unsigned found = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
        if (found)
            return p + __builtin_ctz(found);
        p += 16;
    }
#endif
    while (p < end && *p != '"' && *p != '\\')
        p++;
    return p;
}

enum { ENTRY_DEPTH = 3, OUTPUT_DEPTH = 4 };

/* Which field a key of an entry or an output is (a bit), 0 for any other key. */
static unsigned field_bit(const unsigned char *key, Py_ssize_t size, int output)
{
#define IS(literal) (size == (Py_ssize_t)sizeof(literal) - 1 && memcmp(key, literal, size) == 0)
    if (!output)
        return IS("input") ? 1 : IS("output") ? 2 : 0;
    return IS("type") ? 1 : IS("options") ? 2 : IS("answer") ? 4 : 0;
#undef IS
}

PyObject *kagreport_datasets_structure(PyObject *module, PyObject *data)
{
    (void)module;
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "datasets_structure() takes bytes");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(data);
    const unsigned char *end = p + PyBytes_GET_SIZE(data);
    unsigned char open[MAX_DEPTH + 1];  /* the bracket of each open container */
    unsigned seen[MAX_DEPTH + 1];       /* the fields an entry or output has given */
    unsigned char kind[MAX_DEPTH + 1];  /* 1: an entry, 2: an MCQ output, 0: other */
    int depth = 0, deepest = 0, fields = 1, names = 1, numbers = 1;
    int digits = 0;            /* digits in a row, outside strings */
    int expect_key = 0;        /* the next string is a key of the object at `depth` */
    int output_value = 0;      /* the value being read is an entry's "output" */
    for (; p < end; p++) {
        unsigned char b = *p;
        if (b >= '0' && b <= '9') {
            numbers &= ++digits < 200;
            continue;
        }
        digits = 0;
        if (b == 'e' || b == 'E') {  /* an exponent (or a letter of true, false) */
            const unsigned char *q = p + 1;
            q += q < end && (*q == '+' || *q == '-');
            numbers &= !(end - q >= 3 && q[0] >= '0' && q[0] <= '9' && q[1] >= '0' && q[1] <= '9'
                         && q[2] >= '0' && q[2] <= '9');
        } else if (b == '"') {
            const unsigned char *start = ++p;
            int escaped = 0;
            for (;;) {
                p = quote_or_backslash(p, end);
                if (p >= end || *p == '"')
                    break;
                escaped = 1;
                p += 2;  /* the backslash and the byte it escapes */
            }
            if (p >= end)
                Py_RETURN_NONE;  /* a string that never ends */
            if (expect_key && depth <= 2 && names)
                names = !escaped && kagreport_component_name(start, (size_t)(p - start));
            if (expect_key && depth > 0 && kind[depth] != 0) {
                unsigned bit = field_bit(start, p - start, kind[depth] == 2);
                if (escaped)
                    fields = 0;  /* a key spelt with an escape: Python decodes it */
                else if (bit != 0 && (seen[depth] & bit))
                    fields = 0;
                else
                    seen[depth] |= bit;
                output_value = kind[depth] == 1 && bit == 2;
            } else if (expect_key) {
                output_value = 0;
            }
            expect_key = 0;
        } else if (b == '{' || b == '[') {
            if (depth == MAX_DEPTH)
                Py_RETURN_NONE;
            depth++;
            open[depth] = b;
            seen[depth] = 0;
            kind[depth] = b != '{' ? 0
                        : depth == ENTRY_DEPTH ? 1
                        : depth == OUTPUT_DEPTH && output_value && kind[depth - 1] == 1 ? 2
                        : 0;
            if (depth > deepest)
                deepest = depth;
            expect_key = b == '{';
            output_value = 0;
        } else if (b == '}' || b == ']') {
            if (depth == 0 || open[depth] != (b == '}' ? '{' : '['))
                Py_RETURN_NONE;
            depth--;
            expect_key = 0;
            output_value = 0;
        } else if (b == ',') {
            expect_key = depth > 0 && open[depth] == '{';
            output_value = 0;
        }
    }
    if (depth != 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(iOOO)", deepest, fields ? Py_True : Py_False,
                         names ? Py_True : Py_False, numbers ? Py_True : Py_False);
}
