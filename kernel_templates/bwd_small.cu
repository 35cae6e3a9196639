// Causal conv1d backward of a small call, either layout, in one launch: the module of a
// small-call variant (Variant::small_call), compiled only once a call of at most
// CC1D_BWD_SMALL_POSITIONS positions a thread (16 on short channel-first rows) asks for it
// (backward_small.cpp).
//
// The walks of the main kernels are a chain of dependent steps per thread plus a reduce
// launch: on a call of a few thousand elements that chain, not memory, is the time
// (docs/perf.md entries 32-40). Here a block owns C = 2^small_channel_shift channels and
// every one of their N = B * L positions. Windows of up to 4 taps take each position
// from loads to dx, dw and db in registers (bs_walk_in_registers), then phase 3 below:
// in channel-last a thread a run of CC1D_BWD_SMALL_CL_RUN(silu) positions, in
// channel-first a thread one or two positions. Other calls go through a few short phases:
//   0. the rows of x̃ (with the K positions before each start), dout and the ids into
//      shared memory, every load of a thread in flight at once;
//   1. g[s] = dout[s] * act'(z[s]) (z from the window x̃[s-K .. s]) over dout in place,
//      and the thread's shares of dw[k] += g[s] * x̃[s-K+k] and db += g[s];
//   2. dx[s] = sum_k w[k] g[s+K-k] (+ dfinal near the row end) for s in [0, L), and in
//      [-K, 0) into dinitial_states when it is asked for;
//   3. the shares of each channel summed in a fixed order (a butterfly within 32 lanes,
//      then the groups of lanes in index order) and written to dweight/dbias: no reduce
//      kernel, and the same bits from run to run.
// Terms across a sequence boundary are dropped by comparing ids, padding (id < 0) has
// g = 0, exactly as in the main kernels. Threads map to (channel, position slot) so
// that consecutive lanes touch consecutive addresses: channels in channel-last, time in
// channel-first. The block is a chain of short dependent steps with 2 warps per
// scheduler, so every instruction counts: offsets are 32-bit (the plan takes only calls
// whose tensors span less than 2^31 elements), indices are split by multiplies, loops
// run only the positions a thread has.
constexpr int kBsThreadsLog2 = 8;
static_assert((1 << kBsThreadsLog2) == CC1D_BWD_SMALL_THREADS, "the small kernel's block is 2^kBsThreadsLog2 threads");

// n / d for 0 <= n < 2^16 and 1 <= d < 2^16 (every index this kernel splits; the plan
// keeps B * (L + K) below 2^16): (n * m) >> 32 with m = ceil(2^32 / d) is exact, since
// n * m / 2^32 exceeds n / d by less than n / 2^32 < 2^-16, less than the 1 / d between
// n / d and the next integer. A division by a runtime value is a chain of ~40
// instructions.
struct bs_divisor {
    unsigned long long m;
};
CC1D_DEVICE bs_divisor bs_divisor_of(int d) { return {(unsigned long long)(0xffffffffu / (unsigned)d) + 1ull}; }
CC1D_DEVICE int bs_div(int n, bs_divisor d) { return (int)(((unsigned long long)(unsigned)n * d.m) >> 32); }

// One staged array: entries first, first + step, ... < end of `to`, entry r = load(r)
// as stored (x_t or int), widened to `to`'s type only when it is stored.
template <typename T, typename Load>
struct bs_rows {
    T* to;
    int first, end, step;
    Load load;
    CC1D_DEVICE bool has(int j) const { return first + j * step < end; }
};
template <typename T, typename Load>
CC1D_DEVICE bs_rows<T, Load> bs_rows_of(T* to, int first, int end, int step, Load load) {
    return {to, first, end, step, load};
}
CC1D_DEVICE float bs_widen(x_t v) { return cc1d_to_float(v); }
CC1D_DEVICE int bs_widen(int v) { return v; }

