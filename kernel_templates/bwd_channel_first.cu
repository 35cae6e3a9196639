// Causal conv1d backward, channel-first layout: x, dout and dx are (B, D, L), L contiguous.
//
// Grid: block = part * dim + d (flattened over x and y). A block owns channel d and walks
// the (batch, tile) units [part * units_per_part, ...) in order, one tile of
// blockDim.x * ilp 16-byte vectors along L at a time, keeping its dweight/dbias sums in
// registers across units. With one
// part per channel (the launcher's choice whenever there are enough channels to fill the
// GPU) the block writes dweight/dbias itself and no reduce kernel runs.
//
// Per tile, every thread first issues all of its global loads (its ilp vectors of x and
// dout, its share of the halos and seq masks), so ilp * 32 bytes per thread are in
// flight at once (16-bit may copy its own vectors with cp.async, see BF_CAN_STAGE_ASYNC).
// Then:
//   1. raw x (with K elements of history before the tile and, for silu, K after it),
//      raw dout (with K after it) and the seq masks go to shared memory;   -- barrier
//   2. g = dout * act'(z) for each own position, z recomputed from the x window; dw and db
//      accumulate from the same window; g goes to shared memory as fp32. The K positions
//      after the tile get their g too (dx near the tile end needs g[t .. t+K]); -- barrier
//   3. dx[t] = sum_k w[k] g[t+K-k] from the own g (registers) and the next K (shared
//      memory), plus dfinal near the row end; tile 0 also writes dinitial_states.
// With SiLU (no seq_idx, K within a vector) g stays in registers instead, phase 3 of
// each turn but a warp's last following the next turn's phase 2 (BF_G_IN_REGISTERS, below).
// fp32 without SiLU, g is dout itself: phase 2 writes no g, phase 3 reads the staged
// dout, and the next unit stages its dout into a second buffer (BF_G_IS_DOUT).
// With seq_idx the blocks read no ids: a masks kernel run first writes a mask per (b, t)
// saying which of the K positions before are in t's sequence (cc1d_bwd_seq_masks). The
// ids in shared memory took 4 bytes a position against 8 for x, dout and g together, and
// their reads, at a stride, conflicted; masks take 1 (2 past width 8), and a thread reads
// a vector's masks in one access. On an H200 the 16-bit calls ran 28-38% faster at widths
// 4-8, fp32 3-7% (docs/perf.md, entry 99).
// Shared memory reads are 16-byte vectors at consecutive addresses per thread (x halo,
// g halo), and g is stored in planes of 16-byte quarters (bf_g_index), so a
// warp's 16-byte accesses are free of bank conflicts.
// Nothing per vector stays in registers across a barrier and the compute loops take one
// vector at a time: that keeps the narrow widths within the ~64 registers ptxas aims for
// (occupancy, hence bytes in flight) without spilling.
//
// Dynamic shared memory, sized by the launcher for the tile (blockDim.x * ilp vectors; in
// the module of rows off 16-byte boundaries tile_len's) with the same formula as bf_carve
// below (backward_channel_first.cpp: shared_bytes).
//
// Rows that are not 16-byte aligned (vector_ok == 0) or tails shorter than a vector take
// the element-wise path of cc1d_v16_load / cc1d_v16_store; the algorithm is unchanged.
// In 16-bit the host gives such calls a module of their own (CC1D_SHIFTED_ROWS,
// Variant::shifted_rows). Without seq_idx its tiles follow x's row's own 16-byte
// boundaries (BF_OWN_BOUNDARIES, below); with seq_idx (the masks lie on the row's vectors
// from position 0) it reads such rows as two aligned loads and a shift a vector
// (bf_load_vector).

constexpr int kBfHalo = (CC1D_K + CC1D_VEC - 1) / CC1D_VEC;   // 16-byte vectors of halo per side
constexpr int kBfHaloElems = kBfHalo * CC1D_VEC;
constexpr int kBfGPad = (CC1D_K + 3) / 4 * 4;                 // g read after a vector, in float4 steps

// CC1D_SHIFTED_ROWS without seq_idx: a tile starts `lead` positions before its place in
// the row, where lead is the offset of x's row start from the 16-byte boundary before it
// (the host sets vector_ok where x has unit stride: it then means x's vectors follow its
// row's boundaries, backward_channel_first.cpp), so every vector of x inside the row is
// one aligned load or cp.async copy, and so are dout's and dx's where their rows sit at
// x's offset (contiguous tensors; else they take bf_load_vector's shifted loads and the
// widest aligned stores). A row's first and last vectors, which hold positions outside it,
// are staged one element a thread (bf_unit), as fwd_channel_first.cu does.
// The plan's tiles cover L positions a row, the vectors of an aligned row (ceil(L / VEC)),
// not L + lead: a row's last tile then leaves its row's last lead positions or fewer
// (at most VEC - 1, the row's tail) after its end, in the vector that the tile's halo
// after it stages anyway. Their g, dw and db terms come with the g of the positions after
// the tile (bf_grad_after), their dx one a thread (bf_dx_tail). So a row of 1023
// positions is a tile of 128 vectors, two rounds of 64 threads, where 1023 + lead took
// 129, a third round for one lane; 4095 takes 512 vectors, four rounds of 128 threads,
// where it took 513 (docs/perf.md entry 127); width 1, without a halo, keeps tiles of L +
// lead positions (BF_ROW_TAIL). Tiles of 5 vectors a thread where that
// saves a row a tile (CC1D_BWD_CF_OWN_ILP; entry 124). A tile holds the vectors the plan
// splits evenly over a row's tiles (p.tile_len), not the block's slots, and shared
// memory only those (entry 126). Each place that differs is under #if, so the other
// modules compile to the code they were measured with.
#define BF_OWN_BOUNDARIES (CC1D_SHIFTED_ROWS && !CC1D_HAS_SEQ_IDX)
// Width 1 has no halo to hold a row's tail: its tiles cover L + lead positions (the host
// plans them so), and a row of a smaller lead skips its last tile where that starts past
// the row end.
#define BF_ROW_TAIL (BF_OWN_BOUNDARIES && CC1D_K > 0)
// Positions after the tile whose g phase 2 computes: the K that dx of the tile's last
// positions reads, and in the module the row's tail.
constexpr int kBfGAfter = BF_ROW_TAIL && CC1D_VEC - 1 > CC1D_K ? CC1D_VEC - 1 : CC1D_K;
// The x̃ vectors after the tile are staged for SiLU (the z of the K positions after it)
// and in the module (the row's tail).
#define BF_X_AFTER (CC1D_SILU || BF_ROW_TAIL)
constexpr int kBfIlp = BF_OWN_BOUNDARIES ? CC1D_BWD_CF_OWN_ILP((int)sizeof(x_t))   // most vectors per thread per tile
                                        : CC1D_BWD_CF_ILP((int)sizeof(x_t));

