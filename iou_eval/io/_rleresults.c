/*
 * A COCO results list whose segmentations are compressed RLEs, read straight
 * into columns (the file detectors' evaluation hooks write: detectron2,
 * mmdetection).
 *
 * Optional, like iou_eval/_rlekernel.c: without it iou_eval.loaders.coco
 * decodes every chunk with msgspec.  This reader gives the columns that
 * msgspec's decoding of the same chunk into _RleResult records gives, and
 * is sure of a narrower grammar: on anything else (a string id, a float
 * where an integer stands, an escape other than \\ or \/ in the counts,
 * a byte outside ASCII, a missing field, a key written twice, ...) it
 * returns None and the caller decodes the chunk with msgspec, which also
 * says what is wrong with a bad file.  tests/unit/test_rle_results.py
 * compares the two on generated lists and on lists it must give up on.
 *
 * Numbers are read with CPython's own correctly rounded string-to-double
 * (as msgspec's are correctly rounded), so the GIL stays held.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Nesting of skipped values (unknown keys); deeper: give up. */
#define MAX_DEPTH 32

/* ----------------------------------------------------------- output columns */

typedef struct {
    char *data;
    size_t len, cap;
} Vec;

static int vec_put(Vec *v, const void *src, size_t n) {
    if (v->len + n > v->cap) {
        size_t cap = v->cap ? v->cap : 1 << 12;
        while (cap < v->len + n) cap *= 2;
        char *d = realloc(v->data, cap);
        if (!d) return -1;
        v->data = d;
        v->cap = cap;
    }
    memcpy(v->data + v->len, src, n);
    v->len += n;
    return 0;
}

/* The columns, one Vec each (see read_list for their types). */
enum { IMAGE_ID, CATEGORY_ID, BBOX, HAS_BBOX, SCORE, SEG_LENGTH, SIZE, COUNTS, NCOLS };

/* ------------------------------------------------------------------ tokens */

typedef struct {
    const uint8_t *p, *end;
} Cur;

