/*
 * Compressed RLE masks (pycocotools' format) read and compared in C.
 *
 * Optional: built when a C compiler is at hand; iou_eval.rle and
 * iou_eval.masks fall back to numpy and pycocotools when it is not.  Both
 * paths give the same bytes and numbers (tests/unit/test_rle_kernel.py).
 * Written from pycocotools' documented behaviour (maskApi), which the tests
 * pin, quirks included.
 *
 * A mask of an h x w image is numbered column by column and stored as run
 * lengths, background first.  pycocotools writes the counts as a string:
 * each count a little-endian run of 6-bit characters (chr(48 + c)), 5 bits
 * of value each, 0x20 = another character follows, 0x10 in the last one =
 * negative; from the fourth count on a count is stored as the difference to
 * the count two places before.
 *
 * check():  reads every string once, refuses those that are not a mask of
 *           their size, and gives each one's area and a box holding its pixels.
 * pair_ious(): the overlaps of listed pairs of masks, group by group, the
 *           numbers pycocotools.mask.iou gives: its 32-bit unsigned counts,
 *           its box test before the pixel count, -1 for masks of different
 *           sizes.
 * group_pairs(): the same-group pairs of a run of predictions whose bound
 *           and overlap reach a floor, found and computed in one pass.
 * bboxes(): pycocotools.mask.toBbox.
 * polygons(): polygons rasterised by pycocotools' frPoly rule, its strings.
 * flatten(): the numbers of JSON-decoded polygons into one array.
 * boundaries(): each mask less its erosion (Boundary IoU's boundaries), as strings.
 *
 * The buffers are numpy arrays the Python side made contiguous and of the
 * right type; their lengths are checked here, and every index into them.
 * The loops run without the GIL.
 */
#include "../_common.h"
#include <math.h>

/* A count of more than six characters would shift past pycocotools' 32-bit int. */
#define MAX_CHARS 6

typedef IouArr Buf;

/* Acquire a C-contiguous array of `kind` (iou_acquire: format and item size
   checked); its item count in *n. */
static int acquire(PyObject *obj, Buf *b, int kind, int writable, const char *name,
                   Py_ssize_t *n) {
    if (iou_acquire(obj, b, kind, writable, -1, name) < 0) return -1;
    *n = b->n;
    return 0;
}

#define release iou_release
#define GROW IOU_GROW

/* ------------------------------------------------------------------ check */

/*
 * A string's stored numbers are read one character at a time: 5 bits of
 * value each, least significant first; a character without the 0x20 bit
 * ends a number, and its 0x10 bit is the number's sign (every bit above
 * it set).  NUMBER_STEP adds character `ch_` (already less 48) to the
 * number being read (val, shift); where it ends the number, `number` is
 * set to its value and val, shift start again.  A character outside
 * '0'..'o' or a number of more than six characters: `bad`.
 */
#define NUMBER_STEP(ch_, val, shift, ends, number, bad)                               \
    do {                                                                              \
        if ((ch_) > 63u || (shift) > 5 * (MAX_CHARS - 1)) {                           \
            bad;                                                                      \
        }                                                                             \
        (val) |= (int64_t)((ch_) & 0x1f) << (shift);                                  \
        (ends) = !((ch_) & 0x20);                                                     \
        if (ends) {                                                                   \
            /* the sign bit (shift + 4) copied upwards */                             \
            (number) = (int64_t)((uint64_t)(val) << (59 - (shift))) >> (59 - (shift)); \
            (val) = 0;                                                                \
            (shift) = 0;                                                              \
        } else {                                                                      \
            (shift) += 5;                                                             \
        }                                                                             \
    } while (0)

/*
 * The next stored number of s[0:len] from *p (< len), as NUMBER_STEP reads
 * it: 1 with its value in *x and *p past it; 0 for a character outside
 * '0'..'o', a number of more than six characters or a string that ends
 * inside one.  A number of one character (most of them: a count's change
 * from two places before is mostly small) takes the short path.
 */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int next_number(const uint8_t *s, int64_t len, int64_t *p, int64_t *x) {
    int64_t q = *p;
    unsigned ch = (unsigned)s[q] - 48u;
    if (ch > 63u) return 0;
    if (!(ch & 0x20)) {
        *x = (int64_t)((uint64_t)ch << 59) >> 59; /* 5 bits, 0x10 the sign */
        *p = q + 1;
        return 1;
    }
    int64_t val = ch & 0x1f;
    for (int shift = 5;; shift += 5) {
        if (++q >= len || shift > 5 * (MAX_CHARS - 1)) return 0;
        ch = (unsigned)s[q] - 48u;
        if (ch > 63u) return 0;
        val |= (int64_t)(ch & 0x1f) << shift;
        if (!(ch & 0x20)) {
            /* the sign bit (shift + 4) copied upwards */
            *x = (int64_t)((uint64_t)val << (59 - shift)) >> (59 - shift);
            *p = q + 1;
            return 1;
        }
    }
}

/*
 * Whether string s[0:len] is a mask of h*w pixels; its area and inclusive
 * box x0, y0, x1, y1 of foreground pixels (x1 < x0 when it has none).
 * Counts are read exactly (64-bit), before any 32-bit truncation, in the
 * same pass as the characters.
 */
static int check_one(const uint8_t *s, int64_t len, int64_t h, int64_t w, int64_t *area,
                     int64_t *box) {
    int64_t pos = 0, fg = 0, hw = h * w;
    /* pos as column and row: runs move it forward, mostly within a column or
       into the next, so a division is rarely needed. */
    int64_t col = 0, row = 0;
    /* The box's rows start empty (min and max need no first-run case). */
    int64_t x0 = 0, y0 = INT64_MAX, x1 = -1, y1 = INT64_MIN;
    int any = 0;
    int64_t j = 0, back2 = 0, back1 = 0; /* the counts two and one before */
    for (int64_t p = 0; p < len;) {
        int64_t x = 0;
        if (!next_number(s, len, &p, &x)) return 0;
        /* From the fourth count on, a number is the difference to the count two before. */
        int64_t c = j > 2 ? x + back2 : x;
        back2 = back1;
        back1 = c;
        if (c < 0 || c > hw - pos) return 0; /* negative, or past the image */
        int64_t ncol = col, nrow = row + c;
        if (nrow >= h) {
            if (nrow < 2 * h) {
                ncol += 1;
                nrow -= h;
            } else {
                int64_t q = nrow / h;
                ncol += q;
                nrow -= q * h;
            }
        }
        if ((j & 1) && c > 0) {
            /* First pixel (col, row); the last one just before (ncol, nrow). */
            int64_t lc = nrow > 0 ? ncol : ncol - 1, lr = nrow > 0 ? nrow - 1 : h - 1;
            int64_t cy0 = row, cy1 = lr;
            if (lc > col) {
                cy0 = 0;
                cy1 = h - 1;
            }
            x0 = any ? x0 : col;
            any = 1;
            if (cy0 < y0) y0 = cy0;
            if (cy1 > y1) y1 = cy1;
            x1 = lc;
            fg += c;
        }
        pos += c;
        col = ncol;
        row = nrow;
        j++;
    }
    if (pos != hw) return 0; /* short of the image */
    if (!any) y0 = 0, y1 = -1; /* no pixel: x1 < x0 */
    *area = fg;
    box[0] = x0;
    box[1] = y0;
    box[2] = x1;
    box[3] = y1;
    return 1;
}

static PyObject *py_check(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_buf, *o_off, *o_h, *o_w, *o_area, *o_box;
    if (!PyArg_ParseTuple(args, "OOOOOO", &o_buf, &o_off, &o_h, &o_w, &o_area, &o_box))
        return NULL;
    Buf b[6];
    memset(b, 0, sizeof b);
    Py_ssize_t nb, noff, nh, nw, na, nx;
    long long bad = -1;
    if (acquire(o_buf, &b[0], IOU_BYTES, 0, "buf", &nb) < 0 ||
        acquire(o_off, &b[1], IOU_I64, 0, "str_off", &noff) < 0 ||
        acquire(o_h, &b[2], IOU_I64, 0, "height", &nh) < 0 ||
        acquire(o_w, &b[3], IOU_I64, 0, "width", &nw) < 0 ||
        acquire(o_area, &b[4], IOU_I64, 1, "area", &na) < 0 ||
        acquire(o_box, &b[5], IOU_I64, 1, "box", &nx) < 0)
        goto fail;
    Py_ssize_t n = noff - 1;
    if (n < 0 || nh != n || nw != n || na != n || nx != 4 * n) {
        PyErr_SetString(PyExc_ValueError, "check: array lengths disagree");
        goto fail;
    }
    const uint8_t *buf = b[0].view.buf;
    const int64_t *off = b[1].view.buf, *hh = b[2].view.buf, *ww = b[3].view.buf;
    int64_t *area = b[4].view.buf, *box = b[5].view.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t a = off[i], e = off[i + 1];
        if (a < 0 || e < a || e > nb) {
            PyErr_SetString(PyExc_ValueError, "check: string offsets outside the buffer");
            goto fail;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t a = off[i], e = off[i + 1], h = hh[i], w = ww[i];
        /* Sizes are positive and below 2**31 (checked by the caller): h * w fits. */
        if (h <= 0 || w <= 0 || h > INT32_MAX || w > INT32_MAX ||
            !check_one(buf + a, e - a, h, w, &area[i], &box[4 * i])) {
            bad = (long long)i;
            break;
        }
    }
    Py_END_ALLOW_THREADS
    release(b, 6);
    return PyLong_FromLongLong(bad);
fail:
    release(b, 6);
    return NULL;
}

