/*
 * COCO JSON read straight into columns: a results list (boxes, scores, and
 * compressed RLE masks when masks are scored, keypoints when keypoints are)
 * and a ground-truth dataset (images, categories, annotations with boxes,
 * area, iscrowd, ignore, and keypoints with num_keypoints when scored).
 *
 * Optional, like iou_eval/geometry/_rlekernel.c: without it
 * iou_eval.io.loaders.coco decodes the files with msgspec.  This reader
 * gives the columns that msgspec's decoding of the same bytes into the
 * loader's records gives, and is sure of a narrower grammar: on anything
 * else (a string id, a float where an integer stands, a key it reads
 * written twice, a missing field, an escape in a string it returns, bytes
 * that are not UTF-8, a number out of range, bad JSON, ...) it returns None
 * and the caller decodes with msgspec, which also says what is wrong with a
 * bad file.  tests/unit/test_coco_reader.py and test_rle_results.py compare
 * the two on generated files and on byte-level mutations of them.
 *
 * Numbers are correctly rounded, as msgspec's are: exactly when the
 * significand and the power of ten are both exact doubles (Clinger's fast
 * path), else by Eisel and Lemire's 128-bit product (as fast_float and
 * msgspec compute it; both in _numparse.h, which the CSV reader shares),
 * else -- a significand of more than 19 digits, a power of ten outside the
 * table, a subnormal or an ambiguous product -- by CPython's own conversion
 * once the GIL is held again.  The file is read
 * with the GIL released, so several threads read parts of it at once.
 *
 * Portable C: GCC's and Clang's builtins and MSVC's intrinsics where they
 * exist, plain C otherwise (IOU_EVAL_PORTABLE_C forces the plain C, which
 * tests/unit/test_coco_reader.py builds and checks).
 */
#include "../_common.h"
#include "_numparse.h"
#include <math.h>

/* Nesting of skipped values (unknown keys, polygons); deeper: give up. */
#define MAX_DEPTH 32

/* ------------------------------------------------------------------- tokens */

typedef struct {
    const uint8_t *p, *end;
} Cur;

static inline void skip_ws(Cur *c) {
    if (c->p < c->end && *c->p > ' ') return; /* the usual case: no whitespace */
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

/* Whether the next token is `ch` (taken if so). */
static inline int take(Cur *c, uint8_t ch) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* Whether the next token is the literal `word` of n letters (taken if so). */
static inline int take_word(Cur *c, const char *word, size_t n) {
    skip_ws(c);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}
#define TAKE_NULL(c) take_word(c, "null", 4)

/* A key: ASCII without escapes (else give up), and its colon.  0, or -1. */
static int read_key(Cur *c, const uint8_t **s, size_t *len) {
    if (!take(c, '"')) return -1;
    const uint8_t *a = c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p < 0x20 || *c->p >= 0x80 || *c->p == '\\') return -1;
        c->p++;
    }
    if (c->p >= c->end) return -1;
    *s = a;
    *len = (size_t)(c->p - a);
    c->p++;
    return take(c, ':') ? 0 : -1;
}

static inline int key_is(const uint8_t *s, size_t len, const char *name, size_t n) {
    return len == n && memcmp(s, name, n) == 0;
}
#define KEY_IS(s, len, lit) key_is(s, len, lit, sizeof(lit) - 1)

/* The length of the UTF-8 character at p (shortest form, no surrogate, at
   most U+10FFFF), or 0 when the bytes are not one. */
static int utf8_char(const uint8_t *p, const uint8_t *e) {
    uint8_t b = p[0];
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return (e - p >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    if (b >= 0xE0 && b <= 0xEF) {
        if (e - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (b == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
        if (b == 0xED && p[1] >= 0xA0) return 0; /* a surrogate */
        return 3;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        if (e - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (b == 0xF0 && p[1] < 0x90) return 0; /* overlong */
        if (b == 0xF4 && p[1] >= 0x90) return 0; /* past U+10FFFF */
        return 4;
    }
    return 0;
}

static inline int hex_digit(uint8_t ch) {
    return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
}

/*
 * A string skipped: UTF-8 without control characters; escapes \" \\ \/ \b
 * \f \n \r \t and \uXXXX outside the surrogates (a surrogate: give up, its
 * pairing rules are msgspec's).  0, or -1.
 */
static int skip_string(Cur *c) {
    if (!take(c, '"')) return -1;
    const uint8_t *p = c->p, *e = c->end;
    while (p < e) {
        uint8_t ch = *p;
        if (ch == '"') {
            c->p = p + 1;
            return 0;
        }
        if (ch < 0x20) return -1;
        if (ch == '\\') {
            if (++p >= e) return -1;
            switch (*p) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                p++;
                continue;
            case 'u':
                if (e - p < 5 || !hex_digit(p[1]) || !hex_digit(p[2]) || !hex_digit(p[3]) ||
                    !hex_digit(p[4]))
                    return -1;
                if ((p[1] | 0x20) == 'd' && p[2] >= '8') return -1; /* D800-DFFF */
                p += 5;
                continue;
            default:
                return -1;
            }
        }
        if (ch < 0x80) {
            p++;
            continue;
        }
        int k = utf8_char(p, e);
        if (!k) return -1;
        p += k;
    }
    return -1;
}

/*
 * A string value returned: its characters as written; escapes are read and
 * UTF-8 checked when it becomes a str (unescape).  0, or -1.
 */
static int read_text(Cur *c, const uint8_t **s, size_t *len) {
    if (!take(c, '"')) return -1;
    const uint8_t *a = c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p < 0x20) return -1;
        c->p += *c->p == '\\' ? 2 : 1;
    }
    if (c->p >= c->end) return -1;
    *s = a;
    *len = (size_t)(c->p - a);
    c->p++;
    return 0;
}

static unsigned hex4(const uint8_t *p) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) v = v * 16 + (unsigned)(p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
    return v;
}

/*
 * A string's characters s[0:n] (escapes as written) in UTF-8, written to
 * `out` (n bytes suffice: no escape is shorter than what it stands for).
 * Its length, or -1: a bad escape, or a surrogate that is not half of a
 * pair (msgspec refuses both).  The UTF-8 itself is checked by the caller.
 */
