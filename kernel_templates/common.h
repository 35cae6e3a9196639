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

CC1D_DEVICE float cc1d_sigmoid(float z) { return 1.0f / (1.0f + cc1d_exp(-z)); }
CC1D_DEVICE float cc1d_activate(float z) {
#if CC1D_SILU
    return z * cc1d_sigmoid(z);
#else
    return z;
#endif
}
// d out / d z, given z.
CC1D_DEVICE float cc1d_activation_grad(float z) {
#if CC1D_SILU
    float s = cc1d_sigmoid(z);
    return s * (1.0f + z * (1.0f - s));
#else
    (void)z;
    return 1.0f;
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

// CC1D_VEC elements of a row from element `pos` on (element i at row[(pos + i) * stride]):
// one 16-byte access when `vectorized` (the caller promises alignment, unit stride and
// that the whole vector lies in [0, len)), else element by element, reading 0 and
// writing nothing outside [0, len).
CC1D_DEVICE cc1d_vec16 cc1d_v16_load(const x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len,
                                     bool vectorized) {
    if (vectorized) return *reinterpret_cast<const cc1d_vec16*>(row + pos);
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
        *reinterpret_cast<cc1d_vec16*>(row + pos) = v;
        return;
    }
#pragma unroll
    for (int i = 0; i < CC1D_VEC; ++i) {
        const cc1d_i64 p = pos + i;
        if (p >= 0 && p < len) row[p * stride] = cc1d_v16_raw(v, i);
    }
}