/* ------------------------------------------------------------------- ious */

/*
 * Counts of a checked string as pycocotools keeps them (32-bit unsigned);
 * how many, read in one pass over the characters.  (rleFrString adds a stored
 * number to the count two places back in a C long, then keeps 32 bits: the
 * same as adding in 32 bits.)
 */
static int64_t decode_u32(const uint8_t *s, int64_t len, uint32_t *cnts) {
    int64_t m = 0;
    for (int64_t p = 0; p < len;) {
        int64_t x = 0;
        if (!next_number(s, len, &p, &x)) return 0; /* never for a checked string */
        uint32_t c = (uint32_t)x;
        cnts[m] = m > 2 ? c + cnts[m - 2] : c;
        m++;
    }
    return m;
}

/* pycocotools' rleToBbox (2.0.8 on): x, y, w, h from 32-bit unsigned arithmetic. */
static void to_bbox(const uint32_t *c, int64_t m, uint32_t h, uint32_t w, double *bb) {
    m = (m / 2) * 2;
    if (m == 0 || h == 0) {
        bb[0] = bb[1] = bb[2] = bb[3] = 0;
        return;
    }
    uint32_t xs = w, ys = h, xe = 0, ye = 0, cc = 0;
    for (int64_t j = 0; j < m; j++) {
        uint32_t start = cc;
        cc += c[j];
        if (!(j & 1) || c[j] == 0) continue;
        uint32_t ya = start % h, xa = (start - ya) / h;
        uint32_t yb = (cc - 1) % h, xb = (cc - 1 - yb) / h;
        if (xa < xs) xs = xa;
        if (xb > xe) xe = xb;
        if (xa < xb) {
            ys = 0;
            ye = h - 1;
        } else {
            if (ya < ys) ys = ya;
            if (yb > ye) ye = yb;
        }
    }
    bb[0] = xs;
    bb[1] = ys;
    bb[2] = (uint32_t)(xe - xs + 1);
    bb[3] = (uint32_t)(ye - ys + 1);
}

/* pycocotools' rleArea: the counts at odd places, summed in 32 bits. */
static uint32_t area_u32(const uint32_t *c, int64_t m) {
    uint32_t a = 0;
    for (int64_t j = 1; j < m; j += 2) a += c[j];
    return a;
}

/*
 * Intersection and union pixel counts of two masks of one size, walked run
 * against run in 32-bit unsigned arithmetic (pycocotools' counts).  Like
 * pycocotools, the walk ends when both current runs are used up and no
 * longer run follows either.
 */
static double pair_iou(const uint32_t *a, int64_t ka, const uint32_t *b, int64_t kb, int crowd,
                       uint32_t a_area) {
    uint32_t ca = a[0], cb = b[0], i = 0, u = 0, rest = 1;
    int64_t ia = 1, ib = 1;
    int va = 0, vb = 0;
    while (rest > 0) {
        uint32_t c = ca < cb ? ca : cb;
        if (va || vb) {
            u += c;
            if (va && vb) i += c;
        }
        ca -= c;
        if (!ca && ia < ka) {
            ca = a[ia++];
            va = !va;
        }
        cb -= c;
        if (!cb && ib < kb) {
            cb = b[ib++];
            vb = !vb;
        }
        rest = ca + cb;
    }
    if (i == 0)
        u = 1;
    else if (crowd)
        u = a_area;
    return (double)i / (double)u;
}

typedef struct {
    const uint8_t *buf;
    Py_ssize_t nbuf;
    const int64_t *start, *len, *h, *w;
    Py_ssize_t n;
} Side;

/*
 * Decoded masks of one side of a group.  Besides pycocotools' counts, each
 * mask keeps its foreground runs as [start, end) pixel intervals: two masks
 * of one size then meet in a walk over their foreground runs alone, and the
 * union is a + b - i.  That equals pycocotools' run-by-run walk whenever
 * the walk cannot stop early or wrap: masks under 2**32 pixels without an
 * empty run after the first count ("plain").  Others take the walk itself.
 */
typedef struct {
    uint32_t *cnts;
    int64_t cap;
    int64_t *fg; /* [2 * runs] start, end of each foreground run */
    int64_t fg_cap;
    int64_t *off;    /* [k + 1] into cnts */
    int64_t *fg_off; /* [k + 1] into fg (in runs) */
    double *bb;      /* [4k] */
    uint32_t *area;
    int64_t *h, *w;
    uint8_t *plain;
    int64_t kcap;
} Decoded;

static int reserve(Decoded *d, int64_t k, int64_t chars) {
    int ok = 1;
    if (k > d->kcap) {
        int64_t kc = k > 2 * d->kcap ? k : 2 * d->kcap;
        GROW(d->off, int64_t, kc + 1, ok);
        GROW(d->fg_off, int64_t, kc + 1, ok);
        GROW(d->bb, double, 4 * kc, ok);
        GROW(d->area, uint32_t, kc, ok);
        GROW(d->h, int64_t, kc, ok);
        GROW(d->w, int64_t, kc, ok);
        GROW(d->plain, uint8_t, kc, ok);
        if (!ok) return -1;
        d->kcap = kc;
    }
    if (chars > d->cap) {
        int64_t cc = chars > 2 * d->cap ? chars : 2 * d->cap;
        GROW(d->cnts, uint32_t, cc, ok);
        if (!ok) return -1;
        d->cap = cc;
    }
    /* At most one foreground run per two counts, and a count per character. */
    if (chars > d->fg_cap) {
        int64_t fc = chars > 2 * d->fg_cap ? chars : 2 * d->fg_cap;
        GROW(d->fg, int64_t, fc + 2, ok);
        if (!ok) return -1;
        d->fg_cap = fc;
    }
    return 0;
}

static void free_decoded(Decoded *d) {
    free(d->cnts);
    free(d->fg);
    free(d->off);
    free(d->fg_off);
    free(d->bb);
    free(d->area);
    free(d->h);
    free(d->w);
    free(d->plain);
}

/*
 * The box of a plain mask from its foreground runs, as rleToBbox gives it:
 * the column of each run's first and last pixel, and its rows (all of them
 * when the run crosses into another column).  Runs are walked in order, so
 * the columns only grow: a run's position is tracked, not divided for.
 */
static void plain_bbox(const int64_t *fg, int64_t runs, int64_t h, double *bb) {
    if (runs == 0) { /* a single count: no pixel */
        bb[0] = bb[1] = bb[2] = bb[3] = 0;
        return;
    }
    int64_t x0 = fg[0] / h, x1 = (fg[2 * runs - 1] - 1) / h;
    int64_t y0 = h, y1 = 0;
    /* Each run's first row, carried from the previous run's end: the
       background between two runs rarely spans a whole column. */
    int64_t row = fg[0] - x0 * h, at = fg[0];
    for (int64_t r = 0; r < runs; r++) {
        int64_t gap = fg[2 * r] - at;
        row += gap;
        if (row >= h) row = row < 2 * h ? row - h : row % h;
        int64_t len = fg[2 * r + 1] - fg[2 * r];
        int64_t end_row = row + len - 1; /* the last pixel's row, counted from col */
        if (end_row >= h) {
            y0 = 0;
            y1 = h - 1;
            break; /* a run into another column: every row */
        }
        if (row < y0) y0 = row;
        if (end_row > y1) y1 = end_row;
        row = end_row + 1;
        at = fg[2 * r + 1];
    }
    bb[0] = (double)x0;
    bb[1] = (double)y0;
    bb[2] = (double)(x1 - x0 + 1);
    bb[3] = (double)(y1 - y0 + 1);
}

/* Decode rows[0:k] of a side; -1: out of memory, -2: a row or string outside its arrays. */
static int decode_rows(const Side *s, const int64_t *rows, int64_t k, Decoded *d) {
    int64_t chars = 0;
    for (int64_t j = 0; j < k; j++) {
        int64_t r = rows[j];
        if (r < 0 || r >= s->n) return -2;
        int64_t a = s->start[r], l = s->len[r];
        if (a < 0 || l < 0 || a + l > s->nbuf) return -2;
        chars += l > 0 ? l : 1;
    }
    if (reserve(d, k, chars) < 0) return -1;
    int64_t at = 0, runs = 0;
    for (int64_t j = 0; j < k; j++) {
        int64_t r = rows[j];
        uint32_t *c = d->cnts + at;
        int64_t m = decode_u32(s->buf + s->start[r], s->len[r], c);
        if (m == 0) c[m++] = 0; /* pycocotools would read one count */
        int64_t h = s->h[r], w = s->w[r];
        d->off[j] = at;
        d->fg_off[j] = runs;
        d->h[j] = h;
        d->w[j] = w;
        d->area[j] = area_u32(c, m);
        /* Plain: no empty run after the first count, and positions that fit 32 bits. */
        /* (h and w come from the caller's arrays: their product is checked.) */
        int64_t hw = 0;
        int plain = h > 0 && w > 0 && iou_mul_fits(h, w, &hw) && hw < ((int64_t)1 << 32);
        int64_t pos = 0, first_run = runs;
        for (int64_t i = 0; i < m && plain; i++) {
            if (i > 0 && c[i] == 0) plain = 0;
            if (i & 1) {
                d->fg[2 * runs] = pos;
                d->fg[2 * runs + 1] = pos + c[i];
                runs++;
            }
            pos += c[i];
        }
        if (plain && pos != hw) plain = 0;
        d->plain[j] = (uint8_t)plain;
        /* (A plain mask of two counts or more has a foreground run: no wrapped box.) */
        if (plain)
            plain_bbox(d->fg + 2 * first_run, runs - first_run, h, d->bb + 4 * j);
        else
            to_bbox(c, m, (uint32_t)h, (uint32_t)w, d->bb + 4 * j);
        if (!d->plain[j]) runs = first_run;
        at += m;
    }
    d->off[k] = at;
    d->fg_off[k] = runs;
    return 0;
}

