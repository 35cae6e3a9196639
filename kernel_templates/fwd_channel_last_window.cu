// Causal conv1d forward, channel-last layout (x and out stored (B, L, D), D contiguous),
// for 16-bit x with seq_idx up to width 8 and without it at widths 5-8
// (CC1D_FWD_CL_USES_WINDOW; the others: fwd_channel_last.cu).
//
// A thread owns kWinCh adjacent channels, one 4- or 8-byte vector of a time row,
// and walks a chunk of time steps with a sliding window of the last K inputs in fp32
// registers: every element of x is read once (plus K halo rows per chunk, which the
// neighbouring chunk reads too, so mostly from L2), and nothing goes through shared
// memory or waits at a barrier. 32 consecutive threads (a row group) own 32 consecutive
// vectors, so every load and store of a group is one contiguous span of a time row (256
// bytes at width <= 4).
// Rows come kWinBatch at a time (CC1D_FWD_CL_WINDOW_BATCH_BYTES per thread), all loads of
// a batch issued together and before the previous batch is computed (two batches in
// flight per thread: one batch alone left the H100 at 60% of DRAM bandwidth, 30% of warps
// resident); a batch is computed fully unrolled, so the window stays in registers under
// compile-time indices.
//
// A thread whose vector is not vector safe (vector_ok == 0: misaligned or strided
// rows) or reaches past D loads and stores element by element; the window does not care.
// seq_idx: a step compares the ids of its window's positions, except where the ids are
// known to be one sequence: at widths 5-8 a batch (a warp vote on ids taken by shuffles).
// Up to width 4, chunks of at most two batches go to the module's second kernel
// (CC1D_ENTRY_SHORT), which walks them without ids and then recomputes the few steps whose
// window crosses a sequence boundary; longer chunks compare ids at every step.
// Grid: row-group tasks (channel groups fastest, then time chunks, then batch rows),
// CC1D_FWD_CL_WINDOW_THREADS / 32 tasks per block.

constexpr int kWinCh = CC1D_FWD_CL_WINDOW_CHANNELS(CC1D_WIDTH);
constexpr int kWinWords = kWinCh * (int)sizeof(x_t) / 4;                              // 1 or 2
constexpr int kWinBatch = CC1D_FWD_CL_WINDOW_BATCH_BYTES / (kWinWords * 4);          // rows per batch
constexpr int kWinGroup = CC1D_FWD_CL_WINDOW_GROUP;                                   // threads per task
constexpr int kWinTasksPerBlock = CC1D_FWD_CL_WINDOW_THREADS / kWinGroup;
static_assert(CC1D_FWD_CL_USES_WINDOW(CC1D_WIDTH, (int)sizeof(x_t), CC1D_HAS_SEQ_IDX), "this variant takes fwd_channel_last.cu");
static_assert(kWinBatch <= kWinGroup, "a batch's ids come one a lane");

// kWinCh raw elements of one time row.
struct WinVec {
    unsigned int w[kWinWords];
};

CC1D_DEVICE WinVec win_zero() {
    WinVec v;
#pragma unroll
    for (int i = 0; i < kWinWords; ++i) v.w[i] = 0u;
    return v;
}
// Element e of a vector, as stored (two per 32-bit word).
CC1D_DEVICE x_t win_raw(const WinVec& v, int e) { return cc1d_of_bits<x_t>((v.w[e >> 1] >> ((e & 1) * 16)) & 0xffffu); }
CC1D_DEVICE void win_set(WinVec& v, int e, x_t value) {
    const int shift = (e & 1) * 16;
    v.w[e >> 1] = (v.w[e >> 1] & ~(0xffffu << shift)) | (cc1d_bits_of(value) << shift);
}

