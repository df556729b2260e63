/*
 * The columns a COCO JSON harness fills: the job of iou_eval/io/_cocojson.c
 * (results: image_id, category_id, bbox[4], score, and with keypoints the
 * keypoint values, their lengths and num_keypoints; ground truth: images,
 * categories, annotations' id, image_id, category_id, bbox, area, iscrowd),
 * done on another parser for tests/bench/bench_json_parsers.py.  Not part of
 * the package: a benchmark only.
 *
 * Every column is a growable byte vector; the Python side reads them through
 * ctypes (the layout below) and frees them with cols_free.
 */
#ifndef IOU_EVAL_BENCH_COLUMNS_H
#define IOU_EVAL_BENCH_COLUMNS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define BENCH_API extern "C"
#else
#define BENCH_API
#endif

/* flags, as the package's reader takes them */
#define F_BARE 2      /* buf holds list elements without the brackets */
#define F_KEYPOINTS 4 /* results with keypoints (a bbox may be null or absent) */

enum {
    C_IMAGE, C_CATEGORY, C_BBOX, C_SCORE, C_HAS_BBOX, C_KP_VALUES, C_KP_LENGTH, C_NUM_KP,
    C_AREA, C_ISCROWD, C_ID, C_IMG_ID, C_IMG_WIDTH, C_IMG_HEIGHT, C_IMG_NAME, C_CAT_ID,
    C_CAT_NAME, NCOL
};

typedef struct {
    unsigned char *data;
    size_t len, cap;
} BVec;

typedef struct {
    BVec col[NCOL];
    int64_t n; /* annotations */
} Columns;

static inline int bput(BVec *v, const void *p, size_t n) {
    if (v->len + n > v->cap) {
        size_t cap = v->cap ? v->cap : 4096;
        while (cap < v->len + n) cap *= 2;
        unsigned char *d = (unsigned char *)realloc(v->data, cap);
        if (!d) return -1;
        v->data = d;
        v->cap = cap;
    }
    memcpy(v->data + v->len, p, n);
    v->len += n;
    return 0;
}

/* A text column: its (unescaped) bytes, then a NUL as a separator. */
static inline int bput_text(BVec *v, const char *s, size_t n) {
    return bput(v, s, n) < 0 || bput(v, "", 1) < 0 ? -1 : 0;
}

static inline int key_eq(const char *k, size_t n, const char *lit, size_t m) {
    return n == m && memcmp(k, lit, m) == 0;
}
#define KEY(k, n, lit) key_eq(k, n, lit, sizeof(lit) - 1)

/* The annotation keys a harness reads: a bit each (as the package's reader). */
enum {
    K_IMAGE = 1, K_CATEGORY = 2, K_BBOX = 4, K_SCORE = 8, K_ID = 16, K_AREA = 32,
    K_ISCROWD = 64, K_KEYPOINTS = 128, K_NUM_KEYPOINTS = 256
};

static inline unsigned annotation_key(const char *k, size_t n) {
    switch (n) {
    case 2: return KEY(k, n, "id") ? K_ID : 0;
    case 4: return KEY(k, n, "bbox") ? K_BBOX : KEY(k, n, "area") ? K_AREA : 0;
    case 5: return KEY(k, n, "score") ? K_SCORE : 0;
    case 7: return KEY(k, n, "iscrowd") ? K_ISCROWD : 0;
    case 8: return KEY(k, n, "image_id") ? K_IMAGE : 0;
    case 9: return KEY(k, n, "keypoints") ? K_KEYPOINTS : 0;
    case 11: return KEY(k, n, "category_id") ? K_CATEGORY : 0;
    case 13: return KEY(k, n, "num_keypoints") ? K_NUM_KEYPOINTS : 0;
    default: return 0;
    }
}

typedef struct {
    int64_t image_id, category_id, id, kp_length, num_keypoints;
    double bbox[4], score, area;
    uint8_t has_bbox, iscrowd;
} Ann;

static inline void ann_init(Ann *a) {
    memset(a, 0, sizeof *a);
    a->area = NAN;
    a->num_keypoints = -1;
}

/* The annotation's columns (results: image, category, bbox, score and the
   keypoint columns; ground truth: image, category, bbox, area, iscrowd, id). */
static inline int put_ann(Columns *c, const Ann *a, int gt, int flags) {
    BVec *v = c->col;
    if (bput(&v[C_IMAGE], &a->image_id, 8) < 0 || bput(&v[C_CATEGORY], &a->category_id, 8) < 0 ||
        bput(&v[C_BBOX], a->bbox, 32) < 0)
        return -2;
    if (gt)
        return bput(&v[C_AREA], &a->area, 8) < 0 || bput(&v[C_ISCROWD], &a->iscrowd, 1) < 0 ||
                       bput(&v[C_ID], &a->id, 8) < 0
                   ? -2
                   : 0;
    if (bput(&v[C_SCORE], &a->score, 8) < 0) return -2;
    if ((flags & F_KEYPOINTS) &&
        (bput(&v[C_HAS_BBOX], &a->has_bbox, 1) < 0 || bput(&v[C_KP_LENGTH], &a->kp_length, 8) < 0 ||
         bput(&v[C_NUM_KP], &a->num_keypoints, 8) < 0))
        return -2;
    return 0;
}

/* Whether the annotation has what the package's reader requires (else: give up). */
static inline int ann_complete(const Ann *a, unsigned seen, int gt, int flags) {
    if ((seen & (K_IMAGE | K_CATEGORY)) != (K_IMAGE | K_CATEGORY)) return 0;
    if (!gt && !(seen & K_SCORE)) return 0;
    if (!a->has_bbox && !((flags & F_KEYPOINTS) && !gt)) return 0;
    if ((flags & F_KEYPOINTS) && !(seen & K_KEYPOINTS)) return 0;
    return 1;
}

BENCH_API void cols_free(Columns *c);

#endif
