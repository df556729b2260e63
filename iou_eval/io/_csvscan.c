/*
 * CSV and whitespace-separated text read straight into columns: numbers as
 * float64, repeated strings (image ids, class labels) as int64 codes into a
 * table of the distinct strings in the order they first appear, flags
 * (1, 0, -1 or empty) as int8.  No Python object per row.
 *
 * Optional, like iou_eval/io/_cocojson.c: the Python readers
 * (iou_eval/io/loaders/openimages.py, dota.py) stay the reference.  This
 * reader is sure of a narrower grammar: printable ASCII, tabs and line
 * ends (CRLF or LF); a cell quoted whole with no quote inside and no line
 * break; numbers in the strict syntax [+-]?(d+.?d*|.d+)([eE][+-]?d+)? or
 * with a decimal comma [+-]?d*,d+([eE][+-]?d+)?.  On anything else (a quote
 * doubled or inside a cell, a control or non-ASCII byte, a lone carriage
 * return, a malformed number, a row shorter than the header, a flag that is
 * not 1, 0, -1 or empty, ...) it returns None and the caller reads the file
 * with the Python path, which also says what is wrong with a bad file.
 * tests/unit/test_csv_scan.py compares the two on generated files and on
 * byte-level mutations of them.
 *
 * Numbers are correctly rounded, as float() and numpy's conversion are:
 * Clinger's fast path, else Eisel and Lemire's 128-bit product, else
 * CPython's own conversion once the GIL is held again (the conversion is
 * the COCO JSON reader's, shared in _numparse.h; growable arrays and the
 * blocks numpy views come from iou_eval/_common.h).  The file is scanned
 * with the GIL released.
 */
#include "../_common.h"
#include "_numparse.h"
#include <math.h>

/* Cells in a row, and bytes in a cell, beyond which the reader gives up. */
#define MAX_CELLS 256
#define MAX_CELL 4000
#define MAX_NUMBER 1000

/* ----------------------------------------------------------------- numbers */

/*
 * A number cell (stripped, n bytes): *out and 1; 0 when only CPython's
 * conversion can tell (more than 19 significant digits, a power of ten
 * outside the table, a subnormal, an overflow); -1 when it is not a number
 * of the strict syntax (give up).
 */
static int parse_number(const uint8_t *p, size_t n, int comma_ok, double *out) {
    const uint8_t *e = p + n;
    if (n == 0 || n > MAX_NUMBER) return -1;
    int neg = *p == '-';
    if (*p == '+' || *p == '-') p++;
    const uint8_t *d = p;
    uint64_t sig = 0;
    p = add_digits(p, e, &sig);
    int int_digits = (int)(p - d), frac_digits = 0;
    if (p < e && (*p == '.' || (comma_ok && *p == ','))) {
        int comma = *p == ',';
        const uint8_t *f = ++p;
        p = add_digits(p, e, &sig);
        frac_digits = (int)(p - f);
        /* "5." is a number, "5," is not; "." and "," alone are not */
        if (comma ? !frac_digits : !(int_digits + frac_digits)) return -1;
    } else if (!int_digits) {
        return -1;
    }
    int64_t exp10 = -frac_digits;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p = add_exponent(p + 1, e, &exp10);
        if (!p) return -1;
    }
    if (p != e) return -1;
    int digits = int_digits + frac_digits;
    if (digits > 19) {
        /* Leading zeros add nothing to sig: they do not count against its 19 digits. */
        int lead = 0;
        for (const uint8_t *q = d; q < e && (*q == '0' || *q == '.' || *q == ','); q++)
            lead += *q == '0';
        digits -= lead;
        if (digits > 19) return 0;
    }
    return iou_decimal(sig, exp10, neg, out);
}

/* ------------------------------------------------------------------- cells */

/* What a byte is to the tokenizer. */
enum { B_TEXT, B_DELIM, B_NEWLINE, B_CR, B_QUOTE, B_BAD, B_SPACE };

typedef struct {
    const uint8_t *s;
    size_t len;
    int quoted;
} Cell;

typedef struct {
    const uint8_t *base, *p, *end;
    uint8_t cls[256];
    int whitespace; /* cells split on runs of spaces and tabs (no quotes) */
} Scanner;

