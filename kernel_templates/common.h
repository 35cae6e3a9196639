// Portable kernel vocabulary shared by every kernel family, after the backend prelude.
// The generated header before it defines the variant's macros:
//   CC1D_WIDTH, CC1D_X_DTYPE, CC1D_W_DTYPE (0 fp32, 1 fp16, 2 bf16), CC1D_SILU,
//   CC1D_HAS_BIAS, CC1D_HAS_SEQ_IDX, CC1D_HAS_INITIAL_STATES, CC1D_HAS_FINAL_STATES,
//   CC1D_DETERMINISTIC, CC1D_HAS_CACHE_SEQLENS, CC1D_HAS_STATE_INDICES,
//   CC1D_CHANNEL_LAST, CC1D_ENTRY (the kernel's extern "C" name).
#define CC1D_K (CC1D_WIDTH - 1)

typedef long long cc1d_i64;

// 16-bit storage types: bit patterns, converted explicitly (bf16 by shifts).
struct cc1d_half { unsigned short bits; };
struct cc1d_bf16 { unsigned short bits; };

// 16 bytes moved by one load/store instruction.
struct __attribute__((aligned(16))) cc1d_vec16 { unsigned int w[4]; };

CC1D_DEVICE float cc1d_to_float(float v) { return v; }
CC1D_DEVICE float cc1d_to_float(cc1d_half v) { return cc1d_half_bits_to_float(v.bits); }
CC1D_DEVICE float cc1d_to_float(cc1d_bf16 v) { return __int_as_float(((unsigned int)v.bits) << 16); }

template <typename T> CC1D_DEVICE T cc1d_from_float(float v);
template <> CC1D_DEVICE float cc1d_from_float<float>(float v) { return v; }
template <> CC1D_DEVICE cc1d_half cc1d_from_float<cc1d_half>(float v) {
    cc1d_half h; h.bits = cc1d_float_to_half_bits(v); return h;
}
template <> CC1D_DEVICE cc1d_bf16 cc1d_from_float<cc1d_bf16>(float v) {
    // Round to nearest even; NaN stays a (quiet) NaN.
    unsigned int u = (unsigned int)__float_as_int(v);
    cc1d_bf16 b;
    if ((u & 0x7fffffffu) > 0x7f800000u) { b.bits = (unsigned short)((u >> 16) | 0x40u); return b; }
    u += 0x7fffu + ((u >> 16) & 1u);
    b.bits = (unsigned short)(u >> 16);
    return b;
}

#if CC1D_X_DTYPE == 0
typedef float x_t;
#elif CC1D_X_DTYPE == 1
typedef cc1d_half x_t;
#else
typedef cc1d_bf16 x_t;
#endif
#if CC1D_W_DTYPE == 0
typedef float w_t;
#elif CC1D_W_DTYPE == 1
typedef cc1d_half w_t;
#else
typedef cc1d_bf16 w_t;
#endif

// Elements of x per 16-byte vector.
#define CC1D_VEC ((int)(16 / sizeof(x_t)))

// ---- SiLU ----------------------------------------------------------------------------
// The forward and backward kernels are memory-bound only while their instructions per
// byte stay low. The IEEE sigmoid (exp, then a division) costs two special-function
// instructions and a few fix-ups per element; a 16-bit kernel handles two elements per
// four bytes, and the special-function unit (16 results per clock per SM on NVIDIA)
// becomes its limit. So:
// - 16-bit x on NVIDIA sm_75+: sigmoid(z) = 0.5 + 0.5·tanh(z/2) with the hardware tanh
//   (tanh.approx.f32, one instruction, absolute error about 5e-4, so about 2.5e-4 in the
//   sigmoid: a quarter of an fp16 ulp at 1, far inside the fp16/bf16 tolerances);
// - otherwise (fp32 x, AMD): exp2 and a reciprocal, both approximate (about 2 ulp each).
CC1D_DEVICE float cc1d_sigmoid_fast(float z) {
#if defined(CC1D_TANH_APPROX) && CC1D_X_DTYPE != 0
    return fmaf(0.5f, cc1d_tanh_approx(0.5f * z), 0.5f);
#else
    // For z below about -88 the exp2 overflows to inf and the reciprocal gives 0, the limit.
    return __fdividef(1.0f, 1.0f + cc1d_exp2_approx(-1.4426950408889634f * z));
#endif
}

// Load VEC consecutive elements starting at element `pos` of a row (0 outside [0, len)).
// `vector_ok` promises that row + pos is 16-byte aligned whenever pos % VEC == 0.
CC1D_DEVICE void cc1d_load_vec(const x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len,
                               bool vector_ok, float (&out)[16 / sizeof(x_t)]) {
    const int n = CC1D_VEC;
    if (vector_ok && pos >= 0 && pos + n <= len) {
        cc1d_vec16 v = *reinterpret_cast<const cc1d_vec16*>(row + pos);
        const x_t* e = reinterpret_cast<const x_t*>(&v);
#pragma unroll
        for (int i = 0; i < n; ++i) out[i] = cc1d_to_float(e[i]);
    } else {
#pragma unroll
        for (int i = 0; i < n; ++i) {
            cc1d_i64 p = pos + i;
            out[i] = (p >= 0 && p < len) ? cc1d_to_float(row[p * stride]) : 0.0f;
        }
    }
}

// Store VEC consecutive elements starting at `pos`, dropping those at or past len.
CC1D_DEVICE void cc1d_store_vec(x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len,
                                bool vector_ok, const float (&in)[16 / sizeof(x_t)]) {
    const int n = CC1D_VEC;
    if (vector_ok && pos >= 0 && pos + n <= len) {
        cc1d_vec16 v;
        x_t* e = reinterpret_cast<x_t*>(&v);
#pragma unroll
        for (int i = 0; i < n; ++i) e[i] = cc1d_from_float<x_t>(in[i]);
        *reinterpret_cast<cc1d_vec16*>(row + pos) = v;
    } else {
#pragma unroll
        for (int i = 0; i < n; ++i) {
            cc1d_i64 p = pos + i;
            if (p >= 0 && p < len) row[p * stride] = cc1d_from_float<x_t>(in[i]);
        }
    }
}

