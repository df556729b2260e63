/*
 * What every compiled part of iou-eval shares: arrays in (checked), growable
 * arrays, memory handed to numpy without a copy, and the few compiler
 * builtins, guarded.  Each C file includes it first ("../_common.h"), so the
 * checks are written once and every part gets the same ones.
 *
 * Arrays in.  iou_acquire() takes a C-contiguous buffer and checks its item
 * type by format character AND item size (a float64 array where int64 is
 * expected, or an int8 one where bool is, is refused with a TypeError naming
 * the argument), its number of dimensions where the caller says, and that it
 * is writable where it is written to.  Index columns (IOU_INDEX) are int32
 * or int64 and read through iou_idx(); iou_in_range() and
 * iou_is_permutation() check their values once, with the GIL held, before a
 * loop trusts them.
 *
 * Exactness: the parts are built with -O2 -ffp-contract=off (MSVC:
 * /fp:precise); the pragmas below say the same to compilers that read them,
 * so no product is fused into a sum.  Portability: GCC, Clang and MSVC; each
 * builtin has a plain-C fallback, taken with IOU_EVAL_PORTABLE_C defined.
 *
 * Everything here is static (inline where a function): a part that does not
 * use a helper gets no warning for it.
 */
#ifndef IOU_EVAL_COMMON_H
#define IOU_EVAL_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(_MSC_VER)
#include <intrin.h>
#endif
#if defined(_MSC_VER) && !defined(__clang__)
#pragma fp_contract(off)
#endif
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#if defined(__GNUC__) || defined(__clang__)
#define IOU_MAYBE_UNUSED __attribute__((unused))
#else
#define IOU_MAYBE_UNUSED
#endif

/* ------------------------------------------------------------ builtins */

/* Set bits of x. */
static inline int iou_bit_count(uint64_t x) {
#if (defined(__GNUC__) || defined(__clang__)) && !defined(IOU_EVAL_PORTABLE_C)
    return __builtin_popcountll(x);
#elif defined(_MSC_VER) && defined(_M_X64) && !defined(IOU_EVAL_PORTABLE_C)
    return (int)__popcnt64(x);
#else
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
#endif
}

/* Leading zero bits of x (not 0). */
static inline int iou_leading_zeros(uint64_t x) {
#if (defined(__GNUC__) || defined(__clang__)) && !defined(IOU_EVAL_PORTABLE_C)
    return __builtin_clzll(x);
#elif defined(_MSC_VER) && defined(_M_X64) && !defined(IOU_EVAL_PORTABLE_C)
    unsigned long i;
    _BitScanReverse64(&i, x);
    return 63 - (int)i;
#else
    int n = 0;
    while (!(x & ((uint64_t)1 << 63))) {
        x <<= 1;
        n++;
    }
    return n;
#endif
}

/* a * b into *out where both are >= 0 and the product fits an int64: 1;
   else 0 (*out untouched).  Sizes from arrays are multiplied through it. */
static inline int iou_mul_fits(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return 0;
#if (defined(__GNUC__) || defined(__clang__)) && !defined(IOU_EVAL_PORTABLE_C)
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return 0;
    *out = r;
    return 1;
#else
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
#endif
}

/* ------------------------------------------------------------ arrays in */

/* What an argument must hold (the format characters numpy gives). */
enum {
    IOU_F64 = 'd',   /* float64 */
    IOU_BOOL = '?',  /* numpy bool */
    IOU_BYTES = 'B', /* one byte an item: uint8, int8, bool or bytes (flags read as != 0) */
    IOU_I64 = 'q',   /* int64 */
    IOU_INDEX = 'i', /* int32 or int64, read through iou_idx() */
};

/* A C-contiguous buffer: n items (every dimension), wide: 8-byte indices. */
typedef struct {
    Py_buffer view;
    int held, wide;
    Py_ssize_t n;
} IouArr;

/* Whether format f (byte order stripped) with items of `size` bytes is `kind`. */
static inline int iou_kind_ok(const char *f, Py_ssize_t size, int kind, int *wide) {
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (!*f || f[1]) return 0; /* one item type, not a struct */
    switch (kind) {
    case IOU_F64:
        return *f == 'd' && size == 8;
    case IOU_BOOL:
        return *f == '?' && size == 1;
    case IOU_BYTES:
        return strchr("Bb?c", *f) != NULL && size == 1;
    case IOU_I64:
        *wide = 1;
        return strchr("lq", *f) != NULL && size == 8;
    case IOU_INDEX:
        *wide = size == 8;
        return (size == 4 && strchr("il", *f) != NULL) || (size == 8 && strchr("lq", *f) != NULL);
    default:
        return 0;
    }
}