/* Pixels two plain masks share: their foreground intervals walked together. */
static uint32_t plain_intersection(const int64_t *a, int64_t na, const int64_t *b, int64_t nb) {
    int64_t i = 0, j = 0, inter = 0;
    while (i < na && j < nb) {
        int64_t lo = a[2 * i] > b[2 * j] ? a[2 * i] : b[2 * j];
        int64_t hi = a[2 * i + 1] < b[2 * j + 1] ? a[2 * i + 1] : b[2 * j + 1];
        if (hi > lo) inter += hi - lo;
        if (a[2 * i + 1] < b[2 * j + 1])
            i++;
        else
            j++;
    }
    return (uint32_t)inter;
}

/* Overlap of mask d of dt with mask g of gt, as pycocotools.mask.iou gives it. */
static double overlap(const Decoded *dt, int64_t d, const Decoded *gt, int64_t g, int is_crowd) {
    const double *D = dt->bb + 4 * d, *G = gt->bb + 4 * g;
    double bw = fmin(D[2] + D[0], G[2] + G[0]) - fmax(D[0], G[0]);
    if (bw <= 0) return 0;
    double bh = fmin(D[3] + D[1], G[3] + G[1]) - fmax(D[1], G[1]);
    if (bh <= 0) return 0;
    double bi = bw * bh, da = D[2] * D[3], ga = G[2] * G[3];
    double bu = is_crowd ? da : da + ga - bi;
    if (!(bi / bu > 0)) return 0;
    if (dt->h[d] != gt->h[g] || dt->w[d] != gt->w[g]) return -1;
    if (dt->plain[d] && gt->plain[g]) {
        uint32_t i = plain_intersection(dt->fg + 2 * dt->fg_off[d], dt->fg_off[d + 1] - dt->fg_off[d],
                                        gt->fg + 2 * gt->fg_off[g], gt->fg_off[g + 1] - gt->fg_off[g]);
        if (i == 0) return 0;
        uint32_t u = is_crowd ? dt->area[d] : dt->area[d] + gt->area[g] - i;
        return (double)i / (double)u;
    }
    const uint32_t *a = dt->cnts + dt->off[d], *b = gt->cnts + gt->off[g];
    return pair_iou(a, dt->off[d + 1] - dt->off[d], b, gt->off[g + 1] - gt->off[g], is_crowd,
                    dt->area[d]);
}

/* The Python error for a decoding status: -1 out of memory, -2 a row outside its arrays. */
static int status_error(int status, const char *what) {
    if (status == -1) {
        PyErr_NoMemory();
        return -1;
    }
    if (status == -2) {
        PyErr_Format(PyExc_IndexError, "%s: a row or string outside its arrays", what);
        return -1;
    }
    return 0;
}

static int side_of(PyObject *const *objs, Buf *b, Side *s, const char *name) {
    Py_ssize_t n_start, n_len, n_h, n_w;
    if (acquire(objs[0], &b[0], IOU_BYTES, 0, name, &s->nbuf) < 0 ||
        acquire(objs[1], &b[1], IOU_I64, 0, name, &n_start) < 0 ||
        acquire(objs[2], &b[2], IOU_I64, 0, name, &n_len) < 0 ||
        acquire(objs[3], &b[3], IOU_I64, 0, name, &n_h) < 0 ||
        acquire(objs[4], &b[4], IOU_I64, 0, name, &n_w) < 0)
        return -1;
    if (n_len != n_start || n_h != n_start || n_w != n_start) {
        PyErr_Format(PyExc_ValueError, "%s: arrays of different lengths", name);
        return -1;
    }
    s->buf = b[0].view.buf;
    s->start = b[1].view.buf;
    s->len = b[2].view.buf;
    s->h = b[3].view.buf;
    s->w = b[4].view.buf;
    s->n = n_start;
    return 0;
}

/*
 * pair_ious(dt..., gt..., crowd, d_rows, d_starts, g_rows, g_starts, p_starts, p_d, p_g, out):
 * block k decodes dt rows d_rows[d_starts[k]:d_starts[k + 1]] and gt rows
 * g_rows[g_starts[k]:...] once, then computes its pairs p_starts[k] <= p <
 * p_starts[k + 1]: out[p] = overlap of its p_d[p]-th dt row and p_g[p]-th gt row.
 */
static PyObject *py_pair_ious(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[19];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14],
                          &o[15], &o[16], &o[17], &o[18]))
        return NULL;
    Buf b[19];
    memset(b, 0, sizeof b);
    Side dt, gt;
    Py_ssize_t n_crowd, n_dr, n_ds, n_gr, n_gs, n_ps, n_pd, n_pg, n_out;
    Decoded dd, gd;
    memset(&dd, 0, sizeof dd);
    memset(&gd, 0, sizeof gd);
    int status = 0;
    if (side_of(o, b, &dt, "dt") < 0 || side_of(o + 5, b + 5, &gt, "gt") < 0 ||
        acquire(o[10], &b[10], IOU_BYTES, 0, "crowd", &n_crowd) < 0 ||
        acquire(o[11], &b[11], IOU_I64, 0, "d_rows", &n_dr) < 0 ||
        acquire(o[12], &b[12], IOU_I64, 0, "d_starts", &n_ds) < 0 ||
        acquire(o[13], &b[13], IOU_I64, 0, "g_rows", &n_gr) < 0 ||
        acquire(o[14], &b[14], IOU_I64, 0, "g_starts", &n_gs) < 0 ||
        acquire(o[15], &b[15], IOU_I64, 0, "p_starts", &n_ps) < 0 ||
        acquire(o[16], &b[16], IOU_I64, 0, "p_d", &n_pd) < 0 ||
        acquire(o[17], &b[17], IOU_I64, 0, "p_g", &n_pg) < 0 ||
        acquire(o[18], &b[18], IOU_F64, 1, "out", &n_out) < 0)
        goto fail;
    if (n_crowd != gt.n || n_ds != n_gs || n_ps != n_ds || n_ds < 1 || n_pd != n_pg ||
        n_out != n_pd) {
        PyErr_SetString(PyExc_ValueError, "pair_ious: array lengths disagree");
        goto fail;
    }
    const uint8_t *crowd = b[10].view.buf;
    const int64_t *d_rows = b[11].view.buf, *d_starts = b[12].view.buf;
    const int64_t *g_rows = b[13].view.buf, *g_starts = b[14].view.buf;
    const int64_t *p_starts = b[15].view.buf, *p_d = b[16].view.buf, *p_g = b[17].view.buf;
    double *out = b[18].view.buf;
    Py_ssize_t groups = n_ds - 1;
    for (Py_ssize_t k = 0; k < groups; k++) {
        int64_t nd = d_starts[k + 1] - d_starts[k], ng = g_starts[k + 1] - g_starts[k];
        if (d_starts[k] < 0 || nd < 0 || d_starts[k + 1] > n_dr || g_starts[k] < 0 || ng < 0 ||
            g_starts[k + 1] > n_gr || p_starts[k] < 0 || p_starts[k + 1] < p_starts[k] ||
            p_starts[k + 1] > n_out) {
            PyErr_SetString(PyExc_ValueError, "pair_ious: block bounds outside the arrays");
            goto fail;
        }
        for (int64_t p = p_starts[k]; p < p_starts[k + 1]; p++)
            if (p_d[p] < 0 || p_d[p] >= nd || p_g[p] < 0 || p_g[p] >= ng) {
                PyErr_SetString(PyExc_IndexError, "pair_ious: a pair outside its block");
                goto fail;
            }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < groups && status == 0; k++) {
        if (p_starts[k + 1] == p_starts[k]) continue;
        int64_t nd = d_starts[k + 1] - d_starts[k], ng = g_starts[k + 1] - g_starts[k];
        const int64_t *gr = g_rows + g_starts[k];
        status = decode_rows(&dt, d_rows + d_starts[k], nd, &dd);
        if (status == 0) status = decode_rows(&gt, gr, ng, &gd);
        if (status != 0) break;
        for (int64_t p = p_starts[k]; p < p_starts[k + 1]; p++)
            out[p] = overlap(&dd, p_d[p], &gd, p_g[p], crowd[gr[p_g[p]]] != 0);
    }
    Py_END_ALLOW_THREADS
    free_decoded(&dd);
    free_decoded(&gd);
    if (status_error(status, "pair_ious") < 0) goto fail;
    release(b, 19);
    Py_RETURN_NONE;