template <typename T> CC1D_DEVICE float cc1d_load_float(const void* base, cc1d_i64 offset) {
    return cc1d_to_float(reinterpret_cast<const T*>(base)[offset]);
}

// ---- Raw 16-byte vectors of x_t ------------------------------------------------------
// Element access with indices that unrolled loops make compile-time constants, so a
// vector stays in four registers (no local memory). "raw" means the stored bits, which
// is what state copies need (bit-identical) and what shared memory holds.
CC1D_DEVICE unsigned int cc1d_bits_of(float v) { return (unsigned int)__float_as_int(v); }
CC1D_DEVICE unsigned int cc1d_bits_of(cc1d_half v) { return v.bits; }
CC1D_DEVICE unsigned int cc1d_bits_of(cc1d_bf16 v) { return v.bits; }
template <typename T> CC1D_DEVICE T cc1d_of_bits(unsigned int bits);
template <> CC1D_DEVICE float cc1d_of_bits<float>(unsigned int bits) { return __int_as_float((int)bits); }
template <> CC1D_DEVICE cc1d_half cc1d_of_bits<cc1d_half>(unsigned int bits) {
    cc1d_half h; h.bits = (unsigned short)bits; return h;
}
template <> CC1D_DEVICE cc1d_bf16 cc1d_of_bits<cc1d_bf16>(unsigned int bits) {
    cc1d_bf16 b; b.bits = (unsigned short)bits; return b;
}

CC1D_DEVICE cc1d_vec16 cc1d_v16_zero() {
    cc1d_vec16 v;
    v.w[0] = v.w[1] = v.w[2] = v.w[3] = 0u;
    return v;
}
// Element e (0 <= e < CC1D_VEC) of a vector of x_t.
CC1D_DEVICE x_t cc1d_v16_raw(const cc1d_vec16& v, int e) {
    if (sizeof(x_t) == 4) return cc1d_of_bits<x_t>(v.w[e & 3]);
    return cc1d_of_bits<x_t>((v.w[(e >> 1) & 3] >> ((e & 1) * 16)) & 0xffffu);
}
CC1D_DEVICE float cc1d_v16_float(const cc1d_vec16& v, int e) { return cc1d_to_float(cc1d_v16_raw(v, e)); }
CC1D_DEVICE void cc1d_v16_set(cc1d_vec16& v, int e, x_t value) {
    const unsigned int bits = cc1d_bits_of(value);
    if (sizeof(x_t) == 4) {
        v.w[e & 3] = bits;
    } else {
        const int shift = (e & 1) * 16;
        unsigned int& word = v.w[(e >> 1) & 3];
        word = (word & ~(0xffffu << shift)) | (bits << shift);
    }
}

// One 16-byte access at a 16-byte aligned address (global or shared). Goes through the
// compilers' built-in uint4 so the access stays one instruction: a struct copy may be
// split into four 4-byte stores once the struct's fields were promoted to registers.
CC1D_DEVICE cc1d_vec16 cc1d_v16_load_aligned(const void* address) {
    const uint4 u = *reinterpret_cast<const uint4*>(address);
    cc1d_vec16 v;
    v.w[0] = u.x; v.w[1] = u.y; v.w[2] = u.z; v.w[3] = u.w;
    return v;
}
CC1D_DEVICE void cc1d_v16_store_aligned(void* address, const cc1d_vec16& v) {
    uint4 u;
    u.x = v.w[0]; u.y = v.w[1]; u.z = v.w[2]; u.w = v.w[3];
    *reinterpret_cast<uint4*>(address) = u;
}
// A 16-byte store to global memory. NVVM splits even the uint4 store into four 4-byte
// stores when the address is computed from a 2-byte element pointer, so CUDA says it
// in PTX (the memory clobber keeps it ordered with this thread's other accesses).
CC1D_DEVICE void cc1d_v16_store_global(void* address, const cc1d_vec16& v) {
#if defined(CC1D_BACKEND_CUDA)
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(address), "r"(v.w[0]), "r"(v.w[1]),
                 "r"(v.w[2]), "r"(v.w[3])
                 : "memory");
#else
    cc1d_v16_store_aligned(address, v);
#endif
}

// 16 bytes from `at`, an element address that need not be 16-byte aligned, as two aligned
// 16-byte loads and a shift: for rows of unit stride whose start is not aligned (a
// channel-first L, or a view's offset, that is not a multiple of a vector), where the
// forward's element-by-element loads ran 2-4 times slower than aligned rows on an H200
// (docs/perf.md, entry 94). The caller promises that every byte of the 32 the two loads
// cover is readable: a vector before and one after `at` lie in the same row
// (cc1d_v16_shifted_ok).
CC1D_DEVICE bool cc1d_v16_shifted_ok(cc1d_i64 pos, cc1d_i64 len) { return pos >= CC1D_VEC && pos + 2 * CC1D_VEC <= len; }
CC1D_DEVICE cc1d_vec16 cc1d_v16_load_shifted(const x_t* at) {
    const unsigned long long address = reinterpret_cast<unsigned long long>(at);
    const unsigned int offset = (unsigned int)(address & 15u);
    const cc1d_vec16* block = reinterpret_cast<const cc1d_vec16*>(address - offset);
    const cc1d_vec16 lo = cc1d_v16_load_aligned(block), hi = cc1d_v16_load_aligned(block + 1);
    const unsigned int w[8] = {lo.w[0], lo.w[1], lo.w[2], lo.w[3], hi.w[0], hi.w[1], hi.w[2], hi.w[3]};
    // Whole words first (the same for a row's every vector, so no divergence), then bytes.
    // Selects rather than w[i + words]: a run-time index would put w in local memory.
    const unsigned int words = offset >> 2, bits = (offset & 3u) * 8u;
    unsigned int u[5];
#pragma unroll
    for (int i = 0; i < 5; ++i)
        u[i] = words == 0 ? w[i] : (words == 1 ? w[i + 1] : (words == 2 ? w[i + 2] : w[i + 3]));
    cc1d_vec16 v;
#pragma unroll
    for (int i = 0; i < 4; ++i) v.w[i] = bits == 0 ? u[i] : (u[i] >> bits) | (u[i + 1] << (32u - bits));
    return v;
}

