// Causal conv1d backward, channel-last layout, through shared-memory tiles: the main kernel
// of the tiled modules (Variant::tiled), up to width 4 without states
// (CC1D_BWD_CL_TILE_KERNEL in params.h), with the backward's reduce kernel after it. The
// host runs it for calls of up to 2^27 elements (fp32: 2^25, with rows of whole 16-byte
// vectors) and the register walk of bwd_channel_last.cu, another module, for the others
// (backward_channel_last.cpp says why). Kept apart, each module compiles faster than the
// two did together, and a call compiles only the one it takes (docs/perf.md entry 151).
// x, dout and dx are stored (B, L, D), D contiguous.
//
// A block owns kBtChannels channels and walks units_per_part (batch row, time tile) units
// in order, one tile of kBtRows time steps each:
//  1. stage: the tile's dout rows t0 .. t0+R+K-1 and its x rows (with silu t0-K ..
//     t0+R+K-1, the windows of z; else t0 .. t0+R-1) as 16-byte vectors along D, zeros
//     outside the row; with cp.async (NVIDIA sm_80+) into two buffers, the next unit's
//     copies in flight while this one is walked;
//  2. walk: thread (lane, segment) owns one 4-byte word of a row (2 adjacent channels of
//     16-bit x, 1 of fp32) and kBtSteps steps of the tile. It walks them backward in time
//     as bwd_channel_last.cu's walk does -- g = dout * act'(z) into a window of K + 1 in
//     registers, with silu the window of x̃ too -- starting K steps above its own first
//     (the g its dx needs), one word of dout and of x a step, and stores its dx word
//     straight to global memory (a warp's 32 words are one 128-byte row segment);
//  3. after its last unit the block sums its segments' dw/db and emits one partial row.
// Against the register walk, where a thread owns 4 channels of 16-bit x (2 of fp32) for its
// whole walk (windows, weights and sums in up to 168 registers, 12 warps an SM): a thread
// here holds 2 channels or 1 (at most 80 registers, 24 warps an SM) and a block's tiles
// are short, so a call of a few million elements spreads over many more warps; but each
// segment also walks K steps above its own and the staging adds instructions, so on the
// largest calls, whose warps already issue as fast as they can be fed, it ran 2-7% slower
// on an H200 (docs/perf.md, entry 104). A tile row is 128 bytes, so every buffer and its
// dout rows start on 128-byte boundaries of shared memory, where cp.async copies land
// line for line.
// Tiles that reach past D stage and store element by element; the walk is the same. Rows
// that are not 16-byte aligned (vector_ok == 0: a D or a view's offset off 16-byte
// boundaries) run the module of such rows (CC1D_SHIFTED_ROWS, Variant::shifted_rows), which
// stages every tile's vectors through registers, two aligned loads and a shift each
// (cc1d_load_tile_rows_any), and stores dx element by element: staged element by element,
// 3x1001x777 bf16 SiLU had run at 8% of copy bandwidth (docs/perf.md, entry 160). Kept
// apart, the main module's code is as it was.
// seq_idx: a tile's ids (one a time step, the same for all its channels) are staged beside
// its rows. A warp is one segment, so what its walk needs of the ids it reads (from its
// first own step's x̃ window to its top step, at most 32) is a few ballots a tile: for each
// distance d <= K, which positions match the one d later, and which are padding. A segment
// inside one sequence (no padding) walks the code without seq_idx, whose sums are then the
// same; one whose own steps are all padding stores zeros; the others (at most a few a
// sequence boundary) keep a term where its two positions' bit says they match, as
// bwd_channel_last.cu's walk keeps it where their ids are equal.

