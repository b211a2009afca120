// base64url encoding with x86-64 vector instructions, behind WebEncoding's Base64URL (its only user).
// A header-only module (static inline functions compiled into WebEncoding): a C target of its own
// would be compiled with DWARF 5, which valgrind 3.19 (scripts/instructions.sh) cannot read.
//
// mdoc_base64url_encode_blocks encodes the longest prefix of `in` that is a multiple of 24 bytes and
// leaves at least 4 bytes after it readable (every vector load reads 16 bytes for the 12 it uses),
// writing 4/3 as many base64url characters (RFC 4648 §5, no padding) at `out`. It returns how many
// input bytes it consumed: 0 when the CPU has no AVX2 (the caller encodes everything then) or the
// input is shorter than 28 bytes.
//
// Per 128-bit lane, 12 input bytes become 16 characters:
//  1. a byte shuffle puts each 3-byte group (b0 b1 b2) in a 32-bit word as the bytes b1 b0 b2 b1;
//  2. two masks and two 16-bit multiplies move the four 6-bit fields to the low bits of the four
//     bytes (high half of a multiply by 2^6 / 2^10 = right shifts; low half by 2^4 / 2^8 = left
//     shifts), so each byte holds one index 0..63;
//  3. each index gets the offset of its alphabet range, looked up with a byte shuffle: 0..25 'A',
//     26..51 'a' - 26, 52..61 '0' - 52, 62 '-' - 62, 63 '_' - 63.
#ifndef MDOC_CBASE64_SHIM_H
#define MDOC_CBASE64_SHIM_H
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) static inline size_t mdoc_base64url_encode_avx2(const uint8_t *in, size_t n, uint8_t *out) {
    const __m256i spread = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,  //
                                            1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    const __m256i mask_hi = _mm256_set1_epi32(0x0fc0fc00);
    const __m256i mul_hi = _mm256_set1_epi32(0x04000040);
    const __m256i mask_lo = _mm256_set1_epi32(0x003f03f0);
    const __m256i mul_lo = _mm256_set1_epi32(0x01000010);
    const __m256i fifty_one = _mm256_set1_epi8(51);
    const __m256i twenty_six = _mm256_set1_epi8(26);
    const __m256i thirteen = _mm256_set1_epi8(13);
    // Offsets by class: 0 = 26..51, 1..10 = 52..61, 11 = 62, 12 = 63, 13 = 0..25.
    const __m256i offsets = _mm256_setr_epi8(
        'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '-' - 62, '_' - 63, 'A', 0, 0,  //
        'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '-' - 62, '_' - 63, 'A', 0, 0);
    size_t i = 0;
    size_t o = 0;
    while (n - i >= 28) {
        __m128i lo = _mm_loadu_si128((const __m128i *)(in + i));
        __m128i hi = _mm_loadu_si128((const __m128i *)(in + i + 12));
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
        v = _mm256_shuffle_epi8(v, spread);
        __m256i a = _mm256_mulhi_epu16(_mm256_and_si256(v, mask_hi), mul_hi);
        __m256i b = _mm256_mullo_epi16(_mm256_and_si256(v, mask_lo), mul_lo);
        __m256i idx = _mm256_or_si256(a, b);
        __m256i cls = _mm256_subs_epu8(idx, fifty_one);
        __m256i below26 = _mm256_cmpgt_epi8(twenty_six, idx);
        cls = _mm256_or_si256(cls, _mm256_and_si256(below26, thirteen));
        __m256i chars = _mm256_add_epi8(idx, _mm256_shuffle_epi8(offsets, cls));
        _mm256_storeu_si256((__m256i *)(out + o), chars);
        i += 24;
        o += 32;
    }
    return i;
}

static inline int mdoc_base64url_has_avx2(void) {
    static int cached = -1;
    int c = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (c < 0) {
        __builtin_cpu_init();
        c = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&cached, c, __ATOMIC_RELAXED);
    }
    return c;
}

static inline size_t mdoc_base64url_encode_blocks(const uint8_t *in, size_t n, uint8_t *out) {
    if (n < 28 || !mdoc_base64url_has_avx2()) return 0;
    return mdoc_base64url_encode_avx2(in, n, out);
}

#else

static inline size_t mdoc_base64url_encode_blocks(const uint8_t *in, size_t n, uint8_t *out) {
    (void)in;
    (void)n;
    (void)out;
    return 0;
}

#endif

#endif