// 16 bytes to `at`, an element address that need not be 16-byte aligned, as the widest
// aligned stores that write exactly those bytes (2 of 8 bytes, 4 of 4, or 2 + 3 x 4 + 2).
CC1D_DEVICE void cc1d_v16_store_split(x_t* at, const cc1d_vec16& v) {
    const unsigned long long address = reinterpret_cast<unsigned long long>(at);
    if ((address & 7u) == 0) {
        unsigned long long* q = reinterpret_cast<unsigned long long*>(address);
        q[0] = (unsigned long long)v.w[1] << 32 | v.w[0];
        q[1] = (unsigned long long)v.w[3] << 32 | v.w[2];
    } else if ((address & 3u) == 0) {
        unsigned int* q = reinterpret_cast<unsigned int*>(address);
#pragma unroll
        for (int i = 0; i < 4; ++i) q[i] = v.w[i];
    } else {   // 2-byte aligned (16-bit elements)
        unsigned short* first = reinterpret_cast<unsigned short*>(address);
        *first = (unsigned short)(v.w[0] & 0xffffu);
        unsigned int* q = reinterpret_cast<unsigned int*>(address + 2);
#pragma unroll
        for (int i = 0; i < 3; ++i) q[i] = (v.w[i] >> 16) | (v.w[i + 1] << 16);
        unsigned short* last = reinterpret_cast<unsigned short*>(address + 14);
        *last = (unsigned short)(v.w[3] >> 16);
    }
}

// CC1D_VEC elements of a global row from element `pos` on (element i at row[(pos + i) * stride]):
// one 16-byte access when `vectorized` (the caller promises alignment, unit stride and
// that the whole vector lies in [0, len)), else element by element, reading 0 and
// writing nothing outside [0, len).
CC1D_DEVICE cc1d_vec16 cc1d_v16_load(const x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len,
                                     bool vectorized) {
    if (vectorized) return cc1d_v16_load_aligned(row + pos);
    cc1d_vec16 v = cc1d_v16_zero();
#pragma unroll
    for (int i = 0; i < CC1D_VEC; ++i) {
        const cc1d_i64 p = pos + i;
        if (p >= 0 && p < len) cc1d_v16_set(v, i, row[p * stride]);
    }
    return v;
}
CC1D_DEVICE void cc1d_v16_store(x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len, bool vectorized,
                                const cc1d_vec16& v) {
    if (vectorized) {
        cc1d_v16_store_global(row + pos, v);
        return;
    }
#pragma unroll
    for (int i = 0; i < CC1D_VEC; ++i) {
        const cc1d_i64 p = pos + i;
        if (p >= 0 && p < len) row[p * stride] = cc1d_v16_raw(v, i);
    }
}

// Tiles that follow a row's own 16-byte boundaries (the channel-first modules of rows off
// such boundaries, CC1D_SHIFTED_ROWS) start up to VEC - 1 positions before the row, so
// every vector inside it is one aligned access; its first and last vectors, the "edge
// vectors", are staged element by element. Whether the tile vector at `pos` is one: it
// holds positions of the row but does not lie whole in it.
CC1D_DEVICE bool cc1d_row_edge_vector(cc1d_i64 pos, cc1d_i64 len) { return pos < len && (pos < 0 || pos + CC1D_VEC > len); }
// Edge element k (< 2 * VEC: the row's first vector, then the vector of its last position)
// of the tile that starts at row position tile_start (a multiple of VEC from the row's
// first vector) and spans tile_elems positions, as an element of the tile; -1 where this
// tile has no such vector (or the first vector is the last too, staged as the first).
CC1D_DEVICE int cc1d_row_edge_element(cc1d_i64 tile_start, int tile_elems, cc1d_i64 len, int k) {
    const int e = k % CC1D_VEC;
    if (k < CC1D_VEC) return tile_start < 0 ? e : -1;
    const cc1d_i64 last = len - 1 - tile_start;   // the row's last position, from the tile start
    if (last < 0 || last >= tile_elems || (len - tile_start) % CC1D_VEC == 0) return -1;
    const int first = (int)(last / CC1D_VEC) * CC1D_VEC;
    return tile_start < 0 && first == 0 ? -1 : first + e;
}

// The vector at `pos` of a row as cc1d_v16_load reads it, for rows that may start off a
// 16-byte boundary: one aligned load where `aligned` (the caller's promise for the whole
// row: 16-byte aligned, unit stride) and the vector lies in [0, len); else, in a row of
// unit stride away from its first and last vectors, two aligned loads and a shift; else
// element by element.
CC1D_DEVICE cc1d_vec16 cc1d_v16_load_row(const x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len, bool aligned) {
    if (aligned && pos + CC1D_VEC <= len) return cc1d_v16_load_aligned(row + pos);
    if (stride == 1 && cc1d_v16_shifted_ok(pos, len)) return cc1d_v16_load_shifted(row + pos);
    return cc1d_v16_load(row, stride, pos, len, false);
}
// The store of cc1d_v16_load_row: one aligned store, the widest aligned pieces in a row
// of unit stride (cc1d_v16_store_split), or element by element, writing nothing outside
// [0, len).
CC1D_DEVICE void cc1d_v16_store_row(x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len, bool aligned,
                                    const cc1d_vec16& v) {
    if (aligned && pos + CC1D_VEC <= len) {
        cc1d_v16_store_global(row + pos, v);
    } else if (stride == 1 && pos >= 0 && pos + CC1D_VEC <= len) {
        cc1d_v16_store_split(row + pos, v);
    } else {
        cc1d_v16_store(row, stride, pos, len, false, v);
    }
}

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

// ==== Backward: where the dweight/dbias sums go =========================================
// (used by bwd_channel_first.cu and bwd_channel_last.cu; nothing above depends on it)
// A backward block ends with CC1D_BWD_SUMS fp32 sums per channel it covers: dw[0..W-1]
// and db. cc1d_bwd_emit hands one of them to the target cc1d_bwd_params.dw_mode names;
// cc1d_bwd_reduce is the body of the reduce kernel that zeroes an atomic target first or
// sums the partial rows afterwards, always in the same order (bit-identical results).
#define CC1D_BWD_SUMS (CC1D_WIDTH + 1)