fail:
    release(b, 19);
    return NULL;
}

/* ------------------------------------------------------------ group pairs */

/*
 * The same-group pairs of a run of predictions, filtered and computed in one
 * pass (what iou_eval.geometry.masks.MaskGeometry.pairs does with numpy and
 * pair_ious):
 *
 *   for each position p (in order) and each ground truth q of its group
 *   (in the group's order): the bound of iou_eval.geometry.masks.overlap_bounds
 *   (the smaller area or the meeting area of the two boxes, over the union
 *   that leaves), with the same float64 operations; a pair whose bound is
 *   under `floor` (when floor > 0) is skipped, the others get pycocotools'
 *   mask overlap (overlap() above), kept when it reaches `floor`.
 *
 * Positions of one group are taken together: the pairs that pass the bound
 * are listed first, then the strings they need are decoded once each.
 */
typedef struct {
    int64_t *pd, *pq;        /* the listed pairs: position in the run, gt in the group */
    int64_t npairs, pcap;
    int64_t *dmap, *gmap;    /* run position / group gt -> decoded index (-1: none) */
    int64_t *drows, *grows;  /* the rows to decode */
    int64_t mcap, gcap;
} GroupScratch;

static void free_group_scratch(GroupScratch *s) {
    free(s->pd);
    free(s->pq);
    free(s->dmap);
    free(s->gmap);
    free(s->drows);
    free(s->grows);
}

typedef struct {
    const int64_t *box; /* [4n] x0, y0, x1, y1 inclusive */
    const double *area;
} BoxSide;

/* overlap_bounds of dt row d and gt row g (numpy's operations, in its order). */
static inline double pair_bound(const BoxSide *D, int64_t d, const BoxSide *G, int64_t g,
                                int crowd) {
    const int64_t *bd = D->box + 4 * d, *bg = G->box + 4 * g;
    int64_t width = (bd[2] < bg[2] ? bd[2] : bg[2]) - (bd[0] > bg[0] ? bd[0] : bg[0]);
    int64_t height = (bd[3] < bg[3] ? bd[3] : bg[3]) - (bd[1] > bg[1] ? bd[1] : bg[1]);
    int64_t mw = width + 1 > 0 ? width + 1 : 0, mh = height + 1 > 0 ? height + 1 : 0;
    double meet = (double)(mw * mh);
    double a_dt = D->area[d], a_gt = G->area[g];
    double small = a_gt < a_dt ? a_gt : a_dt; /* np.minimum: either when equal */
    double inter = meet < small ? meet : small;
    double uni = crowd ? a_dt : a_dt + a_gt - inter;
    return uni > 0 ? inter / uni : 0.0;
}

/* Room for `k` run positions and `g` group ground truths in the maps. */
static int group_room(GroupScratch *s, int64_t k, int64_t g) {
    int ok = 1;
    if (k > s->mcap) {
        int64_t c = k > 2 * s->mcap ? k : 2 * s->mcap;
        GROW(s->dmap, int64_t, c, ok);
        GROW(s->drows, int64_t, c, ok);
        if (!ok) return -1;
        s->mcap = c;
    }
    if (g > s->gcap) {
        int64_t c = g > 2 * s->gcap ? g : 2 * s->gcap;
        GROW(s->gmap, int64_t, c, ok);
        GROW(s->grows, int64_t, c, ok);
        if (!ok) return -1;
        s->gcap = c;
    }
    return 0;
}

static int push_pair(GroupScratch *s, int64_t p, int64_t q) {
    if (s->npairs == s->pcap) {
        int ok = 1;
        int64_t c = s->pcap ? 2 * s->pcap : 1024;
        GROW(s->pd, int64_t, c, ok);
        GROW(s->pq, int64_t, c, ok);
        if (!ok) return -1;
        s->pcap = c;
    }
    s->pd[s->npairs] = p;
    s->pq[s->npairs] = q;
    s->npairs++;
    return 0;
}

typedef struct {
    Side dt, gt;
    BoxSide dbox, gbox;
    const uint8_t *crowd;
    IouArr *groups, *rows, *gsorted, *gstarts;
    double floor;
} GroupJob;

/* Positions a..b - 1, all of one group: their pairs appended to the outputs.
   0, or -1 out of memory, -2 a string outside its buffer. */
static int one_group(const GroupJob *J, int64_t a, int64_t b, int64_t grp, GroupScratch *s,
                     Decoded *dd, Decoded *gd, IouVec *o_pos, IouVec *o_gt, IouVec *o_iou) {
    int64_t gs = iou_idx(J->gstarts, grp), ng = iou_idx(J->gstarts, grp + 1) - gs;
    if (ng <= 0) return 0;
    if (group_room(s, b - a, ng) < 0) return -1;
    s->npairs = 0;
    int64_t kd = 0, kg = 0;
    for (int64_t q = 0; q < ng; q++) s->gmap[q] = -1;
    for (int64_t p = a; p < b; p++) {
        int64_t d = iou_idx(J->rows, p);
        s->dmap[p - a] = -1;
        for (int64_t q = 0; q < ng; q++) {
            int64_t g = iou_idx(J->gsorted, gs + q);
            if (J->floor > 0 && !(pair_bound(&J->dbox, d, &J->gbox, g, J->crowd[g] != 0) >= J->floor))
                continue;
            if (push_pair(s, p, q) < 0) return -1;
            if (s->dmap[p - a] < 0) {
                s->dmap[p - a] = kd;
                s->drows[kd++] = d;
            }
            if (s->gmap[q] < 0) {
                s->gmap[q] = kg;
                s->grows[kg++] = g;
            }
        }
    }
    if (s->npairs == 0) return 0;
    int status = decode_rows(&J->dt, s->drows, kd, dd);
    if (status == 0) status = decode_rows(&J->gt, s->grows, kg, gd);
    if (status != 0) return status;
    for (int64_t k = 0; k < s->npairs; k++) {
        int64_t p = s->pd[k], q = s->pq[k], g = s->grows[s->gmap[q]];
        double v = overlap(dd, s->dmap[p - a], gd, s->gmap[q], J->crowd[g] != 0);
        if (!(v >= J->floor)) continue;
        if (iou_pair_put(o_pos, o_gt, o_iou, p, g, v) < 0) return -1;
    }
    return 0;
}

/*
 * group_pairs(dt_buf, dt_start, dt_len, dt_h, dt_w, gt_buf, gt_start, gt_len, gt_h, gt_w,
 *             crowd, dt_box, dt_area, gt_box, gt_area, groups, rows, gt_sorted, g_starts,
 *             floor) -> (positions, gt_rows, ious) as three blocks (int64, int64, float64).
 *
 * Position p of the run is dt row rows[p] of group groups[p]; group k's
 * ground truths are gt_sorted[g_starts[k]:g_starts[k + 1]].
 */
