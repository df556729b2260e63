/*
 * The DOTA devkit's polygon IoU (its polyiou.iou_poly) for many pairs of
 * quadrilaterals, in C.
 *
 * Optional: built when a C compiler is at hand.  iou_eval/geometry/polyiou.py
 * holds the same rules in numpy, which stays the reference: both give the
 * same bits (tests/parity/test_dota_parity.py runs both paths), because each
 * operation below is the one the numpy path does, in the same order, in
 * IEEE double precision.  That is why the build asks for -ffp-contract=off
 * (no fused multiply-add may merge a product into a sum); the pragma below
 * says the same to compilers that read it.
 *
 * The rules: each polygon whose shoelace area is negative is reversed; the
 * intersection is the sum, over every ground-truth edge (outer loop) and
 * prediction edge (inner loop), of the signed overlap of the triangles the
 * two edges make with the origin; a triangle is clipped by the three sides
 * of the other, with a tolerance of 1e-8 (a point within 1e-8 of a line is
 * on it; points within 1e-8 on both axes are one).  Where the devkit leaves
 * a crossing point unwritten (the ends' distances to the line differ by no
 * more than 1e-8), the end that lies on the line is taken, as in numpy.
 *
 * iou_poly(gt, dt, out): gt and dt are float64 buffers of 8 numbers a pair
 * (x1 y1 ... x4 y4), out receives one IoU a pair.  No GIL while it runs.
 */
#include "../_common.h"
#include <math.h>

#define EPS 1e-8
/* A cut at most doubles a polygon: 3 -> 6 -> 12 -> 24 points. */
#define CAP 32

typedef struct {
    double x, y;
} Pt;

static int sig(double d) { return (d > EPS) - (d < -EPS); }

static int same(Pt p, Pt q) { return sig(p.x - q.x) == 0 && sig(p.y - q.y) == 0; }

static double cross(Pt o, Pt a, Pt b) {
    double l = (a.x - o.x) * (b.y - o.y);
    double r = (b.x - o.x) * (a.y - o.y);
    return l - r;
}

/* Half the shoelace sum of the first n points, added from the first on. */
static double ring_area(const Pt *p, int n) {
    double total = 0.0;
    for (int k = 0; k < n; k++) {
        Pt q = p[k + 1 < n ? k + 1 : 0];
        double l = p[k].x * q.y;
        double r = p[k].y * q.x;
        total = total + (l - r);
    }
    return total / 2.0;
}

/* What of p (n points) lies left of a -> b, in place; returns the new count. */
static int cut(Pt *p, int n, Pt a, Pt b) {
    Pt pp[CAP];
    int m = 0;
    for (int i = 0; i < n; i++) {
        Pt cur = p[i], nxt = p[i + 1 < n ? i + 1 : 0];
        double s1 = cross(a, b, cur), s2 = cross(a, b, nxt);
        int g1 = sig(s1), g2 = sig(s2);
        if (g1 > 0) pp[m++] = cur;
        if (g1 != g2) {
            double den = s2 - s1;
            Pt x;
            if (sig(den) != 0) {
                double nx = cur.x * s2, dx = nxt.x * s1;
                double ny = cur.y * s2, dy = nxt.y * s1;
                x.x = (nx - dx) / den;
                x.y = (ny - dy) / den;
            } else {
                x = g1 == 0 ? cur : nxt;
            }
            pp[m++] = x;
        }
    }
    int k = 0;
    for (int i = 0; i < m; i++)
        if (i == 0 || !same(pp[i], pp[i - 1])) p[k++] = pp[i];
    while (k > 1 && same(p[k - 1], p[0])) k--;
    return k;
}

/* The signed overlap of triangles o a b and o c d (o the origin). */
static double triangle_overlap(Pt a, Pt b, Pt c, Pt d) {
    Pt o = {0.0, 0.0};
    int s1 = sig(cross(o, a, b));
    int s2 = sig(cross(o, c, d));
    if (s1 == 0 || s2 == 0) return 0.0;
    if (s1 == -1) { Pt t = a; a = b; b = t; }
    if (s2 == -1) { Pt t = c; c = d; d = t; }
    Pt p[CAP];
    p[0] = o;
    p[1] = a;
    p[2] = b;
    int n = 3;
    n = cut(p, n, o, c);
    n = cut(p, n, c, d);
    n = cut(p, n, d, o);
    double res = fabs(ring_area(p, n));
    return s1 * s2 == -1 ? -res : res;
}

/* The devkit's winding: reversed where the area is negative; the area after. */
static double devkit_winding(const double *v, Pt *ps) {
    for (int i = 0; i < 4; i++) {
        ps[i].x = v[2 * i];
        ps[i].y = v[2 * i + 1];
    }
    if (ring_area(ps, 4) < 0) {
        Pt t = ps[0]; ps[0] = ps[3]; ps[3] = t;
        t = ps[1]; ps[1] = ps[2]; ps[2] = t;
    }
    return fabs(ring_area(ps, 4));
}

static double iou_one(const double *g, const double *d) {
    Pt ps1[4], ps2[4];
    double area1 = devkit_winding(g, ps1);
    double area2 = devkit_winding(d, ps2);
    double inter = 0.0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            inter = inter + triangle_overlap(ps1[i], ps1[(i + 1) % 4], ps2[j], ps2[(j + 1) % 4]);
    double uni = area1 + area2;
    uni = uni - inter;
    return inter / uni;
}

static PyObject *iou_poly(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[3];
    if (!PyArg_ParseTuple(args, "OOO", &o[0], &o[1], &o[2])) return NULL;
    static const IouArg spec[3] = {
        {"gt", IOU_F64, 0, -1}, {"dt", IOU_F64, 0, -1}, {"out", IOU_F64, 1, 1}};
    IouArr a[3];
    memset(a, 0, sizeof a);
    PyObject *ret = NULL;
    if (iou_acquire_all(o, a, spec, 3) < 0) goto done;
    Py_ssize_t n = a[2].n;
    if (a[0].n / 8 != n || a[0].n % 8 || a[1].n != a[0].n) {
        PyErr_SetString(PyExc_ValueError,
                        "iou_poly: expected float64 gt[P, 8], dt[P, 8] and out[P]");
        goto done;
    }
    const double *gp = IOU_F64P(a[0]), *dp = IOU_F64P(a[1]);
    double *op = IOU_F64P(a[2]);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++) op[k] = iou_one(gp + 8 * k, dp + 8 * k);
    Py_END_ALLOW_THREADS
    ret = Py_NewRef(Py_None);
done:
    iou_release(a, 3);
    return ret;
}

static PyMethodDef methods[] = {
    {"iou_poly", iou_poly, METH_VARARGS, "The DOTA devkit's polygon IoU of pairs: iou_poly(gt, dt, out)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_polykernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__polykernel(void) { return PyModule_Create(&module); }