static inline void skip_ws(Cur *c) {
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

/* Whether the next token is the literal `word` (taken if so). */
static int take_word(Cur *c, const char *word) {
    skip_ws(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

/*
 * A key: a string of ASCII characters without escapes (others: give up),
 * and its colon.  0, or -1.
 */
static int read_key(Cur *c, const uint8_t **s, Py_ssize_t *len) {
    if (!take(c, '"')) return -1;
    const uint8_t *a = c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p < 0x20 || *c->p >= 0x80 || *c->p == '\\') return -1;
        c->p++;
    }
    if (c->p >= c->end) return -1;
    *s = a;
    *len = c->p - a;
    c->p++;
    return take(c, ':') ? 0 : -1;
}

static int key_is(const uint8_t *s, Py_ssize_t len, const char *name) {
    return (size_t)len == strlen(name) && memcmp(s, name, (size_t)len) == 0;
}

/*
 * A JSON number's span: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
 * *whole: it has no fraction and no exponent; *digits: of its integer part.
 * 0, or -1 when there is none.
 */
static int number_span(Cur *c, const uint8_t **s, Py_ssize_t *len, int *whole, int *digits) {
    skip_ws(c);
    const uint8_t *p = c->p, *e = c->end, *a = p;
    if (p < e && *p == '-') p++;
    const uint8_t *d = p;
    if (p >= e) return -1;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (p < e && *p >= '0' && *p <= '9') p++;
    else
        return -1;
    *digits = (int)(p - d);
    *whole = 1;
    if (p < e && *p == '.') {
        p++;
        const uint8_t *f = p;
        while (p < e && *p >= '0' && *p <= '9') p++;
        if (p == f) return -1;
        *whole = 0;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        const uint8_t *f = p;
        while (p < e && *p >= '0' && *p <= '9') p++;
        if (p == f) return -1;
        *whole = 0;
    }
    *s = a;
    *len = p - a;
    c->p = p;
    return 0;
}

/* The value of the whole number s[0:len] of at most 18 digits (it fits). */
static int64_t whole_value(const uint8_t *s, Py_ssize_t len) {
    int neg = *s == '-';
    int64_t v = 0;
    for (const uint8_t *p = s + neg; p < s + len; p++) v = v * 10 + (*p - '0');
    return neg ? -v : v;
}

/* An integer of at most 18 digits (larger ones: give up). 0, or -1. */
static int read_int(Cur *c, int64_t *out) {
    const uint8_t *s;
    Py_ssize_t len;
    int whole, digits;
    if (number_span(c, &s, &len, &whole, &digits) < 0 || !whole || digits > 18) return -1;
    *out = whole_value(s, len);
    return 0;
}

/* Whether a whole number (of any length) comes next, skipped if so. */
static int skip_whole(Cur *c) {
    const uint8_t *s;
    Py_ssize_t len;
    int whole, digits;
    return number_span(c, &s, &len, &whole, &digits) == 0 && whole;
}

/*
 * A number as a double, correctly rounded.  An integer is read as an
 * integer and then rounded once to double, as a float field takes it
 * ("-0" is 0.0); one of more than 18 digits: give up.  A number that is
 * not finite as a double: give up.  0, or -1.
 */
static int read_double(Cur *c, double *out) {
    const uint8_t *s;
    Py_ssize_t len;
    int whole, digits;
    if (number_span(c, &s, &len, &whole, &digits) < 0) return -1;
    if (whole) {
        if (digits > 18) return -1;
        *out = (double)whole_value(s, len);
        return 0;
    }
    /* The exact case first (Clinger's): a significand below 2**53 and a
       power of ten up to 22 are both exact doubles, so one multiplication
       or division rounds once, correctly. */
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t sig = 0;
    int sig_digits = 0, frac_digits = 0, after_point = 0, neg = *s == '-';
    const uint8_t *p = s + neg, *e = s + len;
    for (; p < e && *p != 'e' && *p != 'E' && sig_digits <= 19; p++) {
        if (*p == '.') {
            after_point = 1;
            continue;
        }
        if (sig_digits || *p != '0') sig_digits++;
        sig = sig * 10 + (uint64_t)(*p - '0');
        frac_digits += after_point;
    }
    if (sig_digits <= 19) {
        int exp10 = -frac_digits;
        if (p < e) { /* the exponent (the span is a valid number) */
            const uint8_t *q = p + 1;
            int eneg = *q == '-';
            if (*q == '+' || *q == '-') q++;
            int ev = 0;
            for (; q < e && ev < 100000; q++) ev = ev * 10 + (*q - '0');
            exp10 += eneg ? -ev : ev;
        }
        if (sig < ((uint64_t)1 << 53) && exp10 >= -22 && exp10 <= 22) {
            double v = (double)sig;
            v = exp10 < 0 ? v / pow10[-exp10] : v * pow10[exp10];
            *out = neg ? -v : v;
            return 0;
        }
    }
    char text[64];
    if (len >= (Py_ssize_t)sizeof text) return -1;
    memcpy(text, s, (size_t)len);
    text[len] = 0;
    double v = PyOS_string_to_double(text, NULL, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    if (!isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* A string skipped: ASCII, escapes \" \\ \/ \b \f \n \r \t only. 0, or -1. */
static int skip_string(Cur *c) {
    if (!take(c, '"')) return -1;
    while (c->p < c->end) {
        uint8_t ch = *c->p++;
        if (ch == '"') return 0;
        if (ch < 0x20 || ch >= 0x80) return -1;
        if (ch == '\\') {
            if (c->p >= c->end || !strchr("\"\\/bfnrt", *c->p) || *c->p == 0) return -1;
            c->p++;
        }
    }
    return -1;
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
            Py_ssize_t len;
            if (read_key(c, &s, &len) < 0 || skip_value(c, depth + 1) < 0) return -1;
        } while (take(c, ','));
        return take(c, '}') ? 0 : -1;
    case '[':
        c->p++;
        if (take(c, ']')) return 0;
        do {
            if (skip_value(c, depth + 1) < 0) return -1;
        } while (take(c, ','));
        return take(c, ']') ? 0 : -1;
    case 't':
        return take_word(c, "true") ? 0 : -1;
    case 'f':
        return take_word(c, "false") ? 0 : -1;
    case 'n':
        return take_word(c, "null") ? 0 : -1;
    default: {
        const uint8_t *s;
        Py_ssize_t len;
        int whole, digits;
        return number_span(c, &s, &len, &whole, &digits);
    }
    }
}

/* ---------------------------------------------------------------- records */

/*
 * The counts string, unescaped (\\ and \/; any other escape, a control
 * character or a byte outside ASCII: give up), appended to `out`; its length.
 */
static int read_counts(Cur *c, Vec *out, int64_t *length) {
    if (!take(c, '"')) return -1;
    size_t before = out->len;
    const uint8_t *run = c->p;
    while (c->p < c->end) {
        uint8_t ch = *c->p;
        if (ch == '"' || ch == '\\') {
            if (vec_put(out, run, (size_t)(c->p - run)) < 0) return -2;
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
static int read_rle(Cur *c, Vec *cols) {
    if (!take(c, '{')) return -1;
    int have_size = 0, have_counts = 0;
    int64_t size[2], length = 0;
    if (!take(c, '}')) {
        do {
            const uint8_t *k;
            Py_ssize_t klen;
            if (read_key(c, &k, &klen) < 0) return -1;
            if (key_is(k, klen, "size")) {
                if (have_size++ || !take(c, '[') || read_int(c, &size[0]) < 0 || !take(c, ',') ||
                    read_int(c, &size[1]) < 0 || !take(c, ']'))
                    return -1;
            } else if (key_is(k, klen, "counts")) {
                if (have_counts++) return -1;
                int r = read_counts(c, &cols[COUNTS], &length);
                if (r < 0) return r;
            } else if (skip_value(c, 1) < 0) {
                return -1;
            }
        } while (take(c, ','));
        if (!take(c, '}')) return -1;
    }
    if (!have_size || !have_counts) return -1;
    if (vec_put(&cols[SEG_LENGTH], &length, 8) < 0 || vec_put(&cols[SIZE], size, 16) < 0) return -2;
    return 0;
}

/* Which keys a record had: a bit each. */
enum {
    K_IMAGE = 1,
    K_CATEGORY = 2,
    K_BBOX = 4,
    K_SCORE = 8,
    K_SEG = 16,
    K_ID = 32,
    K_AREA = 64,
    K_ISCROWD = 128,
    K_IGNORE = 256
};

/*
 * One result object into the columns.  The fields _RleResult declares are
 * read with its types (image_id and category_id integers, bbox null or
 * four numbers, score a number, segmentation null or an RLE; id, area,
 * iscrowd and ignore checked as it checks them and dropped); other keys
 * are skipped.  0, -1 give up, -2 no memory.
 */
static int read_record(Cur *c, Vec *cols) {
    if (!take(c, '{')) return -1;
    unsigned seen = 0;
    int64_t image_id = 0, category_id = 0;
    double bbox[4] = {0, 0, 0, 0}, score = 0;
    uint8_t has_bbox = 0;
    int has_seg = 0;
    if (take(c, '}')) return -1; /* no image_id */
    do {
        const uint8_t *k;
        Py_ssize_t klen;
        unsigned bit = 0;
        if (read_key(c, &k, &klen) < 0) return -1;
        if (key_is(k, klen, "image_id")) {
            bit = K_IMAGE;
            if (read_int(c, &image_id) < 0) return -1;
        } else if (key_is(k, klen, "category_id")) {
            bit = K_CATEGORY;
            if (read_int(c, &category_id) < 0) return -1;
        } else if (key_is(k, klen, "bbox")) {
            bit = K_BBOX;
            if (!take_word(c, "null")) {
                if (!take(c, '[')) return -1;
                for (int i = 0; i < 4; i++)
                    if ((i && !take(c, ',')) || read_double(c, &bbox[i]) < 0) return -1;
                if (!take(c, ']')) return -1;
                has_bbox = 1;
            }
        } else if (key_is(k, klen, "score")) {
            bit = K_SCORE;
            if (read_double(c, &score) < 0) return -1;
        } else if (key_is(k, klen, "segmentation")) {
            bit = K_SEG;
            if (!take_word(c, "null")) {
                int r = read_rle(c, cols);
                if (r < 0) return r;
                has_seg = 1;
            }
        } else if (key_is(k, klen, "id")) {
            /* int, str or null */
            bit = K_ID;
            skip_ws(c);
            if (c->p < c->end && *c->p == '"') {
                if (skip_string(c) < 0) return -1;
            } else if (!take_word(c, "null") && !skip_whole(c)) {
                return -1;
            }
        } else if (key_is(k, klen, "area")) {
            /* a number or null */
            bit = K_AREA;
            double a;
            if (!take_word(c, "null") && read_double(c, &a) < 0) return -1;
        } else if (key_is(k, klen, "iscrowd") || key_is(k, klen, "ignore")) {
            /* int or bool; ignore may also be null */
            bit = key_is(k, klen, "iscrowd") ? K_ISCROWD : K_IGNORE;
            if (!take_word(c, "true") && !take_word(c, "false") &&
                !(bit == K_IGNORE && take_word(c, "null")) && !skip_whole(c))
                return -1;
        } else if (skip_value(c, 1) < 0) {
            return -1;
        }
        if (seen & bit) return -1; /* a key written twice */
        seen |= bit;
    } while (take(c, ','));
    if (!take(c, '}')) return -1;
    /* image_id and category_id are required, and a missing score is an error
       the msgspec path reports. */
    if ((seen & (K_IMAGE | K_CATEGORY | K_SCORE)) != (K_IMAGE | K_CATEGORY | K_SCORE)) return -1;
    if (!has_seg) {
        int64_t none = -1, zero[2] = {0, 0};
        if (vec_put(&cols[SEG_LENGTH], &none, 8) < 0 || vec_put(&cols[SIZE], zero, 16) < 0)
            return -2;
    }
    if (vec_put(&cols[IMAGE_ID], &image_id, 8) < 0 ||
        vec_put(&cols[CATEGORY_ID], &category_id, 8) < 0 || vec_put(&cols[BBOX], bbox, 32) < 0 ||
        vec_put(&cols[HAS_BBOX], &has_bbox, 1) < 0 || vec_put(&cols[SCORE], &score, 8) < 0)
        return -2;
    return 0;
}

/*
 * read(buf) -> None or (n, image_id, category_id, bbox, has_bbox, score,
 * seg_length, size, counts): a list of n result objects as bytearrays of
 * int64[n], int64[n], float64[n, 4] (zeros where there is no bbox),
 * uint8[n], float64[n], int64[n] (-1: no segmentation), int64[n, 2]
 * (zeros: none), and the counts strings back to back.
 */
static PyObject *py_read(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Cur c = {view.buf, (const uint8_t *)view.buf + view.len};
    Vec cols[NCOLS];
    memset(cols, 0, sizeof cols);
    int64_t n = 0;
    int status = 0;
    if (!take(&c, '[')) status = -1;
    if (status == 0 && !take(&c, ']')) {
        do {
            status = read_record(&c, cols);
            n++;
        } while (status == 0 && take(&c, ','));
        if (status == 0 && !take(&c, ']')) status = -1;
    }
    if (status == 0) {
        skip_ws(&c);
        if (c.p != c.end) status = -1;
    }
    PyObject *result = NULL;
    if (status == -2) {
        PyErr_NoMemory();
    } else if (status < 0) {
        result = Py_NewRef(Py_None);
    } else {
        result = PyTuple_New(1 + NCOLS);
        if (result) {
            PyTuple_SET_ITEM(result, 0, PyLong_FromLongLong(n));
            for (int i = 0; i < NCOLS; i++) {
                PyObject *b = PyByteArray_FromStringAndSize(cols[i].data ? cols[i].data : "",
                                                            (Py_ssize_t)cols[i].len);
                if (!b) {
                    Py_CLEAR(result);
                    break;
                }
                PyTuple_SET_ITEM(result, 1 + i, b);
            }
        }
    }
    for (int i = 0; i < NCOLS; i++) free(cols[i].data);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"read", py_read, METH_O,
     "read(buf) -> None or (n, image_id, category_id, bbox, has_bbox, score, seg_length, size, "
     "counts): a COCO results list with compressed RLE segmentations, as columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rleresults",
    "A COCO results list with compressed RLE segmentations, read into columns.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rleresults(void) { return PyModule_Create(&module); }