static PyObject *py_group_pairs(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[19];
    double floor;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOOOOOd", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14],
                          &o[15], &o[16], &o[17], &o[18], &floor))
        return NULL;
    static const IouArg spec[9] = {
        {"crowd", IOU_BYTES, 0, 1},  {"dt_box", IOU_I64, 0, 2},   {"dt_area", IOU_F64, 0, 1},
        {"gt_box", IOU_I64, 0, 2},   {"gt_area", IOU_F64, 0, 1},  {"groups", IOU_INDEX, 0, 1},
        {"rows", IOU_INDEX, 0, 1},   {"gt_sorted", IOU_INDEX, 0, 1}, {"g_starts", IOU_INDEX, 0, 1},
    };
    Buf b[19];
    memset(b, 0, sizeof b);
    GroupJob J;
    memset(&J, 0, sizeof J);
    GroupScratch s;
    memset(&s, 0, sizeof s);
    Decoded dd, gd;
    memset(&dd, 0, sizeof dd);
    memset(&gd, 0, sizeof gd);
    IouVec o_pos = {NULL, 0, 0}, o_gt = {NULL, 0, 0}, o_iou = {NULL, 0, 0};
    PyObject *result = NULL;
    int status = 0;
    if (side_of(o, b, &J.dt, "dt") < 0 || side_of(o + 5, b + 5, &J.gt, "gt") < 0 ||
        iou_acquire_all(o + 10, b + 10, spec, 9) < 0)
        goto done;
    Py_ssize_t n = b[15].n, n_groups = b[18].n - 1, n_sorted = b[17].n;
    if (b[10].n != J.gt.n || b[11].n != 4 * J.dt.n || iou_dim(&b[11], 1) != 4 ||
        b[12].n != J.dt.n || b[13].n != 4 * J.gt.n || iou_dim(&b[13], 1) != 4 ||
        b[14].n != J.gt.n || b[16].n != n || n_groups < 0) {
        PyErr_SetString(PyExc_ValueError, "group_pairs: array lengths disagree");
        goto done;
    }
    if (!iou_in_range(&b[15], n_groups) || !iou_in_range(&b[16], J.dt.n) ||
        !iou_in_range(&b[17], J.gt.n)) {
        PyErr_SetString(PyExc_IndexError, "group_pairs: a group or row outside its arrays");
        goto done;
    }
    for (Py_ssize_t k = 0; k <= n_groups; k++) {
        int64_t v = iou_idx(&b[18], k);
        if (v < 0 || v > n_sorted || (k > 0 && v < iou_idx(&b[18], k - 1))) {
            PyErr_SetString(PyExc_ValueError,
                            "group_pairs: g_starts must rise from 0 to at most len(gt_sorted)");
            goto done;
        }
    }
    if (floor != floor) {
        PyErr_SetString(PyExc_ValueError, "group_pairs: floor is NaN");
        goto done;
    }
    J.crowd = IOU_U8P(b[10]);
    J.dbox.box = IOU_I64P(b[11]);
    J.dbox.area = IOU_F64P(b[12]);
    J.gbox.box = IOU_I64P(b[13]);
    J.gbox.area = IOU_F64P(b[14]);
    J.groups = &b[15];
    J.rows = &b[16];
    J.gsorted = &b[17];
    J.gstarts = &b[18];
    J.floor = floor;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t a = 0; a < n && status == 0;) {
        int64_t grp = iou_idx(J.groups, a), e = a + 1;
        while (e < n && iou_idx(J.groups, e) == grp) e++;
        status = one_group(&J, a, e, grp, &s, &dd, &gd, &o_pos, &o_gt, &o_iou);
        a = e;
    }
    Py_END_ALLOW_THREADS
    if (status_error(status, "group_pairs") < 0) goto done;
    PyObject *p = iou_block_of_vec(&o_pos), *g = p ? iou_block_of_vec(&o_gt) : NULL;
    PyObject *v = g ? iou_block_of_vec(&o_iou) : NULL;
    if (v) result = PyTuple_Pack(3, p, g, v);
    Py_XDECREF(p);
    Py_XDECREF(g);
    Py_XDECREF(v);
done:
    free(o_pos.data);
    free(o_gt.data);
    free(o_iou.data);
    free_group_scratch(&s);
    free_decoded(&dd);
    free_decoded(&gd);
    release(b, 19);
    return result;
}

static PyObject *py_bboxes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5])) return NULL;
    Buf b[6];
    memset(b, 0, sizeof b);
    Side s;
    Py_ssize_t n_out;
    Decoded d;
    memset(&d, 0, sizeof d);
    int status = 0;
    if (side_of(o, b, &s, "masks") < 0 || acquire(o[5], &b[5], IOU_F64, 1, "out", &n_out) < 0)
        goto fail;
    if (n_out != 4 * s.n) {
        PyErr_SetString(PyExc_ValueError, "bboxes: out is not [N, 4]");
        goto fail;
    }
    double *out = b[5].view.buf;
    Py_BEGIN_ALLOW_THREADS
    /* A row at a time: one row's counts in memory. */
    for (int64_t r = 0; r < s.n && status == 0; r++) {
        status = decode_rows(&s, &r, 1, &d);
        if (status == 0)
            for (int j = 0; j < 4; j++) out[4 * r + j] = d.bb[j];
    }
    Py_END_ALLOW_THREADS
    free_decoded(&d);
    if (status_error(status, "bboxes") < 0) goto fail;
    release(b, 6);
    Py_RETURN_NONE;
fail:
    release(b, 6);
    return NULL;
}

/* --------------------------------------------------------------- polygons */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x > y ? 1 : (x < y ? -1 : 0);
}

typedef IouVec Out;

#define out_reserve iou_vec_reserve

/* pycocotools' compressed string of counts c[0:m] (rleToString's format), appended. */
static int put_string(Out *o, const uint32_t *c, int64_t m) {
    if (out_reserve(o, (size_t)m * 7 + 1) < 0) return -1;
    for (int64_t i = 0; i < m; i++) {
        int64_t x = (int64_t)c[i];
        if (i > 2) x -= (int64_t)c[i - 2];
        int more = 1;
        while (more) {
            int ch = (int)(x & 0x1f);
            x >>= 5; /* arithmetic shift: the sign stays */
            more = (ch & 0x10) ? x != -1 : x != 0;
            if (more) ch |= 0x20;
            o->data[o->len++] = (char)(ch + 48);
        }
    }
    return 0;
}

/* Scratch of the polygon walk, grown as needed and kept between polygons. */
typedef struct {
    int *vert;        /* integer vertices: x[0:k+1], y[0:k+1] */
    uint32_t *pos;    /* the crossings' positions col * h + row */
    int64_t *col;     /* their columns */
    uint32_t *sorted; /* the positions in order */
    int64_t *first;   /* per column: where its crossings start in `sorted` */
    int64_t nvert, npoints, nfirst; /* room in vert; in pos, col and sorted; in first */
} PolyScratch;

static void free_poly_scratch(PolyScratch *s) {
    free(s->vert);
    free(s->pos);
    free(s->col);
    free(s->sorted);
    free(s->first);
}

/* The walk is at 5x the image's resolution. */
#define SCALE 5

/*
 * The row of a crossing whose upper point is v (upsampled): pycocotools'
 * ceil of (v + .5) / 5 - .5 clipped to 0..h.  That is (v - 2) / 5 exactly
 * (a whole number when 5 divides v - 2, else at least 0.2 from one, far
 * beyond the rounding of a double), so its ceiling is taken in integers.
 */
static inline int crossing_row(int v, int64_t h) {
    int64_t a = (int64_t)v - 2;
    int64_t k = a >= 0 ? (a + SCALE - 1) / SCALE : -(-a / SCALE);
    return (int)(k < 0 ? 0 : (k > h ? h : k));
}

/*
 * The step from point (pu, pv) to (cu, cv) of the walk, as pycocotools
 * reads it: when the column changes and the step passes a pixel centre's x
 * inside the image, a crossing at that column.
 */
#define STEP(PU, PV, CU, CV)                                                          \
    do {                                                                              \
        int pu_ = (PU), pv_ = (PV), cu_ = (CU), cv_ = (CV);                           \
        if (cu_ != pu_) {                                                             \
            /* (c + .5) / 5 - .5 is a whole number exactly when c = 5x + 2;   \
               c - 1 wraps in a C int as in pycocotools. */                   \
            int64_t c_ = cu_ < pu_ ? cu_ : (int)((unsigned)cu_ - 1u);                 \
            if (c_ >= 2 && (c_ - 2) % 5 == 0 && (c_ - 2) / 5 <= w - 1) {              \
                c_ = (c_ - 2) / 5;                                                    \
                col[n] = c_;                                                          \
                pos[n++] = (uint32_t)(c_ * h + crossing_row(cv_ < pv_ ? cv_ : pv_, h)); \
            }                                                                         \
        }                                                                             \
    } while (0)

/*
 * The run lengths of polygon xy[0:2k] at h x w, by pycocotools' rule
 * (rleFrPoly), written into s->pos; how many, or -1 when out of memory.
 *
 * pycocotools walks the outline at 5x the resolution, one point per step
 * of each edge's longer axis (the first and last points of an edge are its
 * ends), and reads each pair of consecutive points: where the column
 * changes at a pixel centre's x (upsampled column 5c + 2), the crossing's
 * row is the upper point's, back at pixel resolution, clipped to 0..h.
 * The sorted crossings are the run boundaries.
 *
 * Here the points are not stored.  Along an edge that steps in x every
 * step changes the column, and only every fifth one is at a pixel centre:
 * those steps are visited directly (the row of a point is the same
 * expression pycocotools evaluates).  Edges that step in y visit every
 * point, as the column changes at few of them.  The crossings are sorted
 * by column, then by row within a column (the same order as their
 * positions col * h + row, as a row is at most h).
 */