constexpr int kBtLanes = 32;                                  // threads across the channels
constexpr int kBtPer = 4 / (int)sizeof(x_t);                  // channels a lane: one 4-byte word of a row
constexpr int kBtChannels = CC1D_BWD_CL_TILE_CHANNELS((int)sizeof(x_t));
static_assert(kBtChannels == kBtPer * kBtLanes, "a lane owns one 4-byte word of a row");
constexpr int kBtRowVecs = kBtChannels / CC1D_VEC;            // 16-byte vectors a tile row
constexpr int kBtSegments = CC1D_BWD_CL_THREADS / kBtLanes;   // threads along time
constexpr int kBtSteps = CC1D_BWD_CL_TILE_STEPS;              // own steps a thread, per tile
constexpr int kBtRows = kBtSegments * kBtSteps;               // time steps a tile
constexpr int kBtXLead = CC1D_SILU ? CC1D_K : 0;              // x rows staged before t0 (and after its end)
constexpr int kBtXRows = kBtRows + 2 * kBtXLead;
constexpr int kBtDRows = kBtRows + CC1D_K;
constexpr int kBtXVecs = kBtXRows * kBtRowVecs;
constexpr int kBtDVecs = kBtDRows * kBtRowVecs;
constexpr int kBtBufferVecs = kBtXVecs + kBtDVecs;
constexpr int kBtXLoads = (kBtXVecs + CC1D_BWD_CL_THREADS - 1) / CC1D_BWD_CL_THREADS;
constexpr int kBtDLoads = (kBtDVecs + CC1D_BWD_CL_THREADS - 1) / CC1D_BWD_CL_THREADS;
#if CC1D_HAS_ASYNC_COPY
constexpr int kBtBuffers = 2;
#else
constexpr int kBtBuffers = 1;
#endif
constexpr int kBtSums = kBtPer * CC1D_BWD_SUMS;   // a thread's sums: [channel][k]
static_assert(kBtBuffers * kBtBufferVecs * 16 >= CC1D_BWD_CL_THREADS * kBtSums * 4, "the sums fit the tiles' space");
// seq_idx: ids of the tile's positions t0 - kBtXLead .. t0 + kBtRows + K - 1 (id row r is
// position t0 - kBtXLead + r, as x rows are), -1 outside the row; a segment's walk reads
// kBtIdSpan of them, from its first own step's x̃ window to its top step.
constexpr int kBtIdRows = kBtXLead + kBtRows + CC1D_K;
constexpr int kBtIdSpan = kBtXLead + kBtSteps + CC1D_K;
static_assert(kBtIdSpan <= kBtLanes, "a lane an id of the segment's span");
static_assert(CC1D_BWD_CL_THREADS % kBtLanes == 0, "whole segments");

struct bt_unit {
    cc1d_i64 b, t0;   // batch row, first time step of the tile
};

// The tile's inputs at element precision: x̃ rows from t0 - kBtXLead, dout rows from t0.
CC1D_DEVICE void bt_stage_elements(const cc1d_bwd_params& p, const bt_unit& u, cc1d_i64 c0, cc1d_vec16* buf) {
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + u.b * p.x_stride_b;
    const x_t* d = reinterpret_cast<const x_t*>(p.dout) + u.b * p.dout_stride_b;
    x_t* sx = reinterpret_cast<x_t*>(buf);
    x_t* sd = reinterpret_cast<x_t*>(buf + kBtXVecs);
    for (int e = threadIdx.x; e < kBtXRows * kBtChannels; e += CC1D_BWD_CL_THREADS) {
        const int row = e / kBtChannels, c = e - row * kBtChannels;
        const cc1d_i64 t = u.t0 - kBtXLead + row;
        sx[e] = t >= 0 && t < p.seqlen && c0 + c < p.dim ? x[t * p.x_stride_l + (c0 + c) * p.x_stride_d]
                                                         : cc1d_of_bits<x_t>(0u);
    }
    for (int e = threadIdx.x; e < kBtDRows * kBtChannels; e += CC1D_BWD_CL_THREADS) {
        const int row = e / kBtChannels, c = e - row * kBtChannels;
        const cc1d_i64 t = u.t0 + row;
        sd[e] = t < p.seqlen && c0 + c < p.dim ? d[t * p.dout_stride_l + (c0 + c) * p.dout_stride_d]
                                               : cc1d_of_bits<x_t>(0u);
    }
}

