// Causal conv1d backward, channel-last layout: x, dout and dx are stored (B, L, D), D contiguous.
//
// Block: blockDim.x threads along channels (the launcher uses CC1D_BWD_CL_THREADS_X) by
// blockDim.y along time; block = group * channel_blocks + channel_block (flattened over x
// and y). Thread (tx, ty) owns kBlCpt consecutive channels and walks the units
// u = group * units_per_part + ty, + blockDim.y, ... ; a unit is (batch b, time chunk).
// A warp reads kBlCpt * 32 consecutive channels of one time step per instruction, so
// every access is coalesced, and a thread keeps its whole sliding window in registers:
// no shared memory until the final dweight/dbias sums.
//
// The walk goes BACKWARD in time, one position s per step, from the chunk end + K - 1
// down to the chunk start (down to -K in chunk 0 when initial_states are given):
//   g[s]    = dout[s] * act'(z[s]), z[s] from x̃[s-K .. s]       (x loaded ahead, older)
//   window  G = g[s .. s+K]                                       (shifted by one per step)
//   dx[s]   = sum_k w[k] G[K-k] (+ dfinal near the row end)       (dinitial_states for s < 0)
//   dw[k]  += x̃[s] * G[K-k],  db += g[s]                          (for the chunk's own s)
// Writing dw[k] = sum_s x̃[s] g[s+K-k] this way needs x̃ only at the current position,
// so without silu a thread holds one window (g) and with silu one more (x̃[s-K .. s]).
// Terms across a sequence boundary (seq_idx) are dropped by comparing the ids of the two
// positions of each term; the g of a padding position (id < 0) is 0.
//
// Loads come in batches of kBlSteps time steps: every load of a batch is issued before
// any of its values is used (kBlSteps * 2 * kBlCpt elements in flight per thread). With
// silu the K oldest x of a batch carry over as the newest of the next one, so each x is
// loaded once; steps past the walk's end only shift the windows (no stores, no sums).
//
// kBlCpt is a 16-byte vector of channels, halved while kBlCpt * width exceeds
// CC1D_BWD_CL_WINDOW: the windows, weights and dw sums are each kBlCpt * width registers,
// and a thread that needs more than ~128 registers costs the occupancy that keeps bytes
// in flight. Narrower vectors stay coalesced across the warp.
//
// Threads whose channels are not 16-byte aligned (vector_ok == 0) or that own the tail
// of D load and store element by element; the walk is the same.

constexpr int bl_channels_per_thread() {
    int c = CC1D_VEC;
    while (c > 1 && c * CC1D_WIDTH > CC1D_BWD_CL_WINDOW) c /= 2;
    return c;
}
constexpr int kBlCpt = bl_channels_per_thread();
constexpr int kBlBytes = kBlCpt * (int)sizeof(x_t);
constexpr int kBlWords = (kBlBytes + 3) / 4;
// Time steps per load batch: CC1D_BWD_CL_BATCH_BYTES of x per thread, but at most 32 x
// values held as fp32 (16-bit inputs double in registers once converted) and 4..16 steps.
constexpr int bl_steps() {
    int n = CC1D_BWD_CL_BATCH_BYTES / kBlBytes;
    if (n * kBlCpt > 32) n = 32 / kBlCpt;
    return n < 4 ? 4 : (n > 16 ? 16 : n);
}
constexpr int kBlSteps = bl_steps();
constexpr int kBlLook = CC1D_SILU ? CC1D_K : 0;      // x positions needed below the current one
constexpr int kBlSlots = kBlSteps + CC1D_K;          // x window slots of one batch

// A walking thread needs ~130-190 registers (windows, weights, sums, one batch of loads).
// ptxas's default budget for a 128-thread bound squeezes such kernels to 128 or 168 with
// small spills inside the walk; "at least one block per SM" lets it allocate what the
// walk needs, which lands at 2-3 blocks of 128 threads per SM.
#define BL_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CL_THREADS, 1)