// Stages x̃, dout and the ids, PASS entries of each a round, every load of a round issued
// before any store: a load from a generic pointer might alias shared memory as far as the
// compiler knows, so a load after a store waits for it, and staging the arrays one after
// the other would wait for memory once per array. Loads sit in branches (entries a thread
// lacks, x̃ before a row start): converting a 16-bit value right after its load, inside
// the branch, would wait for each load in turn, so values stay as stored until the stores.
template <int PASS, typename A, typename B, typename C>
CC1D_DEVICE void bs_stage(const A& a, const B& b, const C& c) {
    for (int j0 = 0; a.has(j0) || b.has(j0) || c.has(j0); j0 += PASS) {
        decltype(a.load(0)) va[PASS];
        decltype(b.load(0)) vb[PASS];
        decltype(c.load(0)) vc[PASS];
#pragma unroll
        for (int i = 0; i < PASS; ++i) {
            const int j = j0 + i;
            if (a.has(j)) va[i] = a.load(a.first + j * a.step);
            if (b.has(j)) vb[i] = b.load(b.first + j * b.step);
            if (c.has(j)) vc[i] = c.load(c.first + j * c.step);
        }
#pragma unroll
        for (int i = 0; i < PASS; ++i) {
            const int j = j0 + i;
            if (a.has(j)) a.to[a.first + j * a.step] = bs_widen(va[i]);
            if (b.has(j)) b.to[b.first + j * b.step] = bs_widen(vb[i]);
            if (c.has(j)) c.to[c.first + j * c.step] = bs_widen(vc[i]);
        }
    }
}
// The same with PASS 2 when no array has more than two entries for this thread (most
// small calls), else 8.
template <typename A, typename B, typename C>
CC1D_DEVICE void bs_stage_all(const A& a, const B& b, const C& c) {
    if (!a.has(2) && !b.has(2) && !c.has(2)) bs_stage<2>(a, b, c);
    else bs_stage<8>(a, b, c);
}

// g at one position: dout * act'(z) with z = bias + sum_k w[k] x̃(k) over the taps in the
// position's own sequence (x̃(k): the window's tap k, id(k) its id, id(K) the position's),
// 0 at padding (id < 0). Both paths below compute it this way.
template <typename Xs, typename Ids>
CC1D_DEVICE float bs_g(float dout, const float (&w)[CC1D_WIDTH], float bias, Xs xs, Ids id) {
    float g = dout;
#if CC1D_SILU
    float z = bias;
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) {
#if CC1D_HAS_SEQ_IDX
        if (id(k) == id(CC1D_K)) z = fmaf(w[k], xs(k), z);
#else
        z = fmaf(w[k], xs(k), z);
#endif
    }
    g *= cc1d_bwd_act_grad(z);
#else
    (void)w; (void)bias; (void)xs;
#endif
#if CC1D_HAS_SEQ_IDX
    if (id(CC1D_K) < 0) g = 0.0f;   // padding: the output was forced to 0
#else
    (void)id;
#endif
    return g;
}

// The gradient of x̃[s] of row b: dx[s], or for s < 0 (x̃ before the row start, from
// initial_states) dinitial_states[s + K]. dx points at the channel's row 0.
CC1D_DEVICE void bs_store_dx(const cc1d_bwd_params& p, x_t* dx, int c, int b, int s, float acc) {
    if (s >= 0) {
        dx[b * (int)p.dx_stride_b + s * (int)p.dx_stride_l] = cc1d_to_x(acc);
    } else {
#if CC1D_HAS_INITIAL_STATES
        reinterpret_cast<x_t*>(p.dinitial_states)[b * (int)p.dinit_stride_b + c * (int)p.dinit_stride_d +
                                                  (s + CC1D_K) * (int)p.dinit_stride_k] = cc1d_to_x(acc);
#else
        (void)c;
#endif
    }
}

// Windows of up to 4 taps walk in registers (BS_REGISTERS): a thread takes a run of
// R = kBsRun consecutive positions s0 .. s0+R-1 of one row and loads x̃[s0-K .. s0+R-1+K]
// (to s0+R-1 with silu off), dout[s0 .. s0+R-1+K] and the ids straight from memory in one
// round, computes g at each of the run's R + K positions once, and from them dx, dw and
// db: neither staging nor an exchange of g, no barrier before the sums. Channel-first runs
// are one position (a warp's lanes hold neighbouring positions, so they share lines; the
// K recomputed activations a position are why wider windows stage); channel-last runs are
// 8 positions (4 with silu, whose runs recompute the K activations past their end), a
// warp's lanes neighbouring channels (one position a thread there loaded each of its 11
// neighbours from a line of its own, up to 46% slower than staging, entry 64; a run
// loads a line once for all its positions).
#define BS_REGISTERS CC1D_BWD_SMALL_IN_REGISTERS(CC1D_WIDTH)
#if BS_REGISTERS
constexpr int kBsRun = CC1D_CHANNEL_LAST ? CC1D_BWD_SMALL_CL_RUN(CC1D_SILU) : 1;

