/*
 * Decimal numbers to correctly rounded doubles, shared by the compiled
 * readers (iou_eval/io/_cocojson.c, iou_eval/io/_csvscan.c): each scans
 * its own grammar into a significand and a power of ten, and this header
 * turns the pair into a double the way msgspec and CPython round it.
 *
 * Exactly when the significand and the power of ten are both exact doubles
 * (Clinger's fast path), else by Eisel and Lemire's 128-bit product (as
 * fast_float and msgspec compute it, with fast_float's table of powers of
 * five), else -- a power of ten outside the table, a subnormal or an
 * ambiguous product -- not at all: iou_decimal() returns 0 and the caller
 * has CPython convert the characters once the GIL is held again.
 *
 * Included after "../_common.h" (iou_leading_zeros, memcpy).  Portable C:
 * GCC's and Clang's 128-bit integers and MSVC's _umul128 where they exist,
 * plain C otherwise (IOU_EVAL_PORTABLE_C forces it).
 */
#ifndef IOU_EVAL_NUMPARSE_H
#define IOU_EVAL_NUMPARSE_H

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


/* The exponent's digits at p (after the 'e' or 'E': [+-]?[0-9]+) added to
   *exp10, saturating past any double's; the first byte past them, or NULL
   when no digit follows. */
static inline const uint8_t *add_exponent(const uint8_t *p, const uint8_t *e, int64_t *exp10) {
    int eneg = p < e && *p == '-';
    if (p < e && (*p == '+' || *p == '-')) p++;
    const uint8_t *f = p;
    int64_t ev = 0;
    for (; p < e && is_digit(*p); p++)
        if (ev < 100000) ev = ev * 10 + (*p - '0');
    if (p == f) return NULL;
    *exp10 += eneg ? -ev : ev;
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
 * sig * 10**exp10 (negated when neg) correctly rounded: 1 and *out, or 0
 * when only CPython's conversion can tell.  sig holds at most 19 digits.
 */
static inline int iou_decimal(uint64_t sig, int64_t exp10, int neg, double *out) {
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

#endif /* IOU_EVAL_NUMPARSE_H */