// d act / d z, given z (SiLU: s·(1 + z·(1 − s)) with s = sigmoid(z), cc1d_sigmoid_fast).
CC1D_DEVICE float cc1d_bwd_act_grad(float z) {
#if CC1D_SILU
    const float s = cc1d_sigmoid_fast(z);
    return s * fmaf(z, 1.0f - s, 1.0f);
#else
    (void)z;
    return 1.0f;
#endif
}

// Held taps. With 16-bit x and the hardware tanh, SiLU is computed from h = z / 2:
//   silu(z) = h + h·tanh(h),   act'(z) = s·(1 + z·(1 − s)) = (1 + v) / 2,
// with s = sigmoid(z) = (1 + tanh(h)) / 2, t = tanh(h) and v = h + t·(1 − h·t). Kernels
// that are issue-bound there hold the taps and the bias halved, so the window sum is h
// itself (one multiply an element fewer): the packed prefill's channel-last tiles
// (cc1d_activate_held) and the two main backward kernels. The backward also carries the
// gradient doubled, g2 = 2·g = dout·(1 + v): three fused multiply-adds after the tanh
// instead of six instructions; dx = sum w·g = sum (w/2)·g2 needs no change, and the
// dweight / dbias sums, of g2, are halved once at the end (cc1d_bwd_release_sums).
// Halving and doubling are exact in fp32. Other variants hold the taps as they are.
#if CC1D_SILU && defined(CC1D_TANH_APPROX) && CC1D_X_DTYPE != 0
#define CC1D_HALF_TAPS 1
#else
#define CC1D_HALF_TAPS 0
#endif

// The taps and bias as those kernels hold them; returns the held bias.
CC1D_DEVICE float cc1d_hold_taps(float* w, float bias) {
#if CC1D_HALF_TAPS
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) w[k] *= 0.5f;
    return 0.5f * bias;
#else
    (void)w;
    return bias;
#endif
}

// The held gradient at a position: dout · act'(z) (doubled with halved taps), given the
// window sum of the held taps (z, or h = z / 2 with halved taps).
CC1D_DEVICE float cc1d_bwd_held_grad(float dout, float held_sum) {
#if CC1D_HALF_TAPS
    const float h = held_sum, t = cc1d_tanh_approx(h);
    return fmaf(dout, fmaf(t, fmaf(-h, t, 1.0f), h), dout);
#else
    return dout * cc1d_bwd_act_grad(held_sum);
#endif
}

// A thread's dweight / dbias sums of held gradients as sums of true ones.
CC1D_DEVICE void cc1d_bwd_release_sums(float* dw, float& db) {
#if CC1D_HALF_TAPS
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) dw[k] *= 0.5f;
    db *= 0.5f;
#else
    (void)dw; (void)db;
#endif
}

// Element (d, k) of dweight, or of dbias for k == CC1D_WIDTH; null when dbias is absent.
CC1D_DEVICE void* cc1d_bwd_dw_element(const cc1d_bwd_params& p, cc1d_i64 d, int k) {
    const cc1d_i64 off = k < CC1D_WIDTH ? d * p.dw_stride_d + k * p.dw_stride_k : d * p.db_stride;
    char* base = (char*)(k < CC1D_WIDTH ? p.dweight : p.dbias);
    if (base == 0) return 0;
    return base + off * (p.dw_is_fp32 ? (cc1d_i64)sizeof(float) : (cc1d_i64)sizeof(w_t));
}

// Stores v (plus the old value when `add`) into dweight/dbias in their dtype.
CC1D_DEVICE void cc1d_bwd_write_dw(const cc1d_bwd_params& p, cc1d_i64 d, int k, float v, bool add) {
    void* q = cc1d_bwd_dw_element(p, d, k);
    if (q == 0) return;
    if (p.dw_is_fp32) {
        float* f = (float*)q;
        *f = add ? *f + v : v;
    } else {
        w_t* w = (w_t*)q;
        *w = cc1d_from_float<w_t>(add ? cc1d_to_float(*w) + v : v);
    }
}

// Whether the block emitting a sum holds the channel's whole sum (the only block for its
// channels, or a cluster's rank 0 after adding its ranks').
CC1D_DEVICE bool cc1d_bwd_writes_direct(const cc1d_bwd_params& p) {
    return p.dw_mode == CC1D_DW_DIRECT || p.dw_mode == CC1D_DW_CLUSTER;
}

// One sum of channel d from the block that owns partial row `part`.
CC1D_DEVICE void cc1d_bwd_emit(const cc1d_bwd_params& p, cc1d_i64 part, cc1d_i64 d, int k, float v) {
#if !CC1D_HAS_BIAS
    if (k == CC1D_WIDTH) return;   // no bias: db has no home
#endif
#if CC1D_DETERMINISTIC
    if (cc1d_bwd_writes_direct(p)) cc1d_bwd_write_dw(p, d, k, v, p.accumulate != 0);
    else p.partials[part * p.partials_row + d * CC1D_BWD_SUMS + k] = v;
#else
    // Atomic path: the order of additions varies from run to run (hence not deterministic).
    (void)part;
    if (cc1d_bwd_writes_direct(p)) {
        cc1d_bwd_write_dw(p, d, k, v, p.accumulate != 0);
    } else if (p.dw_mode == CC1D_DW_ATOMIC_DIRECT) {
        void* q = cc1d_bwd_dw_element(p, d, k);
        if (q != 0) atomicAdd((float*)q, v);
    } else {
        atomicAdd(p.partials + d * CC1D_BWD_SUMS + k, v);
    }
#endif
}

