// Causal conv1d forward, channel-last layout: x and out stored (B, L, D), D contiguous.
//
// One block computes a tile of kClChannels channels x kClRows time steps of one batch
// row, transposed through shared memory:
//  1. load: the tile and its K halo rows before it, as 16-byte vectors along D (fully
//     coalesced), every thread issuing all of its loads before storing any (up to width
//     4 on NVIDIA: cp.async copies that hold no registers);
//  2. compute: thread (channels, segment) walks kClSteps time steps of kClPerThread
//     adjacent channels down the shared tile (16-bit x: two, one 4-byte shared access
//     per step for both, which halves the shared-memory and conversion instructions per
//     output), with the K previous inputs in registers (unrolled, compile-time indices)
//     and those channels' weights and bias in fp32 registers;
//  3. store: the output tile leaves shared memory as 16-byte vectors along D.
// Why not keep a sliding window per thread over a 16-byte vector of channels in
// registers: VEC channels x (W weights + K inputs + the steps in flight) in fp32 need
// 110-250 registers (spills from width 8 on in 16-bit types), which caps occupancy and
// bytes in flight; here a thread holds one channel, so every width stays small.
//
// seq_idx: a warp's segment of time whose steps and window rows lie in one sequence (most
// of a packed batch) walks exactly as without seq_idx, and one of padding stores zeros;
// only segments across a boundary compare ids at every step. That put the 16-bit seq_idx
// forward on 4x5376x4096 at 87-91% of copy bandwidth on an H200, where the per-thread
// register window above (which served 16-bit x with seq_idx, and widths 5-8, until then)
// reached 73-79%; widths 5-8 ran 8-26% faster in the tile as well (docs/perf.md, entry 95).
//
// A tile that reaches past D loads and stores element by element (still coalesced:
// consecutive threads, consecutive channels); the compute phase does not change. Deciding
// per tile keeps the per-element code out of the vector path, whose register count sets
// the occupancy. Rows that are not 16-byte aligned (vector_ok == 0: a D or a view's offset
// off 16-byte boundaries) run the module of such rows (CC1D_SHIFTED_ROWS, Variant::
// shifted_rows), whose every tile loads its vectors through registers, two aligned loads
// and a shift each, and stores them as the widest aligned pieces: element by element,
// 4x2051x1024 had run 2.3 (fp32) and 3.5 (16-bit) times as long as D = 2048 on an H200
// (docs/perf.md, entries 94 and 160). Kept apart, the main module's code is as it was.
// Grid: (channel groups, time tiles, batch) flattened, channel groups fastest so
// neighbouring blocks touch neighbouring memory.

constexpr int kClChannels = CC1D_FWD_CL_CHANNELS;
constexpr int kClRowVecs = kClChannels / CC1D_VEC;                      // vectors per time row
constexpr int kClRows = CC1D_FWD_CL_TILE_ROWS(CC1D_WIDTH, (int)sizeof(x_t));   // time steps per tile
constexpr int kClPerThread = sizeof(x_t) == 2 ? 2 : 1;                  // adjacent channels per thread
constexpr int kClLanes = kClChannels / kClPerThread;                    // threads across the channels
constexpr int kClSegments = CC1D_FWD_CL_THREADS / kClLanes;             // threads along time
constexpr int kClSteps = kClRows / kClSegments;                         // steps per thread
constexpr int kClInVecs = (CC1D_K + kClRows) * kClRowVecs;              // halo + tile
constexpr int kClLoads = (kClInVecs + CC1D_FWD_CL_THREADS - 1) / CC1D_FWD_CL_THREADS;
constexpr int kClStores = kClRows * kClRowVecs / CC1D_FWD_CL_THREADS;
static_assert(kClRows * kClRowVecs % CC1D_FWD_CL_THREADS == 0, "the output tile splits evenly");
static_assert(kClRows % kClSegments == 0, "segments split the tile evenly");
// seq_idx: the lanes of one warp that share a segment (all of them, but 32 of AMD's 64
// with 16-bit x, whose wavefront then votes for two segments at once).
constexpr int kClVoteLanes = kClLanes < CC1D_WARP_SIZE ? kClLanes : CC1D_WARP_SIZE;

struct ClTile {
    cc1d_i64 b, t0, c0;   // batch row, first time step, first channel of the tile
};

constexpr int kClInElems = kClInVecs * CC1D_VEC;