// kBlCpt elements of x_t as stored bits (16-bit elements packed two per word).
struct bl_raw {
    unsigned int w[kBlWords];
};
struct __attribute__((aligned(8))) bl_word2 {
    unsigned int w[2];
};

CC1D_DEVICE bl_raw bl_raw_zero() {
    bl_raw r;
#pragma unroll
    for (int i = 0; i < kBlWords; ++i) r.w[i] = 0u;
    return r;
}
CC1D_DEVICE float bl_float(const bl_raw& r, int e) {
    if (sizeof(x_t) == 4) return cc1d_to_float(cc1d_of_bits<x_t>(r.w[e]));
    return cc1d_to_float(cc1d_of_bits<x_t>((r.w[e >> 1] >> ((e & 1) * 16)) & 0xffffu));
}
CC1D_DEVICE void bl_set(bl_raw& r, int e, x_t v) {
    const unsigned int bits = cc1d_bits_of(v);
    if (sizeof(x_t) == 4) {
        r.w[e] = bits;
    } else {
        const int shift = (e & 1) * 16;
        r.w[e >> 1] = (r.w[e >> 1] & ~(0xffffu << shift)) | (bits << shift);
    }
}

// The channels a thread owns.
struct bl_lane {
    cc1d_i64 c0;   // first channel
    int n;         // channels that exist (kBlCpt except at the tail of D)
    bool vec;      // one aligned access per time step
};

// kBlCpt channels at `at` (channel c0 of one time step), stride `sc` between channels.
CC1D_DEVICE bl_raw bl_load(const x_t* at, cc1d_i64 sc, const bl_lane& lane) {
    bl_raw r = bl_raw_zero();
    if (lane.vec) {
        if constexpr (kBlBytes == 16) {
            const cc1d_vec16 v = *reinterpret_cast<const cc1d_vec16*>(at);
#pragma unroll
            for (int i = 0; i < 4; ++i) r.w[i] = v.w[i];
        } else if constexpr (kBlBytes == 8) {
            const bl_word2 v = *reinterpret_cast<const bl_word2*>(at);
            r.w[0] = v.w[0];
            r.w[1] = v.w[1];
        } else if constexpr (kBlBytes == 4) {
            r.w[0] = *reinterpret_cast<const unsigned int*>(at);
        } else {
            r.w[0] = *reinterpret_cast<const unsigned short*>(at);
        }
        return r;
    }
#pragma unroll
    for (int e = 0; e < kBlCpt; ++e)
        if (e < lane.n) bl_set(r, e, at[e * sc]);
    return r;
}
CC1D_DEVICE void bl_store(x_t* at, cc1d_i64 sc, const bl_lane& lane, const bl_raw& r) {
    if (lane.vec) {
        if constexpr (kBlBytes == 16) {
            cc1d_vec16 v;
#pragma unroll
            for (int i = 0; i < 4; ++i) v.w[i] = r.w[i];
            *reinterpret_cast<cc1d_vec16*>(at) = v;
        } else if constexpr (kBlBytes == 8) {
            bl_word2 v;
            v.w[0] = r.w[0];
            v.w[1] = r.w[1];
            *reinterpret_cast<bl_word2*>(at) = v;
        } else if constexpr (kBlBytes == 4) {
            *reinterpret_cast<unsigned int*>(at) = r.w[0];
        } else {
            *reinterpret_cast<unsigned short*>(at) = (unsigned short)r.w[0];
        }
        return;
    }
#pragma unroll
    for (int e = 0; e < kBlCpt; ++e)
        if (e < lane.n) at[e * sc] = cc1d_of_bits<x_t>(sizeof(x_t) == 4 ? r.w[e] : (r.w[e >> 1] >> ((e & 1) * 16)) & 0xffffu);
}

// What one walk needs of its row.
struct bl_row {
    cc1d_i64 b, L;
    const x_t* x;     // channel c0 at time 0
    const x_t* dout;
    x_t* dx;
    const int* seq;   // seq_idx[b, :]
};

