/*
 * The COCO protocol's core in C: greedy matching of scored predictions to
 * ground truths over every IoU threshold and area range, and the
 * precision/recall arrays accumulated from the matches.
 *
 * Optional, like the other compiled parts: numpy is the reference
 * (iou_eval.protocols.matching.greedy_rounds and accumulate.accumulate_coco),
 * selected with IOU_EVAL_NO_KERNEL=1 or where this is not built, and the
 * parity suite runs on both.  The rules are pycocotools' evaluateImg and
 * accumulate:
 *
 * - predictions of a group in descending score, ties in file order; among
 *   the candidates with IoU >= min(t, 1 - 1e-10) that are free (or crowd
 *   regions, which absorb any number) a regular ground truth beats an
 *   ignored one, then the higher IoU, then the later one in file order
 *   (pycocotools keeps the last candidate that is not worse);
 * - per category, area range, maxDets and threshold, predictions in
 *   descending score (ties: image, then rank in the image), the running
 *   true and false positives as doubles, precision tp / ((fp + tp) + eps)
 *   at each position, made non-increasing from the right, and read at the
 *   first position whose recall tp / npig reaches each recall point.
 *
 * Every float operation is the one numpy performs at that position, in the
 * same order, with -O2 -ffp-contract=off (no fused multiply-add): the
 * arrays are equal bit for bit (tests/unit/test_box_core.py, tests/parity).
 * Both entry points release the GIL, so category parts run in threads.
 *
 * The Open Images challenge's matching (oi_match) lives here too: the TF
 * Object Detection API's per-image, per-class matching with group-of
 * boxes, one pass over each group's predictions in the API's order, the
 * overlaps computed as np_box_ops computes them (numpy's reference:
 * iou_eval.protocols.openimages.match_challenge).
 */
#include "../_common.h"
#include "../geometry/_bbiou.h"

#include <math.h>

#define F64(a) IOU_F64P(a)
#define U8(a) IOU_U8P(a)

/* A function kept out of its callers (its stack frame then lasts only its call). */
#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define NOINLINE __declspec(noinline)
#else
#define NOINLINE
#endif

/* A hint to load memory read soon (a no-op where the compiler has none). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(IOU_EVAL_PORTABLE_C)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* ---------------------------------------------------------------- groups */

/* The inputs of dense_groups(). */
enum { D_A, D_B, D_NARGS };

typedef struct {
    IouArr a[D_NARGS];
    int64_t n_total, n_used;
    uint64_t *bits;
    int64_t *below; /* set bits before each word */
    int64_t *code[D_NARGS];
} Dense;

/* Each group's rank among the groups that occur (a bit table and its counts). */
static int run_dense(Dense *g) {
    size_t words = (size_t)(g->n_total / 64 + 1);
    g->bits = calloc(words, sizeof *g->bits);
    g->below = malloc(words * sizeof *g->below);
    if (!g->bits || !g->below) return -1;
    for (int i = 0; i < D_NARGS; i++)
        for (Py_ssize_t j = 0; j < g->a[i].n; j++) {
            int64_t v = iou_idx(&g->a[i], j);
            g->bits[v >> 6] |= (uint64_t)1 << (v & 63);
        }
    int64_t total = 0;
    for (size_t w = 0; w < words; w++) {
        g->below[w] = total;
        total += iou_bit_count(g->bits[w]);
    }
    g->n_used = total;
    for (int i = 0; i < D_NARGS; i++) {
        g->code[i] = malloc((size_t)(g->a[i].n ? g->a[i].n : 1) * sizeof(int64_t));
        if (!g->code[i]) return -1;
        for (Py_ssize_t j = 0; j < g->a[i].n; j++) {
            int64_t v = iou_idx(&g->a[i], j);
            uint64_t low = g->bits[v >> 6] & (((uint64_t)1 << (v & 63)) - 1);
            g->code[i][j] = g->below[v >> 6] + iou_bit_count(low);
        }
    }
    return 0;
}

static PyObject *py_dense_groups(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[D_NARGS];
    Dense g;
    memset(&g, 0, sizeof g);
    if (!PyArg_ParseTuple(args, "OOL", &o[D_A], &o[D_B], &g.n_total)) return NULL;
    PyObject *result = NULL;
    for (int i = 0; i < D_NARGS; i++)
        if (iou_acquire(o[i], &g.a[i], IOU_INDEX, 0, 1, i ? "dt_group" : "gt_group") < 0) goto done;
    if (g.n_total < 0 || g.n_total > ((int64_t)1 << 40) || !iou_in_range(&g.a[D_A], g.n_total) ||
        !iou_in_range(&g.a[D_B], g.n_total)) {
        PyErr_SetString(PyExc_ValueError, "dense_groups: a group out of range");
        goto done;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS status = run_dense(&g);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(NNL)", iou_block_take((char *)g.code[D_A], (size_t)g.a[D_A].n * 8),
                           iou_block_take((char *)g.code[D_B], (size_t)g.a[D_B].n * 8), g.n_used);
    g.code[D_A] = g.code[D_B] = NULL;
done:
    iou_release(g.a, D_NARGS);
    free(g.bits);
    free(g.below);
    free(g.code[D_A]);
    free(g.code[D_B]);
    return result;
}

/* -------------------------------------------------------------- ordering */

/* A row and its score as an unsigned key, higher scores first: the key
   orders as the score does (-0.0 as 0.0), descending. */
typedef struct {
    uint64_t key;
    int64_t row;
} Keyed;

static inline uint64_t descending_key(double score) {
    uint64_t bits;
    if (score == 0.0) score = 0.0; /* -0.0 and 0.0 are equal scores */
    memcpy(&bits, &score, sizeof bits);
    uint64_t ascending = (bits >> 63) ? ~bits : bits | ((uint64_t)1 << 63);
    return ~ascending;
}

/* v[0:n] stably by key, for a few. */
static void insert_keyed(Keyed *v, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        Keyed x = v[i];
        int64_t j = i;
        for (; j > 0 && x.key < v[j - 1].key; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

enum { BUCKET_BITS = 11 }; /* at most 2**11 buckets a pass */

/* The bucket of a key: its `bits` bits below `shift`'s, which keys of one
   call share above (so buckets ascend as keys do). */
static inline int64_t bucket_of(uint64_t key, int shift, int bits) {
    return (int64_t)((key >> shift) & (((uint64_t)1 << bits) - 1));
}

/* v[0:n] into tmp by bucket, stably (the counts live only here, not in the
   recursion's frames). */
static NOINLINE void scatter_buckets(const Keyed *v, Keyed *tmp, int64_t n, int shift, int bits) {
    int64_t count[((int64_t)1 << BUCKET_BITS) + 1];
    memset(count, 0, ((size_t)1 << bits) * sizeof *count + sizeof *count);
    for (int64_t i = 0; i < n; i++) count[bucket_of(v[i].key, shift, bits) + 1]++;
    for (int64_t b = 0; b < ((int64_t)1 << bits); b++) count[b + 1] += count[b];
    for (int64_t i = 0; i < n; i++) tmp[count[bucket_of(v[i].key, shift, bits)]++] = v[i];
}

/*
 * v[0:n] stably by key, `tmp` as room for n items: insertion for a few,
 * else the most significant bits where the keys differ first -- a counting
 * pass into at most 2**11 buckets by the highest bits the smallest and the
 * largest key do not share -- and each bucket the same way.  Scores spread
 * over those bits, so buckets hold a few keys each: two passes over most
 * keys, where a pass per byte took seven.
 */
static void sort_keyed(Keyed *v, Keyed *tmp, int64_t n) {
    if (n < 32) {
        insert_keyed(v, n);
        return;
    }
    uint64_t lo = v[0].key, hi = v[0].key;
    for (int64_t i = 1; i < n; i++) {
        lo = v[i].key < lo ? v[i].key : lo;
        hi = v[i].key > hi ? v[i].key : hi;
    }
    if (lo == hi) return; /* equal keys: already in order */
    int top = 63 - iou_leading_zeros(lo ^ hi); /* the highest bit they differ in */
    int bits = 1;
    while (bits < BUCKET_BITS && ((int64_t)1 << bits) < n) bits++;
    if (bits > top + 1) bits = top + 1;
    int shift = top + 1 - bits;
    scatter_buckets(v, tmp, n, shift, bits);
    memcpy(v, tmp, (size_t)n * sizeof *v);
    for (int64_t i = 0, j; i < n; i = j) { /* each bucket: a run of equal bucket_of */
        int64_t b = bucket_of(v[i].key, shift, bits);
        for (j = i + 1; j < n && bucket_of(v[j].key, shift, bits) == b; j++) {
        }
        if (j - i > 1) sort_keyed(v + i, tmp + i, j - i);
    }
}

/* The inputs of group_order(). */
enum { O_GROUP, O_SCORE, O_NARGS };

typedef struct {
    IouArr a[O_NARGS];
    int64_t n_groups;
    int64_t *order;
} Order;

static int run_order(Order *o) {
    const IouArr *x = o->a;
    const double *score = F64(x[O_SCORE]);
    int64_t n = x[O_GROUP].n;
    int64_t *start = calloc((size_t)o->n_groups + 1, sizeof *start);
    Keyed *v = malloc((size_t)(n ? n : 1) * sizeof *v), *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    o->order = malloc((size_t)(n ? n : 1) * sizeof *o->order);
    if (!start || !v || !tmp || !o->order) {
        free(start);
        free(v);
        free(tmp);
        return -1;
    }
    for (int64_t i = 0; i < n; i++) start[iou_idx(&x[O_GROUP], i) + 1]++;
    for (int64_t g = 0; g < o->n_groups; g++) start[g + 1] += start[g];
    for (int64_t i = 0; i < n; i++) /* by group, stably */
        v[start[iou_idx(&x[O_GROUP], i)]++] = (Keyed){descending_key(score[i]), i};
    for (int64_t g = 0, lo = 0; g < o->n_groups; lo = start[g++])
        if (start[g] - lo > 1) sort_keyed(v + lo, tmp + lo, start[g] - lo);
    for (int64_t i = 0; i < n; i++) o->order[i] = v[i].row;
    free(start);
    free(v);
    free(tmp);
    return 0;
}

static PyObject *py_group_order(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_group, *o_score;
    Order o;
    memset(&o, 0, sizeof o);
    if (!PyArg_ParseTuple(args, "OOL", &o_group, &o_score, &o.n_groups)) return NULL;
    PyObject *result = NULL;
    if (iou_acquire(o_group, &o.a[O_GROUP], IOU_INDEX, 0, 1, "group") < 0 ||
        iou_acquire(o_score, &o.a[O_SCORE], IOU_F64, 0, 1, "score") < 0)
        goto done;
    int ok = o.n_groups >= 0 && o.a[O_SCORE].n == o.a[O_GROUP].n &&
             iou_in_range(&o.a[O_GROUP], o.n_groups);
    for (Py_ssize_t i = 0; ok && i < o.a[O_SCORE].n; i++) ok = F64(o.a[O_SCORE])[i] == F64(o.a[O_SCORE])[i];
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "group_order: a group out of range, or a NaN score");
        goto done;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS status = run_order(&o);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = iou_block_take((char *)o.order, (size_t)o.a[O_GROUP].n * sizeof *o.order);
    o.order = NULL;
done:
    iou_release(o.a, O_NARGS);
    free(o.order);
    return result;
}

/* ------------------------------------------------------------ matching */

/* The inputs of greedy(), see there. */
enum { PD, PG, IOU, GT_POS, GT_CROWD, GT_IGNORE, THR, G_NARGS };

typedef struct {
    IouArr a[G_NARGS];
    int64_t keep_lane;
    int n_area, n_thr, n_lanes;
    int64_t n_gt, n_rec, n_kept;
    /* outputs */
    int32_t *lane, *dt, *gt;
    double *kept;
} Greedy;

/* One prediction's candidates, gathered once for all its lanes. */
typedef struct {
    int64_t gt, pos;
    double iou;
    uint8_t crowd;
    uint64_t ignored; /* bit a: ignored in area range a */
} Cand;

/*
 * The best of a prediction's candidates c[0:n] in lane (a, t): the free (or
 * crowd) ground truth with IoU >= thr that is regular rather than ignored,
 * then of higher IoU, then later in file order.  -1: none.
 */
static int64_t best_candidate(const Cand *c, int64_t n, const uint64_t *taken, int a, int lane,
                              double thr) {
    int64_t best = -1;
    for (int64_t j = 0; j < n; j++) {
        if (((taken[c[j].gt] >> lane) & 1) && !c[j].crowd) continue;
        if (!(c[j].iou >= thr)) continue;
        if (best < 0) {
            best = j;
            continue;
        }
        int regular = !((c[j].ignored >> a) & 1), best_regular = !((c[best].ignored >> a) & 1);
        if (regular > best_regular ||
            (regular == best_regular &&
             (c[j].iou > c[best].iou || (c[j].iou == c[best].iou && c[j].pos > c[best].pos))))
            best = j;
    }
    return best;
}

/* Pairs [j0, j1) (one prediction's) as candidates; their largest IoU. */
static double gather(const Greedy *g, int64_t j0, int64_t j1, Cand *c) {
    const IouArr *x = g->a;
    const uint8_t *crowd = U8(x[GT_CROWD]), *ignore = U8(x[GT_IGNORE]);
    double most = -1.0;
    for (int64_t j = j0; j < j1; j++) {
        Cand *k = &c[j - j0];
        k->gt = iou_idx(&x[PG], j);
        k->pos = iou_idx(&x[GT_POS], k->gt);
        k->iou = F64(x[IOU])[j];
        k->crowd = crowd[k->gt];
        k->ignored = 0;
        for (int a = 0; a < g->n_area; a++)
            k->ignored |= (uint64_t)(ignore[(int64_t)a * g->n_gt + k->gt] != 0) << a;
        if (k->iou > most) most = k->iou;
    }
    return most;
}

/* Room for one more record (the columns grown together).  0, or -1. */
static int record_room(Greedy *g, size_t *cap) {
    if ((size_t)g->n_rec < *cap) return 0;
    size_t grown = *cap ? 2 * *cap : 4096;
    int32_t *lane = realloc(g->lane, grown * sizeof *lane);
    if (lane) g->lane = lane;
    int32_t *dt = realloc(g->dt, grown * sizeof *dt);
    if (dt) g->dt = dt;
    int32_t *gt = realloc(g->gt, grown * sizeof *gt);
    if (gt) g->gt = gt;
    if (!lane || !dt || !gt) return -1;
    *cap = grown;
    return 0;
}

/*
 * Every prediction's matches in every lane, straight into the record
 * columns (by prediction, then lane), and the kept lane's overlaps in the
 * order of its records.  0, or -1 (no memory).
 */
static int run_greedy(Greedy *g) {
    const IouArr *x = g->a;
    const double *thr = F64(x[THR]), *iou = F64(x[IOU]);
    uint64_t *taken = calloc((size_t)(g->n_gt ? g->n_gt : 1), sizeof *taken);
    size_t cap = 0, kept_cap = 1024, room = 64;
    Cand *cand = malloc(room * sizeof *cand);
    g->kept = malloc(kept_cap * sizeof *g->kept);
    int status = -1;
    if (!taken || !cand || !g->kept) goto done;
    int64_t n_pairs = x[PD].n;
    for (int64_t j0 = 0, j1; j0 < n_pairs; j0 = j1) {
        int64_t d = iou_idx(&x[PD], j0);
        for (j1 = j0 + 1; j1 < n_pairs && iou_idx(&x[PD], j1) == d; j1++) {
        }
        if ((size_t)(j1 - j0) > room) {
            Cand *grown = realloc(cand, (size_t)(j1 - j0) * sizeof *cand);
            if (!grown) goto done;
            cand = grown;
            room = (size_t)(j1 - j0);
        }
        double most = gather(g, j0, j1, cand);
        for (int a = 0; a < g->n_area; a++) {
            for (int t = 0; t < g->n_thr; t++) {
                if (!(most >= thr[t])) continue; /* no candidate reaches it */
                int lane = a * g->n_thr + t;
                int64_t k = best_candidate(cand, j1 - j0, taken, a, lane, thr[t]);
                if (k < 0) continue;
                if (!cand[k].crowd) taken[cand[k].gt] |= (uint64_t)1 << lane;
                if (record_room(g, &cap) < 0) goto done;
                g->lane[g->n_rec] = lane;
                g->dt[g->n_rec] = (int32_t)d;
                g->gt[g->n_rec++] = (int32_t)cand[k].gt;
                if (lane != g->keep_lane) continue;
                if ((size_t)g->n_kept == kept_cap) {
                    double *grown = realloc(g->kept, 2 * kept_cap * sizeof *grown);
                    if (!grown) goto done;
                    g->kept = grown;
                    kept_cap *= 2;
                }
                g->kept[g->n_kept++] = iou[j0 + k];
            }
        }
    }
    status = 0;
done:
    free(taken);
    free(cand);
    return status;
}

/* Shapes and indices checked once, the GIL held.  0, or -1 with an error set. */
static int check_greedy(Greedy *g) {
    IouArr *x = g->a;
    int64_t n_pairs = x[PD].n;
    g->n_gt = x[GT_POS].n;
    g->n_thr = (int)x[THR].n;
    g->n_area = g->n_gt ? (int)(x[GT_IGNORE].n / g->n_gt) : 0;
    g->n_lanes = g->n_area * g->n_thr;
    if (x[PG].n != n_pairs || x[IOU].n != n_pairs || x[GT_CROWD].n != g->n_gt ||
        (g->n_gt && x[GT_IGNORE].n != (int64_t)g->n_area * g->n_gt) || g->n_lanes > 64 ||
        g->n_gt >= INT32_MAX || !iou_in_range(&x[PD], INT32_MAX) || !iou_in_range(&x[PG], g->n_gt)) {
        PyErr_SetString(PyExc_ValueError, "greedy: inconsistent shapes or an index out of range");
        return -1;
    }
    for (int64_t j = 1; j < n_pairs; j++) {
        if (iou_idx(&x[PD], j) < iou_idx(&x[PD], j - 1)) {
            PyErr_SetString(PyExc_ValueError, "greedy: pairs must be sorted by prediction");
            return -1;
        }
    }
    return 0;
}

static PyObject *py_greedy(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[G_NARGS];
    Greedy g;
    memset(&g, 0, sizeof g);
    if (!PyArg_ParseTuple(args, "OOOOOOOL", &o[PD], &o[PG], &o[IOU], &o[GT_POS], &o[GT_CROWD],
                          &o[GT_IGNORE], &o[THR], &g.keep_lane))
        return NULL;
    static const IouArg spec[G_NARGS] = {
        {"pd", IOU_INDEX, 0, 1},       {"pg", IOU_INDEX, 0, 1},         {"iou", IOU_F64, 0, 1},
        {"gt_position", IOU_INDEX, 0, 1}, {"gt_crowd", IOU_BOOL, 0, 1}, {"gt_ignore", IOU_BOOL, 0, -1},
        {"thresholds", IOU_F64, 0, 1},
    };
    PyObject *result = NULL;
    if (iou_acquire_all(o, g.a, spec, G_NARGS) < 0) goto done;
    if (check_greedy(&g) < 0) goto done;
    int status;
    Py_BEGIN_ALLOW_THREADS status = run_greedy(&g);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(NNNN)", iou_block_take((char *)g.lane, (size_t)g.n_rec * 4),
                           iou_block_take((char *)g.dt, (size_t)g.n_rec * 4),
                           iou_block_take((char *)g.gt, (size_t)g.n_rec * 4),
                           iou_block_take((char *)g.kept, (size_t)g.n_kept * 8));
    g.lane = g.dt = g.gt = NULL;
    g.kept = NULL;
done:
    iou_release(g.a, G_NARGS);
    free(g.lane);
    free(g.dt);
    free(g.gt);
    free(g.kept);
    return result;
}