// 16-bit on NVIDIA sm_80+ can stage a tile by cp.async, which moves its x and dout from
// global to shared memory without passing through registers: a thread keeps its
// 4 vectors of each in flight without the registers that would cost occupancy, and issues
// fewer instructions (no shared-memory stores). The host asks for it (p.stage_async) where
// that pays: with SiLU (issue-bound; 10-17% faster on an H200, docs/perf.md entry 22), and
// without it for tiles of more than CC1D_BWD_CF_REG_ILP vectors a thread (4 through
// registers took 64 registers and ran 8% slower, entry 78) or where DRAM is fast (5-10% on
// an H200, while on an H100, memory-bound, 8x2048x1024 ran 5-6% slower; entries 78-79).
// Otherwise tiles go through registers, as fp32 (memory-bound; 4-6% slower with cp.async
// on an H100) always does.
#if CC1D_HAS_ASYNC_COPY && CC1D_X_DTYPE != 0
#define BF_CAN_STAGE_ASYNC 1
#else
#define BF_CAN_STAGE_ASYNC 0
#endif
// With SiLU the host always asks for it: the kernel carries no register-staged path then
// (whose registers would count against the cp.async one's).
#define BF_ALWAYS_ASYNC (BF_CAN_STAGE_ASYNC && CC1D_SILU)
// fp32 without SiLU: the gradient at the conv output is dout itself (0 at padding
// positions), so phase 2 only sums dw/db and the dx pass reads dout from its staged tile.
// The next unit stages its dout into a second buffer meanwhile (units alternate between
// the two, bf_shared::to_other_d), in the place of the g section (the same size in fp32),
// so the barriers stay where they are. 0.2-4.5% faster on an H200; 16-bit tiles, whose
// second dout buffer is half their g section (more blocks per SM), ran 2-5% slower on
// 4x5376x4096 and 8x2048x1024, and with a barrier before the next unit's loads instead
// of a second buffer 2-9% slower elsewhere (docs/perf.md, entries 84-85).
#define BF_G_IS_DOUT (!CC1D_SILU && CC1D_X_DTYPE == 0)
// g is kept in fp32: 16 bytes for each 4 positions, so a 16-bit vector's g is two such
// quarters. Quarter r of every vector goes to plane r, so thread j's 16-byte writes and
// reads of a plane sit next to thread j+1's: a 32-byte slot per vector put two lanes of
// each quarter-warp on the same banks, twice the wavefronts (on an H200, 43% of the
// 16-bit kernel's shared-memory load wavefronts and 54% of its store wavefronts were such
// conflicts). fp32 vectors are one quarter: one plane, positions in order.
constexpr int kBfGPlanes = CC1D_VEC / 4;
constexpr int kBfGAfterVecs = (kBfGPad + CC1D_VEC - 1) / CC1D_VEC;   // vectors after the tile with g (dx reads)
// With SiLU (no seq_idx, rows on 16-byte boundaries, K <= VEC): g stays in registers,
// the planes above are not kept. Warps own contiguous runs of vectors (bf_run_vector), so
// the first K g after a lane's vector are the next lane's, taken by a shuffle in the same
// turn (the last lane takes the next turn's first lane's); only a warp's first K g cross
// warps, through a slot a warp (bf_g_slot) read after the barrier the planes needed
// anyway. Each turn's dx then follows the next turn's g, and only a warp's last turn
// waits for the barrier. In 16-bit the planes took 16 KiB of a 4x5376x4096 block's 33,
// which held the kernel, issue-bound, to 22.5 warps an SM (docs/perf.md, entries
// 131-132); fp32 since entry 153 (on an H100 4x4096x512 8% faster, 8x2048x1024 even,
// 4x256x4096 1% slower).
#define BF_G_IN_REGISTERS \
    CC1D_BWD_CF_G_IN_REGISTERS(CC1D_X_DTYPE != 0, CC1D_SILU, CC1D_HAS_SEQ_IDX, CC1D_SHIFTED_ROWS, CC1D_K)
// 16-bit tiles start at a 128-byte boundary of shared memory, and so do their dout
// vectors: a warp's cp.async copies then land line for line as they leave the 128-byte
// lines of the row. Tiles 16 and 32 bytes off a boundary (the history vector before
// them, the x̃ section's length) ran 2.5-5.8% slower without SiLU on an H200 (with planes
// of g as well: 3.5-8%, SiLU 2.9-5.5%; docs/perf.md, entry 86). fp32 keeps its layout.
constexpr int kBfXLead = CC1D_X_DTYPE != 0 ? 8 : kBfHalo;   // x̃ vectors before the tile's own (the history last)
constexpr int kBfXVecs = CC1D_X_DTYPE != 0 ? 8 : 1;         // the x̃ section is a multiple of this many vectors
// Vectors a thread stages through registers: where cp.async could take the longer tiles
// the host keeps register-staged ones at CC1D_BWD_CF_REG_ILP, so only those are held.
constexpr int kBfRegIlp = BF_CAN_STAGE_ASYNC ? CC1D_BWD_CF_REG_ILP : kBfIlp;

// ptxas chooses each kernel's register budget. Its default keeps the common variants at
// 40-64 registers (good occupancy) but squeezes a few into small spills: seq_idx with
// states (asked for 6 blocks per SM: 80 registers fit them without spills now that the
// ids have left for the seq masks; at 4 blocks, up to 128 registers, 4x5376x4096 ran
// 10-25% slower on an H200, docs/perf.md entry 100) and long windows ("at least one
// block per SM" lets them use what they need).
// (HIP reads a second argument as a minimum of waves per SIMD, a register cap that would
// spill there: AMD gets the plain bound.)
#define BF_SEQ_AND_STATES (CC1D_HAS_SEQ_IDX && (CC1D_HAS_INITIAL_STATES || CC1D_HAS_FINAL_STATES))
#if defined(CC1D_BACKEND_HIP)
#define BF_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CF_THREADS)
#elif CC1D_WIDTH > 8 || (CC1D_WIDTH > 4 && BF_SEQ_AND_STATES)
#define BF_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CF_THREADS, 1)
#elif BF_SEQ_AND_STATES
#define BF_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CF_THREADS, 6)
#else
#define BF_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CF_THREADS)
#endif

struct bf_shared {
    cc1d_vec16* x;   // [kBfHalo + tile_vecs + kBfHalo] raw x̃: history, tile, K after (silu); x[kBfHalo] 128-byte aligned in 16-bit
    cc1d_vec16* d;   // [tile_vecs + kBfHalo] raw dout: tile, K after
    float* g;        // [kBfGPlanes][tile_vecs + kBfGAfterVecs][4] g of the tile's positions and of the K after it;
                     // BF_G_IN_REGISTERS: [warps + 1][kBfGPad] each warp's first K g, then the K after the tile
    int g_plane;     // float4s per plane
    int to_other_d;  // BF_G_IS_DOUT: d + to_other_d is the other dout buffer (the next unit's), else 0
    cc1d_seq_masks* masks;   // [tile_vecs + kBfHalo] seq masks of the tile's vectors and the K after (seq_idx only)
    float* fin;      // [kBfGPad] dfinal_states of the row (final_states only)
    float* red;      // [blockDim.x / 32][CC1D_BWD_SUMS] per-warp sums
};

// Every section is a multiple of 16 bytes long, so every section stays 16-byte aligned.
CC1D_DEVICE bf_shared bf_carve(cc1d_vec16* base, int tile_vecs) {
    const int tile_len = tile_vecs * CC1D_VEC;
    char* q = reinterpret_cast<char*>(base);
    bf_shared s;
    s.x = reinterpret_cast<cc1d_vec16*>(q) + (kBfXLead - kBfHalo);
    q += (kBfXLead + tile_vecs + kBfHalo + kBfXVecs - 1) / kBfXVecs * kBfXVecs * 16;
    s.d = reinterpret_cast<cc1d_vec16*>(q);
    q += (tile_vecs + kBfHalo) * 16;
    s.to_other_d = BF_G_IS_DOUT ? tile_vecs + kBfHalo : 0;
    q += s.to_other_d * 16;
    s.g = reinterpret_cast<float*>(q);
    s.g_plane = tile_vecs + kBfGAfterVecs;
#if BF_G_IN_REGISTERS
    q += ((int)blockDim.x / CC1D_WARP_SIZE + 1) * kBfGPad * 4;
#else
    q += BF_G_IS_DOUT ? 0 : kBfGPlanes * s.g_plane * 16;
#endif
    s.masks = reinterpret_cast<cc1d_seq_masks*>(q);
    q += CC1D_HAS_SEQ_IDX ? ((tile_vecs + kBfHalo) * (int)sizeof(cc1d_seq_masks) + 15) / 16 * 16 : 0;
    s.fin = reinterpret_cast<float*>(q);
    q += CC1D_HAS_FINAL_STATES ? kBfGPad * 4 : 0;
    s.red = reinterpret_cast<float*>(q);
    return s;
}

// The vector of a row at pos, and its store, as cc1d_v16_load / cc1d_v16_store with
// `vectorized` (p.vector_ok: every row of x, dout and dx 16-byte aligned with unit stride,
// and the vector inside the row; BF_OWN_BOUNDARIES: that vector one aligned access). A
// module with CC1D_SHIFTED_ROWS (16-bit calls whose rows are not, Variant::shifted_rows)
// reads any other vector of a row of unit stride as two aligned loads and a shift and
// writes it as the widest aligned stores (cc1d_v16_load_row), where the others go element
// by element: with seq_idx every such row, without it dout's and dx's rows that do not
// sit at x's offset. On an H200 such calls ran
// 9-41% faster (4x5376x4095 bf16 SiLU: 26% -> 41% of copy bandwidth; docs/perf.md entry
// 113); the same code in every module had slowed aligned calls by up to 3%, the
// compiler's register choices changed by its presence (entry 112), hence a module of its
// own, and without CC1D_SHIFTED_ROWS these wrappers compile to the calls they replaced.
CC1D_DEVICE cc1d_vec16 bf_load_vector(const x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 L, bool vectorized) {
#if CC1D_SHIFTED_ROWS
    return cc1d_v16_load_row(row, stride, pos, L, vectorized);
#else
    return cc1d_v16_load(row, stride, pos, L, vectorized);
#endif
}
CC1D_DEVICE void bf_store_vector(x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 L, bool vectorized,
                                 const cc1d_vec16& v) {
#if CC1D_SHIFTED_ROWS
    cc1d_v16_store_row(row, stride, pos, L, vectorized, v);
#else
    cc1d_v16_store(row, stride, pos, L, vectorized, v);
#endif
}