// x̃ at position q (< L): x, or initial_states / 0 before the row start.
CC1D_DEVICE bl_raw bl_load_x(const cc1d_bwd_params& p, const bl_row& row, const bl_lane& lane, cc1d_i64 q) {
    if (q >= 0) return bl_load(row.x + q * p.x_stride_l, p.x_stride_d, lane);
    bl_raw r = bl_raw_zero();
#if CC1D_HAS_INITIAL_STATES
    if (q >= -CC1D_K) {
        const x_t* init = reinterpret_cast<const x_t*>(p.initial_states) + row.b * p.init_stride_b +
                          lane.c0 * p.init_stride_d + (q + CC1D_K) * p.init_stride_k;
#pragma unroll
        for (int e = 0; e < kBlCpt; ++e)
            if (e < lane.n) bl_set(r, e, init[e * p.init_stride_d]);
    }
#endif
    return r;
}

// Seq id of position q (< L); before the row start seq_idx[b, 0] when initial_states feed
// the first sequence, else -1.
CC1D_DEVICE int bl_id_at(const cc1d_bwd_params& p, const bl_row& row, cc1d_i64 q) {
#if CC1D_HAS_SEQ_IDX
    if (q >= 0) return row.seq[q * p.seq_stride_l];
    return CC1D_HAS_INITIAL_STATES && row.L > 0 ? row.seq[0] : -1;   // L == 0: no g, ids unused
#else
    (void)p; (void)row; (void)q;
    return 0;
#endif
}

// The gradient reaching x̃[s] (s < L) is acc: s >= 0 goes to dx (at `dx`), s < 0 to
// dinitial_states. final_states[j] = x̃[L-K+j], so dfinal adds straight in (`final`).
CC1D_DEVICE void bl_emit_dx(const cc1d_bwd_params& p, const bl_row& row, const bl_lane& lane, cc1d_i64 s, bool final,
                            x_t* dx, float (&acc)[kBlCpt]) {
#if CC1D_HAS_FINAL_STATES
    if (final) {
        const x_t* fin = reinterpret_cast<const x_t*>(p.dfinal_states) + row.b * p.dfinal_stride_b +
                         lane.c0 * p.dfinal_stride_d + (s - (row.L - CC1D_K)) * p.dfinal_stride_k;
#pragma unroll
        for (int e = 0; e < kBlCpt; ++e)
            if (e < lane.n) acc[e] += cc1d_to_float(fin[e * p.dfinal_stride_d]);
    }
#else
    (void)final;
#endif
    if (s >= 0) {
        bl_raw r = bl_raw_zero();
#pragma unroll
        for (int e = 0; e < kBlCpt; ++e) bl_set(r, e, cc1d_from_float<x_t>(acc[e]));
        bl_store(dx, p.dx_stride_d, lane, r);
        return;
    }
#if CC1D_HAS_INITIAL_STATES
    if (p.dinitial_states != 0) {
        x_t* dinit = reinterpret_cast<x_t*>(p.dinitial_states) + row.b * p.dinit_stride_b + lane.c0 * p.dinit_stride_d +
                     (s + CC1D_K) * p.dinit_stride_k;
#pragma unroll
        for (int e = 0; e < kBlCpt; ++e)
            if (e < lane.n) dinit[e * p.dinit_stride_d] = cc1d_from_float<x_t>(acc[e]);
    }
#endif
}

// Per-thread weights and sums.
struct bl_state {
    float w[kBlCpt][CC1D_WIDTH];
    float bias[kBlCpt];
    float dw[kBlCpt][CC1D_WIDTH];
    float db[kBlCpt];
};

// A 64-bit distance in steps as a small int in [-1, kBlSteps]: the per-step tests of a
// batch then compare compile-time step numbers with 32-bit bounds computed once.
CC1D_DEVICE int bl_steps_bound(cc1d_i64 v) { return v < -1 ? -1 : (v > kBlSteps ? kBlSteps : (int)v); }