// One access of kWinWords words at an address aligned to that size. On NVIDIA the load is
// a volatile asm statement, which the compilers keep in program order with the (volatile)
// stores: as plain loads, the next batch's were sunk past the current batch's compute,
// which undid the double buffering of the walk below.
CC1D_DEVICE WinVec win_load_vector(const x_t* address) {
    WinVec v;
#if defined(CC1D_BACKEND_CUDA)
    if constexpr (kWinWords == 2) {
        asm volatile("ld.global.v2.u32 {%0, %1}, [%2];" : "=r"(v.w[0]), "=r"(v.w[1]) : "l"(address));
    } else {
        asm volatile("ld.global.u32 %0, [%1];" : "=r"(v.w[0]) : "l"(address));
    }
#else
    if constexpr (kWinWords == 2) {
        const uint2 u = *reinterpret_cast<const uint2*>(address);
        v.w[0] = u.x; v.w[1] = u.y;
    } else {
        v.w[0] = *reinterpret_cast<const unsigned int*>(address);
    }
#endif
    return v;
}
// As cc1d_v16_store_global says: NVVM splits wide stores through 2-byte element pointers
// unless PTX names the width.
CC1D_DEVICE void win_store_vector(x_t* address, const WinVec& v) {
#if defined(CC1D_BACKEND_CUDA)
    if constexpr (kWinWords == 2) {
        asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(address), "r"(v.w[0]), "r"(v.w[1]) : "memory");
    } else {
        asm volatile("st.global.u32 [%0], %1;" ::"l"(address), "r"(v.w[0]) : "memory");
    }
#else
    if constexpr (kWinWords == 2) {
        uint2 u;
        u.x = v.w[0]; u.y = v.w[1];
        *reinterpret_cast<uint2*>(address) = u;
    } else {
        *reinterpret_cast<unsigned int*>(address) = v.w[0];
    }
#endif
}

// kWinCh outputs -> one raw vector (16-bit pairs in one instruction on NVIDIA sm_80+).
CC1D_DEVICE WinVec win_pack(const float (&y)[kWinCh]) {
    WinVec v;
#pragma unroll
    for (int i = 0; i < kWinWords; ++i) v.w[i] = cc1d_pack_pair(y[2 * i], y[2 * i + 1]);
    return v;
}

// Where a thread works: batch row, first channel, its time chunk [t_begin, t_end).
struct WinTask {
    cc1d_i64 b, c0, t_begin, t_end;
    bool vector;   // whole-vector accesses for this thread's channels
};

// Row t of the thread's channels for 0 <= t < L.
CC1D_DEVICE WinVec win_load_row(const cc1d_fwd_params& p, const WinTask& task, cc1d_i64 t) {
    const x_t* row = reinterpret_cast<const x_t*>(p.x) + task.b * p.x_stride_b + t * p.x_stride_l + task.c0;
    if (task.vector) return win_load_vector(row);
    WinVec v = win_zero();
#pragma unroll
    for (int e = 0; e < kWinCh; ++e)
        if (task.c0 + e < p.dim) win_set(v, e, row[e]);
    return v;
}

// Row t of x̃ for any t >= -K: zeros past L and, without initial_states, before the start.
CC1D_DEVICE WinVec win_load_padded_row(const cc1d_fwd_params& p, const WinTask& task, cc1d_i64 t) {
    if (t >= p.seqlen) return win_zero();
    if (t >= 0) return win_load_row(p, task, t);
    WinVec v = win_zero();
#if CC1D_HAS_INITIAL_STATES
    const x_t* init = reinterpret_cast<const x_t*>(p.initial_states) + task.b * p.init_stride_b +
                      (t + CC1D_K) * p.init_stride_k;
#pragma unroll
    for (int e = 0; e < kWinCh; ++e)
        if (task.c0 + e < p.dim) win_set(v, e, init[(task.c0 + e) * p.init_stride_d]);
#endif
    return v;
}

CC1D_DEVICE void win_store_row(const cc1d_fwd_params& p, const WinTask& task, cc1d_i64 t, const WinVec& v) {
    x_t* row = reinterpret_cast<x_t*>(p.out) + task.b * p.out_stride_b + t * p.out_stride_l + task.c0;
    if (task.vector) {
        win_store_vector(row, v);
        return;
    }
#pragma unroll
    for (int e = 0; e < kWinCh; ++e)
        if (task.c0 + e < p.dim) row[e] = win_raw(v, e);
}