// One shared-memory word of a row (kClPerThread channels) into slot k of the window.
CC1D_DEVICE void cl_unpack(unsigned int bits, float (&win)[kClPerThread][CC1D_K + 1], int k) {
#pragma unroll
    for (int j = 0; j < kClPerThread; ++j)
        win[j][k] = cc1d_to_float(cc1d_of_bits<x_t>(kClPerThread == 1 ? bits : (bits >> (16 * j)) & 0xffffu));
}
// kClPerThread outputs -> one shared-memory word (16-bit pairs in one instruction on NVIDIA).
CC1D_DEVICE unsigned int cl_pack(const float (&y)[kClPerThread]) {
    if (kClPerThread == 1) return cc1d_bits_of(cc1d_to_x(y[0]));
    return cc1d_pack_pair(y[0], y[kClPerThread - 1]);
}

// x̃[b, t, c] for any t >= -K, c < D (zeros past L and, without initial_states, before
// the row start). Channels are adjacent: the layout check guarantees stride(D) == 1
// whenever D > 1.
CC1D_DEVICE x_t cl_load_elem(const cc1d_fwd_params& p, const ClTile& tile, cc1d_i64 t, cc1d_i64 c) {
    if (t >= p.seqlen) return cc1d_of_bits<x_t>(0u);
    if (t < 0) {
#if CC1D_HAS_INITIAL_STATES
        const x_t* init = reinterpret_cast<const x_t*>(p.initial_states);
        return init[tile.b * p.init_stride_b + c * p.init_stride_d + (t + CC1D_K) * p.init_stride_k];
#else
        return cc1d_of_bits<x_t>(0u);
#endif
    }
    return reinterpret_cast<const x_t*>(p.x)[tile.b * p.x_stride_b + t * p.x_stride_l + c];
}

// Phase 1, vector tiles: x rows t0-K .. t0+rows-1 as 16-byte vectors, every load issued
// before the first shared store. Rows before the row start are zeros here; with
// initial_states the kernel overwrites them after a barrier.
// Up to width 4 on NVIDIA sm_80+ (16-bit x: up to width 8), the loads are cp.async copies
// straight into shared memory, complete once cl_wait_tile returns (before the next
// barrier): fp32 4x5376x4096 188.8 -> 171.0 us on an H200, 244.3 -> 237.9 us on an H100;
// 16-bit widths 5-8 5-14% faster on an H100, 1-20% on an H200; at width 16 the H100 took
// 4.8% longer (docs/perf.md, entries 67 and 95), and on an H200 widths 9-16 moved -5 to
// +5% (entry 98), so wider kernels keep the loads in registers.
#define CL_ASYNC_TILE (CC1D_HAS_ASYNC_COPY && (CC1D_WIDTH <= 4 || (CC1D_X_DTYPE != 0 && CC1D_WIDTH <= 8)))
CC1D_DEVICE void cl_load_vectors(const cc1d_fwd_params& p, const ClTile& tile, cc1d_vec16* s_in) {
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + tile.b * p.x_stride_b + tile.c0;
#if CL_ASYNC_TILE
    cc1d_copy_tile_rows_async<kClLoads, CC1D_FWD_CL_THREADS, kClRowVecs, kClInVecs>(s_in, x, p.x_stride_l,
                                                                                   tile.t0 - CC1D_K, p.seqlen);
#else
    cc1d_vec16 v[kClLoads];
#pragma unroll
    for (int m = 0; m < kClLoads; ++m) {
        const int i = threadIdx.x + m * CC1D_FWD_CL_THREADS;
        const int row = i / kClRowVecs, col = i - row * kClRowVecs;
        const cc1d_i64 t = tile.t0 - CC1D_K + row;
        v[m] = i < kClInVecs && t >= 0 && t < p.seqlen ? cc1d_v16_load_aligned(x + t * p.x_stride_l + col * CC1D_VEC)
                                                        : cc1d_v16_zero();
    }
#pragma unroll
    for (int m = 0; m < kClLoads; ++m) {
        const int i = threadIdx.x + m * CC1D_FWD_CL_THREADS;
        if (i < kClInVecs) cc1d_v16_store_aligned(&s_in[i], v[m]);
    }
#endif
}
CC1D_DEVICE void cl_wait_tile() {
#if CL_ASYNC_TILE
    cc1d_wait_async_copies();
#endif
}

