// WebEncoding's x86-64 vector steps: base64url encoding and decoding behind Base64URL (its
// only user), and the JSON reader's scan of long plain strings (mdoc_json_plain_ascii, at the end).
// A header-only module (static inline functions compiled into WebEncoding): a C target of its own
// would be compiled with DWARF 5, which valgrind 3.19 (scripts/instructions.sh) cannot read.
//
// mdoc_base64url_encode_blocks_at encodes a prefix of `in` whose length is a multiple of 24 bytes,
// writing 4/3 as many base64url characters (RFC 4648 §5, no padding) at `out`, and returns how many input
// bytes it consumed: 0 at level 0, when the CPU has no AVX2 (the caller encodes everything then) or for
// fewer than 28 bytes. With AVX-512 VBMI, 48-byte steps first (below); then AVX2 steps while at least 4
// bytes after a block stay readable (the first block's loads read 16 bytes for 12 each, later blocks
// one 32-byte load from 4 bytes before the block for its 24). No load reads past `in + n`.
//
// Per 128-bit lane, 12 input bytes become 16 characters:
//  1. a byte shuffle puts each 3-byte group (b0 b1 b2) in a 32-bit word as the bytes b1 b0 b2 b1;
//  2. two masks and two 16-bit multiplies move the four 6-bit fields to the low bits of the four
//     bytes (high half of a multiply by 2^6 / 2^10 = right shifts; low half by 2^4 / 2^8 = left
//     shifts), so each byte holds one index 0..63;
//  3. each index gets the offset of its alphabet range, looked up with a byte shuffle by its class
//     (index - 51 saturated, plus one above 25): 0..25 'A', 26..51 'a' - 26, 52..61 '0' - 52,
//     62 '-' - 62, 63 '_' - 63.
#ifndef MDOC_CWEBENCODINGSIMD_SHIM_H
#define MDOC_CWEBENCODINGSIMD_SHIM_H
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <immintrin.h>

// Twelve-bit groups of a shuffled 24-byte block to base64url characters. `mul_lo` is
// `mdoc_base64url_mul_lo()`, made once by the caller.
__attribute__((target("avx2"))) static inline __m256i mdoc_base64url_encode_chars(__m256i v, __m256i mul_lo) {
    const __m256i mask_hi = _mm256_set1_epi32(0x0fc0fc00);
    const __m256i mul_hi = _mm256_set1_epi32(0x04000040);
    const __m256i mask_lo = _mm256_set1_epi32(0x003f03f0);
    const __m256i fifty_one = _mm256_set1_epi8(51);
    const __m256i twenty_five = _mm256_set1_epi8(25);
    // Offsets by class: 0 = 0..25, 1 = 26..51, 2..11 = 52..61, 12 = 62, 13 = 63.
    const __m256i offsets = _mm256_setr_epi8(
        'A', 'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '-' - 62, '_' - 63, 0, 0,  //
        'A', 'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '-' - 62, '_' - 63, 0, 0);
    __m256i a = _mm256_mulhi_epu16(_mm256_and_si256(v, mask_hi), mul_hi);
    __m256i b = _mm256_mullo_epi16(_mm256_and_si256(v, mask_lo), mul_lo);
    __m256i idx = _mm256_or_si256(a, b);
    // The class: idx - 51 saturated (1..12 for 52..63), plus one for every index above 25 (the
    // compare gives -1 there, subtracted).
    __m256i cls = _mm256_sub_epi8(_mm256_subs_epu8(idx, fifty_one), _mm256_cmpgt_epi8(idx, twenty_five));
    return _mm256_add_epi8(idx, _mm256_shuffle_epi8(offsets, cls));
}

// The low-field multiplier (16 and 256 per 16-bit lane), hidden from the compiler: as a known constant
// it turns the one multiply into two shifts and a blend (two more instructions a block).
__attribute__((target("avx2"))) static inline __m256i mdoc_base64url_mul_lo(void) {
    __m256i m = _mm256_set1_epi32(0x01000010);
    __asm__("" : "+x"(m));
    return m;
}

// Encoding, 24 bytes to 32 characters per step, while at least 28 bytes remain (the loads read 28).
__attribute__((target("avx2"))) static inline size_t mdoc_base64url_encode_avx2(const uint8_t *in, size_t n, uint8_t *out) {
    const __m256i spread = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,  //
                                            1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    // After the first block, one 32-byte load from 4 bytes back puts the block's first 12 bytes at
    // offsets 4..15 of the low lane and the next 12 at 0..11 of the high lane (reading at most
    // in[i + 27], as the first block's two loads do).
    const __m256i spread_back = _mm256_setr_epi8(5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15, 14,  //
                                                 1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    if (n < 28) return 0;
    const __m256i mul_lo = mdoc_base64url_mul_lo();
    __m128i lo = _mm_loadu_si128((const __m128i *)in);
    __m128i hi = _mm_loadu_si128((const __m128i *)(in + 12));
    __m256i first = _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1), spread);
    _mm256_storeu_si256((__m256i *)out, mdoc_base64url_encode_chars(first, mul_lo));
    size_t i = 24;
    size_t o = 32;
    // Block k of a step loads 32 bytes from in + i - 4 + 24k: a step reads up to in[i + 99].
    while (n - i >= 100) {  // four blocks a step, written out (the compiler keeps a loop of four as a loop)
        __m256i v0 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + i - 4)), spread_back);
        __m256i v1 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + i + 20)), spread_back);
        __m256i v2 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + i + 44)), spread_back);
        __m256i v3 = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + i + 68)), spread_back);
        _mm256_storeu_si256((__m256i *)(out + o), mdoc_base64url_encode_chars(v0, mul_lo));
        _mm256_storeu_si256((__m256i *)(out + o + 32), mdoc_base64url_encode_chars(v1, mul_lo));
        _mm256_storeu_si256((__m256i *)(out + o + 64), mdoc_base64url_encode_chars(v2, mul_lo));
        _mm256_storeu_si256((__m256i *)(out + o + 96), mdoc_base64url_encode_chars(v3, mul_lo));
        i += 96;
        o += 128;
    }
    while (n - i >= 28) {
        __m256i v = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(in + i - 4)), spread_back);
        _mm256_storeu_si256((__m256i *)(out + o), mdoc_base64url_encode_chars(v, mul_lo));
        i += 24;
        o += 32;
    }
    return i;
}