#if CC1D_HAS_SEQ_IDX
// Sequence id of step t >= -K: before the row start the first sequence's id when
// initial_states feed it, else -1 (and -1 for an empty row, whose seq_idx may be null).
CC1D_DEVICE int win_seq_id(const cc1d_fwd_params& p, cc1d_i64 b, cc1d_i64 t) {
    const int* row = p.seq_idx + b * p.seq_stride_b;
    if (t >= 0) {
#if defined(CC1D_BACKEND_CUDA)
        int id;   // volatile for the reason win_load_vector gives
        asm volatile("ld.global.s32 %0, [%1];" : "=r"(id) : "l"(row + t * p.seq_stride_l));
        return id;
#else
        return row[t * p.seq_stride_l];
#endif
    }
    return CC1D_HAS_INITIAL_STATES && p.seqlen > 0 ? row[0] : -1;
}
#endif

#if CC1D_HAS_FINAL_STATES
// final[b, c, j] = x̃[L - K + j], raw bits (a copy, so exact).
CC1D_DEVICE void win_write_final_states(const cc1d_fwd_params& p, const WinTask& task) {
    x_t* fin = reinterpret_cast<x_t*>(p.final_states) + task.b * p.final_stride_b;
#pragma unroll
    for (int j = 0; j < CC1D_K; ++j) {
        const WinVec v = win_load_padded_row(p, task, p.seqlen - CC1D_K + j);
#pragma unroll
        for (int e = 0; e < kWinCh; ++e)
            if (task.c0 + e < p.dim) fin[(task.c0 + e) * p.final_stride_d + j * p.final_stride_k] = win_raw(v, e);
    }
}
#endif

// Rows t .. t + kWinBatch - 1 of the chunk (zeros from t_end on: nothing is loaded there).
CC1D_DEVICE void win_load_batch(const cc1d_fwd_params& p, const WinTask& task, cc1d_i64 t, WinVec (&batch)[kWinBatch]) {
#pragma unroll
    for (int s = 0; s < kWinBatch; ++s) batch[s] = t + s < task.t_end ? win_load_row(p, task, t + s) : win_zero();
}
// The seq ids of a batch's steps (-1 from t_end on). Widths 5-8 (16-row batches): lane l
// of a task holds the id of step l % kWinBatch and a step takes its id from that lane by
// a shuffle, one load a batch instead of one a step and one register instead of 16
// (4x5376x4096 bf16 width 8: 154 -> 118 registers, 260 -> 172 us on an H100). Up to width
// 4 (8-row batches) the shuffles measured 0-7% slower: each thread loads every step's id.
constexpr bool kWinShuffledIds = CC1D_WIDTH > 4;
struct WinBatchIds {
    int v[kWinShuffledIds ? 1 : kWinBatch];
};
#if CC1D_HAS_SEQ_IDX
CC1D_DEVICE WinBatchIds win_load_batch_ids(const cc1d_fwd_params& p, const WinTask& task, cc1d_i64 t) {
    WinBatchIds ids;
    if constexpr (kWinShuffledIds) {
        const cc1d_i64 step = t + (int)(threadIdx.x % kWinGroup) % kWinBatch;
        ids.v[0] = step < task.t_end ? win_seq_id(p, task.b, step) : -1;
    } else {
#pragma unroll
        for (int s = 0; s < kWinBatch; ++s) ids.v[s] = t + s < task.t_end ? win_seq_id(p, task.b, t + s) : -1;
    }
    return ids;
}
CC1D_DEVICE int win_step_id(const WinBatchIds& ids, int s) {
    if constexpr (kWinShuffledIds) return cc1d_shfl_group32(ids.v[0], s);
    else return ids.v[s];
}
#endif

