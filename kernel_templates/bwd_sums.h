// ---- Backward: where the dweight/dbias sums go ----------------------------------------
// (used by the backward families; no other shared header depends on it)
// A backward block ends with CC1D_BWD_SUMS fp32 sums per channel it covers: dw[0..W-1]
// and db. cc1d_bwd_emit hands one of them to the target cc1d_bwd_params.dw_mode names;
// cc1d_bwd_reduce is the body of the reduce kernel that zeroes an atomic target first or
// sums the partial rows afterwards, always in the same order (bit-identical results).
#define CC1D_BWD_SUMS (CC1D_WIDTH + 1)

// Element (d, k) of dweight, or of dbias for k == CC1D_WIDTH; null when dbias is absent.
CC1D_DEVICE void* cc1d_bwd_dw_element(const cc1d_bwd_params& p, cc1d_i64 d, int k) {
    const cc1d_i64 off = k < CC1D_WIDTH ? d * p.dw_stride_d + k * p.dw_stride_k : d * p.db_stride;
    char* base = (char*)(k < CC1D_WIDTH ? p.dweight : p.dbias);
    if (base == 0) return 0;
    return base + off * (p.dw_is_fp32 ? (cc1d_i64)sizeof(float) : (cc1d_i64)sizeof(w_t));
}

// Stores v (plus the old value when `add`) into dweight/dbias in their dtype.
CC1D_DEVICE void cc1d_bwd_write_dw(const cc1d_bwd_params& p, cc1d_i64 d, int k, float v, bool add) {
    void* q = cc1d_bwd_dw_element(p, d, k);
    if (q == 0) return;
    if (p.dw_is_fp32) {
        float* f = (float*)q;
        *f = add ? *f + v : v;
    } else {
        w_t* w = (w_t*)q;
        *w = cc1d_from_float<w_t>(add ? cc1d_to_float(*w) + v : v);
    }
}

// Whether the block emitting a sum holds the channel's whole sum (the only block for its
// channels, or a cluster's rank 0 after adding its ranks').
CC1D_DEVICE bool cc1d_bwd_writes_direct(const cc1d_bwd_params& p) {
    return p.dw_mode == CC1D_DW_DIRECT || p.dw_mode == CC1D_DW_CLUSTER;
}

// One sum of channel d from the block that owns partial row `part`.
CC1D_DEVICE void cc1d_bwd_emit(const cc1d_bwd_params& p, cc1d_i64 part, cc1d_i64 d, int k, float v) {
#if !CC1D_HAS_BIAS
    if (k == CC1D_WIDTH) return;   // no bias: db has no home
#endif
#if CC1D_DETERMINISTIC
    if (cc1d_bwd_writes_direct(p)) cc1d_bwd_write_dw(p, d, k, v, p.accumulate != 0);
    else p.partials[part * p.partials_row + d * CC1D_BWD_SUMS + k] = v;
#else
    // Atomic path: the order of additions varies from run to run (hence not deterministic).
    (void)part;
    if (cc1d_bwd_writes_direct(p)) {
        cc1d_bwd_write_dw(p, d, k, v, p.accumulate != 0);
    } else if (p.dw_mode == CC1D_DW_ATOMIC_DIRECT) {
        void* q = cc1d_bwd_dw_element(p, d, k);
        if (q != 0) atomicAdd((float*)q, v);
    } else {
        atomicAdd(p.partials + d * CC1D_BWD_SUMS + k, v);
    }
#endif
}