/* ------------------------------------------------ matching boxes in one pass */

/*
 * match_boxes(): greedy() on boxes without the pair arrays.  Each
 * prediction's candidates are found as it is matched: the ground truths of
 * its group whose bbIou (_bbiou.h, the box kernel's operations) reaches
 * the lowest threshold, in the order the box kernel lists them.  The
 * records are greedy()'s on the box kernel's pairs, bit for bit, in the
 * same order (tests/unit/test_box_core.py).
 */
enum {
    B_GROUPS, B_DT_COORD, B_GT_SORTED, B_G_STARTS, B_GT_COORD, B_DT_XYXY, B_DT_AREA, B_GT_XYXY,
    B_GT_AREA, B_GT_IOF, B_GT_POS, B_GT_CROWD, B_GT_IGNORE, B_THR, B_NARGS
};

typedef struct {
    IouArr a[B_NARGS];
    double floor;
    int64_t most_gt; /* the most ground truths of one group */
    Greedy out;      /* the records (lane, dt, gt, kept) and the counts (its arrays unused) */
} BoxMatch;

/* A ground truth as the box matcher reads it, stored in group order: a
   group's ground truths lie side by side. */
typedef struct {
    double box[4], area;
    Cand cand; /* its candidate record, the overlap left to fill */
    uint8_t iof;
} BoxGt;

/* The ground truths in gt_sorted's order, with what matching reads of each. */
static void pack_ground_truths(const BoxMatch *b, const uint64_t *ignored, BoxGt *out) {
    const IouArr *x = b->a;
    const double *gx = F64(x[B_GT_XYXY]), *ga = F64(x[B_GT_AREA]);
    const uint8_t *iof = U8(x[B_GT_IOF]), *crowd = U8(x[B_GT_CROWD]);
    for (int64_t k = 0; k < x[B_GT_SORTED].n; k++) {
        int64_t g = iou_idx(&x[B_GT_SORTED], k), at = iou_idx(&x[B_GT_COORD], g);
        BoxGt *o = &out[k];
        memcpy(o->box, gx + 4 * at, sizeof o->box);
        o->area = ga[at];
        o->iof = iof[at];
        o->cand = (Cand){g, iou_idx(&x[B_GT_POS], g), 0.0, crowd[g], ignored[g]};
    }
}

/* Prediction i's candidates into c (ground truths of its group whose
   overlap reaches the floor, in group order): their count, *most the
   largest overlap. */
static int64_t box_candidates(const BoxMatch *b, int64_t i, const BoxGt *gts, Cand *c,
                              double *most) {
    const IouArr *x = b->a;
    int64_t grp = iou_idx(&x[B_GROUPS], i), row = iou_idx(&x[B_DT_COORD], i), n = 0;
    const double *d = F64(x[B_DT_XYXY]) + 4 * row, da = F64(x[B_DT_AREA])[row];
    int positive = b->floor > 0;
    *most = -1.0;
    for (int64_t k = iou_idx(&x[B_G_STARTS], grp), hi = iou_idx(&x[B_G_STARTS], grp + 1); k < hi; k++) {
        const BoxGt *g = &gts[k];
        /* Most pairs of a group do not even overlap horizontally. */
        if (positive && !iou_bb_meet_x(d, g->box)) continue;
        double v = iou_bb_overlap(d, da, g->box, g->area, g->iof);
        if (!(v >= b->floor)) continue;
        c[n] = g->cand;
        c[n].iou = v;
        if (v > *most) *most = v;
        n++;
    }
    return n;
}

/* Record (lane, d, gt) with overlap iou kept where lane is the kept one.  0, or -1. */
static int box_record(Greedy *g, int lane, int64_t d, int64_t gt, double iou, size_t *cap,
                      size_t *kept_cap) {
    if (record_room(g, cap) < 0) return -1;
    g->lane[g->n_rec] = lane;
    g->dt[g->n_rec] = (int32_t)d;
    g->gt[g->n_rec++] = (int32_t)gt;
    if (lane != g->keep_lane) return 0;
    if ((size_t)g->n_kept == *kept_cap) {
        int ok = 1;
        IOU_GROW(g->kept, double, 2 * *kept_cap, ok);
        if (!ok) return -1;
        *kept_cap *= 2;
    }
    g->kept[g->n_kept++] = iou;
    return 0;
}

/* A prediction with one candidate c takes it in every lane whose threshold
   its overlap reaches and where it is free (or a crowd region): best_candidate()
   of one, the lanes as bits.  0, or -1 (no memory). */
static int box_lanes_of_one(Greedy *g, const double *thr, int64_t d, const Cand *c,
                            uint64_t *taken, size_t *cap, size_t *kept_cap) {
    uint64_t reach = 0, lanes = 0;
    for (int t = 0; t < g->n_thr; t++) reach |= (uint64_t)(c->iou >= thr[t]) << t;
    for (int a = 0; a < g->n_area; a++) lanes |= reach << (a * g->n_thr);
    if (!c->crowd) {
        lanes &= ~taken[c->gt];
        taken[c->gt] |= lanes;
    }
    for (int lane = 0; lanes; lane++, lanes >>= 1)
        if ((lanes & 1) && box_record(g, lane, d, c->gt, c->iou, cap, kept_cap) < 0) return -1;
    return 0;
}

/* Prediction d's matches in every lane from its n candidates (run_greedy's
   lane loop).  0, or -1 (no memory). */
static int box_lanes(Greedy *g, const double *thr, int64_t d, const Cand *cand, int64_t n,
                     double most, uint64_t *taken, size_t *cap, size_t *kept_cap) {
    if (n == 1) return box_lanes_of_one(g, thr, d, cand, taken, cap, kept_cap);
    for (int a = 0; a < g->n_area; a++) {
        for (int t = 0; t < g->n_thr; t++) {
            if (!(most >= thr[t])) continue; /* no candidate reaches it */
            int lane = a * g->n_thr + t;
            int64_t k = best_candidate(cand, n, taken, a, lane, thr[t]);
            if (k < 0) continue;
            if (!cand[k].crowd) taken[cand[k].gt] |= (uint64_t)1 << lane;
            if (box_record(g, lane, d, cand[k].gt, cand[k].iou, cap, kept_cap) < 0) return -1;
        }
    }
    return 0;
}