static Py_ssize_t unescape(const uint8_t *s, size_t n, char *out) {
    const uint8_t *e = s + n;
    char *o = out;
    while (s < e) {
        if (*s != '\\') {
            *o++ = (char)*s++;
            continue;
        }
        if (e - s < 2) return -1;
        uint8_t k = s[1];
        s += 2;
        const char *plain = strchr("\"\\/bfnrt", k);
        if (k && plain) {
            *o++ = "\"\\/\b\f\n\r\t"[plain - "\"\\/bfnrt"];
            continue;
        }
        if (k != 'u' || e - s < 4 || !hex_digit(s[0]) || !hex_digit(s[1]) || !hex_digit(s[2]) ||
            !hex_digit(s[3]))
            return -1;
        uint32_t cp = hex4(s);
        s += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return -1;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (e - s < 6 || s[0] != '\\' || s[1] != 'u' || !hex_digit(s[2]) || !hex_digit(s[3]) ||
                !hex_digit(s[4]) || !hex_digit(s[5]))
                return -1;
            uint32_t lo = hex4(s + 2);
            if (lo < 0xDC00 || lo > 0xDFFF) return -1;
            s += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp < 0x80) {
            *o++ = (char)cp;
        } else if (cp < 0x800) {
            *o++ = (char)(0xC0 | (cp >> 6));
            *o++ = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            *o++ = (char)(0xE0 | (cp >> 12));
            *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *o++ = (char)(0x80 | (cp & 0x3F));
        } else {
            *o++ = (char)(0xF0 | (cp >> 18));
            *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
            *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *o++ = (char)(0x80 | (cp & 0x3F));
        }
    }
    return o - out;
}

/* ----------------------------------------------------------------- numbers */

/* A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
typedef struct {
    const uint8_t *s; /* its characters */
    size_t len;
    int neg;
    int whole;      /* no fraction, no exponent */
    int int_digits; /* of the integer part */
    int digits;     /* significant digits; past 19 only counted */
    uint64_t sig;   /* the first 19 significant digits */
    int64_t exp10;  /* the value is sig * 10**exp10 when digits <= 19 */
} Num;

static inline int scan_number(Cur *c, Num *n) {
    skip_ws(c);
    const uint8_t *p = c->p, *e = c->end;
    n->s = p;
    n->neg = p < e && *p == '-';
    p += n->neg;
    if (p >= e) return -1;
    const uint8_t *d = p;
    uint64_t sig = 0; /* every digit, wrapping past 19: only used when there are fewer */
    if (*p == '0') {
        p++;
    } else if ((unsigned)(*p - '1') < 9u) {
        p = add_digits(p, e, &sig);
    } else {
        return -1;
    }
    int int_digits = (int)(p - d), frac_digits = 0;
    n->whole = 1;
    if (p < e && *p == '.') {
        const uint8_t *f = ++p;
        p = add_digits(p, e, &sig);
        frac_digits = (int)(p - f);
        if (!frac_digits) return -1;
        n->whole = 0;
    }
    int64_t exp10 = -frac_digits;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p = add_exponent(p + 1, e, &exp10);
        if (!p) return -1;
        n->whole = 0;
    }
    int digits = int_digits + frac_digits;
    if (digits > 19) {
        /* Leading zeros (a "0" integer part, zeros after the point) add
           nothing to sig: they do not count against its 19 digits. */
        const uint8_t *q = d;
        int lead = 0;
        for (; q < p && (*q == '0' || *q == '.'); q++) lead += *q == '0';
        digits -= lead;
        if (digits > 19) sig = 0; /* wrapped: unused (more than 19 digits) */
    }
    n->int_digits = int_digits;
    n->digits = digits;
    n->sig = sig;
    n->exp10 = exp10;
    n->len = (size_t)(p - n->s);
    c->p = p;
    return 0;
}

/*
 * The usual number of a results file -- a coordinate, a score or a keypoint
 * ("76.31", "-0.5", "480"): at most 15 digits and no exponent -- read in one
 * pass at p: *out as num_double() gives it (Clinger's exact case, or a
 * whole number as an integer), and the first byte past it.  NULL on
 * anything else (more digits, an exponent, not a number), which
 * scan_number() then reads or refuses.
 */
static inline const uint8_t *short_decimal(const uint8_t *p, const uint8_t *e, double *out) {
    int neg = p < e && *p == '-';
    p += neg;
    if (p >= e || !is_digit(*p)) return NULL;
    const uint8_t *d = p;
    uint64_t sig = (uint64_t)(*p++ - '0');
    if (sig) /* no leading zero: "0" is the whole integer part */
        while (p < e && is_digit(*p) && p - d < 16) sig = sig * 10 + (uint64_t)(*p++ - '0');
    int digits = (int)(p - d);
    if (p < e && *p == '.') {
        const uint8_t *f = ++p;
        while (p < e && is_digit(*p) && digits + (p - f) < 16) sig = sig * 10 + (uint64_t)(*p++ - '0');
        int frac = (int)(p - f);
        digits += frac;
        if (!frac || digits > 15 || (p < e && (is_digit(*p) || (*p | 0x20) == 'e'))) return NULL;
        /* Both exact (sig < 10**15 < 2**53): one division rounds once. */
        double v = (double)sig / POW10[frac];
        *out = neg ? -v : v;
        return p;
    }
    if (digits > 15 || (p < e && (is_digit(*p) || (*p | 0x20) == 'e'))) return NULL;
    *out = (double)(neg ? -(int64_t)sig : (int64_t)sig); /* "-0" is 0.0, as num_double() reads it */
    return p;
}

/* A number skipped (grammar only).  0, or -1. */
static int skip_number(Cur *c) {
    const uint8_t *p = c->p, *e = c->end;
    p += p < e && *p == '-';
    if (p >= e) return -1;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (p < e && is_digit(*p)) p++;
    else return -1;
    if (p < e && *p == '.') {
        const uint8_t *f = ++p;
        while (p < e && is_digit(*p)) p++;
        if (p == f) return -1;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        const uint8_t *f = p;
        while (p < e && is_digit(*p)) p++;
        if (p == f) return -1;
    }
    c->p = p;
    return 0;
}

/* A whole number of at most 18 digits (else give up).  0, or -1. */
static int read_int(Cur *c, int64_t *out) {
    Num n;
    if (scan_number(c, &n) < 0 || !n.whole || n.int_digits > 18) return -1;
    *out = n.neg ? -(int64_t)n.sig : (int64_t)n.sig;
    return 0;
}

/*
 * n's value as a double, correctly rounded; 1, or 0 when only CPython's
 * conversion can tell (see the top of this file).  A whole number is read
 * as an integer and rounded once, as a float field takes a JSON integer
 * ("-0" is 0.0); one of more than 18 digits: -1 (give up).
 */
static inline int num_double(const Num *n, double *out) {
    if (n->whole) {
        if (n->int_digits > 18) return -1;
        *out = (double)(n->neg ? -(int64_t)n->sig : (int64_t)n->sig);
        return 1;
    }
    if (n->digits > 19) return 0;
    return iou_decimal(n->sig, n->exp10, n->neg, out);
}

/* ------------------------------------------------------------------ reader */