// x̃ at a position before the row start: initial_states when given, else 0.
CC1D_DEVICE x_t bf_before_start(const cc1d_bwd_params& p, cc1d_i64 b, cc1d_i64 d, cc1d_i64 pos) {
#if CC1D_HAS_INITIAL_STATES
    if (pos >= -CC1D_K) {
        const x_t* init = reinterpret_cast<const x_t*>(p.initial_states);
        return init[b * p.init_stride_b + d * p.init_stride_d + (pos + CC1D_K) * p.init_stride_k];
    }
#else
    (void)p; (void)b; (void)d; (void)pos;
#endif
    return cc1d_of_bits<x_t>(0u);
}

// A vector of x̃ (elements pos .. pos+VEC-1), zeros past the row end.
CC1D_DEVICE cc1d_vec16 bf_load_x(const cc1d_bwd_params& p, const x_t* xrow, cc1d_i64 b, cc1d_i64 d, cc1d_i64 pos) {
    const cc1d_i64 L = p.seqlen;
    if (pos >= 0) {
        if (pos >= L) return cc1d_v16_zero();
        return bf_load_vector(xrow, p.x_stride_l, pos, L, p.vector_ok != 0 && pos + CC1D_VEC <= L);
    }
#if !CC1D_HAS_INITIAL_STATES
    // Wholly before the row (tile 0's history): zeros, without the element loop's tests
    // and loads, which one warp ran for every tile 0 while its block waited on it (on an
    // H200 8x2048x1024 16-bit SiLU ran 7.5% faster, rows of one tile in the module of
    // rows off 16-byte boundaries 8-13%; docs/perf.md, entry 125).
    if (pos + CC1D_VEC <= 0) return cc1d_v16_zero();
#endif
    cc1d_vec16 v = cc1d_v16_zero();
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e) {
        const cc1d_i64 q = pos + e;
        cc1d_v16_set(v, e, q >= 0 ? (q < L ? xrow[q * p.x_stride_l] : cc1d_of_bits<x_t>(0u)) : bf_before_start(p, b, d, q));
    }
    return v;
}

#if CC1D_HAS_SEQ_IDX
// The seq mask of tile position u (0 <= u < tile_len + K).
CC1D_DEVICE unsigned int bf_mask_at(const bf_shared& s, int u) {
    return reinterpret_cast<const cc1d_seq_mask*>(s.masks)[u];
}
#endif

// The block's per-thread dw/db sums -> one sum per (channel, k): warp shuffles (a fixed
// butterfly), then the warps in index order. The same order on every run.
CC1D_DEVICE void bf_block_sums(const cc1d_bwd_params& p, const bf_shared& s, cc1d_i64 part, cc1d_i64 d,
                               const float (&dw)[CC1D_WIDTH], float db) {
    float v[CC1D_BWD_SUMS];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) v[k] = dw[k];
    v[CC1D_WIDTH] = db;
#pragma unroll
    for (int k = 0; k < CC1D_BWD_SUMS; ++k)
#pragma unroll
        for (int off = CC1D_WARP_SIZE / 2; off > 0; off /= 2) v[k] += cc1d_shfl_xor(v[k], off);
    const int tid = threadIdx.x, lane = tid % CC1D_WARP_SIZE, warp = tid / CC1D_WARP_SIZE;
    if (lane == 0)
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k) s.red[warp * CC1D_BWD_SUMS + k] = v[k];
    __syncthreads();
    float sum = 0.0f;
    if (tid < CC1D_BWD_SUMS) {
        const int warps = blockDim.x / CC1D_WARP_SIZE;
        for (int w = 0; w < warps; ++w) sum += s.red[w * CC1D_BWD_SUMS + tid];
    }
#if CC1D_HAS_CLUSTERS
    if (p.dw_mode == CC1D_DW_CLUSTER) {   // (the same in every block)
        cc1d_bwd_cluster_emit(p, d, tid < CC1D_BWD_SUMS ? tid : -1, sum);
        return;
    }
#endif
    if (tid < CC1D_BWD_SUMS) {
        cc1d_wait_prior_grid();   // the zeroing kernel before an atomic target (overlapped launch)
        cc1d_bwd_emit(p, part, d, tid, sum);
    }
}

// Everything one tile needs from one row.
struct bf_tile {
    cc1d_i64 b, d, tile, t0, L;
    int tile_vecs, tile_len;
    const x_t* xrow;
    const x_t* drow;
    x_t* dxrow;
    const cc1d_seq_masks* mask_row;   // seq_idx: the row's masks, one cc1d_seq_masks a vector of x
#if BF_OWN_BOUNDARIES
    int lead;                         // positions of the row's first vector before position 0
    bool dout_vectors, dx_vectors;    // dout's / dx's row at x's offset from a 16-byte boundary
#endif
};

#if BF_OWN_BOUNDARIES
// The lead and the row flags of the tile's row (t.xrow, t.drow, t.dxrow), for a new row.
CC1D_DEVICE void bf_follow_row(const cc1d_bwd_params& p, bf_tile& t) {
    const unsigned int offset = (unsigned int)((unsigned long long)t.xrow & 15u);
    const bool x_vectors = p.vector_ok != 0;
    t.lead = x_vectors ? (int)(offset / sizeof(x_t)) : 0;
    t.dout_vectors = x_vectors && p.dout_stride_l == 1 && (unsigned int)((unsigned long long)t.drow & 15u) == offset;
    t.dx_vectors = x_vectors && p.dx_stride_l == 1 && (unsigned int)((unsigned long long)t.dxrow & 15u) == offset;
}

// x̃ at row position q: initial_states or zeros before the row start, zeros past its end.
CC1D_DEVICE x_t bf_x_element(const cc1d_bwd_params& p, const bf_tile& t, cc1d_i64 q) {
    if (q >= t.L) return cc1d_of_bits<x_t>(0u);
    return q >= 0 ? t.xrow[q * p.x_stride_l] : bf_before_start(p, t.b, t.d, q);
}

// dx of a row's edge vector (pos < 0 or pos + VEC > L) where dx has unit stride: the
// elements inside the row, one store each from the vector's address, tested against
// 32-bit bounds taken once. The stores of any stride (cc1d_v16_store) multiplied a 64-bit
// position by the stride and compared it twice an element: ~80 instructions a vector,
// which the warp holding a row's first or last vector ran for one lane (docs/perf.md,
// entry 125).
CC1D_DEVICE void bf_store_edge(const bf_tile& t, cc1d_i64 pos, const cc1d_vec16& v) {
    const int lo = pos < 0 ? (int)-pos : 0;
    const int hi = t.L - pos < CC1D_VEC ? (int)(t.L - pos) : CC1D_VEC;
    x_t* at = t.dxrow + pos;
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e)
        if (e >= lo && e < hi) at[e] = cc1d_v16_raw(v, e);
}
#endif

// Whether the vector at row position pos of dout's or dx's row is one aligned access.
enum bf_row { bf_dout_row, bf_dx_row };
CC1D_DEVICE bool bf_whole_vector(const cc1d_bwd_params& p, const bf_tile& t, bf_row row, cc1d_i64 pos) {
#if BF_OWN_BOUNDARIES
    (void)p;
    return (row == bf_dout_row ? t.dout_vectors : t.dx_vectors) && pos >= 0 && pos + CC1D_VEC <= t.L;
#else
    (void)row;
    return p.vector_ok != 0 && pos + CC1D_VEC <= t.L;
#endif
}

