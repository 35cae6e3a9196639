// Causal conv1d backward, channel-first layout, pipelined: the third kernel
// (CC1D_ENTRY_PIPELINED) of the 16-bit SiLU modules at widths 2-4 without seq_idx or final
// states (CC1D_BWD_CF_PIPELINED_KERNEL in params.h), appended to bwd_channel_first.cu,
// whose phases, shared-memory layout and reduce kernel it shares. The host runs it on
// fast-memory devices for tiles of 3-4 vectors a thread and walks of two units or more
// (backward_channel_first.cpp says why), the main kernel for every other call.
//
// The main kernel runs each unit as loads, barrier, phase 2, barrier, dx pass: a block
// issues a tile's copies only once the previous unit's dx pass is done, and then waits
// for them with nothing else to do (on an H200 the barrier after the staging held 15% of
// the 16-bit SiLU kernel's stall samples). Here the next unit's copies and halo loads are
// issued right after this unit's phase 2: its barrier ends every read of the x and dout
// sections, and the dx pass reads only g, so the copies fly while it runs. Their landing
// (halo stores, the wait, the barrier) and phase 2 follow as in bf_unit; that barrier
// also keeps phase 2 from writing g before every thread's dx pass has read it. Each turn
// of the loop issues unit u, then runs the dx pass of unit u - 1, so the issue code is
// inlined once. On an H200 4x5376x4096 ran 2.3-2.9% faster; the same loop for every
// variant and call lost 1-7% on short tiles and single units and 6-8% for fp32 and
// seq_idx (their loop changed shape too), hence a kernel of its own that leaves the main
// kernel's code as it was (docs/perf.md, entries 106-107).
// Without cp.async (AMD) the entry walks as the main kernel does, a bf_unit a unit.

static_assert(CC1D_SILU && !CC1D_HAS_SEQ_IDX && !CC1D_HAS_FINAL_STATES,
              "the pipelined walk serves SiLU tiles without seq masks or dfinal, which the dx pass would read");

// On to the next (batch, tile) unit, as the main kernel steps; t.t0 is the caller's to set.
CC1D_DEVICE void bp_next_tile(const cc1d_bwd_params& p, bf_tile& t) {
    if (++t.tile == p.tiles) {
        t.tile = 0;
        ++t.b;
        t.xrow += p.x_stride_b;
        t.drow += p.dout_stride_b;
        t.dxrow += p.dx_stride_b;
    }
}

#if BF_CAN_STAGE_ASYNC
// Thread tid's halo vector of tile t, by role as in bf_unit: [0, H) x history, [H, 2H) x
// after the tile, [2H, 3H) dout after; zeros for the other threads.
CC1D_DEVICE cc1d_vec16 bp_load_halo(const cc1d_bwd_params& p, const bf_tile& t, int tid) {
    if (tid < kBfHalo) return bf_load_x(p, t.xrow, t.b, t.d, t.t0 - (cc1d_i64)(kBfHalo - tid) * CC1D_VEC);
    if (tid < 2 * kBfHalo) return bf_load_x(p, t.xrow, t.b, t.d, t.t0 + t.tile_len + (cc1d_i64)(tid - kBfHalo) * CC1D_VEC);
    const cc1d_i64 pos = t.t0 + t.tile_len + (cc1d_i64)(tid - 2 * kBfHalo) * CC1D_VEC;
    if (tid >= 3 * kBfHalo || pos >= t.L) return cc1d_v16_zero();
    return cc1d_v16_load(t.drow, p.dout_stride_l, pos, t.L, p.vector_ok != 0 && pos + CC1D_VEC <= t.L);
}

// The halo vector of bp_load_halo into its place (x before or after the tile, dout after).
CC1D_DEVICE void bp_store_halo(const bf_shared& s, const bf_tile& t, int tid, const cc1d_vec16& halo) {
    if (tid < kBfHalo) s.x[tid] = halo;
    else if (tid < 2 * kBfHalo) s.x[t.tile_vecs + tid] = halo;
    else if (tid < 3 * kBfHalo) s.d[t.tile_vecs + tid - 2 * kBfHalo] = halo;
}
#endif