static int run_match_boxes(BoxMatch *b) {
    Greedy *g = &b->out;
    const uint8_t *ignore = U8(b->a[B_GT_IGNORE]);
    const double *thr = F64(b->a[B_THR]);
    size_t n_gt = (size_t)(g->n_gt ? g->n_gt : 1), cap = 0, kept_cap = 1024;
    uint64_t *taken = calloc(n_gt, sizeof *taken), *ignored = calloc(n_gt, sizeof *ignored);
    BoxGt *gts = malloc(n_gt * sizeof *gts);
    Cand *cand = malloc((size_t)(b->most_gt ? b->most_gt : 1) * sizeof *cand);
    g->kept = malloc(kept_cap * sizeof *g->kept);
    int status = -1;
    if (!taken || !ignored || !gts || !cand || !g->kept) goto done;
    for (int a = 0; a < g->n_area; a++) /* bit a: ignored in area range a */
        for (int64_t k = 0; k < g->n_gt; k++)
            ignored[k] |= (uint64_t)(ignore[(int64_t)a * g->n_gt + k] != 0) << a;
    pack_ground_truths(b, ignored, gts);
    for (int64_t i = 0; i < b->a[B_GROUPS].n; i++) {
        double most;
        int64_t n = box_candidates(b, i, gts, cand, &most);
        if (n && box_lanes(g, thr, i, cand, n, most, taken, &cap, &kept_cap) < 0) goto done;
    }
    status = 0;
done:
    free(taken);
    free(ignored);
    free(gts);
    free(cand);
    return status;
}

/* Shapes and indices checked once, the GIL held.  0, or -1 with an error set. */
static int check_match_boxes(BoxMatch *b) {
    IouArr *x = b->a;
    Greedy *g = &b->out;
    int64_t n_dt = x[B_GROUPS].n, n_box_dt = x[B_DT_AREA].n, n_box_gt = x[B_GT_AREA].n;
    int64_t n_groups = x[B_G_STARTS].n - 1;
    g->n_gt = x[B_GT_POS].n;
    g->n_thr = (int)x[B_THR].n;
    g->n_area = g->n_gt ? (int)(x[B_GT_IGNORE].n / g->n_gt) : 0;
    g->n_lanes = g->n_area * g->n_thr;
    int ok = n_groups >= 0 && x[B_DT_COORD].n == n_dt && x[B_GT_SORTED].n == g->n_gt &&
             x[B_GT_COORD].n == g->n_gt && x[B_GT_CROWD].n == g->n_gt &&
             iou_dim(&x[B_DT_XYXY], 0) == n_box_dt && x[B_DT_XYXY].n == 4 * n_box_dt &&
             iou_dim(&x[B_GT_XYXY], 0) == n_box_gt && x[B_GT_XYXY].n == 4 * n_box_gt &&
             x[B_GT_IOF].n == n_box_gt && (!g->n_gt || x[B_GT_IGNORE].n == (int64_t)g->n_area * g->n_gt) &&
             g->n_lanes <= 64 && g->n_gt < INT32_MAX && n_dt < INT32_MAX &&
             iou_in_range(&x[B_GROUPS], n_groups) && iou_in_range(&x[B_DT_COORD], n_box_dt) &&
             iou_in_range(&x[B_GT_SORTED], g->n_gt) && iou_in_range(&x[B_GT_COORD], n_box_gt);
    int64_t last = 0;
    b->most_gt = 0;
    for (int64_t k = 0; ok && k <= n_groups; k++) { /* non-decreasing, within gt_sorted */
        int64_t s = iou_idx(&x[B_G_STARTS], k);
        ok = s >= last && s <= g->n_gt;
        if (k && s - last > b->most_gt) b->most_gt = s - last;
        last = s;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "match_boxes: inconsistent shapes or an index out of range");
        return -1;
    }
    return 0;
}

static PyObject *py_match_boxes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[B_NARGS];
    BoxMatch b;
    memset(&b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOdL", &o[B_GROUPS], &o[B_DT_COORD], &o[B_GT_SORTED],
                          &o[B_G_STARTS], &o[B_GT_COORD], &o[B_DT_XYXY], &o[B_DT_AREA],
                          &o[B_GT_XYXY], &o[B_GT_AREA], &o[B_GT_IOF], &o[B_GT_POS], &o[B_GT_CROWD],
                          &o[B_GT_IGNORE], &o[B_THR], &b.floor, &b.out.keep_lane))
        return NULL;
    static const IouArg spec[B_NARGS] = {
        {"d_groups", IOU_INDEX, 0, 1},    {"dt_rows", IOU_INDEX, 0, 1},  {"gt_sorted", IOU_INDEX, 0, 1},
        {"g_starts", IOU_INDEX, 0, 1},    {"gt_rows", IOU_INDEX, 0, 1},  {"dt_xyxy", IOU_F64, 0, 2},
        {"dt_area", IOU_F64, 0, 1},       {"gt_xyxy", IOU_F64, 0, 2},    {"gt_area", IOU_F64, 0, 1},
        {"gt_iof", IOU_BOOL, 0, 1},       {"gt_position", IOU_INDEX, 0, 1}, {"gt_crowd", IOU_BOOL, 0, 1},
        {"gt_ignore", IOU_BOOL, 0, 2},    {"thresholds", IOU_F64, 0, 1},
    };
    PyObject *result = NULL;
    if (iou_acquire_all(o, b.a, spec, B_NARGS) < 0) goto done;
    if (check_match_boxes(&b) < 0) goto done;
    int status;
    Py_BEGIN_ALLOW_THREADS status = run_match_boxes(&b);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    Greedy *g = &b.out;
    result = Py_BuildValue("(NNNN)", iou_block_take((char *)g->lane, (size_t)g->n_rec * 4),
                           iou_block_take((char *)g->dt, (size_t)g->n_rec * 4),
                           iou_block_take((char *)g->gt, (size_t)g->n_rec * 4),
                           iou_block_take((char *)g->kept, (size_t)g->n_kept * 8));
    g->lane = g->dt = g->gt = NULL;
    g->kept = NULL;
done:
    iou_release(b.a, B_NARGS);
    free(b.out.lane);
    free(b.out.dt);
    free(b.out.gt);
    free(b.out.kept);
    return result;
}

/* What each match record counts as (the inputs of record_flags()). */
enum { F_LANE, F_DT, F_GT, F_IGNORE, F_ZERO, F_OUTSIDE, F_NARGS };

/*
 * tp: the match counts (its ground truth is not ignored in the record's
 * area range, nor has pycocotools' id 0, which reads as "no match");
 * counted: scored rather than ignored -- a true positive, or a match to an
 * id-0 ground truth that is not ignored, by a prediction inside the range.
 */
static void flag_records(const IouArr *x, int64_t n_thr, int64_t n_gt, int64_t n_dt, uint8_t *tp,
                         uint8_t *counted) {
    const uint8_t *ignore = U8(x[F_IGNORE]), *zero = U8(x[F_ZERO]), *outside = U8(x[F_OUTSIDE]);
    for (Py_ssize_t i = 0; i < x[F_LANE].n; i++) {
        int64_t area = iou_idx(&x[F_LANE], i) / n_thr, g = iou_idx(&x[F_GT], i), d = iou_idx(&x[F_DT], i);
        int on_ignored = ignore[area * n_gt + g] != 0, z = zero[g] != 0;
        tp[i] = !z && !on_ignored;
        counted[i] = tp[i] || (z && !on_ignored && !outside[area * n_dt + d]);
    }
}

static PyObject *py_record_flags(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[F_NARGS];
    IouArr x[F_NARGS];
    memset(x, 0, sizeof x);
    int64_t n_thr, n_area;
    if (!PyArg_ParseTuple(args, "OOOOOOLL", &o[F_LANE], &o[F_DT], &o[F_GT], &o[F_IGNORE],
                          &o[F_ZERO], &o[F_OUTSIDE], &n_thr, &n_area))
        return NULL;
    static const IouArg spec[F_NARGS] = {
        {"lane", IOU_INDEX, 0, 1},       {"dt", IOU_INDEX, 0, 1},          {"gt", IOU_INDEX, 0, 1},
        {"gt_ignore", IOU_BOOL, 0, -1}, {"gt_zero_id", IOU_BOOL, 0, 1}, {"outside", IOU_BOOL, 0, -1},
    };
    PyObject *result = NULL;
    uint8_t *tp = NULL, *counted = NULL;
    if (iou_acquire_all(o, x, spec, F_NARGS) < 0) goto done;
    int64_t n = x[F_LANE].n, n_gt = x[F_ZERO].n, n_dt = n_area > 0 ? x[F_OUTSIDE].n / n_area : 0;
    if (n_thr <= 0 || n_area < 0 || x[F_DT].n != n || x[F_GT].n != n || x[F_IGNORE].n != n_area * n_gt ||
        x[F_OUTSIDE].n != n_area * n_dt || !iou_in_range(&x[F_LANE], n_area * n_thr) ||
        !iou_in_range(&x[F_GT], n_gt) || !iou_in_range(&x[F_DT], n_dt)) {
        PyErr_SetString(PyExc_ValueError, "record_flags: inconsistent shapes or indices");
        goto done;
    }
    tp = malloc((size_t)(n ? n : 1));
    counted = malloc((size_t)(n ? n : 1));
    if (!tp || !counted) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS flag_records(x, n_thr, n_gt, n_dt, tp, counted);
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(NN)", iou_block_take((char *)tp, (size_t)n), iou_block_take((char *)counted, (size_t)n));
    tp = counted = NULL;
done:
    iou_release(x, F_NARGS);
    free(tp);
    free(counted);
    return result;
}

/* -------------------------------------------------------- accumulation */

/* The inputs of accumulate(), see there. */
enum {
    ORDER, DT_CAT, DT_SCORE, DT_RANK, OUTSIDE, REC_LANE, REC_DT, REC_TP, REC_COUNTED, MAX_DETS,
    NPIG, NEED, CATS, SLOTS, PRECISION, RECALL, SCORES, A_NARGS
};

/* A match record of a prediction. */
typedef struct {
    int32_t t;    /* threshold */
    uint8_t area; /* area range */
    uint8_t tp;   /* a true positive */
    uint8_t cnt;  /* scored (true or false positive), not ignored */
} Rec;

typedef struct {
    IouArr a[A_NARGS];
    int64_t lane_thr, n_thr, n_dt, n_k, n_area, n_max, n_rec, n_r;
    int64_t n_sel; /* the categories accumulated (CATS) */
    int64_t n_out; /* the arrays' K: category CATS[i] goes to SLOTS[i] */
    /* the predictions, by prediction d */
    int32_t *span;    /* [D + 1] prediction d's records are [span[d], span[d + 1]) */
    uint8_t *inside;  /* [D, A] inside each area range */
    int64_t *starts;  /* [K + 1] each category's first accumulation position */
    /* the records of the accumulated thresholds, by prediction; NULL where
       the given ones are by prediction already: read in place, see read_record */
    Rec *rec;
    int16_t *lane_t;  /* [A * lane_thr] a lane's threshold, -1 where it is not accumulated */
    uint8_t *lane_a;  /* [A * lane_thr] its area range */
    int64_t *max_det; /* [M] */
    /* One category's sweep.  A lane is (area a, maxDets m, threshold t), at
       (a * M + m) * T + t; recall points are visited by need (the
       true-positive count that reaches them, ascending). */
    int64_t *tp, *corr;    /* [lanes] running true positives, corrections */
    int64_t *reached;      /* [lanes] recall points (by need) reached so far */
    double *most;          /* [lanes] the largest precision so far */
    double *best, *best_s; /* [lanes, R] by need: the largest precision from the
                              true positive that reached the point on, and its score */
    int64_t *scored;       /* [A * M] kept positions inside the range */
    int64_t *nd, *first;   /* [M] kept positions, the first of them */
    uint8_t *kept;         /* [M] the position is kept under maxDets m */
    uint8_t *active;       /* [A] the range has ground truth to count */
    int64_t *by_need;      /* [A, R] recall points by need (stable) */
    int64_t *need;         /* [A, R] their needs */
    int64_t *n_zero;       /* [A] recall points of need 0 (the first ones) */
    /* one category's precision and scores, [A, M, T, R], written out together */
    double *stage_q, *stage_s;
} Acc;

/*
 * The records of the accumulated thresholds by prediction, and where each
 * prediction's lie (span[d]:span[d + 1]): the sweep reads them side by side.  The
 * compiled matcher lists them by prediction already: then they are read
 * where they are (c->rec stays NULL, a prediction's span may hold records
 * of thresholds not accumulated, which read_record skips); else a stable
 * counting sort copies them in order.  0, or -1 (no memory).
 */
static int index_records(Acc *c) {
    const IouArr *x = c->a;
    int64_t n_lanes = c->lane_thr * c->n_area;
    int sorted = 1;
    int32_t *at = c->span = calloc((size_t)c->n_dt + 1, sizeof *at);
    c->lane_t = malloc((size_t)(n_lanes ? n_lanes : 1) * sizeof *c->lane_t);
    c->lane_a = malloc((size_t)(n_lanes ? n_lanes : 1));
    if (!at || !c->lane_t || !c->lane_a) return -1;
    /* (lane_thr < 2**15, A < 256) */
    for (int64_t l = 0; l < n_lanes; l++) {
        c->lane_t[l] = (int16_t)(l % c->lane_thr < c->n_thr ? l % c->lane_thr : -1);
        c->lane_a[l] = (uint8_t)(l / c->lane_thr);
    }
    for (int64_t i = 1; sorted && i < c->n_rec; i++) sorted = iou_idx(&x[REC_DT], i - 1) <= iou_idx(&x[REC_DT], i);
    for (int64_t i = 0; i < c->n_rec; i++)
        if (sorted || c->lane_t[iou_idx(&x[REC_LANE], i)] >= 0) at[iou_idx(&x[REC_DT], i) + 1]++;
    for (int64_t d = 0; d < c->n_dt; d++) at[d + 1] += at[d];
    if (sorted) return 0;
    c->rec = malloc((size_t)(at[c->n_dt] ? at[c->n_dt] : 1) * sizeof *c->rec);
    if (!c->rec) return -1;
    for (int64_t i = 0; i < c->n_rec; i++) {
        int64_t lane = iou_idx(&x[REC_LANE], i), t = c->lane_t[lane];
        if (t < 0) continue;
        Rec r = {(int32_t)t, c->lane_a[lane], U8(x[REC_TP])[i], U8(x[REC_COUNTED])[i]};
        c->rec[at[iou_idx(&x[REC_DT], i)]++] = r;
    }
    /* each at[d] is now where d + 1's records start */
    memmove(at + 1, at, (size_t)c->n_dt * sizeof *at);
    at[0] = 0;
    return 0;
}