static void scanner_init(Scanner *sc, const uint8_t *base, size_t len, int delimiter) {
    sc->base = sc->p = base;
    sc->end = base + len;
    for (int b = 0; b < 256; b++) sc->cls[b] = (b >= 0x20 && b < 0x7f) ? B_TEXT : B_BAD;
    sc->cls['\n'] = B_NEWLINE;
    sc->cls['\r'] = B_CR;
    sc->whitespace = delimiter < 0;
    if (sc->whitespace) {
        /* str.split()'s ASCII whitespace: a carriage return is one too */
        static const char space[] = " \t\r\x0b\x0c\x1c\x1d\x1e\x1f";
        for (const char *c = space; *c; c++) sc->cls[(uint8_t)*c] = B_SPACE;
    } else {
        sc->cls['\t'] = B_TEXT;
        sc->cls['"'] = B_QUOTE;
        sc->cls[(uint8_t)delimiter] = B_DELIM;
    }
}

static inline int is_blank(uint8_t ch) { return ch == ' ' || ch == '\t'; }

/* A cell's bytes without the spaces and tabs around them (str.strip on ASCII). */
static inline void strip(Cell *c) {
    while (c->len && is_blank(c->s[0])) c->s++, c->len--;
    while (c->len && is_blank(c->s[c->len - 1])) c->len--;
}

/* The end of a line at p: 1 and past it ("\n", "\r\n", or the end of the
   data), 0 if p is not at one, -1 for a lone "\r" (give up). */
static inline int line_end(Scanner *sc, const uint8_t **p) {
    const uint8_t *q = *p;
    if (q == sc->end) return 1;
    if (*q == '\n') {
        *p = q + 1;
        return 1;
    }
    if (*q == '\r') {
        if (q + 1 < sc->end && q[1] == '\n') {
            *p = q + 2;
            return 1;
        }
        return -1;
    }
    return 0;
}

/*
 * The cells of the row at sc->p (each stripped), sc->p moved past its line
 * end.  The number of cells, or -1 (give up).  A CSV row of an empty line
 * has one empty cell; a whitespace row of a blank line has none.
 */
static int read_row(Scanner *sc, Cell *cells) {
    const uint8_t *p = sc->p, *e = sc->end;
    const uint8_t *cls = sc->cls;
    int n = 0;
    if (sc->whitespace) {
        for (;;) {
            while (p < e && cls[*p] == B_SPACE) p++;
            int end = line_end(sc, &p);
            if (end < 0) return -1;
            if (end) break;
            const uint8_t *s = p;
            while (p < e && cls[*p] == B_TEXT) p++;
            if (p < e && cls[*p] == B_BAD) return -1;
            if (n == MAX_CELLS || (size_t)(p - s) > MAX_CELL) return -1;
            cells[n].s = s;
            cells[n].len = (size_t)(p - s);
            cells[n].quoted = 0;
            n++;
        }
        sc->p = p;
        return n;
    }
    for (;;) {
        if (n == MAX_CELLS) return -1;
        Cell *c = &cells[n++];
        c->quoted = p < e && *p == '"';
        if (c->quoted) {
            const uint8_t *s = ++p;
            while (p < e && (cls[*p] == B_TEXT || cls[*p] == B_DELIM)) p++;
            if (p == e || *p != '"') return -1; /* a line break, a bad byte, or no closing quote */
            c->s = s;
            c->len = (size_t)(p - s);
            p++;
        } else {
            const uint8_t *s = p;
            while (p < e && cls[*p] == B_TEXT) p++;
            c->s = s;
            c->len = (size_t)(p - s);
        }
        if (c->len > MAX_CELL) return -1;
        strip(c);
        if (p < e && cls[*p] == B_DELIM) {
            p++;
            continue;
        }
        if (line_end(sc, &p) != 1) return -1; /* a quote, a bad byte, text after a closing quote */
        break;
    }
    sc->p = p;
    return n;
}

/* Whether every cell of a row is empty. */
static int blank_row(const Cell *cells, int n) {
    for (int i = 0; i < n; i++)
        if (cells[i].len) return 0;
    return 1;
}

/* ---------------------------------------------------------- distinct texts */

