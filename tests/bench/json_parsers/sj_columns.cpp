/*
 * COCO JSON columns on simdjson's On-Demand API (C++17): a SIMD pass finds
 * the structure and checks UTF-8, then the values are read where they lie,
 * keys in file order as the package's reader reads them (a key written twice:
 * give up).  Values not asked for are skipped, not validated.  A fresh
 * parser each call (its buffers allocated for the document), as a reader
 * called once per file would have it.
 *
 * Built by tests/bench/bench_json_parsers.py with simdjson.cpp beside it.
 */
#include "columns.h"
#include "simdjson.h"

#include <cmath>
#include <memory>
#include <utility>

using namespace simdjson;

static const int64_t LIMIT = 1000000000000000000LL; /* past 18 digits: the package's reader gives up */

/* A whole number of at most 18 digits.  0, or -1. */
static inline int get_int(ondemand::value &v, int64_t *out) {
    int64_t i;
    if (v.get_int64().get(i) || i >= LIMIT || i <= -LIMIT) return -1;
    *out = i;
    return 0;
}

/* A number as a double: a whole one as its integer rounded once ("-0" is 0.0). */
static inline int get_num(ondemand::value &v, double *out) {
    ondemand::number n;
    if (v.get_number().get(n)) return -1;
    switch (n.get_number_type()) {
    case ondemand::number_type::floating_point_number:
        *out = n.get_double();
        return 0;
    case ondemand::number_type::signed_integer: {
        int64_t i = n.get_int64();
        if (i >= LIMIT || i <= -LIMIT) return -1;
        *out = (double)i;
        return 0;
    }
    case ondemand::number_type::unsigned_integer: {
        uint64_t u = n.get_uint64();
        if (u >= (uint64_t)LIMIT) return -1;
        *out = (double)(int64_t)u;
        return 0;
    }
    default:
        return -1;
    }
}

static inline int null_taken(ondemand::value &v, int *is) {
    bool b;
    if (v.is_null().get(b)) return -1;
    *is = b;
    return 0;
}

static inline int get_num_or_null(ondemand::value &v, double *out) {
    int is;
    if (null_taken(v, &is) < 0) return -1;
    if (is) {
        *out = NAN;
        return 0;
    }
    return get_num(v, out);
}

static int read_bbox(ondemand::value &v, Ann *a) {
    ondemand::array arr;
    if (v.get_array().get(arr)) return -1;
    int i = 0;
    for (auto item : arr) {
        ondemand::value x;
        if (i >= 4 || item.get(x) || get_num(x, &a->bbox[i]) < 0) return -1;
        i++;
    }
    if (i != 4) return -1;
    a->has_bbox = 1;
    return 0;
}

static int read_keypoints(ondemand::value &v, Columns *c, Ann *a, int gt) {
    ondemand::array arr;
    if (v.get_array().get(arr)) return -1;
    int64_t n = 0;
    for (auto item : arr) {
        ondemand::value x;
        double d;
        if (item.get(x) || get_num(x, &d) < 0 || bput(&c->col[C_KP_VALUES], &d, 8) < 0) return -1;
        n++;
    }
    a->kp_length = n;
    return n % 3 != 0 || (!gt && n == 0) ? -1 : 0;
}