#if CC1D_HAS_SEQ_IDX
// The seq masks of the vector at row position pos (a multiple of CC1D_VEC), as the
// masks kernel wrote them (cc1d_bwd_seq_masks); none past the row end.
CC1D_DEVICE cc1d_seq_masks bf_load_masks(const bf_tile& t, cc1d_i64 pos) {
    if (pos < t.L) return t.mask_row[pos / CC1D_VEC];
    cc1d_seq_masks none;
#pragma unroll
    for (int i = 0; i < kSeqMaskWords; ++i) none.w[i] = 0u;
    return none;
}
#endif

// Index in s.g of the g at tile position u (0 <= u < tile_len + K): plane, vector, lane.
CC1D_DEVICE int bf_g_index(const bf_shared& s, int u) {
    if (kBfGPlanes == 1) return u;   // (fp32: what the formula below gives, kept literal as it always was)
    const int e = u % CC1D_VEC;
    return ((e / 4) * s.g_plane + u / CC1D_VEC) * 4 + e % 4;
}

// The 16-byte quarter r of the g of vector j (quarters past the vector's own belong to
// the vectors after it).
CC1D_DEVICE cc1d_vec16* bf_g_quarter(const bf_shared& s, int j, int r) {
    if (kBfGPlanes == 1) return reinterpret_cast<cc1d_vec16*>(s.g + j * CC1D_VEC) + r;   // (fp32: as it always was)
    return reinterpret_cast<cc1d_vec16*>(s.g) + r % kBfGPlanes * s.g_plane + j + r / kBfGPlanes;
}

// BF_G_IN_REGISTERS: the first K g of warp w's run (slot w) and of the positions after
// the tile (slot warps).
CC1D_DEVICE float* bf_g_slot(const bf_shared& s, int w) { return s.g + w * kBfGPad; }

// g at tile position u (0 <= u < tile_len + K), as phase 2 leaves it (BF_G_IN_REGISTERS:
// u < K only).
CC1D_DEVICE float bf_g_at(const bf_shared& s, int u) {
#if BF_G_IS_DOUT
#if CC1D_HAS_SEQ_IDX
    if (!cc1d_seq_real(bf_mask_at(s, u))) return 0.0f;   // padding
#endif
    return cc1d_to_float(reinterpret_cast<const x_t*>(s.d)[u]);
#elif BF_G_IN_REGISTERS
    return bf_g_slot(s, 0)[u];   // (u < K: tile 0's first K g, all bf_dinit reads)
#else
    return s.g[bf_g_index(s, u)];
#endif
}

// dinitial_states[j] = sum_k w[k] g[j-k] over 0 <= j-k < L (same sequence as position 0)
// + dfinal[j-L] for j >= L. Tile 0 holds g[0 .. K) in shared memory.
CC1D_DEVICE void bf_dinit(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, const float (&w)[CC1D_WIDTH]) {
#if CC1D_HAS_INITIAL_STATES
    const int j = threadIdx.x;
    if (t.tile != 0 || p.dinitial_states == 0 || j >= CC1D_K) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k <= CC1D_K; ++k) {
        const int u = j - k;
        if (u < 0 || u >= t.L) continue;
#if CC1D_HAS_SEQ_IDX
        if (!cc1d_seq_same(bf_mask_at(s, u), u + 1)) continue;   // position -1: in the first sequence with initial_states
#endif
#if BF_OWN_BOUNDARIES
        acc = fmaf(w[k], bf_g_at(s, u + t.lead), acc);   // (tile 0 starts at position -lead)
#else
        acc = fmaf(w[k], bf_g_at(s, u), acc);
#endif
    }
#if CC1D_HAS_FINAL_STATES
    if (j >= t.L) acc += s.fin[j - t.L];   // final_states[i] = x̃[L-K+i] = initial_states[L+i] when L < K
#endif
    x_t* dinit = reinterpret_cast<x_t*>(p.dinitial_states);
    dinit[t.b * p.dinit_stride_b + t.d * p.dinit_stride_d + j * p.dinit_stride_k] = cc1d_to_x(acc);
#else
    (void)p; (void)s; (void)t; (void)w;
#endif
}

#if CC1D_HAS_SEQ_IDX
// Past width 4 a warp whose vectors all lie inside one sequence leaves their masks
// untested: each lane checks that its vector (and, for dx, the K positions after it) is
// in one sequence with no padding, or past the row end (lane_done), and the warp votes,
// so it runs one form of the code and none diverges. Most vectors of packed sequences
// qualify (the bench's sequences are 1 to L/3 long, a warp of 16-bit vectors covers 256
// positions), and taking a mask apart and testing a bit a term is most of what seq_idx
// adds to the passes. On an H200 width 8 ran 9% faster that way (bf16 SiLU,
// 4x5376x4096), but widths 2-4, whose K tests a position are fewer, ran 1-4% slower
// there and 5.5% on 8x2048x1024: the check, the vote and the larger code cost them more
// than the tests (docs/perf.md, entry 109).
constexpr bool kBfMayUntest = CC1D_WIDTH > 4;
CC1D_DEVICE bool bf_warp_untested(bool lane_done, bool lane_full) { return cc1d_warp_all(lane_done || lane_full); }
#endif

// g of the own vector j (row position pos) and its dw/db terms, from its staged dout and
// x̃ window (phase 2 of the header comment). kTest: the seq masks decide which terms count
// and which positions are padding; else all count (no seq_idx, or bf_warp_untested).
template <bool kTest>
CC1D_DEVICE void bf_grad_vector(const bf_shared& s, int j, const float (&w)[CC1D_WIDTH], float bias,
                                float (&g)[CC1D_VEC], float (&dw)[CC1D_WIDTH], float& db) {
    // Positions past the row end (and, BF_OWN_BOUNDARIES, before its start) need no test:
    // their dout was staged as 0 and their x window is finite wherever x is, so their g
    // is 0 (zeros dx needs there too).
    // win[m] = x̃[pos - K + m].
    const cc1d_vec16 dout = s.d[j];
    float win[CC1D_K + CC1D_VEC];
#pragma unroll
    for (int h = 0; h < kBfHalo + 1; ++h) {
        const cc1d_vec16 v = s.x[j + h];
#pragma unroll
        for (int e = 0; e < CC1D_VEC; ++e) {
            const int m = h * CC1D_VEC + e - (kBfHaloElems - CC1D_K);
            if (m >= 0) win[m] = cc1d_v16_float(v, e);
        }
    }
#if CC1D_HAS_SEQ_IDX
    const cc1d_seq_masks own = s.masks[j];
#endif
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e) {
        float gv = cc1d_v16_float(dout, e);
#if CC1D_HAS_SEQ_IDX
        const unsigned int mask = cc1d_seq_mask_of(own, e);
#endif
#if CC1D_SILU
        float z = bias;
#pragma unroll
        for (int k = 0; k <= CC1D_K; ++k) {
#if CC1D_HAS_SEQ_IDX
            if (!kTest || cc1d_seq_same(mask, CC1D_K - k)) z = fmaf(w[k], win[e + k], z);
#else
            z = fmaf(w[k], win[e + k], z);
#endif
        }
        gv = cc1d_bwd_held_grad(gv, z);
#endif
#if CC1D_HAS_SEQ_IDX
        if (kTest && !cc1d_seq_real(mask)) gv = 0.0f;   // padding: the output was forced to 0
#endif
        g[e] = gv;
        db += gv;
#pragma unroll
        for (int k = 0; k <= CC1D_K; ++k) {
#if CC1D_HAS_SEQ_IDX
            if (!kTest || cc1d_seq_same(mask, CC1D_K - k)) dw[k] = fmaf(gv, win[e + k], dw[k]);
#else
            dw[k] = fmaf(gv, win[e + k], dw[k]);
#endif
        }
    }
    (void)bias;
}

