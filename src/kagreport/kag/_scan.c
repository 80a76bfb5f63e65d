/* The compiled fast path of kagreport.kag._records.decode_result.
 *
 * decode(data) reads one result file in the shape `kag benchmark` writes and returns the
 * same ResultRecord the Python decoder returns, or None: None means "not certainly the
 * common shape", and the Python decoder (the reference, with kag's every rule) then
 * decides. So this file only has to be right about what it accepts, never about why a
 * file is refused. It accepts the files kag writes: every field typed, no unknown or
 * repeated key, no escape in a key or a component name, integers of at most 18 digits,
 * floats that cannot overflow an f64 (at most 200 integer digits, 2 exponent digits),
 * durations whose nanoseconds fit in an int64, strings of valid UTF-8 with no escaped
 * surrogate. Anything else gives None.
 *
 * read_record(path) reads a regular file and decodes it in one call; list_results(folder,
 * prefix) lists a question folder's result files. Both give None for anything unusual (an
 * error included), and Python does it again, raising what it must. grade_folder does what
 * kagreport.grading._chunk.grade_chunk does for one question folder (list, read, decode,
 * grade, add up) without a Python object per file, or nothing, for Python to do it.
 *
 * tests/kag/test_scan.py checks all three against the Python code on real, simulated,
 * generated and mutated files; tests/grading/test_decoders.py compares whole commands with
 * KAGREPORT_DECODER=python, which turns the scanner off.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "_scan.h"

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
} Cur;

/* A string field read in place: its bytes between the quotes and its decoded size. */
typedef struct {
    const unsigned char *start;
    Py_ssize_t raw;      /* bytes between the quotes */
    Py_ssize_t utf8;     /* UTF-8 bytes once decoded (the Python len(s.encode())) */
    int escaped;
} Str;

/* What a success record carries back (NULL: not seen yet). With `objects` 0 (grading in
 * place) no Python object is made: the response is left as its span, `result_span`. */
typedef struct {
    PyObject *result, *provider, *model, *context;
    long long generation_ns, context_bytes;
    long long retrieval_ns, vertices, relationships, properties;
    int has_retrieval;
    int objects;
    Str result_span;
} Ok;

static PyObject *empty_text = NULL;  /* "" */
static PyObject *record_type = NULL;  /* kagreport.kag._records.ResultRecord */
static PyObject *sample_type = NULL;  /* kagreport.kag._records.RetrievalSample */

/* 0: plain string byte; 1: '"' or '\\'; 2: control byte; 3: non-ASCII. */
static unsigned char byte_class[256];

static void init_classes(void)
{
    for (int b = 0; b < 256; b++)
        byte_class[b] = b < 0x20 ? 2 : b >= 0x80 ? 3 : (b == '"' || b == '\\') ? 1 : 0;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* The index of the first non-zero byte of a word (in memory order). */
static inline int first_byte(uint64_t word)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_clzll(word) >> 3;
#else
    return __builtin_ctzll(word) >> 3;
#endif
}

/* The loops below run to a byte that ends them without checking the end: the data is a
 * bytes object, whose buffer always has a NUL after its last byte, and a NUL ends each.
 * Eight bytes are looked at at a time where eight are left: kag indents with runs of
 * spaces (half of a file) and writes a vector's numbers with about ten digits. */
static inline void skip_ws(Cur *c)
{
    const unsigned char *p = c->p, *end = c->end;
    for (;;) {
        while (*p == '\n' || *p == '\r' || *p == '\t')
            p++;
        if (*p != ' ')
            break;
        for (;;) {
            uint64_t word;
            if (end - p < 8) {
                while (*p == ' ')
                    p++;
                break;
            }
            memcpy(&word, p, 8);
            uint64_t other = word ^ (' ' * ONES);  /* its first non-zero byte: no space */
            if (other) {
                p += first_byte(other);
                break;
            }
            p += 8;
        }
    }
    c->p = p;
}