#if CC1D_HAS_CLUSTERS
// CC1D_DW_CLUSTER: the blocks of a cluster (its ranks, in part order: the launcher's grid
// is (channels, parts) in clusters of (1, parts)) are the parts of the same channel. Each
// block's thread of sum k (k < 0: a thread without one) parks it in its block's shared
// memory; after a cluster barrier rank 0 adds the ranks' sums k in rank order, the order
// in which the reduce kernel adds the partial rows (the same bits either way), and emits
// them; a second barrier keeps every block, and its shared memory, until rank 0 has read
// it. Every thread of every block of the grid calls it.
CC1D_DEVICE void cc1d_bwd_cluster_emit(const cc1d_bwd_params& p, cc1d_i64 d, int k, float sum) {
    __shared__ float parked[CC1D_BWD_SUMS];
    if (k >= 0) parked[k] = sum;
    cc1d_cluster_sync();
    if (cc1d_cluster_rank() == 0 && k >= 0) {
        float v[CC1D_BWD_MAX_CLUSTER_PARTS];
#pragma unroll
        for (int r = 0; r < CC1D_BWD_MAX_CLUSTER_PARTS; ++r)   // (all reads in flight at once)
            v[r] = r < p.groups ? cc1d_cluster_read(&parked[k], (unsigned int)r) : 0.0f;
        float total = 0.0f;
#pragma unroll
        for (int r = 0; r < CC1D_BWD_MAX_CLUSTER_PARTS; ++r)
            if (r < p.groups) total += v[r];   // ranks in order
        cc1d_wait_prior_grid();   // (an overlapped launch: the kernel before it is done)
        cc1d_bwd_emit(p, 0, d, k, total);
    }
    cc1d_cluster_sync();
}
#endif

// A backward thread's weights and bias (fp32, as held: cc1d_hold_taps) and its dweight /
// dbias sums, for the N channels it owns.
template <int N> struct cc1d_bwd_thread_state {
    float w[N][CC1D_WIDTH];
    float bias[N];
    float dw[N][CC1D_WIDTH];
    float db[N];
};

// A block's dweight/dbias sums out via cc1d_bwd_emit: each of its rows x cols threads
// (thread (row, col) owning channels c0 .. c0 + n - 1, n <= N) parks its sums in `red`
// (which may alias the block's tiles: hence the barrier first), then thread (row, col)
// adds sums j = row, row + rows, ... of its column over the rows in row order (the same
// bits every run) and emits them.
template <int N>
CC1D_DEVICE void cc1d_bwd_block_sums(const cc1d_bwd_params& p, float* red, cc1d_i64 part, cc1d_i64 c0, int n,
                                     const cc1d_bwd_thread_state<N>& st, int rows, int cols, int row, int col) {
    constexpr int kSums = N * CC1D_BWD_SUMS;   // per thread: [channel][k]
    __syncthreads();
#pragma unroll
    for (int c = 0; c < N; ++c)
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k)
            red[(row * kSums + c * CC1D_BWD_SUMS + k) * cols + col] = k < CC1D_WIDTH ? st.dw[c][k] : st.db[c];
    __syncthreads();
    cc1d_wait_prior_grid();   // the zeroing kernel before an atomic target (overlapped launch)
    for (int j = row; j < kSums; j += rows) {
        const int c = j / CC1D_BWD_SUMS, k = j - c * CC1D_BWD_SUMS;
        if (c >= n) continue;
        float sum = 0.0f;
        for (int y = 0; y < rows; ++y) sum += red[(y * kSums + j) * cols + col];
        cc1d_bwd_emit(p, part, c0 + c, k, sum);
    }
}

// The seq id of row position pos (< seqlen): before the row start seq_idx[b, 0] when
// initial_states feed the first sequence, else -1.
CC1D_DEVICE int cc1d_bwd_seq_id(const cc1d_bwd_params& p, const int* seq_row, cc1d_i64 pos) {
    if (pos >= 0) return seq_row[pos * p.seq_stride_l];
    return CC1D_HAS_INITIAL_STATES && p.seqlen > 0 ? seq_row[0] : -1;
}

// The masks kernel (reduce entry, CC1D_REDUCE_SEQ_MASKS): one mask a thread,
// seq_masks[b][t] for t < seq_mask_stride, 0 from the row end on. Every channel's blocks
// then read a row's masks (1-2 bytes a position) instead of its ids and their compares.
CC1D_DEVICE void cc1d_bwd_seq_masks(const cc1d_bwd_params& p) {
    const cc1d_i64 i = ((cc1d_i64)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= p.batch * p.seq_mask_stride) return;
    const cc1d_i64 b = i / p.seq_mask_stride, t = i - b * p.seq_mask_stride;
    unsigned int m = 0u;
    if (t < p.seqlen) {
        const int* seq_row = p.seq_idx + b * p.seq_stride_b;
        const int id = seq_row[t * p.seq_stride_l];
        m = id >= 0 ? 1u : 0u;
#pragma unroll
        for (int back = 1; back <= CC1D_K; ++back)
            if (cc1d_bwd_seq_id(p, seq_row, t - back) == id) m |= 1u << back;
    }
    reinterpret_cast<cc1d_seq_mask*>(p.seq_masks)[i] = (cc1d_seq_mask)m;
}