// One unit: chunk [t_begin, t_end) of row b, walked backward (see the header comment).
CC1D_DEVICE void bl_walk(const cc1d_bwd_params& p, const bl_row& row, const bl_lane& lane, cc1d_i64 chunk, bl_state& st) {
    const cc1d_i64 L = row.L;
    const cc1d_i64 t_begin = chunk * p.tile_len;
    const cc1d_i64 t_end = t_begin + p.tile_len < L ? t_begin + p.tile_len : L;
    // First position walked: dx near t_end needs g up to t_end + K - 1.
    const cc1d_i64 s_top = (t_end + CC1D_K < L ? t_end + CC1D_K : L) - 1;
    // Last position walked: chunk 0 continues into x̃[-K .. -1] (initial_states) for dw and dinit.
    const cc1d_i64 s_bot = (CC1D_HAS_INITIAL_STATES && chunk == 0) ? -CC1D_K : t_begin;
    const cc1d_i64 xs = p.x_stride_l, ds = p.dout_stride_l, os = p.dx_stride_l;

    float G[CC1D_K + 1][kBlCpt];   // G[i] = g[s + i] after step s
    int S[CC1D_K + 1];             // S[i] = id of s + i
#pragma unroll
    for (int i = 0; i <= CC1D_K; ++i) {
        S[i] = -1;
#pragma unroll
        for (int c = 0; c < kBlCpt; ++c) G[i][c] = 0.0f;
    }
    // X[m] = x̃[sb - kBlSteps + 1 - K + m] for the batch with top position sb; SX its ids.
    float X[kBlSlots][kBlCpt];
    int SX[kBlSlots];
#if CC1D_SILU
    // The first batch's newest K (later batches get them carried over).
#pragma unroll
    for (int m = 0; m < CC1D_K; ++m) {
        const cc1d_i64 q = s_top - CC1D_K + 1 + m;
        const bl_raw r = q >= s_bot - kBlLook ? bl_load_x(p, row, lane, q) : bl_raw_zero();
        SX[kBlSteps + m] = bl_id_at(p, row, q);
#pragma unroll
        for (int c = 0; c < kBlCpt; ++c) X[kBlSteps + m][c] = bl_float(r, c);
    }
#endif

    for (cc1d_i64 sb = s_top; sb >= s_bot; sb -= kBlSteps) {
        // Load n of the batch: x (and id) at q0 - kBlLook + n into slot K - kBlLook + n, dout at
        // q0 + n (step kBlSteps - 1 - n). Running pointers: one 64-bit add per load.
        const cc1d_i64 q0 = sb - kBlSteps + 1;
        const int n_x = bl_steps_bound(s_bot - q0);                         // first x needed
        const int n_x0 = bl_steps_bound(kBlLook - q0);                      // first x at a position >= 0
        const int n_d = bl_steps_bound((s_bot > 0 ? s_bot : 0) - q0);       // first dout needed
        const x_t* px = row.x + (q0 - kBlLook) * xs;
        const x_t* pd = row.dout + q0 * ds;
        bl_raw rx[kBlSteps], rd[kBlSteps];
        int rid[kBlSteps];
#pragma unroll
        for (int n = 0; n < kBlSteps; ++n) {
            rx[n] = rd[n] = bl_raw_zero();
            if (n >= n_x) rx[n] = n >= n_x0 ? bl_load(px, p.x_stride_d, lane) : bl_load_x(p, row, lane, q0 - kBlLook + n);
            if (n >= n_d) rd[n] = bl_load(pd, p.dout_stride_d, lane);
            rid[n] = bl_id_at(p, row, q0 - kBlLook + n);
            px += xs;
            pd += ds;
        }
#pragma unroll
        for (int n = 0; n < kBlSteps; ++n) {
            SX[CC1D_K - kBlLook + n] = rid[n];
#pragma unroll
            for (int c = 0; c < kBlCpt; ++c) X[CC1D_K - kBlLook + n][c] = bl_float(rx[n], c);
        }

        // ---- the batch's steps, newest position first: step i is position s = sb - i ----
        const int i_own = bl_steps_bound(sb - t_end + 1);     // s < t_end from here on
        const int i_bot = bl_steps_bound(sb - s_bot);         // s >= s_bot up to here
        const int i_pos = bl_steps_bound(sb);                 // s >= 0 up to here
        const int i_fin = bl_steps_bound(sb - (L - CC1D_K));  // s >= L - K up to here
        x_t* pdx = row.dx + sb * os;
#pragma unroll
        for (int i = 0; i < kBlSteps; ++i, pdx -= os) {
            const int xi = kBlSteps - 1 - i + CC1D_K;   // slot of x̃[s]
            const int di = kBlSteps - 1 - i;            // rd index of dout[s]
            float gs[kBlCpt];
#pragma unroll
            for (int c = 0; c < kBlCpt; ++c) {
                float gv = bl_float(rd[di], c);
#if CC1D_SILU
                float z = st.bias[c];
#pragma unroll
                for (int k = 0; k <= CC1D_K; ++k) {
#if CC1D_HAS_SEQ_IDX
                    z = fmaf(SX[xi - CC1D_K + k] == SX[xi] ? st.w[c][k] : 0.0f, X[xi - CC1D_K + k][c], z);
#else
                    z = fmaf(st.w[c][k], X[xi - CC1D_K + k][c], z);
#endif
                }
                gv *= cc1d_activation_grad(z);
#endif
#if CC1D_HAS_SEQ_IDX
                if (SX[xi] < 0) gv = 0.0f;   // padding: the output was forced to 0
#endif
                gs[c] = i <= i_pos ? gv : 0.0f;
            }
#pragma unroll
            for (int k = CC1D_K; k > 0; --k) {
                S[k] = S[k - 1];
#pragma unroll
                for (int c = 0; c < kBlCpt; ++c) G[k][c] = G[k - 1][c];
            }
            S[0] = SX[xi];
#pragma unroll
            for (int c = 0; c < kBlCpt; ++c) G[0][c] = gs[c];

            if (i >= i_own && i <= i_bot) {   // the chunk's own position (or x̃[s < 0] in chunk 0)
                float acc[kBlCpt];
#pragma unroll
                for (int c = 0; c < kBlCpt; ++c) {
                    acc[c] = 0.0f;
#pragma unroll
                    for (int k = 0; k <= CC1D_K; ++k) {
#if CC1D_HAS_SEQ_IDX
                        const float gk = S[CC1D_K - k] == S[0] ? G[CC1D_K - k][c] : 0.0f;
#else
                        const float gk = G[CC1D_K - k][c];
#endif
                        acc[c] = fmaf(st.w[c][k], gk, acc[c]);
                        st.dw[c][k] = fmaf(X[xi][c], gk, st.dw[c][k]);   // x̃[s] * g[s+K-k]
                    }
                    st.db[c] += gs[c];
                }
                bl_emit_dx(p, row, lane, sb - i, i <= i_fin, pdx, acc);
            }
        }

#if CC1D_SILU
        // The batch's K oldest x are the next batch's newest.
#pragma unroll
        for (int m = 0; m < CC1D_K; ++m) {
            SX[kBlSteps + m] = SX[m];
#pragma unroll
            for (int c = 0; c < kBlCpt; ++c) X[kBlSteps + m][c] = X[m][c];
        }
#endif
    }
}

