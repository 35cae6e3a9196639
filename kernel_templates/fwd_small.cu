// Causal conv1d forward of a small call, either layout, one output a thread: the module of
// a small-call forward variant (Variant::small_call), compiled only once a call of at most
// a few thousand outputs asks for it (forward_small.cpp).
//
// The main kernels give a thread many outputs (a vector or four along time, a batch of
// steps along channels), which is what moves bytes at full bandwidth; on a call of a few
// thousand outputs that leaves a few dozen warps, each a chain of several hundred
// dependent instructions, and the chain is the time (docs/perf.md, entry 60). Here every
// thread has one output: its W taps, the weights and bias (and the ids) are loaded at once,
// straight from global memory (neighbouring lanes share their lines), so a warp waits for
// one round of loads and runs a few dozen instructions. Lanes follow the unit stride:
// time in channel-first, channels in channel-last. Offsets are 32-bit (the plan takes only
// calls whose tensors span less than 2^31 elements) and the flat index is split by
// multiplies (cc1d_divisor).
CC1D_DEVICE unsigned int fs_div(unsigned int n, cc1d_divisor d) {
    return ((unsigned int)(((unsigned long long)n * d.magic) >> 32) + n) >> d.shift;
}

// x̃ of channel d of row b at position pos < 0 (raw, in x's dtype): initial_states when
// given, else 0.
CC1D_DEVICE x_t fs_before_start(const cc1d_fwd_params& p, int b, int d, int pos) {
#if CC1D_HAS_INITIAL_STATES
    const x_t* init = reinterpret_cast<const x_t*>(p.initial_states);
    return init[b * (int)p.init_stride_b + d * (int)p.init_stride_d + (pos + CC1D_K) * (int)p.init_stride_k];
#else
    (void)p, (void)b, (void)d, (void)pos;
    return cc1d_from_float<x_t>(0.0f);
#endif
}

extern "C" __global__ void __launch_bounds__(CC1D_FWD_SMALL_THREADS) CC1D_ENTRY(cc1d_fwd_params p) {
    const int L = (int)p.seqlen, D = (int)p.dim;
    const unsigned int i = cc1d_flat_block() * CC1D_FWD_SMALL_THREADS + threadIdx.x;
    if (i >= (unsigned int)((int)p.batch * D * L)) return;   // the plan keeps B * D * L < 2^31
    const unsigned int outer = fs_div(i, p.small_by_inner), b = fs_div(outer, p.small_by_middle);
#if CC1D_CHANNEL_LAST
    const int d = (int)(i - outer * (unsigned int)D), t = (int)(outer - b * (unsigned int)L);
#else
    const int t = (int)(i - outer * (unsigned int)L), d = (int)(outer - b * (unsigned int)D);
#endif
    const int row = (int)b;

    // Every load of the thread, issued before any is used.
    float w[CC1D_WIDTH];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k)
        w[k] = cc1d_load_float<w_t>(p.weight, d * (int)p.w_stride_d + k * (int)p.w_stride_k);
    float z = 0.0f;
#if CC1D_HAS_BIAS
    z = cc1d_load_float<w_t>(p.bias, d * (int)p.bias_stride);
#endif
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + row * (int)p.x_stride_b + d * (int)p.x_stride_d;
    const int xl = (int)p.x_stride_l;
    x_t taps[CC1D_WIDTH];   // taps[k] = x̃[t - K + k]
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) {
        const int pos = t - CC1D_K + k;
        taps[k] = pos >= 0 ? x[pos * xl] : fs_before_start(p, row, d, pos);
    }
#if CC1D_HAS_SEQ_IDX
    // Positions before the row start count as -1, or as seq_idx[b, 0] when initial_states
    // feed the first sequence.
    const int* ids = p.seq_idx + row * (int)p.seq_stride_b;
    const int sl = (int)p.seq_stride_l;
    const int before = CC1D_HAS_INITIAL_STATES ? ids[0] : -1;
    int id[CC1D_WIDTH];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) {
        const int pos = t - CC1D_K + k;
        id[k] = pos >= 0 ? ids[pos * sl] : before;
    }
#endif

    // z = bias + sum_k w[k] x̃[t-K+k] in k order, as the main kernels add it.
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) {
#if CC1D_HAS_SEQ_IDX
        if (id[k] == id[CC1D_K]) z = fmaf(w[k], cc1d_to_float(taps[k]), z);   // other sequences drop out
#else
        z = fmaf(w[k], cc1d_to_float(taps[k]), z);
#endif
    }
    float y = cc1d_activate_fast(z);
#if CC1D_HAS_SEQ_IDX
    if (id[CC1D_K] < 0) y = 0.0f;   // padding: exactly 0
#endif
    x_t* out = reinterpret_cast<x_t*>(p.out);
    out[row * (int)p.out_stride_b + d * (int)p.out_stride_d + t * (int)p.out_stride_l] = cc1d_to_x(y);

#if CC1D_HAS_FINAL_STATES
    // final[j] = x̃[L - K + j], raw: the thread at t = L - K + j writes it, and when L < K
    // the thread at t = 0 writes the slots before the row start.
    x_t* fin = reinterpret_cast<x_t*>(p.final_states) + row * (int)p.final_stride_b + d * (int)p.final_stride_d;
    const int fk = (int)p.final_stride_k;
    if (t >= L - CC1D_K) fin[(t - (L - CC1D_K)) * fk] = taps[CC1D_K];
    if (t == 0)
        for (int j = 0; j < CC1D_K - L; ++j) fin[j * fk] = fs_before_start(p, row, d, L - CC1D_K + j);
#endif
}