/* The columns, one IouVec each; see py_results and py_dataset for their types. */
enum {
    A_IMAGE, A_CATEGORY, A_BBOX, A_HAS_BBOX, A_SCORE, A_AREA, A_ISCROWD, A_IGNORE, A_ID,
    A_HAS_ID, S_LENGTH, S_SIZE, S_COUNTS, I_ID, I_WIDTH, I_HEIGHT, I_NAME, C_ID, C_NAME,
    K_VALUES, K_LENGTH, K_NUM, I_NEG_LENGTH, I_NEG_IDS, I_NEX_LENGTH, I_NEX_IDS, C_FREQUENCY,
    K_X, K_Y, K_VISIBLE, P_VALUES, P_LENGTH, A_PARTS, P_OTHER, NCOLS
};
/* Not a column: a number only checked (its value is dropped). */
#define NO_COLUMN (-1)

/* A number CPython converts once the GIL is held: its characters, and
   which double of which column it fills. */
typedef struct {
    int64_t at, index;
    int32_t len, column;
} Deferred;

/* A string returned: its bytes in the file. */
typedef struct {
    int64_t at, len;
} Text;

enum { MASKS = 1, BARE = 2, KEYPOINTS = 4, POLYGONS = 8 };

typedef struct {
    Cur c;
    const uint8_t *base;
    int flags;
    int gt; /* ground-truth annotations (else results) */
    IouVec cols[NCOLS];
    IouVec deferred, texts;
    int64_t n_ann, n_img, n_cat;
} Reader;

/* Read a number into column `col`'s double `index`, deferred if need be.
   0, -1 give up, -2 no memory. */
static inline int read_double(Reader *r, double *out, int col, int64_t index) {
    skip_ws(&r->c);
    const uint8_t *past = short_decimal(r->c.p, r->c.end, out);
    if (past) {
        r->c.p = past;
        return 0;
    }
    Num n;
    if (scan_number(&r->c, &n) < 0) return -1;
    int ok = num_double(&n, out);
    if (ok < 0) return -1;
    if (ok) return 0;
    if (n.len >= 64) return -1;
    Deferred d = {(int64_t)(n.s - r->base), index, (int32_t)n.len, col};
    *out = 0.0;
    return iou_vec_put(&r->deferred, &d, sizeof d) < 0 ? -2 : 0;
}

/* A number or null (NaN) into column `col`'s double `index`. */
static int read_double_or_null(Reader *r, double *out, int col, int64_t index) {
    if (TAKE_NULL(&r->c)) {
        *out = NAN;
        return 0;
    }
    return read_double(r, out, col, index);
}

/* A string or null into the texts; *index its position there, -1 for null. */
static int read_text_or_null(Reader *r, int64_t *index) {
    if (TAKE_NULL(&r->c)) {
        *index = -1;
        return 0;
    }
    const uint8_t *s;
    size_t len;
    if (read_text(&r->c, &s, &len) < 0) return -1;
    Text t = {(int64_t)(s - r->base), (int64_t)len};
    *index = (int64_t)(r->texts.len / sizeof t);
    return iou_vec_put(&r->texts, &t, sizeof t) < 0 ? -2 : 0;
}

/* Any value skipped (an unknown key's), within the grammar above. 0, or -1. */
static int skip_value(Cur *c, int depth) {
    skip_ws(c);
    if (c->p >= c->end || depth > MAX_DEPTH) return -1;
    switch (*c->p) {
    case '"':
        return skip_string(c);
    case '{':
        c->p++;
        if (take(c, '}')) return 0;
        do {
            const uint8_t *s;
            size_t len;
            if (read_key(c, &s, &len) < 0 || skip_value(c, depth + 1) < 0) return -1;
        } while (take(c, ','));
        return take(c, '}') ? 0 : -1;
    case '[':
        c->p++;
        if (take(c, ']')) return 0;
        do {
            skip_ws(c);
            /* Polygons are lists of numbers: skip them without recursing. */
            if (c->p < c->end && (is_digit(*c->p) || *c->p == '-')) {
                if (skip_number(c) < 0) return -1;
            } else if (skip_value(c, depth + 1) < 0) {
                return -1;
            }
        } while (take(c, ','));
        return take(c, ']') ? 0 : -1;
    case 't':
        return take_word(c, "true", 4) ? 0 : -1;
    case 'f':
        return take_word(c, "false", 5) ? 0 : -1;
    case 'n':
        return TAKE_NULL(c) ? 0 : -1;
    default:
        return skip_number(c);
    }
}

/* int or bool (ignore: also null) read as a flag: nonzero.  0, or -1. */
static int read_flag(Cur *c, int nullable, uint8_t *out) {
    int64_t v;
    if (take_word(c, "true", 4)) *out = 1;
    else if (take_word(c, "false", 5)) *out = 0;
    else if (nullable && TAKE_NULL(c)) *out = 0;
    else if (read_int(c, &v) == 0) *out = v != 0;
    else return -1;
    return 0;
}

/* ---------------------------------------------------------------- records */

/*
 * The counts string, unescaped (\\ and \/; any other escape, a control
 * character or a byte outside ASCII: give up), appended to `out`; its length.
 */
static int read_counts(Cur *c, IouVec *out, int64_t *length) {
    if (!take(c, '"')) return -1;
    size_t before = out->len;
    const uint8_t *run = c->p;
    while (c->p < c->end) {
        uint8_t ch = *c->p;
        if (ch == '"' || ch == '\\') {
            if (iou_vec_put(out, run, (size_t)(c->p - run)) < 0) return -2;
            c->p++;
            if (ch == '"') {
                *length = (int64_t)(out->len - before);
                return 0;
            }
            if (c->p >= c->end || (*c->p != '\\' && *c->p != '/')) return -1;
            run = c->p; /* the escaped character starts the next run */
            c->p++;
            continue;
        }
        if (ch < 0x20 || ch >= 0x80) return -1;
        c->p++;
    }
    return -1;
}

/* {"size": [h, w], "counts": "..."}, other keys skipped. 0, -1 give up, -2 no memory. */
static int read_rle(Reader *r) {
    Cur *c = &r->c;
    if (!take(c, '{')) return -1;
    int have_size = 0, have_counts = 0;
    int64_t size[2], length = 0;
    if (!take(c, '}')) {
        do {
            const uint8_t *k;
            size_t klen;
            if (read_key(c, &k, &klen) < 0) return -1;
            if (KEY_IS(k, klen, "size")) {
                if (have_size++ || !take(c, '[') || read_int(c, &size[0]) < 0 || !take(c, ',') ||
                    read_int(c, &size[1]) < 0 || !take(c, ']'))
                    return -1;
            } else if (KEY_IS(k, klen, "counts")) {
                if (have_counts++) return -1;
                int e = read_counts(c, &r->cols[S_COUNTS], &length);
                if (e < 0) return e;
            } else if (skip_value(c, 1) < 0) {
                return -1;
            }
        } while (take(c, ','));
        if (!take(c, '}')) return -1;
    }
    if (!have_size || !have_counts) return -1;
    if (iou_vec_put(&r->cols[S_LENGTH], &length, 8) < 0 || iou_vec_put(&r->cols[S_SIZE], size, 16) < 0)
        return -2;
    return 0;
}

