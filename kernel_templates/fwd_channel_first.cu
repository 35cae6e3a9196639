// Causal conv1d forward, channel-first layout: x and out are (B, D, L) with L contiguous.
//
// One block computes one tile of one row (b, d): blockDim.x * CC1D_FWD_CF_ILP(sizeof(x_t)) 16-byte
// vectors along L (in the staged kernel of the module of rows off 16-byte boundaries, the
// vectors its row needs, up to one a thread more: kCfIlp). Each thread issues all of its global loads before it uses any, so
// every thread keeps ILP * 16 bytes in flight (that, not arithmetic, sets the speed),
// and parks them in shared memory next to the tile's halo: the ceil(K / VEC) vectors
// before the tile start (from x, initial_states or zeros). After one barrier each output
// vector reads the K inputs before it from the neighbouring vectors with 16-byte reads,
// which consecutive threads issue at consecutive addresses (no bank conflicts).
// Weights and bias live in registers as fp32; accumulation is fp32.
//
// With seq_idx and 16-bit x a block computes CC1D_FWD_CF_SEQ_ROWS (4) channels of one
// batch row side by side (blockDim.x / 4 threads each) over one tile of time: every
// channel of a batch row reads the same ids, 4 bytes a position against 2 of x, so ids
// loaded and staged once a block instead of once a channel cost a quarter of the
// traffic, instructions and shared memory. On an H200 4x5376x4096 ran 6-13% faster
// (63% -> 68% of copy bandwidth in bf16 with SiLU), 8x2048x1024 13%, 4x4096x512 24%;
// fp32 (ids as wide as x) ran 3-5% slower that way and keeps a channel a block
// (docs/perf.md, entry 103).
//
// Dynamic shared memory, sized by the launcher for its blockDim.x (forward_channel_first.cpp
// computes the same sizes): [halo + tile] 16-byte vectors of raw x for each of the block's
// channels, then, with seq_idx, one int id per element of that span. The staged kernel
// pads each channel's halo to 8 vectors and the halo's ids to 32, so every tile and the
// tile's ids start at 128-byte boundaries.
//
// Rows of unit stride that are not 16-byte aligned (an L that is not a multiple of a
// vector, a misaligned view) take a module of their own without seq_idx (CC1D_SHIFTED_ROWS,
// Variant::shifted_rows, forward_channel_first.cpp): there the tiles start at x's row's own
// 16-byte boundary before position 0, so every vector inside the row moves as one aligned
// access (vector_ok); out's row stores aligned vectors where it sits at the same offset
// within its vector as x's (contiguous tensors), else the widest aligned pieces
// (cc1d_v16_store_split), and a row's first and last vectors go one element a thread
// (cf_stage_edges). In the main module, with seq_idx (the ids' rows have an alignment of
// their own) or where the caller switches the module off, such rows load each vector as
// two aligned ones and a shift (cc1d_v16_load_shifted) and store it as aligned pieces, but
// for a row's first and last vectors. Rows of other strides take the element-wise path:
// loads are still coalesced (consecutive threads, consecutive elements) straight into
// shared memory; only the stores go element by element.
//
// Every module holds a second kernel (entry suffix "_staged") that moves the tile, and
// with seq_idx the tile's ids, by cp.async instead of through registers. Without seq_idx
// the host takes it on devices of fast DRAM: with its tile at a 128-byte boundary it ran
// 2-7% faster than the first on an H200 on every anchor shape but 4x5376x4096 (within
// +-0.7% there), in every dtype (docs/perf.md, entry 86; before the alignment only fp32
// SiLU on 4x5376x4096 gained, and on an H100 it lost 3%: entries 65 and 70). With seq_idx
// it takes it on every device (CF_STAGED_LAUNCH_BOUNDS below).

