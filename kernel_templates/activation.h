// ---- The activation and its derivative ----------------------------------------------
// SiLU, the backward's act'(z), and the halved taps and doubled gradients that the
// issue-bound 16-bit kernels hold (CC1D_HALF_TAPS).
//
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

// The activation of a window sum of held taps (cc1d_hold_taps): h = z / 2 with halved ones.
CC1D_DEVICE float cc1d_activate_held(float held_sum) {
#if CC1D_HALF_TAPS
    return fmaf(held_sum, cc1d_tanh_approx(held_sum), held_sum);
#else
    return cc1d_activate_fast(held_sum);
#endif
}

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