static inline const char *iou_kind_name(int kind) {
    switch (kind) {
    case IOU_F64: return "float64";
    case IOU_BOOL: return "bool";
    case IOU_BYTES: return "one-byte items";
    case IOU_I64: return "int64";
    default: return "int32 or int64";
    }
}

/*
 * Acquire `obj` as a C-contiguous array of `kind` (writable if asked) with
 * `ndim` dimensions (-1: any) into *a.  0, or -1 with a TypeError or
 * ValueError naming `name`.  *a must start zeroed (iou_release() then
 * releases only what was acquired).
 */
static inline int iou_acquire(PyObject *obj, IouArr *a, int kind, int writable, int ndim,
                              const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &a->view, flags) < 0) return -1;
    a->held = 1;
    a->wide = 0;
    const char *f = a->view.format ? a->view.format : "B";
    Py_ssize_t size = a->view.itemsize;
    if (size <= 0 || !iou_kind_ok(f, size, kind, &a->wide)) {
        PyErr_Format(PyExc_TypeError, "%s: expected %s items, found format '%s' (%zd bytes)", name,
                     iou_kind_name(kind), f, size);
        return -1;
    }
    if (ndim >= 0 && a->view.ndim != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d dimension(s), found %d", name, ndim,
                     a->view.ndim);
        return -1;
    }
    a->n = a->view.len / size;
    return 0;
}

/* The arguments of a function: how each is read. */
typedef struct {
    const char *name;
    char kind;
    char writable;
    signed char ndim; /* -1: any */
} IouArg;

/* Acquire objs[i] as spec[i] into a[i] for i < count (a zeroed); 0, or -1 with an error set. */
static inline int iou_acquire_all(PyObject *const *objs, IouArr *a, const IouArg *spec, int count) {
    for (int i = 0; i < count; i++)
        if (iou_acquire(objs[i], &a[i], spec[i].kind, spec[i].writable, spec[i].ndim,
                        spec[i].name) < 0)
            return -1;
    return 0;
}

static inline void iou_release(IouArr *a, int count) {
    for (int i = 0; i < count; i++)
        if (a[i].held) {
            PyBuffer_Release(&a[i].view);
            a[i].held = 0;
        }
}

/* Dimension d of an acquired array (its length where it has none). */
static inline Py_ssize_t iou_dim(const IouArr *a, int d) {
    return d < a->view.ndim && a->view.shape ? a->view.shape[d] : a->n;
}

/* Index i of an IOU_INDEX or IOU_I64 column. */
static inline int64_t iou_idx(const IouArr *a, Py_ssize_t i) {
    return a->wide ? ((const int64_t *)a->view.buf)[i] : ((const int32_t *)a->view.buf)[i];
}

#define IOU_F64P(a) ((double *)(a).view.buf)
#define IOU_U8P(a) ((const uint8_t *)(a).view.buf)
#define IOU_I64P(a) ((int64_t *)(a).view.buf)

/* Whether every index of `a` lies in [0, n). */
static inline int iou_in_range(const IouArr *a, int64_t n) {
    for (Py_ssize_t i = 0; i < a->n; i++) {
        int64_t v = iou_idx(a, i);
        if (v < 0 || v >= n) return 0;
    }
    return 1;
}

/*
 * Whether `a` holds each of 0 .. a->n - 1 exactly once: 1, or 0 with a
 * ValueError naming `name` (a repeated or missing index would leave a slot
 * unwritten and send a later write out of bounds); -1: no memory.
 */
static inline int iou_is_permutation(const IouArr *a, const char *fn, const char *name) {
    Py_ssize_t n = a->n;
    uint8_t *seen = calloc((size_t)(n ? n : 1), 1);
    if (!seen) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t i = 0;
    for (; i < n; i++) {
        int64_t v = iou_idx(a, i);
        if (v < 0 || v >= n || seen[v]) break;
        seen[v] = 1;
    }
    free(seen);
    if (i < n) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %s must be a permutation of 0..%zd (each index once); position %zd "
                     "holds %lld",
                     fn, name, n - 1, i, (long long)iou_idx(a, i));
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------ growable arrays */