CC1D_DEVICE void bs_walk_in_registers(const cc1d_bwd_params& p, int c, int slot, int slots, float (&dw)[CC1D_WIDTH],
                                      float& db) {
    constexpr int kXs = (CC1D_SILU ? 2 * CC1D_K : CC1D_K) + kBsRun;   // x̃[s0-K+m], m < kXs
    constexpr int kGs = kBsRun + CC1D_K;                              // g (and dout) at s0 + j, j < kGs
    const int L = (int)p.seqlen;
    // Positions s in [-before, L): before = K when dinitial_states is asked for (dx of x̃[-K .. -1]).
    const int before = CC1D_HAS_INITIAL_STATES && p.dinitial_states != 0 ? CC1D_K : 0;
    const int runs = (L + before + kBsRun - 1) / kBsRun;   // a row's runs (by a power of two: a shift)
    const bs_divisor by_runs = bs_divisor_of(runs);
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + c * (int)p.x_stride_d;
    const x_t* dout = reinterpret_cast<const x_t*>(p.dout) + c * (int)p.dout_stride_d;
    x_t* dx = reinterpret_cast<x_t*>(p.dx) + c * (int)p.dx_stride_d;
    const int xb = (int)p.x_stride_b, xl = (int)p.x_stride_l, gb = (int)p.dout_stride_b, gl = (int)p.dout_stride_l;
    const x_t zero = cc1d_of_bits<x_t>(0u);
#pragma unroll 1
    for (int r = slot; r < (int)p.batch * runs; r += slots) {
        const int b = bs_div(r, by_runs), s0 = (r - b * runs) * kBsRun - before;
        // Every load as stored, converted only once all are out (a conversion right after a
        // load would wait for it), the taps with them (loaded before the loop, they would be
        // converted there and waited for before any other load went out). Positions past the
        // row read as 0, as do x̃ before -K and dout before 0 (their g is 0: no output there).
        const cc1d_raw_taps taps = cc1d_load_raw_taps(p, c);
        x_t xr[kXs], dr[kGs];
#pragma unroll
        for (int m = 0; m < kXs; ++m) {
            const int q = s0 - CC1D_K + m;
#if CC1D_HAS_INITIAL_STATES
            const x_t* at = q >= 0 ? x + b * xb + q * xl
                                   : reinterpret_cast<const x_t*>(p.initial_states) + b * (int)p.init_stride_b +
                                         c * (int)p.init_stride_d + (q + CC1D_K) * (int)p.init_stride_k;
            xr[m] = q >= -CC1D_K && q < L ? *at : zero;
#else
            xr[m] = q >= 0 && q < L ? x[b * xb + q * xl] : zero;
#endif
        }
#pragma unroll
        for (int j = 0; j < kGs; ++j) {
            const int q = s0 + j;
            dr[j] = q >= 0 && q < L ? dout[b * gb + q * gl] : zero;
        }
#if CC1D_HAS_SEQ_IDX
        // ids[m] = id(s0-K+m): before the row start seq_idx[b, 0] when initial_states feed
        // the first sequence, else -1 (as cc1d_bwd_seq_id in bwd_sums.h); past the end -1.
        int ids[kBsRun + 2 * CC1D_K];
        const int* seq = p.seq_idx + b * (int)p.seq_stride_b;
#pragma unroll
        for (int m = 0; m < kBsRun + 2 * CC1D_K; ++m) {
            const int q = s0 - CC1D_K + m;
            ids[m] = q >= L ? -1 : (q >= 0 ? seq[q * (int)p.seq_stride_l] : (CC1D_HAS_INITIAL_STATES ? seq[0] : -1));
        }
#endif
#if CC1D_HAS_FINAL_STATES
        // final_states[j] = x̃[L-K+j]: its gradient adds straight into dx.
        x_t fin[kBsRun];
#pragma unroll
        for (int i = 0; i < kBsRun; ++i) {
            const int s = s0 + i;
            fin[i] = s >= L - CC1D_K && s < L ? reinterpret_cast<const x_t*>(p.dfinal_states)[b * (int)p.dfinal_stride_b +
                                                                                              c * (int)p.dfinal_stride_d +
                                                                                              (s - (L - CC1D_K)) *
                                                                                                  (int)p.dfinal_stride_k]
                                              : zero;
        }
#endif
        float w[CC1D_WIDTH];
        [[maybe_unused]] const float bias = cc1d_taps_to_float(taps, w);
        float xs[kXs];
#pragma unroll
        for (int m = 0; m < kXs; ++m) xs[m] = cc1d_to_float(xr[m]);

        // g[j] = g at s0 + j: dout * act'(z), z over x̃[s0+j-K .. s0+j] within the sequence
        // of s0+j; 0 for padding and outside the row.
        float g[kGs];
#pragma unroll
        for (int j = 0; j < kGs; ++j) {
#if CC1D_HAS_SEQ_IDX
            const auto id = [&](int k) { return ids[j + k]; };
#else
            const auto id = [](int) { return 0; };
#endif
            g[j] = bs_g(cc1d_to_float(dr[j]), w, bias, [&](int k) { return xs[j + k]; }, id);
        }

#pragma unroll
        for (int i = 0; i < kBsRun; ++i) {
            const int s = s0 + i;
            if (s >= L) continue;   // (the run's tail past the row)
            // dx[s] = sum_k w[k] g[s+K-k] within the sequence of s.
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k < CC1D_WIDTH; ++k) {
#if CC1D_HAS_SEQ_IDX
                if (ids[i + 2 * CC1D_K - k] != ids[i + CC1D_K]) continue;
#endif
                acc = fmaf(w[k], g[i + CC1D_K - k], acc);
            }
#if CC1D_HAS_FINAL_STATES
            acc += cc1d_to_float(fin[i]);   // (0 before L - K)
#endif
            bs_store_dx(p, dx, c, b, s, acc);
            if (s >= 0) {
                db += g[i];
#pragma unroll
                for (int k = 0; k < CC1D_WIDTH; ++k) {
#if CC1D_HAS_SEQ_IDX
                    if (ids[i + k] != ids[i + CC1D_K]) continue;
#endif
                    dw[k] = fmaf(g[i], xs[i + k], dw[k]);   // x̃[s-K+k] * g[s]
                }
            }
        }
    }
}
#endif