// Sums of the blockDim.y threads of each channel, in index order, then out via cc1d_bwd_emit.
CC1D_DEVICE void bl_block_sums(const cc1d_bwd_params& p, float* red, cc1d_i64 part, const bl_lane& lane, const bl_state& st) {
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    constexpr int kSums = kBlCpt * CC1D_BWD_SUMS;   // per thread: [channel][k]
#pragma unroll
    for (int c = 0; c < kBlCpt; ++c)
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k)
            red[(ty * kSums + c * CC1D_BWD_SUMS + k) * bx + tx] = k < CC1D_WIDTH ? st.dw[c][k] : st.db[c];
    __syncthreads();
    for (int j = ty; j < kSums; j += by) {
        const int c = j / CC1D_BWD_SUMS, k = j - c * CC1D_BWD_SUMS;
        if (c >= lane.n) continue;
        float sum = 0.0f;
        for (int y = 0; y < by; ++y) sum += red[(y * kSums + j) * bx + tx];
        cc1d_bwd_emit(p, part, lane.c0 + c, k, sum);
    }
}

extern "C" __global__ void BL_LAUNCH_BOUNDS CC1D_ENTRY(cc1d_bwd_params p) {
    __shared__ float bl_red[CC1D_BWD_CL_THREADS * kBlCpt * CC1D_BWD_SUMS];

    const cc1d_i64 per_block = (cc1d_i64)blockDim.x * kBlCpt;
    const cc1d_i64 channel_blocks = (p.dim + per_block - 1) / per_block;
    // The launcher flattens group * channel_blocks + cb into x (and y past 2^24 blocks).
    const cc1d_i64 block = (cc1d_i64)blockIdx.y * gridDim.x + blockIdx.x;
    if (block >= p.groups * channel_blocks) return;
    const cc1d_i64 group = block / channel_blocks;
    const cc1d_i64 cb = block - group * channel_blocks;

    bl_lane lane;
    lane.c0 = cb * per_block + (cc1d_i64)threadIdx.x * kBlCpt;
    const cc1d_i64 left = p.dim - lane.c0;
    lane.n = left <= 0 ? 0 : (left < kBlCpt ? (int)left : kBlCpt);
    lane.vec = p.vector_ok != 0 && lane.n == kBlCpt;

    bl_state st;
#pragma unroll
    for (int c = 0; c < kBlCpt; ++c) {
        const bool has = c < lane.n;
#pragma unroll
        for (int k = 0; k < CC1D_WIDTH; ++k) {
            st.w[c][k] = has ? cc1d_load_float<w_t>(p.weight, (lane.c0 + c) * p.w_stride_d + k * p.w_stride_k) : 0.0f;
            st.dw[c][k] = 0.0f;
        }
        st.bias[c] = 0.0f;
#if CC1D_HAS_BIAS
        if (has) st.bias[c] = cc1d_load_float<w_t>(p.bias, (lane.c0 + c) * p.bias_stride);
#endif
        st.db[c] = 0.0f;
    }

    if (lane.n > 0) {
        const cc1d_i64 units = p.batch * p.tiles;
        const cc1d_i64 first = group * p.units_per_part;
        const cc1d_i64 last = first + p.units_per_part < units ? first + p.units_per_part : units;
        for (cc1d_i64 u = first + threadIdx.y; u < last; u += blockDim.y) {
            bl_row row;
            row.b = u / p.tiles;
            row.L = p.seqlen;
            row.x = reinterpret_cast<const x_t*>(p.x) + row.b * p.x_stride_b + lane.c0 * p.x_stride_d;
            row.dout = reinterpret_cast<const x_t*>(p.dout) + row.b * p.dout_stride_b + lane.c0 * p.dout_stride_d;
            row.dx = reinterpret_cast<x_t*>(p.dx) + row.b * p.dx_stride_b + lane.c0 * p.dx_stride_d;
            row.seq = CC1D_HAS_SEQ_IDX ? p.seq_idx + row.b * p.seq_stride_b : 0;
            bl_walk(p, row, lane, u - row.b * p.tiles, st);
        }
    }
    bl_block_sums(p, bl_red, group, lane, st);
}

extern "C" __global__ void __launch_bounds__(CC1D_REDUCE_THREADS) CC1D_ENTRY_REDUCE(cc1d_bwd_params p) {
    cc1d_bwd_reduce(p);
}