// g and the dw/db sums for the tile's own vectors (phase 2 of the header comment).
CC1D_DEVICE void bf_grad_pass(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, const float (&w)[CC1D_WIDTH],
                              float bias, float (&dw)[CC1D_WIDTH], float& db) {
    const int nt = blockDim.x, tid = threadIdx.x;
#pragma unroll 1
    for (int i = 0; i < p.ilp; ++i) {
        const int j = tid + i * nt;
        const cc1d_i64 pos = t.t0 + (cc1d_i64)j * CC1D_VEC;
#if BF_OWN_BOUNDARIES
        if (j >= t.tile_vecs) break;   // (the tile ends inside the threads' last round)
#endif
        float g[CC1D_VEC];
#pragma unroll
        for (int e = 0; e < CC1D_VEC; ++e) g[e] = 0.0f;
#if CC1D_HAS_SEQ_IDX
        const bool untested = kBfMayUntest && bf_warp_untested(pos >= t.L, cc1d_seq_masks_full(s.masks[j], CC1D_VEC));
        if (pos < t.L) {
            if (untested) bf_grad_vector<false>(s, j, w, bias, g, dw, db);
            else bf_grad_vector<true>(s, j, w, bias, g, dw, db);
        }
#else
        if (pos < t.L) bf_grad_vector<false>(s, j, w, bias, g, dw, db);
#endif
        // Zeros past the row end too: dx of the last positions reads them. (BF_G_IS_DOUT:
        // nothing to store, the dx pass reads the staged dout.)
#pragma unroll
        for (int q = 0; q < (BF_G_IS_DOUT ? 0 : CC1D_VEC / 4); ++q) {
            cc1d_vec16 v;
#pragma unroll
            for (int c = 0; c < 4; ++c) v.w[c] = (unsigned int)__float_as_int(g[q * 4 + c]);
            *bf_g_quarter(s, j, q) = v;
        }
    }
}

// g of the K positions after the tile (for dx of the tile's last positions); these belong
// to the next tile's sums, so nothing accumulates here, but in the module for the row's
// tail after its last tile (kBfGAfter positions: bf_dx_tail reads their g), whose dw and
// db terms are this tile's.
CC1D_DEVICE void bf_grad_after(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, const float (&w)[CC1D_WIDTH],
                               float bias, float (&dw)[CC1D_WIDTH], float& db) {
    const int j = threadIdx.x;
    if (BF_G_IS_DOUT || j >= kBfGAfter) return;
    const cc1d_i64 pos = t.t0 + t.tile_len + j;
    float gv = 0.0f;
    if (pos < t.L) {
        gv = cc1d_to_float(reinterpret_cast<const x_t*>(s.d + t.tile_vecs)[j]);
        const int m = t.tile_len + j;   // tile-relative index of pos
#if BF_X_AFTER
        const x_t* xs = reinterpret_cast<const x_t*>(s.x) + kBfHaloElems;
#endif
#if CC1D_SILU
        float z = bias;
#pragma unroll
        for (int k = 0; k <= CC1D_K; ++k) {
            float wk = w[k];
#if CC1D_HAS_SEQ_IDX
            if (!cc1d_seq_same(bf_mask_at(s, m), CC1D_K - k)) wk = 0.0f;
#endif
            z = fmaf(wk, cc1d_to_float(xs[m - CC1D_K + k]), z);
        }
        gv = cc1d_bwd_held_grad(gv, z);
#endif
#if CC1D_HAS_SEQ_IDX
        if (!cc1d_seq_real(bf_mask_at(s, m))) gv = 0.0f;
#endif
#if BF_ROW_TAIL
        if (t.tile == p.tiles - 1) {   // the row's tail
            db += gv;
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k) dw[k] = fmaf(gv, cc1d_to_float(xs[m - CC1D_K + k]), dw[k]);
        }
#endif
        (void)m;
    }
#if BF_G_IN_REGISTERS
    // bf_g_slot(s, warps)[j], the slot after the last warp's, as an index: through the
    // pointer ptxas schedules the 16-bit SiLU kernels differently from the code measured.
    s.g[(int)blockDim.x / CC1D_WARP_SIZE * kBfGPad + j] = gv;
#else
    s.g[bf_g_index(s, t.tile_len + j)] = gv;
#endif
    (void)p; (void)w; (void)bias; (void)dw; (void)db;
}

// dx of the own vector j (row position pos), from gw[m] = g[pos + m], the own vector's g
// and the next K (phase 3 of the header comment). kTest: the seq masks decide which terms
// count; else all do (no seq_idx, or bf_warp_untested).
template <bool kTest, int kGw>
CC1D_DEVICE void bf_dx_vector(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, int j, cc1d_i64 pos,
                              const float (&w)[CC1D_WIDTH], const float (&gw)[kGw]) {
#if CC1D_HAS_SEQ_IDX
    unsigned int mk[CC1D_VEC + CC1D_K];   // mk[m] = seq mask of pos + m
    if (kTest) {
#pragma unroll
        for (int h = 0; h < kBfHalo + 1; ++h) {
            const cc1d_seq_masks v = s.masks[j + h];
#pragma unroll
            for (int e = 0; e < CC1D_VEC; ++e)
                if (h * CC1D_VEC + e < CC1D_VEC + CC1D_K) mk[h * CC1D_VEC + e] = cc1d_seq_mask_of(v, e);
        }
    }
#endif
    float dx[CC1D_VEC];
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k <= CC1D_K; ++k) {
#if CC1D_HAS_SEQ_IDX
            if (!kTest || cc1d_seq_same(mk[e + CC1D_K - k], CC1D_K - k)) acc = fmaf(w[k], gw[e + CC1D_K - k], acc);
#else
            acc = fmaf(w[k], gw[e + CC1D_K - k], acc);
#endif
        }
#if BF_G_IS_DOUT && CC1D_HAS_SEQ_IDX
        if (kTest && !cc1d_seq_real(mk[e])) acc = 0.0f;   // padding: every g it sums is 0 (same id), not dout
#endif
#if CC1D_HAS_FINAL_STATES
        // final_states[i] = x̃[L-K+i]: its gradient flows straight back.
        const cc1d_i64 f = pos + e - (t.L - CC1D_K);
        if (f >= 0 && pos + e < t.L) acc += s.fin[f];
#endif
        dx[e] = acc;
    }
    // Rounded to x_t two at a time where the hardware can (cc1d_v16_from_floats).
    const cc1d_vec16 out = cc1d_v16_from_floats(dx);
#if BF_OWN_BOUNDARIES
    if (t.dx_vectors && !bf_whole_vector(p, t, bf_dx_row, pos)) {   // a row's edge vector, dx of unit stride
        bf_store_edge(t, pos, out);
        return;
    }
#endif
    bf_store_vector(t.dxrow, p.dx_stride_l, pos, t.L, bf_whole_vector(p, t, bf_dx_row, pos), out);
    (void)s; (void)j;
}

// dx of the tile's own vectors (phase 3 of the header comment). The own g is read back
// from shared memory rather than kept in registers across the barrier: that keeps the
// kernel within the register budget ptxas aims for (no spills) at the cost of one more
// conflict-free 16-byte read per 4 positions. BF_G_IS_DOUT: g is the staged dout.
CC1D_DEVICE void bf_dx_pass(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, const float (&w)[CC1D_WIDTH]) {
    const int nt = blockDim.x, tid = threadIdx.x;
#pragma unroll 1
    for (int i = 0; i < p.ilp; ++i) {
        const int j = tid + i * nt;
        const cc1d_i64 pos = t.t0 + (cc1d_i64)j * CC1D_VEC;
#if CC1D_HAS_SEQ_IDX
        // The own vector's masks and those of the K positions after it. Every lane stays
        // in the loop to the end (continue; the other kernels break at the row end), so
        // every vote has the whole warp.
        bool untested = false;
        if constexpr (kBfMayUntest) {
            bool full = cc1d_seq_masks_full(s.masks[j], CC1D_VEC);
#pragma unroll
            for (int h = 1; h <= kBfHalo; ++h)
                full = full && cc1d_seq_masks_full(s.masks[j + h], CC1D_K - (h - 1) * CC1D_VEC < CC1D_VEC
                                                                       ? CC1D_K - (h - 1) * CC1D_VEC : CC1D_VEC);
            untested = bf_warp_untested(pos >= t.L, full);
            if (pos >= t.L) continue;
        } else
#endif
#if BF_OWN_BOUNDARIES
        if (j >= t.tile_vecs || pos >= t.L) break;
#else
        if (pos >= t.L) break;
#endif
        // gw[m] = g[pos + m]: the own vector and the next K.
#if BF_G_IS_DOUT
        float gw[CC1D_VEC + CC1D_K];
#pragma unroll
        for (int h = 0; h < kBfHalo + 1; ++h) {
            const cc1d_vec16 v = s.d[j + h];
#pragma unroll
            for (int e = 0; e < CC1D_VEC; ++e)
                if (h * CC1D_VEC + e < CC1D_VEC + CC1D_K) gw[h * CC1D_VEC + e] = cc1d_v16_float(v, e);
        }
#else
        float gw[CC1D_VEC + kBfGPad];
#pragma unroll
        for (int q = 0; q < (CC1D_VEC + kBfGPad) / 4; ++q) {
            const cc1d_vec16 v = *bf_g_quarter(s, j, q);
#pragma unroll
            for (int c = 0; c < 4; ++c) gw[q * 4 + c] = __int_as_float((int)v.w[c]);
        }
#endif
#if CC1D_HAS_SEQ_IDX
        if (untested) bf_dx_vector<false>(p, s, t, j, pos, w, gw);
        else bf_dx_vector<true>(p, s, t, j, pos, w, gw);
#else
        bf_dx_vector<false>(p, s, t, j, pos, w, gw);
#endif
    }
}

