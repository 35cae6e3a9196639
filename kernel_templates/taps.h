// ---- The weights and bias: loaded, spread over lanes, widened to fp32 -----------------
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
