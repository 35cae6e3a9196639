// ---- seq_idx as masks per position ---------------------------------------------------
// A position's mask says which of the K positions before it are in its sequence: bit m
// (1 <= m <= K) is set where seq_idx[t - m] == seq_idx[t], bit 0 where seq_idx[t] >= 0
// (the position is no padding). One byte a position up to K = 7, two up to K = 15. The
// channel-first backward has a small kernel write them once a call (cc1d_bwd_seq_masks)
// and its blocks keep them in shared memory instead of ids: a quarter or half the bytes,
// a vector's masks one 4- to 16-byte access, and a bit test where a compare of two ids was.
#if CC1D_SEQ_MASK_BYTES(CC1D_WIDTH) == 1
typedef unsigned char cc1d_seq_mask;
#else
typedef unsigned short cc1d_seq_mask;
#endif
constexpr int kSeqMaskWords = CC1D_VEC * (int)sizeof(cc1d_seq_mask) / 4;   // 4-byte words of a vector's masks
// The masks of the CC1D_VEC positions of one vector, mask e in bytes [e, e+1) * sizeof(cc1d_seq_mask).
struct __attribute__((aligned(kSeqMaskWords * 4))) cc1d_seq_masks { unsigned int w[kSeqMaskWords]; };

// Mask e of a vector's masks (e a compile-time index in the kernels' unrolled loops).
CC1D_DEVICE unsigned int cc1d_seq_mask_of(const cc1d_seq_masks& v, int e) {
    const int byte = e * (int)sizeof(cc1d_seq_mask);
    return (v.w[byte / 4] >> (byte % 4 * 8)) & ((1u << (8 * sizeof(cc1d_seq_mask))) - 1u);
}

// Whether the position `back` steps before one with mask m is in its sequence (back 0: itself).
CC1D_DEVICE bool cc1d_seq_same(unsigned int m, int back) { return back == 0 || ((m >> back) & 1u) != 0u; }
// Whether a position with mask m is in a sequence (not padding).
CC1D_DEVICE bool cc1d_seq_real(unsigned int m) { return (m & 1u) != 0u; }
// Whether masks 0 .. n-1 of a vector (n <= CC1D_VEC, a compile-time count) are all full:
// those positions and the K before each in one sequence, none padding. Whole words at once.
CC1D_DEVICE bool cc1d_seq_masks_full(const cc1d_seq_masks& v, int n) {
    constexpr unsigned int full = (1u << (CC1D_K + 1)) - 1u;
    constexpr int bits = 8 * (int)sizeof(cc1d_seq_mask), per_word = 32 / bits;
    constexpr unsigned int full_word = bits == 8 ? full * 0x01010101u : full * 0x00010001u;
    bool all = true;
#pragma unroll
    for (int i = 0; i < kSeqMaskWords; ++i) {
        const int left = n - i * per_word;   // masks of this word to test
        if (left <= 0) break;
        const unsigned int keep = left >= per_word ? 0xffffffffu : (1u << (left * bits)) - 1u;
        all = all && (v.w[i] & keep) == (full_word & keep);
    }
    return all;
}