static int64_t poly_counts(const double *xy, int64_t k, int64_t h, int64_t w, PolyScratch *s) {
    /* Integer vertices, the first repeated at the end. */
    int ok = 1;
    if (2 * (k + 1) > s->nvert) {
        GROW(s->vert, int, 2 * (k + 1), ok);
        if (!ok) return -1;
        s->nvert = 2 * (k + 1);
    }
    int *x = s->vert, *y = s->vert + (k + 1);
    for (int64_t j = 0; j < k; j++) x[j] = (int)(SCALE * xy[2 * j] + .5);
    for (int64_t j = 0; j < k; j++) y[j] = (int)(SCALE * xy[2 * j + 1] + .5);
    x[k] = x[0];
    y[k] = y[0];
    int64_t m = 0;
    for (int64_t j = 0; j < k; j++) {
        int64_t dx = labs((long)x[j] - x[j + 1]), dy = labs((long)y[j] - y[j + 1]);
        m += (dx > dy ? dx : dy) + 1;
    }
    /* At most one crossing per point, and the image's end. */
    if (m + 1 > s->npoints) {
        GROW(s->pos, uint32_t, m + 1, ok);
        GROW(s->col, int64_t, m + 1, ok);
        GROW(s->sorted, uint32_t, m + 1, ok);
        if (!ok) return -1;
        s->npoints = m + 1;
    }
    uint32_t *pos = s->pos;
    int64_t *col = s->col;
    int64_t n = 0;
    /* The last point of the walk so far (none before the first edge). */
    int have_prev = 0, pu = 0, pv = 0;
    for (int64_t j = 0; j < k; j++) {
        int xs = x[j], xe = x[j + 1], ys = y[j], ye = y[j + 1];
        int dx = abs(xe - xs), dy = abs(ys - ye);
        /* pycocotools walks an edge from its lower end on the longer axis,
           and in the outline's order: backwards when it had to swap them. */
        int flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
        if (flip) {
            int t = xs;
            xs = xe;
            xe = t;
            t = ys;
            ys = ye;
            ye = t;
        }
        if (dx == 0 && dy == 0) {
            /* A repeated vertex: pycocotools divides 0 by 0 and its C int of
               NaN is INT_MIN on this processor family.  The point's column
               equals its neighbours', so the row is never read. */
            if (have_prev) STEP(pu, pv, xs, INT32_MIN);
            pu = xs;
            pv = INT32_MIN;
            have_prev = 1;
            continue;
        }
        if (dx >= dy) {
            /* Point t (0..dx) is (xs + t, v(t)). */
            double sl = (double)(ye - ys) / dx;
#define V(T) ((int)(ys + sl * (T) + .5))
            int t0 = flip ? dx : 0, t1 = flip ? 0 : dx;
            if (have_prev) STEP(pu, pv, xs + t0, V(t0));
            /* The step between points t and t + 1 is at upsampled column
               xs + t (either way round): a crossing when that is 5c + 2
               with c in 0..w-1. */
            int64_t lo = 2 - (int64_t)xs, hi = 5 * w - 3 - (int64_t)xs;
            if (lo < 0) lo += ((-lo + 4) / 5) * 5;
            if (hi > dx - 1) hi = dx - 1;
            for (int64_t t = lo; t <= hi; t += 5) {
                int va = V(t), vb = V(t + 1);
                int64_t c = (xs + t - 2) / 5;
                col[n] = c;
                pos[n++] = (uint32_t)(c * h + crossing_row(va < vb ? va : vb, h));
            }
            pu = xs + t1;
            pv = V(t1);
#undef V
        } else {
            /* Point t (0..dy) is (u(t), ys + t). */
            double sl = (double)(xe - xs) / dy;
#define U(T) ((int)(xs + sl * (T) + .5))
            /* In the outline's order: from t = dy down when flipped. */
            int t0 = flip ? dy : 0, t1 = flip ? 0 : dy;
            if (have_prev) STEP(pu, pv, U(t0), ys + t0);
            /*
             * u(t) is monotone in t (a product, a sum and a truncation, each
             * monotone) and moves by at most one column a step (|sl| < 1).
             * The step between points t - 1 and t changes the column across
             * c | c + 1 (either way) where u first passes c; STEP reads a
             * crossing there when c = 5x + 2 lies in the image, at column x
             * and the row of point t - 1 (the upper one), whichever way the
             * outline walks the edge.  Those steps alone are visited: t is
             * estimated, then corrected on u itself, so the column and row
             * are those of the point-by-point walk.
             */
            int ua = U(0), ub = U(dy);
            int rising = ub > ua;
            int64_t c_lo = rising ? ua : ub, c_hi = (rising ? ub : ua) - 1;
            if (c_lo < 2) c_lo = 2;
            c_lo += ((2 - c_lo) % SCALE + SCALE) % SCALE; /* the first 5x + 2 from c_lo */
            if (c_hi > SCALE * w - 3) c_hi = SCALE * w - 3;
            for (int64_t c = c_lo; c <= c_hi; c += SCALE) {
                /* Past c: above it when u rises, at or below it when u falls. */
#define PAST(T) (rising ? U(T) > c : U(T) <= c)
                double at = ((double)c + .5 - xs) / sl; /* where x + .5 reaches c + 1 */
                int t = !(at >= 1) ? 1 : (at >= dy ? dy : (int)ceil(at));
                while (t > 1 && PAST(t - 1)) t--;
                while (!PAST(t)) t++; /* PAST(dy) holds: t stops by dy */
#undef PAST
                int64_t x = (c - 2) / SCALE;
                col[n] = x;
                pos[n++] = (uint32_t)(x * h + crossing_row(ys + t - 1, h));
            }
            pu = U(t1);
            pv = ys + t1;
#undef U
        }
        have_prev = 1;
    }
    uint32_t *a = pos;
    if ((uint64_t)h * (uint64_t)w > UINT32_MAX) {
        /* Positions past 2**32 wrap in pycocotools' unsigned ints, and it
           sorts them as they wrapped. */
        a[n++] = (uint32_t)(h * w);
        qsort(a, (size_t)n, sizeof(uint32_t), cmp_u32);
    } else if (n > 0) {
        /* By column (counting), then by row within each (insertion). */
        int64_t cmin = col[0], cmax = col[0];
        for (int64_t i = 1; i < n; i++) {
            if (col[i] < cmin) cmin = col[i];
            if (col[i] > cmax) cmax = col[i];
        }
        int64_t ncols = cmax - cmin + 1;
        if (ncols + 1 > s->nfirst) {
            GROW(s->first, int64_t, ncols + 1, ok);
            if (!ok) return -1;
            s->nfirst = ncols + 1;
        }
        int64_t *first = s->first;
        uint32_t *out = s->sorted;
        memset(first, 0, sizeof(int64_t) * (size_t)(ncols + 1));
        for (int64_t i = 0; i < n; i++) first[col[i] - cmin + 1]++;
        for (int64_t c = 0; c < ncols; c++) first[c + 1] += first[c];
        for (int64_t i = 0; i < n; i++) out[first[col[i] - cmin]++] = pos[i];
        /* first[c] is now where column c + 1 starts: each column in turn. */
        int64_t start = 0;
        for (int64_t c = 0; c < ncols; c++) {
            int64_t end = first[c];
            for (int64_t i = start + 1; i < end; i++) {
                uint32_t v = out[i];
                int64_t j = i - 1;
                while (j >= start && out[j] > v) {
                    out[j + 1] = out[j];
                    j--;
                }
                out[j + 1] = v;
            }
            start = end;
        }
        memcpy(a, out, sizeof(uint32_t) * (size_t)n);
        a[n++] = (uint32_t)(h * w);
    } else {
        a[n++] = (uint32_t)(h * w);
    }
    /* Boundaries to run lengths; a zero-length run joins the two around it. */
    uint32_t prev = 0;
    for (int64_t j = 0; j < n; j++) {
        uint32_t t = a[j];
        a[j] -= prev;
        prev = t;
    }
    int64_t out = 0, j = 0;
    a[out++] = a[j++];
    while (j < n) {
        if (a[j] > 0)
            a[out++] = a[j++];
        else {
            j++;
            if (j < n) a[out - 1] += a[j++];
        }
    }
    return out;
}
#undef STEP

/*
 * polygons(xy, part_off, h, w, lengths) -> bytes: part i is the polygon
 * xy[part_off[i]:part_off[i + 1]] (x, y pairs) at h[i] x w[i]; its
 * compressed string (pycocotools.mask.frPyObjects of the part) is the next
 * lengths[i] bytes of the result.
 */
static PyObject *py_polygons(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[5];
    if (!PyArg_ParseTuple(args, "OOOOO", &o[0], &o[1], &o[2], &o[3], &o[4])) return NULL;
    Buf b[5];
    memset(b, 0, sizeof b);
    Py_ssize_t nxy, noff, nh, nw, nl;
    Out out = {NULL, 0, 0};
    PolyScratch scratch;
    memset(&scratch, 0, sizeof scratch);
    int status = 0;
    PyObject *result = NULL;
    if (acquire(o[0], &b[0], IOU_F64, 0, "xy", &nxy) < 0 ||
        acquire(o[1], &b[1], IOU_I64, 0, "part_off", &noff) < 0 ||
        acquire(o[2], &b[2], IOU_I64, 0, "h", &nh) < 0 || acquire(o[3], &b[3], IOU_I64, 0, "w", &nw) < 0 ||
        acquire(o[4], &b[4], IOU_I64, 1, "lengths", &nl) < 0)
        goto done;
    Py_ssize_t n = noff - 1;
    if (n < 0 || nh != n || nw != n || nl != n) {
        PyErr_SetString(PyExc_ValueError, "polygons: array lengths disagree");
        goto done;
    }
    const double *xy = b[0].view.buf;
    const int64_t *off = b[1].view.buf, *hh = b[2].view.buf, *ww = b[3].view.buf;
    int64_t *lengths = b[4].view.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (off[i] < 0 || off[i + 1] < off[i] || off[i + 1] > nxy || (off[i + 1] - off[i]) % 2 ||
            hh[i] <= 0 || ww[i] <= 0 || hh[i] > INT32_MAX || ww[i] > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "polygons: a part outside the array or a bad size");
            goto done;
        }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        int64_t k = (off[i + 1] - off[i]) / 2;
        int64_t m = poly_counts(xy + off[i], k, hh[i], ww[i], &scratch);
        size_t before = out.len;
        if (m < 0 || put_string(&out, scratch.pos, m) < 0)
            status = -1;
        else
            lengths[i] = (int64_t)(out.len - before);
    }
    Py_END_ALLOW_THREADS
    if (status < 0)
        PyErr_NoMemory();
    else
        result = PyBytes_FromStringAndSize(out.data ? out.data : "", (Py_ssize_t)out.len);
