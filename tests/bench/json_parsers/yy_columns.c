/*
 * COCO JSON columns on yyjson (a DOM parser in one C file): the document is
 * parsed whole (yyjson's own copy of the bytes, every value validated, numbers
 * correctly rounded), then walked object by object, keys in file order as the
 * package's reader reads them (a key written twice: give up).
 *
 * Built by tests/bench/bench_json_parsers.py with yyjson.c beside it.
 */
#include "columns.h"
#include "yyjson.h"

#define TAG(t, s) ((uint8_t)((t) | (s)))
#define T_UINT TAG(YYJSON_TYPE_NUM, YYJSON_SUBTYPE_UINT)
#define T_SINT TAG(YYJSON_TYPE_NUM, YYJSON_SUBTYPE_SINT)
#define T_REAL TAG(YYJSON_TYPE_NUM, YYJSON_SUBTYPE_REAL)
#define LIMIT 1000000000000000000LL /* more digits than 18: the package's reader gives up */

/* A whole number of at most 18 digits.  0, or -1. */
static inline int get_int(yyjson_val *v, int64_t *out) {
    uint8_t t = yyjson_get_tag(v);
    if (t == T_UINT) {
        uint64_t u = unsafe_yyjson_get_uint(v);
        if (u >= (uint64_t)LIMIT) return -1;
        *out = (int64_t)u;
        return 0;
    }
    if (t == T_SINT) {
        int64_t s = unsafe_yyjson_get_sint(v);
        if (s <= -LIMIT) return -1;
        *out = s;
        return 0;
    }
    return -1;
}

/* A number as a double: a whole one as its integer rounded once ("-0" is 0.0). */
static inline int get_num(yyjson_val *v, double *out) {
    uint8_t t = yyjson_get_tag(v);
    if (t == T_REAL) {
        *out = unsafe_yyjson_get_real(v);
        return 0;
    }
    int64_t i;
    if (get_int(v, &i) < 0) return -1;
    *out = (double)i;
    return 0;
}

static inline int get_num_or_null(yyjson_val *v, double *out) {
    if (yyjson_is_null(v)) {
        *out = NAN;
        return 0;
    }
    return get_num(v, out);
}

static int read_bbox(yyjson_val *v, Ann *a) {
    if (!yyjson_is_arr(v) || yyjson_arr_size(v) != 4) return -1;
    yyjson_val *x = yyjson_arr_get_first(v);
    for (int i = 0; i < 4; i++, x = unsafe_yyjson_get_next(x))
        if (get_num(x, &a->bbox[i]) < 0) return -1;
    a->has_bbox = 1;
    return 0;
}

static int read_keypoints(yyjson_val *v, Columns *c, Ann *a, int gt) {
    if (!yyjson_is_arr(v)) return -1;
    size_t n = yyjson_arr_size(v), i, max;
    yyjson_val *x;
    yyjson_arr_foreach(v, i, max, x) {
        double d;
        if (get_num(x, &d) < 0 || bput(&c->col[C_KP_VALUES], &d, 8) < 0) return -1;
    }
    a->kp_length = (int64_t)n;
    return n % 3 != 0 || (!gt && n == 0) ? -1 : 0;
}

static int read_field(yyjson_val *v, Columns *c, Ann *a, unsigned bit, int gt) {
    switch (bit) {
    case K_IMAGE: return get_int(v, &a->image_id);
    case K_CATEGORY: return get_int(v, &a->category_id);
    case K_BBOX: return yyjson_is_null(v) ? 0 : read_bbox(v, a);
    case K_SCORE: return gt && yyjson_is_null(v) ? 0 : get_num(v, &a->score);
    case K_AREA: return get_num_or_null(v, &a->area);
    case K_ID:
        if (yyjson_is_null(v)) return 0;
        if (yyjson_is_str(v)) return gt ? -1 : 0;
        return get_int(v, &a->id);
    case K_ISCROWD:
        if (yyjson_is_bool(v)) {
            a->iscrowd = yyjson_is_true(v);
            return 0;
        } else {
            int64_t i;
            if (get_int(v, &i) < 0) return -1;
            a->iscrowd = i != 0;
            return 0;
        }
    case K_KEYPOINTS: return read_keypoints(v, c, a, gt);
    case K_NUM_KEYPOINTS: return yyjson_is_null(v) ? 0 : get_int(v, &a->num_keypoints);
    default: return 0; /* another key: its value was validated by the parse */
    }
}

static int read_annotation(yyjson_val *obj, Columns *c, int gt, int flags) {
    if (!yyjson_is_obj(obj)) return -1;
    Ann a;
    ann_init(&a);
    unsigned seen = 0;
    size_t i, max;
    yyjson_val *k, *v;
    yyjson_obj_foreach(obj, i, max, k, v) {
        unsigned bit = annotation_key(unsafe_yyjson_get_str(k), unsafe_yyjson_get_len(k));
        if (!(flags & F_KEYPOINTS) && bit >= K_KEYPOINTS) bit = 0;
        if (read_field(v, c, &a, bit, gt) < 0 || (seen & bit)) return -1;
        seen |= bit;
    }
    if (!ann_complete(&a, seen, gt, flags)) return -1;
    c->n++;
    return put_ann(c, &a, gt, flags);
}