static int read_field(ondemand::value &v, Columns *c, Ann *a, unsigned bit, int gt) {
    int is;
    switch (bit) {
    case K_IMAGE: return get_int(v, &a->image_id);
    case K_CATEGORY: return get_int(v, &a->category_id);
    case K_BBOX:
        if (null_taken(v, &is) < 0) return -1;
        return is ? 0 : read_bbox(v, a);
    case K_SCORE:
        if (gt) {
            if (null_taken(v, &is) < 0) return -1;
            if (is) return 0;
        }
        return get_num(v, &a->score);
    case K_AREA: return get_num_or_null(v, &a->area);
    case K_ID: {
        ondemand::json_type t;
        if (v.type().get(t)) return -1;
        if (t == ondemand::json_type::null) return null_taken(v, &is);
        if (t == ondemand::json_type::string) {
            std::string_view s;
            return gt || v.get_string().get(s) ? -1 : 0;
        }
        return get_int(v, &a->id);
    }
    case K_ISCROWD: {
        ondemand::json_type t;
        if (v.type().get(t)) return -1;
        if (t == ondemand::json_type::boolean) {
            bool b;
            if (v.get_bool().get(b)) return -1;
            a->iscrowd = b;
            return 0;
        }
        int64_t i;
        if (get_int(v, &i) < 0) return -1;
        a->iscrowd = i != 0;
        return 0;
    }
    case K_KEYPOINTS: return read_keypoints(v, c, a, gt);
    case K_NUM_KEYPOINTS:
        if (null_taken(v, &is) < 0) return -1;
        return is ? 0 : get_int(v, &a->num_keypoints);
    default: return 0; /* another key: skipped by the iteration (not validated) */
    }
}

static int read_annotation(ondemand::value &elem, Columns *c, int gt, int flags) {
    ondemand::object obj;
    if (elem.get_object().get(obj)) return -1;
    Ann a;
    ann_init(&a);
    unsigned seen = 0;
    for (auto f : obj) {
        ondemand::field field;
        if (std::move(f).get(field)) return -1;
        std::string_view k = field.escaped_key();
        unsigned bit = annotation_key(k.data(), k.size());
        if (!(flags & F_KEYPOINTS) && bit >= K_KEYPOINTS) bit = 0;
        if (read_field(field.value(), c, &a, bit, gt) < 0 || (seen & bit)) return -1;
        seen |= bit;
    }
    if (!ann_complete(&a, seen, gt, flags)) return -1;
    c->n++;
    return put_ann(c, &a, gt, flags);
}

/* A string or null into a text column. */
static int read_name(ondemand::value &v, BVec *col) {
    int is;
    if (null_taken(v, &is) < 0) return -1;
    if (is) return bput_text(col, "", 0);
    std::string_view s;
    if (v.get_string().get(s)) return -1;
    return bput_text(col, s.data(), s.size());
}

static int read_image(ondemand::value &elem, Columns *c) {
    ondemand::object obj;
    if (elem.get_object().get(obj)) return -1;
    int64_t id = 0;
    double width = NAN, height = NAN;
    unsigned seen = 0;
    for (auto f : obj) {
        ondemand::field field;
        if (std::move(f).get(field)) return -1;
        std::string_view k = field.escaped_key();
        unsigned bit = 0;
        int e = 0;
        if (KEY(k.data(), k.size(), "id")) bit = 1, e = get_int(field.value(), &id);
        else if (KEY(k.data(), k.size(), "file_name")) bit = 2, e = read_name(field.value(), &c->col[C_IMG_NAME]);
        else if (KEY(k.data(), k.size(), "width")) bit = 4, e = get_num_or_null(field.value(), &width);
        else if (KEY(k.data(), k.size(), "height")) bit = 8, e = get_num_or_null(field.value(), &height);
        if (e < 0 || (seen & bit)) return -1;
        seen |= bit;
    }
    if (!(seen & 1)) return -1;
    BVec *col = c->col;
    if (!(seen & 2) && bput_text(&col[C_IMG_NAME], "", 0) < 0) return -2;
    if (bput(&col[C_IMG_ID], &id, 8) < 0 || bput(&col[C_IMG_WIDTH], &width, 8) < 0 ||
        bput(&col[C_IMG_HEIGHT], &height, 8) < 0)
        return -2;
    return 0;
}