#if CC1D_HAS_CLUSTERS
// CC1D_DW_CLUSTER: the blocks of a cluster (its ranks, in part order: the launcher's grid
// is (channels, parts) in clusters of (1, parts)) are the parts of the same channel. Each
// block's thread of sum k (k < 0: a thread without one) parks it in its block's shared
// memory; after a cluster barrier rank 0 adds the ranks' sums k in rank order, the order
// in which the reduce kernel adds the partial rows (the same bits either way), and emits
// them; a second barrier keeps every block, and its shared memory, until rank 0 has read
// it. Every thread of every block of the grid calls it.
CC1D_DEVICE void cc1d_bwd_cluster_emit(const cc1d_bwd_params& p, cc1d_i64 d, int k, float sum) {
    __shared__ float parked[CC1D_BWD_SUMS];
    if (k >= 0) parked[k] = sum;
    cc1d_cluster_sync();
    if (cc1d_cluster_rank() == 0 && k >= 0) {
        float v[CC1D_BWD_MAX_CLUSTER_PARTS];
#pragma unroll
        for (int r = 0; r < CC1D_BWD_MAX_CLUSTER_PARTS; ++r)   // (all reads in flight at once)
            v[r] = r < p.groups ? cc1d_cluster_read(&parked[k], (unsigned int)r) : 0.0f;
        float total = 0.0f;
#pragma unroll
        for (int r = 0; r < CC1D_BWD_MAX_CLUSTER_PARTS; ++r)
            if (r < p.groups) total += v[r];   // ranks in order
        cc1d_wait_prior_grid();   // (an overlapped launch: the kernel before it is done)
        cc1d_bwd_emit(p, 0, d, k, total);
    }
    cc1d_cluster_sync();
}
#endif

// A backward thread's weights and bias (fp32, as held: cc1d_hold_taps) and its dweight /
// dbias sums, for the N channels it owns.
template <int N> struct cc1d_bwd_thread_state {
    float w[N][CC1D_WIDTH];
    float bias[N];
    float dw[N][CC1D_WIDTH];
    float db[N];
};

// A block's dweight/dbias sums out via cc1d_bwd_emit: each of its rows x cols threads
// (thread (row, col) owning channels c0 .. c0 + n - 1, n <= N) parks its sums in `red`
// (which may alias the block's tiles: hence the barrier first), then thread (row, col)
// adds sums j = row, row + rows, ... of its column over the rows in row order (the same
// bits every run) and emits them.
template <int N>
CC1D_DEVICE void cc1d_bwd_block_sums(const cc1d_bwd_params& p, float* red, cc1d_i64 part, cc1d_i64 c0, int n,
                                     const cc1d_bwd_thread_state<N>& st, int rows, int cols, int row, int col) {
    constexpr int kSums = N * CC1D_BWD_SUMS;   // per thread: [channel][k]
    __syncthreads();
#pragma unroll
    for (int c = 0; c < N; ++c)
#pragma unroll
        for (int k = 0; k < CC1D_BWD_SUMS; ++k)
            red[(row * kSums + c * CC1D_BWD_SUMS + k) * cols + col] = k < CC1D_WIDTH ? st.dw[c][k] : st.db[c];
    __syncthreads();
    cc1d_wait_prior_grid();   // the zeroing kernel before an atomic target (overlapped launch)
    for (int j = row; j < kSums; j += rows) {
        const int c = j / CC1D_BWD_SUMS, k = j - c * CC1D_BWD_SUMS;
        if (c >= n) continue;
        float sum = 0.0f;
        for (int y = 0; y < rows; ++y) sum += red[(y * kSums + j) * cols + col];
        cc1d_bwd_emit(p, part, c0 + c, k, sum);
    }
}

// The seq id of row position pos (< seqlen): before the row start seq_idx[b, 0] when
// initial_states feed the first sequence, else -1.
CC1D_DEVICE int cc1d_bwd_seq_id(const cc1d_bwd_params& p, const int* seq_row, cc1d_i64 pos) {
    if (pos >= 0) return seq_row[pos * p.seq_stride_l];
    return CC1D_HAS_INITIAL_STATES && p.seqlen > 0 ? seq_row[0] : -1;
}

// The masks kernel (reduce entry, CC1D_REDUCE_SEQ_MASKS): one mask a thread,
// seq_masks[b][t] for t < seq_mask_stride, 0 from the row end on. Every channel's blocks
// then read a row's masks (1-2 bytes a position) instead of its ids and their compares.
CC1D_DEVICE void cc1d_bwd_seq_masks(const cc1d_bwd_params& p) {
    const cc1d_i64 i = ((cc1d_i64)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= p.batch * p.seq_mask_stride) return;
    const cc1d_i64 b = i / p.seq_mask_stride, t = i - b * p.seq_mask_stride;
    unsigned int m = 0u;
    if (t < p.seqlen) {
        const int* seq_row = p.seq_idx + b * p.seq_stride_b;
        const int id = seq_row[t * p.seq_stride_l];
        m = id >= 0 ? 1u : 0u;
#pragma unroll
        for (int back = 1; back <= CC1D_K; ++back)
            if (cc1d_bwd_seq_id(p, seq_row, t - back) == id) m |= 1u << back;
    }
    reinterpret_cast<cc1d_seq_mask*>(p.seq_masks)[i] = (cc1d_seq_mask)m;
}