done:
    free(out.data);
    free_poly_scratch(&scratch);
    release(b, 5);
    return result;
}

/*
 * flatten(parts, out) -> -1, or the index of the first part left to the
 * caller: the numbers of `parts` (a list of lists or tuples of Python
 * floats and ints, as JSON decodes polygons) into `out` (float64, exactly
 * as many as they hold), each as float() reads it.  A part of another
 * type, a number of another type (a bool, a numpy scalar, a string) or an
 * int beyond a double: that part's index, and the caller reads them.
 */
static PyObject *py_flatten(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *parts, *o_out;
    if (!PyArg_ParseTuple(args, "O!O", &PyList_Type, &parts, &o_out)) return NULL;
    Buf b;
    memset(&b, 0, sizeof b);
    Py_ssize_t n_out;
    if (acquire(o_out, &b, IOU_F64, 1, "out", &n_out) < 0) return NULL;
    double *out = b.view.buf;
    Py_ssize_t k = 0, left = -1, n = PyList_GET_SIZE(parts);
    for (Py_ssize_t i = 0; i < n && left < 0; i++) {
        PyObject *p = PyList_GET_ITEM(parts, i);
        if (!PyList_CheckExact(p) && !PyTuple_CheckExact(p)) {
            left = i;
            break;
        }
        Py_ssize_t m = PySequence_Fast_GET_SIZE(p);
        PyObject **items = PySequence_Fast_ITEMS(p);
        if (m > n_out - k) {
            release(&b, 1);
            PyErr_SetString(PyExc_ValueError, "flatten: more numbers than out holds");
            return NULL;
        }
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *v = items[j];
            if (PyFloat_CheckExact(v)) {
                out[k + j] = PyFloat_AS_DOUBLE(v);
            } else if (PyLong_CheckExact(v)) {
                double d = PyLong_AsDouble(v);
                if (d == -1.0 && PyErr_Occurred()) {
                    PyErr_Clear();
                    left = i;
                    break;
                }
                out[k + j] = d;
            } else {
                left = i;
                break;
            }
        }
        k += m;
    }
    release(&b, 1);
    if (left < 0 && k != n_out) {
        PyErr_SetString(PyExc_ValueError, "flatten: fewer numbers than out holds");
        return NULL;
    }
    return PyLong_FromSsize_t(left);
}

/* ------------------------------------------------------------- boundaries */

/*
 * The boundary of a mask as boundary-iou-api's mask_to_boundary makes it:
 * the mask less its erosion by a (2d + 1)-square, pixels outside the image
 * counting as background.  Nothing outside the mask's box can stay after
 * the erosion, so the mask is laid out inside its box only, a byte per
 * pixel, column by column as the runs go:
 *   1. down each column, a run of set pixels less d at either end stays
 *      (the erosion along the column, from the runs themselves: `core`);
 *   2. across the columns, a pixel stays when it stays in the 2d + 1
 *      columns centred on it: a count of consecutive columns per row,
 *      written back into `core` d columns behind the one read;
 *   3. the mask less `core`, its runs found with memchr, in pycocotools'
 *      counts (rleEncode: background first, the last run last).
 * Integers only: the numpy path (iou_eval.geometry.boundary) gives the same bytes.
 */
typedef struct {
    int64_t *cnts, cnt_cap;   /* the mask's counts */
    int64_t *edge, edge_cap;  /* the boundary's counts */
    int64_t *piece, piece_cap; /* column, first and end row of each run in a column */
    uint8_t *mask, *core;
    int32_t *streak;
    int64_t pix_cap, line_cap;
} EdgeScratch;

static void free_edge_scratch(EdgeScratch *e) {
    free(e->cnts);
    free(e->edge);
    free(e->piece);
    free(e->mask);
    free(e->core);
    free(e->streak);
}

/* pycocotools' compressed string of 64-bit counts c[0:m] (rleToString), appended. */
static int put_counts(Out *o, const int64_t *c, int64_t m) {
    if (out_reserve(o, (size_t)m * 13 + 1) < 0) return -1;
    for (int64_t i = 0; i < m; i++) {
        int64_t x = c[i];
        if (i > 2) x -= c[i - 2];
        int more = 1;
        while (more) {
            int ch = (int)(x & 0x1f);
            x >>= 5; /* arithmetic shift: the sign stays */
            more = (ch & 0x10) ? x != -1 : x != 0;
            if (more) ch |= 0x20;
            o->data[o->len++] = (char)(ch + 48);
        }
    }
    return 0;
}

/* Room for `more` items past `used` in a growable int64 array. */
static int room(int64_t **a, int64_t *cap, int64_t used, int64_t more) {
    if (used + more <= *cap) return 0;
    int ok = 1;
    int64_t c = *cap ? 2 * *cap : 1024;
    while (c < used + more) c *= 2;
    GROW(*a, int64_t, c, ok);
    if (!ok) return -1;
    *cap = c;
    return 0;
}

/* The exact counts of string s[0:len] into e->cnts; their number, or -3 if
   it is not a mask of hw pixels, -1 out of memory. */
static int64_t decode_exact(const uint8_t *s, int64_t len, int64_t hw, EdgeScratch *e) {
    if (room(&e->cnts, &e->cnt_cap, 0, len + 1) < 0) return -1;
    int64_t m = 0, val = 0, pos = 0;
    int shift = 0;
    for (int64_t p = 0; p < len; p++) {
        unsigned ch = (unsigned)s[p] - 48u;
        int64_t x = 0;
        int ends;
        NUMBER_STEP(ch, val, shift, ends, x, return -3);
        if (!ends) continue;
        int64_t c = m > 2 ? x + e->cnts[m - 2] : x;
        if (c < 0 || c > hw - pos) return -3;
        e->cnts[m++] = c;
        pos += c;
    }
    return shift == 0 && pos == hw ? m : -3;
}

/* The runs of the mask's counts split at the columns, runs that touch
   merged: (column, first row, end row) each; their number, or -1. */
static int64_t column_pieces(EdgeScratch *e, int64_t m, int64_t h) {
    int64_t k = 0, pos = 0;
    for (int64_t i = 0; i < m; pos += e->cnts[i], i++) {
        if (!(i & 1) || e->cnts[i] == 0) continue;
        for (int64_t p = pos, end = pos + e->cnts[i]; p < end;) {
            int64_t x = p / h, y = p - x * h;
            int64_t n = end - p < h - y ? end - p : h - y;
            if (k && e->piece[3 * k - 3] == x && e->piece[3 * k - 1] == y) {
                e->piece[3 * k - 1] = y + n; /* an empty run between: one piece */
            } else {
                if (room(&e->piece, &e->piece_cap, 3 * k, 3) < 0) return -1;
                e->piece[3 * k] = x;
                e->piece[3 * k + 1] = y;
                e->piece[3 * k + 2] = y + n;
                k++;
            }
            p += n;
        }
    }
    return k;
}

/* Steps 1 and 2: `core` over the box's cw columns of ch rows (from x0, y0). */
static void erode_box(EdgeScratch *e, int64_t k, int64_t x0, int64_t y0, int64_t cw, int64_t ch,
                      int64_t d) {
    uint8_t *core = e->core;
    memset(core, 0, (size_t)(cw * ch));
    if (cw < 2 * d + 1 || ch < 2 * d + 1) return; /* no square fits: nothing stays */
    for (int64_t j = 0; j < k; j++) {
        const int64_t *pc = e->piece + 3 * j;
        if (pc[2] - pc[1] > 2 * d)
            memset(core + (pc[0] - x0) * ch + (pc[1] - y0) + d, 1, (size_t)(pc[2] - pc[1] - 2 * d));
    }
    int32_t *streak = e->streak;
    int32_t need = (int32_t)(2 * d + 1);
    memset(streak, 0, sizeof(int32_t) * (size_t)ch);
    for (int64_t x = 0; x < cw; x++) {
        const uint8_t *col = core + x * ch;
        for (int64_t y = 0; y < ch; y++) { /* counted up to `need`: it cannot overflow */
            int32_t up = streak[y] + 1;
            streak[y] = (up < need ? up : need) * (int32_t)col[y];
        }
        /* Column x - d has been read: it takes its erosion across the columns. */
        if (x >= 2 * d) {
            uint8_t *dst = core + (x - d) * ch;
            for (int64_t y = 0; y < ch; y++) dst[y] = (uint8_t)(streak[y] >= need);
        }
    }
    memset(core, 0, (size_t)(d * ch)); /* the columns within d of the box's sides */
    memset(core + (cw - d) * ch, 0, (size_t)(d * ch));
}

/*
 * The boundary of string s[0:len], an h x w mask, eroded by d: its
 * compressed string appended to o, its area and tight box (x0, y0, x1, y1;
 * x1 < x0: no pixel).  0, or -1 out of memory, -3 not a mask of its size.
 */