#if BF_G_IN_REGISTERS
// The vector a lane takes in turn i: warp w's run is vectors [w * ilp, (w + 1) * ilp) *
// warp size, a turn a warp's worth of consecutive vectors (conflict-free 16-byte reads of
// the staged tile, coalesced dx stores).
CC1D_DEVICE int bf_run_vector(const cc1d_bwd_params& p, int turn) {
    const int lane = (int)threadIdx.x % CC1D_WARP_SIZE, warp = (int)threadIdx.x / CC1D_WARP_SIZE;
    return (warp * p.ilp + turn) * CC1D_WARP_SIZE + lane;
}

// gw[m] = g[pos + m] of a lane's vector: its own g, then the first K of the vector after
// it, the next lane's own (one shuffle each), the last lane's from the first lane's g of
// the next turn (next_turn, which every other lane passes on unread).
CC1D_DEVICE void bf_window_g(const float (&own)[CC1D_VEC], const float (&next_turn)[CC1D_VEC],
                             float (&gw)[CC1D_VEC + CC1D_K]) {
    const int lane = (int)threadIdx.x % CC1D_WARP_SIZE;
    const int from = (lane + 1) % CC1D_WARP_SIZE;
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e) gw[e] = own[e];
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k) gw[CC1D_VEC + k] = cc1d_shfl(lane == 0 ? next_turn[k] : own[k], from);
}

// Phases 2 and 3 of the header comment for every turn of a lane's run but the last: g of
// the turn, its dw/db terms, then dx of the turn before (whose window the turn's g
// completes). Each warp's first K g go to its slot. On return g holds the last turn's
// g: its dx waits for the barrier (bf_dx_last_turn).
CC1D_DEVICE void bf_grad_dx_turns(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, const float (&w)[CC1D_WIDTH],
                                  float bias, float (&dw)[CC1D_WIDTH], float& db, float (&g)[CC1D_VEC]) {
    const int lane = (int)threadIdx.x % CC1D_WARP_SIZE;
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e) g[e] = 0.0f;
#pragma unroll 1
    for (int i = 0; i < p.ilp; ++i) {
        const int j = bf_run_vector(p, i);
        const cc1d_i64 pos = t.t0 + (cc1d_i64)j * CC1D_VEC;
        // Zeros past the row end: dx of the last positions reads them, and every lane
        // stays for the shuffles.
        float next[CC1D_VEC];
#pragma unroll
        for (int e = 0; e < CC1D_VEC; ++e) next[e] = 0.0f;
        if (pos < t.L) bf_grad_vector<false>(s, j, w, bias, next, dw, db);
        if (i == 0) {
            if (lane == 0)
#pragma unroll
                for (int k = 0; k < CC1D_K; ++k) bf_g_slot(s, (int)threadIdx.x / CC1D_WARP_SIZE)[k] = next[k];
        } else {
            float gw[CC1D_VEC + CC1D_K];
            bf_window_g(g, next, gw);
            const cc1d_i64 before = pos - CC1D_WARP_SIZE * CC1D_VEC;
            if (before < t.L) bf_dx_vector<false>(p, s, t, j - CC1D_WARP_SIZE, before, w, gw);
        }
#pragma unroll
        for (int e = 0; e < CC1D_VEC; ++e) g[e] = next[e];
    }
}

// dx of a lane's last turn, after the barrier: the last lane's next K g are the next
// warp's first (its slot), or, for the last warp, those after the tile (bf_grad_after).
CC1D_DEVICE void bf_dx_last_turn(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, const float (&w)[CC1D_WIDTH],
                                 const float (&g)[CC1D_VEC]) {
    const int j = bf_run_vector(p, p.ilp - 1);
    const cc1d_i64 pos = t.t0 + (cc1d_i64)j * CC1D_VEC;
    float gw[CC1D_VEC + CC1D_K];
    bf_window_g(g, g, gw);
    if ((int)threadIdx.x % CC1D_WARP_SIZE == CC1D_WARP_SIZE - 1) {
        const float* slot = bf_g_slot(s, (int)threadIdx.x / CC1D_WARP_SIZE + 1);
#pragma unroll
        for (int k = 0; k < CC1D_K; ++k) gw[CC1D_VEC + k] = slot[k];
    }
    if (pos < t.L) bf_dx_vector<false>(p, s, t, j, pos, w, gw);
}
#endif

#if BF_ROW_TAIL
// dx of the row's tail, the positions after its last tile (at most VEC - 1: header
// comment), one a thread of the first warp, from the g bf_grad_after left after the tile
// (0 past the row end, not read) and dfinal near the row end.
CC1D_DEVICE void bf_dx_tail(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, const float (&w)[CC1D_WIDTH]) {
    const int j = threadIdx.x;
    const cc1d_i64 pos = t.t0 + t.tile_len + j;
    if (j >= CC1D_VEC - 1 || t.tile != p.tiles - 1 || pos >= t.L) return;
    const int tail = (int)(t.L - (t.t0 + t.tile_len));
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k <= CC1D_K; ++k) {
        const int m = j + CC1D_K - k;   // g[pos + K - k], at tail position m
        if (m < tail) acc = fmaf(w[k], bf_g_at(s, t.tile_len + m), acc);
    }
#if CC1D_HAS_FINAL_STATES
    const cc1d_i64 f = pos - (t.L - CC1D_K);   // final_states[f] = x̃[pos]
    if (f >= 0) acc += s.fin[f];
#endif
    t.dxrow[pos * p.dx_stride_l] = cc1d_to_x(acc);
}
#endif

#if BF_CAN_STAGE_ASYNC

// The own vectors of x and dout: whole aligned vectors by cp.async, tails and unaligned
// rows element by element through registers. The previous unit no longer reads these
// sections (its dx pass reads g, masks and dfinal only), so no barrier comes first.
CC1D_DEVICE void bf_stage_own_async(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t) {
    const int nt = blockDim.x, tid = threadIdx.x;
#pragma unroll
    for (int i = 0; i < kBfIlp; ++i) {
        const int j = tid + i * nt;
        const cc1d_i64 pos = t.t0 + (cc1d_i64)j * CC1D_VEC;
        if (i >= p.ilp) break;
#if BF_OWN_BOUNDARIES
        if (j >= t.tile_vecs) break;
        if (pos >= 0 && pos + CC1D_VEC <= t.L) {
            if (p.vector_ok != 0) cc1d_copy16_async(s.x + kBfHalo + j, t.xrow + pos);
            else s.x[kBfHalo + j] = bf_load_vector(t.xrow, p.x_stride_l, pos, t.L, false);
            if (t.dout_vectors) cc1d_copy16_async(s.d + j, t.drow + pos);
            else s.d[j] = bf_load_vector(t.drow, p.dout_stride_l, pos, t.L, false);
        } else if (pos >= t.L) {   // past the row end (the row's edge vectors: bf_unit)
            s.x[kBfHalo + j] = s.d[j] = cc1d_v16_zero();
        }
#else
        if (p.vector_ok != 0 && pos + CC1D_VEC <= t.L) {
            cc1d_copy16_async(s.x + kBfHalo + j, t.xrow + pos);
            cc1d_copy16_async(s.d + j, t.drow + pos);
        } else {   // through registers (bf_load_vector); zeros past the row end
            s.x[kBfHalo + j] = bf_load_vector(t.xrow, p.x_stride_l, pos, t.L, false);
            s.d[j] = bf_load_vector(t.drow, p.dout_stride_l, pos, t.L, false);
        }
#endif
    }
}

#endif