// The reduce kernel, for CC1D_REDUCE_THREADS / reduce_slices consecutive (d, k) of the
// [dim][CC1D_BWD_SUMS] sums per block. Zeroing (one slice): a thread clears one. Summing:
// the rows 0 .. parts-1 split into reduce_slices runs of consecutive rows; a thread sums
// its column's run in row order with CC1D_REDUCE_BATCH loads in flight, then the first
// slice adds the runs' sums in run order. The order depends only on `parts` (the
// launcher picks the slices from it), so every run gives the same bits; with one slice it
// is plain row order. A single thread walking 64 rows cost 10 us on an H100 (a load
// latency per few rows); split into runs of at most 8 rows (up to 128 rows), one latency.
CC1D_DEVICE void cc1d_bwd_reduce(const cc1d_bwd_params& p) {
    // Dynamic: the launcher gives CC1D_REDUCE_THREADS floats only when reduce_slices > 1,
    // so the one-slice launches (zeroing, a few rows) keep the kernel without shared memory.
    extern __shared__ float cc1d_reduce_runs[];
    const cc1d_i64 n = p.dim * CC1D_BWD_SUMS;
    // Shifts and masks from the launcher's powers of two: each division by a runtime value
    // was a dependent chain of ~15-20 instructions through a MUFU.RCP before the first load
    // (docs/perf.md entry 37).
    const int columns = 1 << p.reduce_column_shift;
    const int column = (int)threadIdx.x & (columns - 1), slice = (int)threadIdx.x >> p.reduce_column_shift;
    const cc1d_i64 i = (cc1d_i64)blockIdx.x * columns + column;
    const cc1d_i64 d = i / CC1D_BWD_SUMS;
    const int k = (int)(i - d * CC1D_BWD_SUMS);
    // The summing launch may start while the main kernel still runs (an overlapped launch,
    // see the prelude): nothing is read or written before that kernel is done. The zeroing
    // launch comes first in its call (the wait returns at once) and lets the main kernel
    // start early.
    cc1d_allow_dependent_launch();
    cc1d_wait_prior_grid();
#if CC1D_HAS_SEQ_IDX && !CC1D_CHANNEL_LAST
    if (p.reduce_mode == CC1D_REDUCE_SEQ_MASKS) {
        cc1d_bwd_seq_masks(p);
        return;
    }
#endif
    if (p.reduce_mode == CC1D_REDUCE_ZERO) {
        if (i >= n) return;
#if !CC1D_HAS_BIAS
        if (k == CC1D_WIDTH) return;
#endif
        if (p.dw_mode == CC1D_DW_ATOMIC_DIRECT) cc1d_bwd_write_dw(p, d, k, 0.0f, false);
        else p.partials[i] = 0.0f;
        return;
    }
    const cc1d_i64 first = slice * p.reduce_run_rows;
    const cc1d_i64 last = first + p.reduce_run_rows < p.parts ? first + p.reduce_run_rows : p.parts;
    float sum = 0.0f;
    if (i < n) {
        for (cc1d_i64 r0 = first; r0 < last; r0 += CC1D_REDUCE_BATCH) {
            float v[CC1D_REDUCE_BATCH];
#pragma unroll
            for (int b = 0; b < CC1D_REDUCE_BATCH; ++b) v[b] = r0 + b < last ? p.partials[(r0 + b) * p.partials_row + i] : 0.0f;
#pragma unroll
            for (int b = 0; b < CC1D_REDUCE_BATCH; ++b)
                if (r0 + b < last) sum += v[b];   // rows in order
        }
    }
    if (p.reduce_slices > 1) {   // (the same in every thread)
        cc1d_reduce_runs[threadIdx.x] = sum;
        __syncthreads();
        if (slice != 0) return;
        for (int r = 1; r < p.reduce_slices; ++r) sum += cc1d_reduce_runs[r * columns + column];   // runs in order
    }
    if (i >= n) return;
#if !CC1D_HAS_BIAS
    if (k == CC1D_WIDTH) return;
#endif
    cc1d_bwd_write_dw(p, d, k, sum, p.accumulate != 0);
}