#if CC1D_SHIFTED_ROWS
// Phase 1 in the module of rows off 16-byte boundaries (every tile): the tile's vectors
// through registers (cc1d_load_tile_rows_any), zeros before the row start, as
// cl_load_vectors leaves them.
CC1D_DEVICE void cl_load_shifted(const cc1d_fwd_params& p, const ClTile& tile, cc1d_vec16* s_in) {
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + tile.b * p.x_stride_b;
    cc1d_load_tile_rows_any<kClLoads, CC1D_FWD_CL_THREADS, kClRowVecs, kClInVecs>(
        s_in, x, p.x_stride_l, p.x_stride_d, tile.c0, tile.t0 - CC1D_K, p.seqlen, p.dim, p.vector_ok != 0);
}
#endif

// Phase 1, other tiles (the main module's tiles reaching past D, or of rows off 16-byte
// boundaries where that module was not built): element by element.
CC1D_DEVICE void cl_load_elements(const cc1d_fwd_params& p, const ClTile& tile, x_t* s_in) {
#pragma unroll 4
    for (int e = threadIdx.x; e < kClInElems; e += CC1D_FWD_CL_THREADS) {
        const int row = e / kClChannels, c = e - row * kClChannels;
        s_in[e] = tile.c0 + c < p.dim ? cl_load_elem(p, tile, tile.t0 - CC1D_K + row, tile.c0 + c)
                                      : cc1d_of_bits<x_t>(0u);
    }
}

// Phase 3: the output tile, rows before L, channels before D.
CC1D_DEVICE void cl_store(const cc1d_fwd_params& p, const ClTile& tile, bool vector_tile, const cc1d_vec16* s_out) {
    x_t* out = reinterpret_cast<x_t*>(p.out) + tile.b * p.out_stride_b + tile.c0;
    if (vector_tile && sizeof(x_t) == 2) {
        // 16-bit x: a thread's vectors share one column, kRowsApart rows apart (as in
        // cc1d_copy_tile_rows_async): the address and the rows before L are worked out
        // once. fp32 x keeps the per-vector form below, which measured faster for it
        // (docs/perf.md, entry 87).
        constexpr int kRowsApart = CC1D_FWD_CL_THREADS / kClRowVecs;
        static_assert(CC1D_FWD_CL_THREADS % kClRowVecs == 0, "a thread's vectors share one column");
        const unsigned int tid = threadIdx.x;
        const int row = (int)(tid / kClRowVecs), col = (int)(tid % kClRowVecs);
        const cc1d_i64 rows_left = p.seqlen - (tile.t0 + row);
        const int hi = rows_left > kClRows ? kClRows : (int)rows_left;   // rows_left > -kClRows: fits
        x_t* to = out + (tile.t0 + row) * p.out_stride_l + col * CC1D_VEC;
        const cc1d_i64 step = kRowsApart * p.out_stride_l;
#pragma unroll
        for (int m = 0; m < kClStores; ++m) {
            if (m * kRowsApart < hi)
                cc1d_v16_store_global(to, cc1d_v16_load_aligned(&s_out[(int)tid + m * CC1D_FWD_CL_THREADS]));
            to += step;
        }
    } else if (vector_tile || CC1D_SHIFTED_ROWS) {
        // fp32 vector tiles one aligned store a vector; the module of rows off 16-byte
        // boundaries each vector as the widest aligned pieces that write its channels before D.
#pragma unroll
        for (int m = 0; m < kClStores; ++m) {
            const int i = threadIdx.x + m * CC1D_FWD_CL_THREADS;
            const int row = i / kClRowVecs, col = i - row * kClRowVecs;
            const cc1d_i64 t = tile.t0 + row;
            if (t < p.seqlen) {
                if (CC1D_SHIFTED_ROWS)
                    cc1d_v16_store_row(out - tile.c0 + t * p.out_stride_l, p.out_stride_d, tile.c0 + col * CC1D_VEC,
                                       p.dim, p.vector_ok != 0, cc1d_v16_load_aligned(&s_out[i]));
                else
                    cc1d_v16_store_global(out + t * p.out_stride_l + col * CC1D_VEC, cc1d_v16_load_aligned(&s_out[i]));
            }
        }
    } else {
        const x_t* elems = reinterpret_cast<const x_t*>(s_out);
#pragma unroll 4
        for (int e = threadIdx.x; e < kClRows * kClChannels; e += CC1D_FWD_CL_THREADS) {
            const int row = e / kClChannels, c = e - row * kClChannels;
            const cc1d_i64 t = tile.t0 + row;
            if (t < p.seqlen && tile.c0 + c < p.dim) out[t * p.out_stride_l + c] = elems[e];
        }
    }
}