/* The keys of an annotation the records declare: a bit each. */
enum {
    K_IMAGE = 1, K_CATEGORY = 2, K_BBOX = 4, K_SCORE = 8, K_SEG = 16, K_ID = 32, K_AREA = 64,
    K_ISCROWD = 128, K_IGNORE = 256, K_KEYPOINTS = 512, K_NUM_KEYPOINTS = 1024
};

static unsigned annotation_key(const uint8_t *k, size_t n) {
    switch (n) {
    case 2: return KEY_IS(k, n, "id") ? K_ID : 0;
    case 4: return KEY_IS(k, n, "bbox") ? K_BBOX : KEY_IS(k, n, "area") ? K_AREA : 0;
    case 5: return KEY_IS(k, n, "score") ? K_SCORE : 0;
    case 6: return KEY_IS(k, n, "ignore") ? K_IGNORE : 0;
    case 7: return KEY_IS(k, n, "iscrowd") ? K_ISCROWD : 0;
    case 8: return KEY_IS(k, n, "image_id") ? K_IMAGE : 0;
    case 9: return KEY_IS(k, n, "keypoints") ? K_KEYPOINTS : 0;
    case 11: return KEY_IS(k, n, "category_id") ? K_CATEGORY : 0;
    case 12: return KEY_IS(k, n, "segmentation") ? K_SEG : 0;
    case 13: return KEY_IS(k, n, "num_keypoints") ? K_NUM_KEYPOINTS : 0;
    default: return 0;
    }
}

/* What one annotation holds, before it goes to the columns. */
typedef struct {
    int64_t image_id, category_id, id, kp_length, num_keypoints, parts;
    double bbox[4], score, area;
    uint8_t has_bbox, iscrowd, ignore, has_id, has_seg;
} Annotation;

/* The `id` field: int, str or null.  A result's is checked and dropped; the
   ground truth's kept (a str, or more than 18 digits: give up). */
static int read_annotation_id(Reader *r, Annotation *a) {
    Cur *c = &r->c;
    if (TAKE_NULL(c)) return 0;
    skip_ws(c);
    if (c->p < c->end && *c->p == '"') return r->gt ? -1 : skip_string(c);
    if (r->gt) {
        a->has_id = 1;
        return read_int(c, &a->id);
    }
    Num n;
    return scan_number(c, &n) == 0 && n.whole ? 0 : -1;
}

/*
 * A keypoints list read into the scratch column K_VALUES: its x, y and
 * labels (v > 0) appended to the columns K_X, K_Y (float64) and K_VISIBLE
 * (uint8), the layout of the keypoint columns, and the numbers CPython
 * converts later pointed at their places there.
 */
static int split_keypoints(Reader *r, size_t deferred_before) {
    IouVec *v = &r->cols[K_VALUES];
    size_t n = v->len / sizeof(double), k = n / 3;
    IouVec *x = &r->cols[K_X], *y = &r->cols[K_Y], *vis = &r->cols[K_VISIBLE];
    int64_t base = (int64_t)(x->len / sizeof(double));
    if (iou_vec_reserve(x, k * sizeof(double)) < 0 || iou_vec_reserve(y, k * sizeof(double)) < 0 ||
        iou_vec_reserve(vis, k) < 0)
        return -2;
    const double *s = (const double *)(void *)v->data;
    double *ox = (double *)(void *)(x->data + x->len), *oy = (double *)(void *)(y->data + y->len);
    uint8_t *ov = (uint8_t *)vis->data + vis->len;
    for (size_t i = 0; i < k; i++) {
        ox[i] = s[3 * i];
        oy[i] = s[3 * i + 1];
        ov[i] = s[3 * i + 2] > 0;
    }
    x->len += k * sizeof(double);
    y->len += k * sizeof(double);
    vis->len += k;
    Deferred *d = (Deferred *)(void *)r->deferred.data;
    for (size_t i = deferred_before / sizeof *d; i < r->deferred.len / sizeof *d; i++) {
        int64_t t = d[i].index;
        d[i].column = t % 3 == 0 ? K_X : t % 3 == 1 ? K_Y : K_VISIBLE;
        d[i].index = base + t / 3;
    }
    v->len = 0;
    return 0;
}

/*
 * `keypoints`: a list of numbers, its length a multiple of 3 (a result's
 * not 0), split into the x, y and label columns (split_keypoints); null, or
 * anything else: give up (the msgspec path says what is wrong).  0, -1 give
 * up, -2 no memory.
 */
static int read_keypoints(Reader *r, Annotation *a) {
    Cur *c = &r->c;
    IouVec *v = &r->cols[K_VALUES];
    size_t deferred_before = r->deferred.len;
    v->len = 0;
    if (!take(c, '[')) return -1;
    if (!take(c, ']')) {
        /* The usual list ("[76.31, 141.0, 0.437, ...]": short decimals, a
           comma and maybe a space between) read with the cursor and the
           column's end held in locals; anything else through read_double. */
        const uint8_t *p = c->p, *e = c->end;
        size_t room = 0;
        double *out = NULL;
        for (;;) {
            if (!room) {
                if (iou_vec_reserve(v, 64 * sizeof(double)) < 0) return -2;
                room = (v->cap - v->len) / sizeof(double);
                out = (double *)(void *)(v->data + v->len);
            }
            while (p < e && *p == ' ') p++;
            const uint8_t *past = short_decimal(p, e, out);
            if (past) {
                p = past;
            } else {
                c->p = p;
                int err = read_double(r, out, K_VALUES, (int64_t)(v->len / sizeof(double)));
                if (err < 0) return err;
                p = c->p;
            }
            out++, room--, v->len += sizeof(double);
            if (p < e && *p == ',') {
                p++;
                continue;
            }
            c->p = p;
            if (!take(c, ',')) break;
            p = c->p;
        }
        if (!take(c, ']')) return -1;
    }
    a->kp_length = (int64_t)(v->len / sizeof(double));
    if (a->kp_length % 3 != 0 || (!r->gt && a->kp_length == 0)) return -1;
    return split_keypoints(r, deferred_before);
}

/*
 * A list of polygons ([[x1, y1, x2, y2, ...], ...]): each part's numbers
 * appended to P_VALUES and its count to P_LENGTH, *parts their number.
 * Anything else in the list: -1 (the caller keeps the value whole).
 */
