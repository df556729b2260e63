/*
 * Keypoint overlaps in C: OKS (object keypoint similarity) of same-group
 * (prediction, ground truth) pairs, as iou_eval.geometry.keypoints computes
 * it with numpy, operation for operation as pycocotools' computeOks:
 *
 *     e   = (dx ** 2 + dy ** 2) / var / (area + eps) / 2     per keypoint
 *     oks = sum(exp(-e)) / n
 *
 * over the ground truth's labelled keypoints (v > 0), in keypoint order, or,
 * for a ground truth with none labelled, over every keypoint with distances
 * to its box enlarged by its width (height) on each side (numpy's maximum:
 * a NaN wins).  The sum is numpy's pairwise sum of a contiguous array of n
 * terms (eight running sums past 8 terms, halves past 128), so the bits are
 * numpy's; exp is the C library's, which numpy's float64 exp calls where it
 * has no vector loop of its own (tests/unit/test_kpt_core.py compares whole
 * OKS matrices with the numpy path on seeded scenes).  pairs() computes no
 * exp for a pair whose terms prove its OKS below the floor (below_floor):
 * such a pair is dropped either way, and every pair kept is computed whole.
 *
 * Optional, like the other compiled parts: without it (or with
 * IOU_EVAL_NO_KERNEL=1) numpy computes the same overlaps.  Built with -O2
 * -ffp-contract=off: no fused multiply-add.  The GIL is released while the
 * overlaps are computed.
 */
#include "../_common.h"
#include <math.h>

/* numpy's maximum: a NaN argument is the result. */
static inline double np_max(double a, double b) { return (a > b || a != a) ? a : b; }