/* Record i of a prediction's span into *r: 1, or 0 where
   its threshold is not accumulated. */
static inline int read_record(const Acc *c, int64_t i, Rec *r) {
    if (c->rec) {
        *r = c->rec[i];
        return 1;
    }
    int64_t lane = iou_idx(&c->a[REC_LANE], i);
    if (c->lane_t[lane] < 0) return 0;
    r->t = c->lane_t[lane];
    r->area = c->lane_a[lane];
    r->tp = U8(c->a[REC_TP])[i];
    r->cnt = U8(c->a[REC_COUNTED])[i];
    return 1;
}

/* Category k's recall points of each area range by need (a stable
   insertion sort: they come in order already where recall points ascend),
   and which ranges have ground truth to count.  Returns the count of those. */
static int64_t order_recall_points(Acc *c, int64_t k) {
    const IouArr *x = c->a;
    int64_t n_r = c->n_r, n_active = 0;
    for (int64_t a = 0; a < c->n_area; a++) {
        int64_t *idx = c->by_need + a * n_r, *need = c->need + a * n_r, at = (k * c->n_area + a) * n_r;
        c->n_zero[a] = 0;
        c->active[a] = iou_idx(&x[NPIG], k * c->n_area + a) > 0;
        n_active += c->active[a];
        for (int64_t r = 0; r < n_r; r++) {
            int64_t v = iou_idx(&x[NEED], at + r), j = r;
            for (; j > 0 && need[j - 1] > v; j--) {
                need[j] = need[j - 1];
                idx[j] = idx[j - 1];
            }
            need[j] = v;
            idx[j] = r;
            c->n_zero[a] += v == 0;
        }
    }
    return n_active;
}

/* Every lane back to its start (no position seen). */
static void reset_lanes(Acc *c) {
    int64_t n_t = c->n_thr, n_m = c->n_max, lanes = c->n_area * n_m * n_t;
    memset(c->tp, 0, (size_t)lanes * sizeof *c->tp);
    memset(c->corr, 0, (size_t)lanes * sizeof *c->corr);
    memset(c->scored, 0, (size_t)(c->n_area * n_m) * sizeof *c->scored);
    memset(c->nd, 0, (size_t)n_m * sizeof *c->nd);
    for (int64_t m = 0; m < n_m; m++) c->first[m] = -1;
    for (int64_t l = 0; l < lanes; l++) {
        c->most[l] = 0.0; /* every precision is > 0 */
        c->reached[l] = c->n_zero[l / (n_m * n_t)];
    }
}

/*
 * The tp-th true positive of lane (in area range a), of precision v and
 * score s.  The curve pycocotools reads at a recall point of need c is the
 * largest precision from the c-th true positive on: the points reached so
 * far (a prefix by need, their maxima non-increasing along it) take v where
 * it is larger, from the last one back; the points whose need is tp start
 * at v, with this score.  Only max: the same bits as the envelope.
 */
static void take_true_positive(Acc *c, int64_t lane, int64_t a, int64_t tp, double v, double s) {
    double *best = c->best + lane * c->n_r, *best_s = c->best_s + lane * c->n_r;
    const int64_t *need = c->need + a * c->n_r;
    int64_t h = c->reached[lane];
    if (v > c->most[lane]) c->most[lane] = v;
    for (int64_t j = h - 1; j >= c->n_zero[a] && best[j] < v; j--) best[j] = v;
    for (; h < c->n_r && need[h] <= tp; h++) {
        best[h] = v;
        best_s[h] = s;
    }
    c->reached[lane] = h;
}

/*
 * Category k's predictions in accumulation order, once for every lane: a
 * position counts under the maxDets that keep it (rank < maxDets), and in
 * each area range, for each threshold, the true positives and pycocotools'
 * precision at each, tp / ((fp + tp) + eps) with the running counts as
 * doubles.  A position's false positives are the scored positions so far
 * less its true positives; scored are the kept positions inside the range,
 * corrected by the records (matched predictions, ignored or not).
 */
enum { AHEAD = 8 }; /* positions between asking for a prediction's data and reading it */

static void sweep_category(Acc *c, int64_t k) {
    const double eps = 2.220446049250313e-16; /* np.spacing(1) */
    const IouArr *x = c->a;
    const double *score = F64(x[DT_SCORE]);
    const int64_t n_t = c->n_thr, n_a = c->n_area, n_m = c->n_max;
    const int64_t end = c->starts[k + 1];
    for (int64_t p = c->starts[k]; p < end; p++) {
        /* The accumulation order visits predictions out of their order in
           memory: what a prediction reads is asked for some positions ahead. */
        if (p + 2 * AHEAD < end) {
            const int64_t e = iou_idx(&x[ORDER], p + 2 * AHEAD);
            PREFETCH(&c->span[e]);
            PREFETCH((const char *)x[DT_RANK].view.buf + e * (x[DT_RANK].wide ? 8 : 4));
        }
        if (p + AHEAD < end) {
            const int64_t e = iou_idx(&x[ORDER], p + AHEAD);
            PREFETCH(c->inside + e * n_a);
            const int64_t lo = c->span[e];
            if (c->rec) {
                PREFETCH(&c->rec[lo]);
            } else {
                PREFETCH((const char *)x[REC_LANE].view.buf + lo * (x[REC_LANE].wide ? 8 : 4));
                PREFETCH(U8(x[REC_TP]) + lo);
                PREFETCH(U8(x[REC_COUNTED]) + lo);
            }
            PREFETCH(&score[e]);
        }
        const int64_t d = iou_idx(&x[ORDER], p);
        const int64_t rank = iou_idx(&x[DT_RANK], d), lo = c->span[d], hi = c->span[d + 1];
        int any = 0;
        for (int64_t m = 0; m < n_m; m++) {
            c->kept[m] = rank < c->max_det[m];
            if (!c->kept[m]) continue;
            any = 1;
            if (!c->nd[m]++) c->first[m] = p;
        }
        if (!any) continue;
        const uint8_t *in = c->inside + d * n_a;
        for (int64_t a = 0; a < n_a; a++)
            if (in[a] && c->active[a])
                for (int64_t m = 0; m < n_m; m++) c->scored[a * n_m + m] += c->kept[m];
        for (int64_t i = lo; i < hi; i++) {
            Rec r;
            if (!read_record(c, i, &r) || !c->active[r.area]) continue;
            int64_t delta = (int64_t)r.cnt - in[r.area];
            for (int64_t m = 0; m < n_m; m++) {
                if (!c->kept[m]) continue;
                int64_t am = r.area * n_m + m, lane = am * n_t + r.t;
                c->corr[lane] += delta;
                if (!r.tp) continue;
                int64_t tp = ++c->tp[lane], fp = c->scored[am] + c->corr[lane] - tp;
                double tpd = (double)tp, fpd = (double)fp;
                take_true_positive(c, lane, r.area, tp, tpd / ((fpd + tpd) + eps), score[d]);
            }
        }
    }
}

/*
 * Category k's arrays from its sweep: recall at [T, K, A, M] (k at slot),
 * and precision and scores at each recall point into the stage [A, M, T, R]:
 * the curve's value at the first true positive whose recall reaches the
 * point (the need-th), 0 where none does; a recall point of need 0 reads
 * position 0 (whatever it is): the largest precision, the top score.
 */
static void write_category(Acc *c, int64_t k, int64_t slot) {
    const IouArr *x = c->a;
    const double *score = F64(x[DT_SCORE]);
    const int64_t n_t = c->n_thr, n_a = c->n_area, n_m = c->n_max, n_r = c->n_r;
    for (int64_t a = 0; a < n_a; a++) {
        if (!c->active[a]) continue;
        int64_t npig = iou_idx(&x[NPIG], k * n_a + a);
        const int64_t *idx = c->by_need + a * n_r, *need = c->need + a * n_r;
        for (int64_t m = 0; m < n_m; m++) {
            int64_t nd = c->nd[m];
            double top = nd ? score[iou_idx(&x[ORDER], c->first[m])] : 0.0;
            for (int64_t t = 0; t < n_t; t++) {
                int64_t lane = (a * n_m + m) * n_t + t, ntp = c->tp[lane];
                double *precision = c->stage_q + lane * n_r, *scores = c->stage_s + lane * n_r;
                F64(x[RECALL])[((t * c->n_out + slot) * n_a + a) * n_m + m] =
                    nd ? (double)ntp / (double)npig : 0.0;
                for (int64_t j = 0; j < n_r; j++) {
                    double q = 0.0, ss = 0.0;
                    if (!nd) {
                    } else if (need[j] == 0) {
                        q = ntp ? c->most[lane] : 0.0;
                        ss = top;
                    } else if (j < c->reached[lane]) {
                        q = c->best[lane * n_r + j];
                        ss = c->best_s[lane * n_r + j];
                    }
                    precision[idx[j]] = q;
                    scores[idx[j]] = ss;
                }
            }
        }
    }
}

/* One category's staged curves ([A, M, T, R]) into the [T, R, K, A, M] arrays at k = slot,
   area ranges with ground truth to count only: each (t, r) writes A * M neighbours. */
static void flush_category(Acc *c, int64_t k, int64_t slot) {
    const IouArr *x = c->a;
    int64_t n_a = c->n_area, n_m = c->n_max, n_t = c->n_thr, n_r = c->n_r, n_k = c->n_out;
    double *precision = F64(x[PRECISION]), *scores = F64(x[SCORES]);
    for (int64_t t = 0; t < n_t; t++)
        for (int64_t r = 0; r < n_r; r++) {
            int64_t at = ((t * n_r + r) * n_k + slot) * n_a * n_m;
            for (int64_t a = 0; a < n_a; a++) {
                if (iou_idx(&x[NPIG], k * n_a + a) <= 0) continue;
                for (int64_t m = 0; m < n_m; m++) {
                    int64_t from = ((a * n_m + m) * n_t + t) * n_r + r;
                    precision[at + a * n_m + m] = c->stage_q[from];
                    scores[at + a * n_m + m] = c->stage_s[from];
                }
            }
        }
}

/* Every selected category with ground truth to count: one sweep for all its lanes. */
static void run_curves(Acc *c) {
    const IouArr *x = c->a;
    for (int64_t kk = 0; kk < c->n_sel; kk++) {
        int64_t k = iou_idx(&x[CATS], kk), slot = iou_idx(&x[SLOTS], kk);
        if (!order_recall_points(c, k)) continue;
        reset_lanes(c);
        sweep_category(c, k);
        write_category(c, k, slot);
        flush_category(c, k, slot);
    }
}

/* The working room of the sweeps (lanes, recall points).  0, or -1. */
static int sweep_room(Acc *c) {
    size_t lanes = (size_t)(c->n_area * c->n_max * c->n_thr), r = (size_t)c->n_r;
    size_t lr = lanes * r > 0 ? lanes * r : 1, a = (size_t)(c->n_area ? c->n_area : 1);
    size_t m = (size_t)(c->n_max ? c->n_max : 1), ar = a * (r ? r : 1);
    lanes = lanes ? lanes : 1;
    c->tp = malloc(lanes * sizeof *c->tp);
    c->corr = malloc(lanes * sizeof *c->corr);
    c->reached = malloc(lanes * sizeof *c->reached);
    c->most = malloc(lanes * sizeof *c->most);
    c->best = malloc(lr * sizeof *c->best);
    c->best_s = malloc(lr * sizeof *c->best_s);
    c->scored = malloc(a * m * sizeof *c->scored);
    c->nd = malloc(m * sizeof *c->nd);
    c->first = malloc(m * sizeof *c->first);
    c->kept = malloc(m);
    c->max_det = malloc(m * sizeof *c->max_det);
    c->active = malloc(a);
    c->by_need = malloc(ar * sizeof *c->by_need);
    c->need = malloc(ar * sizeof *c->need);
    c->n_zero = malloc(a * sizeof *c->n_zero);
    c->stage_q = malloc(lr * sizeof *c->stage_q);
    c->stage_s = malloc(lr * sizeof *c->stage_s);
    if (!c->tp || !c->corr || !c->reached || !c->most || !c->best || !c->best_s || !c->scored ||
        !c->nd || !c->first || !c->kept || !c->max_det || !c->active || !c->by_need || !c->need ||
        !c->n_zero || !c->stage_q || !c->stage_s)
        return -1;
    for (int64_t i = 0; i < c->n_max; i++) c->max_det[i] = iou_idx(&c->a[MAX_DETS], i);
    return 0;
}