typedef struct {
    const uint8_t *s; /* in one of the buffers read */
    int64_t len;
} Text;

/* Open addressing: slots hold a text's index + 1 (0: empty). */
typedef struct {
    IouVec texts; /* Text */
    int64_t *slots;
    uint64_t *hashes; /* of each text */
    size_t mask, count;
    Text last;        /* the text of the last call, and its code: runs of one id cost a memcmp */
    int64_t last_code;
} Strings;

/* Eight bytes at a time (as the machine orders them: the hash only spreads
   the texts over the slots, the codes do not depend on it), then
   splitmix64's finalizer, so that the low bits a slot takes see every byte. */
static inline uint64_t hash_bytes(const uint8_t *s, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    w = 0;
    if (n) memcpy(&w, s, n);
    h ^= w;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

/* Whether s[0:n] and x[0:n] hold the same bytes: eight at a time, inline (ids
   are short; a call to memcmp per cell costs more than the comparison). */
static inline int same_bytes(const uint8_t *s, const uint8_t *x, size_t n) {
    uint64_t a, b;
    for (; n >= 8; s += 8, x += 8, n -= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, x, 8);
        if (a != b) return 0;
    }
    for (; n; s++, x++, n--)
        if (*s != *x) return 0;
    return 1;
}

static int strings_grow(Strings *t) {
    size_t cap = t->mask ? (t->mask + 1) * 2 : 1024;
    int64_t *slots = calloc(cap, sizeof *slots);
    uint64_t *hashes = realloc(t->hashes, cap / 2 * sizeof *hashes);
    if (!slots || !hashes) {
        free(slots);
        if (hashes) t->hashes = hashes;
        return -1;
    }
    t->hashes = hashes;
    for (size_t i = 0; i < t->count; i++) {
        size_t j = (size_t)hashes[i] & (cap - 1);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = (int64_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

/* The code of the text s[0:n] (added if new); -1 no memory. */
static int64_t strings_find(Strings *t, const uint8_t *s, size_t n) {
    if (2 * (t->count + 1) > t->mask + 1 && strings_grow(t) < 0) return -1;
    uint64_t h = hash_bytes(s, n);
    size_t j = (size_t)h & t->mask;
    const Text *texts = (const Text *)t->texts.data;
    for (int64_t k; (k = t->slots[j]) != 0; j = (j + 1) & t->mask) {
        const Text *x = &texts[k - 1];
        if (t->hashes[k - 1] == h && (size_t)x->len == n && same_bytes(x->s, s, n)) return k - 1;
    }
    Text x = {s, (int64_t)n};
    if (iou_vec_put(&t->texts, &x, sizeof x) < 0) return -1;
    t->hashes[t->count] = h;
    t->slots[j] = (int64_t)++t->count;
    return (int64_t)t->count - 1;
}

/* strings_find, with the last text remembered. */
static int64_t strings_code(Strings *t, const uint8_t *s, size_t n) {
    if (t->count && (size_t)t->last.len == n && same_bytes(t->last.s, s, n)) return t->last_code;
    int64_t code = strings_find(t, s, n);
    if (code >= 0) {
        t->last.s = s;
        t->last.len = (int64_t)n;
        t->last_code = code;
    }
    return code;
}

static void strings_free(Strings *t) {
    free(t->texts.data);
    free(t->slots);
    free(t->hashes);
}

/* ---------------------------------------------------------------- columns */

/* A number CPython converts once the GIL is held: its characters, and
   which double of which column it fills. */
typedef struct {
    const uint8_t *s;
    int64_t index;
    int32_t len, column;
} Deferred;

/* What a column is read as: kinds[i] of the call. */
enum { K_SKIP = '.', K_FLOAT = 'f', K_TEXT = 's', K_FLAG = 'g', K_INT = 'i' };

typedef struct {
    Scanner sc;
    int ncols, want;       /* cells a row has (the header's), and the columns read */
    const char *kinds;     /* [ncols] */
    int64_t line;          /* the line number of the row at sc.p */
    int64_t rows;
    IouVec lines;             /* int64 per row */
    IouVec cols[MAX_CELLS];   /* per column read: float64, int64 codes or int8 */
    Strings strings[MAX_CELLS];
    IouVec deferred;
    IouVec file_of;           /* int64 per row, for several files */
    int min_cells;         /* rows of whitespace text: the last cells may be left out */
    int options;           /* TEXT_* bits, for whitespace text */
} Reader;

/* How whitespace text is read (text_files' and text_paths' options). */
enum {
    TEXT_DOTA_HEADER = 1,  /* lines whose first token is imagesource: or gsd: are read over */
    TEXT_NO_COMMENTS = 2,  /* a line whose first token starts with '#' is a row like any other */
    TEXT_MISSING_EMPTY = 4 /* text_paths: a path that is not a regular file is an empty file */
};
#define TEXT_OPTIONS 7

/* One cell into column i.  0, -1 give up, -2 no memory. */
static int put_cell(Reader *r, int i, const Cell *c) {
    IouVec *v = &r->cols[i];
    switch (r->kinds[i]) {
    case K_FLOAT: {
        double x = 0.0;
        int ok = parse_number(c->s, c->len, !r->sc.whitespace, &x);
        if (ok < 0) return -1;
        if (!ok) {
            if (c->len >= 64) return -1;
            Deferred d = {c->s, r->rows, (int32_t)c->len, (int32_t)i};
            if (iou_vec_put(&r->deferred, &d, sizeof d) < 0) return -2;
        }
        return iou_vec_put(v, &x, sizeof x) < 0 ? -2 : 0;
    }
    case K_TEXT: {
        int64_t code = strings_code(&r->strings[i], c->s, c->len);
        if (code < 0) return -2;
        return iou_vec_put(v, &code, sizeof code) < 0 ? -2 : 0;
    }
    case K_FLAG: {
        int8_t f;
        if (c->len == 0 || (c->len == 1 && c->s[0] == '0')) f = 0;
        else if (c->len == 1 && c->s[0] == '1') f = 1;
        else if (c->len == 2 && c->s[0] == '-' && c->s[1] == '1') f = -1;
        else return -1;
        return iou_vec_put(v, &f, sizeof f) < 0 ? -2 : 0;
    }
    case K_INT: { /* [+-]?[0-9]+ (left out: 0), read as whether it is not 0 */
        const uint8_t *p = c->s, *e = c->s + c->len;
        p += p < e && (*p == '+' || *p == '-');
        if (p == e && c->len) return -1;
        uint8_t f = 0;
        for (; p < e; p++) {
            if (!is_digit(*p)) return -1;
            f |= *p != '0';
        }
        return iou_vec_put(v, &f, sizeof f) < 0 ? -2 : 0;
    }
    default:
        return 0;
    }
}

/* Whether a token starts a DOTA header line: imagesource: or gsd: (any case). */
static int dota_header(const Cell *c) {
    static const char *names[] = {"imagesource:", "gsd:"};
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(names[k]);
        if (c->len < n) continue;
        size_t j = 0;
        while (j < n && (c->s[j] | 0x20) == names[k][j]) j++;
        if (j == n) return 1;
    }
    return 0;
}

/* The rows from sc.p to the end.  0, -1 give up, -2 no memory. */
static int read_rows(Reader *r, int64_t file) {
    Cell cells[MAX_CELLS];
    while (r->sc.p < r->sc.end) {
        int n = read_row(&r->sc, cells);
        int64_t line = r->line++;
        if (n < 0) return -1;
        if (blank_row(cells, n)) continue;
        if (r->sc.whitespace) {
            if ((cells[0].s[0] == '#' && !(r->options & TEXT_NO_COMMENTS)) ||
                ((r->options & TEXT_DOTA_HEADER) && dota_header(&cells[0])))
                continue;
            if (n < r->min_cells || n > r->ncols) return -1;
            for (int i = n; i < r->ncols; i++) { /* left out */
                cells[i].s = (const uint8_t *)"";
                cells[i].len = 0;
            }
        } else {
            if (n < r->ncols) return -1;
            for (int i = r->ncols; i < n; i++)
                if (cells[i].len) return -1;
        }
        for (int i = 0; i < r->ncols; i++) {
            int s = put_cell(r, i, &cells[i]);
            if (s < 0) return s;
        }
        if (iou_vec_put(&r->lines, &line, sizeof line) < 0) return -2;
        if (file >= 0 && iou_vec_put(&r->file_of, &file, sizeof file) < 0) return -2;
        r->rows++;
    }
    return 0;
}

/* The deferred numbers, converted by CPython (the GIL held).  0, or -1 (give up). */
static int convert_deferred(Reader *r) {
    const Deferred *d = (const Deferred *)r->deferred.data;
    size_t n = r->deferred.len / sizeof *d;
    for (size_t i = 0; i < n; i++) {
        char text[64];
        memcpy(text, d[i].s, (size_t)d[i].len);
        text[d[i].len] = 0;
        for (int k = 0; k < d[i].len; k++)
            if (text[k] == ',') text[k] = '.';
        double v = PyOS_string_to_double(text, NULL, NULL);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (r->sc.whitespace && !isfinite(v)) return -1; /* the Python path refuses it, located */
        ((double *)r->cols[d[i].column].data)[d[i].index] = v;
    }
    return 0;
}

static void reader_free(Reader *r) {
    free(r->lines.data);
    free(r->file_of.data);
    free(r->deferred.data);
    for (int i = 0; i < r->ncols; i++) {
        free(r->cols[i].data);
        strings_free(&r->strings[i]);
    }
}

/* The distinct texts of column i as a list of str. */
static PyObject *text_list(Reader *r, int i) {
    const Strings *t = &r->strings[i];
    const Text *x = (const Text *)t->texts.data;
    PyObject *out = PyList_New((Py_ssize_t)t->count);
    for (size_t k = 0; out && k < t->count; k++) {
        PyObject *s = PyUnicode_FromStringAndSize((const char *)x[k].s, (Py_ssize_t)x[k].len);
        if (!s) Py_CLEAR(out);
        else PyList_SET_ITEM(out, (Py_ssize_t)k, s);
    }
    return out;
}

/* (lines, file_of or None, [column per kind not skipped]): a text column is
   (codes, [str]). */
static PyObject *reader_result(Reader *r, int files) {
    PyObject *cols = PyList_New(0), *lines = NULL, *file_of = NULL;
    if (!cols) return NULL;
    for (int i = 0; i < r->ncols; i++) {
        if (r->kinds[i] == K_SKIP) continue;
        PyObject *item;
        if (r->kinds[i] == K_TEXT) {
            PyObject *codes = iou_block_of_vec(&r->cols[i]), *texts = codes ? text_list(r, i) : NULL;
            item = texts ? PyTuple_Pack(2, codes, texts) : NULL;
            Py_XDECREF(codes);
            Py_XDECREF(texts);
        } else {
            item = iou_block_of_vec(&r->cols[i]);
        }
        if (!item || PyList_Append(cols, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(cols);
            return NULL;
        }
        Py_DECREF(item);
    }
    lines = iou_block_of_vec(&r->lines);
    file_of = !lines ? NULL : files ? iou_block_of_vec(&r->file_of) : Py_NewRef(Py_None);
    PyObject *out = file_of ? PyTuple_Pack(3, lines, file_of, cols) : NULL;
    Py_XDECREF(lines);
    Py_XDECREF(file_of);
    Py_DECREF(cols);
    return out;
}

static int check_kinds(const char *kinds, Py_ssize_t n) {
    if (n < 1 || n > MAX_CELLS) {
        PyErr_SetString(PyExc_ValueError, "kinds: 1 to 256 letters");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!strchr(".fsgi", kinds[i]) || !kinds[i]) {
            PyErr_SetString(PyExc_ValueError, "kinds are '.', 'f', 's', 'g' or 'i'");
            return -1;
        }
    return 0;
}

/* ------------------------------------------------------------------ header */

/* Whether the line at p holds a byte other than spaces and tabs (a lone CR
   counts: the caller gives up on it when it reads the row). */
static int line_has_text(const uint8_t *p, const uint8_t *e) {
    for (; p < e && *p != '\n'; p++)
        if (!is_blank(*p) && !(*p == '\r' && p + 1 < e && p[1] == '\n')) return 1;
    return 0;
}

/* The delimiter the Python reader picks: the most frequent of tab, ';' and
   ',' on the first line with text (ties in that order), else ','. */
static int pick_delimiter(const uint8_t *p, const uint8_t *e) {
    while (p < e && !line_has_text(p, e)) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    int tab = 0, semi = 0, comma = 0;
    for (; p < e && *p != '\n'; p++) {
        tab += *p == '\t';
        semi += *p == ';';
        comma += *p == ',';
    }
    if (tab >= semi && tab >= comma && tab) return '\t';
    if (semi >= comma && semi) return ';';
    return ',';
}

static PyObject *py_header(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    const uint8_t *base = view.buf;
    int delimiter = pick_delimiter(base, base + view.len);
    Scanner sc;
    scanner_init(&sc, base, (size_t)view.len, delimiter);
    Cell cells[MAX_CELLS];
    int64_t line = 1;
    PyObject *out = NULL;
    while (sc.p < sc.end) {
        int n = read_row(&sc, cells);
        line++;
        if (n < 0) break;
        if (blank_row(cells, n)) continue;
        PyObject *names = PyList_New(n);
        for (int i = 0; names && i < n; i++) {
            PyObject *s = PyUnicode_FromStringAndSize((const char *)cells[i].s, (Py_ssize_t)cells[i].len);
            if (!s) Py_CLEAR(names);
            else PyList_SET_ITEM(names, i, s);
        }
        if (names)
            out = Py_BuildValue("(CNnL)", delimiter, names, (Py_ssize_t)(sc.p - base), (long long)line);
        PyBuffer_Release(&view);
        return out;
    }
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------- calls */

/* Read rows with the GIL released, convert what waited for CPython, hand
   the columns over; None where the reader gives up. */
static PyObject *run(Reader *r, int files, int (*read)(Reader *, void *), void *arg) {
    int status;
    Py_BEGIN_ALLOW_THREADS status = read(r, arg);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (status == -2) PyErr_NoMemory();
    else if (status < 0 || convert_deferred(r) < 0) result = Py_NewRef(Py_None);
    else result = reader_result(r, files);
    return result;
}

static int read_one(Reader *r, void *arg) {
    (void)arg;
    return read_rows(r, -1);
}

static PyObject *py_columns(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    const char *kinds, *delim;
    Py_ssize_t nkinds, ndelim, offset;
    long long line;
    if (!PyArg_ParseTuple(args, "y*s#nLs#", &view, &delim, &ndelim, &offset, &line, &kinds, &nkinds))
        return NULL;
    if (check_kinds(kinds, nkinds) < 0 || ndelim > 1 || offset < 0 || offset > view.len ||
        (ndelim == 1 && (delim[0] == '"' || delim[0] == '\n' || delim[0] == '\r'))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad delimiter or offset");
        PyBuffer_Release(&view);
        return NULL;
    }
    Reader *r = calloc(1, sizeof *r);
    if (!r) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    scanner_init(&r->sc, view.buf, (size_t)view.len, ndelim ? (uint8_t)delim[0] : -1);
    r->sc.p += offset;
    r->ncols = (int)nkinds;
    r->kinds = kinds;
    r->line = line;
    PyObject *out = run(r, 0, read_one, NULL);
    reader_free(r);
    free(r);
    PyBuffer_Release(&view);
    return out;
}

/* ------------------------------------------------------------ files read */

/*
 * A file read whole here, with the GIL released, as iou_eval/io/source.py
 * reads it for the Python path; the reader gives up where that path would do
 * more than read the bytes (a gzip file, a pipe, a device, a file past the
 * input limit, a file it cannot open: the Python path then reads it, or says
 * what is wrong).  Windows: every path is left to the Python path.
 */
#if defined(_WIN32)
#define READ_PATHS 0
#else
#define READ_PATHS 1
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#ifndef O_NONBLOCK
#define O_NONBLOCK 0
#endif
#endif

/* The bytes of path (from malloc, *out; NULL for none) and their count.  0;
   -1 give up; -2 no memory.  missing_empty: a path that is not a regular file
   reads as an empty file (as the Python path skips what os.path.isfile refuses). */
static int read_path(const char *path, int64_t limit, int missing_empty, uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
#if READ_PATHS
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return missing_empty ? 0 : -1;
    if ((int64_t)st.st_size > limit) return -1;
    /* O_NONBLOCK: a pipe put there since the stat must not block the open */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0; /* one byte more: the end is seen at once */
    uint8_t *buf = malloc(cap);
    int status = buf ? 0 : -2;
    while (!status) {
        if (n == cap) {
            uint8_t *grown = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!grown) {
                status = -2;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) status = -1;
        else if (got == 0) break;
        else if ((int64_t)(n += (size_t)got) > limit) status = -1; /* it grew past the limit */
    }
    close(fd);
    if (status) {
        free(buf);
        return status;
    }
    *out = buf;
    *len = n;
    return 0;
#else
    (void)path;
    (void)limit;
    (void)missing_empty;
    return -1;
#endif
}

/* The files of a call: the callers' buffers (text_files), or paths read here
   (text_paths) into owned[k], freed at the end. */
typedef struct {
    Py_buffer *views;
    PyObject *paths; /* a tuple of bytes */
    uint8_t **owned;
    Py_ssize_t n;
    int64_t limit;
} Files;

/* The text of file k, scanned from the start of the data. */
static void scanner_at(Reader *r, const uint8_t *data, size_t len) {
    scanner_init(&r->sc, data, len, -1);
    r->line = 1;
}

static int read_files(Reader *r, void *arg) {
    const Files *f = arg;
    for (Py_ssize_t k = 0; k < f->n; k++) {
        scanner_at(r, f->views[k].buf, (size_t)f->views[k].len);
        int s = read_rows(r, (int64_t)k);
        if (s < 0) return s;
    }
    return 0;
}

static int read_paths(Reader *r, void *arg) {
    const Files *f = arg;
    for (Py_ssize_t k = 0; k < f->n; k++) {
        size_t len;
        const char *path = PyBytes_AS_STRING(PyTuple_GET_ITEM(f->paths, k));
        int s = read_path(path, f->limit, r->options & TEXT_MISSING_EMPTY, &f->owned[k], &len);
        if (s < 0) return s;
        const uint8_t *data = f->owned[k];
        if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) return -1; /* gzip: the Python path */
        if (len >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf) data += 3, len -= 3;
        scanner_at(r, data ? data : (const uint8_t *)"", len);
        if ((s = read_rows(r, (int64_t)k)) < 0) return s;
    }
    return 0;
}

/* The checks text_files and text_paths share: kinds, min_cells, options. */
static int check_text_call(const char *kinds, Py_ssize_t nkinds, int min_cells, int options) {
    if (check_kinds(kinds, nkinds) < 0) return -1;
    if (min_cells < 1 || min_cells > nkinds) {
        PyErr_SetString(PyExc_ValueError, "min_cells: 1 to len(kinds)");
        return -1;
    }
    if (options < 0 || options > TEXT_OPTIONS) {
        PyErr_SetString(PyExc_ValueError, "options: a sum of 1, 2 and 4");
        return -1;
    }
    return 0;
}

static Reader *text_reader(const char *kinds, Py_ssize_t nkinds, int min_cells, int options) {
    Reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->ncols = (int)nkinds;
    r->kinds = kinds;
    r->min_cells = min_cells;
    r->options = options;
    scanner_init(&r->sc, (const uint8_t *)"", 0, -1);
    return r;
}

static PyObject *py_text_files(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *list;
    const char *kinds;
    Py_ssize_t nkinds;
    int min_cells, options;
    if (!PyArg_ParseTuple(args, "O!s#ii", &PyList_Type, &list, &kinds, &nkinds, &min_cells, &options))
        return NULL;
    if (check_text_call(kinds, nkinds, min_cells, options) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    Files f = {calloc((size_t)n + 1, sizeof(Py_buffer)), NULL, NULL, 0, 0};
    Reader *r = text_reader(kinds, nkinds, min_cells, options & ~TEXT_MISSING_EMPTY);
    PyObject *out = NULL;
    if (!f.views || !r) {
        PyErr_NoMemory();
        goto done;
    }
    for (; f.n < n; f.n++)
        if (PyObject_GetBuffer(PyList_GET_ITEM(list, f.n), &f.views[f.n], PyBUF_SIMPLE) < 0) goto done;
    out = run(r, 1, read_files, &f);
done:
    if (r) reader_free(r);
    free(r);
    for (Py_ssize_t k = 0; k < f.n; k++) PyBuffer_Release(&f.views[k]);
    free(f.views);
    return out;
}

/* The paths as a tuple of bytes without a NUL inside, or NULL with an error set. */
static PyObject *path_tuple(PyObject *list) {
    PyObject *paths = PySequence_Tuple(list);
    for (Py_ssize_t k = 0; paths && k < PyTuple_GET_SIZE(paths); k++) {
        PyObject *p = PyTuple_GET_ITEM(paths, k);
        if (!PyBytes_Check(p)) {
            PyErr_Format(PyExc_TypeError, "paths[%zd]: expected bytes (os.fsencode), got %.80s", k,
                         Py_TYPE(p)->tp_name);
            Py_CLEAR(paths);
        } else if (strlen(PyBytes_AS_STRING(p)) != (size_t)PyBytes_GET_SIZE(p)) {
            PyErr_Format(PyExc_ValueError, "paths[%zd]: a NUL byte inside", k);
            Py_CLEAR(paths);
        }
    }
    return paths;
}

static PyObject *py_text_paths(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *list;
    const char *kinds;
    Py_ssize_t nkinds;
    int min_cells, options;
    long long limit;
    if (!PyArg_ParseTuple(args, "O!s#iiL", &PyList_Type, &list, &kinds, &nkinds, &min_cells, &options,
                          &limit))
        return NULL;
    if (check_text_call(kinds, nkinds, min_cells, options) < 0) return NULL;
    if (limit < 1) {
        PyErr_SetString(PyExc_ValueError, "limit: a positive number of bytes");
        return NULL;
    }
    Files f = {NULL, path_tuple(list), NULL, 0, (int64_t)limit};
    if (!f.paths) return NULL;
    f.n = PyTuple_GET_SIZE(f.paths);
    f.owned = calloc((size_t)f.n + 1, sizeof *f.owned);
    Reader *r = text_reader(kinds, nkinds, min_cells, options);
    PyObject *out = f.owned && r ? run(r, 1, read_paths, &f) : PyErr_NoMemory();
    if (r) reader_free(r);
    free(r);
    for (Py_ssize_t k = 0; f.owned && k < f.n; k++) free(f.owned[k]);
    free(f.owned);
    Py_DECREF(f.paths);
    return out;
}

static PyMethodDef methods[] = {
    {"text_files", py_text_files, METH_VARARGS,
     "text_files([data], kinds, min_cells, options) -> None or (lines, file_of, [column]): "
     "whitespace-separated rows of several files (lines whose first token starts with '#' "
     "read over unless options has 2; with 1 also those whose first token is imagesource: "
     "or gsd:); a row has min_cells to len(kinds) cells ('i': an integer, read as uint8 "
     "whether it is not 0, 0 when left out; a text left out is ''); numbers must be finite; "
     "file_of int64 the file's index."},
    {"text_paths", py_text_paths, METH_VARARGS,
     "text_paths([path bytes], kinds, min_cells, options, limit) -> None or (lines, file_of, "
     "[column]): text_files on files opened and read here with the GIL released (a UTF-8 "
     "byte-order mark dropped); None for a gzip file, a file that is not a regular one, "
     "cannot be read or holds more than limit bytes (with options 4 a path that is not a "
     "regular file is an empty file), as for anything text_files gives up on."},
    {"header", py_header, METH_VARARGS,
     "header(data) -> None or (delimiter, [cell], offset, line): a CSV's first row that is "
     "not blank, its cells stripped, the byte offset and line number of the row after it."},
    {"columns", py_columns, METH_VARARGS,
     "columns(data, delimiter, offset, line, kinds) -> None or (lines, None, [column]): the "
     "rows from data[offset:] (line: the line number there); delimiter '' splits on spaces "
     "and tabs.  kinds: a letter per cell of a row ('.' skipped, 'f' float64, 's' a text: "
     "(int64 codes, [distinct str]), 'g' a flag 1/0/-1/empty as int8); lines int64."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_csvscan", "CSV and text tables read into columns.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__csvscan(void) {
    if (iou_block_ready() < 0) return NULL;
    return PyModule_Create(&module);
}
