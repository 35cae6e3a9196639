// Causal conv1d decoding update: x (B, D, T) new tokens against conv_state (B_cache, D, S).
//
// One thread per (row b, channel d); threads of a block run along D, so the loads of x,
// out and the state (contiguous along S per channel) of a warp cover one contiguous span
// and the cache lines are fully used. A thread:
//  1. reads its K history values (plain: the last K of the S entries; circular buffer:
//     (c - K + j) mod S) into fp32 registers,
//  2. walks the T new tokens with that window (compile-time indices), writing out,
//  3. writes the new state entries as raw copies (bit-identical), after all its reads.
// Plain shift in place: new[i] = old[i + T] (or x[i + T - S]) for i ascending reads only
// entries at or after i + T > i, which no earlier step of this thread has overwritten.
// A state row equal to the pad slot (conv_state_indices) gets zeros in out and is not
// touched. Small blocks and one kernel keep decoding launch-light: B = 256, D = 8192 is
// 2M threads, plenty to fill the device.

CC1D_DEVICE cc1d_i64 update_wrap(cc1d_i64 position, cc1d_i64 length) {
    const cc1d_i64 m = position % length;
    return m < 0 ? m + length : m;
}

extern "C" __global__ void __launch_bounds__(CC1D_UPDATE_THREADS) CC1D_ENTRY(cc1d_update_params p) {
    const unsigned int channel_blocks = ((unsigned int)p.dim + blockDim.x - 1) / blockDim.x;
    const unsigned int block = cc1d_flat_block();
    const unsigned int b = block / channel_blocks;
    const cc1d_i64 d = (cc1d_i64)(block - b * channel_blocks) * blockDim.x + threadIdx.x;
    if (b >= p.batch || d >= p.dim) return;

    const x_t* x = reinterpret_cast<const x_t*>(p.x) + b * p.x_stride_b + d * p.x_stride_d;
    x_t* out = reinterpret_cast<x_t*>(p.out) + b * p.out_stride_b + d * p.out_stride_d;
    const cc1d_i64 T = p.seqlen, S = p.state_len;

    cc1d_i64 slot = b;
#if CC1D_HAS_STATE_INDICES
    slot = p.conv_state_indices[b * p.indices_stride];
    if (slot == p.pad_slot_id) {
        for (cc1d_i64 t = 0; t < T; ++t) out[t * p.out_stride_l] = cc1d_of_bits<x_t>(0u);
        return;
    }
#endif
    x_t* state = reinterpret_cast<x_t*>(p.conv_state) + slot * p.state_stride_b + d * p.state_stride_d;
#if CC1D_HAS_CACHE_SEQLENS
    const cc1d_i64 c = p.cache_seqlens[b * p.seqlens_stride];
#endif

    float w[CC1D_WIDTH];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) w[k] = cc1d_load_float<w_t>(p.weight, d * p.w_stride_d + k * p.w_stride_k);
    float bias = 0.0f;
#if CC1D_HAS_BIAS
    bias = cc1d_load_float<w_t>(p.bias, d * p.bias_stride);
#endif

    // 1. history: window[k] = the input K - k steps before the first new token.
    float window[CC1D_K + 1];
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k) {
#if CC1D_HAS_CACHE_SEQLENS
        const cc1d_i64 at = update_wrap(c - CC1D_K + k, S);
#else
        const cc1d_i64 at = S - CC1D_K + k;
#endif
        window[k] = cc1d_to_float(state[at * p.state_stride_l]);
    }

    // 2. outputs.
#pragma unroll 1
    for (cc1d_i64 t = 0; t < T; ++t) {
        const float cur = cc1d_to_float(x[t * p.x_stride_l]);
        float z = bias;
#pragma unroll
        for (int k = 0; k < CC1D_K; ++k) z = fmaf(w[k], window[k], z);
        z = fmaf(w[CC1D_K], cur, z);
        out[t * p.out_stride_l] = cc1d_to_x(cc1d_activate_fast(z));
#pragma unroll
        for (int k = 0; k + 1 < CC1D_K; ++k) window[k] = window[k + 1];
        if (CC1D_K > 0) window[CC1D_K > 0 ? CC1D_K - 1 : 0] = cur;
    }

    // 3. the new state, copied raw from x and the old state.
#if CC1D_HAS_CACHE_SEQLENS
    // Token t goes to (c + t) mod S; with T > S only the last S tokens survive, so the
    // earlier ones are skipped (the result equals writing all of them in order).
    if (S > 0) {
        for (cc1d_i64 t = T > S ? T - S : 0; t < T; ++t)
            state[update_wrap(c + t, S) * p.state_stride_l] = x[t * p.x_stride_l];
    }
#else
    for (cc1d_i64 i = 0; i < S; ++i) {
        const cc1d_i64 from = i + T;   // index into concat(old state, x)
        state[i * p.state_stride_l] = from < S ? state[from * p.state_stride_l] : x[(from - S) * p.x_stride_l];
    }
#endif
}