extern "C" __global__ void __launch_bounds__(CC1D_BWD_SMALL_THREADS) CC1D_ENTRY(cc1d_bwd_params p) {
    // Rows are staged with the K positions before their start: row b of a channel at
    // [b * span, (b + 1) * span), position s at b * span + K + s. Shared memory holds
    // x̃ [C][B * span] (later the lane groups' sums [C][W + 1][groups], whichever is
    // larger: backward_small.cpp sizes it the same way), dout then g [C][B * L], and with
    // seq_idx the ids [B * span].
    extern __shared__ float bs_shared[];
    const int shift = p.small_channel_shift;
    const int channels = 1 << shift, slots = CC1D_BWD_SMALL_THREADS >> shift;   // position slots per channel
    const int t = (int)threadIdx.x;
    // Lanes of one channel within 32, as a power of two (shifts, not divisions, below).
#if CC1D_CHANNEL_LAST
    const int lc = t & (channels - 1), slot = t >> shift;
    const int lane_slots_log2 = shift >= 5 ? 0 : 5 - shift;
#else
    const int slot = t & (slots - 1), lc = t >> (kBsThreadsLog2 - shift);
    const int lane_slots_log2 = kBsThreadsLog2 - shift < 5 ? kBsThreadsLog2 - shift : 5;
#endif
    const int lane_slots = 1 << lane_slots_log2;
    const int c = (int)(cc1d_flat_block() << shift) + lc;   // dim < 2^31 (the plan)
    const bool has = c < p.dim;
    const int groups = slots >> lane_slots_log2;

    float dw[CC1D_WIDTH], db = 0.0f;
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) dw[k] = 0.0f;

