// Channel-first backward, in one launch, of calls whose rows lie on 16-byte vectors: the
// third kernel of a channel-first small-call module up to width 4 without seq_idx or
// states (CC1D_BWD_CF_VECTORS_KERNEL; backward_small.cpp decides which calls take it).
//
// As in bwd_small.cu a block owns C = 2^small_channel_shift channels and every one of their
// N = B * L positions and writes dweight/dbias itself: no walk, no reduce launch, the same
// bits from run to run. Here a thread takes whole vectors of a row (CC1D_VEC positions,
// at most CC1D_BWD_CF_VECTOR_CHUNKS of them) with 16-byte loads instead of element by
// element: its vector of x and of dout, the vector of x before it (the K positions its
// first windows reach back to) and the vectors after it (the K gradients past the vector
// that dx needs, with SiLU also the x their activations need). Every load of a thread goes
// out in one round; neighbours load the same lines, so the extra vectors mostly hit L1 or
// L2. The K gradients past a vector are computed by both threads that need them instead
// of exchanged (exchanging them by shuffles was slower, docs/perf.md entry 117), so
// nothing waits on a barrier before the sums. The same kernel over parts of a channel in
// the main module, for longer calls, lost to the main kernel (entry 118).
//
// The module holds the kernel twice: for up to CC1D_BWD_CF_VECTOR_CHUNKS vectors a thread
// (CC1D_ENTRY_VECTORS) and for one (CC1D_ENTRY_VECTORS_ONE, which calls of at most a
// block's threads of vectors a channel take). A kernel's registers are those of its
// largest form, every load of both vectors live at once: the one-vector form needs 10-16
// fewer, so more blocks share a multiprocessor on calls of many channels (entry 134).
#if defined(CC1D_ENTRY_VECTORS)
constexpr int kBvXs = CC1D_VEC + (CC1D_SILU ? 2 : 1) * CC1D_K;   // x̃[s0-K .. s0+V-1 (+K with SiLU)]
constexpr int kBvGs = CC1D_VEC + CC1D_K;                          // g[s0 .. s0+V-1+K]
static_assert(CC1D_K < CC1D_VEC, "a vector's halo lies in the vectors next to it");

// The raw vectors one chunk (a vector of a row, first position s0) needs.
struct bv_chunk {
    cc1d_vec16 x_before, x, x_after, dout, dout_after;
};