// Steps t .. t + kWinBatch - 1: each computes its output from the window, stores it (if
// inside the chunk) and slides the window by one. kIds: compare seq ids (seq_idx, unless
// the batch and the window lie in one sequence); ids[k] is the id of win[.][k].
template <bool kIds>
CC1D_DEVICE void win_walk_batch(const cc1d_fwd_params& p, const WinTask& task, cc1d_i64 t,
                                const WinVec (&batch)[kWinBatch], const WinBatchIds& batch_ids, const float (&w)[kWinCh][CC1D_WIDTH],
                                const float (&bias)[kWinCh], float (&win)[kWinCh][CC1D_K + 1], int (&ids)[CC1D_K + 1]) {
    (void)batch_ids;
    (void)ids;
    const cc1d_i64 remaining = task.t_end - t;
#pragma unroll
    for (int s = 0; s < kWinBatch; ++s) {
#pragma unroll
        for (int j = 0; j < kWinCh; ++j) win[j][CC1D_K] = cc1d_to_float(win_raw(batch[s], j));
#if CC1D_HAS_SEQ_IDX
        if constexpr (kIds) ids[CC1D_K] = win_step_id(batch_ids, s);
#endif
        float y[kWinCh];
#pragma unroll
        for (int j = 0; j < kWinCh; ++j) {
            float z = bias[j];
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k) {
                // Terms from another sequence drop out (a zero weight keeps the fma chain).
                if (kIds) z = fmaf(ids[k] == ids[CC1D_K] ? w[j][k] : 0.0f, win[j][k], z);
                else z = fmaf(w[j][k], win[j][k], z);
            }
            y[j] = cc1d_activate_fast(z);
            if (kIds && ids[CC1D_K] < 0) y[j] = 0.0f;   // padding: exactly 0
        }
        // Steps past the chunk computed on zeros; only their stores are dropped.
        if (s < remaining) win_store_row(p, task, t + s, win_pack(y));
#pragma unroll
        for (int k = 0; k < CC1D_K; ++k) {
#pragma unroll
            for (int j = 0; j < kWinCh; ++j) win[j][k] = win[j][k + 1];
            if (kIds) ids[k] = ids[k + 1];
        }
    }
}

// The chunk's first loads, all in flight at once: the K rows before it and its first batch,
// and for a walk that compares ids (kIds) their ids, each after the rows of the same steps.
struct WinStart {
    WinVec halo[CC1D_K > 0 ? CC1D_K : 1];
    WinVec batch[kWinBatch];
    int ids[CC1D_K > 0 ? CC1D_K : 1];   // ids[k]: sequence id of halo[k] (seq_idx)
    WinBatchIds batch_ids{};            // of the first batch (seq_idx)
};
#if CC1D_HAS_SEQ_IDX
CC1D_DEVICE void win_load_halo_ids(const cc1d_fwd_params& p, const WinTask& task, WinStart& start) {
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k) start.ids[k] = win_seq_id(p, task.b, task.t_begin - CC1D_K + k);
}
#endif
template <bool kIds>
CC1D_DEVICE WinStart win_load_start(const cc1d_fwd_params& p, const WinTask& task) {
    WinStart start;
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k) start.halo[k] = win_load_padded_row(p, task, task.t_begin - CC1D_K + k);
#if CC1D_HAS_SEQ_IDX
    if constexpr (kIds) win_load_halo_ids(p, task, start);
#endif
    win_load_batch(p, task, task.t_begin, start.batch);
#if CC1D_HAS_SEQ_IDX
    if constexpr (kIds) start.batch_ids = win_load_batch_ids(p, task, task.t_begin);
#endif
    return start;
}

