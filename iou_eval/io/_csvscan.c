/*
 * CSV and whitespace-separated text read straight into columns: numbers as
 * float64, repeated strings (image ids, class labels) as int64 codes into a
 * table of the distinct strings in the order they first appear, flags
 * (1, 0, -1 or empty) as int8.  No Python object per row.
 *
 * Optional, like iou_eval/io/_cocojson.c: the Python readers
 * (iou_eval/io/loaders/openimages.py, dota.py) stay the reference.  This
 * reader is sure of a narrower grammar: printable ASCII, tabs and line
 * ends (CRLF or LF); a cell quoted whole with no quote inside and no line
 * break; numbers in the strict syntax [+-]?(d+.?d*|.d+)([eE][+-]?d+)? or
 * with a decimal comma [+-]?d*,d+([eE][+-]?d+)?.  On anything else (a quote
 * doubled or inside a cell, a control or non-ASCII byte, a lone carriage
 * return, a malformed number, a row shorter than the header, a flag that is
 * not 1, 0, -1 or empty, ...) it returns None and the caller reads the file
 * with the Python path, which also says what is wrong with a bad file.
 * tests/unit/test_csv_scan.py compares the two on generated files and on
 * byte-level mutations of them.
 *
 * Numbers are correctly rounded, as float() and numpy's conversion are:
 * Clinger's fast path, else Eisel and Lemire's 128-bit product, else
 * CPython's own conversion once the GIL is held again (the number code is
 * the COCO JSON reader's; growable arrays and the blocks numpy views come
 * from iou_eval/_common.h).  The file is scanned with the GIL released.
 */
#include "../_common.h"
#include <math.h>

/* Cells in a row, and bytes in a cell, beyond which the reader gives up. */
#define MAX_CELLS 256
#define MAX_CELL 4000
#define MAX_NUMBER 1000

/* ----------------------------------------------------------------- numbers */

static inline int is_digit(uint8_t ch) { return (unsigned)(ch - '0') < 10; }

