// Channel-first backward of calls whose rows lie on 16-byte vectors: the third kernel of
// the channel-first backward modules, main and small-call, up to width 4 without seq_idx
// or states (CC1D_BWD_CF_VECTORS_KERNEL). backward_small.cpp sends calls of up to
// 2 * CC1D_BWD_SMALL_THREADS vectors a channel to the small-call module's (one launch, a
// block writes dweight/dbias itself: no reduce launch); backward_channel_first.cpp sends
// some larger ones to the main module's, a channel split into parts whose partial sums the
// module's reduce kernel adds.
//
// A block owns C = 2^small_channel_shift channels (one where a channel has parts) and the
// vectors [first, last) of each, in the order of the channel's rows (b, then s): a part
// of p.units_per_part vectors. A thread takes whole vectors (CC1D_VEC positions each, at
// most CC1D_BWD_CF_VECTOR_CHUNKS of them) with 16-byte loads: its vector of x and of
// dout, the vector of x before it (the K positions its first windows reach back to) and
// the vectors after it (the K gradients past the vector that dx needs, with SiLU also
// the x their activations need). Every load of a thread goes out in one round;
// neighbours load the same lines, so the extra vectors mostly hit L1 or L2. The K
// gradients past a vector are computed by both threads that need them instead of
// exchanged (exchanging them by shuffles was slower, docs/perf.md entry 117), so nothing
// waits on a barrier before the sums. Offsets are 32-bit (the plans take only views
// within 2^31 elements).
#if defined(CC1D_ENTRY_VECTORS)
constexpr int kBvChunks = CC1D_BWD_CF_VECTOR_CHUNKS;
constexpr int kBvThreadsLog2 = 8;
static_assert((1 << kBvThreadsLog2) == CC1D_BWD_SMALL_THREADS, "the vector kernel's block is 2^kBvThreadsLog2 threads");
constexpr int kBvXs = CC1D_VEC + (CC1D_SILU ? 2 : 1) * CC1D_K;   // x̃[s0-K .. s0+V-1 (+K with SiLU)]
constexpr int kBvGs = CC1D_VEC + CC1D_K;                          // g[s0 .. s0+V-1+K]
static_assert(CC1D_K < CC1D_VEC, "a vector's halo lies in the vectors next to it");

// The raw vectors one chunk (a vector of a row, first position s0) needs.
struct bv_chunk {
    cc1d_vec16 x_before, x, x_after, dout, dout_after;
};

extern "C" __global__ void __launch_bounds__(CC1D_BWD_SMALL_THREADS) CC1D_ENTRY_VECTORS(cc1d_bwd_params p) {
    // The reduce kernel (calls in parts) may be scheduled now; it waits for this one to finish.
    cc1d_allow_dependent_launch();
    // The sums of each group of 32 lanes of a channel, where a channel has more than 32.
    __shared__ float group_sums[CC1D_BWD_SUMS * (CC1D_BWD_SMALL_THREADS / 32)];
    constexpr int V = CC1D_VEC;
    const int shift = p.small_channel_shift;
    const int slots = CC1D_BWD_SMALL_THREADS >> shift;   // threads a channel
    const int t = (int)threadIdx.x;
    const int slot = t & (slots - 1), lc = t >> (kBvThreadsLog2 - shift);
    // Blocks: part * channel blocks + channel block (the launcher pads the grid's last row).
    const int channel_blocks = (int)((p.dim + (1 << shift) - 1) >> shift);
    const int block = (int)cc1d_flat_block();
    if (block >= (int)p.groups * channel_blocks) return;
    const int part = block / channel_blocks;
    const int c0 = (block - part * channel_blocks) << shift;
    const int c = c0 + lc;   // dim < 2^31 (the plans)
    const bool has = c < p.dim;
    const int L = (int)p.seqlen, row_vectors = L / V;   // L is a multiple of V (the plans)
    const int chunks = (int)p.batch * row_vectors;
    const int first = part * (int)p.units_per_part;
    const int last = has ? min(first + (int)p.units_per_part, chunks) : first;
    const int cc = has ? c : 0;   // (offsets of a channel past D would not fit 32 bits)
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + cc * (int)p.x_stride_d;
    const x_t* dout = reinterpret_cast<const x_t*>(p.dout) + cc * (int)p.dout_stride_d;
    x_t* dx = reinterpret_cast<x_t*>(p.dx) + cc * (int)p.dx_stride_d;

    // Every load first, as stored; conversions only once all are out.
    const cc1d_raw_taps taps = cc1d_load_raw_taps(p, cc);
    bv_chunk raw[kBvChunks];
    int row[kBvChunks], s0[kBvChunks];
#pragma unroll
    for (int i = 0; i < kBvChunks; ++i) {
        const int j = first + slot + i * slots;
        const cc1d_vec16 zero = cc1d_v16_zero();
        raw[i] = bv_chunk{zero, zero, zero, zero, zero};
        row[i] = j / row_vectors;
        s0[i] = (j - row[i] * row_vectors) * V;
        if (j >= last) continue;
        const x_t* xr = x + row[i] * (int)p.x_stride_b + s0[i];
        const x_t* dr = dout + row[i] * (int)p.dout_stride_b + s0[i];
        const bool after = s0[i] + V < L;
        raw[i].x = cc1d_v16_load_aligned(xr);
        raw[i].dout = cc1d_v16_load_aligned(dr);
        if (CC1D_K > 0 && s0[i] > 0) raw[i].x_before = cc1d_v16_load_aligned(xr - V);
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
        if (first + slot + i * slots >= last) continue;
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
        cc1d_v16_store_global(dx + row[i] * (int)p.dx_stride_b + s0[i], cc1d_v16_from_floats(o));
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
    cc1d_wait_prior_grid();   // the zeroing kernel before an atomic target (calls in parts)
    if (slots <= 32) {   // (the same in every thread of the block)
        if (slot == 0 && has)
#pragma unroll
            for (int k = 0; k < CC1D_BWD_SUMS; ++k) cc1d_bwd_emit(p, part, c, k, v[k]);
        return;
    }
    const int groups = slots >> 5;
    if ((slot & 31) == 0)
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k) group_sums[(lc * CC1D_BWD_SUMS + k) * groups + (slot >> 5)] = v[k];
    __syncthreads();
    if (t < (CC1D_BWD_SUMS << shift)) {
        const int jc = t / CC1D_BWD_SUMS, k = t - jc * CC1D_BWD_SUMS;
        const int d = c0 + jc;
        if (d < p.dim) {
            float sum = 0.0f;
            for (int i = 0; i < groups; ++i) sum += group_sums[t * groups + i];
            cc1d_bwd_emit(p, part, d, k, sum);
        }
    }
}
#endif