static int read_image(yyjson_val *obj, Columns *c) {
    if (!yyjson_is_obj(obj)) return -1;
    int64_t id = 0;
    double width = NAN, height = NAN;
    const char *name = NULL;
    size_t name_len = 0;
    unsigned seen = 0;
    size_t i, max;
    yyjson_val *k, *v;
    yyjson_obj_foreach(obj, i, max, k, v) {
        const char *s = unsafe_yyjson_get_str(k);
        size_t n = unsafe_yyjson_get_len(k);
        unsigned bit = 0;
        int e = 0;
        if (KEY(s, n, "id")) bit = 1, e = get_int(v, &id);
        else if (KEY(s, n, "file_name")) {
            bit = 2;
            if (yyjson_is_str(v)) name = unsafe_yyjson_get_str(v), name_len = unsafe_yyjson_get_len(v);
            else e = yyjson_is_null(v) ? 0 : -1;
        } else if (KEY(s, n, "width")) bit = 4, e = get_num_or_null(v, &width);
        else if (KEY(s, n, "height")) bit = 8, e = get_num_or_null(v, &height);
        if (e < 0 || (seen & bit)) return -1;
        seen |= bit;
    }
    if (!(seen & 1)) return -1;
    BVec *col = c->col;
    if (bput(&col[C_IMG_ID], &id, 8) < 0 || bput(&col[C_IMG_WIDTH], &width, 8) < 0 ||
        bput(&col[C_IMG_HEIGHT], &height, 8) < 0 || bput_text(&col[C_IMG_NAME], name ? name : "", name_len) < 0)
        return -2;
    return 0;
}

static int read_category(yyjson_val *obj, Columns *c) {
    if (!yyjson_is_obj(obj)) return -1;
    int64_t id = 0;
    const char *name = "";
    size_t name_len = 0;
    unsigned seen = 0;
    size_t i, max;
    yyjson_val *k, *v;
    yyjson_obj_foreach(obj, i, max, k, v) {
        const char *s = unsafe_yyjson_get_str(k);
        size_t n = unsafe_yyjson_get_len(k);
        unsigned bit = 0;
        int e = 0;
        if (KEY(s, n, "id")) bit = 1, e = get_int(v, &id);
        else if (KEY(s, n, "name")) {
            bit = 2;
            if (yyjson_is_str(v)) name = unsafe_yyjson_get_str(v), name_len = unsafe_yyjson_get_len(v);
            else e = yyjson_is_null(v) ? 0 : -1;
        }
        if (e < 0 || (seen & bit)) return -1;
        seen |= bit;
    }
    if (!(seen & 1)) return -1;
    if (bput(&c->col[C_CAT_ID], &id, 8) < 0 || bput_text(&c->col[C_CAT_NAME], name, name_len) < 0) return -2;
    return 0;
}

/* The document of buf[0:len] (with F_BARE: "[" buf "]", in *copy), or NULL. */
static yyjson_doc *parse(const uint8_t *buf, size_t len, int flags, char **copy) {
    *copy = NULL;
    if (!(flags & F_BARE)) return yyjson_read_opts((char *)buf, len, 0, NULL, NULL);
    /* A run of elements: bracketed in a copy, read in place there. */
    char *b = (char *)malloc(len + 2 + YYJSON_PADDING_SIZE);
    if (!b) return NULL;
    b[0] = '[';
    memcpy(b + 1, buf, len);
    b[len + 1] = ']';
    memset(b + len + 2, 0, YYJSON_PADDING_SIZE);
    *copy = b;
    return yyjson_read_opts(b, len + 2, YYJSON_READ_INSITU, NULL, NULL);
}

/* 0, -1 give up, -2 no memory. */
BENCH_API int yy_results(const uint8_t *buf, size_t len, int flags, Columns *c) {
    char *copy;
    yyjson_doc *doc = parse(buf, len, flags, &copy);
    if (!doc) {
        free(copy);
        return -1;
    }
    yyjson_val *root = yyjson_doc_get_root(doc);
    int e = yyjson_is_arr(root) ? 0 : -1;
    size_t i, max;
    yyjson_val *v;
    if (!e) yyjson_arr_foreach(root, i, max, v) {
            if ((e = read_annotation(v, c, 0, flags)) < 0) break;
        }
    yyjson_doc_free(doc);
    free(copy);
    return e;
}

BENCH_API int yy_dataset(const uint8_t *buf, size_t len, Columns *c) {
    yyjson_doc *doc = yyjson_read_opts((char *)buf, len, 0, NULL, NULL);
    if (!doc) return -1;
    yyjson_val *root = yyjson_doc_get_root(doc);
    int e = yyjson_is_obj(root) ? 0 : -1;
    unsigned seen = 0;
    size_t i, max, j, jmax;
    yyjson_val *k, *list, *v;
    if (!e) yyjson_obj_foreach(root, i, max, k, list) {
            const char *s = unsafe_yyjson_get_str(k);
            size_t n = unsafe_yyjson_get_len(k);
            unsigned bit = KEY(s, n, "images") ? 1 : KEY(s, n, "annotations") ? 2 : KEY(s, n, "categories") ? 4 : 0;
            if (!bit) continue;
            if ((seen & bit) || !yyjson_is_arr(list)) {
                e = -1;
                break;
            }
            seen |= bit;
            yyjson_arr_foreach(list, j, jmax, v) {
                e = bit == 1 ? read_image(v, c) : bit == 2 ? read_annotation(v, c, 1, 0) : read_category(v, c);
                if (e < 0) break;
            }
            if (e < 0) break;
        }
    if (!e && seen != 7) e = -1;
    yyjson_doc_free(doc);
    return e;
}

BENCH_API void cols_free(Columns *c) {
    for (int i = 0; i < NCOL; i++) free(c->col[i].data);
    memset(c, 0, sizeof *c);
}