// The block's weights and bias, taken as fp32 (bf_take_taps) only once its first unit's
// loads are out, so the two memory latencies overlap: taps converted (or moved to uniform
// registers) where they are loaded made every block wait for them before its first load.
// With silu a lane each, asked for before those loads (cc1d_load_lane_tap), gathered and
// held halved. Without it, 16-bit loads them right there, at the take: taps asked for
// earlier went to uniform registers ahead of the walk all the same, and the lane form (or
// taps held as stored) cost these variants registers, hence the plan's wave (on an H100
// some ran up to 7% slower with the lane form); on an H200 8x2048x1024 and 4x256x4096 ran
// 2% faster (docs/perf.md, entry 89). fp32 without silu, up to 1.5% slower that way,
// still loads them before the walk (BF_TAPS_AT_START).
#define BF_TAPS_AT_START (!CC1D_SILU && CC1D_X_DTYPE == 0)
#if CC1D_SILU
typedef unsigned int bf_pending_taps;
CC1D_DEVICE bf_pending_taps bf_ask_taps(const cc1d_bwd_params& p, cc1d_i64 d) { return cc1d_load_lane_tap(p, d); }
CC1D_DEVICE float bf_take_taps(const cc1d_bwd_params& p, cc1d_i64 d, bf_pending_taps lane_tap, float (&w)[CC1D_WIDTH]) {
    (void)p; (void)d;
    return cc1d_hold_taps(w, cc1d_gather_lane_taps(lane_tap, w));
}
#else
struct bf_pending_taps {};
CC1D_DEVICE bf_pending_taps bf_ask_taps(const cc1d_bwd_params& p, cc1d_i64 d) { (void)p; (void)d; return {}; }
CC1D_DEVICE float bf_take_taps(const cc1d_bwd_params& p, cc1d_i64 d, bf_pending_taps, float (&w)[CC1D_WIDTH]) {
    return cc1d_load_channel_taps(p, d, w);
}
#endif

// One (batch, tile) unit: loads, then the three phases. first (a block's first unit): the
// taps are taken once the unit's loads are out (bf_take_taps).
CC1D_DEVICE void bf_unit(const cc1d_bwd_params& p, const bf_shared& s, const bf_tile& t, bool first,
                         bf_pending_taps taps, float (&w)[CC1D_WIDTH], float& bias, float (&dw)[CC1D_WIDTH],
                         float& db) {
    const int tid = threadIdx.x, nt = blockDim.x;
    const bool async = BF_ALWAYS_ASYNC || (BF_CAN_STAGE_ASYNC && p.stage_async != 0);   // the same for the whole grid

    // ---- loads: own vectors of x and dout, halos, seq masks; none is used before all are issued ----
    cc1d_vec16 rx[kBfRegIlp], rd[kBfRegIlp];
#pragma unroll
    for (int i = 0; i < kBfRegIlp; ++i) rx[i] = rd[i] = cc1d_v16_zero();
#if BF_CAN_STAGE_ASYNC
    if (async) bf_stage_own_async(p, s, t);
#endif
    if (!async) {
#pragma unroll
        for (int i = 0; i < kBfRegIlp; ++i) {
            const cc1d_i64 pos = t.t0 + (cc1d_i64)(tid + i * nt) * CC1D_VEC;
#if BF_OWN_BOUNDARIES
            if (i < p.ilp && tid + i * nt < t.tile_vecs && pos >= 0 && pos + CC1D_VEC <= t.L) {   // (edge vectors: below)
                rx[i] = bf_load_vector(t.xrow, p.x_stride_l, pos, t.L, p.vector_ok != 0);
                rd[i] = bf_load_vector(t.drow, p.dout_stride_l, pos, t.L, t.dout_vectors);
            }
#else
            if (i < p.ilp && pos < t.L) {
                const bool v = p.vector_ok != 0 && pos + CC1D_VEC <= t.L;
                rx[i] = bf_load_vector(t.xrow, p.x_stride_l, pos, t.L, v);
                rd[i] = bf_load_vector(t.drow, p.dout_stride_l, pos, t.L, v);
            }
#endif
        }
    }
#if BF_OWN_BOUNDARIES
    // The row's edge vectors in this tile (cc1d_row_edge_element): an element of x̃ and of
    // dout a thread of the first 2 * VEC, issued with the tile's loads so the block waits
    // one memory latency, as for an aligned row (fwd_channel_first.cu measured a thread
    // that loads them element by element, one vector after the other, 9% slower).
    // The row's last vector may lie after the tile (the row's tail, in the halo's vectors):
    // staged so too, where the halo's threads would take it element by element, one thread
    // each for x and dout (up to ~200 instructions a unit on the first warp, which the
    // tile's rounds then wait for at the barrier).
    const int edge_at = tid < 2 * CC1D_VEC ? cc1d_row_edge_element(t.t0, t.tile_len + kBfHalo * CC1D_VEC, t.L, tid) : -1;
    x_t edge_x = cc1d_of_bits<x_t>(0u), edge_d = cc1d_of_bits<x_t>(0u);
    if (edge_at >= 0) {
        const cc1d_i64 q = t.t0 + edge_at;
        edge_x = bf_x_element(p, t, q);
        if (q >= 0 && q < t.L) edge_d = t.drow[q * p.dout_stride_l];
    }
#endif
    // Halo roles by thread: [0, H) x history, [H, 2H) x after the tile (BF_X_AFTER), [2H, 3H) dout after.
    // In the module a vector after the tile that is the row's edge vector is left to the edge
    // elements (halo_staged false), and without SiLU x after the tile is read for the row's
    // tail only (its last tile).
    cc1d_vec16 halo = cc1d_v16_zero();
    bool halo_staged = true;
    if (tid < kBfHalo) {
        halo = bf_load_x(p, t.xrow, t.b, t.d, t.t0 - (cc1d_i64)(kBfHalo - tid) * CC1D_VEC);
    } else if (BF_X_AFTER && tid < 2 * kBfHalo) {
        const cc1d_i64 pos = t.t0 + t.tile_len + (cc1d_i64)(tid - kBfHalo) * CC1D_VEC;
#if BF_ROW_TAIL
        halo_staged = !cc1d_row_edge_vector(pos, t.L);
        if (halo_staged && (CC1D_SILU || t.tile == p.tiles - 1)) halo = bf_load_x(p, t.xrow, t.b, t.d, pos);
#else
        halo = bf_load_x(p, t.xrow, t.b, t.d, pos);
#endif
    } else if (tid >= 2 * kBfHalo && tid < 3 * kBfHalo) {
        const cc1d_i64 pos = t.t0 + t.tile_len + (cc1d_i64)(tid - 2 * kBfHalo) * CC1D_VEC;
#if BF_ROW_TAIL
        halo_staged = !cc1d_row_edge_vector(pos, t.L);
#endif
        if (halo_staged && pos < t.L)
            halo = bf_load_vector(t.drow, p.dout_stride_l, pos, t.L, bf_whole_vector(p, t, bf_dout_row, pos));
    }
#if CC1D_HAS_SEQ_IDX
    // Seq masks of the own vectors and (threads h < kBfHalo) of vector tile_vecs + h after
    // the tile: 4 to 16 bytes a vector, through registers.
    cc1d_seq_masks own[kBfIlp], after;
#pragma unroll
    for (int i = 0; i < kBfIlp; ++i)
        if (i < p.ilp) own[i] = bf_load_masks(t, t.t0 + (cc1d_i64)(tid + i * nt) * CC1D_VEC);
    if (tid < kBfHalo) after = bf_load_masks(t, t.t0 + t.tile_len + (cc1d_i64)tid * CC1D_VEC);
#endif
#if CC1D_HAS_FINAL_STATES
    // dfinal_states of the row, for the tile that reaches its last K positions (tile 0 too
    // when L < K: they reach dinitial_states there).
#if BF_ROW_TAIL
    const bool reaches_end = t.t0 + t.tile_len > t.L - CC1D_K || t.tile == p.tiles - 1;   // (the row's tail too)
#else
    const bool reaches_end = t.t0 + t.tile_len > t.L - CC1D_K;
#endif
    float fin = 0.0f;
    if (reaches_end && tid < CC1D_K) {
        const x_t* f = reinterpret_cast<const x_t*>(p.dfinal_states);
        fin = cc1d_to_float(f[t.b * p.dfinal_stride_b + t.d * p.dfinal_stride_d + tid * p.dfinal_stride_k]);
    }
#endif
    if (first && !BF_TAPS_AT_START) bias = bf_take_taps(p, t.d, taps, w);
#if CC1D_HAS_SEQ_IDX || CC1D_HAS_FINAL_STATES
    // The previous unit may still read the masks / dfinal (dx pass) while this one stores them.
    __syncthreads();
#endif

    // ---- shared memory: x̃ and seq masks of the whole window ----
    if (!async)
#pragma unroll
        for (int i = 0; i < kBfRegIlp; ++i)
            if (i < p.ilp) {
#if BF_OWN_BOUNDARIES
                if (tid + i * nt >= t.tile_vecs) break;
                if (cc1d_row_edge_vector(t.t0 + (cc1d_i64)(tid + i * nt) * CC1D_VEC, t.L)) continue;   // (below)
#endif
                s.x[kBfHalo + tid + i * nt] = rx[i];
                s.d[tid + i * nt] = rd[i];
            }
#if BF_OWN_BOUNDARIES
    if (edge_at >= 0) {
        reinterpret_cast<x_t*>(s.x + kBfHalo)[edge_at] = edge_x;
        reinterpret_cast<x_t*>(s.d)[edge_at] = edge_d;
    }
#endif
    if (tid < kBfHalo) s.x[tid] = halo;
    else if (BF_X_AFTER && tid < 2 * kBfHalo) {
        if (halo_staged) s.x[kBfHalo + t.tile_vecs + tid - kBfHalo] = halo;
    } else if (tid >= 2 * kBfHalo && tid < 3 * kBfHalo) {
        if (halo_staged) s.d[t.tile_vecs + tid - 2 * kBfHalo] = halo;
    }
#if CC1D_HAS_SEQ_IDX
#pragma unroll
    for (int i = 0; i < kBfIlp; ++i)
        if (i < p.ilp) s.masks[tid + i * nt] = own[i];
    if (tid < kBfHalo) s.masks[t.tile_vecs + tid] = after;
#endif
#if CC1D_HAS_FINAL_STATES
    if (reaches_end && tid < CC1D_K) s.fin[tid] = fin;
#endif
#if BF_CAN_STAGE_ASYNC
    if (async) cc1d_wait_async_copies();   // this thread's copies; the barrier then shows everyone's to all
#endif
    __syncthreads();

#if BF_G_IN_REGISTERS
    float g_last[CC1D_VEC];
    bf_grad_dx_turns(p, s, t, w, bias, dw, db, g_last);
    bf_grad_after(p, s, t, w, bias, dw, db);
    __syncthreads();
    bf_dx_last_turn(p, s, t, w, g_last);
#else
    bf_grad_pass(p, s, t, w, bias, dw, db);
    bf_grad_after(p, s, t, w, bias, dw, db);
    __syncthreads();

    bf_dx_pass(p, s, t, w);
#endif
#if BF_ROW_TAIL
    bf_dx_tail(p, s, t, w);
#endif
    bf_dinit(p, s, t, w);
}