// The whole chunk from its first loads, a batch at a time with the next batch's loads in
// flight meanwhile. kIds: compare seq ids (CC1D_HAS_SEQ_IDX and the chunk not known to
// lie in one sequence; `start` then holds the ids).
template <bool kIds>
CC1D_DEVICE void win_walk_chunk(const cc1d_fwd_params& p, const WinTask& task, const WinStart& start) {
    int ids[CC1D_K + 1];                          // ids[k]: sequence id of the step win[.][k] holds (kIds)
    WinBatchIds batch_ids = start.batch_ids;      // (kIds)
    if constexpr (kIds) {
#pragma unroll
        for (int k = 0; k < CC1D_K; ++k) ids[k] = start.ids[k];
    }
    WinVec batch[kWinBatch];
#pragma unroll
    for (int s = 0; s < kWinBatch; ++s) batch[s] = start.batch[s];
    cc1d_i64 t = task.t_begin;

    float w[kWinCh][CC1D_WIDTH], bias[kWinCh];
    cc1d_load_channel_weights(p, task.c0, w, bias);

    float win[kWinCh][CC1D_K + 1];   // win[j][k]: channel j at step t - K + k; k = K is step t
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k)
#pragma unroll
        for (int j = 0; j < kWinCh; ++j) win[j][k] = cc1d_to_float(win_raw(start.halo[k], j));

    for (;;) {
        WinVec next[kWinBatch];
        win_load_batch(p, task, t + kWinBatch, next);
#if CC1D_HAS_SEQ_IDX
        if constexpr (kIds) {
            const WinBatchIds next_ids = win_load_batch_ids(p, task, t + kWinBatch);
            bool one_sequence = false;
            int v = 0;
            if constexpr (kWinShuffledIds) {
                // Inside one sequence (most batches) the ids change nothing: the steps
                // without them. The ids are the same for the whole task, so is the answer.
                v = win_step_id(batch_ids, 0);
                bool same = v >= 0 && batch_ids.v[0] == v;
#pragma unroll
                for (int k = 0; k < CC1D_K; ++k) same = same && ids[k] == v;
                one_sequence = cc1d_warp_all(same);
            }
            if (one_sequence) {
                win_walk_batch<false>(p, task, t, batch, batch_ids, w, bias, win, ids);
#pragma unroll
                for (int k = 0; k < CC1D_K; ++k) ids[k] = v;
            } else {
                win_walk_batch<true>(p, task, t, batch, batch_ids, w, bias, win, ids);
            }
            batch_ids = next_ids;
        } else
#endif
        {
            win_walk_batch<false>(p, task, t, batch, batch_ids, w, bias, win, ids);
        }
        t += kWinBatch;
        if (t >= task.t_end) break;
#pragma unroll
        for (int s = 0; s < kWinBatch; ++s) batch[s] = next[s];
    }
}

#if CC1D_FWD_CL_SHORT_KERNEL(CC1D_WIDTH, CC1D_X_DTYPE == 0 ? 4 : 2, CC1D_HAS_SEQ_IDX)
// The short-chunk kernel (seq_idx up to width 4, chunks of at most two batches) walks every
// chunk without ids, like a call without seq_idx, then recomputes the few steps whose
// window crosses a sequence boundary or that are padding: in a packed batch all but a few
// 16-step chunks lie in one sequence, and a second, unrolled walk with ids would double
// the variant's compile time and spill at this kernel's register budget.
constexpr int kWinShortSteps = CC1D_FWD_CL_SHORT_CHUNK_BATCHES * kWinBatch;
static_assert(kWinShortSteps + CC1D_K <= kWinGroup, "a short chunk's ids and its window's come one a lane");