// Encoding with AVX-512 VBMI, 48 bytes to 64 characters per step, while at least 48 bytes remain
// (a masked load reads exactly 48 for the last step; earlier steps load 64 where 64 are readable):
//  1. a byte permute puts each 3-byte group (b0 b1 b2) in a 32-bit word as b1 b0 b2 b1 (as above);
//  2. a multishift takes, for each output byte, the 8 bits starting at bit 10, 4, 22 or 16 of its
//     word: the group's four 6-bit fields in their low bits (the two bits above are ignored next);
//  3. a byte permute of the 64-character alphabet by those fields (it reads only an index's low six
//     bits) gives the characters.
// Returns the input bytes consumed (a multiple of 48).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static inline size_t mdoc_base64url_encode_vbmi(
    const uint8_t *in, size_t n, uint8_t *out) {
    static const char alphabet[64] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const __m512i groups = _mm512_set_epi8(  // byte 63 first
        46, 47, 45, 46, 43, 44, 42, 43, 40, 41, 39, 40, 37, 38, 36, 37, 34, 35, 33, 34, 31, 32, 30, 31, 28, 29, 27,
        28, 25, 26, 24, 25, 22, 23, 21, 22, 19, 20, 18, 19, 16, 17, 15, 16, 13, 14, 12, 13, 10, 11, 9, 10, 7, 8, 6, 7,
        4, 5, 3, 4, 1, 2, 0, 1);
    // Bit offsets within each 64-bit lane, low byte first: 10, 4, 22, 16 and 32 more for the second word.
    const __m512i fields = _mm512_set1_epi64(0x3036242a1016040aLL);
    const __m512i lookup = _mm512_loadu_si512((const void *)alphabet);
    size_t i = 0;
    size_t o = 0;
    while (n - i >= 48) {
        __m512i v = n - i >= 64 ? _mm512_loadu_si512((const void *)(in + i))
                                : _mm512_maskz_loadu_epi8((__mmask64)0xffffffffffffULL, in + i);
        v = _mm512_multishift_epi64_epi8(fields, _mm512_permutexvar_epi8(groups, v));
        _mm512_storeu_si512((void *)(out + o), _mm512_permutexvar_epi8(v, lookup));
        i += 48;
        o += 64;
    }
    return i;
}