// Phase 2: kClSteps outputs of a thread's channels from `first` on (tile-relative steps;
// the input row of a step is step + K), reading down the shared tile, with the K previous
// inputs in registers. kIds: terms whose row lies in another sequence drop out and padding
// gives 0 (ids: one per input row); without it, zero stores 0 for every step (a segment of
// padding).
template <bool kIds>
CC1D_DEVICE void cl_walk_segment(const cc1d_vec16* s_in, cc1d_vec16* s_out, const int* ids, int lane, int first,
                                 const float (&w)[kClPerThread][CC1D_WIDTH], const float (&bias)[kClPerThread],
                                 bool zero) {
    // Row r of the thread's channels: one 4-byte word (16-bit pair) or one element.
    typedef unsigned int cl_cell_t;
    constexpr int kRowCells = kClChannels * (int)sizeof(x_t) / 4;
    const cl_cell_t* in = reinterpret_cast<const cl_cell_t*>(s_in) + lane;   // row r at in[r * kRowCells]
    cl_cell_t* out = reinterpret_cast<cl_cell_t*>(s_out) + lane;
    float win[kClPerThread][CC1D_K + 1];    // win[j][k] = x̃ of channel j at step - K + k
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k) cl_unpack(in[(first + k) * kRowCells], win, k);
#pragma unroll
    for (int s = 0; s < kClSteps; ++s) {
        const int step = first + s;
        cl_unpack(in[(step + CC1D_K) * kRowCells], win, CC1D_K);
        const int id = kIds ? ids[step + CC1D_K] : 0;
        float y[kClPerThread];
#pragma unroll
        for (int j = 0; j < kClPerThread; ++j) {
            float z = bias[j];
#pragma unroll
            for (int k = 0; k < CC1D_K; ++k) z = fmaf(!kIds || ids[step + k] == id ? w[j][k] : 0.0f, win[j][k], z);
            z = fmaf(w[j][CC1D_K], win[j][CC1D_K], z);
            y[j] = cc1d_activate_fast(z);
            if (kIds ? id < 0 : zero) y[j] = 0.0f;   // padding: exactly 0
        }
        out[step * kRowCells] = cl_pack(y);
#pragma unroll
        for (int j = 0; j < kClPerThread; ++j)
#pragma unroll
            for (int k = 0; k < CC1D_K; ++k) win[j][k] = win[j][k + 1];
    }
    (void)ids;
}

