/*
 * pycocotools' bbIou of one pair of boxes, for the compiled parts that
 * compute box overlaps (geometry/_boxkernel.c lists a group's pairs,
 * protocols/_cococore.c matches boxes as it finds them): one definition,
 * so both give the same bits.  Include it after "../_common.h".
 *
 * Operation for operation as iou_eval.geometry.boxes.pair_iou_columns (the
 * numpy reference): min(x2) - max(x1) with numpy's minimum and maximum (a
 * NaN argument wins), zero unless both extents are positive, the union
 * (da + ga) - i, or da for a crowd region (intersection over the
 * prediction's area).
 */
#ifndef IOU_EVAL_BBIOU_H
#define IOU_EVAL_BBIOU_H

/* numpy's minimum and maximum: a NaN argument is the result. */
static inline double iou_np_min(double a, double b) { return (a < b || a != a) ? a : b; }
static inline double iou_np_max(double a, double b) { return (a > b || a != a) ? a : b; }

/* Whether boxes d and g (xyxy) overlap horizontally: pairs that do not
   have overlap 0, below any positive threshold. */
static inline int iou_bb_meet_x(const double *d, const double *g) {
    return iou_np_min(d[2], g[2]) - iou_np_max(d[0], g[0]) > 0;
}

/* The overlap of xyxy boxes d and g with w * h areas da and ga; a crowd
   region g is matched by intersection over the prediction's area. */
static inline double iou_bb_overlap(const double *d, double da, const double *g, double ga,
                                    int crowd) {
    double iw = iou_np_min(d[2], g[2]) - iou_np_max(d[0], g[0]);
    double ih = iou_np_min(d[3], g[3]) - iou_np_max(d[1], g[1]);
    if (!(iw > 0 && ih > 0)) return 0.0;
    double inter = iw * ih;
    double uni = crowd ? da : (da + ga) - inter;
    return inter / uni;
}

#endif /* IOU_EVAL_BBIOU_H */