#if !CC1D_HAS_ASYNC_COPY
// VECS vectors of rows from first_token (zeros outside [0, len)) through registers, every
// load issued before the first shared store.
template <int LOADS, int VECS>
CC1D_DEVICE void bt_copy_rows(cc1d_vec16* tile, const x_t* row0, cc1d_i64 stride_l, cc1d_i64 first_token, cc1d_i64 len) {
    cc1d_vec16 v[LOADS];
#pragma unroll
    for (int m = 0; m < LOADS; ++m) {
        const int i = threadIdx.x + m * CC1D_BWD_CL_THREADS;
        const int row = i / kBtRowVecs, col = i - row * kBtRowVecs;
        const cc1d_i64 t = first_token + row;
        v[m] = i < VECS && t >= 0 && t < len ? cc1d_v16_load_aligned(row0 + t * stride_l + col * CC1D_VEC)
                                             : cc1d_v16_zero();
    }
#pragma unroll
    for (int m = 0; m < LOADS; ++m) {
        const int i = threadIdx.x + m * CC1D_BWD_CL_THREADS;
        if (i < VECS) cc1d_v16_store_aligned(&tile[i], v[m]);
    }
}
#endif

// seq_idx: the tile's ids into `ids` (with cp.async: copies in the tile's commit group).
CC1D_DEVICE void bt_stage_ids(const cc1d_bwd_params& p, const bt_unit& u, int* ids) {
#if CC1D_HAS_SEQ_IDX
    const int* seq = p.seq_idx + u.b * p.seq_stride_b;
    for (int r = threadIdx.x; r < kBtIdRows; r += CC1D_BWD_CL_THREADS) {
        const cc1d_i64 t = u.t0 - kBtXLead + r;
        if (t < 0 || t >= p.seqlen) {
            ids[r] = -1;   // before the row start (no states here) and past its end
        } else {
#if CC1D_HAS_ASYNC_COPY
            cc1d_copy_async_ca<4>(&ids[r], seq + t * p.seq_stride_l);
#else
            ids[r] = seq[t * p.seq_stride_l];
#endif
        }
    }
#else
    (void)p; (void)u; (void)ids;
#endif
}