// The vector code this CPU (and its operating system) can run: 2 = AVX-512 VBMI (with AVX2), 1 = AVX2,
// 0 = none. Under valgrind, which does not emulate AVX-512, this is 1.
static inline int mdoc_base64url_vector_level(void) {
    static int cached = -1;
    int c = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (c < 0) {
        __builtin_cpu_init();
        c = !__builtin_cpu_supports("avx2") ? 0
            : (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vbmi")) ? 2 : 1;
        __atomic_store_n(&cached, c, __ATOMIC_RELAXED);
    }
    return c;
}

static inline int mdoc_base64url_has_avx2(void) { return mdoc_base64url_vector_level() >= 1; }

// The encoder up to `level` (at most the CPU's): VBMI steps, then AVX2 steps for what is left.
static inline size_t mdoc_base64url_encode_blocks_at(const uint8_t *in, size_t n, uint8_t *out, int level) {
    if (n < 28) return 0;
    if (level > mdoc_base64url_vector_level()) level = mdoc_base64url_vector_level();
    size_t done = 0;
    if (level >= 2) done = mdoc_base64url_encode_vbmi(in, n, out);
    if (level >= 1 && n - done >= 28) done += mdoc_base64url_encode_avx2(in + done, n - done, out + done / 3 * 4);
    return done;
}

// Decoding, 32 characters to 24 bytes per step:
//  1. each character is classified by signed range compares ('A'..'Z', 'a'..'z', '0'..'9', '-', '_';
//     a byte >= 0x80 is negative and falls in no range); a block with any character in no class
//     stops the loop there, for the portable decoder to refuse;
//  2. the class's offset added to the character gives its 6-bit value;
//  3. pairs of values are merged with a multiply-add (v0 * 64 + v1), pairs of those again
//     (w0 * 4096 + w1), giving 24 bits per 32-bit word; a byte shuffle and a cross-lane permute put
//     the 24 bytes together, written with a 16-byte and an 8-byte store (never past 24 bytes).
__attribute__((target("avx2"))) static inline size_t mdoc_base64url_decode_avx2(const uint8_t *in, size_t n, uint8_t *out) {
    const __m256i before_A = _mm256_set1_epi8('A' - 1), after_Z = _mm256_set1_epi8('Z' + 1);
    const __m256i before_a = _mm256_set1_epi8('a' - 1), after_z = _mm256_set1_epi8('z' + 1);
    const __m256i before_0 = _mm256_set1_epi8('0' - 1), after_9 = _mm256_set1_epi8('9' + 1);
    const __m256i dash = _mm256_set1_epi8('-'), underscore = _mm256_set1_epi8('_');
    const __m256i off_upper = _mm256_set1_epi8(-65), off_lower = _mm256_set1_epi8(-71);
    const __m256i off_digit = _mm256_set1_epi8(4), off_dash = _mm256_set1_epi8(62 - '-');
    const __m256i off_underscore = _mm256_set1_epi8(63 - '_');
    const __m256i merge_pairs = _mm256_set1_epi32(0x01400140);
    const __m256i merge_quads = _mm256_set1_epi32(0x00011000);
    const __m256i gather = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,  //
                                            2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    size_t i = 0;
    size_t o = 0;
    while (n - i >= 32) {
        __m256i c = _mm256_loadu_si256((const __m256i *)(in + i));
        __m256i upper = _mm256_and_si256(_mm256_cmpgt_epi8(c, before_A), _mm256_cmpgt_epi8(after_Z, c));
        __m256i lower = _mm256_and_si256(_mm256_cmpgt_epi8(c, before_a), _mm256_cmpgt_epi8(after_z, c));
        __m256i digit = _mm256_and_si256(_mm256_cmpgt_epi8(c, before_0), _mm256_cmpgt_epi8(after_9, c));
        __m256i is_dash = _mm256_cmpeq_epi8(c, dash);
        __m256i is_underscore = _mm256_cmpeq_epi8(c, underscore);
        __m256i valid = _mm256_or_si256(_mm256_or_si256(upper, lower), _mm256_or_si256(digit, _mm256_or_si256(is_dash, is_underscore)));
        if ((uint32_t)_mm256_movemask_epi8(valid) != 0xffffffffu) break;
        __m256i offset = _mm256_or_si256(
            _mm256_or_si256(_mm256_and_si256(upper, off_upper), _mm256_and_si256(lower, off_lower)),
            _mm256_or_si256(_mm256_and_si256(digit, off_digit),
                            _mm256_or_si256(_mm256_and_si256(is_dash, off_dash), _mm256_and_si256(is_underscore, off_underscore))));
        __m256i v = _mm256_add_epi8(c, offset);
        __m256i w = _mm256_maddubs_epi16(v, merge_pairs);
        __m256i q = _mm256_madd_epi16(w, merge_quads);
        __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q, gather), lanes);
        _mm_storeu_si128((__m128i *)(out + o), _mm256_castsi256_si128(packed));
        _mm_storel_epi64((__m128i *)(out + o + 16), _mm256_extracti128_si256(packed, 1));
        i += 32;
        o += 24;
    }
    return i;
}