constexpr int kCfHalo = (CC1D_K + CC1D_VEC - 1) / CC1D_VEC;   // vectors of history per tile
constexpr int kCfHaloElems = kCfHalo * CC1D_VEC;
constexpr int kCfStagedLead = (kCfHalo + 7) / 8 * 8;   // shared vectors before the staged kernel's tile
// Ids before the staged kernel's tile ids (seq_idx): the halo's, padded to 128 bytes.
constexpr int kCfStagedIdsLead = (kCfHaloElems + 31) / 32 * 32;
// Vectors a thread takes at most. The staged kernel of the module of rows off 16-byte
// boundaries (below) takes a tile of the host's length (chunk_len), from blockDim.x * ILP
// vectors up to one a thread more (forward_channel_first.cpp, own_boundary_tile): a row
// and its lead past a power-of-two tile by a vector or two (L = 1031 and its lead: 130
// vectors in 16-bit) fill a tile of one warp plus a round for a lane or two, where twice
// the threads left half of the block's slots idle (on an H200 4x2048x1031 16% faster), or
// one tile a row where a second held a few positions (4x5376x4099 8%; docs/perf.md entry
// 126). Its first ILP rounds are always whole, so only the last tests the tile's end. The
// first kernel holds its vectors in registers (one more spilled at its 32-register bound)
// and keeps ILP.
template <bool kStaged> constexpr int kCfIlp = CC1D_FWD_CF_ILP(sizeof(x_t)) + (CC1D_SHIFTED_ROWS && kStaged ? 1 : 0);
#if CC1D_HAS_SEQ_IDX
constexpr int kCfRows = CC1D_FWD_CF_SEQ_ROWS((int)sizeof(x_t));   // channels a block computes
#else
constexpr int kCfRows = 1;
#endif
// CC1D_SHIFTED_ROWS: the module of rows off 16-byte boundaries, its tiles at each row's own
// boundaries (the host gives it no seq_idx variant). A module of its own because the same
// code in the main module slowed aligned calls by up to 9% on an H200 (4x4096x512 bf16
// SiLU; the medium shape 5%; docs/perf.md entry 123): more set-up a block, on short rows.
// Each place that differs is under #if, so that the main module compiles to the code it
// was measured with (instruction for instruction).

// x̃ at a position before the row start: initial_states when given, else 0.
CC1D_DEVICE x_t cf_before_start(const cc1d_fwd_params& p, cc1d_i64 b, cc1d_i64 d, cc1d_i64 pos) {
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

// One halo vector (elements pos .. pos+VEC-1, pos < tile start <= L).
CC1D_DEVICE cc1d_vec16 cf_load_halo(const cc1d_fwd_params& p, const x_t* xrow, cc1d_i64 b, cc1d_i64 d,
                                    cc1d_i64 pos) {
    if (pos >= 0) return cc1d_v16_load(xrow, p.x_stride_l, pos, p.seqlen, p.vector_ok != 0);
    cc1d_vec16 v = cc1d_v16_zero();
#if !CC1D_HAS_INITIAL_STATES
    // Wholly before the row (tile 0's history): zeros, without the element loop's tests,
    // which one thread ran for every tile 0 while its block waited at the barrier:
    // 4x2048x1031 bf16 SiLU 6.6% faster on an H200 (the backward's history vector the
    // same way; docs/perf.md, entry 125). The main module's tiles start at whole vectors,
    // so there a vector before the row start lies wholly before it and, in 16-bit, the
    // loop is not compiled at all: width 8 1.6-2.0% faster on 8x2048x1024, 4x4096x512
    // 2.6%, seq_idx 2.3% (entry 128; the module's test had put 8 bytes of stack into the
    // staged kernels at widths 3 and 8). fp32 keeps the loop: without it its staged
    // seq_idx kernel took 8 bytes of stack and ran 3.8% slower.
    if (CC1D_SHIFTED_ROWS ? pos + CC1D_VEC <= 0 : sizeof(x_t) == 2) return v;
#endif
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e) {
        const cc1d_i64 q = pos + e;
        cc1d_v16_set(v, e, q >= 0 ? xrow[q * p.x_stride_l] : cf_before_start(p, b, d, q));
    }
    return v;
}