// Units first .. last - 1 of channel t.d from tile t on (t.t0 unset), dw/db summed in.
CC1D_DEVICE void bp_walk(const cc1d_bwd_params& p, const bf_shared& s, bf_tile t, cc1d_i64 first, cc1d_i64 last,
                         bf_pending_taps taps, float (&dw)[CC1D_WIDTH], float& db) {
    float w[CC1D_WIDTH] = {}, bias = 0.0f;
#if BF_CAN_STAGE_ASYNC
    const int tid = threadIdx.x;
    bf_tile done = t;   // the unit whose dx pass is due
    cc1d_vec16 halo = cc1d_v16_zero();
#pragma unroll 1
    for (cc1d_i64 u = first;; ++u) {
        const bool more = u < last;
        if (more) {
            t.t0 = t.tile * t.tile_len;
            bf_stage_own_async(p, s, t);
            halo = bp_load_halo(p, t, tid);
        }
        if (u != first) {
            bf_dx_pass(p, s, done, w);
            bf_dinit(p, s, done, w);
        }
        if (!more) break;
        if (u == first) bias = bf_take_taps(p, t.d, taps, w);   // once the first loads are out (bf_unit)
        bp_store_halo(s, t, tid, halo);
        cc1d_wait_async_copies();   // this thread's copies; the barrier then shows everyone's to all
        __syncthreads();
        bf_grad_pass(p, s, t, w, bias, dw, db);
        bf_grad_after(p, s, t, w, bias);
        __syncthreads();
        done = t;
        bp_next_tile(p, t);
    }
#else
    for (cc1d_i64 u = first; u < last; ++u) {
        t.t0 = t.tile * t.tile_len;
        bf_unit(p, s, t, u == first, taps, w, bias, dw, db);
        bp_next_tile(p, t);
    }
#endif
}

extern "C" __global__ void BF_LAUNCH_BOUNDS CC1D_ENTRY_PIPELINED(cc1d_bwd_params p) {
    extern __shared__ cc1d_vec16 bf_smem[];
    cc1d_allow_dependent_launch();   // the reduce kernel waits for this one to finish
    const int tile_vecs = (int)blockDim.x * p.ilp;
    bf_shared s = bf_carve(bf_smem, tile_vecs);
    // Blocks as in the main kernel: part * dim + d, flattened over x and y.
    const cc1d_i64 block = (cc1d_i64)blockIdx.y * gridDim.x + blockIdx.x;
    if (block >= p.groups * p.dim) return;
    const cc1d_i64 part = block / p.dim;
    const cc1d_i64 d = block - part * p.dim;
    const bf_pending_taps taps = bf_ask_taps(p, d);

    float dw[CC1D_WIDTH];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) dw[k] = 0.0f;
    float db = 0.0f;
    const cc1d_i64 units = p.batch * p.tiles;
    const cc1d_i64 first = part * p.units_per_part;
    const cc1d_i64 last = first + p.units_per_part < units ? first + p.units_per_part : units;
    bf_tile t;
    t.d = d;
    t.L = p.seqlen;
    t.tile_vecs = tile_vecs;
    t.tile_len = tile_vecs * CC1D_VEC;
    t.b = first / p.tiles;
    t.tile = first - t.b * p.tiles;
    t.xrow = reinterpret_cast<const x_t*>(p.x) + t.b * p.x_stride_b + d * p.x_stride_d;
    t.drow = reinterpret_cast<const x_t*>(p.dout) + t.b * p.dout_stride_b + d * p.dout_stride_d;
    t.dxrow = reinterpret_cast<x_t*>(p.dx) + t.b * p.dx_stride_b + d * p.dx_stride_d;
    t.mask_row = 0;
    bp_walk(p, s, t, first, last, taps, dw, db);
    cc1d_bwd_release_sums(dw, db);
    bf_block_sums(p, s, part, d, dw, db);
}