static inline int eat(Cur *c, unsigned char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* The length of the well-formed UTF-8 sequence at p (Unicode Table 3-7), 0 if none. */
static inline int utf8_sequence(const unsigned char *p, const unsigned char *end)
{
    unsigned char b = p[0];
    Py_ssize_t left = end - p;
    if (b >= 0xC2 && b <= 0xDF)
        return left >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (b >= 0xE0 && b <= 0xEF) {
        if (left < 3 || (p[2] & 0xC0) != 0x80)
            return 0;
        unsigned char lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 3 : 0;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        if (left < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        unsigned char lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 4 : 0;
    }
    return 0;
}

static inline int hex_value(unsigned char h)
{
    if (h >= '0' && h <= '9')
        return h - '0';
    if (h >= 'a' && h <= 'f')
        return h - 'a' + 10;
    if (h >= 'A' && h <= 'F')
        return h - 'A' + 10;
    return -1;
}

/* \uXXXX at p (p at 'u'): the code point, -1 if malformed or a surrogate. */
static inline long escaped_code_point(const unsigned char *p, const unsigned char *end)
{
    if (end - p < 5)
        return -1;
    long cp = 0;
    for (int i = 1; i <= 4; i++) {
        int h = hex_value(p[i]);
        if (h < 0)
            return -1;
        cp = cp * 16 + h;
    }
    return cp >= 0xD800 && cp <= 0xDFFF ? -1 : cp;
}

static inline int utf8_size(long cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3; }

/* Where the run of plain string bytes at p ends: the first '"', '\\', control or
 * non-ASCII byte (or the NUL after the data), eight bytes at a time. */
static inline const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
    while (end - p >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        uint64_t low = word & ~HIGHS;
        uint64_t control = ~(low + (0x80 - 0x20) * ONES);  /* high bit: byte < 0x20 */
        uint64_t quote = ~((((word ^ ('"' * ONES)) & ~HIGHS) + ~HIGHS) | (word ^ ('"' * ONES)));
        uint64_t slash = ~((((word ^ ('\\' * ONES)) & ~HIGHS) + ~HIGHS) | (word ^ ('\\' * ONES)));
        uint64_t special = (control | quote | slash | word) & HIGHS;
        if (special)
            return p + first_byte(special);
        p += 8;
    }
    while (byte_class[*p] == 0)
        p++;
    return p;
}

/* A JSON string at the cursor (after white space): 0 and its span, -1 if not the fast path's. */
static int scan_string(Cur *c, Str *s)
{
    skip_ws(c);
    const unsigned char *p = c->p, *end = c->end;
    if (p >= end || *p != '"')
        return -1;
    p++;
    s->start = p;
    s->escaped = 0;
    Py_ssize_t utf8 = 0;
    for (;;) {
        const unsigned char *run = p;
        p = plain_run(p, end);
        utf8 += p - run;
        if (p >= end)
            return -1;
        unsigned char b = *p;
        if (b == '"')
            break;
        if (b == '\\') {
            s->escaped = 1;
            if (p + 1 >= end)
                return -1;
            switch (p[1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                utf8 += 1;
                p += 2;
                break;
            case 'u': {
                long cp = escaped_code_point(p + 1, end);
                if (cp < 0)
                    return -1;
                utf8 += utf8_size(cp);
                p += 6;
                break;
            }
            default:
                return -1;
            }
            continue;
        }
        if (b < 0x20)
            return -1;  /* a raw control character: serde refuses it */
        int n = utf8_sequence(p, end);
        if (n == 0)
            return -1;
        utf8 += n;
        p += n;
    }
    s->raw = p - s->start;
    s->utf8 = utf8;
    c->p = p + 1;
    return 0;
}

/* The UTF-8 of a scanned escaped string, written to `buffer` (s->utf8 bytes): its end. */
static char *unescape(const Str *s, char *buffer)
{
    const unsigned char *p = s->start, *end = s->start + s->raw;
    char *out = buffer;
    while (p < end) {
        if (*p != '\\') {
            *out++ = (char)*p++;
            continue;
        }
        unsigned char e = p[1];
        switch (e) {
        case 'b': *out++ = '\b'; break;
        case 'f': *out++ = '\f'; break;
        case 'n': *out++ = '\n'; break;
        case 'r': *out++ = '\r'; break;
        case 't': *out++ = '\t'; break;
        case 'u': {
            long cp = escaped_code_point(p + 1, end);
            if (cp < 0x80) {
                *out++ = (char)cp;
            } else if (cp < 0x800) {
                *out++ = (char)(0xC0 | (cp >> 6));
                *out++ = (char)(0x80 | (cp & 0x3F));
            } else {
                *out++ = (char)(0xE0 | (cp >> 12));
                *out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
                *out++ = (char)(0x80 | (cp & 0x3F));
            }
            p += 6;
            continue;
        }
        default: *out++ = (char)e; break;  /* '"', '\\', '/' */
        }
        p += 2;
    }
    return out;
}

/* The Python str of a scanned string (its UTF-8 was checked by scan_string). */
static PyObject *string_object(const Str *s)
{
    if (!s->escaped)
        return PyUnicode_DecodeUTF8((const char *)s->start, s->raw, "strict");
    char *buffer = PyMem_Malloc(s->utf8 + 1);
    if (buffer == NULL)
        return PyErr_NoMemory();
    char *out = unescape(s, buffer);
    PyObject *text = PyUnicode_DecodeUTF8(buffer, out - buffer, "strict");
    PyMem_Free(buffer);
    return text;
}

/* An object key, plain (no escape), and the ':' after it. */
static int scan_key(Cur *c, Str *key)
{
    if (scan_string(c, key) < 0 || key->escaped || !eat(c, ':'))
        return -1;
    return 0;
}

static inline int key_is(const Str *key, const char *name, size_t size)
{
    return (size_t)key->raw == size && memcmp(key->start, name, size) == 0;
}
#define KEY(key, literal) key_is((key), (literal), sizeof(literal) - 1)

/* The members of an object, one call each: 1 with the key read (cursor after ':'), 0 at
 * the closing brace, -1 if not the fast path's. `count` starts at 0 after the '{'. */
static int next_member(Cur *c, int *count, Str *key)
{
    if (*count == 0) {
        if (eat(c, '}'))
            return 0;
    } else {
        if (eat(c, '}'))
            return 0;
        if (!eat(c, ','))
            return -1;
    }
    (*count)++;
    return scan_key(c, key) < 0 ? -1 : 1;
}

/* Marks field `bit` seen; -1 if it was (a repeated key: the Python decoder says so). */
static inline int mark(unsigned *seen, unsigned bit)
{
    if (*seen & bit)
        return -1;
    *seen |= bit;
    return 0;
}

/* An unsigned integer as serde reads a u64: digits only, no '-', fraction or exponent; at
 * most 18 digits here (beyond, the Python decoder checks the range). */
static int scan_uint(Cur *c, long long *value)
{
    skip_ws(c);
    const unsigned char *p = c->p, *end = c->end;
    if (p >= end || *p < '0' || *p > '9')
        return -1;
    long long v = 0;
    const unsigned char *start = p;
    if (*p == '0') {
        p++;
    } else {
        while (p < end && *p >= '0' && *p <= '9') {
            v = v * 10 + (*p - '0');
            if (++p - start > 18)
                return -1;
        }
    }
    if (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E'))
        return -1;
    *value = v;
    c->p = p;
    return 0;
}

/* How many ASCII digits start p (at most what is left before end): each byte's high bit
 * set where it is not a digit, the first such byte found by ctz. */
static inline Py_ssize_t digits(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *start = p;
    while (end - p >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        uint64_t low = word & ~HIGHS;
        uint64_t at_least_0 = low + (0x80 - '0') * ONES;     /* high bit: byte >= '0' */
        uint64_t above_9 = low + (0x80 - '9' - 1) * ONES;    /* high bit: byte > '9' */
        uint64_t other = (~at_least_0 | above_9 | word) & HIGHS;
        if (other)
            return p - start + first_byte(other);
        p += 8;
    }
    while ((unsigned)(*p - '0') < 10)
        p++;
    return p - start;
}

/* A JSON number that is certainly a finite f64: at most 200 integer digits and 2
 * exponent digits (then |x| < 10**299). */
static inline int scan_float(Cur *c)
{
    const unsigned char *p = c->p, *end = c->end;
    if (*p == '-')
        p++;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        Py_ssize_t n = digits(p, end);
        if (n > 200)
            return -1;
        p += n;
    } else {
        return -1;
    }
    if (*p == '.') {
        p++;
        Py_ssize_t n = digits(p, end);
        if (n == 0)
            return -1;
        p += n;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        Py_ssize_t n = digits(p, end);
        if (n == 0 || n > 2)
            return -1;
        p += n;
    }
    c->p = p;
    return 0;
}

static inline int is_ws(unsigned char b) { return b == ' ' || b == '\n' || b == '\r' || b == '\t'; }

#ifdef __SSE2__
/* The white-space and digit bytes of 16 bytes, as bit masks (bit k: byte k). */
static inline void classify16(const unsigned char *p, unsigned *ws, unsigned *digit)
{
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i space = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
    /* signed compares: bytes from 0x80 are negative, so never digits */
    __m128i digits = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                   _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    *ws = (unsigned)_mm_movemask_epi8(space);
    *digit = (unsigned)_mm_movemask_epi8(digits);
}

/* One element of a vector and the ',' after it in the common shape, from masks of 16 bytes
 * at a time: white space, then -?(0|[1-9][0-9]*)(\.[0-9]+)? ending within the bytes looked
 * at, then ','. 1 with the cursor after the ',', 2 after a ']'; 0 for anything else (an
 * exponent, white space after the number, a long run), with the cursor unmoved: the scalar
 * code then reads the element and decides. Needs 32 bytes left. */
static inline int vector_element16(Cur *c)
{
    const unsigned char *p = c->p;
    unsigned ws, digit;
    classify16(p, &ws, &digit);
    if (ws == 0xFFFF) {  /* kag's indentation: a newline and sixteen spaces */
        p += 16;
        classify16(p, &ws, &digit);
    }
    unsigned i = (unsigned)__builtin_ctz(~ws);  /* the first byte that is no white space */
    if (i > 12)
        return 0;
    i += p[i] == '-';
    if (p[i] == '0') {
        i++;
    } else {
        unsigned run = (unsigned)__builtin_ctz(~(digit >> i));  /* <= 16 - i */
        if (run == 0 || i + run >= 15)
            return 0;
        i += run;
    }
    if (p[i] == '.') {
        i++;
        unsigned run = (unsigned)__builtin_ctz(~(digit >> i));
        if (run == 0 || i + run >= 15)
            return 0;
        i += run;
    }
    if (p[i] == ',') {
        c->p = p + i + 1;
        return 1;
    }
    if (p[i] == ']') {
        c->p = p + i + 1;
        return 2;
    }
    return 0;
}
#endif

/* rig's Embedding.vec (Vec<f64>): an array of finite numbers. */
static int scan_vector(Cur *c)
{
    if (!eat(c, '['))
        return -1;
    if (eat(c, ']'))
        return 0;
    for (;;) {
#ifdef __SSE2__
        if (c->end - c->p >= 32) {
            int done = vector_element16(c);
            if (done == 1)
                continue;
            if (done == 2)
                return 0;
        }
#endif
        if (is_ws(*c->p))
            skip_ws(c);
        if (scan_float(c) < 0)
            return -1;
        if (is_ws(*c->p))
            skip_ws(c);
        unsigned char b = *c->p;
        if (b == ',') {
            c->p++;
            continue;
        }
        if (b == ']' && c->p < c->end) {
            c->p++;
            return 0;
        }
        return -1;
    }
}

/* A std Duration, {"secs": u64, "nanos": u32} or [secs, nanos], in ns; nanos under a
 * second and the total within int64 here (beyond, the Python decoder carries and checks). */
static int scan_duration(Cur *c, long long *ns)
{
    long long secs = 0, nanos = 0;
    if (eat(c, '[')) {
        if (scan_uint(c, &secs) < 0 || !eat(c, ',') || scan_uint(c, &nanos) < 0 || !eat(c, ']'))
            return -1;
    } else if (eat(c, '{')) {
        unsigned seen = 0;
        int count = 0, more;
        Str key;
        while ((more = next_member(c, &count, &key)) == 1) {
            if (KEY(&key, "secs")) {
                if (mark(&seen, 1) < 0 || scan_uint(c, &secs) < 0)
                    return -1;
            } else if (KEY(&key, "nanos")) {
                if (mark(&seen, 2) < 0 || scan_uint(c, &nanos) < 0)
                    return -1;
            } else {
                return -1;
            }
        }
        if (more < 0 || seen != 3)
            return -1;
    } else {
        return -1;
    }
    if (nanos >= 1000000000LL || secs > 9000000000LL)
        return -1;
    *ns = secs * 1000000000LL + nanos;
    return 0;
}

static inline int eat_null(Cur *c)
{
    skip_ws(c);
    if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) {
        c->p += 4;
        return 1;
    }
    return 0;
}

/* kag's ComponentName (src/cli/component.rs): non-empty, a-z, 0-9 and '-' only. */
static int scan_name(Cur *c, PyObject **name)
{
    Str s;
    if (scan_string(c, &s) < 0 || s.escaped || s.raw == 0)
        return -1;
    for (Py_ssize_t i = 0; i < s.raw; i++) {
        unsigned char b = s.start[i];
        if (!((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-'))
            return -1;
    }
    if (name == NULL)
        return 0;
    *name = PyUnicode_DecodeASCII((const char *)s.start, s.raw, "strict");
    return *name == NULL ? -1 : 0;
}

static int scan_str_object(Cur *c, PyObject **out)
{
    Str s;
    if (scan_string(c, &s) < 0)
        return -1;
    *out = string_object(&s);
    return *out == NULL ? -1 : 0;
}

/* A string field of a success record: its str where objects are made, else only checked. */
static int scan_field(Cur *c, Ok *ok, PyObject **out)
{
    Str s;
    return ok->objects ? scan_str_object(c, out) : scan_string(c, &s);
}

static int scan_augmented(Cur *c)
{
    if (eat_null(c))
        return 0;
    if (!eat(c, '{'))
        return -1;
    unsigned seen = 0;
    int count = 0, more;
    Str key;
    while ((more = next_member(c, &count, &key)) == 1) {
        unsigned bit = KEY(&key, "retriever") ? 1 : KEY(&key, "database") ? 2 : 0;
        if (bit == 0 || mark(&seen, bit) < 0 || scan_name(c, NULL) < 0)
            return -1;
    }
    return more < 0 || seen != 3 ? -1 : 0;
}

static int scan_config(Cur *c, Ok *ok)
{
    if (!eat(c, '{'))
        return -1;
    unsigned seen = 0;
    int count = 0, more;
    Str key;
    long long tokens;
    while ((more = next_member(c, &count, &key)) == 1) {
        if (KEY(&key, "provider")) {
            if (mark(&seen, 1) < 0 || scan_name(c, ok->objects ? &ok->provider : NULL) < 0)
                return -1;
        } else if (KEY(&key, "model")) {
            if (mark(&seen, 2) < 0 || scan_field(c, ok, &ok->model) < 0)
                return -1;
        } else if (KEY(&key, "temperature")) {
            if (mark(&seen, 4) < 0)
                return -1;
            skip_ws(c);
            if (scan_float(c) < 0)
                return -1;
        } else if (KEY(&key, "tokens")) {
            if (mark(&seen, 8) < 0 || (!eat_null(c) && scan_uint(c, &tokens) < 0))
                return -1;
        } else if (KEY(&key, "augmented_generation")) {
            if (mark(&seen, 16) < 0 || scan_augmented(c) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return more < 0 || (seen & 7) != 7 ? -1 : 0;
}

static int scan_neo4j(Cur *c, Ok *ok)
{
    if (!eat(c, '{'))
        return -1;
    unsigned seen = 0;
    int count = 0, more;
    Str key;
    long long ignored;
    while ((more = next_member(c, &count, &key)) == 1) {
        if (KEY(&key, "vertices")) {
            if (mark(&seen, 1) < 0 || scan_uint(c, &ok->vertices) < 0)
                return -1;
        } else if (KEY(&key, "relationships")) {
            if (mark(&seen, 2) < 0 || scan_uint(c, &ok->relationships) < 0)
                return -1;
        } else if (KEY(&key, "properties")) {
            if (mark(&seen, 4) < 0 || scan_uint(c, &ok->properties) < 0)
                return -1;
        } else if (KEY(&key, "time")) {
            if (mark(&seen, 8) < 0 || scan_duration(c, &ignored) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return more < 0 || seen != 15 ? -1 : 0;
}

/* An object with exactly one member named `name` (an externally tagged enum, or a
 * struct of one field), the cursor left on its value. */
static int enter_single(Cur *c, const char *name, size_t size)
{
    Str key;
    int count = 0;
    if (!eat(c, '{') || next_member(c, &count, &key) != 1 || !key_is(&key, name, size))
        return -1;
    return 0;
}

static int leave_single(Cur *c) { return eat(c, '}') ? 0 : -1; }

static int scan_embedding(Cur *c)
{
    if (!eat(c, '{'))
        return -1;
    unsigned seen = 0;
    int count = 0, more;
    Str key, document;
    while ((more = next_member(c, &count, &key)) == 1) {
        if (KEY(&key, "document")) {
            if (mark(&seen, 1) < 0 || scan_string(c, &document) < 0)
                return -1;
        } else if (KEY(&key, "vec")) {
            if (mark(&seen, 2) < 0 || scan_vector(c) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return more < 0 || seen != 3 ? -1 : 0;
}

static int scan_embedder(Cur *c, Ok *ok)
{
    if (!eat(c, '{'))
        return -1;
    unsigned seen = 0;
    int count = 0, more;
    Str key;
    while ((more = next_member(c, &count, &key)) == 1) {
        if (KEY(&key, "embedding")) {
            if (mark(&seen, 1) < 0 || scan_embedding(c) < 0)
                return -1;
        } else if (KEY(&key, "database")) {
            if (mark(&seen, 2) < 0 || enter_single(c, "neo4j", 5) < 0 || scan_neo4j(c, ok) < 0
                || leave_single(c) < 0)
                return -1;
        } else if (KEY(&key, "time")) {
            if (mark(&seen, 4) < 0 || scan_duration(c, &ok->retrieval_ns) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return more < 0 || seen != 7 ? -1 : 0;
}

static int scan_retrieval(Cur *c, Ok *ok)
{
    if (eat_null(c))
        return 0;
    if (!eat(c, '{'))
        return -1;
    unsigned seen = 0;
    int count = 0, more;
    Str key;
    while ((more = next_member(c, &count, &key)) == 1) {
        if (KEY(&key, "result")) {
            if (mark(&seen, 1) < 0 || scan_field(c, ok, &ok->context) < 0)
                return -1;
        } else if (KEY(&key, "stats")) {
            if (mark(&seen, 2) < 0 || enter_single(c, "embedder", 8) < 0
                || scan_embedder(c, ok) < 0 || leave_single(c) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    if (more < 0 || seen != 3)
        return -1;
    ok->has_retrieval = 1;
    return 0;
}

static int scan_stats(Cur *c, Ok *ok)
{
    if (!eat(c, '{'))
        return -1;
    unsigned seen = 0;
    int count = 0, more;
    Str key, prompt;
    while ((more = next_member(c, &count, &key)) == 1) {
        if (KEY(&key, "prompt")) {
            if (mark(&seen, 1) < 0 || scan_string(c, &prompt) < 0)
                return -1;
            ok->context_bytes = prompt.utf8;
        } else if (KEY(&key, "time")) {
            if (mark(&seen, 2) < 0 || scan_duration(c, &ok->generation_ns) < 0)
                return -1;
        } else if (KEY(&key, "config")) {
            if (mark(&seen, 4) < 0 || scan_config(c, ok) < 0)
                return -1;
        } else if (KEY(&key, "retrieval")) {
            if (mark(&seen, 8) < 0 || scan_retrieval(c, ok) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return more < 0 || (seen & 7) != 7 ? -1 : 0;
}

static int scan_ok(Cur *c, Ok *ok)
{
    if (!eat(c, '{'))
        return -1;
    unsigned seen = 0;
    int count = 0, more;
    Str key;
    while ((more = next_member(c, &count, &key)) == 1) {
        if (KEY(&key, "result")) {
            if (mark(&seen, 1) < 0)
                return -1;
            if (ok->objects ? scan_str_object(c, &ok->result) < 0
                            : scan_string(c, &ok->result_span) < 0)
                return -1;
        } else if (KEY(&key, "stats")) {
            if (mark(&seen, 2) < 0 || scan_stats(c, ok) < 0)
                return -1;
        } else {
            return -1;
        }
    }
    return more < 0 || seen != 3 ? -1 : 0;
}

static inline int at_end(Cur *c)
{
    skip_ws(c);
    return c->p == c->end;
}

static PyObject *new_record(PyObject *items[8])
{
    /* A NamedTuple is a tuple subclass with no other slot: filled as tuple.__new__ does. */
    PyTypeObject *type = (PyTypeObject *)record_type;
    PyObject *record = type->tp_alloc(type, 8);
    if (record == NULL) {
        for (int i = 0; i < 8; i++)
            Py_XDECREF(items[i]);
        return NULL;
    }
    for (int i = 0; i < 8; i++)
        PyTuple_SET_ITEM(record, i, items[i]);
    return record;
}

static PyObject *new_sample(Ok *ok)
{
    PyTypeObject *type = (PyTypeObject *)sample_type;
    long long values[4] = {ok->retrieval_ns, ok->vertices, ok->relationships, ok->properties};
    PyObject *sample = type->tp_alloc(type, 4);
    if (sample == NULL)
        return NULL;
    for (int i = 0; i < 4; i++) {
        PyObject *value = PyLong_FromLongLong(values[i]);
        if (value == NULL) {
            Py_DECREF(sample);
            return NULL;
        }
        PyTuple_SET_ITEM(sample, i, value);
    }
    return sample;
}

static PyObject *success_record(Ok *ok)
{
    PyObject *items[8] = {NULL};
    PyObject *sample = Py_None;
    Py_INCREF(Py_None);
    if (ok->has_retrieval) {
        Py_DECREF(Py_None);
        sample = new_sample(ok);
        if (sample == NULL)
            return NULL;
    }
    PyObject *generation = PyLong_FromLongLong(ok->generation_ns);
    PyObject *size = PyLong_FromLongLong(ok->context_bytes);
    if (generation == NULL || size == NULL) {
        Py_XDECREF(generation);
        Py_XDECREF(size);
        Py_DECREF(sample);
        return NULL;
    }
    items[0] = ok->result;
    items[1] = Py_NewRef(Py_None);
    items[2] = generation;
    items[3] = size;
    items[4] = sample;
    items[5] = ok->provider;
    items[6] = ok->model;
    items[7] = ok->context != NULL ? ok->context : Py_NewRef(Py_None);
    ok->result = ok->provider = ok->model = ok->context = NULL;  /* owned by the record */
    return new_record(items);
}

static void clear_ok(Ok *ok)
{
    Py_CLEAR(ok->result);
    Py_CLEAR(ok->provider);
    Py_CLEAR(ok->model);
    Py_CLEAR(ok->context);
}

/* The envelope, {"ok": {...}} or {"error": "..."} and nothing else: 1 for a success (`ok`
 * filled), 2 for an error (its str in `*error` where ok->objects), -1 if not the fast
 * path's (nothing left to release, no Python error set). `data[size]` must be readable and
 * NUL (the loops' end). */
static int scan_envelope(const char *data, Py_ssize_t size, Ok *ok, PyObject **error)
{
    Cur c = {(const unsigned char *)data, (const unsigned char *)data + size};
    Str key;
    int count = 0;
    if (!eat(&c, '{') || next_member(&c, &count, &key) != 1)
        return -1;
    if (KEY(&key, "error")) {
        Str s;
        if (scan_string(&c, &s) < 0 || !eat(&c, '}') || !at_end(&c))
            return -1;
        if (ok->objects && (*error = string_object(&s)) == NULL) {
            PyErr_Clear();
            return -1;
        }
        return 2;
    }
    if (!KEY(&key, "ok"))
        return -1;
    if (scan_ok(&c, ok) < 0 || !eat(&c, '}') || !at_end(&c)) {
        clear_ok(ok);
        if (PyErr_Occurred())
            PyErr_Clear();  /* e.g. a str the decoder refused: the Python decoder decides */
        return -1;
    }
    return 1;
}

static PyObject *decode_buffer(const char *data, Py_ssize_t size)
{
    if (record_type == NULL)
        Py_RETURN_NONE;
    Ok ok;
    memset(&ok, 0, sizeof ok);
    ok.objects = 1;
    PyObject *error = NULL;
    int kind = scan_envelope(data, size, &ok, &error);
    if (kind < 0)
        Py_RETURN_NONE;
    if (kind == 2) {
        PyObject *items[8] = {Py_NewRef(Py_None), error, Py_NewRef(Py_None), Py_NewRef(Py_None),
                              Py_NewRef(Py_None), Py_NewRef(Py_None), Py_NewRef(Py_None),
                              Py_NewRef(Py_None)};
        return new_record(items);
    }
    PyObject *record = success_record(&ok);
    clear_ok(&ok);  /* what the record did not take (only when it could not be made) */
    return record;
}

static PyObject *decode(PyObject *module, PyObject *data)
{
    (void)module;
    if (!PyBytes_CheckExact(data))
        Py_RETURN_NONE;
    return decode_buffer(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data));
}

/* One buffer for every file read (the GIL is held throughout, so one caller at a time). */
static char *buffer = NULL;
static size_t buffer_size = 0;

/* Reads a regular file whole into `buffer` (NUL after it): its size, or -1 for anything
 * unusual (an error, not a regular file, a size that changed, over 1 MiB: the buffer is
 * kept for the next file): Python reads it then, and raises what it must. As read_bytes:
 * opened non-blocking (a FIFO cannot block it). `name` is relative to the folder `dir`
 * (AT_FDCWD: the working folder). */
static Py_ssize_t read_whole(int dir, const char *name)
{
    int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat info;
    Py_ssize_t got = -1;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size < (1 << 20)) {
        size_t want = (size_t)info.st_size + 1;  /* one more: a file that grew is seen */
        if (want + 1 > buffer_size) {
            size_t size = want + 1 > 65536 ? want + 1 : 65536;
            char *bigger = PyMem_Realloc(buffer, size);
            if (bigger != NULL) {
                buffer = bigger;
                buffer_size = size;
            }
        }
        if (want + 1 <= buffer_size) {
            ssize_t n = read(fd, buffer, want);
            if (n == info.st_size) {
                buffer[n] = '\0';
                got = n;
            }
        }
    }
    close(fd);
    return got;
}

static PyObject *read_record(PyObject *module, PyObject *path)
{
    (void)module;
    if (!PyUnicode_CheckExact(path))
        Py_RETURN_NONE;
    PyObject *name = PyUnicode_EncodeFSDefault(path);
    if (name == NULL) {
        PyErr_Clear();  /* not encodable: Python says why */
        Py_RETURN_NONE;
    }
    Py_ssize_t size = -1;
    if ((Py_ssize_t)strlen(PyBytes_AS_STRING(name)) == PyBytes_GET_SIZE(name))  /* no NUL */
        size = read_whole(AT_FDCWD, PyBytes_AS_STRING(name));
    Py_DECREF(name);
    if (size < 0)
        Py_RETURN_NONE;
    return decode_buffer(buffer, size);
}

/* A result file name: `prefix` + a component name + ".json"; the setup's length, or -1. */
static Py_ssize_t setup_length(const char *name, size_t size, const char *prefix, size_t fixed)
{
    if (size < fixed + 6 || memcmp(name + size - 5, ".json", 5) != 0
        || memcmp(name, prefix, fixed) != 0)
        return -1;
    for (size_t i = fixed; i < size - 5; i++) {
        unsigned char b = (unsigned char)name[i];
        if (!((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-'))
            return -1;
    }
    return (Py_ssize_t)(size - 5 - fixed);
}

typedef struct {
    char *name;
    size_t size;
    Py_ssize_t setup;  /* its length; the setup starts at name + fixed */
} Found;

static size_t sort_fixed;  /* the prefix's length, for compare_setups (GIL held) */

static int compare_setups(const void *a, const void *b)
{
    const Found *x = a, *y = b;
    size_t n = (size_t)(x->setup < y->setup ? x->setup : y->setup);
    int order = memcmp(x->name + sort_fixed, y->name + sort_fixed, n);
    return order != 0 ? order : (x->setup > y->setup) - (x->setup < y->setup);
}

static void free_found(Found *found, size_t count)
{
    for (size_t i = 0; i < count; i++)
        PyMem_Free(found[i].name);
    PyMem_Free(found);
}

/* The result files of the open folder `dir`, sorted by setup: regular files only (a link
 * is not followed), named `prefix` + a component name + ".json". 0, or -1 on any error
 * (then nothing is left to free). */
static int list_folder(DIR *dir, const char *prefix, size_t fixed, Found **out, size_t *out_count)
{
    Found *found = NULL;
    size_t count = 0, room = 0;
    int failed = 0;
    for (;;) {
        errno = 0;
        struct dirent *entry = readdir(dir);
        if (entry == NULL) {
            failed = errno != 0;
            break;
        }
        size_t size = strlen(entry->d_name);
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        int regular = entry->d_type == DT_REG;
        if (entry->d_type == DT_UNKNOWN) {
            /* as DirEntry.is_file(follow_symlinks=False): an lstat, for every entry */
            struct stat info;
            if (fstatat(dirfd(dir), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
                failed = 1;
                break;
            }
            regular = S_ISREG(info.st_mode);
        }
        Py_ssize_t setup = setup_length(entry->d_name, size, prefix, fixed);
        if (!regular || setup < 0)
            continue;
        if (count == room) {
            room = room ? room * 2 : 16;
            Found *bigger = PyMem_Realloc(found, room * sizeof(Found));
            if (bigger == NULL) {
                failed = 1;
                break;
            }
            found = bigger;
        }
        found[count].name = PyMem_Malloc(size + 1);
        if (found[count].name == NULL) {
            failed = 1;
            break;
        }
        memcpy(found[count].name, entry->d_name, size + 1);
        found[count].size = size;
        found[count].setup = setup;
        count++;
    }
    if (failed) {
        free_found(found, count);
        return -1;
    }
    sort_fixed = fixed;
    qsort(found, count, sizeof(Found), compare_setups);
    *out = found;
    *out_count = count;
    return 0;
}

/* A folder and a prefix as file-system bytes; -1 (no Python error) if either cannot be
 * one: not encodable, a NUL inside, an empty folder (os.scandir("") fails). */
static int fs_names(PyObject *folder, PyObject *prefix, PyObject **folder_bytes,
                    PyObject **prefix_bytes)
{
    *folder_bytes = PyUnicode_EncodeFSDefault(folder);
    *prefix_bytes = *folder_bytes ? PyUnicode_EncodeFSDefault(prefix) : NULL;
    if (*prefix_bytes == NULL) {
        PyErr_Clear();
        Py_CLEAR(*folder_bytes);
        return -1;
    }
    const char *dir_name = PyBytes_AS_STRING(*folder_bytes);
    Py_ssize_t dir_size = PyBytes_GET_SIZE(*folder_bytes);
    if (dir_size == 0 || (Py_ssize_t)strlen(dir_name) != dir_size
        || (Py_ssize_t)strlen(PyBytes_AS_STRING(*prefix_bytes)) != PyBytes_GET_SIZE(*prefix_bytes)) {
        Py_CLEAR(*folder_bytes);
        Py_CLEAR(*prefix_bytes);
        return -1;
    }
    return 0;
}

/* The result files of one question folder, as kagreport.kag._walk.result_files gives them
 * from LocalTree.list_dir: (setup, path, "") sorted by setup, regular files only (a link
 * is not followed). None on any error (Python lists it again, and raises what it must). */
static PyObject *list_results(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *folder, *prefix, *folder_bytes, *prefix_bytes;
    if (!PyArg_ParseTuple(args, "UU", &folder, &prefix))
        return NULL;
    if (fs_names(folder, prefix, &folder_bytes, &prefix_bytes) < 0)
        Py_RETURN_NONE;
    const char *dir_name = PyBytes_AS_STRING(folder_bytes);
    size_t dir_size = (size_t)PyBytes_GET_SIZE(folder_bytes);
    size_t fixed = (size_t)PyBytes_GET_SIZE(prefix_bytes);
    Found *found = NULL;
    size_t count = 0;
    DIR *dir = opendir(dir_name);
    int failed = dir == NULL || list_folder(dir, PyBytes_AS_STRING(prefix_bytes), fixed, &found,
                                            &count) < 0;
    if (dir != NULL)
        closedir(dir);
    PyObject *out = NULL;
    if (!failed) {
        /* LocalTree.join: the folder, a '/' unless it is empty or ends with one, the name */
        PyObject *base = folder;
        Py_INCREF(base);
        if (dir_name[dir_size - 1] != '/') {
            Py_SETREF(base, PyUnicode_FromFormat("%U/", folder));
        }
        out = base ? PyList_New((Py_ssize_t)count) : NULL;
        for (size_t i = 0; out != NULL && i < count; i++) {
            PyObject *name = PyUnicode_DecodeFSDefaultAndSize(found[i].name, found[i].size);
            PyObject *path = name ? PyUnicode_Concat(base, name) : NULL;
            PyObject *setup = PyUnicode_DecodeASCII(found[i].name + fixed, found[i].setup, NULL);
            PyObject *item = path && setup ? PyTuple_Pack(3, setup, path, empty_text) : NULL;
            Py_XDECREF(name);
            Py_XDECREF(path);
            Py_XDECREF(setup);
            if (item == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, (Py_ssize_t)i, item);
        }
        Py_XDECREF(base);
        free_found(found, count);
    }
    Py_DECREF(folder_bytes);
    Py_DECREF(prefix_bytes);
    if (out == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return out;
}

/* The question folders of one dataset folder, as kagreport.kag._walk.iter_question_dirs
 * takes them from LocalTree.list_dir: the names of its folders (a link is not followed),
 * sorted; other entries skipped. None on any error, or where a folder's name is not a valid
 * component name (Python lists it again, and warns about the name). */
static PyObject *list_questions(PyObject *module, PyObject *folder)
{
    (void)module;
    PyObject *folder_bytes, *prefix_bytes;
    if (!PyUnicode_Check(folder) || fs_names(folder, empty_text, &folder_bytes, &prefix_bytes) < 0)
        Py_RETURN_NONE;
    Py_DECREF(prefix_bytes);
    DIR *dir = opendir(PyBytes_AS_STRING(folder_bytes));
    Py_DECREF(folder_bytes);
    if (dir == NULL)
        Py_RETURN_NONE;
    PyObject *names = PyList_New(0);
    int failed = names == NULL;
    while (!failed) {
        errno = 0;
        struct dirent *entry = readdir(dir);
        if (entry == NULL) {
            failed = errno != 0;
            break;
        }
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        int is_dir = entry->d_type == DT_DIR;
        if (entry->d_type == DT_UNKNOWN) {
            struct stat info;
            if (fstatat(dirfd(dir), name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
                failed = 1;
                break;
            }
            is_dir = S_ISDIR(info.st_mode);
        }
        if (!is_dir)
            continue;
        size_t size = strlen(name);
        /* kag's ComponentName; anything else is Python's to warn about */
        int valid = size > 0;
        for (size_t i = 0; valid && i < size; i++) {
            unsigned char b = (unsigned char)name[i];
            valid = (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-';
        }
        if (!valid) {
            failed = 1;
            break;
        }
        PyObject *text = PyUnicode_DecodeASCII(name, (Py_ssize_t)size, NULL);
        failed = text == NULL || PyList_Append(names, text) < 0;
        Py_XDECREF(text);
    }
    closedir(dir);
    if (!failed && PyList_Sort(names) == 0)
        return names;
    Py_XDECREF(names);
    PyErr_Clear();
    Py_RETURN_NONE;
}

/* Unicode White_Space at the start of p (UTF-8, checked): its size in bytes, 0 if none.
 * The characters Rust's str::trim removes (kagreport.grading._rule.WHITE_SPACE). */
static inline int space_at(const unsigned char *p, const unsigned char *end)
{
    unsigned char b = p[0];
    if (b == ' ' || (b >= 0x09 && b <= 0x0D))
        return 1;
    if (b == 0xC2 && end - p >= 2)
        return p[1] == 0x85 || p[1] == 0xA0 ? 2 : 0;
    if (end - p < 3)
        return 0;
    if (b == 0xE1)
        return p[1] == 0x9A && p[2] == 0x80 ? 3 : 0;  /* U+1680 */
    if (b == 0xE2 && p[1] == 0x80)  /* U+2000..U+200A, U+2028, U+2029, U+202F */
        return p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF ? 3 : 0;
    if (b == 0xE2)
        return p[1] == 0x81 && p[2] == 0x9F ? 3 : 0;  /* U+205F */
    if (b == 0xE3)
        return p[1] == 0x80 && p[2] == 0x80 ? 3 : 0;  /* U+3000 */
    return 0;
}

/* White_Space at the end of [start, end): its size in bytes, 0 if none. The text is valid
 * UTF-8, so a space's last two or three bytes cannot be the tail of another character. */
static inline int space_before(const unsigned char *start, const unsigned char *end)
{
    Py_ssize_t left = end - start;
    if (left >= 1 && space_at(end - 1, end) == 1)
        return 1;
    if (left >= 2 && end[-2] == 0xC2 && space_at(end - 2, end) == 2)
        return 2;
    if (left >= 3 && (end[-3] & 0xF0) == 0xE0 && space_at(end - 3, end) == 3)
        return 3;
    return 0;
}

/* kag's rule (kagreport.grading._rule.grade_response) on UTF-8: the response trimmed of
 * White_Space at both ends equals the answer ignoring ASCII case. On UTF-8 bytes that is
 * one comparison: ASCII folding keeps every other byte, so equal bytes mean equal lengths
 * in characters too. */
static int selects(const unsigned char *p, const unsigned char *end, const char *answer,
                   Py_ssize_t answer_size)
{
    int n;
    while (p < end && (n = space_at(p, end)) > 0)
        p += n;
    while (end > p && (n = space_before(p, end)) > 0)
        end -= n;
    if (end - p != answer_size)
        return 0;
    for (Py_ssize_t i = 0; i < answer_size; i++) {
        unsigned char a = p[i], b = (unsigned char)answer[i];
        if (a != b && ((a | 0x20) != (b | 0x20) || (unsigned char)((a | 0x20) - 'a') > 25))
            return 0;
    }
    return 1;
}

/* One file graded in place: outcome 0 correct, 1 wrong, 2 an error envelope; then the
 * measurements (-1: absent), as grade_chunk keeps them. */
typedef struct {
    unsigned char outcome;
    long long values[6];  /* generation ns, retrieval ns, vertices, relationships,
                             properties, context bytes */
} Graded;

static int grade_buffer(const char *data, Py_ssize_t size, const char *answer,
                        Py_ssize_t answer_size, Graded *out)
{
    Ok ok;
    memset(&ok, 0, sizeof ok);
    int kind = scan_envelope(data, size, &ok, NULL);
    if (kind < 0)
        return -1;
    for (int k = 0; k < 6; k++)
        out->values[k] = -1;
    if (kind == 2) {
        out->outcome = 2;
        return 0;
    }
    const Str *r = &ok.result_span;
    int correct;
    if (!r->escaped) {
        correct = selects(r->start, r->start + r->raw, answer, answer_size);
    } else {
        char *text = PyMem_Malloc(r->utf8 + 1);
        if (text == NULL)
            return -1;
        char *text_end = unescape(r, text);
        correct = selects((unsigned char *)text, (unsigned char *)text_end, answer, answer_size);
        PyMem_Free(text);
    }
    out->outcome = correct ? 0 : 1;
    out->values[0] = ok.generation_ns;
    out->values[5] = ok.context_bytes;
    if (ok.has_retrieval) {
        out->values[1] = ok.retrieval_ns;
        out->values[2] = ok.vertices;
        out->values[3] = ok.relationships;
        out->values[4] = ok.properties;
    }
    return 0;
}

/* sums[k] += value: a list of Python ints, exact whatever the size. */
static int add_to(PyObject *sums, Py_ssize_t k, long long value)
{
    PyObject *item = PyList_GET_ITEM(sums, k);
    int overflow = 0;
    long long now = PyLong_AsLongLongAndOverflow(item, &overflow);
    long long total;
    PyObject *updated;
    if (!overflow && !(now == -1 && PyErr_Occurred()) && !__builtin_add_overflow(now, value, &total)) {
        updated = PyLong_FromLongLong(total);
    } else {
        PyErr_Clear();
        PyObject *addend = PyLong_FromLongLong(value);
        updated = addend ? PyNumber_Add(item, addend) : NULL;
        Py_XDECREF(addend);
    }
    if (updated == NULL)
        return -1;
    PyList_SetItem(sums, k, updated);  /* steals updated, releases the old item */
    return 0;
}

static int append_bytes(PyObject *array, const void *data, Py_ssize_t size)
{
    Py_ssize_t at = PyByteArray_GET_SIZE(array);
    if (PyByteArray_Resize(array, at + size) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(array) + at, data, (size_t)size);
    return 0;
}

/* The group sums of one graded file, as grade_chunk adds them (kagreport.grading._chunk). */
static int add_sums(PyObject *sums, const Graded *g)
{
    if (g->outcome == 2)
        return add_to(sums, 2, 1);
    const long long *v = g->values;
    if (add_to(sums, g->outcome, 1) < 0 || add_to(sums, 3, v[0]) < 0 || add_to(sums, 4, 1) < 0
        || add_to(sums, 5, v[5]) < 0)
        return -1;
    if (v[1] < 0)
        return 0;
    for (int k = 0; k < 4; k++)
        if (add_to(sums, 6 + k, v[1 + k]) < 0)
            return -1;
    return add_to(sums, 10, 1);
}

/* The state grade_folder adds to: grade_chunk's setups, their codes and the group sums,
 * then bytearrays of the rows (uint32 folder index, uint32 setup code) and the columns
 * (uint8 outcome, six int64 measurements), in native byte order (array.frombytes). */
enum { STATE_SETUPS, STATE_CODES, STATE_SUMS, STATE_FOLDER, STATE_SETUP, STATE_OUTCOME,
       STATE_VALUES, STATE_SIZE = STATE_VALUES + 6 };

static int commit(PyObject **state, const Found *found, size_t count, size_t fixed,
                  const Graded *graded, long dataset, uint32_t index)
{
    PyObject *setups = state[STATE_SETUPS], *codes = state[STATE_CODES];
    for (size_t i = 0; i < count; i++) {
        PyObject *name = PyUnicode_DecodeASCII(found[i].name + fixed, found[i].setup, NULL);
        if (name == NULL)
            return -1;
        PyObject *code = PyDict_GetItemWithError(codes, name);  /* borrowed */
        if (code == NULL) {
            if (PyErr_Occurred())
                goto fail;
            code = PyLong_FromSsize_t(PyList_GET_SIZE(setups));
            int added = code == NULL ? -1 : PyDict_SetItem(codes, name, code);
            Py_XDECREF(code);  /* the dict holds it */
            if (added < 0 || PyList_Append(setups, name) < 0)
                goto fail;
        }
        uint32_t setup = (uint32_t)PyLong_AsUnsignedLong(code);
        PyObject *key = Py_BuildValue("(kl)", (unsigned long)setup, dataset);
        if (key == NULL)
            goto fail;
        PyObject *sums = PyDict_GetItemWithError(state[STATE_SUMS], key);  /* borrowed */
        if (sums == NULL && !PyErr_Occurred()) {
            sums = PyList_New(11);
            for (int k = 0; sums != NULL && k < 11; k++)
                PyList_SET_ITEM(sums, k, PyLong_FromLong(0));
            if (sums != NULL && PyDict_SetItem(state[STATE_SUMS], key, sums) < 0)
                Py_CLEAR(sums);
            Py_XDECREF(sums);  /* the dict holds it */
        }
        Py_DECREF(key);
        if (sums == NULL || add_sums(sums, &graded[i]) < 0)
            goto fail;
        if (append_bytes(state[STATE_FOLDER], &index, 4) < 0
            || append_bytes(state[STATE_SETUP], &setup, 4) < 0
            || append_bytes(state[STATE_OUTCOME], &graded[i].outcome, 1) < 0)
            goto fail;
        for (int k = 0; k < 6; k++)
            if (append_bytes(state[STATE_VALUES + k], &graded[i].values[k], 8) < 0)
                goto fail;
        Py_DECREF(name);
        continue;
    fail:
        Py_DECREF(name);
        return -1;
    }
    return 0;
}

/* grade_folder(folder, prefix, answer, dataset, index, state) -> bool: list one question
 * folder, read each result file (relative to the open folder), decode and grade it in
 * place, and add the folder to `state` (see STATE_*). All or nothing: False, with nothing
 * added, where any part is unusual (a file not in kag's common shape, an error, a folder
 * that cannot be listed): grade_chunk then does the folder in Python, which raises or
 * reports what it must. */
static PyObject *grade_folder(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *folder, *prefix, *state_tuple, *folder_bytes, *prefix_bytes;
    const char *answer;
    Py_ssize_t answer_size;
    long dataset;
    unsigned long index;
    if (!PyArg_ParseTuple(args, "UUy#lkO!", &folder, &prefix, &answer, &answer_size, &dataset,
                          &index, &PyTuple_Type, &state_tuple))
        return NULL;
    if (PyTuple_GET_SIZE(state_tuple) != STATE_SIZE) {
        PyErr_SetString(PyExc_TypeError, "grade_folder() takes a state of 13 items");
        return NULL;
    }
    PyObject **state = &PyTuple_GET_ITEM(state_tuple, 0);
    if (!PyList_CheckExact(state[STATE_SETUPS]) || !PyDict_CheckExact(state[STATE_CODES])
        || !PyDict_CheckExact(state[STATE_SUMS])) {
        PyErr_SetString(PyExc_TypeError, "grade_folder(): a state of a list and two dicts first");
        return NULL;
    }
    for (int k = STATE_FOLDER; k < STATE_SIZE; k++)
        if (!PyByteArray_CheckExact(state[k])) {
            PyErr_SetString(PyExc_TypeError, "grade_folder(): bytearrays after the dicts");
            return NULL;
        }
    if (fs_names(folder, prefix, &folder_bytes, &prefix_bytes) < 0)
        Py_RETURN_FALSE;
    size_t fixed = (size_t)PyBytes_GET_SIZE(prefix_bytes);
    Found *found = NULL;
    size_t count = 0;
    Graded *graded = NULL;
    DIR *dir = opendir(PyBytes_AS_STRING(folder_bytes));
    int usual = dir != NULL
                && list_folder(dir, PyBytes_AS_STRING(prefix_bytes), fixed, &found, &count) == 0;
    if (usual && count > 0) {
        graded = PyMem_Malloc(count * sizeof(Graded));
        usual = graded != NULL;
    }
    for (size_t i = 0; usual && i < count; i++) {
        Py_ssize_t size = read_whole(dirfd(dir), found[i].name);
        usual = size >= 0 && grade_buffer(buffer, size, answer, answer_size, &graded[i]) == 0;
    }
    if (dir != NULL)
        closedir(dir);
    int committed = usual ? commit(state, found, count, fixed, graded, dataset,
                                   (uint32_t)index) : 0;
    free_found(found, count);
    PyMem_Free(graded);
    Py_DECREF(folder_bytes);
    Py_DECREF(prefix_bytes);
    if (committed < 0)
        return NULL;
    if (PyErr_Occurred())
        PyErr_Clear();  /* a record the scanner declined: Python decides */
    return PyBool_FromLong(usual);
}

static PyObject *configure(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *record, *sample;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &record, &PyType_Type, &sample))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)record, &PyTuple_Type)
        || !PyType_IsSubtype((PyTypeObject *)sample, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "configure() takes two tuple subclasses");
        return NULL;
    }
    Py_XSETREF(record_type, Py_NewRef(record));
    Py_XSETREF(sample_type, Py_NewRef(sample));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_O,
     "decode(data: bytes) -> ResultRecord | None: the record of a result file in kag's "
     "common shape, or None for the Python decoder to decide."},
    {"read_record", read_record, METH_O,
     "read_record(path: str) -> ResultRecord | None: the record of a regular file in kag's "
     "common shape, or None (anything else, an error included) for Python to read and decide."},
    {"list_results", list_results, METH_VARARGS,
     "list_results(folder: str, prefix: str) -> list[tuple[str, str, str]] | None: a "
     "question folder's result files, as kag._walk.result_files gives them, or None."},
    {"grade_folder", grade_folder, METH_VARARGS,
     "grade_folder(folder, prefix, answer: bytes, dataset: int, index: int, state: tuple) -> "
     "bool: one question folder listed, read, decoded and graded into `state`, or False with "
     "nothing added for Python to do it (see _scan.c)."},
    {"list_questions", list_questions, METH_O,
     "list_questions(folder: str) -> list[str] | None: a dataset folder's question folders, "
     "as kag._walk.iter_question_dirs takes them, or None."},
    {"datasets_structure", kagreport_datasets_structure, METH_O,
     "datasets_structure(data: bytes) -> tuple[int, bool, bool] | None: a datasets file's "
     "deepest nesting, whether no entry or output gives a field twice, whether every dataset "
     "and question name is valid (see _scan_datasets.c)."},
    {"configure", configure, METH_VARARGS,
     "configure(ResultRecord, RetrievalSample): the record types decode() builds."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_scan",
    "The compiled fast path of kagreport.kag._records.decode_result (see _scan.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__scan(void)
{
    init_classes();
    empty_text = PyUnicode_FromString("");
    if (empty_text == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