// The reduce kernel, for CC1D_REDUCE_THREADS / reduce_slices consecutive (d, k) of the
// [dim][CC1D_BWD_SUMS] sums per block. Zeroing (one slice): a thread clears one. Summing:
// the rows 0 .. parts-1 split into reduce_slices runs of consecutive rows; a thread sums
// its column's run in row order with CC1D_REDUCE_BATCH loads in flight, then the first
// slice adds the runs' sums in run order. The order depends only on `parts` (the
// launcher picks the slices from it), so every run gives the same bits; with one slice it
// is plain row order. A single thread walking 64 rows cost 10 us on an H100 (a load
// latency per few rows); split into runs of at most 8 rows (up to 128 rows), one latency.
CC1D_DEVICE void cc1d_bwd_reduce(const cc1d_bwd_params& p) {
    // Dynamic: the launcher gives CC1D_REDUCE_THREADS floats only when reduce_slices > 1,
    // so the one-slice launches (zeroing, a few rows) keep the kernel without shared memory.
    extern __shared__ float cc1d_reduce_runs[];
    const cc1d_i64 n = p.dim * CC1D_BWD_SUMS;
    // Shifts and masks from the launcher's powers of two: each division by a runtime value
    // was a dependent chain of ~15-20 instructions through a MUFU.RCP before the first load
    // (docs/perf.md entry 37).
    const int columns = 1 << p.reduce_column_shift;
    const int column = (int)threadIdx.x & (columns - 1), slice = (int)threadIdx.x >> p.reduce_column_shift;
    const cc1d_i64 i = (cc1d_i64)blockIdx.x * columns + column;
    const cc1d_i64 d = i / CC1D_BWD_SUMS;
    const int k = (int)(i - d * CC1D_BWD_SUMS);
    // The summing launch may start while the main kernel still runs (an overlapped launch,
    // see the prelude): nothing is read or written before that kernel is done. The zeroing
    // launch comes first in its call (the wait returns at once) and lets the main kernel
    // start early.
    cc1d_allow_dependent_launch();
    cc1d_wait_prior_grid();
#if CC1D_HAS_SEQ_IDX && !CC1D_CHANNEL_LAST
    if (p.reduce_mode == CC1D_REDUCE_SEQ_MASKS) {
        cc1d_bwd_seq_masks(p);
        return;
    }
#endif
    if (p.reduce_mode == CC1D_REDUCE_ZERO) {
        if (i >= n) return;
#if !CC1D_HAS_BIAS
        if (k == CC1D_WIDTH) return;
#endif
        if (p.dw_mode == CC1D_DW_ATOMIC_DIRECT) cc1d_bwd_write_dw(p, d, k, 0.0f, false);
        else p.partials[i] = 0.0f;
        return;
    }
    const cc1d_i64 first = slice * p.reduce_run_rows;
    const cc1d_i64 last = first + p.reduce_run_rows < p.parts ? first + p.reduce_run_rows : p.parts;
    float sum = 0.0f;
    if (i < n) {
        for (cc1d_i64 r0 = first; r0 < last; r0 += CC1D_REDUCE_BATCH) {
            float v[CC1D_REDUCE_BATCH];
#pragma unroll
            for (int b = 0; b < CC1D_REDUCE_BATCH; ++b) v[b] = r0 + b < last ? p.partials[(r0 + b) * p.partials_row + i] : 0.0f;
#pragma unroll
            for (int b = 0; b < CC1D_REDUCE_BATCH; ++b)
                if (r0 + b < last) sum += v[b];   // rows in order
        }
    }
    if (p.reduce_slices > 1) {   // (the same in every thread)
        cc1d_reduce_runs[threadIdx.x] = sum;
        __syncthreads();
        if (slice != 0) return;
        for (int r = 1; r < p.reduce_slices; ++r) sum += cc1d_reduce_runs[r * columns + column];   // runs in order
    }
    if (i >= n) return;
#if !CC1D_HAS_BIAS
    if (k == CC1D_WIDTH) return;
#endif
    cc1d_bwd_write_dw(p, d, k, sum, p.accumulate != 0);
}

// The activation (SiLU: z·sigmoid(z), cc1d_sigmoid_fast).
CC1D_DEVICE float cc1d_activate_fast(float z) {
#if CC1D_SILU && defined(CC1D_TANH_APPROX) && CC1D_X_DTYPE != 0
    // z·(0.5 + 0.5·tanh(z/2)) = h + h·tanh(h) with h = z/2: one multiply, one tanh, one fma.
    const float h = 0.5f * z;
    return fmaf(h, cc1d_tanh_approx(h), h);
#elif CC1D_SILU
    return z * cc1d_sigmoid_fast(z);
#else
    return z;
#endif
}

// The activation of a window sum of held taps (cc1d_hold_taps): h = z / 2 with halved ones.
CC1D_DEVICE float cc1d_activate_held(float held_sum) {
#if CC1D_HALF_TAPS
    return fmaf(held_sum, cc1d_tanh_approx(held_sum), held_sum);
#else
    return cc1d_activate_fast(held_sum);
#endif
}

// fp32 -> x_t, round to nearest even, in one instruction where the hardware has one
// (NVIDIA sm_80+: cvt.rn.bf16.f32); elsewhere cc1d_from_float. The software bf16
// rounding costs about eight instructions an element, a large share of a forward
// kernel's issue budget at full memory bandwidth.
CC1D_DEVICE x_t cc1d_to_x(float v) {
#if defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CC1D_X_DTYPE == 2
    unsigned short bits;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(v));
    return cc1d_of_bits<x_t>(bits);
#else
    return cc1d_from_float<x_t>(v);
#endif
}

// CC1D_VEC fp32 values -> one raw vector of x_t; 16-bit pairs in one instruction each on
// NVIDIA sm_80+ (cvt.rn.{bf16x2,f16x2}.f32 packs its first operand into the high half).
CC1D_DEVICE cc1d_vec16 cc1d_v16_from_floats(const float (&v)[16 / sizeof(x_t)]) {
    cc1d_vec16 r = cc1d_v16_zero();
#if defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CC1D_X_DTYPE != 0
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#if CC1D_X_DTYPE == 2
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r.w[i]) : "f"(v[2 * i + 1]), "f"(v[2 * i]));
#else
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r.w[i]) : "f"(v[2 * i + 1]), "f"(v[2 * i]));
#endif
    }
#else
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e) cc1d_v16_set(r, e, cc1d_from_float<x_t>(v[e]));
#endif
    return r;
}

// Two fp32 values -> one 32-bit word of two x_t (lo in the low half), rounded to nearest
// even; one instruction on NVIDIA sm_80+ (16-bit x), cc1d_from_float elsewhere.
CC1D_DEVICE unsigned int cc1d_pack_pair(float lo, float hi) {
#if defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CC1D_X_DTYPE == 2
    unsigned int r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#elif defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CC1D_X_DTYPE == 1
    unsigned int r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return (cc1d_bits_of(cc1d_from_float<x_t>(lo)) & 0xffffu) | (cc1d_bits_of(cc1d_from_float<x_t>(hi)) << 16);
#endif
}

