// ---- Storage types and conversions ----------------------------------------------------
// The first of the shared headers every kernel family takes (render.cpp lists them), after
// the backend prelude and the generated header, which defines the variant's macros:
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