// Stages unit u's tile into buf and its ids into ids (with cp.async: copies in flight, one
// commit group).
CC1D_DEVICE void bt_stage(const cc1d_bwd_params& p, const bt_unit& u, cc1d_i64 c0, bool vector_tile, cc1d_vec16* buf,
                          int* ids) {
    bt_stage_ids(p, u, ids);
    if (vector_tile) {   // (x_stride_d == 1: vector_ok)
        const x_t* x = reinterpret_cast<const x_t*>(p.x) + u.b * p.x_stride_b + c0;
        const x_t* d = reinterpret_cast<const x_t*>(p.dout) + u.b * p.dout_stride_b + c0;
#if CC1D_HAS_ASYNC_COPY
        // (every dtype in the hoisted form: fp32 too, docs/perf.md entry 152)
        cc1d_copy_tile_rows_async<kBtXLoads, CC1D_BWD_CL_THREADS, kBtRowVecs, kBtXVecs, true>(buf, x, p.x_stride_l,
                                                                                           u.t0 - kBtXLead, p.seqlen);
        cc1d_copy_tile_rows_async<kBtDLoads, CC1D_BWD_CL_THREADS, kBtRowVecs, kBtDVecs, true>(
            buf + kBtXVecs, d, p.dout_stride_l, u.t0, p.seqlen);
#else
        bt_copy_rows<kBtXLoads, kBtXVecs>(buf, x, p.x_stride_l, u.t0 - kBtXLead, p.seqlen);
        bt_copy_rows<kBtDLoads, kBtDVecs>(buf + kBtXVecs, d, p.dout_stride_l, u.t0, p.seqlen);
#endif
    } else if (CC1D_SHIFTED_ROWS) {
        // (The module of rows off 16-byte boundaries: every tile. Three vectors a round: at
        // the 80-register bound five spilled 8-48 bytes at widths 3-4 and ran 0.1-1.9% slower
        // on an H100, docs/perf.md entry 160.)
        const x_t* x = reinterpret_cast<const x_t*>(p.x) + u.b * p.x_stride_b;
        const x_t* d = reinterpret_cast<const x_t*>(p.dout) + u.b * p.dout_stride_b;
        cc1d_load_tile_rows_any<kBtXLoads, CC1D_BWD_CL_THREADS, kBtRowVecs, kBtXVecs, 3>(
            buf, x, p.x_stride_l, p.x_stride_d, c0, u.t0 - kBtXLead, p.seqlen, p.dim, p.vector_ok != 0);
        cc1d_load_tile_rows_any<kBtDLoads, CC1D_BWD_CL_THREADS, kBtRowVecs, kBtDVecs, 3>(
            buf + kBtXVecs, d, p.dout_stride_l, p.dout_stride_d, c0, u.t0, p.seqlen, p.dim, p.vector_ok != 0);
    } else {
        bt_stage_elements(p, u, c0, buf);
    }
#if CC1D_HAS_ASYNC_COPY
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits for this thread's copies of the tile to be walked next (the one after it may stay
// in flight); a barrier after it shows every thread's.
CC1D_DEVICE void bt_wait(bool next_in_flight) {
#if CC1D_HAS_ASYNC_COPY
    if (next_in_flight) asm volatile("cp.async.wait_group 1;" ::: "memory");
    else asm volatile("cp.async.wait_group 0;" ::: "memory");
#else
    (void)next_in_flight;
#endif
}

// A tile word as floats: both 16-bit halves, or one fp32.
CC1D_DEVICE void bt_unpack(unsigned int bits, float (&v)[kBtPer]) {
    if constexpr (kBtPer == 2) {
        v[0] = cc1d_to_float(cc1d_of_bits<x_t>(bits & 0xffffu));
        v[kBtPer - 1] = cc1d_to_float(cc1d_of_bits<x_t>(bits >> 16));
    } else {
        v[0] = __int_as_float((int)bits);
    }
}
// kBtPer outputs -> one word (16-bit pairs in one instruction on NVIDIA).
CC1D_DEVICE unsigned int bt_pack(const float (&v)[kBtPer]) {
    if constexpr (kBtPer == 2) return cc1d_pack_pair(v[0], v[kBtPer - 1]);
    else return (unsigned int)__float_as_int(v[0]);
}

// Per-thread weights and sums of its channels.
typedef cc1d_bwd_thread_state<kBtPer> bt_state;

// Where a thread's dx goes: `at` is dx of the thread's first channel at its segment's
// last own step (walked first); rows of the segment before L; vec: one 4-byte store.
struct bt_out {
    x_t* at;
    cc1d_i64 stride_l, stride_d;
    int rows;   // own steps s - a < rows lie before L (may be <= 0)
    int n;      // channels that exist (kBtPer except at the tail of D)
    bool vec;
};

// seq_idx: what a segment's walk needs of its span's ids (span row r: tile id row a + r),
// as masks a warp shares, one ballot each a tile: same[d] bit r: id(r) == id(r + d), both
// in the span (d = 1 .. K); pad bit r: id(r) < 0. Every term of the walk compares two ids
// at most K apart, at rows fixed by its step, so each compare is a test of a fixed bit
// (no ids in registers or shared-memory reads in the walk).
struct bt_span_ids {
    unsigned int same[CC1D_K + 1];   // (same[0] unused: a position matches itself)
    unsigned int pad;
};

// Bits 0 .. n - 1.
CC1D_DEVICE constexpr unsigned int bt_low_bits(int n) { return n >= 32 ? 0xffffffffu : (1u << n) - 1u; }

CC1D_DEVICE bt_span_ids bt_vote_span_ids(const int* ids, int lane, int a) {
    bt_span_ids m;
    const bool in = lane < kBtIdSpan;
    const int id = in ? ids[a + lane] : -1;
    m.pad = cc1d_ballot_group32(in && id < 0);
    m.same[0] = 0xffffffffu;
#pragma unroll
    for (int d = 1; d <= CC1D_K; ++d) m.same[d] = cc1d_ballot_group32(lane + d < kBtIdSpan && id == ids[a + lane + d]);
    return m;
}

// Every id of the span is that of one sequence (>= 0): then no term of the segment's walk
// crosses a boundary or meets padding, and it may walk the code without seq_idx.
CC1D_DEVICE bool bt_one_sequence(const bt_span_ids& m) {
    return m.pad == 0u && (m.same[1] & bt_low_bits(kBtIdSpan - 1)) == bt_low_bits(kBtIdSpan - 1);
}

// Every own step of the segment is padding: its dx rows are 0 and it adds nothing to the
// sums (a padding position's g is 0, and its terms meet only padding).
CC1D_DEVICE bool bt_all_padding(const bt_span_ids& m) {
    constexpr unsigned int own = bt_low_bits(kBtSteps) << kBtXLead;
    return (m.pad & own) == own;
}

// The thread's walk of one tile: own steps a .. a + kBtSteps - 1 (tile-relative), from
// a + kBtSteps + K - 1 down (see the header comment). kWhole: every own step lies before
// L and out.vec (most tiles): its stores go without a test. kIds (seq_idx): a term is kept
// only where its two positions' ids match, and a padding position's g is 0, read from the
// span's masks (step s is span row s - a + kBtXLead, a fixed number at each unrolled step).
template <bool kWhole, bool kIds>
CC1D_DEVICE void bt_walk(const cc1d_vec16* buf, const bt_span_ids& m, int lane, int a, bt_out out, bt_state& st) {
    constexpr int kWords = kBtLanes;   // 4-byte words a row
    const unsigned int* xs = reinterpret_cast<const unsigned int*>(buf) + lane;   // x̃ of step s: row s + kBtXLead
    const unsigned int* ds = reinterpret_cast<const unsigned int*>(buf + kBtXVecs) + lane;   // dout of step s: row s
    constexpr int kWalk = kBtSteps + CC1D_K;
    const int top = a + kWalk - 1;
    float G[CC1D_K + 1][kBtPer];   // G[i] = g[s + i]
#pragma unroll
    for (int i = 0; i <= CC1D_K; ++i)
#pragma unroll
        for (int c = 0; c < kBtPer; ++c) G[i][c] = 0.0f;
    // Whether span rows r and r + d hold the same id; whether row r is padding.
    auto same = [&](int d, int r) { return d == 0 || ((m.same[d] >> r) & 1u) != 0u; };
    auto padding = [&](int r) { return ((m.pad >> r) & 1u) != 0u; };
    (void)m; (void)same; (void)padding;
#if CC1D_SILU
    float XW[CC1D_K + 1][kBtPer];   // XW[i] = x̃[s - i]
#pragma unroll
    for (int i = 0; i <= CC1D_K; ++i) bt_unpack(xs[(top - i + kBtXLead) * kWords], XW[i]);
#endif
#pragma unroll
    for (int i = 0; i < kWalk; ++i) {
        const int s = top - i;
        const int r = kWalk - 1 - i + kBtXLead;   // s's span row
        float gs[kBtPer];
        bt_unpack(ds[s * kWords], gs);
#if CC1D_SILU
#pragma unroll
        for (int c = 0; c < kBtPer; ++c) {
            float z = st.bias[c];
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k)
                if (!kIds || same(CC1D_K - k, r - (CC1D_K - k))) z = fmaf(st.w[c][k], XW[CC1D_K - k][c], z);
            gs[c] = cc1d_bwd_held_grad(gs[c], z);
        }
#endif
        if (kIds && padding(r)) {   // padding: the output was forced to 0
#pragma unroll
            for (int c = 0; c < kBtPer; ++c) gs[c] = 0.0f;
        }
#pragma unroll
        for (int k = CC1D_K; k > 0; --k)
#pragma unroll
            for (int c = 0; c < kBtPer; ++c) G[k][c] = G[k - 1][c];
#pragma unroll
        for (int c = 0; c < kBtPer; ++c) G[0][c] = gs[c];
        if (i >= CC1D_K) {   // an own step: dx[s], and x̃[s] times the g's it met
#if CC1D_SILU
            float xv[kBtPer];
#pragma unroll
            for (int c = 0; c < kBtPer; ++c) xv[c] = XW[0][c];
#else
            float xv[kBtPer];
            bt_unpack(xs[s * kWords], xv);
#endif
            float acc[kBtPer];
#pragma unroll
            for (int c = 0; c < kBtPer; ++c) acc[c] = 0.0f;
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k) {
                if (!kIds || same(CC1D_K - k, r)) {   // id(s + K - k) against id(s)
#pragma unroll
                    for (int c = 0; c < kBtPer; ++c) acc[c] = fmaf(st.w[c][k], G[CC1D_K - k][c], acc[c]);
#pragma unroll
                    for (int c = 0; c < kBtPer; ++c) st.dw[c][k] = fmaf(xv[c], G[CC1D_K - k][c], st.dw[c][k]);
                }
            }
#pragma unroll
            for (int c = 0; c < kBtPer; ++c) st.db[c] += gs[c];
            if (kWhole || kWalk - 1 - i < out.rows) {
                if (CC1D_SHIFTED_ROWS && kWhole) {   // (both channels exist; rows of unit stride along D)
#pragma unroll
                    for (int c = 0; c < kBtPer; ++c) out.at[c] = cc1d_to_x(acc[c]);
                } else if (kWhole || out.vec) {
                    *reinterpret_cast<unsigned int*>(out.at) = bt_pack(acc);
                } else {
#pragma unroll
                    for (int c = 0; c < kBtPer; ++c)
                        if (c < out.n) out.at[c * out.stride_d] = cc1d_to_x(acc[c]);
                }
            }
            out.at -= out.stride_l;
        }
#if CC1D_SILU
        if (i + 1 < kWalk) {   // on to s - 1: x̃[s - 1 - K] (and its id) enter the window
#pragma unroll
            for (int k = 0; k < CC1D_K; ++k)
#pragma unroll
                for (int c = 0; c < kBtPer; ++c) XW[k][c] = XW[k + 1][c];
            bt_unpack(xs[(s - 1 - CC1D_K + kBtXLead) * kWords], XW[CC1D_K]);
        }
#endif
    }
}