static int read_category(ondemand::value &elem, Columns *c) {
    ondemand::object obj;
    if (elem.get_object().get(obj)) return -1;
    int64_t id = 0;
    unsigned seen = 0;
    for (auto f : obj) {
        ondemand::field field;
        if (std::move(f).get(field)) return -1;
        std::string_view k = field.escaped_key();
        unsigned bit = 0;
        int e = 0;
        if (KEY(k.data(), k.size(), "id")) bit = 1, e = get_int(field.value(), &id);
        else if (KEY(k.data(), k.size(), "name")) bit = 2, e = read_name(field.value(), &c->col[C_CAT_NAME]);
        if (e < 0 || (seen & bit)) return -1;
        seen |= bit;
    }
    if (!(seen & 1)) return -1;
    if (!(seen & 2) && bput_text(&c->col[C_CAT_NAME], "", 0) < 0) return -2;
    return bput(&c->col[C_CAT_ID], &id, 8) < 0 ? -2 : 0;
}

/*
 * The bytes to parse: buf itself where the caller has SIMDJSON_PADDING
 * readable bytes past len (cap), else a padded copy; a run of elements
 * (F_BARE) bracketed in a copy.
 */
struct Input {
    std::unique_ptr<char[]> copy;
    padded_string_view view;
    bool ok = true;
    Input(const uint8_t *buf, size_t len, size_t cap, int flags) {
        if (!(flags & F_BARE) && cap >= len + SIMDJSON_PADDING) {
            view = padded_string_view((const char *)buf, len, cap);
            return;
        }
        size_t extra = (flags & F_BARE) ? 2 : 0;
        copy.reset(new (std::nothrow) char[len + extra + SIMDJSON_PADDING]);
        if (!copy) {
            ok = false;
            return;
        }
        char *p = copy.get();
        if (extra) *p++ = '[';
        memcpy(p, buf, len);
        if (extra) p[len] = ']';
        memset(copy.get() + len + extra, 0, SIMDJSON_PADDING);
        view = padded_string_view(copy.get(), len + extra, len + extra + SIMDJSON_PADDING);
    }
};

/* 0, -1 give up, -2 no memory. */
BENCH_API int sj_results(const uint8_t *buf, size_t len, size_t cap, int flags, Columns *c) {
    Input in(buf, len, cap, flags);
    if (!in.ok) return -2;
    ondemand::parser parser;
    ondemand::document doc;
    if (parser.iterate(in.view).get(doc)) return -1;
    ondemand::array arr;
    if (doc.get_array().get(arr)) return -1;
    for (auto item : arr) {
        ondemand::value v;
        if (item.get(v)) return -1;
        int e = read_annotation(v, c, 0, flags);
        if (e < 0) return e;
    }
    return doc.at_end() ? 0 : -1;
}

BENCH_API int sj_dataset(const uint8_t *buf, size_t len, size_t cap, Columns *c) {
    Input in(buf, len, cap, 0);
    if (!in.ok) return -2;
    ondemand::parser parser;
    ondemand::document doc;
    if (parser.iterate(in.view).get(doc)) return -1;
    ondemand::object root;
    if (doc.get_object().get(root)) return -1;
    unsigned seen = 0;
    for (auto f : root) {
        ondemand::field field;
        if (std::move(f).get(field)) return -1;
        std::string_view k = field.escaped_key();
        unsigned bit = KEY(k.data(), k.size(), "images")        ? 1
                       : KEY(k.data(), k.size(), "annotations") ? 2
                       : KEY(k.data(), k.size(), "categories")  ? 4
                                                                : 0;
        if (!bit) continue;
        if (seen & bit) return -1;
        seen |= bit;
        ondemand::array arr;
        if (field.value().get_array().get(arr)) return -1;
        for (auto item : arr) {
            ondemand::value v;
            if (item.get(v)) return -1;
            int e = bit == 1 ? read_image(v, c) : bit == 2 ? read_annotation(v, c, 1, 0) : read_category(v, c);
            if (e < 0) return e;
        }
    }
    if (seen != 7) return -1;
    return doc.at_end() ? 0 : -1;
}

BENCH_API void cols_free(Columns *c) {
    for (int i = 0; i < NCOL; i++) free(c->col[i].data);
    memset(c, 0, sizeof *c);
}

/* The kernel the On-Demand front end was compiled for (not chosen at run time). */
BENCH_API const char *sj_implementation(void) {
    return simdjson::builtin_implementation()->name().c_str();
}