// The tile's edge vectors (cc1d_row_edge_vector) are staged one element a thread of a
// channel's first 2 * VEC (cc1d_row_edge_element): x̃ before the row start (initial_states
// or zeros), zeros past its end. Each such thread issues one load, with the tile's, so the
// block waits one memory latency as for an aligned row; a thread that loaded an edge
// vector element by element, then the next one, held its warp, and the block at its
// barrier, one latency a vector (16-bit 4x2048x1031: a third of the warps' cycles at the
// barrier, 9% slower than entry 94's shifted loads; docs/perf.md entry 123).
CC1D_DEVICE x_t cf_edge_value(const cc1d_fwd_params& p, const x_t* xrow, cc1d_i64 b, cc1d_i64 d, cc1d_i64 q) {
    if (q >= p.seqlen) return cc1d_of_bits<x_t>(0u);
    return q >= 0 ? xrow[q * p.x_stride_l] : cf_before_start(p, b, d, q);
}
// Edge elements k = first_k, first_k + nthreads, ... (< 2 * VEC) into the tile.
CC1D_DEVICE void cf_stage_edges(const cc1d_fwd_params& p, const x_t* xrow, cc1d_i64 b, cc1d_i64 d, cc1d_i64 tile_start,
                                int tile_elems, int first_k, int nthreads, x_t* s_tile) {
    for (int k = first_k; k < 2 * CC1D_VEC; k += nthreads) {
        const int at = cc1d_row_edge_element(tile_start, tile_elems, p.seqlen, k);
        if (at >= 0) s_tile[at] = cf_edge_value(p, xrow, b, d, tile_start + at);
    }
}

// 16 blocks per SM (NVIDIA): holds the kernel at 32 registers without spills, where 34-36
// let only 12 blocks share an SM. On an H200 1-2% faster on 4x5376x4096 in 16-bit, on an
// H100 unchanged (docs/perf.md, entry 65). seq_idx and widths past 8 keep the plain bound
// (they would spill); HIP reads a second argument differently (bwd_channel_first.cu).
#if !defined(CC1D_BACKEND_HIP) && !CC1D_HAS_SEQ_IDX && CC1D_WIDTH <= 8
#define CF_LAUNCH_BOUNDS __launch_bounds__(CC1D_FWD_CF_THREADS, 16)
#else
#define CF_LAUNCH_BOUNDS __launch_bounds__(CC1D_FWD_CF_THREADS)
#endif
// The staged kernel with seq_idx: no registers hold its tile, and a launch bound turns
// them into blocks an SM (under the plain bound 16-bit took 44-56 registers, 10-8 blocks):
// 12 blocks in 16-bit up to width 8 (40 registers, 8-48 bytes of stack), 16 in fp32 up to
// width 4 (32, none). 4x5376x4096 bf16 SiLU against the first kernel: on an H200 -9.5%
// in time (69.2% -> 76.4% of copy bandwidth; -7.0% under the plain bound), fp32 SiLU
// -12.7% (91.9%); on an H100 -10.3% (81.5% -> 90.8%) and -5.0% (98.1%). 16 blocks in
// 16-bit spilled 32-200 bytes and ran 3.6% slower than the first kernel. fp32 past width 4
// and 16-bit past width 8 keep the plain bound (fp32 32-44 registers, 16-bit 52-64; a bound
// of 12 would raise fp32 at widths 5-8 from 32-36 to 40), measured only so (docs/perf.md,
// entry 110).
#if !defined(CC1D_BACKEND_HIP) && CC1D_HAS_SEQ_IDX && CC1D_X_DTYPE == 0 && CC1D_WIDTH <= 4
#define CF_STAGED_LAUNCH_BOUNDS __launch_bounds__(CC1D_FWD_CF_THREADS, 16)
#elif !defined(CC1D_BACKEND_HIP) && CC1D_HAS_SEQ_IDX && CC1D_X_DTYPE != 0 && CC1D_WIDTH <= 8
#define CF_STAGED_LAUNCH_BOUNDS __launch_bounds__(CC1D_FWD_CF_THREADS, 12)
#else
#define CF_STAGED_LAUNCH_BOUNDS CF_LAUNCH_BOUNDS
#endif

// The staged kernel in 16-bit asks for the taps before the tile, as stored, and widens
// them only after the barrier. Asked for after the halo (as the others still do), they
// waited behind the thread that parks it, at its shared-memory store: a second memory
// latency in every block. On an H200 16-bit ran 1-7% faster that way (8x2048x1024 SiLU 7%,
// 4x4096x512 4-5%), fp32 1-3% slower; on an H100, whose DRAM takes the other kernel
// without seq_idx, that one ran up to 8% slower with it (docs/perf.md, entry 89). (With
// seq_idx the H100 takes the staged kernel, measured as a whole, taps first: entry 110.)
template <bool kStaged> constexpr bool kCfTapsFirst = kStaged && CC1D_X_DTYPE != 0;