static int run_accumulate(Acc *c) {
    const IouArr *x = c->a;
    size_t n = (size_t)(c->n_dt ? c->n_dt : 1);
    c->inside = malloc(n * (size_t)(c->n_area ? c->n_area : 1));
    c->starts = calloc((size_t)c->n_k + 1, sizeof *c->starts);
    if (!c->inside || !c->starts || sweep_room(c) < 0 || index_records(c) < 0)
        return -1;
    const uint8_t *outside = U8(x[OUTSIDE]);
    for (int64_t d = 0; d < c->n_dt; d++) c->starts[iou_idx(&x[DT_CAT], d) + 1]++;
    for (int64_t a = 0; a < c->n_area; a++)
        for (int64_t d = 0; d < c->n_dt; d++) c->inside[d * c->n_area + a] = !outside[a * c->n_dt + d];
    for (int64_t k = 0; k < c->n_k; k++) c->starts[k + 1] += c->starts[k];
    run_curves(c);
    return 0;
}

static void free_accumulate(Acc *c) {
    void *held[] = {c->span,   c->inside, c->rec,    c->lane_t,  c->lane_a, c->starts,  c->tp,
                    c->corr,   c->reached, c->most,  c->best,    c->best_s, c->scored,  c->nd,
                    c->first,  c->kept,   c->max_det, c->active, c->by_need, c->need,   c->n_zero,
                    c->stage_q, c->stage_s};
    for (size_t i = 0; i < sizeof held / sizeof *held; i++) free(held[i]);
}

/* Shapes, indices and the order checked once, the GIL held.  0, or -1 with an error set. */
static int check_accumulate(Acc *c) {
    IouArr *x = c->a;
    int64_t d = x[ORDER].n, k = c->n_k, a = c->n_area, m = x[MAX_DETS].n;
    c->n_dt = d;
    c->n_max = m;
    c->n_rec = x[REC_LANE].n;
    c->n_r = (k && a) ? x[NEED].n / (k * a) : 0;
    c->n_sel = x[CATS].n;
    int64_t tam = c->n_thr * a * m;
    c->n_out = tam ? x[RECALL].n / tam : 0;
    int64_t r = c->n_r, ks = c->n_out;
    int ok = c->lane_thr >= c->n_thr && c->n_thr >= 0 && c->lane_thr > 0 && c->lane_thr <= INT16_MAX && a < 256 &&
             d < INT32_MAX && c->n_rec < INT32_MAX && x[DT_CAT].n == d &&
             x[DT_SCORE].n == d && x[DT_RANK].n == d && x[OUTSIDE].n == a * d &&
             x[REC_DT].n == c->n_rec && x[REC_TP].n == c->n_rec && x[REC_COUNTED].n == c->n_rec &&
             x[NPIG].n == k * a && x[NEED].n == k * a * r &&
             x[PRECISION].n == c->n_thr * r * ks * a * m && x[SCORES].n == x[PRECISION].n &&
             x[RECALL].n == c->n_thr * ks * a * m && x[SLOTS].n == c->n_sel &&
             iou_in_range(&x[CATS], k) && iou_in_range(&x[SLOTS], ks) && iou_in_range(&x[ORDER], d) &&
             iou_in_range(&x[DT_CAT], k) && iou_in_range(&x[REC_DT], d) &&
             iou_in_range(&x[REC_LANE], a * c->lane_thr);
    for (int64_t p = 1; ok && p < d; p++) /* by category */
        ok = iou_idx(&x[DT_CAT], iou_idx(&x[ORDER], p - 1)) <= iou_idx(&x[DT_CAT], iou_idx(&x[ORDER], p));
    for (int64_t i = 0; ok && i < x[NEED].n; i++) ok = iou_idx(&x[NEED], i) >= 0;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "accumulate: inconsistent shapes or indices");
        return -1;
    }
    /* Each prediction at one position: a repeated one would leave another's
       position unwritten, and the records would be placed out of bounds. */
    return iou_is_permutation(&x[ORDER], "accumulate", "order") == 1 ? 0 : -1;
}

static PyObject *py_accumulate(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[A_NARGS];
    Acc c;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "OOOOOOOOOLLOOOLLOOOOO", &o[ORDER], &o[DT_CAT], &o[DT_SCORE],
                          &o[DT_RANK], &o[OUTSIDE], &o[REC_LANE], &o[REC_DT], &o[REC_TP],
                          &o[REC_COUNTED], &c.lane_thr, &c.n_thr, &o[MAX_DETS], &o[NPIG],
                          &o[NEED], &c.n_k, &c.n_area, &o[CATS], &o[SLOTS], &o[PRECISION],
                          &o[RECALL], &o[SCORES]))
        return NULL;
    static const IouArg spec[A_NARGS] = {
        {"order", IOU_INDEX, 0, 1},      {"dt_category", IOU_INDEX, 0, 1}, {"dt_score", IOU_F64, 0, 1},
        {"dt_rank", IOU_INDEX, 0, 1},    {"outside", IOU_BOOL, 0, -1},     {"rec_lane", IOU_INDEX, 0, 1},
        {"rec_dt", IOU_INDEX, 0, 1},     {"rec_tp", IOU_BOOL, 0, 1},       {"rec_counted", IOU_BOOL, 0, 1},
        {"max_dets", IOU_INDEX, 0, 1},   {"npig", IOU_INDEX, 0, -1},       {"need", IOU_INDEX, 0, -1},
        {"categories", IOU_INDEX, 0, 1}, {"slots", IOU_INDEX, 0, 1},       {"precision", IOU_F64, 1, -1},
        {"recall", IOU_F64, 1, -1},      {"scores", IOU_F64, 1, -1},
    };
    PyObject *result = NULL;
    if (iou_acquire_all(o, c.a, spec, A_NARGS) < 0) goto done;
    if (check_accumulate(&c) < 0) goto done;
    int status;
    Py_BEGIN_ALLOW_THREADS status = run_accumulate(&c);
    Py_END_ALLOW_THREADS
    if (status < 0) PyErr_NoMemory();
    else result = Py_NewRef(Py_None);
done:
    iou_release(c.a, A_NARGS);
    free_accumulate(&c);
    return result;
}

/* ------------------------------------------------------------ resampling */

/*
 * Bootstrap replicates of the accumulation above, from what the numpy
 * resampler (iou_eval.protocols.resample) fixes once: for each (area range,
 * maxDets) slice the summary reads, the true positives by (threshold,
 * category) group with the image of each, the images of the kept
 * predictions inside the range ("base"), the records scored otherwise than
 * their position's default (+1 / -1, "corrections"), and for each true
 * positive and each group's start how many base positions and corrections
 * lie up to it.  A replicate weighs every prediction and ground truth with
 * its image's multiplicity: the running true positives and the scored count
 * are weighted sums (integers), npig a weighted count, and precision is
 * tp / ((double)(fp + tp) + eps) at each true positive of nonzero weight --
 * the float operations of accumulate() on the weighted matches, hence its
 * bits.  A true positive of weight 0 is skipped: it adds no count and its
 * precision never exceeds the one before it (see resample.py).
 *
 * resample_prepare() checks and copies the arrays once into a capsule;
 * resample() runs one replicate with the GIL released (replicates run in
 * threads), checking only the weights and the outputs.
 */

static const char *const RESAMPLER = "iou_eval.protocols._cococore.resampler";

/* The inputs of resample_prepare(), see there. */
enum {
    RP_REC_THR, RP_GT_KEY, RP_GT_IMAGE, RP_S_AREA, RP_S_MAX, RP_S_PREC, RP_TP_AT, RP_TP_IMAGE,
    RP_G_FIRST, RP_BASE_AT, RP_BASE_IMAGE, RP_CORR_AT, RP_CORR_IMAGE, RP_CORR_DELTA, RP_Q_BASE,
    RP_Q_HI, RP_NARGS
};

/* What every replicate of one evaluation shares, checked once (see resample_prepare). */
typedef struct {
    int64_t n_img, n_k, n_t, n_r, n_a, n_m, n_s, n_gt, groups; /* groups: T * K */
    int64_t most_tp, most_base, most_corr; /* room a replicate needs (stops, not entries) */
    int64_t most_terms;                    /* the most weights one running sum adds */
    double *rec_thr;                       /* [R] */
    int32_t *gt_key, *gt_image;            /* [G'] area * K + category, image */
    int64_t *s_area, *s_max;               /* [S] each slice's (area range, maxDets) */
    uint8_t *s_prec;                       /* [S] whether its precision is read */
    int64_t *tp_at, *base_at, *corr_at;    /* [S + 1] where each slice's entries start */
    int64_t *g_first;                      /* [S, groups + 1] within the slice's true positives */
    int32_t *tp_image, *base_image, *corr_image, *q_base, *q_hi;
    int8_t *corr_delta;
    /* The base and correction counts the queries read, ascending, per slice
       ([S + 1] offsets): a replicate sums up to each and keeps only those
       (q_base and q_hi then index them), a few hundred kilobytes rather
       than a running sum at every entry. */
    int64_t *base_stop_at, *corr_stop_at;
    int32_t *base_stop, *corr_stop;
} Resampler;

static void free_resampler(Resampler *p) {
    if (!p) return;
    free(p->rec_thr);
    free(p->gt_key);
    free(p->gt_image);
    free(p->s_area);
    free(p->s_max);
    free(p->s_prec);
    free(p->tp_at);
    free(p->base_at);
    free(p->corr_at);
    free(p->g_first);
    free(p->tp_image);
    free(p->base_image);
    free(p->corr_image);
    free(p->q_base);
    free(p->q_hi);
    free(p->corr_delta);
    free(p->base_stop_at);
    free(p->corr_stop_at);
    free(p->base_stop);
    free(p->corr_stop);
    free(p);
}

static void resampler_capsule_free(PyObject *capsule) {
    free_resampler(PyCapsule_GetPointer(capsule, RESAMPLER));
}

/* A copy of index column a (values already checked to fit): int64 or int32 items. */
static void *copy_index(const IouArr *a, int wide) {
    size_t n = (size_t)(a->n ? a->n : 1);
    void *out = malloc(n * (wide ? 8 : 4));
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < a->n; i++) {
        if (wide) ((int64_t *)out)[i] = iou_idx(a, i);
        else ((int32_t *)out)[i] = (int32_t)iou_idx(a, i);
    }
    return out;
}

/* Offsets o[0:S + 1] from 0 to n, never decreasing.  1 or 0. */
static int offsets_ok(const IouArr *o, int64_t n) {
    if (o->n < 1 || iou_idx(o, 0) != 0 || iou_idx(o, o->n - 1) != n) return 0;
    for (Py_ssize_t i = 1; i < o->n; i++)
        if (iou_idx(o, i) < iou_idx(o, i - 1)) return 0;
    return 1;
}

/* Each slice's group starts (from 0 to its true positives, never decreasing) and
   queries (base positions and corrections of its own, at most all of them). */
static int slices_ok(const IouArr *x, int64_t n_s, int64_t groups) {
    for (int64_t s = 0; s < n_s; s++) {
        int64_t n_tp = iou_idx(&x[RP_TP_AT], s + 1) - iou_idx(&x[RP_TP_AT], s);
        int64_t n_base = iou_idx(&x[RP_BASE_AT], s + 1) - iou_idx(&x[RP_BASE_AT], s);
        int64_t n_corr = iou_idx(&x[RP_CORR_AT], s + 1) - iou_idx(&x[RP_CORR_AT], s);
        const int64_t g0 = s * (groups + 1);
        if (iou_idx(&x[RP_G_FIRST], g0) != 0 || iou_idx(&x[RP_G_FIRST], g0 + groups) != n_tp) return 0;
        for (int64_t g = 1; g <= groups; g++)
            if (iou_idx(&x[RP_G_FIRST], g0 + g) < iou_idx(&x[RP_G_FIRST], g0 + g - 1)) return 0;
        int64_t q0 = iou_idx(&x[RP_TP_AT], s) + s * groups, q1 = q0 + n_tp + groups;
        for (int64_t q = q0; q < q1; q++) {
            int64_t b = iou_idx(&x[RP_Q_BASE], q), c = iou_idx(&x[RP_Q_HI], q);
            if (b < 0 || b > n_base || c < 0 || c > n_corr) return 0;
        }
    }
    return 1;
}