// group_sums: [CC1D_BWD_SUMS * (CC1D_BWD_SMALL_THREADS / 32)], the sums of each group of 32
// lanes of a channel, where a channel has more than 32.
template <int kBvChunks>
__device__ __forceinline__ void bv_backward(const cc1d_bwd_params& p, float* group_sums) {
    constexpr int V = CC1D_VEC;
    const int shift = p.small_channel_shift;
    const int slots = CC1D_BWD_SMALL_THREADS >> shift;   // threads a channel
    const int t = (int)threadIdx.x;
    const int slot = t & (slots - 1), lc = t >> (kBsThreadsLog2 - shift);
    const int c = (int)(cc1d_flat_block() << shift) + lc;   // dim < 2^31 (the plan)
    const bool has = c < p.dim;
    const int L = (int)p.seqlen, row_vectors = L / V;   // L is a multiple of V (the plan)
    const int chunks = has ? (int)p.batch * row_vectors : 0;   // < 2^16 (the plan)
    const bs_divisor by_row = bs_divisor_of(row_vectors);
    const int cc = has ? c : 0;   // (offsets of a channel past D would not fit 32 bits)
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + cc * (int)p.x_stride_d;
    const x_t* dout = reinterpret_cast<const x_t*>(p.dout) + cc * (int)p.dout_stride_d;
    x_t* dx = reinterpret_cast<x_t*>(p.dx) + cc * (int)p.dx_stride_d;

    // Every load first, as stored; conversions only once all are out.
    const cc1d_raw_taps taps = cc1d_load_raw_taps(p, cc);
    bv_chunk raw[kBvChunks];
#pragma unroll
    for (int i = 0; i < kBvChunks; ++i) {
        const int j = slot + i * slots;
        const cc1d_vec16 zero = cc1d_v16_zero();
        raw[i] = bv_chunk{zero, zero, zero, zero, zero};
        if (j >= chunks) continue;
        const int b = bs_div(j, by_row), s0 = (j - b * row_vectors) * V;
        const x_t* xr = x + b * (int)p.x_stride_b + s0;
        const x_t* dr = dout + b * (int)p.dout_stride_b + s0;
        const bool after = s0 + V < L;
        raw[i].x = cc1d_v16_load_aligned(xr);
        raw[i].dout = cc1d_v16_load_aligned(dr);
        if (CC1D_K > 0 && s0 > 0) raw[i].x_before = cc1d_v16_load_aligned(xr - V);
        if (CC1D_K > 0 && after) raw[i].dout_after = cc1d_v16_load_aligned(dr + V);
        if (CC1D_SILU && CC1D_K > 0 && after) raw[i].x_after = cc1d_v16_load_aligned(xr + V);
    }

    float w[CC1D_WIDTH];
    const float bias = cc1d_hold_taps(w, cc1d_taps_to_float(taps, w));
    (void)bias;
    float dw[CC1D_WIDTH], db = 0.0f;
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) dw[k] = 0.0f;
#pragma unroll
    for (int i = 0; i < kBvChunks; ++i) {
        const int j = slot + i * slots;
        if (j >= chunks) continue;
        const int b = bs_div(j, by_row), s0 = (j - b * row_vectors) * V;
        // xs[m] = x̃[s0 - K + m]; positions before the row start and past its end read 0
        // (no initial states here; past the end dout is 0, so g is too).
        float xs[kBvXs];
#pragma unroll
        for (int m = 0; m < CC1D_K; ++m) xs[m] = cc1d_v16_float(raw[i].x_before, V - CC1D_K + m);
#pragma unroll
        for (int e = 0; e < V; ++e) xs[CC1D_K + e] = cc1d_v16_float(raw[i].x, e);
#pragma unroll
        for (int m = CC1D_K + V; m < kBvXs; ++m) xs[m] = cc1d_v16_float(raw[i].x_after, m - CC1D_K - V);
        // g[q] = held gradient at s0 + q (cc1d_bwd_held_grad): dout · act'(z).
        float g[kBvGs];
#pragma unroll
        for (int q = 0; q < kBvGs; ++q) {
            const float d = q < V ? cc1d_v16_float(raw[i].dout, q) : cc1d_v16_float(raw[i].dout_after, q - V);
#if CC1D_SILU
            float z = bias;
#pragma unroll
            for (int k = 0; k < CC1D_WIDTH; ++k) z = fmaf(w[k], xs[q + k], z);
            g[q] = cc1d_bwd_held_grad(d, z);
#else
            g[q] = d;
#endif
        }
        // dx[s0 + e] = sum_k w[k] g[s0 + e + K - k]; the thread's shares of dw and db.
        float o[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k < CC1D_WIDTH; ++k) acc = fmaf(w[k], g[e + CC1D_K - k], acc);
            o[e] = acc;
            db += g[e];
#pragma unroll
            for (int k = 0; k < CC1D_WIDTH; ++k) dw[k] = fmaf(g[e], xs[e + k], dw[k]);   // x̃[s0+e-K+k] * g[s0+e]
        }
        cc1d_v16_store_global(dx + b * (int)p.dx_stride_b + s0, cc1d_v16_from_floats(o));
    }
    cc1d_bwd_release_sums(dw, db);

    // Each sum over the channel's slots: a butterfly within 32 lanes, then (channels of
    // more than 32 slots) the groups of 32 in index order. The same bits every run.
    float v[CC1D_BWD_SUMS];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) v[k] = dw[k];
    v[CC1D_WIDTH] = db;
#pragma unroll
    for (int bit = 1; bit < 32; bit <<= 1) {
        if (bit >= slots) break;   // (the same in every lane)
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k) v[k] += cc1d_shfl_xor(v[k], bit);
    }
    if (slots <= 32) {   // (the same in every thread of the block)
        if (slot == 0 && has)
#pragma unroll
            for (int k = 0; k < CC1D_BWD_SUMS; ++k) cc1d_bwd_emit(p, 0, c, k, v[k]);
        return;
    }
    const int groups = slots >> 5;
    if ((slot & 31) == 0)
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k) group_sums[(lc * CC1D_BWD_SUMS + k) * groups + (slot >> 5)] = v[k];
    __syncthreads();
    if (t < (CC1D_BWD_SUMS << shift)) {
        const int jc = t / CC1D_BWD_SUMS, k = t - jc * CC1D_BWD_SUMS;
        const int d = (int)(cc1d_flat_block() << shift) + jc;
        if (d < p.dim) {
            float sum = 0.0f;
            for (int i = 0; i < groups; ++i) sum += group_sums[t * groups + i];
            cc1d_bwd_emit(p, 0, d, k, sum);
        }
    }
}

extern "C" __global__ void __launch_bounds__(CC1D_BWD_SMALL_THREADS) CC1D_ENTRY_VECTORS(cc1d_bwd_params p) {
    __shared__ float group_sums[CC1D_BWD_SUMS * (CC1D_BWD_SMALL_THREADS / 32)];
    bv_backward<CC1D_BWD_CF_VECTOR_CHUNKS>(p, group_sums);
}

extern "C" __global__ void __launch_bounds__(CC1D_BWD_SMALL_THREADS) CC1D_ENTRY_VECTORS_ONE(cc1d_bwd_params p) {
    __shared__ float group_sums[CC1D_BWD_SUMS * (CC1D_BWD_SMALL_THREADS / 32)];
    bv_backward<1>(p, group_sums);
}
#endif