// The tile's whole vectors by cp.async, straight into shared memory, so no registers
// hold them (the staged kernel); complete after cc1d_wait_async_copies.
CC1D_DEVICE void cf_stage_tile_async(const cc1d_fwd_params& p, const x_t* xrow, cc1d_i64 b, cc1d_i64 d,
                                     cc1d_i64 tile_start, int tile_vecs, int tid, int nthreads, cc1d_vec16* s_tile) {
#if CC1D_HAS_ASYNC_COPY
    const cc1d_i64 L = p.seqlen;
#pragma unroll
    for (int i = 0; i < kCfIlp<true>; ++i) {
        const int j = tid + i * nthreads;
        const cc1d_i64 pos = tile_start + (cc1d_i64)j * CC1D_VEC;
#if CC1D_SHIFTED_ROWS
        if (i >= CC1D_FWD_CF_ILP(sizeof(x_t)) && j >= tile_vecs) break;   // (the host's tiles fill the first ILP)
        if (pos >= 0 && pos + CC1D_VEC <= L)
            cc1d_copy16_async(&s_tile[j], xrow + pos);
        else if (pos >= L)   // past the row end (the row's edge vectors: cf_stage_edges)
            cc1d_v16_store_aligned(&s_tile[j], cc1d_v16_zero());
#else
        if (pos + CC1D_VEC <= L)
            cc1d_copy16_async(&s_tile[j], xrow + pos);
        else   // the row's last, partial vector, or past the row end
            cc1d_v16_store_aligned(&s_tile[j], pos < L ? cc1d_v16_load(xrow, 1, pos, L, false) : cc1d_v16_zero());
#endif
    }
#if CC1D_SHIFTED_ROWS   // (the tile's copies are in flight)
    cf_stage_edges(p, xrow, b, d, tile_start, tile_vecs * CC1D_VEC, tid, nthreads, reinterpret_cast<x_t*>(s_tile));
#else
    (void)b; (void)d; (void)tile_vecs;
#endif
#else
    (void)p; (void)xrow; (void)b; (void)d; (void)tile_start; (void)tile_vecs; (void)tid; (void)nthreads; (void)s_tile;
#endif
}