// The taps of channel d (one that exists) spread over lanes: lane k < W of every group of
// 32 lanes loads weight k as stored, lane W the bias (0 without one). A kernel issues this
// one load a thread before its first data loads and gathers the taps with
// cc1d_gather_lane_taps only after those went out, so the two memory latencies overlap:
// taps loaded whole and converted (or moved to uniform registers) right away would make
// every data load wait behind theirs. Any op's parameter block names weight, bias and
// their strides alike.
template <class Params>
CC1D_DEVICE unsigned int cc1d_load_lane_tap(const Params& p, cc1d_i64 d) {
    const int k = (int)(threadIdx.x & 31u);
    if (k < CC1D_WIDTH) return cc1d_bits_of(reinterpret_cast<const w_t*>(p.weight)[d * p.w_stride_d + k * p.w_stride_k]);
#if CC1D_HAS_BIAS
    if (k == CC1D_WIDTH) return cc1d_bits_of(reinterpret_cast<const w_t*>(p.bias)[d * p.bias_stride]);
#endif
    return 0u;
}
// The taps as fp32 into w from each lane's cc1d_load_lane_tap; returns the bias. Every lane
// of the group of 32 takes part.
CC1D_DEVICE float cc1d_gather_lane_taps(unsigned int mine, float (&w)[CC1D_WIDTH]) {
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) w[k] = cc1d_to_float(cc1d_of_bits<w_t>((unsigned int)cc1d_shfl_group32((int)mine, k)));
    return cc1d_to_float(cc1d_of_bits<w_t>((unsigned int)cc1d_shfl_group32((int)mine, CC1D_WIDTH)));
}
// The weights and bias of channel d (one that exists) as stored, for a kernel that loads
// them together with its data and converts them (cc1d_taps_to_float) once all are out.
struct cc1d_raw_taps {
    w_t w[CC1D_WIDTH];
    w_t bias;   // 0 without one
};
template <class Params>
CC1D_DEVICE cc1d_raw_taps cc1d_load_raw_taps(const Params& p, cc1d_i64 d) {
    cc1d_raw_taps r;
    const w_t* weight = reinterpret_cast<const w_t*>(p.weight);
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) r.w[k] = weight[d * p.w_stride_d + k * p.w_stride_k];
    r.bias = cc1d_of_bits<w_t>(0u);
#if CC1D_HAS_BIAS
    r.bias = reinterpret_cast<const w_t*>(p.bias)[d * p.bias_stride];
#endif
    return r;
}
// The taps as fp32 into w; returns the bias.
CC1D_DEVICE float cc1d_taps_to_float(const cc1d_raw_taps& r, float (&w)[CC1D_WIDTH]) {
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) w[k] = cc1d_to_float(r.w[k]);
    return cc1d_to_float(r.bias);
}
// Weights of channel d (one that exists) as fp32 into w; returns its bias (0 without one).
template <class Params>
CC1D_DEVICE float cc1d_load_channel_taps(const Params& p, cc1d_i64 d, float (&w)[CC1D_WIDTH]) {
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) w[k] = cc1d_load_float<w_t>(p.weight, d * p.w_stride_d + k * p.w_stride_k);
    float bias = 0.0f;
#if CC1D_HAS_BIAS
    bias = cc1d_load_float<w_t>(p.bias, d * p.bias_stride);
#endif
    return bias;
}

// Weights and bias of channels first .. first + N - 1 as stored (zeros past D),
// widened to fp32 by cc1d_widen_channel_weights: a kernel can ask for them before its
// other loads and widen them only after those are issued, so their latency passes under
// theirs (a conversion in the loads' place makes the thread wait for them there).
template <int N> struct cc1d_raw_channel_weights {
    w_t w[N][CC1D_WIDTH];
    w_t bias[N];
};
template <int N, class Params>
CC1D_DEVICE cc1d_raw_channel_weights<N> cc1d_fetch_channel_weights(const Params& p, cc1d_i64 first) {
    cc1d_raw_channel_weights<N> raw;
    const w_t* weight = reinterpret_cast<const w_t*>(p.weight);
#pragma unroll
    for (int j = 0; j < N; ++j) {
        const cc1d_i64 channel = first + j;
        const bool has_channel = channel < p.dim;
#pragma unroll
        for (int k = 0; k < CC1D_WIDTH; ++k)
            raw.w[j][k] = has_channel ? weight[channel * p.w_stride_d + k * p.w_stride_k] : cc1d_of_bits<w_t>(0u);
        raw.bias[j] = cc1d_of_bits<w_t>(0u);
#if CC1D_HAS_BIAS
        if (has_channel) raw.bias[j] = reinterpret_cast<const w_t*>(p.bias)[channel * p.bias_stride];
#endif
    }
    return raw;
}
template <int N>
CC1D_DEVICE void cc1d_widen_channel_weights(const cc1d_raw_channel_weights<N>& raw, float (&w)[N][CC1D_WIDTH],
                                            float (&bias)[N]) {
#pragma unroll
    for (int j = 0; j < N; ++j) {
#pragma unroll
        for (int k = 0; k < CC1D_WIDTH; ++k) w[j][k] = cc1d_to_float(raw.w[j][k]);
        bias[j] = cc1d_to_float(raw.bias[j]);
    }
}
// Both at once.
template <int N, class Params>
CC1D_DEVICE void cc1d_load_channel_weights(const Params& p, cc1d_i64 first, float (&w)[N][CC1D_WIDTH], float (&bias)[N]) {
    cc1d_widen_channel_weights(cc1d_fetch_channel_weights<N>(p, first), w, bias);
}

// Linear index of this block in a flattened grid (x fastest, then y). Launchers keep a
// grid under 2^32 blocks, so kernels split it with 32-bit divisions: a 64-bit division
// is a called subroutine whose register saves show up as spills.
CC1D_DEVICE unsigned int cc1d_flat_block() { return blockIdx.y * gridDim.x + blockIdx.x; }