static int read_polygon_parts(Reader *r, int64_t *parts) {
    Cur *c = &r->c;
    IouVec *v = &r->cols[P_VALUES];
    *parts = 0;
    if (!take(c, '[')) return -1;
    if (take(c, ']')) return 0;
    do {
        size_t before = v->len;
        if (!take(c, '[')) return -1;
        if (!take(c, ']')) {
            do {
                if (iou_vec_reserve(v, sizeof(double)) < 0) return -2;
                double *out = (double *)(void *)(v->data + v->len);
                int e = read_double(r, out, P_VALUES, (int64_t)(v->len / sizeof(double)));
                if (e < 0) return e;
                v->len += sizeof(double);
            } while (take(c, ','));
            if (!take(c, ']')) return -1;
        }
        int64_t n = (int64_t)((v->len - before) / sizeof(double));
        if (iou_vec_put(&r->cols[P_LENGTH], &n, 8) < 0) return -2;
        (*parts)++;
    } while (take(c, ','));
    return take(c, ']') ? 0 : -1;
}

/*
 * A ground truth's `segmentation` with POLYGONS: null (parts -1), a list of
 * polygons read into the polygon columns (parts: their number, 0 for []),
 * or any other value skipped and its place in the file kept in P_OTHER
 * (parts -2; an RLE dict, or a list that is not one of polygons) for the
 * caller to decode.  0, -1 give up, -2 no memory.
 */
static int read_segmentation(Reader *r, Annotation *a) {
    Cur *c = &r->c;
    if (TAKE_NULL(c)) return 0;
    skip_ws(c);
    const uint8_t *start = c->p;
    size_t values = r->cols[P_VALUES].len, lengths = r->cols[P_LENGTH].len;
    size_t deferred = r->deferred.len;
    if (c->p < c->end && *c->p == '[') {
        int e = read_polygon_parts(r, &a->parts);
        if (e != -1) return e;
        r->cols[P_VALUES].len = values;
        r->cols[P_LENGTH].len = lengths;
        r->deferred.len = deferred;
        c->p = start;
    }
    if (skip_value(c, 1) < 0) return -1;
    int64_t span[2] = {(int64_t)(start - r->base), (int64_t)(c->p - start)};
    a->parts = -2;
    return iou_vec_put(&r->cols[P_OTHER], span, 16) < 0 ? -2 : 0;
}

/* One field of an annotation (bit: which).  0, -1 give up, -2 no memory. */
static int read_annotation_field(Reader *r, Annotation *a, unsigned bit) {
    Cur *c = &r->c;
    int64_t row = r->n_ann;
    switch (bit) {
    case K_IMAGE:
        return read_int(c, &a->image_id);
    case K_CATEGORY:
        return read_int(c, &a->category_id);
    case K_BBOX:
        if (TAKE_NULL(c)) return 0;
        if (!take(c, '[')) return -1;
        for (int i = 0; i < 4; i++) {
            if (i && !take(c, ',')) return -1;
            int e = read_double(r, &a->bbox[i], A_BBOX, 4 * row + i);
            if (e < 0) return e;
        }
        a->has_bbox = 1;
        return take(c, ']') ? 0 : -1;
    case K_SCORE: /* a results' score is a column; the ground truth's only checked */
        if (r->gt && TAKE_NULL(c)) return 0;
        return read_double(r, &a->score, r->gt ? NO_COLUMN : A_SCORE, row);
    case K_AREA:
        return read_double_or_null(r, &a->area, r->gt ? A_AREA : NO_COLUMN, row);
    case K_SEG:
        if (r->flags & POLYGONS) return read_segmentation(r, a);
        if (!(r->flags & MASKS)) return skip_value(c, 1);
        if (TAKE_NULL(c)) return 0;
        a->has_seg = 1;
        return read_rle(r);
    case K_ID:
        return read_annotation_id(r, a);
    case K_ISCROWD:
        return read_flag(c, 0, &a->iscrowd);
    case K_IGNORE:
        return read_flag(c, 1, &a->ignore);
    case K_KEYPOINTS:
        return read_keypoints(r, a);
    case K_NUM_KEYPOINTS: /* int or null (-1) */
        if (TAKE_NULL(c)) return 0;
        return read_int(c, &a->num_keypoints);
    default:
        return skip_value(c, 1);
    }
}

/* The annotation's columns: results (image, category, box, has box, score;
   masks: the RLE's) or ground truth (also area, iscrowd, ignore, id). */
static int put_annotation(Reader *r, const Annotation *a) {
    IouVec *v = r->cols;
    if (iou_vec_put(&v[A_IMAGE], &a->image_id, 8) < 0 ||
        iou_vec_put(&v[A_CATEGORY], &a->category_id, 8) < 0 || iou_vec_put(&v[A_BBOX], a->bbox, 32) < 0)
        return -2;
    if ((r->flags & (MASKS | KEYPOINTS | POLYGONS)) && iou_vec_put(&v[A_HAS_BBOX], &a->has_bbox, 1) < 0)
        return -2;
    if ((r->flags & POLYGONS) && iou_vec_put(&v[A_PARTS], &a->parts, 8) < 0) return -2;
    if ((r->flags & KEYPOINTS) && (iou_vec_put(&v[K_LENGTH], &a->kp_length, 8) < 0 ||
                                   iou_vec_put(&v[K_NUM], &a->num_keypoints, 8) < 0))
        return -2;
    if (r->flags & MASKS) {
        int64_t none = -1, zero[2] = {0, 0};
        if (!a->has_seg && (iou_vec_put(&v[S_LENGTH], &none, 8) < 0 || iou_vec_put(&v[S_SIZE], zero, 16) < 0))
            return -2;
    }
    if (!r->gt) return iou_vec_put(&v[A_SCORE], &a->score, 8) < 0 ? -2 : 0;
    if (iou_vec_put(&v[A_AREA], &a->area, 8) < 0 || iou_vec_put(&v[A_ISCROWD], &a->iscrowd, 1) < 0 ||
        iou_vec_put(&v[A_IGNORE], &a->ignore, 1) < 0 || iou_vec_put(&v[A_ID], &a->id, 8) < 0 ||
        iou_vec_put(&v[A_HAS_ID], &a->has_id, 1) < 0)
        return -2;
    return 0;
}

/*
 * One annotation object into the columns, with the record types' rules:
 * image_id and category_id integers; bbox null or four numbers (null, or
 * none, only where masks are scored: boxes are needed otherwise); a
 * result's score a number; segmentation skipped, or null or a compressed
 * RLE where masks are scored; id, area, iscrowd and ignore as the records
 * type them; other keys skipped.  0, -1 give up, -2 no memory.
 */