/* numpy's pairwise sum of a[0..n) (loops_utils.h: PW_BLOCKSIZE 128). */
static double pairwise_sum(const double *a, int64_t n) {
    if (n < 8) {
        double res = -0.0;
        for (int64_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        int64_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* The inputs of pairs() and pair(), see there. */
enum {
    DT_X, DT_Y, DT_COUNT, GT_X, GT_Y, GT_VISIBLE, GT_BOX, GT_AREA, GT_VAR, GT_COUNT, NCOLS
};

typedef struct {
    IouArr a[NCOLS];
    int64_t kd, kg; /* row widths of the predictions' and the ground truths' columns */
    double *terms;  /* room for one pair's terms */
} Oks;

/* Whether the terms e[0..n) prove the OKS below floor (> 0) without one exp:
   exp(-e) <= 1 / (1 + e) for e >= 0, so the OKS is at most their mean; the
   margin covers the rounding of both sides many times over.  A negative or
   NaN term proves nothing. */
static int below_floor(const double *e, int64_t n, double floor) {
    double bound = 0.0;
    for (int64_t t = 0; t < n; t++) {
        if (!(e[t] >= 0.0)) return 0;
        bound += 1.0 / (1.0 + e[t]);
    }
    return bound < floor * (double)n * (1.0 - 1e-9);
}

/* OKS of prediction row d and ground-truth row g (same count, checked); with
   floor > 0, -1.0 where the OKS is proven below it (see below_floor). */
static double oks(const Oks *o, int64_t d, int64_t g, double floor) {
    const IouArr *a = o->a;
    const double *dx = IOU_F64P(a[DT_X]) + d * o->kd, *dy = IOU_F64P(a[DT_Y]) + d * o->kd;
    const double *gx = IOU_F64P(a[GT_X]) + g * o->kg, *gy = IOU_F64P(a[GT_Y]) + g * o->kg;
    const double *var = IOU_F64P(a[GT_VAR]) + g * o->kg;
    const uint8_t *vis = IOU_U8P(a[GT_VISIBLE]) + g * o->kg;
    int64_t count = iou_idx(&a[GT_COUNT], g), n = 0;
    double scale = IOU_F64P(a[GT_AREA])[g] + 2.220446049250313e-16; /* np.spacing(1) */
    double *e = o->terms;
    for (int64_t k = 0; k < count; k++) n += vis[k] != 0;
    if (n > 0) {
        for (int64_t k = 0, t = 0; k < count; k++) {
            if (!vis[k]) continue;
            double ex = dx[k] - gx[k], ey = dy[k] - gy[k];
            e[t++] = (ex * ex + ey * ey) / var[k] / scale / 2;
        }
    } else {
        const double *b = IOU_F64P(a[GT_BOX]) + 4 * g;
        double x0 = b[0] - b[2], x1 = b[0] + b[2] * 2, y0 = b[1] - b[3], y1 = b[1] + b[3] * 2;
        for (int64_t k = 0; k < count; k++) {
            double ex = np_max(0.0, x0 - dx[k]) + np_max(0.0, dx[k] - x1);
            double ey = np_max(0.0, y0 - dy[k]) + np_max(0.0, dy[k] - y1);
            e[k] = (ex * ex + ey * ey) / var[k] / scale / 2;
        }
        n = count;
    }
    if (floor > 0.0 && n > 0 && below_floor(e, n, floor)) return -1.0;
    for (int64_t t = 0; t < n; t++) e[t] = exp(-e[t]);
    return pairwise_sum(e, n) / (double)n;
}

/* Acquire the columns, check their shapes and that every count fits its
   row; 0, or -1 with an error set. */
static int oks_acquire(Oks *o, PyObject *const *objs, const char *fn) {
    static const IouArg spec[NCOLS] = {
        {"dt_x", IOU_F64, 0, 2},       {"dt_y", IOU_F64, 0, 2},    {"dt_count", IOU_INDEX, 0, 1},
        {"gt_x", IOU_F64, 0, 2},       {"gt_y", IOU_F64, 0, 2},    {"gt_visible", IOU_BOOL, 0, 2},
        {"gt_box", IOU_F64, 0, 2},     {"gt_area", IOU_F64, 0, 1}, {"gt_var", IOU_F64, 0, 2},
        {"gt_count", IOU_INDEX, 0, 1},
    };
    if (iou_acquire_all(objs, o->a, spec, NCOLS) < 0) return -1;
    IouArr *a = o->a;
    Py_ssize_t n_dt = a[DT_COUNT].n, n_gt = a[GT_COUNT].n;
    o->kd = iou_dim(&a[DT_X], 1);
    o->kg = iou_dim(&a[GT_X], 1);
    int ok = iou_dim(&a[DT_X], 0) == n_dt && iou_dim(&a[DT_Y], 0) == n_dt &&
             iou_dim(&a[DT_Y], 1) == o->kd && iou_dim(&a[GT_AREA], 0) == n_gt;
    for (int c = GT_X; c <= GT_VAR; c++)
        if (c != GT_BOX && c != GT_AREA)
            ok = ok && iou_dim(&a[c], 0) == n_gt && iou_dim(&a[c], 1) == o->kg;
    ok = ok && iou_dim(&a[GT_BOX], 0) == n_gt && iou_dim(&a[GT_BOX], 1) == 4;
    ok = ok && iou_in_range(&a[DT_COUNT], o->kd + 1) && iou_in_range(&a[GT_COUNT], o->kg + 1);
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s: inconsistent keypoint column shapes or counts", fn);
        return -1;
    }
    o->terms = malloc(sizeof(double) * (size_t)(o->kg ? o->kg : 1));
    if (!o->terms) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void oks_release(Oks *o) {
    iou_release(o->a, NCOLS);
    free(o->terms);
}

/* ------------------------------------------------------------------ pairs */

enum { D_GROUPS, GT_SORTED, G_STARTS, DT_ROWS, NINDEX };

typedef struct {
    Oks o;
    IouArr x[NINDEX];
    double floor;
    int64_t mismatch; /* a pair whose two rows differ in count: its position, else -1 */
    IouVec pd, pg, iou;
} Job;

static int find_pairs(Job *j) {
    const IouArr *x = j->x;
    for (Py_ssize_t i = 0; i < x[D_GROUPS].n; i++) {
        int64_t grp = iou_idx(&x[D_GROUPS], i), row = iou_idx(&x[DT_ROWS], i);
        int64_t lo = iou_idx(&x[G_STARTS], grp), hi = iou_idx(&x[G_STARTS], grp + 1);
        int64_t count = iou_idx(&j->o.a[DT_COUNT], row);
        for (int64_t k = lo; k < hi; k++) {
            int64_t g = iou_idx(&x[GT_SORTED], k);
            if (iou_idx(&j->o.a[GT_COUNT], g) != count) {
                j->mismatch = i;
                return 0;
            }
            double v = oks(&j->o, row, g, j->floor);
            if (!(v >= j->floor)) continue;
            if (iou_pair_put(&j->pd, &j->pg, &j->iou, i, g, v) < 0) return -1;
        }
    }
    return 0;
}

/* Whether every index lies in its array (checked once, the GIL held). */
static int check_bounds(Job *j) {
    IouArr *x = j->x;
    Py_ssize_t n_dt = j->o.a[DT_COUNT].n, n_gt = j->o.a[GT_COUNT].n;
    Py_ssize_t n_groups = x[G_STARTS].n - 1;
    if (x[DT_ROWS].n != x[D_GROUPS].n || n_groups < 0) return -1;
    if (!iou_in_range(&x[D_GROUPS], n_groups) || !iou_in_range(&x[DT_ROWS], n_dt) ||
        !iou_in_range(&x[GT_SORTED], n_gt))
        return -1;
    int64_t last = 0;
    for (Py_ssize_t k = 0; k <= n_groups; k++) {
        int64_t s = iou_idx(&x[G_STARTS], k);
        if (s < last || s > x[GT_SORTED].n) return -1;
        last = s;
    }
    return 0;
}

static void job_free(Job *j) {
    oks_release(&j->o);
    iou_release(j->x, NINDEX);
    free(j->pd.data);
    free(j->pg.data);
    free(j->iou.data);
}

static PyObject *py_pairs(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ix[NINDEX], *cols[NCOLS];
    Job j;
    memset(&j, 0, sizeof j);
    j.mismatch = -1;
    if (!PyArg_ParseTuple(args, "OOOOdOOOOOOOOOO", &ix[D_GROUPS], &ix[GT_SORTED], &ix[G_STARTS],
                          &ix[DT_ROWS], &j.floor, &cols[DT_X], &cols[DT_Y], &cols[DT_COUNT],
                          &cols[GT_X], &cols[GT_Y], &cols[GT_VISIBLE], &cols[GT_BOX], &cols[GT_AREA],
                          &cols[GT_VAR], &cols[GT_COUNT]))
        return NULL;
    static const IouArg spec[NINDEX] = {
        {"d_groups", IOU_INDEX, 0, 1}, {"gt_sorted", IOU_INDEX, 0, 1},
        {"g_starts", IOU_INDEX, 0, 1}, {"dt_rows", IOU_INDEX, 0, 1},
    };
    PyObject *result = NULL;
    if (iou_acquire_all(ix, j.x, spec, NINDEX) < 0 || oks_acquire(&j.o, cols, "pairs") < 0)
        goto done;
    if (check_bounds(&j) < 0) {
        PyErr_SetString(PyExc_ValueError, "pairs: inconsistent shapes or an index out of range");
        goto done;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS status = find_pairs(&j);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (j.mismatch >= 0) { /* numpy's path says which rows, in the user's terms */
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = Py_BuildValue("(NNN)", iou_block_of_vec(&j.pd), iou_block_of_vec(&j.pg),
                           iou_block_of_vec(&j.iou));
done:
    job_free(&j);
    return result;
}

/* ------------------------------------------------------------------- pair */

static PyObject *py_pair(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ix[2], *cols[NCOLS];
    IouArr x[2];
    Oks o;
    memset(x, 0, sizeof x);
    memset(&o, 0, sizeof o);
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOO", &ix[0], &ix[1], &cols[DT_X], &cols[DT_Y],
                          &cols[DT_COUNT], &cols[GT_X], &cols[GT_Y], &cols[GT_VISIBLE],
                          &cols[GT_BOX], &cols[GT_AREA], &cols[GT_VAR], &cols[GT_COUNT]))
        return NULL;
    static const IouArg spec[2] = {{"dt_rows", IOU_INDEX, 0, 1}, {"gt_rows", IOU_INDEX, 0, 1}};
    PyObject *result = NULL;
    double *out = NULL;
    if (iou_acquire_all(ix, x, spec, 2) < 0 || oks_acquire(&o, cols, "pair") < 0) goto done;
    Py_ssize_t n = x[0].n;
    if (x[1].n != n || !iou_in_range(&x[0], o.a[DT_COUNT].n) ||
        !iou_in_range(&x[1], o.a[GT_COUNT].n)) {
        PyErr_SetString(PyExc_ValueError, "pair: inconsistent shapes or an index out of range");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (iou_idx(&o.a[DT_COUNT], iou_idx(&x[0], i)) != iou_idx(&o.a[GT_COUNT], iou_idx(&x[1], i))) {
            result = Py_NewRef(Py_None); /* numpy's path says which rows */
            goto done;
        }
    out = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS for (Py_ssize_t i = 0; i < n; i++) out[i] =
        oks(&o, iou_idx(&x[0], i), iou_idx(&x[1], i), 0.0);
    Py_END_ALLOW_THREADS
    result = iou_block_take((char *)out, sizeof(double) * (size_t)n);
    out = NULL;
done:
    free(out);
    oks_release(&o);
    iou_release(x, 2);
    return result;
}

/* ----------------------------------------------------------------- module */

static PyObject *py_pairwise_sum(PyObject *self, PyObject *arg) {
    (void)self;
    IouArr a;
    memset(&a, 0, sizeof a);
    if (iou_acquire(arg, &a, IOU_F64, 0, 1, "values") < 0) {
        iou_release(&a, 1);
        return NULL;
    }
    double s = pairwise_sum(IOU_F64P(a), (int64_t)a.n);
    iou_release(&a, 1);
    return PyFloat_FromDouble(s);
}

#define COLUMNS_DOC                                                                              \
    "dt_x, dt_y float64[D, Kd], dt_count int[D], gt_x, gt_y float64[G, Kg], gt_visible "         \
    "bool[G, Kg], gt_box float64[G, 4] (x, y, w, h), gt_area float64[G], gt_var float64[G, Kg] " \
    "((2 sigma) ** 2 of each row's category), gt_count int[G]"

static PyMethodDef methods[] = {
    {"pairs", py_pairs, METH_VARARGS,
     "pairs(d_groups, gt_sorted, g_starts, dt_rows, floor, " COLUMNS_DOC ") -> None or "
     "(dt_pos, gt_row, oks): the buffers of int64[P], int64[P], float64[P], the same-group "
     "pairs whose OKS reaches floor, by prediction then ground truth; None where a pair's "
     "rows differ in count."},
    {"pair", py_pair, METH_VARARGS,
     "pair(dt_rows, gt_rows, " COLUMNS_DOC ") -> None or the buffer of float64[P]: the OKS of "
     "each pair; None where a pair's rows differ in count."},
    {"pairwise_sum", py_pairwise_sum, METH_O,
     "pairwise_sum(float64[n]) -> float: numpy's sum of a contiguous array, as OKS sums."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kptkernel", "Keypoint overlaps (pycocotools' computeOks) of pairs.",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kptkernel(void) {
    if (iou_block_ready() < 0) return NULL;
    return PyModule_Create(&module);
}