template <bool kStaged>
CC1D_DEVICE void cf_forward(const cc1d_fwd_params& p) {
    // At a 128-byte boundary even if the kernel gains static shared memory: the staged
    // tile's layout counts its 128-byte boundaries from here (bwd_channel_first.cu's
    // bf_smem lost 10% where a static array had moved it, docs/perf.md entry 140).
    extern __shared__ __attribute__((aligned(128))) cc1d_vec16 cf_smem[];

    const unsigned int block = cc1d_flat_block();
#if CC1D_HAS_SEQ_IDX
    const unsigned int tiles = (unsigned int)p.tiles, dim = (unsigned int)p.dim;
    const unsigned int groups = (dim + kCfRows - 1) / kCfRows;   // of kCfRows channels a batch row
    if (block >= p.batch * groups * p.tiles) return;
    const unsigned int row = block / tiles, tile = block - row * tiles;
    const unsigned int b = row / groups, g = row - b * groups;
    // Channel r of the group: threads [r * nthreads, (r + 1) * nthreads). A thread past
    // the last channel (dim not a multiple of kCfRows) stages ids and meets the barrier.
    const int nthreads = blockDim.x / kCfRows;
    const unsigned int r = kCfRows == 1 ? 0u : threadIdx.x / (unsigned int)nthreads;
    const int tid = (int)(threadIdx.x - r * (unsigned int)nthreads);
    const unsigned int d = g * kCfRows + r;
    const bool has_row = kCfRows == 1 || d < dim;
#else
    // (The same values for one channel a block, in the form the kernels without seq_idx
    // were measured with: their SASS stays as it was.)
    if (block >= p.batch * p.dim * p.tiles) return;
    const unsigned int tiles = (unsigned int)p.tiles, dim = (unsigned int)p.dim;
    const unsigned int row = block / tiles, tile = block - row * tiles;
    const unsigned int b = row / dim, d = row - b * dim;
    const int nthreads = blockDim.x, tid = threadIdx.x;
    constexpr unsigned int r = 0;
    constexpr bool has_row = true;
#endif
#if CC1D_SHIFTED_ROWS
    // The staged kernel: the host's tile (chunk_len positions, whole vectors), up to
    // nthreads * kCfIlp vectors; the first kernel's fills its threads' ILP vectors.
    const int tile_vecs = kStaged ? (int)(p.chunk_len / CC1D_VEC) : nthreads * CC1D_FWD_CF_ILP(sizeof(x_t));
    const cc1d_i64 L = p.seqlen;
    const bool vector_ok = p.vector_ok != 0;

    const x_t* xrow = reinterpret_cast<const x_t*>(p.x) + b * p.x_stride_b + d * p.x_stride_d;
    x_t* orow = reinterpret_cast<x_t*>(p.out) + b * p.out_stride_b + d * p.out_stride_d;
    // The tiles follow x's row's own boundaries, starting `lead` elements before position
    // 0 (as varlen_fwd.cu does); out's row stores aligned vectors where it sits at the
    // same offset. (The host launches this module only on rows of unit stride in x and
    // out: its stores take that stride.)
    const int lead = vector_ok ? (int)(((unsigned long long)xrow & 15u) / sizeof(x_t)) : 0;
    const bool out_vectors = vector_ok && ((unsigned long long)orow & 15u) == ((unsigned long long)xrow & 15u);
    const cc1d_i64 tile_start = (cc1d_i64)tile * tile_vecs * CC1D_VEC - lead;
#else
    // (In the order the main module was measured with: its SASS stays as it was.)
    const int tile_vecs = nthreads * CC1D_FWD_CF_ILP(sizeof(x_t));
    const cc1d_i64 tile_start = (cc1d_i64)tile * tile_vecs * CC1D_VEC;
    const cc1d_i64 L = p.seqlen;
    const bool vector_ok = p.vector_ok != 0;

    const x_t* xrow = reinterpret_cast<const x_t*>(p.x) + b * p.x_stride_b + d * p.x_stride_d;
    x_t* orow = reinterpret_cast<x_t*>(p.out) + b * p.out_stride_b + d * p.out_stride_d;
#endif
#if CC1D_SHIFTED_ROWS
    if (tile > 0 && tile_start >= L) return;   // the extra tile the launcher adds for a lead
#endif
    // s_x[kCfHalo + j] = tile vector j; s_x[0..kCfHalo) = halo. The staged kernel's tile
    // starts at a 128-byte boundary, so a warp's cp.async copies land line for line as they
    // leave the row's 128-byte lines (kCfStagedLead vectors before it, which
    // forward_channel_first.cpp counts): on an H200 4x5376x4096 ran 4.9% faster than with
    // the tile 16 bytes off a boundary (docs/perf.md, entry 86).
    // With seq_idx each channel's [lead + tile] follows the one before, so every tile keeps
    // that boundary.
    constexpr int kLead = kStaged ? kCfStagedLead : kCfHalo;
    cc1d_vec16* s_x = cf_smem + (kLead - kCfHalo) + r * (kLead + tile_vecs);

    // ---- 1. loads: tile, halo, (seq ids), weights (kCfTapsFirst: weights first); all issued
    // before the barrier ----
    cc1d_raw_taps taps;
    // (A thread past the last channel reads channel 0's, which exists, and drops them.)
    if constexpr (kCfTapsFirst<kStaged>) taps = cc1d_load_raw_taps(p, has_row ? d : 0u);
    if (!has_row) {
        // (no channel: ids only)
    } else if (kStaged && CC1D_HAS_ASYNC_COPY && vector_ok) {
        cf_stage_tile_async(p, xrow, b, d, tile_start, tile_vecs, tid, nthreads, s_x + kCfHalo);
#if CC1D_SHIFTED_ROWS
    } else if (vector_ok) {
        // (The staged kernel here where it has no cp.async: HIP. The first kernel's tile
        // fills its threads' ILP vectors, every slot the tile's.)
        cc1d_vec16 v[kCfIlp<kStaged>];
#pragma unroll
        for (int i = 0; i < kCfIlp<kStaged>; ++i) {
            const int j = tid + i * nthreads;
            const cc1d_i64 pos = tile_start + (cc1d_i64)j * CC1D_VEC;
            const bool in_tile = i < CC1D_FWD_CF_ILP(sizeof(x_t)) || j < tile_vecs;   // (the first ILP rounds are whole)
            v[i] = in_tile && pos >= 0 && pos + CC1D_VEC <= L ? cc1d_v16_load_aligned(xrow + pos) : cc1d_v16_zero();
        }
        // A thread's first edge element loads before the vectors are parked (one register,
        // where staging the edges after them added a second memory latency), the rest
        // (channels of fewer than 2 * VEC threads) after.
        x_t* s_elems = reinterpret_cast<x_t*>(s_x + kCfHalo);
        const int edge_at = tid < 2 * CC1D_VEC ? cc1d_row_edge_element(tile_start, tile_vecs * CC1D_VEC, L, tid) : -1;
        const x_t edge = edge_at >= 0 ? cf_edge_value(p, xrow, b, d, tile_start + edge_at) : cc1d_of_bits<x_t>(0u);
#pragma unroll
        for (int i = 0; i < kCfIlp<kStaged>; ++i) {
            const int j = tid + i * nthreads;
            const cc1d_i64 pos = tile_start + (cc1d_i64)j * CC1D_VEC;
            const bool in_tile = i < CC1D_FWD_CF_ILP(sizeof(x_t)) || j < tile_vecs;
            if (in_tile && !cc1d_row_edge_vector(pos, L)) cc1d_v16_store_aligned(&s_x[kCfHalo + j], v[i]);
        }
        if (edge_at >= 0) s_elems[edge_at] = edge;
        cf_stage_edges(p, xrow, b, d, tile_start, tile_vecs * CC1D_VEC, tid + nthreads, nthreads, s_elems);
#else
    } else if (vector_ok) {
        cc1d_vec16 v[CC1D_FWD_CF_ILP(sizeof(x_t))];
#pragma unroll
        for (int i = 0; i < CC1D_FWD_CF_ILP(sizeof(x_t)); ++i) {
            const cc1d_i64 pos = tile_start + (cc1d_i64)(tid + i * nthreads) * CC1D_VEC;
            v[i] = pos < L ? cc1d_v16_load(xrow, 1, pos, L, pos + CC1D_VEC <= L) : cc1d_v16_zero();
        }
#pragma unroll
        for (int i = 0; i < CC1D_FWD_CF_ILP(sizeof(x_t)); ++i) cc1d_v16_store_aligned(&s_x[kCfHalo + tid + i * nthreads], v[i]);
#endif
    } else if (p.x_stride_l == 1) {
        // A row of unit stride, not aligned: two aligned loads a vector (cc1d_v16_load_shifted),
        // one vector at a time, since this kernel holds 32 registers (the occupancy that
        // gives keeps the bytes in flight).
#pragma unroll 1
        for (int i = 0; i < CC1D_FWD_CF_ILP(sizeof(x_t)); ++i) {
            const cc1d_i64 pos = tile_start + (cc1d_i64)(tid + i * nthreads) * CC1D_VEC;
            const cc1d_vec16 v = cc1d_v16_shifted_ok(pos, L) ? cc1d_v16_load_shifted(xrow + pos)
                                 : (pos < L ? cc1d_v16_load(xrow, 1, pos, L, false) : cc1d_v16_zero());
            cc1d_v16_store_aligned(&s_x[kCfHalo + tid + i * nthreads], v);
        }
    } else {
        x_t* s_elems = reinterpret_cast<x_t*>(s_x) + kCfHaloElems;
#pragma unroll 4
        for (int i = 0; i < CC1D_FWD_CF_ILP(sizeof(x_t)) * CC1D_VEC; ++i) {
            const int e = tid + i * nthreads;
            const cc1d_i64 pos = tile_start + e;
            s_elems[e] = pos < L ? xrow[pos * p.x_stride_l] : cc1d_of_bits<x_t>(0u);
        }
    }
    for (int h = tid; has_row && h < kCfHalo; h += nthreads)
        cc1d_v16_store_aligned(&s_x[h], cf_load_halo(p, xrow, b, d, tile_start - (cc1d_i64)(kCfHalo - h) * CC1D_VEC));

#if CC1D_HAS_SEQ_IDX
    // Ids of positions tile_start - kCfHaloElems .. tile end, 16-byte aligned per vector so
    // the compute phase reads them as int4. Before the row start: -1, or seq_idx[b, 0]
    // when initial_states feed the first sequence; past the end: -1 (never stored).
    // Staged by every thread of the block, for all of its channels. The staged kernel's
    // tile ids start at a 128-byte boundary too, and move by cp.async (16-byte rows).
    constexpr int kIdsLead = kStaged ? kCfStagedIdsLead : kCfHaloElems;
    int* s_seq = reinterpret_cast<int*>(cf_smem + kCfRows * (kLead + tile_vecs)) + (kIdsLead - kCfHaloElems);
    const int* seq_row = p.seq_idx + b * p.seq_stride_b;
    const int span = tile_vecs * CC1D_VEC;   // the tile's ids (after kCfHaloElems of halo)
    constexpr int kIdsEach = CC1D_FWD_CF_ILP(sizeof(x_t)) * CC1D_VEC / kCfRows;   // a thread's share
    if (p.seq_vector_ok != 0) {
        // Four ids a 16-byte load (a row's ids are 16-byte aligned and tile_start a multiple
        // of 4): a quarter of the loads and shared stores of one id a load, which made the
        // 16-bit forward with seq_idx issue 8 times the loads of its x (4x5376x4096 16-bit
        // 21-23% faster on an H200, docs/perf.md entry 98).
#pragma unroll
        for (int i = 0; i < (kIdsEach + 3) / 4; ++i) {
            const int e = 4 * ((int)threadIdx.x + i * (int)blockDim.x);
            if (kIdsEach % 4 != 0 && e >= span) break;   // (fewer groups of four than threads)
            const cc1d_i64 pos = tile_start + e;
#if CC1D_HAS_ASYNC_COPY
            if (kStaged && pos + 4 <= L) {
                cc1d_copy16_async(s_seq + kCfHaloElems + e, seq_row + pos);
                continue;
            }
#endif
            cc1d_vec16 v;
            if (pos + 4 <= L) {
                v = cc1d_v16_load_aligned(seq_row + pos);
            } else {
#pragma unroll
                for (int c = 0; c < 4; ++c) v.w[c] = (unsigned int)(pos + c < L ? seq_row[pos + c] : -1);
            }
            cc1d_v16_store_aligned(s_seq + kCfHaloElems + e, v);
        }
    } else {
#pragma unroll 4
        for (int i = 0; i < kIdsEach; ++i) {
            const int e = (int)threadIdx.x + i * (int)blockDim.x;
            const cc1d_i64 pos = tile_start + e;
            s_seq[kCfHaloElems + e] = pos < L ? seq_row[pos * p.seq_stride_l] : -1;
        }
    }
    for (int e = (int)threadIdx.x; e < kCfHaloElems; e += (int)blockDim.x) {
        const cc1d_i64 pos = tile_start - kCfHaloElems + e;
        // (L == 0: no ids are read; seq_idx may be null)
        s_seq[e] = pos >= 0 ? seq_row[pos * p.seq_stride_l] : (CC1D_HAS_INITIAL_STATES && L > 0 ? seq_row[0] : -1);
    }
#endif

    float w[CC1D_WIDTH], bias = 0.0f;
    if constexpr (!kCfTapsFirst<kStaged>) {
        if (has_row) bias = cc1d_load_channel_taps(p, d, w);
    }
#if CC1D_HAS_ASYNC_COPY
    if (kStaged) cc1d_wait_async_copies();
#endif
    __syncthreads();
    if constexpr (kCfTapsFirst<kStaged>) bias = cc1d_taps_to_float(taps, w);

    // ---- 2. final_states: the last tile holds x̃[L-K .. L-1] in shared memory (raw bits) ----
#if CC1D_HAS_FINAL_STATES
#if CC1D_SHIFTED_ROWS
    if (has_row && tile_start + tile_vecs * CC1D_VEC >= L) {   // the row's last tile (a tile past it returned)
#else
    if (has_row && tile == p.tiles - 1) {
#endif
        const x_t* s_elems = reinterpret_cast<const x_t*>(s_x) + kCfHaloElems;
        x_t* fin = reinterpret_cast<x_t*>(p.final_states) + b * p.final_stride_b + d * p.final_stride_d;
        for (int j = tid; j < CC1D_K; j += nthreads) fin[j * p.final_stride_k] = s_elems[L - CC1D_K + j - tile_start];
    }
#endif

    // ---- 3. compute: each output vector from its K predecessors and itself ----
#pragma unroll
    for (int i = 0; i < kCfIlp<kStaged>; ++i) {
        const int j = tid + i * nthreads;
        const cc1d_i64 pos = tile_start + (cc1d_i64)j * CC1D_VEC;
#if CC1D_SHIFTED_ROWS
        if ((i >= CC1D_FWD_CF_ILP(sizeof(x_t)) && j >= tile_vecs) || pos >= L) break;   // (tiles fill the first ILP)
#else
        if (!has_row || pos >= L) break;
#endif

        // win[m] = x̃[pos - K + m]: the halo vectors j-kCfHalo .. j-1 hold the first K.
        float win[CC1D_K + CC1D_VEC];
#pragma unroll
        for (int h = 0; h < kCfHalo; ++h) {
            const cc1d_vec16 v = cc1d_v16_load_aligned(&s_x[j + h]);
#pragma unroll
            for (int e = 0; e < CC1D_VEC; ++e) {
                const int m = h * CC1D_VEC + e - (kCfHaloElems - CC1D_K);
                if (m >= 0) win[m] = cc1d_v16_float(v, e);
            }
        }
        const cc1d_vec16 own = cc1d_v16_load_aligned(&s_x[kCfHalo + j]);
#pragma unroll
        for (int e = 0; e < CC1D_VEC; ++e) win[CC1D_K + e] = cc1d_v16_float(own, e);

#if CC1D_HAS_SEQ_IDX
        int ids[CC1D_K + CC1D_VEC];   // ids[m] = seq id of position pos - K + m
        const cc1d_vec16* s_seq4 = reinterpret_cast<const cc1d_vec16*>(s_seq) + j * (CC1D_VEC / 4);
#pragma unroll
        for (int r = 0; r < (kCfHalo + 1) * CC1D_VEC / 4; ++r) {
            const cc1d_vec16 v = cc1d_v16_load_aligned(&s_seq4[r]);
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int m = r * 4 + c - (kCfHaloElems - CC1D_K);
                if (m >= 0) ids[m] = (int)v.w[c];
            }
        }
#endif

        float ys[CC1D_VEC];
#pragma unroll
        for (int e = 0; e < CC1D_VEC; ++e) {
            float z = bias;
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k) {
#if CC1D_HAS_SEQ_IDX
                // Terms from another sequence drop out: skipped, so the fma is predicated
                // rather than fed a selected zero weight (one instruction, not two).
                if (ids[e + k] == ids[e + CC1D_K]) z = fmaf(w[k], win[e + k], z);
#else
                z = fmaf(w[k], win[e + k], z);
#endif
            }
            float y = cc1d_activate_fast(z);
#if CC1D_HAS_SEQ_IDX
            if (ids[e + CC1D_K] < 0) y = 0.0f;   // padding: exactly 0
#endif
            ys[e] = y;
        }
        const cc1d_vec16 out = cc1d_v16_from_floats(ys);
#if CC1D_SHIFTED_ROWS
        const bool whole = pos >= 0 && pos + CC1D_VEC <= L;   // the vector lies in the row
        if (!out_vectors && whole) cc1d_v16_store_split(orow + pos, out);   // out at another offset
        else cc1d_v16_store(orow, 1, pos, L, out_vectors && whole, out);
#else
        if (!vector_ok && p.out_stride_l == 1 && pos + CC1D_VEC <= L) cc1d_v16_store_split(orow + pos, out);   // not aligned
        else cc1d_v16_store(orow, p.out_stride_l, pos, L, vector_ok && pos + CC1D_VEC <= L, out);
#endif
    }
}

extern "C" __global__ void CF_LAUNCH_BOUNDS CC1D_ENTRY(cc1d_fwd_params p) { cf_forward<false>(p); }

#ifdef CC1D_ENTRY_STAGED
extern "C" __global__ void CF_STAGED_LAUNCH_BOUNDS CC1D_ENTRY_STAGED(cc1d_fwd_params p) { cf_forward<true>(p); }
#endif