static int edge_one(const uint8_t *s, int64_t len, int64_t h, int64_t w, int64_t d,
                    EdgeScratch *e, Out *o, int64_t *area, int64_t *box) {
    int64_t hw = h * w;
    int64_t m = decode_exact(s, len, hw, e);
    if (m < 0) return (int)m;
    int64_t k = column_pieces(e, m, h);
    if (k < 0) return -1;
    int64_t nc = 0;
    *area = 0;
    box[0] = box[1] = 0;
    box[2] = box[3] = -1;
    if (k == 0) { /* no pixel: no boundary */
        if (room(&e->edge, &e->edge_cap, 0, 1) < 0) return -1;
        e->edge[nc++] = hw;
        return put_counts(o, e->edge, nc);
    }
    int64_t x0 = e->piece[0], x1 = e->piece[3 * k - 3], y0 = h, y1 = 0;
    for (int64_t j = 0; j < k; j++) {
        if (e->piece[3 * j + 1] < y0) y0 = e->piece[3 * j + 1];
        if (e->piece[3 * j + 2] > y1) y1 = e->piece[3 * j + 2];
    }
    int64_t cw = x1 - x0 + 1, ch = y1 - y0, npix = cw * ch;
    if (npix > e->pix_cap) {
        int ok = 1;
        GROW(e->mask, uint8_t, npix, ok);
        GROW(e->core, uint8_t, npix, ok);
        if (!ok) return -1;
        e->pix_cap = npix;
    }
    if (ch > e->line_cap) {
        int ok = 1;
        GROW(e->streak, int32_t, ch, ok);
        if (!ok) return -1;
        e->line_cap = ch;
    }
    uint8_t *mask = e->mask;
    memset(mask, 0, (size_t)npix);
    for (int64_t j = 0; j < k; j++) {
        const int64_t *pc = e->piece + 3 * j;
        memset(mask + (pc[0] - x0) * ch + (pc[1] - y0), 1, (size_t)(pc[2] - pc[1]));
    }
    erode_box(e, k, x0, y0, cw, ch, d);
    for (int64_t i = 0; i < npix; i++) mask[i] &= (uint8_t)(e->core[i] ^ 1);
    /* Step 3: runs of the boundary, column by column; a run that reaches a
       column's last row of the image goes on at the next column's first. */
    int64_t start = -1, stop = -1, prev = 0;
    for (int64_t x = 0; x < cw; x++) {
        const uint8_t *col = mask + x * ch, *end = col + ch;
        int64_t top = (x0 + x) * h + y0;
        for (const uint8_t *p = col; p < end;) {
            const uint8_t *on = memchr(p, 1, (size_t)(end - p));
            if (!on) break;
            const uint8_t *off = memchr(on, 0, (size_t)(end - on));
            if (!off) off = end;
            int64_t a = top + (on - col), b = top + (off - col);
            if (a == stop) {
                stop = b;
            } else {
                if (start >= 0) {
                    if (room(&e->edge, &e->edge_cap, nc, 2) < 0) return -1;
                    e->edge[nc++] = start - prev;
                    e->edge[nc++] = stop - start;
                    *area += stop - start;
                    prev = stop;
                }
                start = a;
                stop = b;
            }
            p = off;
        }
    }
    if (room(&e->edge, &e->edge_cap, nc, 3) < 0) return -1;
    e->edge[nc++] = start - prev;
    e->edge[nc++] = stop - start;
    *area += stop - start;
    if (stop < hw) e->edge[nc++] = hw - stop;
    box[0] = x0;
    box[1] = y0;
    box[2] = x1;
    box[3] = y1 - 1;
    return put_counts(o, e->edge, nc);
}

/*
 * boundaries(buf, start, len, h, w, d, lengths, area, box) -> bytes: the
 * boundary of mask i (string buf[start[i]:start[i] + len[i]], h[i] x w[i],
 * eroded by d[i] >= 1) is the next lengths[i] bytes of the result; its
 * pixels in area[i], its mask's tight box in box[4i:4i + 4].
 */
static PyObject *py_boundaries(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[9];
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7], &o[8]))
        return NULL;
    Buf b[9];
    memset(b, 0, sizeof b);
    Py_ssize_t nb, n, nl, nh, nw, nd, no, na, nx;
    Out out = {NULL, 0, 0};
    EdgeScratch e;
    memset(&e, 0, sizeof e);
    int status = 0;
    PyObject *result = NULL;
    if (acquire(o[0], &b[0], IOU_BYTES, 0, "buf", &nb) < 0 ||
        acquire(o[1], &b[1], IOU_I64, 0, "start", &n) < 0 ||
        acquire(o[2], &b[2], IOU_I64, 0, "len", &nl) < 0 || acquire(o[3], &b[3], IOU_I64, 0, "h", &nh) < 0 ||
        acquire(o[4], &b[4], IOU_I64, 0, "w", &nw) < 0 || acquire(o[5], &b[5], IOU_I64, 0, "d", &nd) < 0 ||
        acquire(o[6], &b[6], IOU_I64, 1, "lengths", &no) < 0 ||
        acquire(o[7], &b[7], IOU_I64, 1, "area", &na) < 0 || acquire(o[8], &b[8], IOU_I64, 1, "box", &nx) < 0)
        goto done;
    if (nl != n || nh != n || nw != n || nd != n || no != n || na != n || nx != 4 * n) {
        PyErr_SetString(PyExc_ValueError, "boundaries: array lengths disagree");
        goto done;
    }
    const uint8_t *buf = b[0].view.buf;
    const int64_t *st = b[1].view.buf, *ln = b[2].view.buf, *hh = b[3].view.buf;
    const int64_t *ww = b[4].view.buf, *dd = b[5].view.buf;
    int64_t *lengths = b[6].view.buf, *area = b[7].view.buf, *box = b[8].view.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (st[i] < 0 || ln[i] < 0 || st[i] > nb - ln[i] || hh[i] <= 0 || ww[i] <= 0 ||
            hh[i] > INT32_MAX || ww[i] > INT32_MAX || dd[i] < 1) {
            PyErr_SetString(PyExc_ValueError, "boundaries: a string outside buf, a bad size or d");
            goto done;
        }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        size_t before = out.len;
        status = edge_one(buf + st[i], ln[i], hh[i], ww[i], dd[i], &e, &out, &area[i], box + 4 * i);
        lengths[i] = (int64_t)(out.len - before);
    }
    Py_END_ALLOW_THREADS
    if (status == -1)
        PyErr_NoMemory();
    else if (status == -3)
        PyErr_SetString(PyExc_ValueError, "boundaries: a string that is not a mask of its size");
    else
        result = PyBytes_FromStringAndSize(out.data ? out.data : "", (Py_ssize_t)out.len);
done:
    free(out.data);
    free_edge_scratch(&e);
    release(b, 9);
    return result;
}

static PyMethodDef methods[] = {
    {"boundaries", py_boundaries, METH_VARARGS,
     "boundaries(buf, start, len, h, w, d, lengths, area, box) -> bytes: each mask's boundary\n"
     "(the mask less its erosion by a (2d + 1)-square), its compressed string, area and box."},
    {"flatten", py_flatten, METH_VARARGS,
     "flatten(parts, out) -> -1, or the first part left to the caller: polygon numbers into out."},
    {"polygons", py_polygons, METH_VARARGS,
     "polygons(xy, part_off, h, w, lengths) -> bytes: pycocotools' frPoly strings, back to back."},
    {"pair_ious", py_pair_ious, METH_VARARGS,
     "pair_ious(dt_buf, dt_start, dt_len, dt_h, dt_w, gt_buf, gt_start, gt_len, gt_h, gt_w,\n"
     "          crowd, d_rows, d_starts, g_rows, g_starts, p_starts, p_d, p_g, out)\n\n"
     "out[p] = pycocotools.mask.iou of pair p's masks; block k's masks decoded once."},
    {"group_pairs", py_group_pairs, METH_VARARGS,
     "group_pairs(dt_buf, dt_start, dt_len, dt_h, dt_w, gt_buf, gt_start, gt_len, gt_h, gt_w,\n"
     "            crowd, dt_box, dt_area, gt_box, gt_area, groups, rows, gt_sorted, g_starts,\n"
     "            floor) -> (positions, gt_rows, ious): the same-group pairs whose bound and\n"
     "overlap reach floor, each group's strings decoded once (blocks: int64, int64, float64)."},
    {"bboxes", py_bboxes, METH_VARARGS,
     "bboxes(buf, start, len, h, w, out): out[N, 4] = pycocotools.mask.toBbox of each mask."},
    {"check", py_check, METH_VARARGS,
     "check(buf, str_off, height, width, area, box) -> first bad row or -1.\n\n"
     "Reads strings buf[str_off[i]:str_off[i + 1]] as masks of height[i] x width[i];\n"
     "fills area[i] and box[4i:4i + 4] (x0, y0, x1, y1 inclusive; x1 < x0: no pixel)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rlekernel",
    "Compressed RLE masks checked and compared in C (see iou_eval.rle, iou_eval.masks).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rlekernel(void) {
    if (iou_block_ready() < 0) return NULL;
    return PyModule_Create(&module);
}