/* Shapes, offsets and indices, the GIL held.  1, or 0. */
static int check_prepare(const IouArr *x, const Resampler *p) {
    int64_t n_s = p->n_s, n_tp = x[RP_TP_IMAGE].n, n_corr = x[RP_CORR_IMAGE].n, size;
    int ok = p->n_img >= 0 && p->n_img < INT32_MAX && p->n_k >= 0 && p->n_t >= 0 && p->n_a >= 0 &&
             p->n_m >= 0 && iou_mul_fits(p->n_t, p->n_k, &size) && iou_mul_fits(size, p->n_r, &size) &&
             iou_mul_fits(size, p->n_a, &size) && iou_mul_fits(size, p->n_m, &size) &&
             size < ((int64_t)1 << 40) && x[RP_GT_IMAGE].n == x[RP_GT_KEY].n &&
             x[RP_S_MAX].n == n_s && x[RP_S_PREC].n == n_s && x[RP_TP_AT].n == n_s + 1 &&
             x[RP_BASE_AT].n == n_s + 1 && x[RP_CORR_AT].n == n_s + 1 &&
             x[RP_CORR_DELTA].n == n_corr && x[RP_G_FIRST].n == n_s * (p->groups + 1) &&
             x[RP_Q_BASE].n == n_tp + n_s * p->groups && x[RP_Q_HI].n == x[RP_Q_BASE].n &&
             n_tp < INT32_MAX && x[RP_BASE_IMAGE].n < INT32_MAX && n_corr < INT32_MAX &&
             iou_in_range(&x[RP_GT_KEY], p->n_a * p->n_k) && iou_in_range(&x[RP_GT_IMAGE], p->n_img) &&
             iou_in_range(&x[RP_S_AREA], p->n_a) && iou_in_range(&x[RP_S_MAX], p->n_m) &&
             iou_in_range(&x[RP_TP_IMAGE], p->n_img) && iou_in_range(&x[RP_BASE_IMAGE], p->n_img) &&
             iou_in_range(&x[RP_CORR_IMAGE], p->n_img) && offsets_ok(&x[RP_TP_AT], n_tp) &&
             offsets_ok(&x[RP_BASE_AT], x[RP_BASE_IMAGE].n) && offsets_ok(&x[RP_CORR_AT], n_corr);
    for (Py_ssize_t i = 0; ok && i < n_corr; i++) {
        int64_t d = iou_idx(&x[RP_CORR_DELTA], i);
        ok = d == 1 || d == -1;
    }
    /* Recall points in [0, 1] (NaN refused): the counts they need are then in [0, npig + 1]. */
    for (Py_ssize_t r = 0; ok && r < p->n_r; r++) ok = F64(x[RP_REC_THR])[r] >= 0.0 && F64(x[RP_REC_THR])[r] <= 1.0;
    return ok && slices_ok(x, n_s, p->groups);
}

/* The room a replicate needs, and the most weights one running sum adds. */
static void measure_room(Resampler *p) {
    p->most_tp = p->most_base = p->most_corr = 0;
    p->most_terms = p->n_gt;
    for (int64_t s = 0; s < p->n_s; s++) {
        int64_t n_base = p->base_at[s + 1] - p->base_at[s], n_corr = p->corr_at[s + 1] - p->corr_at[s];
        int64_t n_bs = p->base_stop_at[s + 1] - p->base_stop_at[s], n_cs = p->corr_stop_at[s + 1] - p->corr_stop_at[s];
        if (n_bs > p->most_base) p->most_base = n_bs;
        if (n_cs > p->most_corr) p->most_corr = n_cs;
        if (n_base + n_corr > p->most_terms) p->most_terms = n_base + n_corr;
        if (p->tp_at[s + 1] - p->tp_at[s] > p->most_terms) p->most_terms = p->tp_at[s + 1] - p->tp_at[s];
        const int64_t *g = p->g_first + s * (p->groups + 1);
        for (int64_t i = 0; i < p->groups; i++)
            if (g[i + 1] - g[i] > p->most_tp) p->most_tp = g[i + 1] - g[i];
    }
}

/*
 * The distinct values q[lo:hi] takes (each in [0, n]), ascending, appended
 * to *stops (at *len, room grown as needed), and q[lo:hi] rewritten as
 * their ranks among them.  0, or -1 (no memory).
 */
static int rank_stops(int32_t *q, int64_t lo, int64_t hi, int64_t n, int32_t **stops, int64_t *len,
                      int64_t *cap) {
    int32_t *rank = malloc((size_t)(n + 1) * sizeof *rank);
    if (!rank) return -1;
    for (int64_t v = 0; v <= n; v++) rank[v] = -1;
    for (int64_t i = lo; i < hi; i++) rank[q[i]] = 0;
    int64_t used = 0;
    for (int64_t v = 0; v <= n; v++)
        if (rank[v] == 0) rank[v] = (int32_t)++used; /* 1-based while marking */
    if (*len + used > *cap) {
        int ok = 1;
        int64_t grown = 2 * (*len + used) + 1;
        IOU_GROW(*stops, int32_t, grown, ok);
        if (!ok) {
            free(rank);
            return -1;
        }
        *cap = grown;
    }
    for (int64_t v = 0; v <= n; v++)
        if (rank[v] > 0) (*stops)[*len + rank[v] - 1] = (int32_t)v;
    for (int64_t i = lo; i < hi; i++) q[i] = rank[q[i]] - 1;
    *len += used;
    free(rank);
    return 0;
}

/* Each slice's stops for q_base and q_hi (see Resampler).  0, or -1 (no memory). */
static int make_stops(Resampler *p) {
    int64_t n_s = p->n_s, base_len = 0, base_cap = 0, corr_len = 0, corr_cap = 0;
    p->base_stop_at = calloc((size_t)n_s + 1, sizeof *p->base_stop_at);
    p->corr_stop_at = calloc((size_t)n_s + 1, sizeof *p->corr_stop_at);
    if (!p->base_stop_at || !p->corr_stop_at) return -1;
    for (int64_t s = 0; s < n_s; s++) {
        int64_t lo = p->tp_at[s] + s * p->groups, hi = p->tp_at[s + 1] + (s + 1) * p->groups;
        if (rank_stops(p->q_base, lo, hi, p->base_at[s + 1] - p->base_at[s], &p->base_stop, &base_len,
                       &base_cap) < 0 ||
            rank_stops(p->q_hi, lo, hi, p->corr_at[s + 1] - p->corr_at[s], &p->corr_stop, &corr_len,
                       &corr_cap) < 0)
            return -1;
        p->base_stop_at[s + 1] = base_len;
        p->corr_stop_at[s + 1] = corr_len;
    }
    if (!p->base_stop) p->base_stop = malloc(sizeof *p->base_stop);
    if (!p->corr_stop) p->corr_stop = malloc(sizeof *p->corr_stop);
    return p->base_stop && p->corr_stop ? 0 : -1;
}

/* Copies of the checked arrays into p.  0, or -1 (no memory). */
static int copy_prepared(const IouArr *x, Resampler *p) {
    p->rec_thr = malloc((size_t)(p->n_r ? p->n_r : 1) * sizeof *p->rec_thr);
    if (p->rec_thr && p->n_r) memcpy(p->rec_thr, F64(x[RP_REC_THR]), (size_t)p->n_r * sizeof *p->rec_thr);
    p->gt_key = copy_index(&x[RP_GT_KEY], 0);
    p->gt_image = copy_index(&x[RP_GT_IMAGE], 0);
    p->s_area = copy_index(&x[RP_S_AREA], 1);
    p->s_max = copy_index(&x[RP_S_MAX], 1);
    p->s_prec = malloc((size_t)(p->n_s ? p->n_s : 1));
    if (p->s_prec)
        for (int64_t s = 0; s < p->n_s; s++) p->s_prec[s] = U8(x[RP_S_PREC])[s] != 0;
    p->tp_at = copy_index(&x[RP_TP_AT], 1);
    p->base_at = copy_index(&x[RP_BASE_AT], 1);
    p->corr_at = copy_index(&x[RP_CORR_AT], 1);
    p->g_first = copy_index(&x[RP_G_FIRST], 1);
    p->tp_image = copy_index(&x[RP_TP_IMAGE], 0);
    p->base_image = copy_index(&x[RP_BASE_IMAGE], 0);
    p->corr_image = copy_index(&x[RP_CORR_IMAGE], 0);
    p->q_base = copy_index(&x[RP_Q_BASE], 0);
    p->q_hi = copy_index(&x[RP_Q_HI], 0);
    p->corr_delta = malloc((size_t)(x[RP_CORR_DELTA].n ? x[RP_CORR_DELTA].n : 1));
    if (p->corr_delta)
        for (Py_ssize_t i = 0; i < x[RP_CORR_DELTA].n; i++) p->corr_delta[i] = (int8_t)iou_idx(&x[RP_CORR_DELTA], i);
    if (!p->rec_thr || !p->gt_key || !p->gt_image || !p->s_area || !p->s_max || !p->s_prec ||
        !p->tp_at || !p->base_at || !p->corr_at || !p->g_first || !p->tp_image || !p->base_image ||
        !p->corr_image || !p->q_base || !p->q_hi || !p->corr_delta || make_stops(p) < 0)
        return -1;
    measure_room(p);
    return 0;
}

