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
 * The module's other sources: _scan_folder.c (reading, listing and grading folders in
 * place) and _scan_datasets.c (the datasets file's structure pass); _scan.h joins them.
 *
 * tests/kag/test_scan.py checks the decoder against the Python code on real, simulated,
 * generated and mutated files; tests/grading/test_decoders.py compares whole commands with
 * KAGREPORT_DECODER=python, which turns the scanner off.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "_scan.h"

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
} Cur;

PyObject *kagreport_empty_text = NULL;  /* "" */
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
 * non-ASCII byte (or the NUL after the data), sixteen bytes at a time (SSE2), then
 * eight. */
static inline const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
    const __m128i space = _mm_set1_epi8(' '), quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        /* signed: a control byte is below ' ', and so is a non-ASCII one (negative) */
        __m128i special = _mm_or_si128(
            _mm_cmplt_epi8(v, space),
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
        unsigned mask = (unsigned)_mm_movemask_epi8(special);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
#endif
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
char *kagreport_unescape(const Str *s, char *buffer)
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
    char *out = kagreport_unescape(s, buffer);
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

/* Every whole element of a vector in the next 64 bytes at once: white space (space,
 * newline) after the '[' or ',', then -?(0|[1-9][0-9]*)(\.[0-9]+)? and ','. Each rule is a
 * bit operation on all 64 bytes, so no element waits for the one before it, as it does in
 * the element-wise code. The byte before the cursor is '[' or ','. 1 with the cursor after
 * the last ',' of those elements; 0, unmoved, when the bytes hold none, or anything else
 * (an exponent, '\t', white space after a number): the element-wise code then reads one
 * element and decides. Needs 64 bytes left. */
static inline int vector_elements64(Cur *c)
{
    const __m128i space_ = _mm_set1_epi8(' '), newline = _mm_set1_epi8('\n');
    const __m128i below_0 = _mm_set1_epi8('0' - 1), above_9 = _mm_set1_epi8('9' + 1);
    const __m128i zero_ = _mm_set1_epi8('0'), minus_ = _mm_set1_epi8('-');
    const __m128i dot_ = _mm_set1_epi8('.'), comma_ = _mm_set1_epi8(',');
    /* Bit k: byte k is a digit, '0', '-', '.', ',', or any of these or white space (the two
     * bytes kag writes). */
    uint64_t digit = 0, zero = 0, minus = 0, dot = 0, comma = 0, known = 0;
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {  /* unrolled: each shift by a constant */
        __m128i v = _mm_loadu_si128((const __m128i *)(c->p + 16 * i));
        __m128i s = _mm_or_si128(_mm_cmpeq_epi8(v, space_), _mm_cmpeq_epi8(v, newline));
        /* signed compares: bytes from 0x80 are negative, so never digits */
        __m128i d = _mm_and_si128(_mm_cmpgt_epi8(v, below_0), _mm_cmplt_epi8(v, above_9));
        __m128i m = _mm_cmpeq_epi8(v, minus_), p = _mm_cmpeq_epi8(v, dot_);
        __m128i k = _mm_cmpeq_epi8(v, comma_);
        int at = 16 * i;
        digit |= (uint64_t)(unsigned)_mm_movemask_epi8(d) << at;
        zero |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero_)) << at;
        minus |= (uint64_t)(unsigned)_mm_movemask_epi8(m) << at;
        dot |= (uint64_t)(unsigned)_mm_movemask_epi8(p) << at;
        comma |= (uint64_t)(unsigned)_mm_movemask_epi8(k) << at;
        __m128i any = _mm_or_si128(_mm_or_si128(s, d), _mm_or_si128(_mm_or_si128(m, p), k));
        known |= (uint64_t)(unsigned)_mm_movemask_epi8(any) << at;
    }
    uint64_t other = ~known;
    comma &= other ? (other & (0 - other)) - 1 : ~0ULL;  /* the commas before any other byte */
    if (comma == 0)
        return 0;
    int last = 63 - __builtin_clzll(comma);  /* the elements end at this ',' */
    uint64_t span = last == 63 ? ~0ULL : (2ULL << last) - 1;
    digit &= span;
    minus &= span;
    dot &= span;
    /* Each rule below holds for an element in that shape; together they leave no other:
     * a '-' or '.' before a digit, a '.' or ',' after one, a number's parts ending where
     * they must (so white space or a '-' comes only after the '[' or a ','), no leading
     * zero. Bit 0 follows the '[' or ','. */
    uint64_t after_digit = digit << 1, before_digit = digit >> 1;
    uint64_t bad = ((minus | dot) & ~before_digit) | ((dot | comma) & ~after_digit);
    uint64_t integer = digit & ~after_digit & ~(dot << 1);  /* first digits, integer parts */
    uint64_t fraction = digit & (dot << 1);                 /* first digits, fractions */
    bad |= integer & zero & before_digit;                   /* a leading zero */
    /* Adding a run's first bit to the digits clears the run and sets the bit after it. */
    bad |= (digit + integer) & ~digit & ~(dot | comma);     /* an integer part ends at . or , */
    bad |= (digit + fraction) & ~digit & ~comma;            /* a fraction ends at , */
    if (bad)
        return 0;
    c->p += last + 1;
    return 1;
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
        if (c->end - c->p >= 64 && vector_elements64(c))
            continue;
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

/* A component name (kagreport_component_name), written plainly. */
static int scan_name(Cur *c, PyObject **name)
{
    Str s;
    if (scan_string(c, &s) < 0 || s.escaped || !kagreport_component_name(s.start, (size_t)s.raw))
        return -1;
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
int kagreport_scan_envelope(const char *data, Py_ssize_t size, Ok *ok, PyObject **error)
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

PyObject *kagreport_decode_buffer(const char *data, Py_ssize_t size)
{
    if (record_type == NULL)
        Py_RETURN_NONE;
    Ok ok;
    memset(&ok, 0, sizeof ok);
    ok.objects = 1;
    PyObject *error = NULL;
    int kind = kagreport_scan_envelope(data, size, &ok, &error);
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
    return kagreport_decode_buffer(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data));
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
    {"read_record", kagreport_read_record, METH_O,
     "read_record(path: str) -> ResultRecord | None: the record of a regular file in kag's "
     "common shape, or None (anything else, an error included) for Python to read and decide."},
    {"list_results", kagreport_list_results, METH_VARARGS,
     "list_results(folder: str, prefix: str) -> list[tuple[str, str, str]] | None: a "
     "question folder's result files, as kag._walk.result_files gives them, or None."},
    {"grade_folder", kagreport_grade_folder, METH_VARARGS,
     "grade_folder(folder, prefix, answer: bytes, dataset: int, index: int, state: tuple) -> "
     "bool: one question folder listed, read, decoded and graded into `state`, or False with "
     "nothing added for Python to do it (see _scan.c)."},
    {"list_questions", kagreport_list_questions, METH_O,
     "list_questions(folder: str) -> list[str] | None: a dataset folder's question folders, "
     "as kag._walk.iter_question_dirs takes them, or None."},
    {"datasets_structure", kagreport_datasets_structure, METH_O,
     "datasets_structure(data: bytes) -> tuple[int, bool, bool, bool] | None: a datasets "
     "file's deepest nesting, whether no entry or output gives a field twice, whether every "
     "dataset and question name is valid, whether every number is surely a finite f64 (see "
     "_scan_datasets.c)."},
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
    kagreport_empty_text = PyUnicode_FromString("");
    if (kagreport_empty_text == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