extern "C" __global__ void BF_LAUNCH_BOUNDS CC1D_ENTRY(cc1d_bwd_params p) {
    // At a 128-byte boundary whatever static shared memory the kernel also has (the
    // cluster sums' slots): the layout puts 16-bit tiles at 128-byte boundaries from here.
    // At 16 bytes past one, the 16-bit SiLU backward on 8x2048x1024 ran 10% slower on an
    // H100 (docs/perf.md entry 140).
    extern __shared__ __attribute__((aligned(128))) cc1d_vec16 bf_smem[];
    // The reduce kernel may be scheduled now; it waits for this one to finish.
    cc1d_allow_dependent_launch();
#if BF_OWN_BOUNDARIES
    // The plan's tile (tile_len positions, whole vectors): up to blockDim.x * ilp vectors, as
    // many as a row and its lead need (backward_channel_first.cpp), so shared memory holds
    // no slots past them.
    const int tile_vecs = (int)(p.tile_len / CC1D_VEC);
#else
    const int tile_vecs = (int)blockDim.x * p.ilp;
#endif
    bf_shared s = bf_carve(bf_smem, tile_vecs);

    // The launcher flattens part * dim + d into x (and y past 2^24 blocks); it pads the last row.
    const cc1d_i64 block = (cc1d_i64)blockIdx.y * gridDim.x + blockIdx.x;
    if (block >= p.groups * p.dim) return;
    const cc1d_i64 part = block / p.dim;
    const cc1d_i64 d = block - part * p.dim;

    const bf_pending_taps taps = bf_ask_taps(p, d);
#if CC1D_HAS_SEQ_IDX
    cc1d_wait_prior_grid();   // the masks kernel (an overlapped launch) before its masks are read
#endif
    float w[CC1D_WIDTH] = {}, bias = 0.0f;   // fp32 from the first unit on (bf_unit)
    if (BF_TAPS_AT_START) bias = bf_take_taps(p, d, taps, w);
    float dw[CC1D_WIDTH];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) dw[k] = 0.0f;
    float db = 0.0f;

    bf_tile t;
    t.d = d;
    t.L = p.seqlen;
    t.tile_vecs = tile_vecs;
    t.tile_len = tile_vecs * CC1D_VEC;
    const cc1d_i64 units = p.batch * p.tiles;
    const cc1d_i64 first = part * p.units_per_part;
    const cc1d_i64 last = first + p.units_per_part < units ? first + p.units_per_part : units;
    // The walk steps (batch, tile) and the row pointers along instead of dividing the unit
    // index and multiplying strides per unit: that work, repeated by every warp for every
    // unit, was a third of the 16-bit kernel's instructions (docs/perf.md, entry 78).
    t.b = first / p.tiles;
    t.tile = first - t.b * p.tiles;
    t.xrow = reinterpret_cast<const x_t*>(p.x) + t.b * p.x_stride_b + d * p.x_stride_d;
    t.drow = reinterpret_cast<const x_t*>(p.dout) + t.b * p.dout_stride_b + d * p.dout_stride_d;
    t.dxrow = reinterpret_cast<x_t*>(p.dx) + t.b * p.dx_stride_b + d * p.dx_stride_d;
    t.mask_row = CC1D_HAS_SEQ_IDX ? reinterpret_cast<const cc1d_seq_masks*>(
                                        reinterpret_cast<const cc1d_seq_mask*>(p.seq_masks) + t.b * p.seq_mask_stride)
                                  : 0;
#if BF_OWN_BOUNDARIES
    bf_follow_row(p, t);
#endif
#if BF_OWN_BOUNDARIES && !BF_ROW_TAIL
    bool taps_pending = true;   // (width 1: a block whose first unit is skipped takes them at its next)
#endif
    for (cc1d_i64 u = first; u < last; ++u) {
#if BF_OWN_BOUNDARIES
        t.t0 = t.tile * t.tile_len - t.lead;   // (past width 1 every tile starts before the row end: header comment)
#else
        t.t0 = t.tile * t.tile_len;
#endif
#if BF_OWN_BOUNDARIES && !BF_ROW_TAIL
        if (t.tile == 0 || t.t0 < t.L) {   // (a row of a smaller lead than the plan's room skips its last tile)
            bf_unit(p, s, t, taps_pending, taps, w, bias, dw, db);
            taps_pending = false;
        }
#else
        bf_unit(p, s, t, u == first, taps, w, bias, dw, db);
#endif
        s.d += s.to_other_d;   // BF_G_IS_DOUT: the next unit's dout goes to the other buffer
        s.to_other_d = -s.to_other_d;
        if (++t.tile == p.tiles) {
            t.tile = 0;
            ++t.b;
            t.xrow += p.x_stride_b;
            t.drow += p.dout_stride_b;
            t.dxrow += p.dx_stride_b;
            if (CC1D_HAS_SEQ_IDX) t.mask_row += p.seq_mask_stride / CC1D_VEC;
#if BF_OWN_BOUNDARIES
            bf_follow_row(p, t);
#endif
        }
    }
    cc1d_bwd_release_sums(dw, db);
    bf_block_sums(p, s, part, d, dw, db);
}

extern "C" __global__ void __launch_bounds__(CC1D_REDUCE_THREADS) CC1D_ENTRY_REDUCE(cc1d_bwd_params p) {
    cc1d_bwd_reduce(p);
}