static PyObject *py_resample_prepare(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[RP_NARGS];
    IouArr x[RP_NARGS];
    memset(x, 0, sizeof x);
    Resampler *p = calloc(1, sizeof *p);
    if (!p) return PyErr_NoMemory();
    if (!PyArg_ParseTuple(args, "OOOLLLLLOOOOOOOOOOOOO", &o[RP_REC_THR], &o[RP_GT_KEY], &o[RP_GT_IMAGE],
                          &p->n_img, &p->n_k, &p->n_t, &p->n_a, &p->n_m, &o[RP_S_AREA], &o[RP_S_MAX],
                          &o[RP_S_PREC], &o[RP_TP_AT], &o[RP_TP_IMAGE], &o[RP_G_FIRST], &o[RP_BASE_AT],
                          &o[RP_BASE_IMAGE], &o[RP_CORR_AT], &o[RP_CORR_IMAGE], &o[RP_CORR_DELTA],
                          &o[RP_Q_BASE], &o[RP_Q_HI])) {
        free(p);
        return NULL;
    }
    static const IouArg spec[RP_NARGS] = {
        {"recall_thresholds", IOU_F64, 0, 1}, {"gt_key", IOU_INDEX, 0, 1},    {"gt_image", IOU_INDEX, 0, 1},
        {"slice_area", IOU_INDEX, 0, 1},      {"slice_max", IOU_INDEX, 0, 1}, {"slice_precision", IOU_BOOL, 0, 1},
        {"tp_at", IOU_INDEX, 0, 1},           {"tp_image", IOU_INDEX, 0, 1},  {"g_first", IOU_INDEX, 0, 1},
        {"base_at", IOU_INDEX, 0, 1},         {"base_image", IOU_INDEX, 0, 1}, {"corr_at", IOU_INDEX, 0, 1},
        {"corr_image", IOU_INDEX, 0, 1},      {"corr_delta", IOU_INDEX, 0, 1}, {"q_base", IOU_INDEX, 0, 1},
        {"q_hi", IOU_INDEX, 0, 1},
    };
    PyObject *result = NULL;
    if (iou_acquire_all(o, x, spec, RP_NARGS) < 0) goto done;
    p->n_r = x[RP_REC_THR].n;
    p->n_s = x[RP_S_AREA].n;
    p->n_gt = x[RP_GT_KEY].n;
    if (!iou_mul_fits(p->n_t, p->n_k, &p->groups) || !check_prepare(x, p)) {
        PyErr_SetString(PyExc_ValueError, "resample_prepare: inconsistent shapes, offsets or indices");
        goto done;
    }
    if (copy_prepared(x, p) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyCapsule_New(p, RESAMPLER, resampler_capsule_free);
    if (result) p = NULL;
done:
    iou_release(x, RP_NARGS);
    free_resampler(p);
    return result;
}

/* One replicate's working room. */
typedef struct {
    const Resampler *p;
    const int64_t *w;        /* [I] multiplicities */
    double *precision;       /* [A, M, T, R, K] */
    double *recall;          /* [A, M, T, K] */
    int64_t *npig;           /* [A * K] */
    int64_t *need;           /* [R] */
    int64_t *base_cum, *corr_cum;
    int64_t *tp_cum;         /* one group's, weight-0 ones left out */
    double *pr;
} Replicate;

/*
 * The least true-positive count whose recall reaches each recall point
 * (resample.recall_counts), at least 1; 0 for a recall point at 0, which
 * reads the group's largest precision.
 */
static void recall_counts(Replicate *q, int64_t npig) {
    const double p = (double)npig;
    for (int64_t r = 0; r < q->p->n_r; r++) {
        const double rt = q->p->rec_thr[r];
        double c = ceil(rt * p);
        if ((c - 1) / p >= rt) c = c - 1;
        if (c / p < rt) c = c + 1;
        q->need[r] = rt <= 0.0 ? 0 : c > 1 ? (int64_t)c : 1;
    }
}

/* The running base and correction sums of slice s at each of its stops. */
static void running_sums(Replicate *q, int64_t s) {
    const Resampler *p = q->p;
    const int32_t *bi = p->base_image + p->base_at[s], *ci = p->corr_image + p->corr_at[s];
    const int8_t *cd = p->corr_delta + p->corr_at[s];
    const int32_t *bs = p->base_stop + p->base_stop_at[s], *cs = p->corr_stop + p->corr_stop_at[s];
    int64_t n_bs = p->base_stop_at[s + 1] - p->base_stop_at[s], n_cs = p->corr_stop_at[s + 1] - p->corr_stop_at[s];
    int64_t run = 0, i = 0;
    for (int64_t j = 0; j < n_bs; j++) {
        for (; i < bs[j]; i++) run += q->w[bi[i]];
        q->base_cum[j] = run;
    }
    run = 0;
    i = 0;
    for (int64_t j = 0; j < n_cs; j++) {
        for (; i < cs[j]; i++) run += cd[i] * q->w[ci[i]];
        q->corr_cum[j] = run;
    }
}

/*
 * Group g (threshold t, category k) of slice s: its weighted true positives
 * and their precision; writes recall, and precision at each recall point if
 * asked (at the first true positive reaching the count, the largest
 * precision from there on; recall 0 reads the group's largest).
 */
static void replicate_group(Replicate *q, int64_t s, int64_t t, int64_t k, int64_t npig) {
    const double eps = 2.220446049250313e-16; /* np.spacing(1) */
    const Resampler *p = q->p;
    const int64_t g = t * p->n_k + k, tp0 = p->tp_at[s], n_tp = p->tp_at[s + 1] - tp0;
    const int64_t *g_first = p->g_first + s * (p->groups + 1);
    const int32_t *qb = p->q_base + tp0 + s * p->groups, *qh = p->q_hi + tp0 + s * p->groups;
    const int32_t *image = p->tp_image + tp0;
    int64_t a = p->s_area[s], m = p->s_max[s], n = 0, tp = 0;
    double *recall = q->recall + ((a * p->n_m + m) * p->n_t + t) * p->n_k + k;
    if (!p->s_prec[s]) { /* recall alone: the weighted true positives */
        for (int64_t i = g_first[g]; i < g_first[g + 1]; i++) tp += q->w[image[i]];
        *recall = (double)tp / (double)npig;
        return;
    }
    const int64_t start = q->base_cum[qb[n_tp + g]] + q->corr_cum[qh[n_tp + g]];
    for (int64_t i = g_first[g]; i < g_first[g + 1]; i++) {
        /* Written whatever the weight, kept (n moves on) only where it is not 0. */
        int64_t wi = q->w[image[i]];
        tp += wi;
        int64_t seen = q->base_cum[qb[i]] + q->corr_cum[qh[i]] - start;
        q->pr[n] = (double)tp / ((double)seen + eps);
        q->tp_cum[n] = tp;
        n += wi != 0;
    }
    *recall = (double)tp / (double)npig;
    if (n > 0) { /* the largest precision from each true positive on */
        double most = q->pr[n - 1];
        for (int64_t i = n - 2; i >= 0; i--) q->pr[i] = most = q->pr[i] > most ? q->pr[i] : most;
    }
    double *out = q->precision + ((a * p->n_m + m) * p->n_t + t) * p->n_r * p->n_k + k;
    int64_t hit = 0;
    for (int64_t r = 0; r < p->n_r; r++) {
        double v = 0.0;
        int64_t c = q->need[r];
        if (c == 0) { /* recall point 0: the group's largest */
            v = tp > 0 ? q->pr[0] : 0.0;
        } else {
            if (hit > 0 && q->tp_cum[hit - 1] >= c) hit = 0; /* recall points out of order */
            while (hit < n && q->tp_cum[hit] < c) hit++;
            if (hit < n) v = q->pr[hit];
        }
        out[r * p->n_k] = v;
    }
}

/* Slice s: every group of a category with ground truth to count; -1 elsewhere. */
static void replicate_slice(Replicate *q, int64_t s) {
    const Resampler *p = q->p;
    int64_t a = p->s_area[s], m = p->s_max[s], n_k = p->n_k;
    if (p->s_prec[s]) running_sums(q, s); /* recall alone reads no scored counts */
    for (int64_t k = 0; k < n_k; k++) {
        int64_t npig = q->npig[a * n_k + k];
        if (npig > 0) {
            if (p->s_prec[s]) recall_counts(q, npig);
            for (int64_t t = 0; t < p->n_t; t++) replicate_group(q, s, t, k, npig);
            continue;
        }
        for (int64_t t = 0; t < p->n_t; t++) {
            int64_t at = (a * p->n_m + m) * p->n_t + t;
            q->recall[at * n_k + k] = -1.0;
            if (p->s_prec[s])
                for (int64_t r = 0; r < p->n_r; r++) q->precision[(at * p->n_r + r) * n_k + k] = -1.0;
        }
    }
}

static int run_replicate(Replicate *q) {
    const Resampler *p = q->p;
    const int64_t n_keys = p->n_a * p->n_k;
    q->npig = calloc((size_t)(n_keys > 0 ? n_keys : 1), sizeof *q->npig);
    q->need = malloc((size_t)(p->n_r ? p->n_r : 1) * sizeof *q->need);
    q->base_cum = malloc((size_t)(p->most_base ? p->most_base : 1) * sizeof *q->base_cum);
    q->corr_cum = malloc((size_t)(p->most_corr ? p->most_corr : 1) * sizeof *q->corr_cum);
    q->tp_cum = malloc((size_t)(p->most_tp ? p->most_tp : 1) * sizeof *q->tp_cum);
    q->pr = malloc((size_t)(p->most_tp ? p->most_tp : 1) * sizeof *q->pr);
    int status = -1;
    if (!q->npig || !q->need || !q->base_cum || !q->corr_cum || !q->tp_cum || !q->pr) goto done;
    for (int64_t j = 0; j < p->n_gt; j++) q->npig[p->gt_key[j]] += q->w[p->gt_image[j]];
    for (int64_t s = 0; s < p->n_s; s++) replicate_slice(q, s);
    status = 0;
done:
    free(q->npig);
    free(q->need);
    free(q->base_cum);
    free(q->corr_cum);
    free(q->tp_cum);
    free(q->pr);
    return status;
}

/* Weights of the right length, none negative, none so large that a running
   sum could leave the integers a double holds exactly.  1, or 0. */
static int weights_ok(const IouArr *w, const Resampler *p) {
    if (w->n != p->n_img) return 0;
    const int64_t limit = ((int64_t)1 << 53) / (p->most_terms + 1);
    for (Py_ssize_t i = 0; i < w->n; i++)
        if (IOU_I64P(*w)[i] < 0 || IOU_I64P(*w)[i] > limit) return 0;
    return 1;
}

/* The inputs of resample(). */
enum { RR_WEIGHT, RR_PRECISION, RR_RECALL, RR_NARGS };

static PyObject *py_resample(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *capsule, *o[RR_NARGS];
    IouArr x[RR_NARGS];
    memset(x, 0, sizeof x);
    if (!PyArg_ParseTuple(args, "OOOO", &capsule, &o[RR_WEIGHT], &o[RR_PRECISION], &o[RR_RECALL]))
        return NULL;
    const Resampler *p = PyCapsule_GetPointer(capsule, RESAMPLER);
    if (!p) return NULL;
    static const IouArg spec[RR_NARGS] = {
        {"image_weight", IOU_I64, 0, 1}, {"precision", IOU_F64, 1, 5}, {"recall", IOU_F64, 1, 4},
    };
    PyObject *result = NULL;
    if (iou_acquire_all(o, x, spec, RR_NARGS) < 0) goto done;
    int64_t am = p->n_a * p->n_m;
    if (iou_dim(&x[RR_PRECISION], 0) != p->n_a || iou_dim(&x[RR_PRECISION], 1) != p->n_m ||
        x[RR_PRECISION].n != am * p->n_t * p->n_r * p->n_k || iou_dim(&x[RR_RECALL], 0) != p->n_a ||
        x[RR_RECALL].n != am * p->n_t * p->n_k) {
        PyErr_SetString(PyExc_ValueError, "resample: precision must be [A, M, T, R, K], recall [A, M, T, K]");
        goto done;
    }
    if (!weights_ok(&x[RR_WEIGHT], p)) {
        PyErr_SetString(PyExc_ValueError,
                        "resample: image_weight must hold one multiplicity per image, none negative "
                        "nor beyond 2**53 over the most terms one count adds");
        goto done;
    }
    Replicate q = {p, IOU_I64P(x[RR_WEIGHT]), F64(x[RR_PRECISION]), F64(x[RR_RECALL]), NULL, NULL, NULL,
                   NULL, NULL, NULL};
    int status;
    Py_BEGIN_ALLOW_THREADS status = run_replicate(&q);
    Py_END_ALLOW_THREADS
    if (status < 0) PyErr_NoMemory();
    else result = Py_NewRef(Py_None);
done:
    iou_release(x, RR_NARGS);
    return result;
}

/* ------------------------------------------------ Open Images matching */

/* The inputs of oi_match(), see there. */
enum {
    OI_ROWS, OI_GROUP, OI_DT_XYXY, OI_SCORE, OI_CLASS, OI_GT_GROUP, OI_GT_GROUP_OF, OI_GT_XYXY,
    OI_NARGS
};

/* How many predictions ahead of the one matched its box and score are asked for. */
enum { OI_AHEAD = 16 };

/* A kept prediction's outcome (the bits of its flag). */
enum { OI_TP = 1, OI_INSIDE = 2, OI_HIT = 4 };

typedef struct {
    IouArr a[OI_NARGS];
    int64_t n_groups, n_classes, cap;
    double thr;
    int hits_in_entries;
    /* outputs: the kept predictions [K], the entries [E] and where each class's end */
    int64_t n_kept, n_entries;
    int64_t *rows, *match_gt, *entries, *class_end;
    uint8_t *flags;
    double *match_ov;
    /* the ground truths by group, plain boxes first (file order in each part) */
    int64_t *g_end, *g_row;
    double *g_box, *g_score;
    int64_t *g_rep;
    uint8_t *g_group_of, *taken;
} OiMatch;

/* np.maximum / np.minimum of two numbers that are not NaN (the second of two equal ones). */
static inline double oi_max(double a, double b) { return a > b ? a : b; }
static inline double oi_min(double a, double b) { return a < b ? a : b; }

/* The API's np_box_ops overlap of box d (area da) with box g: intersection
   over union, or over d's area (over_d); the same float operations as
   openimages._overlaps. */
static inline double oi_overlap(const double *d, double da, const double *g, int over_d) {
    double ih = oi_max(0.0, oi_min(d[3], g[3]) - oi_max(d[1], g[1]));
    double iw = oi_max(0.0, oi_min(d[2], g[2]) - oi_max(d[0], g[0]));
    double inter = ih * iw;
    if (over_d) return inter / da;
    double ga = (g[3] - g[1]) * (g[2] - g[0]);
    return inter / ((da + ga) - inter);
}

/* The first box of largest overlap with d among the packed boxes [lo, hi):
   its position, *best its overlap; -1 (and NaN) where an overlap is NaN
   (np.argmax would then pick no box reaching any threshold), -1 (and -inf)
   where there is none. */
static int64_t oi_best(const OiMatch *m, const double *d, double da, int64_t lo, int64_t hi,
                       int over_d, double *best) {
    int64_t at = -1;
    double top = -INFINITY;
    for (int64_t k = lo; k < hi; k++) {
        double v = oi_overlap(d, da, m->g_box + 4 * k, over_d);
        if (v != v) {
            *best = NAN;
            return -1;
        }
        if (v > top) {
            top = v;
            at = k;
        }
    }
    *best = top;
    return at;
}

/* The ground truths packed by group: g_end[g] the end of group g's (its
   start g_end[g - 1], or 0), plain boxes before group-of ones, each part in
   file order; their rows and boxes.  0, or -1 (no memory). */
static int oi_pack(OiMatch *m) {
    const IouArr *x = m->a;
    int64_t n_gt = x[OI_GT_GROUP].n;
    const uint8_t *group_of = U8(x[OI_GT_GROUP_OF]);
    const double *gx = F64(x[OI_GT_XYXY]);
    size_t n = (size_t)(n_gt ? n_gt : 1);
    m->g_end = calloc((size_t)m->n_groups + 1, sizeof *m->g_end);
    m->g_row = malloc(n * sizeof *m->g_row);
    m->g_box = malloc(4 * n * sizeof *m->g_box);
    m->g_score = malloc(n * sizeof *m->g_score);
    m->g_rep = malloc(n * sizeof *m->g_rep);
    m->g_group_of = malloc(n);
    m->taken = calloc(n, 1);
    if (!m->g_end || !m->g_row || !m->g_box || !m->g_score || !m->g_rep || !m->g_group_of || !m->taken)
        return -1;
    int64_t *start = m->g_end; /* each group's next free place, ending at its end */
    for (int64_t i = 0; i < n_gt; i++) start[iou_idx(&x[OI_GT_GROUP], i) + 1]++;
    for (int64_t g = 0; g < m->n_groups; g++) start[g + 1] += start[g];
    for (int pass = 0; pass < 2; pass++) /* plain boxes, then group-of ones */
        for (int64_t i = 0; i < n_gt; i++) {
            if ((group_of[i] != 0) != pass) continue;
            int64_t k = start[iou_idx(&x[OI_GT_GROUP], i)]++;
            m->g_row[k] = i;
            m->g_group_of[k] = (uint8_t)pass;
            memcpy(m->g_box + 4 * k, gx + 4 * i, 4 * sizeof *gx);
        }
    return 0; /* start[g] is now group g's end */
}

/* The kept predictions [lo, hi) of one group against its ground truths
   [g0, g1), group-of ones from gs: true positives, predictions inside a
   group-of box, and each box's highest prediction. */
static void oi_group(OiMatch *m, int64_t lo, int64_t hi, int64_t g0, int64_t gs, int64_t g1) {
    const IouArr *x = m->a;
    const double *dx = F64(x[OI_DT_XYXY]), *score = F64(x[OI_SCORE]);
    for (int64_t j = gs; j < g1; j++) {
        m->g_score[j] = 0.0;
        m->g_rep[j] = -1;
    }
    for (int64_t i = lo; i < hi; i++) {
        int64_t k = m->n_kept++, row = iou_idx(&x[OI_ROWS], i);
        if (i + OI_AHEAD < x[OI_ROWS].n) { /* rows far apart: ask for the next ones early */
            int64_t ahead = iou_idx(&x[OI_ROWS], i + OI_AHEAD);
            PREFETCH(dx + 4 * ahead);
            PREFETCH(score + ahead);
        }
        const double *d = dx + 4 * row;
        double da = (d[3] - d[1]) * (d[2] - d[0]), v;
        uint8_t flag = 0;
        int64_t gt = -1;
        double ov = 0.0;
        int64_t b = oi_best(m, d, da, g0, gs, 0, &v);
        if (b >= 0 && v >= m->thr && !m->taken[b]) { /* its best box, still free */
            m->taken[b] = 1;
            flag = OI_TP;
            gt = m->g_row[b];
            ov = v;
        } else if (gs < g1) {
            b = oi_best(m, d, da, gs, g1, 1, &v);
            if (b >= 0 && v >= m->thr) { /* inside a group-of box: the overlap kept for the box's hit */
                flag = OI_INSIDE;
                ov = v;
                if (score[row] > m->g_score[b]) {
                    m->g_score[b] = score[row];
                    m->g_rep[b] = k;
                }
            }
        }
        m->rows[k] = row;
        m->flags[k] = flag;
        m->match_gt[k] = gt;
        m->match_ov[k] = ov;
    }
    int64_t first = m->n_kept - (hi - lo);
    for (int64_t j = gs; j < g1; j++)
        if (m->g_rep[j] >= 0) { /* a hit: the box scored by its highest prediction */
            m->flags[m->g_rep[j]] |= OI_HIT;
            m->match_gt[m->g_rep[j]] = m->g_row[j];
        }
    for (int64_t k = first; k < m->n_kept; k++) {
        if (!(m->flags[k] & OI_INSIDE)) m->entries[m->n_entries++] = k;
        else if (!(m->flags[k] & OI_HIT)) m->match_ov[k] = 0.0;
    }
    if (m->hits_in_entries)
        for (int64_t j = gs; j < g1; j++)
            if (m->g_rep[j] >= 0) m->entries[m->n_entries++] = ~m->g_rep[j];
}

/* The entries by class, stably (each class's groups then follow one another in
   group order); class_end[c] where class c's end.  0, or -1 (no memory). */
static int oi_by_class(OiMatch *m) {
    const IouArr *x = m->a;
    int64_t n = m->n_entries;
    int32_t *cls = malloc((size_t)(n ? n : 1) * sizeof *cls);
    int64_t *out = malloc((size_t)(n ? n : 1) * sizeof *out);
    m->class_end = calloc((size_t)m->n_classes + 1, sizeof *m->class_end);
    if (!cls || !out || !m->class_end) {
        free(cls);
        free(out);
        return -1;
    }
    int64_t *next = m->class_end; /* each class's next free place, ending at its end */
    for (int64_t i = 0; i < n; i++) {
        int64_t e = m->entries[i];
        cls[i] = (int32_t)iou_idx(&x[OI_CLASS], m->rows[e < 0 ? ~e : e]);
        next[cls[i] + 1]++;
    }
    for (int64_t c = 0; c < m->n_classes; c++) next[c + 1] += next[c];
    for (int64_t i = 0; i < n; i++) out[next[cls[i]]++] = m->entries[i];
    free(cls);
    free(m->entries);
    m->entries = out;
    return 0;
}

static int run_oi_match(OiMatch *m) {
    const IouArr *x = m->a;
    int64_t n = x[OI_ROWS].n;
    size_t room = (size_t)(n ? n : 1);
    m->rows = malloc(room * sizeof *m->rows);
    m->match_gt = malloc(room * sizeof *m->match_gt);
    m->entries = malloc(room * sizeof *m->entries);
    m->flags = malloc(room);
    m->match_ov = malloc(room * sizeof *m->match_ov);
    if (!m->rows || !m->match_gt || !m->entries || !m->flags || !m->match_ov || oi_pack(m) < 0)
        return -1;
    for (int64_t i = 0, j; i < n; i = j) {
        int64_t g = iou_idx(&x[OI_GROUP], i);
        for (j = i + 1; j < n && iou_idx(&x[OI_GROUP], j) == g; j++) {
        }
        int64_t g0 = g ? m->g_end[g - 1] : 0, g1 = m->g_end[g], gs = g0;
        while (gs < g1 && !m->g_group_of[gs]) gs++;
        oi_group(m, i, j - i > m->cap ? i + m->cap : j, g0, gs, g1);
    }
    return oi_by_class(m);
}

static void free_oi_match(OiMatch *m) {
    iou_release(m->a, OI_NARGS);
    free(m->rows);
    free(m->match_gt);
    free(m->entries);
    free(m->class_end);
    free(m->flags);
    free(m->match_ov);
    free(m->g_end);
    free(m->g_row);
    free(m->g_box);
    free(m->g_score);
    free(m->g_rep);
    free(m->g_group_of);
    free(m->taken);
}

/* Shapes and indices checked once, the GIL held.  0, or -1 with an error set. */
static int check_oi_match(OiMatch *m) {
    const IouArr *x = m->a;
    int64_t n = x[OI_ROWS].n, n_dt = x[OI_SCORE].n, n_gt = x[OI_GT_GROUP].n;
    int ok = m->cap >= 0 && m->n_groups >= 0 && m->n_groups <= n + n_gt && x[OI_GROUP].n == n &&
             m->n_classes >= 0 && m->n_classes < INT32_MAX && x[OI_CLASS].n == n_dt &&
             iou_in_range(&x[OI_CLASS], m->n_classes) &&
             iou_dim(&x[OI_DT_XYXY], 0) == n_dt && x[OI_DT_XYXY].n == 4 * n_dt &&
             iou_dim(&x[OI_GT_XYXY], 0) == n_gt && x[OI_GT_XYXY].n == 4 * n_gt &&
             x[OI_GT_GROUP_OF].n == n_gt && iou_in_range(&x[OI_ROWS], n_dt) &&
             iou_in_range(&x[OI_GROUP], m->n_groups) && iou_in_range(&x[OI_GT_GROUP], m->n_groups);
    for (int64_t i = 1; ok && i < n; i++) ok = iou_idx(&x[OI_GROUP], i - 1) <= iou_idx(&x[OI_GROUP], i);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError,
                        "oi_match: inconsistent shapes, an index out of range, or groups not ascending");
        return -1;
    }
    return 0;
}