/* Eight digits read at once where the machine is little-endian (fast_float's
   SWAR steps); elsewhere one at a time. */
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_MSC_VER)
#define EIGHT_DIGITS 1
static inline int eight_digits(const uint8_t *p, uint64_t *value) {
    uint64_t v;
    memcpy(&v, p, 8);
    /* every byte '0'..'9': high nibbles 3, and adding 6 carries out of none */
    if (((v & 0xF0F0F0F0F0F0F0F0ULL) | (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) !=
        0x3333333333333333ULL)
        return 0;
    v -= 0x3030303030303030ULL;
    v = (v * 10) + (v >> 8);
    v = (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    *value = v;
    return 1;
}
#else
#define EIGHT_DIGITS 0
static inline int eight_digits(const uint8_t *p, uint64_t *value) {
    (void)p;
    (void)value;
    return 0;
}
#endif

/* The digits from p on added to sig (wrapping past 19 digits); the first non-digit. */
static inline const uint8_t *add_digits(const uint8_t *p, const uint8_t *e, uint64_t *sig) {
    uint64_t v = *sig, eight;
    while (EIGHT_DIGITS && e - p >= 8 && eight_digits(p, &eight)) {
        v = v * 100000000ULL + eight;
        p += 8;
    }
    while (p < e && is_digit(*p)) v = v * 10 + (uint64_t)(*p++ - '0');
    *sig = v;
    return p;
}
/* 128-bit truncated powers of five, 5**q scaled into [2**127, 2**128), for
   q in [POW5_MIN, POW5_MAX]: fast_float's table (script/table_generation.py),
   {high, low}; tests/unit/test_coco_reader.py checks it against Python's
   integers.  A power outside: CPython's conversion. */
#define POW5_MIN (-80)
#define POW5_MAX 40
static const uint64_t POW5[POW5_MAX - POW5_MIN + 1][2] = {
    {0x97c560ba6b0919a5ULL, 0xdccd879fc967d41aULL}, /* -80 */
    {0xbdb6b8e905cb600fULL, 0x5400e987bbc1c920ULL}, /* -79 */
    {0xed246723473e3813ULL, 0x290123e9aab23b68ULL}, /* -78 */
    {0x9436c0760c86e30bULL, 0xf9a0b6720aaf6521ULL}, /* -77 */
    {0xb94470938fa89bceULL, 0xf808e40e8d5b3e69ULL}, /* -76 */
    {0xe7958cb87392c2c2ULL, 0xb60b1d1230b20e04ULL}, /* -75 */
    {0x90bd77f3483bb9b9ULL, 0xb1c6f22b5e6f48c2ULL}, /* -74 */
    {0xb4ecd5f01a4aa828ULL, 0x1e38aeb6360b1af3ULL}, /* -73 */
    {0xe2280b6c20dd5232ULL, 0x25c6da63c38de1b0ULL}, /* -72 */
    {0x8d590723948a535fULL, 0x579c487e5a38ad0eULL}, /* -71 */
    {0xb0af48ec79ace837ULL, 0x2d835a9df0c6d851ULL}, /* -70 */
    {0xdcdb1b2798182244ULL, 0xf8e431456cf88e65ULL}, /* -69 */
    {0x8a08f0f8bf0f156bULL, 0x1b8e9ecb641b58ffULL}, /* -68 */
    {0xac8b2d36eed2dac5ULL, 0xe272467e3d222f3fULL}, /* -67 */
    {0xd7adf884aa879177ULL, 0x5b0ed81dcc6abb0fULL}, /* -66 */
    {0x86ccbb52ea94baeaULL, 0x98e947129fc2b4e9ULL}, /* -65 */
    {0xa87fea27a539e9a5ULL, 0x3f2398d747b36224ULL}, /* -64 */
    {0xd29fe4b18e88640eULL, 0x8eec7f0d19a03aadULL}, /* -63 */
    {0x83a3eeeef9153e89ULL, 0x1953cf68300424acULL}, /* -62 */
    {0xa48ceaaab75a8e2bULL, 0x5fa8c3423c052dd7ULL}, /* -61 */
    {0xcdb02555653131b6ULL, 0x3792f412cb06794dULL}, /* -60 */
    {0x808e17555f3ebf11ULL, 0xe2bbd88bbee40bd0ULL}, /* -59 */
    {0xa0b19d2ab70e6ed6ULL, 0x5b6aceaeae9d0ec4ULL}, /* -58 */
    {0xc8de047564d20a8bULL, 0xf245825a5a445275ULL}, /* -57 */
    {0xfb158592be068d2eULL, 0xeed6e2f0f0d56712ULL}, /* -56 */
    {0x9ced737bb6c4183dULL, 0x55464dd69685606bULL}, /* -55 */
    {0xc428d05aa4751e4cULL, 0xaa97e14c3c26b886ULL}, /* -54 */
    {0xf53304714d9265dfULL, 0xd53dd99f4b3066a8ULL}, /* -53 */
    {0x993fe2c6d07b7fabULL, 0xe546a8038efe4029ULL}, /* -52 */
    {0xbf8fdb78849a5f96ULL, 0xde98520472bdd033ULL}, /* -51 */
    {0xef73d256a5c0f77cULL, 0x963e66858f6d4440ULL}, /* -50 */
    {0x95a8637627989aadULL, 0xdde7001379a44aa8ULL}, /* -49 */
    {0xbb127c53b17ec159ULL, 0x5560c018580d5d52ULL}, /* -48 */
    {0xe9d71b689dde71afULL, 0xaab8f01e6e10b4a6ULL}, /* -47 */
    {0x9226712162ab070dULL, 0xcab3961304ca70e8ULL}, /* -46 */
    {0xb6b00d69bb55c8d1ULL, 0x3d607b97c5fd0d22ULL}, /* -45 */
    {0xe45c10c42a2b3b05ULL, 0x8cb89a7db77c506aULL}, /* -44 */
    {0x8eb98a7a9a5b04e3ULL, 0x77f3608e92adb242ULL}, /* -43 */
    {0xb267ed1940f1c61cULL, 0x55f038b237591ed3ULL}, /* -42 */
    {0xdf01e85f912e37a3ULL, 0x6b6c46dec52f6688ULL}, /* -41 */
    {0x8b61313bbabce2c6ULL, 0x2323ac4b3b3da015ULL}, /* -40 */
    {0xae397d8aa96c1b77ULL, 0xabec975e0a0d081aULL}, /* -39 */
    {0xd9c7dced53c72255ULL, 0x96e7bd358c904a21ULL}, /* -38 */
    {0x881cea14545c7575ULL, 0x7e50d64177da2e54ULL}, /* -37 */
    {0xaa242499697392d2ULL, 0xdde50bd1d5d0b9e9ULL}, /* -36 */
    {0xd4ad2dbfc3d07787ULL, 0x955e4ec64b44e864ULL}, /* -35 */
    {0x84ec3c97da624ab4ULL, 0xbd5af13bef0b113eULL}, /* -34 */
    {0xa6274bbdd0fadd61ULL, 0xecb1ad8aeacdd58eULL}, /* -33 */
    {0xcfb11ead453994baULL, 0x67de18eda5814af2ULL}, /* -32 */
    {0x81ceb32c4b43fcf4ULL, 0x80eacf948770ced7ULL}, /* -31 */
    {0xa2425ff75e14fc31ULL, 0xa1258379a94d028dULL}, /* -30 */
    {0xcad2f7f5359a3b3eULL, 0x096ee45813a04330ULL}, /* -29 */
    {0xfd87b5f28300ca0dULL, 0x8bca9d6e188853fcULL}, /* -28 */
    {0x9e74d1b791e07e48ULL, 0x775ea264cf55347eULL}, /* -27 */
    {0xc612062576589ddaULL, 0x95364afe032a819eULL}, /* -26 */
    {0xf79687aed3eec551ULL, 0x3a83ddbd83f52205ULL}, /* -25 */
    {0x9abe14cd44753b52ULL, 0xc4926a9672793543ULL}, /* -24 */
    {0xc16d9a0095928a27ULL, 0x75b7053c0f178294ULL}, /* -23 */
    {0xf1c90080baf72cb1ULL, 0x5324c68b12dd6339ULL}, /* -22 */
    {0x971da05074da7beeULL, 0xd3f6fc16ebca5e04ULL}, /* -21 */
    {0xbce5086492111aeaULL, 0x88f4bb1ca6bcf585ULL}, /* -20 */
    {0xec1e4a7db69561a5ULL, 0x2b31e9e3d06c32e6ULL}, /* -19 */
    {0x9392ee8e921d5d07ULL, 0x3aff322e62439fd0ULL}, /* -18 */
    {0xb877aa3236a4b449ULL, 0x09befeb9fad487c3ULL}, /* -17 */
    {0xe69594bec44de15bULL, 0x4c2ebe687989a9b4ULL}, /* -16 */
    {0x901d7cf73ab0acd9ULL, 0x0f9d37014bf60a11ULL}, /* -15 */
    {0xb424dc35095cd80fULL, 0x538484c19ef38c95ULL}, /* -14 */
    {0xe12e13424bb40e13ULL, 0x2865a5f206b06fbaULL}, /* -13 */
    {0x8cbccc096f5088cbULL, 0xf93f87b7442e45d4ULL}, /* -12 */
    {0xafebff0bcb24aafeULL, 0xf78f69a51539d749ULL}, /* -11 */
    {0xdbe6fecebdedd5beULL, 0xb573440e5a884d1cULL}, /* -10 */
    {0x89705f4136b4a597ULL, 0x31680a88f8953031ULL}, /* -9 */
    {0xabcc77118461cefcULL, 0xfdc20d2b36ba7c3eULL}, /* -8 */
    {0xd6bf94d5e57a42bcULL, 0x3d32907604691b4dULL}, /* -7 */
    {0x8637bd05af6c69b5ULL, 0xa63f9a49c2c1b110ULL}, /* -6 */
    {0xa7c5ac471b478423ULL, 0x0fcf80dc33721d54ULL}, /* -5 */
    {0xd1b71758e219652bULL, 0xd3c36113404ea4a9ULL}, /* -4 */
    {0x83126e978d4fdf3bULL, 0x645a1cac083126eaULL}, /* -3 */
    {0xa3d70a3d70a3d70aULL, 0x3d70a3d70a3d70a4ULL}, /* -2 */
    {0xccccccccccccccccULL, 0xcccccccccccccccdULL}, /* -1 */
    {0x8000000000000000ULL, 0x0000000000000000ULL}, /* 0 */
    {0xa000000000000000ULL, 0x0000000000000000ULL}, /* 1 */
    {0xc800000000000000ULL, 0x0000000000000000ULL}, /* 2 */
    {0xfa00000000000000ULL, 0x0000000000000000ULL}, /* 3 */
    {0x9c40000000000000ULL, 0x0000000000000000ULL}, /* 4 */
    {0xc350000000000000ULL, 0x0000000000000000ULL}, /* 5 */
    {0xf424000000000000ULL, 0x0000000000000000ULL}, /* 6 */
    {0x9896800000000000ULL, 0x0000000000000000ULL}, /* 7 */
    {0xbebc200000000000ULL, 0x0000000000000000ULL}, /* 8 */
    {0xee6b280000000000ULL, 0x0000000000000000ULL}, /* 9 */
    {0x9502f90000000000ULL, 0x0000000000000000ULL}, /* 10 */
    {0xba43b74000000000ULL, 0x0000000000000000ULL}, /* 11 */
    {0xe8d4a51000000000ULL, 0x0000000000000000ULL}, /* 12 */
    {0x9184e72a00000000ULL, 0x0000000000000000ULL}, /* 13 */
    {0xb5e620f480000000ULL, 0x0000000000000000ULL}, /* 14 */
    {0xe35fa931a0000000ULL, 0x0000000000000000ULL}, /* 15 */
    {0x8e1bc9bf04000000ULL, 0x0000000000000000ULL}, /* 16 */
    {0xb1a2bc2ec5000000ULL, 0x0000000000000000ULL}, /* 17 */
    {0xde0b6b3a76400000ULL, 0x0000000000000000ULL}, /* 18 */
    {0x8ac7230489e80000ULL, 0x0000000000000000ULL}, /* 19 */
    {0xad78ebc5ac620000ULL, 0x0000000000000000ULL}, /* 20 */
    {0xd8d726b7177a8000ULL, 0x0000000000000000ULL}, /* 21 */
    {0x878678326eac9000ULL, 0x0000000000000000ULL}, /* 22 */
    {0xa968163f0a57b400ULL, 0x0000000000000000ULL}, /* 23 */
    {0xd3c21bcecceda100ULL, 0x0000000000000000ULL}, /* 24 */
    {0x84595161401484a0ULL, 0x0000000000000000ULL}, /* 25 */
    {0xa56fa5b99019a5c8ULL, 0x0000000000000000ULL}, /* 26 */
    {0xcecb8f27f4200f3aULL, 0x0000000000000000ULL}, /* 27 */
    {0x813f3978f8940984ULL, 0x4000000000000000ULL}, /* 28 */
    {0xa18f07d736b90be5ULL, 0x5000000000000000ULL}, /* 29 */
    {0xc9f2c9cd04674edeULL, 0xa400000000000000ULL}, /* 30 */
    {0xfc6f7c4045812296ULL, 0x4d00000000000000ULL}, /* 31 */
    {0x9dc5ada82b70b59dULL, 0xf020000000000000ULL}, /* 32 */
    {0xc5371912364ce305ULL, 0x6c28000000000000ULL}, /* 33 */
    {0xf684df56c3e01bc6ULL, 0xc732000000000000ULL}, /* 34 */
    {0x9a130b963a6c115cULL, 0x3c7f400000000000ULL}, /* 35 */
    {0xc097ce7bc90715b3ULL, 0x4b9f100000000000ULL}, /* 36 */
    {0xf0bdc21abb48db20ULL, 0x1e86d40000000000ULL}, /* 37 */
    {0x96769950b50d88f4ULL, 0x1314448000000000ULL}, /* 38 */
    {0xbc143fa4e250eb31ULL, 0x17d955a000000000ULL}, /* 39 */
    {0xeb194f8e1ae525fdULL, 0x5dcfab0800000000ULL}, /* 40 */
};

/* The high 64 bits of a * b, and the low ones in *lo. */
static inline uint64_t mul_128(uint64_t a, uint64_t b, uint64_t *lo) {
#if defined(__SIZEOF_INT128__) && !defined(IOU_EVAL_PORTABLE_C)
    __uint128_t r = (__uint128_t)a * b;
    *lo = (uint64_t)r;
    return (uint64_t)(r >> 64);
#elif defined(_MSC_VER) && defined(_M_X64) && !defined(IOU_EVAL_PORTABLE_C)
    uint64_t hi;
    *lo = _umul128(a, b, &hi);
    return hi;
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/* floor(x / 2**16) without relying on how >> treats negative numbers. */
static inline int64_t floor_shift16(int64_t x) { return x >= 0 ? x >> 16 : -((-x + 65535) >> 16); }

/*
 * w * 10**q correctly rounded to a double (w > 0): Eisel and Lemire's
 * algorithm, as fast_float's compute_float writes it.  1 and *out, or 0
 * when not sure (a power outside the table, a subnormal or infinite
 * result, or a product too close to a halfway point to tell).
 */
static int eisel_lemire(uint64_t w, int64_t q, double *out) {
    if (q < POW5_MIN || q > POW5_MAX) return 0;
    int lz = iou_leading_zeros(w);
    w <<= lz;
    const uint64_t *p5 = POW5[q - POW5_MIN];
    uint64_t lo, hi = mul_128(w, p5[0], &lo);
    /* 55 bits are needed: the implicit bit, one to round, one the product may lose. */
    const uint64_t mask = UINT64_MAX >> 55;
    if ((hi & mask) == mask) {
        uint64_t lo2, hi2 = mul_128(w, p5[1], &lo2);
        (void)lo2;
        lo += hi2;
        if (hi2 > lo) hi++;
    }
    /* fast_float's former guard, kept: outside these exponents an all-ones
       low word may hide a carry that only more bits would show. */
    if (lo == UINT64_MAX && (q < -27 || q > 55)) return 0;
    int upperbit = (int)(hi >> 63);
    int shift = upperbit + 64 - 52 - 3;
    uint64_t mantissa = hi >> shift;
    int64_t power2 = floor_shift16((152170 + 65536) * q) + 63 + upperbit - lz + 1023;
    if (power2 <= 0) return 0; /* subnormal */
    /* Exactly halfway between two doubles: round to even, not up. */
    if (lo <= 1 && q >= -4 && q <= 23 && (mantissa & 3) == 1 && (mantissa << shift) == hi)
        mantissa &= ~(uint64_t)1;
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if (mantissa >= ((uint64_t)2 << 52)) {
        mantissa = (uint64_t)1 << 52;
        power2++;
    }
    mantissa &= ~((uint64_t)1 << 52);
    if (power2 >= 0x7FF) return 0; /* infinite */
    uint64_t bits = mantissa | ((uint64_t)power2 << 52);
    memcpy(out, &bits, sizeof bits);
    return 1;
}

/* Powers of ten that are exact doubles. */
static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};


/*
 * A number cell (stripped, n bytes): *out and 1; 0 when only CPython's
 * conversion can tell (more than 19 significant digits, a power of ten
 * outside the table, a subnormal, an overflow); -1 when it is not a number
 * of the strict syntax (give up).
 */
static int parse_number(const uint8_t *p, size_t n, int comma_ok, double *out) {
    const uint8_t *e = p + n;
    if (n == 0 || n > MAX_NUMBER) return -1;
    int neg = *p == '-';
    if (*p == '+' || *p == '-') p++;
    const uint8_t *d = p;
    uint64_t sig = 0;
    p = add_digits(p, e, &sig);
    int int_digits = (int)(p - d), frac_digits = 0;
    if (p < e && (*p == '.' || (comma_ok && *p == ','))) {
        int comma = *p == ',';
        const uint8_t *f = ++p;
        p = add_digits(p, e, &sig);
        frac_digits = (int)(p - f);
        /* "5." is a number, "5," is not; "." and "," alone are not */
        if (comma ? !frac_digits : !(int_digits + frac_digits)) return -1;
    } else if (!int_digits) {
        return -1;
    }
    int64_t exp10 = -frac_digits;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = p < e && *p == '-';
        if (p < e && (*p == '+' || *p == '-')) p++;
        const uint8_t *f = p;
        int64_t ev = 0;
        for (; p < e && is_digit(*p); p++)
            if (ev < 100000) ev = ev * 10 + (*p - '0');
        if (p == f) return -1;
        exp10 += eneg ? -ev : ev;
    }
    if (p != e) return -1;
    int digits = int_digits + frac_digits;
    if (digits > 19) {
        /* Leading zeros add nothing to sig: they do not count against its 19 digits. */
        int lead = 0;
        for (const uint8_t *q = d; q < e && (*q == '0' || *q == '.' || *q == ','); q++)
            lead += *q == '0';
        digits -= lead;
        if (digits > 19) return 0;
    }
    double v;
    if (sig == 0) {
        v = 0.0;
    } else if (sig < ((uint64_t)1 << 53) && exp10 >= -22 && exp10 <= 22) {
        /* Clinger's case: both exact, one operation rounds once. */
        v = (double)sig;
        v = exp10 < 0 ? v / POW10[-exp10] : v * POW10[exp10];
    } else if (!eisel_lemire(sig, exp10, &v)) {
        return 0;
    }
    *out = neg ? -v : v;
    return 1;
}

/* ------------------------------------------------------------------- cells */

/* What a byte is to the tokenizer. */
enum { B_TEXT, B_DELIM, B_NEWLINE, B_CR, B_QUOTE, B_BAD, B_SPACE };

typedef struct {
    const uint8_t *s;
    size_t len;
    int quoted;
} Cell;

typedef struct {
    const uint8_t *base, *p, *end;
    uint8_t cls[256];
    int whitespace; /* cells split on runs of spaces and tabs (no quotes) */
} Scanner;

static void scanner_init(Scanner *sc, const uint8_t *base, size_t len, int delimiter) {
    sc->base = sc->p = base;
    sc->end = base + len;
    for (int b = 0; b < 256; b++) sc->cls[b] = (b >= 0x20 && b < 0x7f) ? B_TEXT : B_BAD;
    sc->cls['\n'] = B_NEWLINE;
    sc->cls['\r'] = B_CR;
    sc->whitespace = delimiter < 0;
    if (sc->whitespace) {
        /* str.split()'s ASCII whitespace: a carriage return is one too */
        static const char space[] = " \t\r\x0b\x0c\x1c\x1d\x1e\x1f";
        for (const char *c = space; *c; c++) sc->cls[(uint8_t)*c] = B_SPACE;
    } else {
        sc->cls['\t'] = B_TEXT;
        sc->cls['"'] = B_QUOTE;
        sc->cls[(uint8_t)delimiter] = B_DELIM;
    }
}

static inline int is_blank(uint8_t ch) { return ch == ' ' || ch == '\t'; }

/* A cell's bytes without the spaces and tabs around them (str.strip on ASCII). */
static inline void strip(Cell *c) {
    while (c->len && is_blank(c->s[0])) c->s++, c->len--;
    while (c->len && is_blank(c->s[c->len - 1])) c->len--;
}

/* The end of a line at p: 1 and past it ("\n", "\r\n", or the end of the
   data), 0 if p is not at one, -1 for a lone "\r" (give up). */
static inline int line_end(Scanner *sc, const uint8_t **p) {
    const uint8_t *q = *p;
    if (q == sc->end) return 1;
    if (*q == '\n') {
        *p = q + 1;
        return 1;
    }
    if (*q == '\r') {
        if (q + 1 < sc->end && q[1] == '\n') {
            *p = q + 2;
            return 1;
        }
        return -1;
    }
    return 0;
}

/*
 * The cells of the row at sc->p (each stripped), sc->p moved past its line
 * end.  The number of cells, or -1 (give up).  A CSV row of an empty line
 * has one empty cell; a whitespace row of a blank line has none.
 */
static int read_row(Scanner *sc, Cell *cells) {
    const uint8_t *p = sc->p, *e = sc->end;
    const uint8_t *cls = sc->cls;
    int n = 0;
    if (sc->whitespace) {
        for (;;) {
            while (p < e && cls[*p] == B_SPACE) p++;
            int end = line_end(sc, &p);
            if (end < 0) return -1;
            if (end) break;
            const uint8_t *s = p;
            while (p < e && cls[*p] == B_TEXT) p++;
            if (p < e && cls[*p] == B_BAD) return -1;
            if (n == MAX_CELLS || (size_t)(p - s) > MAX_CELL) return -1;
            cells[n].s = s;
            cells[n].len = (size_t)(p - s);
            cells[n].quoted = 0;
            n++;
        }
        sc->p = p;
        return n;
    }
    for (;;) {
        if (n == MAX_CELLS) return -1;
        Cell *c = &cells[n++];
        c->quoted = p < e && *p == '"';
        if (c->quoted) {
            const uint8_t *s = ++p;
            while (p < e && (cls[*p] == B_TEXT || cls[*p] == B_DELIM)) p++;
            if (p == e || *p != '"') return -1; /* a line break, a bad byte, or no closing quote */
            c->s = s;
            c->len = (size_t)(p - s);
            p++;
        } else {
            const uint8_t *s = p;
            while (p < e && cls[*p] == B_TEXT) p++;
            c->s = s;
            c->len = (size_t)(p - s);
        }
        if (c->len > MAX_CELL) return -1;
        strip(c);
        if (p < e && cls[*p] == B_DELIM) {
            p++;
            continue;
        }
        if (line_end(sc, &p) != 1) return -1; /* a quote, a bad byte, text after a closing quote */
        break;
    }
    sc->p = p;
    return n;
}

/* Whether every cell of a row is empty. */
static int blank_row(const Cell *cells, int n) {
    for (int i = 0; i < n; i++)
        if (cells[i].len) return 0;
    return 1;
}

/* ---------------------------------------------------------- distinct texts */

typedef struct {
    const uint8_t *s; /* in one of the buffers read */
    int64_t len;
} Text;

/* Open addressing: slots hold a text's index + 1 (0: empty). */
typedef struct {
    IouVec texts; /* Text */
    int64_t *slots;
    uint64_t *hashes; /* of each text */
    size_t mask, count;
} Strings;

static inline uint64_t hash_bytes(const uint8_t *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL ^ n;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ULL;
    return h ^ (h >> 29);
}

static int strings_grow(Strings *t) {
    size_t cap = t->mask ? (t->mask + 1) * 2 : 1024;
    int64_t *slots = calloc(cap, sizeof *slots);
    uint64_t *hashes = realloc(t->hashes, cap / 2 * sizeof *hashes);
    if (!slots || !hashes) {
        free(slots);
        if (hashes) t->hashes = hashes;
        return -1;
    }
    t->hashes = hashes;
    for (size_t i = 0; i < t->count; i++) {
        size_t j = (size_t)hashes[i] & (cap - 1);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = (int64_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

/* The code of the text s[0:n] (added if new); -1 no memory. */
static int64_t strings_code(Strings *t, const uint8_t *s, size_t n) {
    if (2 * (t->count + 1) > t->mask + 1 && strings_grow(t) < 0) return -1;
    uint64_t h = hash_bytes(s, n);
    size_t j = (size_t)h & t->mask;
    const Text *texts = (const Text *)t->texts.data;
    for (int64_t k; (k = t->slots[j]) != 0; j = (j + 1) & t->mask) {
        const Text *x = &texts[k - 1];
        if (t->hashes[k - 1] == h && (size_t)x->len == n && !memcmp(x->s, s, n)) return k - 1;
    }
    Text x = {s, (int64_t)n};
    if (iou_vec_put(&t->texts, &x, sizeof x) < 0) return -1;
    t->hashes[t->count] = h;
    t->slots[j] = (int64_t)++t->count;
    return (int64_t)t->count - 1;
}

static void strings_free(Strings *t) {
    free(t->texts.data);
    free(t->slots);
    free(t->hashes);
}

/* ---------------------------------------------------------------- columns */

/* A number CPython converts once the GIL is held: its characters, and
   which double of which column it fills. */
typedef struct {
    const uint8_t *s;
    int64_t index;
    int32_t len, column;
} Deferred;

/* What a column is read as: kinds[i] of the call. */
enum { K_SKIP = '.', K_FLOAT = 'f', K_TEXT = 's', K_FLAG = 'g', K_INT = 'i' };

typedef struct {
    Scanner sc;
    int ncols, want;       /* cells a row has (the header's), and the columns read */
    const char *kinds;     /* [ncols] */
    int64_t line;          /* the line number of the row at sc.p */
    int64_t rows;
    IouVec lines;             /* int64 per row */
    IouVec cols[MAX_CELLS];   /* per column read: float64, int64 codes or int8 */
    Strings strings[MAX_CELLS];
    IouVec deferred;
    IouVec file_of;           /* int64 per row, for several files */
    int min_cells;         /* rows of whitespace text: the last cells may be left out */
    int dota_header;       /* lines whose first token is imagesource: or gsd: are read over */
} Reader;

/* One cell into column i.  0, -1 give up, -2 no memory. */
static int put_cell(Reader *r, int i, const Cell *c) {
    IouVec *v = &r->cols[i];
    switch (r->kinds[i]) {
    case K_FLOAT: {
        double x = 0.0;
        int ok = parse_number(c->s, c->len, !r->sc.whitespace, &x);
        if (ok < 0) return -1;
        if (!ok) {
            if (c->len >= 64) return -1;
            Deferred d = {c->s, r->rows, (int32_t)c->len, (int32_t)i};
            if (iou_vec_put(&r->deferred, &d, sizeof d) < 0) return -2;
        }
        return iou_vec_put(v, &x, sizeof x) < 0 ? -2 : 0;
    }
    case K_TEXT: {
        int64_t code = strings_code(&r->strings[i], c->s, c->len);
        if (code < 0) return -2;
        return iou_vec_put(v, &code, sizeof code) < 0 ? -2 : 0;
    }
    case K_FLAG: {
        int8_t f;
        if (c->len == 0 || (c->len == 1 && c->s[0] == '0')) f = 0;
        else if (c->len == 1 && c->s[0] == '1') f = 1;
        else if (c->len == 2 && c->s[0] == '-' && c->s[1] == '1') f = -1;
        else return -1;
        return iou_vec_put(v, &f, sizeof f) < 0 ? -2 : 0;
    }
    case K_INT: { /* [+-]?[0-9]+ (left out: 0), read as whether it is not 0 */
        const uint8_t *p = c->s, *e = c->s + c->len;
        p += p < e && (*p == '+' || *p == '-');
        if (p == e && c->len) return -1;
        uint8_t f = 0;
        for (; p < e; p++) {
            if (!is_digit(*p)) return -1;
            f |= *p != '0';
        }
        return iou_vec_put(v, &f, sizeof f) < 0 ? -2 : 0;
    }
    default:
        return 0;
    }
}

/* Whether a token starts a DOTA header line: imagesource: or gsd: (any case). */
static int dota_header(const Cell *c) {
    static const char *names[] = {"imagesource:", "gsd:"};
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(names[k]);
        if (c->len < n) continue;
        size_t j = 0;
        while (j < n && (c->s[j] | 0x20) == names[k][j]) j++;
        if (j == n) return 1;
    }
    return 0;
}

/* The rows from sc.p to the end.  0, -1 give up, -2 no memory. */
static int read_rows(Reader *r, int64_t file) {
    Cell cells[MAX_CELLS];
    while (r->sc.p < r->sc.end) {
        int n = read_row(&r->sc, cells);
        int64_t line = r->line++;
        if (n < 0) return -1;
        if (blank_row(cells, n)) continue;
        if (r->sc.whitespace) {
            if (cells[0].s[0] == '#' || (r->dota_header && dota_header(&cells[0]))) continue;
            if (n < r->min_cells || n > r->ncols) return -1;
            for (int i = n; i < r->ncols; i++) cells[i].len = 0; /* left out */
        } else {
            if (n < r->ncols) return -1;
            for (int i = r->ncols; i < n; i++)
                if (cells[i].len) return -1;
        }
        for (int i = 0; i < r->ncols; i++) {
            int s = put_cell(r, i, &cells[i]);
            if (s < 0) return s;
        }
        if (iou_vec_put(&r->lines, &line, sizeof line) < 0) return -2;
        if (file >= 0 && iou_vec_put(&r->file_of, &file, sizeof file) < 0) return -2;
        r->rows++;
    }
    return 0;
}

/* The deferred numbers, converted by CPython (the GIL held).  0, or -1 (give up). */
static int convert_deferred(Reader *r) {
    const Deferred *d = (const Deferred *)r->deferred.data;
    size_t n = r->deferred.len / sizeof *d;
    for (size_t i = 0; i < n; i++) {
        char text[64];
        memcpy(text, d[i].s, (size_t)d[i].len);
        text[d[i].len] = 0;
        for (int k = 0; k < d[i].len; k++)
            if (text[k] == ',') text[k] = '.';
        double v = PyOS_string_to_double(text, NULL, NULL);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (r->sc.whitespace && !isfinite(v)) return -1; /* the Python path refuses it, located */
        ((double *)r->cols[d[i].column].data)[d[i].index] = v;
    }
    return 0;
}

static void reader_free(Reader *r) {
    free(r->lines.data);
    free(r->file_of.data);
    free(r->deferred.data);
    for (int i = 0; i < r->ncols; i++) {
        free(r->cols[i].data);
        strings_free(&r->strings[i]);
    }
}

/* The distinct texts of column i as a list of str. */
static PyObject *text_list(Reader *r, int i) {
    const Strings *t = &r->strings[i];
    const Text *x = (const Text *)t->texts.data;
    PyObject *out = PyList_New((Py_ssize_t)t->count);
    for (size_t k = 0; out && k < t->count; k++) {
        PyObject *s = PyUnicode_FromStringAndSize((const char *)x[k].s, (Py_ssize_t)x[k].len);
        if (!s) Py_CLEAR(out);
        else PyList_SET_ITEM(out, (Py_ssize_t)k, s);
    }
    return out;
}

/* (lines, file_of or None, [column per kind not skipped]): a text column is
   (codes, [str]). */
static PyObject *reader_result(Reader *r, int files) {
    PyObject *cols = PyList_New(0), *lines = NULL, *file_of = NULL;
    if (!cols) return NULL;
    for (int i = 0; i < r->ncols; i++) {
        if (r->kinds[i] == K_SKIP) continue;
        PyObject *item;
        if (r->kinds[i] == K_TEXT) {
            PyObject *codes = iou_block_of_vec(&r->cols[i]), *texts = codes ? text_list(r, i) : NULL;
            item = texts ? PyTuple_Pack(2, codes, texts) : NULL;
            Py_XDECREF(codes);
            Py_XDECREF(texts);
        } else {
            item = iou_block_of_vec(&r->cols[i]);
        }
        if (!item || PyList_Append(cols, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(cols);
            return NULL;
        }
        Py_DECREF(item);
    }
    lines = iou_block_of_vec(&r->lines);
    file_of = !lines ? NULL : files ? iou_block_of_vec(&r->file_of) : Py_NewRef(Py_None);
    PyObject *out = file_of ? PyTuple_Pack(3, lines, file_of, cols) : NULL;
    Py_XDECREF(lines);
    Py_XDECREF(file_of);
    Py_DECREF(cols);
    return out;
}

static int check_kinds(const char *kinds, Py_ssize_t n) {
    if (n < 1 || n > MAX_CELLS) {
        PyErr_SetString(PyExc_ValueError, "kinds: 1 to 256 letters");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!strchr(".fsgi", kinds[i]) || !kinds[i]) {
            PyErr_SetString(PyExc_ValueError, "kinds are '.', 'f', 's', 'g' or 'i'");
            return -1;
        }
    return 0;
}

/* ------------------------------------------------------------------ header */

/* Whether the line at p holds a byte other than spaces and tabs (a lone CR
   counts: the caller gives up on it when it reads the row). */
static int line_has_text(const uint8_t *p, const uint8_t *e) {
    for (; p < e && *p != '\n'; p++)
        if (!is_blank(*p) && !(*p == '\r' && p + 1 < e && p[1] == '\n')) return 1;
    return 0;
}

/* The delimiter the Python reader picks: the most frequent of tab, ';' and
   ',' on the first line with text (ties in that order), else ','. */
static int pick_delimiter(const uint8_t *p, const uint8_t *e) {
    while (p < e && !line_has_text(p, e)) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    int tab = 0, semi = 0, comma = 0;
    for (; p < e && *p != '\n'; p++) {
        tab += *p == '\t';
        semi += *p == ';';
        comma += *p == ',';
    }
    if (tab >= semi && tab >= comma && tab) return '\t';
    if (semi >= comma && semi) return ';';
    return ',';
}

static PyObject *py_header(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    const uint8_t *base = view.buf;
    int delimiter = pick_delimiter(base, base + view.len);
    Scanner sc;
    scanner_init(&sc, base, (size_t)view.len, delimiter);
    Cell cells[MAX_CELLS];
    int64_t line = 1;
    PyObject *out = NULL;
    while (sc.p < sc.end) {
        int n = read_row(&sc, cells);
        line++;
        if (n < 0) break;
        if (blank_row(cells, n)) continue;
        PyObject *names = PyList_New(n);
        for (int i = 0; names && i < n; i++) {
            PyObject *s = PyUnicode_FromStringAndSize((const char *)cells[i].s, (Py_ssize_t)cells[i].len);
            if (!s) Py_CLEAR(names);
            else PyList_SET_ITEM(names, i, s);
        }
        if (names)
            out = Py_BuildValue("(CNnL)", delimiter, names, (Py_ssize_t)(sc.p - base), (long long)line);
        PyBuffer_Release(&view);
        return out;
    }
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------- calls */

/* Read rows with the GIL released, convert what waited for CPython, hand
   the columns over; None where the reader gives up. */
static PyObject *run(Reader *r, int files, int (*read)(Reader *, void *), void *arg) {
    int status;
    Py_BEGIN_ALLOW_THREADS status = read(r, arg);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (status == -2) PyErr_NoMemory();
    else if (status < 0 || convert_deferred(r) < 0) result = Py_NewRef(Py_None);
    else result = reader_result(r, files);
    return result;
}

static int read_one(Reader *r, void *arg) {
    (void)arg;
    return read_rows(r, -1);
}

static PyObject *py_columns(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    const char *kinds, *delim;
    Py_ssize_t nkinds, ndelim, offset;
    long long line;
    if (!PyArg_ParseTuple(args, "y*s#nLs#", &view, &delim, &ndelim, &offset, &line, &kinds, &nkinds))
        return NULL;
    if (check_kinds(kinds, nkinds) < 0 || ndelim > 1 || offset < 0 || offset > view.len ||
        (ndelim == 1 && (delim[0] == '"' || delim[0] == '\n' || delim[0] == '\r'))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad delimiter or offset");
        PyBuffer_Release(&view);
        return NULL;
    }
    Reader *r = calloc(1, sizeof *r);
    if (!r) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    scanner_init(&r->sc, view.buf, (size_t)view.len, ndelim ? (uint8_t)delim[0] : -1);
    r->sc.p += offset;
    r->ncols = (int)nkinds;
    r->kinds = kinds;
    r->line = line;
    PyObject *out = run(r, 0, read_one, NULL);
    reader_free(r);
    free(r);
    PyBuffer_Release(&view);
    return out;
}

/* The buffers of a list of files, each scanned in turn. */
typedef struct {
    Py_buffer *views;
    Py_ssize_t n;
} Files;

static int read_files(Reader *r, void *arg) {
    const Files *f = arg;
    for (Py_ssize_t k = 0; k < f->n; k++) {
        scanner_init(&r->sc, f->views[k].buf, (size_t)f->views[k].len, -1);
        r->line = 1;
        int s = read_rows(r, (int64_t)k);
        if (s < 0) return s;
    }
    return 0;
}

static PyObject *py_text_files(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *list;
    const char *kinds;
    Py_ssize_t nkinds;
    int min_cells, header;
    if (!PyArg_ParseTuple(args, "O!s#ii", &PyList_Type, &list, &kinds, &nkinds, &min_cells, &header))
        return NULL;
    if (check_kinds(kinds, nkinds) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    Files f = {calloc((size_t)n + 1, sizeof(Py_buffer)), 0};
    Reader *r = calloc(1, sizeof *r);
    PyObject *out = NULL;
    if (!f.views || !r) {
        PyErr_NoMemory();
        goto done;
    }
    for (; f.n < n; f.n++)
        if (PyObject_GetBuffer(PyList_GET_ITEM(list, f.n), &f.views[f.n], PyBUF_SIMPLE) < 0) goto done;
    r->ncols = (int)nkinds;
    r->kinds = kinds;
    r->min_cells = min_cells;
    r->dota_header = header;
    scanner_init(&r->sc, (const uint8_t *)"", 0, -1);
    out = run(r, 1, read_files, &f);
done:
    if (r) reader_free(r);
    free(r);
    for (Py_ssize_t k = 0; k < f.n; k++) PyBuffer_Release(&f.views[k]);
    free(f.views);
    return out;
}

static PyMethodDef methods[] = {
    {"text_files", py_text_files, METH_VARARGS,
     "text_files([data], kinds, min_cells, dota_header) -> None or (lines, file_of, [column]): "
     "whitespace-separated rows of several files (lines starting with '#' read over; with "
     "dota_header also those whose first token is imagesource: or gsd:); a row has "
     "min_cells to len(kinds) cells ('i': an integer, read as uint8 whether it is not 0, "
     "0 when left out); numbers must be finite; file_of int64 the file's index."},
    {"header", py_header, METH_VARARGS,
     "header(data) -> None or (delimiter, [cell], offset, line): a CSV's first row that is "
     "not blank, its cells stripped, the byte offset and line number of the row after it."},
    {"columns", py_columns, METH_VARARGS,
     "columns(data, delimiter, offset, line, kinds) -> None or (lines, None, [column]): the "
     "rows from data[offset:] (line: the line number there); delimiter '' splits on spaces "
     "and tabs.  kinds: a letter per cell of a row ('.' skipped, 'f' float64, 's' a text: "
     "(int64 codes, [distinct str]), 'g' a flag 1/0/-1/empty as int8); lines int64."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_csvscan", "CSV and text tables read into columns.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__csvscan(void) {
    if (iou_block_ready() < 0) return NULL;
    return PyModule_Create(&module);
}