extern "C" __global__ void __launch_bounds__(CC1D_FWD_CL_THREADS) CC1D_ENTRY(cc1d_fwd_params p) {
    // s_in: rows t0-K .. t0+kClRows-1 of the tile's channels; s_out: the output tile.
    __shared__ __attribute__((aligned(128))) cc1d_vec16 s_in[kClInVecs];
    __shared__ __attribute__((aligned(128))) cc1d_vec16 s_out[kClRows * kClRowVecs];
#if CC1D_HAS_SEQ_IDX
    __shared__ int s_ids[CC1D_K + kClRows];
#endif

    const int tid = threadIdx.x;
    const unsigned int groups = (unsigned int)((p.dim + kClChannels - 1) / kClChannels);
    const unsigned int tiles = (unsigned int)p.tiles;
    const unsigned int block = cc1d_flat_block();
    if (block >= (cc1d_i64)groups * p.tiles * p.batch) return;
    const unsigned int rest = block / groups, b = rest / tiles;
    ClTile tile;
    tile.c0 = (cc1d_i64)(block - rest * groups) * kClChannels;
    tile.b = b;
    tile.t0 = (cc1d_i64)(rest - b * tiles) * kClRows;

    // Weights and bias of this thread's channels (its segment of time comes below), asked
    // for before the tile's loads and widened after them, so their latency passes under
    // the tile's: 4x5376x4096 16-bit 4-10% faster than asked for after the tile's wait
    // (docs/perf.md, entry 88).
    const int lane = tid % kClLanes, segment = tid / kClLanes;
    const auto raw_weights = cc1d_fetch_channel_weights<kClPerThread>(p, tile.c0 + lane * kClPerThread);

    // ---- 1. load the halo and the tile ----
    // (The module of rows off 16-byte boundaries has no vector tiles: the host sends it no
    // call whose rows are aligned.)
    const bool vector_tile = !CC1D_SHIFTED_ROWS && p.vector_ok && tile.c0 + kClChannels <= p.dim;
    if (vector_tile || CC1D_SHIFTED_ROWS) {
#if CC1D_SHIFTED_ROWS
        cl_load_shifted(p, tile, s_in);
#else
        cl_load_vectors(p, tile, s_in);
#endif
#if CC1D_HAS_INITIAL_STATES
        // The first tile's halo rows before the row start come from initial_states.
        if (tile.t0 < CC1D_K) {
            __syncthreads();   // (the rows it overwrites took plain zero stores, no copies)
            x_t* elems = reinterpret_cast<x_t*>(s_in);
            for (int e = tid; e < CC1D_K * kClChannels; e += CC1D_FWD_CL_THREADS) {
                const int row = e / kClChannels, c = e - row * kClChannels;
                const cc1d_i64 t = tile.t0 - CC1D_K + row;
                if (t < 0 && (!CC1D_SHIFTED_ROWS || tile.c0 + c < p.dim)) elems[e] = cl_load_elem(p, tile, t, tile.c0 + c);
            }
        }
#endif
    } else {
        cl_load_elements(p, tile, reinterpret_cast<x_t*>(s_in));
    }
#if CC1D_HAS_SEQ_IDX
    // One id per time row. Before the row start: the first sequence's id when
    // initial_states feed it, else -1 (also for an empty row, whose seq_idx may be null);
    // past the end: -1 (never stored).
    const int* seq_row = p.seq_idx + tile.b * p.seq_stride_b;
    for (int r = tid; r < CC1D_K + kClRows; r += CC1D_FWD_CL_THREADS) {
        const cc1d_i64 t = tile.t0 - CC1D_K + r;
        s_ids[r] = t >= p.seqlen ? -1
                   : t >= 0      ? seq_row[t * p.seq_stride_l]
                                 : (CC1D_HAS_INITIAL_STATES && p.seqlen > 0 ? seq_row[0] : -1);
    }
#endif

    float w[kClPerThread][CC1D_WIDTH], bias[kClPerThread];
    cc1d_widen_channel_weights(raw_weights, w, bias);
    cl_wait_tile();
    __syncthreads();

    // ---- 2. compute kClSteps outputs of the thread's channels, reading down the shared tile ----
    const int first = segment * kClSteps;   // tile-relative step; its input row is first + K
#if CC1D_HAS_SEQ_IDX
    // A segment whose steps and window lie in one sequence (most of a packed batch) walks
    // as a call without seq_idx; padding there is stored as zeros.
    const int seg_id = s_ids[first + CC1D_K];
    bool same = true;
    for (int r = lane % kClVoteLanes; r < kClSteps + CC1D_K; r += kClVoteLanes) same = same && s_ids[first + r] == seg_id;
    if (cc1d_warp_all(same))
        cl_walk_segment<false>(s_in, s_out, s_ids, lane, first, w, bias, seg_id < 0);
    else
        cl_walk_segment<true>(s_in, s_out, s_ids, lane, first, w, bias, false);
#else
    cl_walk_segment<false>(s_in, s_out, nullptr, lane, first, w, bias, false);
#endif

#if CC1D_HAS_FINAL_STATES
    // The last tile holds x̃[L-K .. L-1] (raw bits) in s_in rows L - t0 .. L - t0 + K - 1.
    if (tile.t0 + kClRows >= p.seqlen) {
        const x_t* in = reinterpret_cast<const x_t*>(s_in);
        x_t* fin = reinterpret_cast<x_t*>(p.final_states) + tile.b * p.final_stride_b;
        for (int i = tid; i < CC1D_K * kClChannels; i += CC1D_FWD_CL_THREADS) {
            const int j = i / kClChannels, c = i - j * kClChannels;
            if (tile.c0 + c < p.dim)
                fin[(tile.c0 + c) * p.final_stride_d + j * p.final_stride_k] =
                    in[(p.seqlen - tile.t0 + j) * kClChannels + c];
        }
    }
#endif
    __syncthreads();

    // ---- 3. store the output tile ----
    cl_store(p, tile, vector_tile, s_out);
}