// Decodes the longest prefix of `in` made of whole valid 32-character blocks, writing 3/4 as many
// bytes at `out`; returns the characters consumed (a multiple of 32): 0 without AVX2, for fewer than
// 32 characters, or when the first block holds a character outside the URL-safe alphabet. The caller
// decodes (and checks) the rest.
static inline size_t mdoc_base64url_decode_blocks(const uint8_t *in, size_t n, uint8_t *out) {
    if (n < 32 || !mdoc_base64url_has_avx2()) return 0;
    return mdoc_base64url_decode_avx2(in, n, out);
}

// JSON string scanning (WebEncoding's tape parser, for long base64url members): the length of the
// longest prefix of whole 32-byte blocks of `p` (n bytes readable) holding no quote, backslash,
// control character (< 0x20) or byte >= 0x80, plus, in the first block holding one, the offset of the
// first such byte. The caller scans what is left. A signed compare against 0x20 flags both control
// characters and bytes >= 0x80 (negative as signed bytes).
__attribute__((target("avx2"))) static inline size_t mdoc_json_plain_ascii_avx2(const uint8_t *p, size_t n) {
    const __m256i space = _mm256_set1_epi8(0x20);
    const __m256i quote = _mm256_set1_epi8(0x22);
    const __m256i backslash = _mm256_set1_epi8(0x5c);
    size_t i = 0;
    while (n - i >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        __m256i stops = _mm256_or_si256(_mm256_cmpgt_epi8(space, v),
                                        _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)));
        uint32_t m = (uint32_t)_mm256_movemask_epi8(stops);
        if (m != 0) return i + (size_t)__builtin_ctz(m);
        i += 32;
    }
    return i;
}

static inline size_t mdoc_json_plain_ascii(const uint8_t *p, size_t n) {
    if (n < 32 || !mdoc_base64url_has_avx2()) return 0;
    return mdoc_json_plain_ascii_avx2(p, n);
}

// The same test on one 16-byte block with SSE2 (every x86-64 CPU has it): the offset of the first
// quote, backslash, control character or byte >= 0x80 in p[0..<16], or 16 when there is none. Reads
// exactly 16 bytes. Most JSON strings (keys, names, identifiers) end inside their first block.
static inline unsigned mdoc_json_stop16(const uint8_t *p) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i stops = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x22)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5c))));
    unsigned m = (unsigned)_mm_movemask_epi8(stops);
    return m != 0 ? (unsigned)__builtin_ctz(m) : 16u;
}

#else

static inline size_t mdoc_base64url_encode_blocks(const uint8_t *in, size_t n, uint8_t *out) {
    (void)in;
    (void)n;
    (void)out;
    return 0;
}

static inline size_t mdoc_base64url_decode_blocks(const uint8_t *in, size_t n, uint8_t *out) {
    (void)in;
    (void)n;
    (void)out;
    return 0;
}

static inline size_t mdoc_json_plain_ascii(const uint8_t *p, size_t n) {
    (void)p;
    (void)n;
    return 0;
}

#endif

#endif