// A short chunk's ids, one a lane: lane_id is the id of step t_begin - K + lane (-1 from
// t_end on). differs, bit s: the walk without ids gets step t_begin + s wrong (padding, or
// a term from another sequence). padding: every step is padding.
struct WinChunkIds {
    int lane_id;
    unsigned int differs;
    bool padding;
};
// Whether step t_begin + s takes the term of its window position k (step t - K + k): the
// same sequence, or a position before the row start without initial_states (x̃ is 0
// there, so the term is 0 either way). A shuffle: every lane of the task must take part.
CC1D_DEVICE bool win_takes_term(const WinTask& task, int lane_id, int id, int s, int k) {
    const bool before_start = !CC1D_HAS_INITIAL_STATES && task.t_begin + s - CC1D_K + k < 0;
    return cc1d_shfl_group32(lane_id, s + k) == id || before_start;
}
// One id load a lane, then shuffles and votes; every lane of the task must take part.
CC1D_DEVICE WinChunkIds win_chunk_ids(const cc1d_fwd_params& p, const WinTask& task) {
    const int lane = (int)(threadIdx.x % kWinGroup);
    const cc1d_i64 q = task.t_begin - CC1D_K + lane;
    WinChunkIds ids;
    ids.lane_id = q < task.t_end ? win_seq_id(p, task.b, q) : -1;
    // Lane s stands for step t_begin + s.
    const bool step = lane < task.t_end - task.t_begin;
    const int id = cc1d_shfl_group32(ids.lane_id, lane + CC1D_K);
    bool differs = id < 0;
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k) {
        const bool takes = win_takes_term(task, ids.lane_id, id, lane, k);   // (every lane shuffles)
        differs = differs || !takes;
    }
    ids.differs = cc1d_ballot_group32(step && differs);
    ids.padding = cc1d_warp_all(!step || id < 0);   // (HIP: over two tasks, at worst false)
    return ids;
}

// The steps in ids.differs again, each from its K + 1 rows (just loaded by the walk, so
// from L1 or L2) with only its own sequence's terms; the walk without ids stored them
// first, and this thread's later store is the one that stays. Every lane of the task
// must take part (the shuffles), including those past D (they store nothing).
CC1D_DEVICE void win_fix_steps(const cc1d_fwd_params& p, const WinTask& task, const WinChunkIds& ids) {
    float w[kWinCh][CC1D_WIDTH], bias[kWinCh];
    cc1d_load_channel_weights(p, task.c0, w, bias);
    for (unsigned int todo = ids.differs; todo != 0u; todo &= todo - 1u) {
        const int s = __ffs(todo) - 1;
        const cc1d_i64 t = task.t_begin + s;
        const int id = cc1d_shfl_group32(ids.lane_id, s + CC1D_K);
        bool takes[CC1D_K + 1];
#pragma unroll
        for (int k = 0; k <= CC1D_K; ++k) takes[k] = win_takes_term(task, ids.lane_id, id, s, k);
        float y[kWinCh];
#pragma unroll
        for (int j = 0; j < kWinCh; ++j) y[j] = 0.0f;
        if (id >= 0) {
            WinVec rows[CC1D_K + 1];
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k) rows[k] = win_load_padded_row(p, task, t - CC1D_K + k);
#pragma unroll
            for (int j = 0; j < kWinCh; ++j) {
                float z = bias[j];   // the walk's order of terms, so the same rounding
#pragma unroll
                for (int k = 0; k <= CC1D_K; ++k)
                    z = fmaf(takes[k] ? w[j][k] : 0.0f, cc1d_to_float(win_raw(rows[k], j)), z);
                y[j] = cc1d_activate_fast(z);
            }
        }
        win_store_row(p, task, t, win_pack(y));
    }
}

// A chunk of padding: every output exactly 0.
CC1D_DEVICE void win_store_zero_chunk(const cc1d_fwd_params& p, const WinTask& task) {
    for (cc1d_i64 t = task.t_begin; t < task.t_end; ++t) win_store_row(p, task, t, win_zero());
}
#endif

// Task `index` of the grid (channel groups fastest, then time chunks, then batch rows) for
// this lane; `groups` row groups span D.
CC1D_DEVICE WinTask win_task(const cc1d_fwd_params& p, unsigned int index, unsigned int groups) {
    const unsigned int tiles = (unsigned int)p.tiles;
    const unsigned int rest = index / groups, b = rest / tiles;
    WinTask task;
    task.b = b;
    task.c0 = ((cc1d_i64)(index - rest * groups) * kWinGroup + threadIdx.x % kWinGroup) * kWinCh;
    task.t_begin = (cc1d_i64)(rest - b * tiles) * p.chunk_len;
    task.t_end = task.t_begin + p.chunk_len < p.seqlen ? task.t_begin + p.chunk_len : p.seqlen;
    task.vector = p.vector_ok && task.c0 + kWinCh <= p.dim;
    return task;
}