static int read_annotation(Reader *r) {
    Cur *c = &r->c;
    if (!take(c, '{')) return -1;
    Annotation a;
    memset(&a, 0, sizeof a);
    a.area = NAN;
    a.num_keypoints = -1;
    a.parts = -1;
    unsigned seen = 0;
    if (take(c, '}')) return -1; /* no image_id */
    do {
        const uint8_t *k;
        size_t klen;
        if (read_key(c, &k, &klen) < 0) return -1;
        unsigned bit = annotation_key(k, klen);
        if (!(r->flags & KEYPOINTS) && bit >= K_KEYPOINTS) bit = 0; /* not a field then */
        int e = read_annotation_field(r, &a, bit);
        if (e < 0) return e;
        if (seen & bit) return -1; /* a key written twice */
        seen |= bit;
    } while (take(c, ','));
    if (!take(c, '}')) return -1;
    if ((seen & (K_IMAGE | K_CATEGORY)) != (K_IMAGE | K_CATEGORY)) return -1;
    /* A result without a score, or a box missing where boxes are scored:
       errors the msgspec path reports. */
    if (!r->gt && !(seen & K_SCORE)) return -1;
    if (!a.has_bbox && !(r->flags & (MASKS | POLYGONS)) && !((r->flags & KEYPOINTS) && !r->gt))
        return -1;
    /* Keypoints are needed where they are scored. */
    if ((r->flags & KEYPOINTS) && !(seen & K_KEYPOINTS)) return -1;
    int e = put_annotation(r, &a);
    r->n_ann++;
    return e;
}

/* -------------------------------------------------------------- documents */

/* `[` annotations `]`, or with BARE the annotations alone (a part of a list
   cut at element boundaries), then only whitespace.  0, -1, -2. */
static int read_results(Reader *r) {
    Cur *c = &r->c;
    int bare = r->flags & BARE;
    if (!bare && !take(c, '[')) return -1;
    skip_ws(c);
    int empty = bare ? c->p == c->end : take(c, ']');
    if (!empty) {
        do {
            int e = read_annotation(r);
            if (e < 0) return e;
        } while (take(c, ','));
        if (!bare && !take(c, ']')) return -1;
    }
    skip_ws(c);
    return c->p == c->end ? 0 : -1;
}

/*
 * LVIS's list of category ids (`neg_category_ids`, `not_exhaustive_category_ids`)
 * of one image: its ids appended to column `ids_col`, their number in
 * *length (-1 for null).  Integers of at most 18 digits only (a string id, a
 * float, a nested value: give up; msgspec's path normalizes or refuses
 * them).  0, -1 give up, -2 no memory.
 */
static int read_id_list(Reader *r, int ids_col, int64_t *length) {
    Cur *c = &r->c;
    *length = -1;
    if (TAKE_NULL(c)) return 0;
    if (!take(c, '[')) return -1;
    IouVec *v = &r->cols[ids_col];
    size_t before = v->len;
    if (!take(c, ']')) {
        do {
            int64_t id;
            if (read_int(c, &id) < 0) return -1;
            if (iou_vec_put(v, &id, sizeof id) < 0) return -2;
        } while (take(c, ','));
        if (!take(c, ']')) return -1;
    }
    *length = (int64_t)((v->len - before) / sizeof(int64_t));
    return 0;
}

/* One image: id (an integer), file_name, width, height, LVIS's two lists;
   other keys skipped. */
static int read_image(Reader *r) {
    Cur *c = &r->c;
    if (!take(c, '{')) return -1;
    int64_t id = 0, name = -1, row = r->n_img, neg = -1, nex = -1;
    double width = NAN, height = NAN;
    unsigned seen = 0;
    if (take(c, '}')) return -1; /* no id */
    do {
        const uint8_t *k;
        size_t klen;
        unsigned bit = 0;
        int e = 0;
        if (read_key(c, &k, &klen) < 0) return -1;
        if (KEY_IS(k, klen, "id")) bit = 1, e = read_int(c, &id);
        else if (KEY_IS(k, klen, "file_name")) bit = 2, e = read_text_or_null(r, &name);
        else if (KEY_IS(k, klen, "width")) bit = 4, e = read_double_or_null(r, &width, I_WIDTH, row);
        else if (KEY_IS(k, klen, "height")) bit = 8, e = read_double_or_null(r, &height, I_HEIGHT, row);
        else if (KEY_IS(k, klen, "neg_category_ids"))
            bit = 16, e = read_id_list(r, I_NEG_IDS, &neg);
        else if (KEY_IS(k, klen, "not_exhaustive_category_ids"))
            bit = 32, e = read_id_list(r, I_NEX_IDS, &nex);
        else e = skip_value(c, 1);
        if (e < 0) return e;
        if (seen & bit) return -1;
        seen |= bit;
    } while (take(c, ','));
    if (!take(c, '}') || !(seen & 1)) return -1;
    IouVec *v = r->cols;
    if (iou_vec_put(&v[I_ID], &id, 8) < 0 || iou_vec_put(&v[I_NAME], &name, 8) < 0 ||
        iou_vec_put(&v[I_WIDTH], &width, 8) < 0 || iou_vec_put(&v[I_HEIGHT], &height, 8) < 0 ||
        iou_vec_put(&v[I_NEG_LENGTH], &neg, 8) < 0 || iou_vec_put(&v[I_NEX_LENGTH], &nex, 8) < 0)
        return -2;
    r->n_img++;
    return 0;
}

/* LVIS's `frequency` of a category: "r", "c" or "f" as 0, 1, 2; null as
   -1; anything else (another string, an escape): give up. */
static int read_frequency(Cur *c, int8_t *out) {
    const uint8_t *s;
    size_t len;
    *out = -1;
    if (TAKE_NULL(c)) return 0;
    if (read_text(c, &s, &len) < 0 || len != 1) return -1;
    const char *at = memchr("rcf", *s, 3);
    if (!at) return -1;
    *out = (int8_t)(at - "rcf");
    return 0;
}

/* One category: id (an integer), name and LVIS's frequency; other keys skipped. */
static int read_category(Reader *r) {
    Cur *c = &r->c;
    if (!take(c, '{')) return -1;
    int64_t id = 0, name = -1;
    int8_t frequency = -1;
    unsigned seen = 0;
    if (take(c, '}')) return -1;
    do {
        const uint8_t *k;
        size_t klen;
        unsigned bit = 0;
        int e = 0;
        if (read_key(c, &k, &klen) < 0) return -1;
        if (KEY_IS(k, klen, "id")) bit = 1, e = read_int(c, &id);
        else if (KEY_IS(k, klen, "name")) bit = 2, e = read_text_or_null(r, &name);
        else if (KEY_IS(k, klen, "frequency")) bit = 4, e = read_frequency(c, &frequency);
        else e = skip_value(c, 1);
        if (e < 0) return e;
        if (seen & bit) return -1;
        seen |= bit;
    } while (take(c, ','));
    if (!take(c, '}') || !(seen & 1)) return -1;
    if (iou_vec_put(&r->cols[C_ID], &id, 8) < 0 || iou_vec_put(&r->cols[C_NAME], &name, 8) < 0 ||
        iou_vec_put(&r->cols[C_FREQUENCY], &frequency, 1) < 0)
        return -2;
    r->n_cat++;
    return 0;
}