static PyObject *py_oi_match(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[OI_NARGS];
    OiMatch m;
    memset(&m, 0, sizeof m);
    if (!PyArg_ParseTuple(args, "OOOOOOOOLLdLp", &o[OI_ROWS], &o[OI_GROUP], &o[OI_DT_XYXY],
                          &o[OI_SCORE], &o[OI_CLASS], &o[OI_GT_GROUP], &o[OI_GT_GROUP_OF],
                          &o[OI_GT_XYXY], &m.n_groups, &m.n_classes, &m.thr, &m.cap,
                          &m.hits_in_entries))
        return NULL;
    static const IouArg spec[OI_NARGS] = {
        {"dt_rows", IOU_INDEX, 0, 1},   {"dt_group", IOU_INDEX, 0, 1},    {"dt_xyxy", IOU_F64, 0, 2},
        {"dt_score", IOU_F64, 0, 1},    {"dt_class", IOU_INDEX, 0, 1},    {"gt_group", IOU_INDEX, 0, 1},
        {"gt_group_of", IOU_BOOL, 0, 1}, {"gt_xyxy", IOU_F64, 0, 2},
    };
    PyObject *result = NULL;
    if (iou_acquire_all(o, m.a, spec, OI_NARGS) < 0 || check_oi_match(&m) < 0) goto done;
    int status;
    Py_BEGIN_ALLOW_THREADS status = run_oi_match(&m);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    size_t k = (size_t)m.n_kept;
    result = Py_BuildValue("(NNNNNN)", iou_block_take((char *)m.rows, k * 8),
                           iou_block_take((char *)m.flags, k), iou_block_take((char *)m.match_gt, k * 8),
                           iou_block_take((char *)m.match_ov, k * 8),
                           iou_block_take((char *)m.entries, (size_t)m.n_entries * 8),
                           iou_block_take((char *)m.class_end, (size_t)m.n_classes * 8));
    m.rows = m.match_gt = m.entries = m.class_end = NULL;
    m.flags = NULL;
    m.match_ov = NULL;
done:
    free_oi_match(&m);
    return result;
}

static PyMethodDef methods[] = {
    {"greedy", py_greedy, METH_VARARGS,
     "greedy(pd, pg, iou, gt_position, gt_crowd, gt_ignore, thresholds, keep_lane) -> "
     "(lane, dt, gt, kept_iou): buffers of int32[P'] x 3 and float64, the matches of every "
     "lane (area * T + threshold), by prediction then lane; kept_iou the overlaps of lane "
     "keep_lane's records, in their order (-1: none).  gt_ignore is [A, G]; at most 64 "
     "lanes."},
    {"match_boxes", py_match_boxes, METH_VARARGS,
     "match_boxes(d_groups, dt_rows, gt_sorted, g_starts, gt_rows, dt_xyxy, dt_area, gt_xyxy, "
     "gt_area, gt_iof, gt_position, gt_crowd, gt_ignore, thresholds, floor, keep_lane) -> "
     "(lane, dt, gt, kept_iou): greedy()'s records on the box kernel's pairs (bbIou of "
     "dt_xyxy[dt_rows[i]] with gt_xyxy[gt_rows[g]] for the ground truths g of group "
     "d_groups[i], those reaching floor), found as each prediction is matched, without the "
     "pair arrays.  Predictions in matching order (by group, then rank); gt_sorted and "
     "g_starts list each group's ground truths; gt_iof [rows of gt_xyxy] marks crowd "
     "regions' overlap; gt_ignore is [A, G]; at most 64 lanes."},
    {"oi_match", py_oi_match, METH_VARARGS,
     "oi_match(dt_rows, dt_group, dt_xyxy, dt_score, dt_class, gt_group, gt_group_of, gt_xyxy, "
     "n_groups, n_classes, thr, cap, hits_in_entries) -> (rows, flags, match_gt, match_ov, "
     "entries, class_end): the Open Images challenge's matching, one pass per group.  "
     "Predictions dt_rows (rows of dt_xyxy, dt_score and dt_class) in matching order, their "
     "groups dt_group ascending, at most cap of a group kept; the ground truths' groups "
     "gt_group (in [0, n_groups), n_groups at most the rows of both).  For the K kept: their "
     "rows (int64), flags (uint8: 1 true positive, 2 inside a group-of box, 4 the highest "
     "prediction of a group-of box hit), matched ground truth (int64, -1: none) and overlap "
     "(float64); the entries (int64[E]) by class, stably: per group the kept predictions not "
     "inside a group-of box (their positions k), then its hits, ~k of the prediction standing "
     "for each (none unless hits_in_entries); class_end (int64[n_classes]) where each class's "
     "entries end."},
    {"record_flags", py_record_flags, METH_VARARGS,
     "record_flags(lane, dt, gt, gt_ignore, gt_zero_id, outside, n_thresholds, n_areas) -> (tp, "
     "counted): bool buffers, what each match record counts as (pycocotools' id-0 defect "
     "included); gt_ignore [A, G], outside [A, D]."},
    {"dense_groups", py_dense_groups, METH_VARARGS,
     "dense_groups(gt_group, dt_group, n_total) -> (gt_code, dt_code, n_used): each group "
     "(in [0, n_total)) numbered by its rank among the groups that occur in either; "
     "int64 buffers."},
    {"group_order", py_group_order, METH_VARARGS,
     "group_order(group, score, n_groups) -> order: the buffer of int64[N], rows by group "
     "ascending (in [0, n_groups)), then score descending, equal ones in row order (a stable "
     "sort, as pycocotools' mergesort; -0.0 and 0.0 equal)."},
    {"accumulate", py_accumulate, METH_VARARGS,
     "accumulate(order, dt_category, dt_score, dt_rank, outside, rec_lane, rec_dt, rec_tp, "
     "rec_counted, lane_thresholds, n_thresholds, max_dets, npig, need, n_categories, n_areas, "
     "categories, slots, precision, recall, scores): fills pycocotools' arrays [T, R, K', A, M] "
     "and [T, K', A, M] for the categories listed, category categories[i] at k = slots[i] "
     "(entries of categories without ground truth to count are left as they are)."},
    {"resample_prepare", py_resample_prepare, METH_VARARGS,
     "resample_prepare(recall_thresholds, gt_key, gt_image, n_images, n_categories, "
     "n_thresholds, n_areas, n_max_dets, slice_area, slice_max, slice_precision, tp_at, "
     "tp_image, g_first, base_at, base_image, corr_at, corr_image, corr_delta, q_base, q_hi) "
     "-> capsule: the weight-free part of every bootstrap replicate (the numpy resampler's "
     "slices, concatenated), checked and copied once."},
    {"resample", py_resample, METH_VARARGS,
     "resample(capsule, image_weight, precision, recall): one replicate's precision "
     "[A, M, T, R, K] and recall [A, M, T, K] in the slices the capsule holds (-1 for a "
     "category without ground truth to count); the other entries are left as they are.  "
     "Releases the GIL."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cococore",
    "The COCO protocol's greedy matching and accumulation (pycocotools' rules, bit for bit).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cococore(void) {
    if (iou_block_ready() < 0) return NULL;
    return PyModule_Create(&module);
}
