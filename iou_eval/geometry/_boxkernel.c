/*
 * Box overlaps in C: the same-group (prediction, ground truth) pairs whose
 * overlap reaches the lowest matching threshold, as
 * iou_eval.geometry.boxes.BoxGeometry.pairs computes them with numpy.
 *
 * Optional, like the other compiled parts: without it (or with
 * IOU_EVAL_NO_KERNEL=1) numpy computes the same pairs.  The overlap is
 * pycocotools' bbIou operation for operation (_bbiou.h, which the COCO
 * core's box matcher shares), so a value that lands exactly on a threshold
 * lands there on both paths (tests/unit/test_box_core.py).  Built with -O2 -ffp-contract=off: no
 * fused multiply-add.  The GIL is released while the pairs are found.
 */
#include "../_common.h"
#include "_bbiou.h"

/* The inputs of pairs(), see there. */
enum { D_GROUPS, GT_SORTED, G_STARTS, DT_ROWS, DT_XYXY, DT_AREA, GT_XYXY, GT_AREA, GT_CROWD, NARGS };

typedef struct {
    IouArr a[NARGS];
    double floor;
    IouVec pd, pg, iou;
} Job;

static int find_pairs(Job *j) {
    const IouArr *a = j->a;
    const double *dx = a[DT_XYXY].view.buf, *da = a[DT_AREA].view.buf;
    const double *gx = a[GT_XYXY].view.buf, *ga = a[GT_AREA].view.buf;
    const uint8_t *crowd = a[GT_CROWD].view.buf;
    int positive = j->floor > 0;
    for (Py_ssize_t i = 0; i < a[D_GROUPS].n; i++) {
        int64_t grp = iou_idx(&a[D_GROUPS], i), row = iou_idx(&a[DT_ROWS], i);
        const double *d = dx + 4 * row;
        int64_t lo = iou_idx(&a[G_STARTS], grp), hi = iou_idx(&a[G_STARTS], grp + 1);
        for (int64_t k = lo; k < hi; k++) {
            int64_t g = iou_idx(&a[GT_SORTED], k);
            const double *b = gx + 4 * g;
            /* Most pairs of a group do not even overlap horizontally. */
            if (positive && !iou_bb_meet_x(d, b)) continue;
            double v = iou_bb_overlap(d, da[row], b, ga[g], crowd[g]);
            if (!(v >= j->floor)) continue;
            if (iou_pair_put(&j->pd, &j->pg, &j->iou, i, g, v) < 0) return -1;
        }
    }
    return 0;
}

/* Whether every index lies in its array (checked once, the GIL held). */
static int check_bounds(Job *j) {
    IouArr *a = j->a;
    Py_ssize_t n_dt = a[DT_AREA].n, n_gt = a[GT_AREA].n, n_groups = a[G_STARTS].n - 1;
    if (a[DT_XYXY].n != 4 * n_dt || a[GT_XYXY].n != 4 * n_gt || a[GT_CROWD].n != n_gt ||
        a[DT_ROWS].n != a[D_GROUPS].n || n_groups < 0)
        return -1;
    for (Py_ssize_t i = 0; i < a[D_GROUPS].n; i++) {
        int64_t grp = iou_idx(&a[D_GROUPS], i), row = iou_idx(&a[DT_ROWS], i);
        if (grp < 0 || grp >= n_groups || row < 0 || row >= n_dt) return -1;
    }
    int64_t last = 0;
    for (Py_ssize_t k = 0; k <= n_groups; k++) {
        int64_t s = iou_idx(&a[G_STARTS], k);
        if (s < last || s > a[GT_SORTED].n) return -1;
        last = s;
    }
    for (Py_ssize_t k = 0; k < a[GT_SORTED].n; k++) {
        int64_t g = iou_idx(&a[GT_SORTED], k);
        if (g < 0 || g >= n_gt) return -1;
    }
    return 0;
}

static PyObject *py_pairs(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[NARGS];
    Job j;
    memset(&j, 0, sizeof j);
    if (!PyArg_ParseTuple(args, "OOOOdOOOOO", &o[D_GROUPS], &o[GT_SORTED], &o[G_STARTS],
                          &o[DT_ROWS], &j.floor, &o[DT_XYXY], &o[DT_AREA], &o[GT_XYXY],
                          &o[GT_AREA], &o[GT_CROWD]))
        return NULL;
    static const IouArg spec[NARGS] = {
        {"d_groups", IOU_INDEX, 0, 1}, {"gt_sorted", IOU_INDEX, 0, 1}, {"g_starts", IOU_INDEX, 0, 1},
        {"dt_rows", IOU_INDEX, 0, 1},  {"dt_xyxy", IOU_F64, 0, 2},    {"dt_area", IOU_F64, 0, 1},
        {"gt_xyxy", IOU_F64, 0, 2},    {"gt_area", IOU_F64, 0, 1},    {"gt_crowd", IOU_BOOL, 0, 1},
    };
    PyObject *result = NULL;
    if (iou_acquire_all(o, j.a, spec, NARGS) < 0) goto done;
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
    result = Py_BuildValue("(NNN)", iou_block_of_vec(&j.pd), iou_block_of_vec(&j.pg),
                           iou_block_of_vec(&j.iou));
done:
    iou_release(j.a, NARGS);
    free(j.pd.data);
    free(j.pg.data);
    free(j.iou.data);
    return result;
}

static PyMethodDef methods[] = {
    {"pairs", py_pairs, METH_VARARGS,
     "pairs(d_groups, gt_sorted, g_starts, dt_rows, floor, dt_xyxy, dt_area, gt_xyxy, gt_area, "
     "gt_crowd) -> (dt_pos, gt_row, iou): the buffers of int64[P], int64[P], float64[P], the "
     "same-group pairs whose overlap reaches floor, by prediction then ground truth."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_boxkernel", "Box overlaps of same-group pairs (pycocotools' bbIou).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__boxkernel(void) {
    if (iou_block_ready() < 0) return NULL;
    return PyModule_Create(&module);
}