/* A list of items, each read by `item`.  0, -1, -2. */
static int read_list(Reader *r, int (*item)(Reader *)) {
    Cur *c = &r->c;
    if (!take(c, '[')) return -1;
    if (take(c, ']')) return 0;
    do {
        int e = item(r);
        if (e < 0) return e;
    } while (take(c, ','));
    return take(c, ']') ? 0 : -1;
}

/* {"images": [...], "annotations": [...], "categories": [...], ...}: all
   three lists (null or missing: give up, msgspec's path says so). */
static int read_dataset(Reader *r) {
    Cur *c = &r->c;
    if (!take(c, '{')) return -1;
    unsigned seen = 0;
    if (take(c, '}')) return -1;
    do {
        const uint8_t *k;
        size_t klen;
        unsigned bit = 0;
        int e;
        if (read_key(c, &k, &klen) < 0) return -1;
        if (KEY_IS(k, klen, "images")) bit = 1, e = read_list(r, read_image);
        else if (KEY_IS(k, klen, "annotations")) bit = 2, e = read_list(r, read_annotation);
        else if (KEY_IS(k, klen, "categories")) bit = 4, e = read_list(r, read_category);
        else e = skip_value(c, 1);
        if (e < 0) return e;
        if (seen & bit) return -1;
        seen |= bit;
    } while (take(c, ','));
    if (!take(c, '}') || seen != 7) return -1;
    skip_ws(c);
    return c->p == c->end ? 0 : -1;
}

/* ------------------------------------------------------------ the results */

/* The deferred numbers, converted by CPython (the GIL held).  0, or -1 (give up). */
static int convert_deferred(Reader *r) {
    const Deferred *d = (const Deferred *)r->deferred.data;
    size_t n = r->deferred.len / sizeof *d;
    for (size_t i = 0; i < n; i++) {
        char text[64];
        memcpy(text, r->base + d[i].at, (size_t)d[i].len);
        text[d[i].len] = 0;
        double v = PyOS_string_to_double(text, NULL, NULL);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (!isfinite(v)) return -1;
        if (d[i].column == K_VISIBLE) ((uint8_t *)r->cols[K_VISIBLE].data)[d[i].index] = v > 0;
        else if (d[i].column != NO_COLUMN) ((double *)r->cols[d[i].column].data)[d[i].index] = v;
    }
    return 0;
}

/* One text as a str; NULL with UnicodeDecodeError where it is not one. */
static PyObject *text_str(const uint8_t *s, size_t n) {
    if (!memchr(s, '\\', n)) return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, "strict");
    char *buf = malloc(n ? n : 1);
    if (!buf) return PyErr_NoMemory();
    Py_ssize_t len = unescape(s, n, buf);
    PyObject *out = NULL;
    if (len >= 0) {
        out = PyUnicode_DecodeUTF8(buf, len, "strict");
    } else { /* as a bad byte would: the caller gives up */
        PyObject *exc = PyUnicodeDecodeError_Create("utf-8", (const char *)s, (Py_ssize_t)n, 0, 1,
                                                    "a bad escape");
        if (exc) {
            PyErr_SetObject(PyExc_UnicodeDecodeError, exc);
            Py_DECREF(exc);
        }
    }
    free(buf);
    return out;
}

/* The texts named by column `col` (int64 each, -1: None) as a list of str. */
static PyObject *text_list(Reader *r, int col) {
    const int64_t *at = (const int64_t *)r->cols[col].data;
    const Text *t = (const Text *)r->texts.data;
    Py_ssize_t n = (Py_ssize_t)(r->cols[col].len / 8);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *s = at[i] < 0 ? Py_NewRef(Py_None)
                                : text_str(r->base + t[at[i]].at, (size_t)t[at[i]].len);
        if (!s) Py_CLEAR(out);
        else PyList_SET_ITEM(out, i, s);
    }
    return out;
}

static const char *COLUMN_NAMES[NCOLS] = {
    "image_id", "category_id", "bbox", "has_bbox", "score", "area", "iscrowd", "ignore", "id",
    "has_id", "seg_length", "size", "counts", "image.id", "image.width", "image.height",
    "image.file_name", "category.id", "category.name", "kp_values", "kp_length", "num_keypoints",
    "image.neg_length", "image.neg_ids", "image.not_exhaustive_length",
    "image.not_exhaustive_ids", "category.frequency", "kp_x", "kp_y", "kp_visible",
    "poly_values", "poly_length", "seg_parts", "seg_other",
};

/* {name: Block} of the columns in `cols` (texts: lists of str), with
   "n" the annotations; None where a text is not UTF-8; NULL on error. */
static PyObject *columns_dict(Reader *r, const int *cols, int ncols) {
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    PyObject *n = PyLong_FromLongLong(r->n_ann);
    if (!n || PyDict_SetItemString(out, "n", n) < 0) goto fail;
    Py_CLEAR(n);
    for (int i = 0; i < ncols; i++) {
        int col = cols[i];
        PyObject *value = col == I_NAME || col == C_NAME ? text_list(r, col) : iou_block_of_vec(&r->cols[col]);
        if (!value) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                Py_DECREF(out);
                return Py_NewRef(Py_None);
            }
            goto fail;
        }
        int e = PyDict_SetItemString(out, COLUMN_NAMES[col], value);
        Py_DECREF(value);
        if (e < 0) goto fail;
    }
    return out;
fail:
    Py_XDECREF(n);
    Py_DECREF(out);
    return NULL;
}

static void reader_free(Reader *r) {
    for (int i = 0; i < NCOLS; i++) free(r->cols[i].data);
    free(r->deferred.data);
    free(r->texts.data);
}

/*
 * Read buf[start:end] with `read` (the GIL released), then convert what
 * waited for CPython and hand the columns `cols` over.  None where the
 * reader gives up.
 */