#if BS_REGISTERS
    // Channel-last calls walk runs in registers (the plan gives a channel a slot a run).
    // Channel-first ones do with one or two positions a thread (most small calls); with
    // more, the staged phases' shared loads beat reloading every neighbour for every
    // position (entry 64).
    const int before_all = CC1D_HAS_INITIAL_STATES && p.dinitial_states != 0 ? CC1D_K : 0;
    if (CC1D_CHANNEL_LAST || (int)p.batch * ((int)p.seqlen + before_all) <= 2 * slots) {
        if (has) bs_walk_in_registers(p, c, slot, slots, dw, db);
    } else
#endif
    {
        const int L = (int)p.seqlen, n = (int)(p.batch * p.seqlen);   // n <= 16 * slots (backward_small.cpp)
        const int span = L + CC1D_K, staged = (int)p.batch * span;
        const bs_divisor by_l = bs_divisor_of(L), by_span = bs_divisor_of(span);
        const int x_area = channels * (staged > CC1D_BWD_SUMS * groups ? staged : CC1D_BWD_SUMS * groups);
        float* x_row = bs_shared + lc * staged;
        float* g_row = bs_shared + x_area + lc * n;
        [[maybe_unused]] int* ids = reinterpret_cast<int*>(bs_shared + x_area + channels * n);

        float w[CC1D_WIDTH];
        float bias = 0.0f;
#pragma unroll
        for (int k = 0; k < CC1D_WIDTH; ++k) w[k] = 0.0f;
        if (has) bias = cc1d_load_channel_taps(p, c, w);
        (void)bias;

        // Phase 0. 32-bit element offsets of this channel in each tensor.
        const x_t* x = reinterpret_cast<const x_t*>(p.x) + c * (int)p.x_stride_d;
        const x_t* dout = reinterpret_cast<const x_t*>(p.dout) + c * (int)p.dout_stride_d;
        const int xb = (int)p.x_stride_b, xl = (int)p.x_stride_l, gb = (int)p.dout_stride_b, gl = (int)p.dout_stride_l;
        // A thread past D stages no rows, only its share of the ids.
        const auto x_rows = bs_rows_of(x_row, slot, has ? staged : 0, slots, [&](int r) {
            const int b = bs_div(r, by_span), s = r - b * span - CC1D_K;
            if (s >= 0) return x[b * xb + s * xl];
#if CC1D_HAS_INITIAL_STATES
            return reinterpret_cast<const x_t*>(p.initial_states)[b * (int)p.init_stride_b + c * (int)p.init_stride_d +
                                                                   (s + CC1D_K) * (int)p.init_stride_k];
#else
            return cc1d_of_bits<x_t>(0u);
#endif
        });
        const auto dout_rows = bs_rows_of(g_row, slot, has ? n : 0, slots, [&](int q) {
            const int b = bs_div(q, by_l);
            return dout[b * gb + (q - b * L) * gl];
        });
#if CC1D_HAS_SEQ_IDX
        // Before a row start: seq_idx[b, 0] when initial_states feed the first sequence, else
        // -1 (as cc1d_bwd_seq_id in bwd_sums.h).
        const int sb = (int)p.seq_stride_b, sl = (int)p.seq_stride_l;
        const auto id_rows = bs_rows_of(ids, t, staged, CC1D_BWD_SMALL_THREADS, [&](int r) {
            const int b = bs_div(r, by_span), s = r - b * span - CC1D_K;
            if (s >= 0) return p.seq_idx[b * sb + s * sl];
            return CC1D_HAS_INITIAL_STATES ? p.seq_idx[b * sb] : -1;
        });
#else
        const auto id_rows = bs_rows_of(ids, 0, 0, 1, [](int) { return 0; });
#endif
        bs_stage_all(x_rows, dout_rows, id_rows);
        __syncthreads();

        // Phase 1: g over dout, and the thread's shares of dw and db.
        if (has) {
#pragma unroll 1
            for (int q = slot; q < n; q += slots) {
                const int at = q + bs_div(q, by_l) * CC1D_K;   // staged index of x̃[s - K], s = q - b * L
#if CC1D_HAS_SEQ_IDX
                const auto id = [&](int k) { return ids[at + k]; };
#else
                const auto id = [](int) { return 0; };
#endif
                const float g = bs_g(g_row[q], w, bias, [&](int k) { return x_row[at + k]; }, id);
                g_row[q] = g;   // (only this thread reads or writes entry q in this phase)
                db += g;
#pragma unroll
                for (int k = 0; k < CC1D_WIDTH; ++k) {
#if CC1D_HAS_SEQ_IDX
                    if (ids[at + k] != ids[at + CC1D_K]) continue;
#endif
                    dw[k] = fmaf(g, x_row[at + k], dw[k]);   // x̃[s-K+k] * g[s]
                }
            }
        }
        __syncthreads();

        // Phase 2: dx[s], and dinitial_states for s < 0 when asked for.
        const int before = CC1D_HAS_INITIAL_STATES && p.dinitial_states != 0 ? CC1D_K : 0;
        const int walked = L + before;
        const bs_divisor by_walked = bs_divisor_of(walked);
        if (has) {
            x_t* dx = reinterpret_cast<x_t*>(p.dx) + c * (int)p.dx_stride_d;
#pragma unroll 1
            for (int r = slot; r < (int)p.batch * walked; r += slots) {
                const int b = bs_div(r, by_walked), s = r - b * walked - before;
                const float* g_b = g_row + b * L;
                [[maybe_unused]] const int* ids_b = ids + b * span + CC1D_K;   // ids_b[s], s >= -K
                float acc = 0.0f;
#pragma unroll
                for (int k = 0; k < CC1D_WIDTH; ++k) {
                    const int q = s + CC1D_K - k;   // g[q] reaches x̃[s] through w[k]
                    if (q < 0 || q >= L) continue;
#if CC1D_HAS_SEQ_IDX
                    if (ids_b[q] != ids_b[s]) continue;
#endif
                    acc = fmaf(w[k], g_b[q], acc);
                }
#if CC1D_HAS_FINAL_STATES
                // final_states[j] = x̃[L-K+j]: its gradient adds straight in.
                if (s >= L - CC1D_K)
                    acc += cc1d_load_float<x_t>(p.dfinal_states, b * (int)p.dfinal_stride_b + c * (int)p.dfinal_stride_d +
                                                                     (s - (L - CC1D_K)) * (int)p.dfinal_stride_k);
#endif
                bs_store_dx(p, dx, c, b, s, acc);
            }
        }

    }

    // Phase 3: each sum over the channel's slots. Within 32 lanes a butterfly over the
    // lane bits that number slots; then lane group i (slot / lane_slots) leaves its sum
    // in shared memory (over the staged x̃, no longer read) and one thread per (channel,
    // sum) adds the groups in order.
    float v[CC1D_BWD_SUMS];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) v[k] = dw[k];
    v[CC1D_WIDTH] = db;
#pragma unroll
    for (int bit = 1; bit < 32; bit <<= 1) {
#if CC1D_CHANNEL_LAST
        const bool slot_bit = shift < 5 && bit >= channels;
#else
        const bool slot_bit = bit < lane_slots;
#endif
        if (!slot_bit) continue;   // (the same in every lane)
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k) v[k] += cc1d_shfl_xor(v[k], bit);
    }
    if ((slot & (lane_slots - 1)) == 0) {
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k) bs_shared[(lc * CC1D_BWD_SUMS + k) * groups + (slot >> lane_slots_log2)] = v[k];
    }
    __syncthreads();
    for (int j = t; j < channels * CC1D_BWD_SUMS; j += CC1D_BWD_SMALL_THREADS) {
        const int jc = j / CC1D_BWD_SUMS, k = j - jc * CC1D_BWD_SUMS;
        const int d = (int)(cc1d_flat_block() << shift) + jc;
        if (d >= p.dim) continue;
        float sum = 0.0f;
        for (int i = 0; i < groups; ++i) sum += bs_shared[j * groups + i];
        cc1d_bwd_emit(p, 0, d, k, sum);
    }
}