/* Bytes appended at the end, the room doubled as needed. */
typedef struct {
    char *data;
    size_t len, cap;
} IouVec;

/* Room for `more` bytes past len.  0, or -1 (no memory; v as it was). */
static inline int iou_vec_reserve(IouVec *v, size_t more) {
    if (more <= v->cap - v->len) return 0;
    if (more > SIZE_MAX / 2 - v->len) return -1;
    size_t cap = v->cap ? v->cap : 1 << 12;
    while (cap < v->len + more) cap *= 2;
    char *d = realloc(v->data, cap);
    if (!d) return -1;
    v->data = d;
    v->cap = cap;
    return 0;
}

static inline int iou_vec_put(IouVec *v, const void *src, size_t n) {
    if (iou_vec_reserve(v, n) < 0) return -1;
    memcpy(v->data + v->len, src, n);
    v->len += n;
    return 0;
}

/* One overlap pair appended to a kernel's three outputs: the prediction's
   position, the ground truth's row and their overlap. */
static inline int iou_pair_put(IouVec *pos, IouVec *gt, IouVec *overlap, int64_t at, int64_t g,
                               double v) {
    return iou_vec_put(pos, &at, sizeof at) < 0 || iou_vec_put(gt, &g, sizeof g) < 0 ||
                   iou_vec_put(overlap, &v, sizeof v) < 0
               ? -1
               : 0;
}

/* ptr grown (realloc) to `count` items of `type`; ok = 0 where it cannot be
   (ptr is then as it was, and still owned by the caller). */
#define IOU_GROW(ptr, type, count, ok)                                                  \
    do {                                                                                \
        type *grown_ = (size_t)(count) > SIZE_MAX / sizeof(type)                        \
                           ? NULL                                                       \
                           : realloc((ptr), sizeof(type) * (size_t)(count));            \
        if (grown_) (ptr) = grown_;                                                     \
        else (ok) = 0;                                                                  \
    } while (0)

/* ------------------------------------------------ memory handed to numpy */

/* Memory a part filled, viewed by numpy's frombuffer without a copy; freed
   with the last array that views it. */
typedef struct {
    PyObject_HEAD
    char *data;
    Py_ssize_t len;
} IouBlock;

static inline void iou_block_dealloc(PyObject *self) {
    free(((IouBlock *)self)->data);
    Py_TYPE(self)->tp_free(self);
}

static inline int iou_block_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    IouBlock *b = (IouBlock *)self;
    return PyBuffer_FillInfo(view, self, b->data, b->len, 0, flags);
}

static PyBufferProcs iou_block_as_buffer IOU_MAYBE_UNUSED = {iou_block_getbuffer, NULL};

static PyTypeObject IouBlockType IOU_MAYBE_UNUSED = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "iou_eval.Block",
    .tp_basicsize = sizeof(IouBlock),
    .tp_dealloc = iou_block_dealloc,
    .tp_as_buffer = &iou_block_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Bytes a compiled part wrote, viewed by numpy without a copy.",
};

/* Ready the block type (in a part's module init): 0, or -1 with an error set. */
static inline int iou_block_ready(void) { return PyType_Ready(&IouBlockType); }

/*
 * A block that takes `data` (len bytes, from malloc; NULL for none): it is
 * freed with the block, or here where the block cannot be made.  NULL with
 * an error set.
 */
static inline PyObject *iou_block_take(char *data, size_t len) {
    if (!data) data = malloc(1); /* numpy wants an address, even for no bytes */
    if (!data) return PyErr_NoMemory();
    IouBlock *b = PyObject_New(IouBlock, &IouBlockType);
    if (!b) {
        free(data);
        return NULL;
    }
    b->data = data;
    b->len = (Py_ssize_t)len;
    return (PyObject *)b;
}

/* A block that takes v's memory (v left empty, whatever happens). */
static inline PyObject *iou_block_of_vec(IouVec *v) {
    char *data = v->data;
    size_t len = v->len;
    v->data = NULL;
    v->len = v->cap = 0;
    return iou_block_take(data, len);
}

#endif /* IOU_EVAL_COMMON_H */