static PyObject *run_reader(PyObject *buf, Py_ssize_t start, Py_ssize_t end, int flags, int gt,
                            int (*read)(Reader *), const int *cols, int ncols) {
    Py_buffer view;
    if (PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (end < 0 || end > view.len) end = view.len;
    if (start < 0 || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start must lie in [0, end]");
        return NULL;
    }
    Reader r;
    memset(&r, 0, sizeof r);
    r.base = (const uint8_t *)view.buf;
    r.c.p = r.base + start;
    r.c.end = r.base + end;
    r.flags = flags;
    r.gt = gt;
    int status;
    Py_BEGIN_ALLOW_THREADS status = read(&r);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (status == -2) PyErr_NoMemory();
    else if (status < 0 || convert_deferred(&r) < 0) result = Py_NewRef(Py_None);
    else result = columns_dict(&r, cols, ncols);
    reader_free(&r);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *py_results(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *buf;
    int flags = 0;
    Py_ssize_t start = 0, end = -1;
    if (!PyArg_ParseTuple(args, "O|inn", &buf, &flags, &start, &end)) return NULL;
    static const int boxes[] = {A_IMAGE, A_CATEGORY, A_BBOX, A_SCORE};
    static const int masks[] = {A_IMAGE,  A_CATEGORY, A_BBOX, A_HAS_BBOX,
                                A_SCORE,  S_LENGTH,   S_SIZE, S_COUNTS};
    static const int keypoints[] = {A_IMAGE, A_CATEGORY, A_BBOX,      A_HAS_BBOX, A_SCORE,
                                    K_X,     K_Y,        K_VISIBLE,   K_LENGTH,   K_NUM};
    if ((flags & MASKS) && (flags & KEYPOINTS)) {
        PyErr_SetString(PyExc_ValueError, "results: MASKS or KEYPOINTS, not both");
        return NULL;
    }
    if (flags & MASKS) return run_reader(buf, start, end, flags, 0, read_results, masks, 8);
    if (flags & KEYPOINTS) return run_reader(buf, start, end, flags, 0, read_results, keypoints, 10);
    return run_reader(buf, start, end, flags, 0, read_results, boxes, 4);
}

static PyObject *py_dataset(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *buf;
    int flags = 0;
    if (!PyArg_ParseTuple(args, "O|i", &buf, &flags)) return NULL;
    if ((flags != 0 && flags != KEYPOINTS && flags != POLYGONS)) {
        PyErr_SetString(PyExc_ValueError, "dataset: flags are 0, KEYPOINTS or POLYGONS");
        return NULL;
    }
    static const int cols[] = {A_IMAGE,      A_CATEGORY, A_BBOX,       A_AREA,    A_ISCROWD,
                               A_IGNORE,     A_ID,       A_HAS_ID,     I_ID,      I_WIDTH,
                               I_HEIGHT,     I_NAME,     C_ID,         C_NAME,    I_NEG_LENGTH,
                               I_NEG_IDS,    I_NEX_LENGTH, I_NEX_IDS,  C_FREQUENCY,
                               A_HAS_BBOX,   K_X,        K_Y,          K_VISIBLE,
                               K_LENGTH,     K_NUM};
    int ncols = (int)(sizeof cols / sizeof *cols) - (flags & KEYPOINTS ? 0 : 6);
    if (flags & POLYGONS) {
        /* The box columns and has_bbox, then the polygon columns. */
        int polygons[sizeof cols / sizeof *cols];
        int base = (int)(sizeof cols / sizeof *cols) - 5;
        memcpy(polygons, cols, sizeof polygons);
        polygons[base] = P_VALUES, polygons[base + 1] = P_LENGTH;
        polygons[base + 2] = A_PARTS, polygons[base + 3] = P_OTHER;
        return run_reader(buf, 0, -1, flags, 1, read_dataset, polygons, base + 4);
    }
    return run_reader(buf, 0, -1, flags, 1, read_dataset, cols, ncols);
}

static PyObject *py_powers_of_five(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    PyObject *out = PyList_New(0);
    for (int q = POW5_MIN; out && q <= POW5_MAX; q++) {
        PyObject *t = Py_BuildValue("(iKK)", q, (unsigned long long)POW5[q - POW5_MIN][0],
                                    (unsigned long long)POW5[q - POW5_MIN][1]);
        if (!t || PyList_Append(out, t) < 0) Py_CLEAR(out);
        Py_XDECREF(t);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"results", py_results, METH_VARARGS,
     "results(buf, flags=0, start=0, end=-1) -> None or {name: column}: a COCO results list "
     "(flags: 1 masks as compressed RLE columns, 2 buf[start:end] holds list elements "
     "without the brackets).  Columns: n, image_id int64[n], category_id int64[n], "
     "bbox float64[n, 4], score float64[n]; with masks also has_bbox uint8[n], "
     "seg_length int64[n] (-1: none), size int64[n, 2], counts (the strings back to back); "
     "flags 4 (keypoints; a result's bbox may be null or absent) also has_bbox uint8[n], "
     "kp_x and kp_y float64 (each list's x and y back to back), kp_visible uint8 (its v > "
     "0), kp_length int64[n] (each list's numbers: 3 per keypoint), "
     "num_keypoints int64[n] (-1: null or absent)."},
    {"dataset", py_dataset, METH_VARARGS,
     "dataset(buf, flags=0) -> None or {name: column}: a COCO ground truth with boxes (flags: "
     "4 also keypoints, columns as results' with KEYPOINTS).  Annotations: "
     "n, image_id, category_id, bbox float64[n, 4], area float64[n] (NaN: none), "
     "iscrowd and ignore uint8[n], id int64[n] and has_id uint8[n]; images: image.id "
     "int64, image.width and image.height float64 (NaN: none), image.file_name (list), "
     "LVIS's lists: image.neg_length and image.not_exhaustive_length int64 (-1: null or "
     "absent), image.neg_ids and image.not_exhaustive_ids int64 (the lists back to back); "
     "categories: category.id int64, category.name (list), category.frequency int8 "
     "(0 r, 1 c, 2 f, -1 null or absent).  Flags 8 (polygons; a bbox may be null or absent): "
     "also has_bbox uint8[n], seg_parts int64[n] (each segmentation's polygons; -1 null or "
     "absent, -2 another value), poly_length int64 (each polygon's numbers), poly_values "
     "float64 (the numbers back to back), seg_other int64[k, 2] (where each other value "
     "lies in buf: start, length)."},
    {"powers_of_five", py_powers_of_five, METH_NOARGS,
     "powers_of_five() -> [(q, high, low)]: the table of the number conversion."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cocojson",
    "COCO JSON (results lists and ground-truth datasets) read into columns.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cocojson(void) {
    if (iou_block_ready() < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "MASKS", MASKS) < 0 || PyModule_AddIntConstant(m, "BARE", BARE) < 0 ||
        PyModule_AddIntConstant(m, "KEYPOINTS", KEYPOINTS) < 0 ||
        PyModule_AddIntConstant(m, "POLYGONS", POLYGONS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