// dx 0 at the segment's own steps (those before L), from its last own step down as the walk
// stores them (a 16-bit pair of +0 and an fp32 +0 are both the word 0).
CC1D_DEVICE void bt_zero_rows(bt_out out) {
#pragma unroll
    for (int j = 0; j < kBtSteps; ++j) {
        if (kBtSteps - 1 - j < out.rows) {
            if (out.vec) {
                *reinterpret_cast<unsigned int*>(out.at) = 0u;
            } else {
#pragma unroll
                for (int c = 0; c < kBtPer; ++c)
                    if (c < out.n) out.at[c * out.stride_d] = cc1d_of_bits<x_t>(0u);
            }
        }
        out.at -= out.stride_l;
    }
}

// 6 blocks an SM (24 warps) at most 80 registers each (the walk needs 64-80 without
// spills), and 6 blocks' two buffers fit the shared memory.
extern "C" __global__ void __launch_bounds__(CC1D_BWD_CL_THREADS, CC1D_BWD_CL_TILE_BLOCKS_PER_SM)
    CC1D_ENTRY(cc1d_bwd_params p) {
    // At a 128-byte boundary whatever other static shared memory the kernel gains (the
    // buffers' layout counts 128-byte rows from here; docs/perf.md entry 140).
    __shared__ __attribute__((aligned(128))) cc1d_vec16 bt_smem[kBtBuffers * kBtBufferVecs];
#if CC1D_HAS_SEQ_IDX
    __shared__ int bt_ids[kBtBuffers * kBtIdRows];
#else
    int* const bt_ids = nullptr;   // (no ids staged or read)
#endif
    // The reduce kernel may be scheduled now; it waits for this one to finish.
    cc1d_allow_dependent_launch();

    const unsigned int channel_blocks = (unsigned int)((p.dim + kBtChannels - 1) / kBtChannels);
    const unsigned int block = cc1d_flat_block();
    if (block >= (cc1d_i64)p.groups * channel_blocks) return;
    const unsigned int part = block / channel_blocks;
    const cc1d_i64 c0 = (cc1d_i64)(block - part * channel_blocks) * kBtChannels;
    const int lane = threadIdx.x % kBtLanes, seg = threadIdx.x / kBtLanes;
    const cc1d_i64 c = c0 + kBtPer * lane;   // the thread's first channel
    const cc1d_i64 left = p.dim - c;
    const int n = left <= 0 ? 0 : (left < kBtPer ? (int)left : kBtPer);
    // (The module of rows off 16-byte boundaries has no vector tiles: the host sends it no
    // call whose rows are aligned.)
    const bool vector_tile = !CC1D_SHIFTED_ROWS && p.vector_ok != 0 && c0 + kBtChannels <= p.dim;
    // Whether the thread's dx stores go without a test where its rows lie before L: one
    // 4-byte store a step in vector tiles; in the module of rows off 16-byte boundaries,
    // where the thread's channels all exist, one store a channel (a row's word there may
    // straddle a 4-byte boundary).
    const bool whole_rows = vector_tile || (CC1D_SHIFTED_ROWS && n == kBtPer);

    const auto raw_weights = cc1d_fetch_channel_weights<kBtPer>(p, c);
    const cc1d_i64 units = p.batch * p.tiles;
    const cc1d_i64 first = (cc1d_i64)part * p.units_per_part;
    const cc1d_i64 last = first + p.units_per_part < units ? first + p.units_per_part : units;
    auto unit_of = [&](cc1d_i64 u) {
        bt_unit t;
        t.b = u / p.tiles;
        t.t0 = (u - t.b * p.tiles) * kBtRows;
        return t;
    };
    int buffer = 0;
    if (kBtBuffers == 2 && first < last) bt_stage(p, unit_of(first), c0, vector_tile, bt_smem, bt_ids);

    bt_state st;
    cc1d_widen_channel_weights(raw_weights, st.w, st.bias);
#pragma unroll
    for (int j = 0; j < kBtPer; ++j) {
        st.bias[j] = cc1d_hold_taps(st.w[j], st.bias[j]);
#pragma unroll
        for (int k = 0; k < CC1D_WIDTH; ++k) st.dw[j][k] = 0.0f;
        st.db[j] = 0.0f;
    }

    const int a = seg * kBtSteps;   // the segment's first own step in a tile
    for (cc1d_i64 u = first; u < last; ++u) {
        const bt_unit unit = unit_of(u);
        const bool more = kBtBuffers == 2 && u + 1 < last;
        if (kBtBuffers == 1) bt_stage(p, unit, c0, vector_tile, bt_smem, bt_ids);
        if (more)
            bt_stage(p, unit_of(u + 1), c0, vector_tile, bt_smem + (buffer ^ 1) * kBtBufferVecs,
                     bt_ids + (buffer ^ 1) * kBtIdRows);
        bt_wait(more);
        __syncthreads();

        bt_out out;
        const cc1d_i64 last_own = unit.t0 + a + kBtSteps - 1;
        out.at = reinterpret_cast<x_t*>(p.dx) + unit.b * p.dx_stride_b + last_own * p.dx_stride_l + c * p.dx_stride_d;
        out.stride_l = p.dx_stride_l;
        out.stride_d = p.dx_stride_d;
        const cc1d_i64 rows = p.seqlen - (unit.t0 + a);
        out.rows = rows <= 0 ? 0 : (rows < kBtSteps ? (int)rows : kBtSteps);
        out.n = n;
        out.vec = vector_tile;
        const cc1d_vec16* tile = bt_smem + buffer * kBtBufferVecs;
#if CC1D_HAS_SEQ_IDX
        // (a segment inside one sequence walks as without seq_idx; one all padding stores 0s)
        const bt_span_ids m = bt_vote_span_ids(bt_ids + buffer * kBtIdRows, lane, a);
        if (bt_all_padding(m)) bt_zero_rows(out);
        else if (whole_rows && out.rows == kBtSteps && bt_one_sequence(m)) bt_walk<true, false>(tile, m, lane, a, out, st);
        else bt_walk<false, true>(tile, m, lane, a, out, st);
#else
        const bt_span_ids m{};   // (unread)
        if (whole_rows && out.rows == kBtSteps) bt_walk<true, false>(tile, m, lane, a, out, st);
        else bt_walk<false, false>(tile, m, lane, a, out, st);
#endif
        __syncthreads();   // before this buffer is staged again
        if (kBtBuffers == 2) buffer ^= 1;
    }
#pragma unroll
    for (int j = 0; j < kBtPer; ++j) cc1d_bwd_release_sums(st.dw[j], st.db[j]);
    // The segments' sums of each channel summed in segment order (`red` aliases the tiles).
    cc1d_bwd_block_sums(p, reinterpret_cast<float*>(bt_smem), part, c, n, st, kBtSegments, kBtLanes, seg, lane);
}

extern "C" __global__ void __launch_bounds__(CC1D_REDUCE_THREADS) CC1D_ENTRY_REDUCE(cc1d_bwd_params p) {
    cc1d_bwd_reduce(p);
}