#if CC1D_HAS_ASYNC_COPY
// A channel-last tile's input rows as cp.async copies (prelude_cuda.h): vector i of the
// tile (ROW_VECS 16-byte vectors a row, VECS in all) is row i / ROW_VECS, token
// first_token + that row, from `row0` (the tile's first channel at token 0) with stride
// stride_l; zeros for tokens outside [0, len). Thread tid takes vectors tid, tid + THREADS,
// ... (LOADS of them); complete after cc1d_wait_async_copies.
// HOISTED (16-bit x, and the channel-last backward's tiles in fp32 too): THREADS is a
// multiple of ROW_VECS, so a thread's vectors share one column and lie THREADS / ROW_VECS
// rows apart: the 64-bit address and the token range are worked out once, each copy then
// costs a pointer step and two 32-bit compares instead of ~30 instructions of 64-bit
// products and compares (a third of the 16-bit channel-last forward tile kernel's
// instructions). The fp32 forward keeps the per-copy form: with this one it ran 1-6%
// slower on an H200, for no reason found (docs/perf.md, entry 87); the fp32 backward tile
// takes it (entry 152: on an H100 0.8-1.1% faster on calls of 2^22-2^23 elements, even on
// larger ones).
template <int LOADS, int THREADS, int ROW_VECS, int VECS, bool HOISTED = (sizeof(x_t) == 2)>
CC1D_DEVICE void cc1d_copy_tile_rows_async(cc1d_vec16* tile, const x_t* row0, cc1d_i64 stride_l, cc1d_i64 first_token,
                                           cc1d_i64 len) {
    if constexpr (HOISTED) {
        static_assert(THREADS % ROW_VECS == 0, "a thread's vectors share one column");
        constexpr int kRowsApart = THREADS / ROW_VECS;
        constexpr int kSpan = LOADS * kRowsApart;   // rows from the thread's first to past its last
        const unsigned int tid = threadIdx.x;
        const int row = (int)(tid / ROW_VECS), col = (int)(tid % ROW_VECS);
        const cc1d_i64 token = first_token + row;
        // Rows m * kRowsApart (m < LOADS) hold tokens in [0, len) for rows in [lo, hi),
        // clamped to [0, kSpan] so they fit in 32 bits.
        const int lo = token >= 0 ? 0 : (-token > kSpan ? kSpan : (int)(-token));
        const int hi = len - token <= 0 ? 0 : (len - token > kSpan ? kSpan : (int)(len - token));
        const x_t* from = row0 + token * stride_l + col * CC1D_VEC;
        const cc1d_i64 step = kRowsApart * stride_l;
#pragma unroll
        for (int m = 0; m < LOADS; ++m) {
            const int i = (int)tid + m * THREADS;
            const int r = m * kRowsApart;
            if (i < VECS) {
                if (r >= lo && r < hi)
                    cc1d_copy16_async(&tile[i], from);
                else
                    cc1d_v16_store_aligned(&tile[i], cc1d_v16_zero());
            }
            from += step;
        }
    } else {
#pragma unroll
        for (int m = 0; m < LOADS; ++m) {
            const int i = threadIdx.x + m * THREADS;
            const int row = i / ROW_VECS, col = i - row * ROW_VECS;
            const cc1d_i64 t = first_token + row;
            if (i < VECS && t >= 0 && t < len)
                cc1d_copy16_async(&tile[i], row0 + t * stride_l + col * CC1D_VEC);
            else if (i < VECS)
                cc1d_v16_store_aligned(&tile[i], cc1d_v16_zero());
        }
    }
}
#endif

// A channel-last tile's input rows through registers where they cannot be copied as
// aligned 16-byte vectors: rows off 16-byte boundaries (a D or a view's offset that is not
// a multiple of a vector: `aligned` false) or a tile reaching past D. The tile is laid out
// as cc1d_copy_tile_rows_async lays it (vector i: row i / ROW_VECS, token first_token +
// row, channels c0 + (i % ROW_VECS) * VEC on; `row0` is channel 0 at token 0, stride_d
// between channels); zeros for tokens outside [0, len) and channels past dim. A vector that
// lies whole in its row is one aligned load, or in a row of unit stride away from its ends
// two aligned loads and a shift (cc1d_v16_load_shifted), every load of the tile issued
// before the first store; the few at a row's ends (or all, where channels are not
// adjacent) then go element by element, in a loop of their own so their code stays out of
// the unrolled one. Element by element throughout, each load waited for the one before
// it: the channel-last backward's tile kernel ran 3x1001x777 bf16 at 8% of copy bandwidth
// (docs/perf.md, entry 160). Complete when it returns (no copies in flight).
template <int LOADS, int THREADS, int ROW_VECS, int VECS, int BATCH = LOADS>
CC1D_DEVICE void cc1d_load_tile_rows_any(cc1d_vec16* tile, const x_t* row0, cc1d_i64 stride_l, cc1d_i64 stride_d,
                                         cc1d_i64 c0, cc1d_i64 first_token, cc1d_i64 len, cc1d_i64 dim, bool aligned) {
    // Whether the vector from channel pos goes whole (the same for all of a tile's vectors
    // but at the row's ends).
    auto whole = [&](cc1d_i64 pos) {
        return aligned ? pos + CC1D_VEC <= dim : stride_d == 1 && cc1d_v16_shifted_ok(pos, dim);
    };
    // Vector i's token and first channel.
    auto token_of = [&](int i) { return first_token + i / ROW_VECS; };
    auto channel_of = [&](int i) { return c0 + (i - i / ROW_VECS * ROW_VECS) * CC1D_VEC; };
#pragma unroll
    for (int m0 = 0; m0 < LOADS; m0 += BATCH) {
        cc1d_vec16 v[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            const int i = threadIdx.x + (m0 + j) * THREADS;
            const cc1d_i64 t = token_of(i), pos = channel_of(i);
            const x_t* at = row0 + t * stride_l + pos;
            v[j] = cc1d_v16_zero();
            if (m0 + j < LOADS && i < VECS && t >= 0 && t < len && whole(pos))
                v[j] = aligned ? cc1d_v16_load_aligned(at) : cc1d_v16_load_shifted(at);
        }
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            const int i = threadIdx.x + (m0 + j) * THREADS;
            if (m0 + j < LOADS && i < VECS) cc1d_v16_store_aligned(&tile[i], v[j]);
        }
    }
    // The vectors at a row's ends, by the thread that stored their zeros above.
    if (stride_d == 1 && c0 >= CC1D_VEC && c0 + ROW_VECS * CC1D_VEC + CC1D_VEC <= dim) return;   // none here
#pragma unroll 1
    for (int m = 0; m < LOADS; ++m) {
        const int i = threadIdx.x + m * THREADS;
        const cc1d_i64 t = token_of(i), pos = channel_of(i);
        if (i < VECS && t >= 0 && t < len && !whole(pos) && pos < dim)
            cc1d_v16_store_aligned(&tile[i], cc1d_v16_load(row0 + t * stride_l, stride_d, pos, dim, false));
    }
}