CC1D_DEVICE void win_finish_task(const cc1d_fwd_params& p, const WinTask& task) {
    (void)p;
    (void)task;
#if CC1D_HAS_FINAL_STATES
    if (task.t_begin + p.chunk_len >= p.seqlen) win_write_final_states(p, task);
#endif
}

extern "C" __global__ void __launch_bounds__(CC1D_FWD_CL_WINDOW_THREADS) CC1D_ENTRY(cc1d_fwd_params p) {
    const unsigned int groups = (unsigned int)((p.dim + kWinCh * kWinGroup - 1) / (kWinCh * kWinGroup));
    const unsigned int index = cc1d_flat_block() * kWinTasksPerBlock + threadIdx.x / kWinGroup;
    if (index >= (cc1d_i64)groups * p.tiles * p.batch) return;
    const WinTask task = win_task(p, index, groups);
#if CC1D_HAS_SEQ_IDX
    if constexpr (kWinShuffledIds) {
        // Every lane of a task stays for the shuffles; one past D loads and stores nothing
        // (its element-wise accesses test each channel).
        win_walk_chunk<true>(p, task, win_load_start<true>(p, task));
    } else {
        // Chunks longer than two batches (the short ones go to CC1D_ENTRY_SHORT) span
        // sequence boundaries more often: ids compared throughout.
        if (task.c0 >= p.dim) return;
        win_walk_chunk<true>(p, task, win_load_start<true>(p, task));
    }
#else
    if (task.c0 >= p.dim) return;
    win_walk_chunk<false>(p, task, win_load_start<false>(p, task));
#endif
    win_finish_task(p, task);
}

#if CC1D_FWD_CL_SHORT_KERNEL(CC1D_WIDTH, CC1D_X_DTYPE == 0 ? 4 : 2, CC1D_HAS_SEQ_IDX)
// Chunks of at most two batches with seq_idx (see win_chunk_ids). Its own kernel: without
// the main kernel's walk with ids throughout it fits CC1D_FWD_CL_SHORT_BLOCKS blocks a
// multiprocessor.
// (HIP reads launch bounds' second argument as waves per SIMD: not given there.)
#if defined(CC1D_BACKEND_HIP)
#define WIN_SHORT_LAUNCH_BOUNDS __launch_bounds__(CC1D_FWD_CL_WINDOW_THREADS)
#else
#define WIN_SHORT_LAUNCH_BOUNDS __launch_bounds__(CC1D_FWD_CL_WINDOW_THREADS, CC1D_FWD_CL_SHORT_BLOCKS)
#endif
extern "C" __global__ void WIN_SHORT_LAUNCH_BOUNDS CC1D_ENTRY_SHORT(cc1d_fwd_params p) {
    const unsigned int groups = (unsigned int)((p.dim + kWinCh * kWinGroup - 1) / (kWinCh * kWinGroup));
    const unsigned int index = cc1d_flat_block() * kWinTasksPerBlock + threadIdx.x / kWinGroup;
    if (index >= (cc1d_i64)groups * p.tiles * p.batch) return;
    const WinTask task = win_task(p, index, groups);
    // Lanes past D stay for the shuffles and votes; they load and store nothing (their
    // element-wise accesses test each channel).
    const WinStart start = win_load_start<false>(p, task);
    const WinChunkIds ids = win_chunk_ids(p, task);   // behind the chunk's first loads
    if (ids.padding) {
        win_store_zero_chunk(p, task);
    } else {
        win_walk_chunk<false>(p, task, start);
        if (ids.differs != 0u) win_fix_steps(p, task, ids);
    }
    win_finish_task(p, task);
}
#endif
