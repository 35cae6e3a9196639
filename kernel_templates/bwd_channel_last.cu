// Causal conv1d backward, channel-last layout: x, dout and dx are stored (B, L, D), D contiguous.
//
// Block: blockDim.x threads along channels (CC1D_BWD_CL_THREADS_X) by blockDim.y along
// time; block = group * channel_blocks + channel_block (flattened over x and y). Thread
// (tx, ty) owns kBlCpt consecutive channels (a warp: one coalesced access per time step)
// and walks the units u = group * units_per_part + ty, + blockDim.y, ... of (batch, chunk).
//
// The walk goes BACKWARD in time, one position s per step, from the chunk end + K - 1
// down to the chunk start (down to -K in chunk 0 when initial_states are given):
//   g[s]    = dout[s] * act'(z[s]), z[s] from the window x̃[s-K .. s]   (silu only)
//   window  G = g[s .. s+K]                                           (shifted by one per step)
//   dx[s]   = sum_k w[k] G[K-k] (+ dfinal near the row end)           (dinitial_states for s < 0)
//   dw[k]  += x̃[s] * G[K-k],  db += g[s]                              (for the chunk's own s)
// dw[k] = sum_s x̃[s] g[s+K-k] needs x̃ only at the current position: without silu a thread
// holds one window (g), with silu one more (x̃). Terms across a sequence boundary are
// dropped by comparing the ids of their two positions; a padding position (id < 0) has g = 0.
// A dropped term is skipped (a predicated fma) rather than multiplied by a selected zero:
// that select was a fifth of the walk's instructions at width 4 with silu (without it,
// 5-10% faster on an H200 and 1-5% on an H100; docs/perf.md, entries 97-98).
//
// Loads come in batches of kBlSteps steps. A thread issues every load of a batch before
// it waits for any and parks them in its own shared-memory slots (nobody else reads them:
// no barrier; consecutive threads, consecutive slots: no bank conflicts) -- on NVIDIA
// sm_80+ with cp.async, which bypasses registers, into two buffers: the copies of the
// next batch are in flight while the thread walks the current one, so a thread's memory
// latency hides behind its own arithmetic instead of needing other warps to cover it. It then walks the batch kBlUnroll steps
// per loop iteration; the windows stay in registers with compile-time indices, and since
// kBlUnroll >= K + 1 replaces every window entry per iteration they need no moves at the
// back edge. A batch in shared memory rather than registers leaves more threads per SM
// and more bytes in flight, and keeps the unrolled code (compile time) small. Most batches
// lie wholly inside the chunk and the row, on an aligned lane: they walk a copy of the step
// without the per-step position tests (bl_step<false>); the first and last batch of a
// walk, and unaligned lanes, take the general step.
//
// kBlCpt is a 16-byte vector of channels (at most CC1D_BWD_CL_MAX_CHANNELS), halved while
// kBlCpt * width > CC1D_BWD_CL_WINDOW
// (windows, weights and dw sums are kBlCpt * width registers each). Unaligned rows
// (vector_ok == 0) and the tail of D go element by element; the walk is the same.

// NVRTC compiles only device code: constexpr helpers need an execution space.
__host__ __device__ constexpr int bl_channels_per_thread() {
    int c = CC1D_VEC < CC1D_BWD_CL_MAX_CHANNELS ? CC1D_VEC : CC1D_BWD_CL_MAX_CHANNELS;
    while (c > 1 && c * CC1D_WIDTH > CC1D_BWD_CL_WINDOW(sizeof(x_t))) c /= 2;
    return c;
}
constexpr int kBlCpt = bl_channels_per_thread();
constexpr int kBlBytes = kBlCpt * (int)sizeof(x_t);
constexpr int kBlWords = (kBlBytes + 3) / 4;
constexpr int kBlAlign = kBlBytes >= 16 ? 16 : (kBlBytes >= 8 ? 8 : 4);
// Steps per unrolled loop iteration: at least K + 1 (see above), a power of two.
constexpr int kBlUnroll = CC1D_K + 1 <= 4 ? 4 : (CC1D_K + 1 <= 8 ? 8 : 16);
// Shared memory for a block's staged batches (AMD: 64 KiB of LDS per CU, keep 3-4 blocks).
#if defined(CC1D_BACKEND_HIP)
constexpr int kBlStageBudget = 16384;
#else
constexpr int kBlStageBudget = 40960;
#endif
// cp.async (NVIDIA sm_80+): a deep batch costs shared memory, not the registers that bound
// the threads per SM. Elsewhere loads land in registers first: a shallower batch.
#if defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define BL_ASYNC_STAGE 1
#else
#define BL_ASYNC_STAGE 0
#endif
constexpr bool kBlAsync = BL_ASYNC_STAGE && kBlBytes >= 4;   // cp.async moves 4, 8 or 16 bytes
// Batches staged at once: two with cp.async (on an H200, fp32 4x5376x4096 78% -> 90% of
// copy bandwidth, 16-bit 8x2048x1024 55.0 -> 51.4 us), one where loads go through registers.
constexpr int kBlBuffers = kBlAsync ? 2 : 1;
// kBlCpt elements of x_t as stored bits (16-bit pairs per word), aligned for one access.
struct __attribute__((aligned(kBlAlign))) bl_raw {
    unsigned int w[kBlWords];
};
constexpr int kBlSlotBytes = 2 * (int)sizeof(bl_raw) + (CC1D_HAS_SEQ_IDX ? 4 : 0);   // x, dout, id
// Time steps per batch: CC1D_BWD_CL_(ASYNC_)BATCH_BYTES of x per thread, within the
// shared memory budget and at most 32, in whole loop iterations.
__host__ __device__ constexpr int bl_steps() {
    int n = (kBlAsync ? CC1D_BWD_CL_ASYNC_BATCH_BYTES : CC1D_BWD_CL_BATCH_BYTES) / kBlBytes;
    const int fit = kBlStageBudget / (kBlBuffers * CC1D_BWD_CL_THREADS * kBlSlotBytes);
    if (n > fit) n = fit;
    if (n > 32) n = 32;
    n = n / kBlUnroll * kBlUnroll;
    return n < kBlUnroll ? kBlUnroll : n;
}
constexpr int kBlSteps = bl_steps();
// With silu the staged x (and id) of step s is x̃[s - 1 - K], the one the window takes in
// after s; without silu it is x̃[s] itself.
constexpr int kBlAhead = CC1D_SILU ? CC1D_K + 1 : 0;
constexpr int kBlLook = CC1D_SILU ? CC1D_K : 0;   // x positions below s_bot still needed
[[maybe_unused]] constexpr int kBlIds = CC1D_SILU ? 2 * CC1D_K + 1 : CC1D_K + 1;   // id window length (seq_idx)
constexpr int kBlStageBytes = kBlBuffers * kBlSteps * CC1D_BWD_CL_THREADS * kBlSlotBytes;
constexpr int kBlSumsBytes = CC1D_BWD_CL_THREADS * kBlCpt * (CC1D_WIDTH + 1) * 4;
constexpr int kBlSharedBytes = kBlStageBytes > kBlSumsBytes ? kBlStageBytes : kBlSumsBytes;

// A block's shared memory (up to 40 KiB) already caps an SM at 4-5 blocks, and ptxas left
// alone spends far more registers than the walk needs (it hoists shared loads): asking
// for 4 blocks (<= 128 registers) costs no occupancy and keeps widths <= 4 spill-free.
// 16-bit x asks for 3 (<= 168): its 4-channel windows are twice fp32's 2-channel ones
// (with seq_idx at widths 3-4 at 4 blocks they spilled 56 bytes and 4x5376x4096 bf16 SiLU
// ran 6% slower on an H100, 18% on an H200, docs/perf.md entry 98; without seq_idx the
// SiLU walk fit 128 without spills but ran 3.4% slower there, entry 100); wider windows
// get 3 blocks up to width 8, then what they need. (HIP reads the second argument as a
// minimum of waves per SIMD, a register cap that would spill there; its LDS budget above
// bounds occupancy instead.)
#if defined(CC1D_BACKEND_HIP)
#define BL_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CL_THREADS)
#elif CC1D_WIDTH > 8
#define BL_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CL_THREADS, 1)
#elif CC1D_WIDTH > 4
#define BL_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CL_THREADS, 3)
#else
#define BL_LAUNCH_BOUNDS __launch_bounds__(CC1D_BWD_CL_THREADS, CC1D_BWD_CL_BLOCKS_PER_SM(sizeof(x_t)))
#endif

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

// kBlCpt channels at `at` (channel c0 of one time step), stride `sc` between channels:
// one access when the lane is aligned (a copy of the aligned bl_raw compiles to a single
// 4/8/16-byte load or store), else element by element.
CC1D_DEVICE bl_raw bl_load(const x_t* at, cc1d_i64 sc, const bl_lane& lane) {
    if (lane.vec && kBlBytes >= 4) return *reinterpret_cast<const bl_raw*>(at);
    bl_raw r = bl_raw_zero();
#pragma unroll
    for (int e = 0; e < kBlCpt; ++e)
        if (e < lane.n) bl_set(r, e, at[e * (lane.vec ? 1 : sc)]);
    return r;
}
// kBlCpt contiguous channels at `at`, aligned for one access where kBlBytes >= 4.
CC1D_DEVICE void bl_store_aligned(x_t* at, const bl_raw& r) {
    if constexpr (kBlBytes >= 4) {
        *reinterpret_cast<bl_raw*>(at) = r;
    } else {   // (a discarded branch: NVRTC warned of an unreachable loop where it could not run)
#pragma unroll
        for (int e = 0; e < kBlCpt; ++e) at[e] = cc1d_of_bits<x_t>((r.w[e >> 1] >> ((e & 1) * 16)) & 0xffffu);
    }
}
CC1D_DEVICE void bl_store(x_t* at, cc1d_i64 sc, const bl_lane& lane, const bl_raw& r) {
    if (lane.vec) {
        bl_store_aligned(at, r);
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

// Seq id of position q (< L), as cc1d_bwd_seq_id.
CC1D_DEVICE int bl_id_at(const cc1d_bwd_params& p, const bl_row& row, cc1d_i64 q) {
#if CC1D_HAS_SEQ_IDX
    return cc1d_bwd_seq_id(p, row.seq, q);
#else
    (void)p; (void)row; (void)q;
    return 0;
#endif
}

// kBlCpt fp32 values as x_t bits, rounded to nearest even (16-bit pairs in one instruction).
CC1D_DEVICE bl_raw bl_pack(const float (&v)[kBlCpt]) {
    bl_raw r = bl_raw_zero();
    if (sizeof(x_t) == 4) {
#pragma unroll
        for (int e = 0; e < kBlCpt; ++e) r.w[e] = cc1d_bits_of(cc1d_to_x(v[e]));
    } else if (kBlCpt == 1) {
        bl_set(r, 0, cc1d_to_x(v[0]));
    } else {
#pragma unroll
        for (int e = 0; e + 1 < kBlCpt; e += 2) r.w[e >> 1] = cc1d_pack_pair(v[e], v[e + 1]);
    }
    return r;
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
        bl_store(dx, p.dx_stride_d, lane, bl_pack(acc));
        return;
    }
#if CC1D_HAS_INITIAL_STATES
    if (p.dinitial_states != 0) {
        x_t* dinit = reinterpret_cast<x_t*>(p.dinitial_states) + row.b * p.dinit_stride_b + lane.c0 * p.dinit_stride_d +
                     (s + CC1D_K) * p.dinit_stride_k;
#pragma unroll
        for (int e = 0; e < kBlCpt; ++e)
            if (e < lane.n) dinit[e * p.dinit_stride_d] = cc1d_to_x(acc[e]);
    }
#endif
}

// Per-thread weights and sums.
typedef cc1d_bwd_thread_state<kBlCpt> bl_state;

// The thread's slots in shared memory: step n of a batch at [n * CC1D_BWD_CL_THREADS + tid]
// of one buffer (x, dout and ids each hold kBlBuffers buffers back to back). With
// kBlRowIds the ids are the row's (the blockDim.x threads of one threadIdx.y, one warp,
// which walk the same steps): step n's at [row * kBlSteps + n], copied by the row's
// lanes in turn and read by all (bl_id_index).
struct bl_stage {
    bl_raw* x;
    bl_raw* d;
    int* id;
    int tid;
    int row, tx, lanes;      // kBlRowIds: threadIdx.y, threadIdx.x, the row's walking lanes
    unsigned int row_mask;   // kBlRowIds: those lanes (the low `lanes` of the warp)
};
constexpr int kBlBufferSlots = kBlSteps * CC1D_BWD_CL_THREADS;
// seq_idx with cp.async: a batch's ids staged once a row, not once a thread. Every thread
// copying the id its row shares (32 lanes, one address, 32 slots) kept the L1 busy: on an
// H200 the 16-bit SiLU walk with seq_idx ran at 73% of L1/TEX throughput against 30%
// without seq_idx, 25% slower (docs/perf.md, entry 108).
constexpr bool kBlRowIds = CC1D_HAS_SEQ_IDX && kBlAsync;
CC1D_DEVICE int bl_id_index(const bl_stage& stage, int n) {
    return kBlRowIds ? stage.row * kBlSteps + n : n * CC1D_BWD_CL_THREADS + stage.tid;
}
// kBlRowIds: the row's lanes wait here for each other, so that ids one lane copied are
// seen by all (after each one's bl_wait_staged) and none is overwritten while read.
CC1D_DEVICE void bl_sync_row_ids(const bl_stage& stage) {
#if BL_ASYNC_STAGE && CC1D_HAS_SEQ_IDX
    if (kBlRowIds) __syncwarp(stage.row_mask);
#else
    (void)stage;
#endif
}
CC1D_DEVICE bl_stage bl_buffer(const bl_stage& stage, int buffer) {
    bl_stage b = stage;
    b.x += buffer * kBlBufferSlots;
    b.d += buffer * kBlBufferSlots;
    b.id += buffer * kBlBufferSlots;
    return b;
}

// Waits until at most `pending` batches of this thread's copies are still in flight
// (cp.async groups; staging without cp.async is complete when it returns).
CC1D_DEVICE void bl_wait_staged(int pending) {
#if BL_ASYNC_STAGE
    if (kBlAsync) {
        if (pending > 0) asm volatile("cp.async.wait_group 1;" ::: "memory");
        else asm volatile("cp.async.wait_group 0;" ::: "memory");
    }
#else
    (void)pending;
#endif
}

// A 64-bit distance in steps as a small int in [-1, kBlSteps]: the per-step tests of a
// batch then compare step numbers with 32-bit bounds computed once per batch.
CC1D_DEVICE int bl_steps_bound(cc1d_i64 v) { return v < -1 ? -1 : (v > kBlSteps ? kBlSteps : (int)v); }

#if BL_ASYNC_STAGE
// (a thread's copies to its shared slots go by cc1d_copy_async_ca, prelude_cuda.h)
constexpr int kBlCopyBytes = kBlAsync ? kBlBytes : 4;   // only instantiated with a legal size
#endif

// Loads of a register-staged batch in flight at once: 32 registers' worth, or just 4
// where cp.async stages the aligned rows and this path only serves unaligned rows and
// the tail of D (registers are allocated for the costliest path of a kernel).
__host__ __device__ constexpr int bl_group() {
    const int n = kBlAsync ? 4 : 32 / (2 * kBlWords);
    return n < kBlSteps ? n : kBlSteps;
}
constexpr int kBlGroup = bl_group();

// kBlRowIds: the row's ids of slots n >= n_x0 (position x_first + n), one a lane in turn.
CC1D_DEVICE void bl_stage_row_ids(const cc1d_bwd_params& p, const bl_row& row, const bl_stage& st, cc1d_i64 x_first,
                                  int n_x0) {
#if BL_ASYNC_STAGE && CC1D_HAS_SEQ_IDX
    if (!kBlRowIds) return;
    for (int n = st.tx; n < kBlSteps; n += st.lanes)
        if (n >= n_x0) cc1d_copy_async_ca<4>(st.id + bl_id_index(st, n), row.seq + (x_first + n) * p.seq_stride_l);
#else
    (void)p; (void)row; (void)st; (void)x_first; (void)n_x0;
#endif
}

// Loads the batch whose steps are the positions q0 .. q0 + kBlSteps - 1: slot n gets
// dout[q0 + n] and x̃ / id at q0 + n - kBlAhead. Slots a walk never reads (below s_bot)
// get zeros without a load. Every load of a group (with cp.async: of the batch) is
// issued before the first one is waited for.
CC1D_DEVICE void bl_stage_batch(const cc1d_bwd_params& p, const bl_row& row, const bl_lane& lane, cc1d_i64 q0,
                                cc1d_i64 s_bot, const bl_stage& st) {
    const cc1d_i64 x_first = q0 - kBlAhead;
    // Slots n >= n_x hold an x that is used; from n_x0 on it lies at a position >= 0.
    const int n_x = bl_steps_bound(s_bot - kBlLook - x_first);
    const int n_x0 = bl_steps_bound(-x_first) > n_x ? bl_steps_bound(-x_first) : n_x;
    const int n_d = bl_steps_bound((s_bot > 0 ? s_bot : 0) - q0);   // dout used and at a position >= 0
    bl_sync_row_ids(st);   // every lane of the row done with the ids this buffer held
#if BL_ASYNC_STAGE
    if (kBlAsync && lane.vec) {
        // No destination registers: a rolled loop keeps every copy in flight just the same,
        // without the compiler precomputing all the addresses at once.
        const x_t* px = row.x + x_first * p.x_stride_l;
        const x_t* pd = row.dout + q0 * p.dout_stride_l;
        if (n_x0 <= 0 && n_d <= 0) {
            // Every slot comes from memory (all batches but those at a row start): no tests.
#pragma unroll 2
            for (int n = 0; n < kBlSteps; ++n) {
                const int slot = n * CC1D_BWD_CL_THREADS + st.tid;
                cc1d_copy_async_ca<kBlCopyBytes>(st.x + slot, px);
#if CC1D_HAS_SEQ_IDX
                if (!kBlRowIds) cc1d_copy_async_ca<4>(st.id + slot, row.seq + (x_first + n) * p.seq_stride_l);
#endif
                cc1d_copy_async_ca<kBlCopyBytes>(st.d + slot, pd);
                px += p.x_stride_l;
                pd += p.dout_stride_l;
            }
            bl_stage_row_ids(p, row, st, x_first, n_x0);
            asm volatile("cp.async.commit_group;" ::: "memory");
            return;
        }
#pragma unroll 2
        for (int n = 0; n < kBlSteps; ++n) {
            const int slot = n * CC1D_BWD_CL_THREADS + st.tid;
            // Slots never read get plain zeros; those before the row start are filled below.
            if (n >= n_x0) {
                cc1d_copy_async_ca<kBlCopyBytes>(st.x + slot, px);
#if CC1D_HAS_SEQ_IDX
                if (!kBlRowIds) cc1d_copy_async_ca<4>(st.id + slot, row.seq + (x_first + n) * p.seq_stride_l);
#endif
            } else if (n < n_x) {
                st.x[slot] = bl_raw_zero();
            }
            if (n >= n_d) cc1d_copy_async_ca<kBlCopyBytes>(st.d + slot, pd);
            else st.d[slot] = bl_raw_zero();
            px += p.x_stride_l;
            pd += p.dout_stride_l;
        }
        // One group per batch; the walk waits for it (bl_wait_staged). Each thread reads
        // only its own slots: waiting for its own copies is enough (row ids: and the
        // row's bl_sync_row_ids).
        bl_stage_row_ids(p, row, st, x_first, n_x0);
        asm volatile("cp.async.commit_group;" ::: "memory");
    } else
#endif
    {
#pragma unroll 1
        for (int n0 = 0; n0 < kBlSteps; n0 += kBlGroup) {
            bl_raw rx[kBlGroup], rd[kBlGroup];
            [[maybe_unused]] int rid[kBlGroup];   // (read with seq_idx only)
#pragma unroll
            for (int j = 0; j < kBlGroup; ++j) {
                const int n = n0 + j;
                rx[j] = rd[j] = bl_raw_zero();
                rid[j] = -1;
                if (n >= n_x0 && n < kBlSteps) {
                    rx[j] = bl_load(row.x + (x_first + n) * p.x_stride_l, p.x_stride_d, lane);
                    if (!kBlRowIds) rid[j] = bl_id_at(p, row, x_first + n);   // (row ids: bl_stage_row_ids)
                }
                if (n >= n_d && n < kBlSteps) rd[j] = bl_load(row.dout + (q0 + n) * p.dout_stride_l, p.dout_stride_d, lane);
            }
#pragma unroll
            for (int j = 0; j < kBlGroup; ++j) {
                const int n = n0 + j;
                if (n >= kBlSteps) break;
                const int slot = n * CC1D_BWD_CL_THREADS + st.tid;
                if (n >= n_x0 || n < n_x) st.x[slot] = rx[j];
                st.d[slot] = rd[j];
#if CC1D_HAS_SEQ_IDX
                if (!kBlRowIds && (n >= n_x0 || n < n_x)) st.id[slot] = rid[j];
#endif
            }
        }
#if BL_ASYNC_STAGE
        if (kBlRowIds) {   // an unaligned lane (the tail of D) takes its turn at the row's ids too
            bl_stage_row_ids(p, row, st, x_first, n_x0);
            asm volatile("cp.async.commit_group;" ::: "memory");
        }
#endif
    }
    // x̃ before the row start (chunk 0): initial_states or zeros, and the id of the first
    // sequence. At most K + kBlAhead slots, once per row.
#pragma unroll 1
    for (int n = n_x > 0 ? n_x : 0; n < n_x0; ++n) {
        const int slot = n * CC1D_BWD_CL_THREADS + st.tid;
        st.x[slot] = bl_load_x(p, row, lane, x_first + n);
#if CC1D_HAS_SEQ_IDX
        if (!kBlRowIds || st.tx == 0) st.id[bl_id_index(st, n)] = bl_id_at(p, row, x_first + n);
#endif
    }
}

// The walk's registers: the window of g, with silu the window of x̃, with seq_idx the ids.
struct bl_windows {
    float G[CC1D_K + 1][kBlCpt];    // G[i] = g[s + i]
#if CC1D_SILU
    float XW[CC1D_K + 1][kBlCpt];   // XW[i] = x̃[s - i]
#endif
#if CC1D_HAS_SEQ_IDX
    int ids[kBlIds];   // silu: ids[m] = id(s - K + m); else ids[j] = id(s + j)
#endif
};

// Where a batch's steps leave the chunk and the row, as step numbers (bl_steps_bound):
// steps i >= own are the chunk's own positions (s < t_end), i <= bot are walked (s >= s_bot),
// i <= pos lie at s >= 0, i <= fin at s >= L - K (final_states).
struct bl_bounds {
    int own, bot, pos, fin;
};

// Step i of a batch: position s = sb - i, its slot kBlSteps - 1 - i, dx[s] at `dx`.
// kEdge: the step may lie past the chunk's own positions, before the row start or near
// its end, or the lane may be unaligned. A batch with none of that (most of them) walks
// with kEdge false: no per-step tests, dx stored as one vector. kIds (seq_idx): the step
// compares seq ids and moves them through the window; a batch whose every id is that of
// one sequence walks without (bl_batch_sequence), as without seq_idx.
template <bool kEdge, bool kIds>
CC1D_DEVICE void bl_step(const cc1d_bwd_params& p, const bl_row& row, const bl_lane& lane, const bl_stage& stage,
                         const bl_bounds& at, cc1d_i64 sb, int i, x_t* dx, bl_windows& win, bl_state& st) {
    const int slot = (kBlSteps - 1 - i) * CC1D_BWD_CL_THREADS + stage.tid;
    const bl_raw dr = stage.d[slot];
#if CC1D_SILU
    constexpr int me = CC1D_K;   // ids index of s
#else
    const bl_raw xr = stage.x[slot];   // x̃[s]
#if CC1D_HAS_SEQ_IDX
    if (kIds) {
#pragma unroll
        for (int m = CC1D_K; m > 0; --m) win.ids[m] = win.ids[m - 1];
        win.ids[0] = stage.id[bl_id_index(stage, kBlSteps - 1 - i)];
    }
#endif
    constexpr int me = 0;
#endif
    (void)me;
    float gs[kBlCpt];
#pragma unroll
    for (int c = 0; c < kBlCpt; ++c) {
        float gv = bl_float(dr, c);
#if CC1D_SILU
        float z = st.bias[c];
#pragma unroll
        for (int k = 0; k <= CC1D_K; ++k) {
#if CC1D_HAS_SEQ_IDX
            if (!kIds || win.ids[k] == win.ids[me]) z = fmaf(st.w[c][k], win.XW[CC1D_K - k][c], z);
#else
            z = fmaf(st.w[c][k], win.XW[CC1D_K - k][c], z);
#endif
        }
        gv = cc1d_bwd_held_grad(gv, z);
#endif
#if CC1D_HAS_SEQ_IDX
        if (kIds && win.ids[me] < 0) gv = 0.0f;   // padding: the output was forced to 0
#endif
        gs[c] = !kEdge || i <= at.pos ? gv : 0.0f;
    }
#pragma unroll
    for (int k = CC1D_K; k > 0; --k)
#pragma unroll
        for (int c = 0; c < kBlCpt; ++c) win.G[k][c] = win.G[k - 1][c];
#pragma unroll
    for (int c = 0; c < kBlCpt; ++c) win.G[0][c] = gs[c];

    if (!kEdge || (i >= at.own && i <= at.bot)) {   // the chunk's own position (or x̃[s < 0] in chunk 0)
        float acc[kBlCpt];
#pragma unroll
        for (int c = 0; c < kBlCpt; ++c) {
#if CC1D_SILU
            const float xs = win.XW[0][c];
#else
            const float xs = bl_float(xr, c);
#endif
            acc[c] = 0.0f;
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k) {
#if CC1D_HAS_SEQ_IDX
                const bool same = !kIds || win.ids[me + CC1D_K - k] == win.ids[me];   // id(s + K - k) against id(s)
#else
                const bool same = true;
#endif
                const float gk = win.G[CC1D_K - k][c];
                if (same) {   // x̃[s] * g[s+K-k]
                    acc[c] = fmaf(st.w[c][k], gk, acc[c]);
                    st.dw[c][k] = fmaf(xs, gk, st.dw[c][k]);
                }
            }
            st.db[c] += gs[c];
        }
        if (kEdge) bl_emit_dx(p, row, lane, sb - i, i <= at.fin, dx, acc);
        else bl_store_aligned(dx, bl_pack(acc));
    }
#if CC1D_SILU
    // On to s - 1: x̃[s-1-K] (and its id) enter the window.
    const bl_raw xr = stage.x[slot];
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k)
#pragma unroll
        for (int c = 0; c < kBlCpt; ++c) win.XW[k][c] = win.XW[k + 1][c];
#pragma unroll
    for (int c = 0; c < kBlCpt; ++c) win.XW[CC1D_K][c] = bl_float(xr, c);
#if CC1D_HAS_SEQ_IDX
    if (kIds) {
#pragma unroll
        for (int m = kBlIds - 1; m > 0; --m) win.ids[m] = win.ids[m - 1];
        win.ids[0] = stage.id[bl_id_index(stage, kBlSteps - 1 - i)];
    }
#endif
#endif
}

// The steps of one staged batch, kBlUnroll per loop iteration, dx[sb] at `dx`; an edge
// batch stops after its last walked step (at.bot).
template <bool kEdge, bool kIds>
CC1D_DEVICE void bl_walk_batch(const cc1d_bwd_params& p, const bl_row& row, const bl_lane& lane, const bl_stage& stage,
                               const bl_bounds& at, cc1d_i64 sb, x_t* dx, bl_windows& win, bl_state& st) {
#pragma unroll 1
    for (int i0 = 0; i0 < kBlSteps && (!kEdge || i0 <= at.bot); i0 += kBlUnroll) {
#pragma unroll
        for (int j = 0; j < kBlUnroll; ++j) {
            bl_step<kEdge, kIds>(p, row, lane, stage, at, sb, i0 + j, dx, win, st);
            dx -= p.dx_stride_l;
        }
    }
}

#if CC1D_HAS_SEQ_IDX
// The sequence of a batch about to be walked, when every id its steps compare is that
// one sequence's (>= 0): the window's (silu: positions sb - K .. sb + K; else sb + 1 ..
// sb + K + 1) and the batch's staged ones (silu: sb - kBlSteps - K .. sb - K - 1; else
// sb - kBlSteps + 1 .. sb), together every position from the batch's last step's window
// to its first step's; else -1. Such a batch walks without comparing ids, which then gives
// the same sums in the same order, and leaves every window id at that sequence. The lanes
// of a warp walk the same steps, so they agree. Most batches of a packed batch of
// sequences lie inside one, and the compares are most of what seq_idx adds to a step
// (16-bit SiLU width 4: 421 instructions per 4 steps against 353). With the ids staged
// once a row (kBlRowIds), 4x5376x4096 at width 8 ran 11% faster than without this on an
// H200 and 14% on an H100; at width 4 it ran 1-2% slower there on the H200 (but 3%
// faster on 8x2048x1024) and 1-3% slower on the H100, every cell (docs/perf.md, entries
// 108-109). So only walks past width 4, whose steps compare more ids, take it.
constexpr bool kBlIdFreeBatches = CC1D_WIDTH > 4;
CC1D_DEVICE int bl_batch_sequence(const bl_stage& stage, const bl_windows& win) {
    const int id = win.ids[0];
    bool same = id >= 0;
#pragma unroll
    for (int m = 1; m < kBlIds; ++m) same &= win.ids[m] == id;
#pragma unroll
    for (int n = 0; n < kBlSteps; ++n) same &= stage.id[bl_id_index(stage, n)] == id;
    return same ? id : -1;
}
#endif

// The thread's weights and bias as fp32 into st (held, cc1d_hold_taps).
CC1D_DEVICE void bl_take_weights(const cc1d_bwd_params& p, const bl_lane& lane, bl_state& st) {
    cc1d_load_channel_weights<kBlCpt>(p, lane.c0, st.w, st.bias);
#pragma unroll
    for (int c = 0; c < kBlCpt; ++c) st.bias[c] = cc1d_hold_taps(st.w[c], st.bias[c]);
}

// A unit of the call: its batch row and its chunk [t_begin, t_end). Units 0 ..
// batch * tiles - 1 are the rows' chunks of tile_len steps, up to tail_start; the rest
// (tail_tiles a row) the rows' tail chunks of tail_len steps from there to seqlen. The
// launcher numbers the tail's units, and so its blocks, after every long walk's: the
// blocks of the long walks fill the wave, and the tail's take the slots they leave, in
// the order they leave them, so the SMs whose walks end first walk more (the launcher's
// plan_channel_last says when a call has a tail).
struct bl_unit {
    cc1d_i64 b, t_begin, t_end;
};
CC1D_DEVICE bl_unit bl_unit_of(const cc1d_bwd_params& p, cc1d_i64 u) {
    bl_unit r;
    const cc1d_i64 long_units = p.batch * p.tiles;
    if (u < long_units) {
        r.b = u / p.tiles;
        r.t_begin = (u - r.b * p.tiles) * p.tile_len;
        const cc1d_i64 limit = p.tail_tiles > 0 ? p.tail_start : p.seqlen;
        r.t_end = r.t_begin + p.tile_len < limit ? r.t_begin + p.tile_len : limit;
    } else {
        const cc1d_i64 v = u - long_units;
        r.b = v / p.tail_tiles;
        r.t_begin = p.tail_start + (v - r.b * p.tail_tiles) * p.tail_len;
        r.t_end = r.t_begin + p.tail_len < p.seqlen ? r.t_begin + p.tail_len : p.seqlen;
    }
    return r;
}

// One unit: chunk [t_begin, t_end) of row b, walked backward (see the header comment).
// first (the thread's first unit): the weights are loaded (bl_take_weights) once the
// walk's first loads are out, so their memory latency and the batch's overlap: weights
// converted where they were loaded, before the walk, made every thread wait for them
// before its first load, and the first step's x̃ window (silu) the same way after them.
// (Past the medium shape 0-8% faster on an H200 and an H100; that one-wave shape ran 2-7%
// slower in 16-bit, for no reason found: docs/perf.md, entry 89.)
CC1D_DEVICE void bl_walk(const cc1d_bwd_params& p, const bl_row& row, const bl_lane& lane, cc1d_i64 t_begin,
                         cc1d_i64 t_end, bool first, const bl_stage& stage_all, bl_state& st) {
    const cc1d_i64 L = row.L;
    // First position walked: dx near t_end needs g up to t_end + K - 1.
    const cc1d_i64 s_top = (t_end + CC1D_K < L ? t_end + CC1D_K : L) - 1;
    // Last position walked: the row's first chunk continues into x̃[-K .. -1] (initial_states) for dw and dinit.
    const cc1d_i64 s_bot = (CC1D_HAS_INITIAL_STATES && t_begin == 0) ? -CC1D_K : t_begin;

    bl_windows win;
#pragma unroll
    for (int i = 0; i <= CC1D_K; ++i)
#pragma unroll
        for (int c = 0; c < kBlCpt; ++c) win.G[i][c] = 0.0f;
#if CC1D_HAS_SEQ_IDX
#pragma unroll
    for (int m = 0; m < kBlIds; ++m) win.ids[m] = -1;
#endif

    int buffer = 0;
    if (kBlBuffers == 2 && s_top >= s_bot)
        bl_stage_batch(p, row, lane, s_top - kBlSteps + 1, s_bot, bl_buffer(stage_all, 0));
#if CC1D_SILU
    // The first step's window of x̃, asked for after the batch and widened after the weights.
    bl_raw xw[CC1D_K + 1];
#pragma unroll
    for (int i = 0; i <= CC1D_K; ++i) {
        const cc1d_i64 q = s_top - i;
        xw[i] = q >= s_bot - CC1D_K ? bl_load_x(p, row, lane, q) : bl_raw_zero();
#if CC1D_HAS_SEQ_IDX
        win.ids[CC1D_K - i] = bl_id_at(p, row, q);
#endif
    }
#endif
    if (first) bl_take_weights(p, lane, st);
#if CC1D_SILU
#pragma unroll
    for (int i = 0; i <= CC1D_K; ++i)
#pragma unroll
        for (int c = 0; c < kBlCpt; ++c) win.XW[i][c] = bl_float(xw[i], c);
#endif
    for (cc1d_i64 sb = s_top; sb >= s_bot; sb -= kBlSteps) {
        const bl_stage stage = bl_buffer(stage_all, buffer);
        if (kBlBuffers == 1) {
            bl_stage_batch(p, row, lane, sb - kBlSteps + 1, s_bot, stage);
            bl_wait_staged(0);
        } else {
            // The next batch goes into the other buffer before this one is walked.
            const bool more = sb - kBlSteps >= s_bot;
            if (more) bl_stage_batch(p, row, lane, sb - 2 * kBlSteps + 1, s_bot, bl_buffer(stage_all, buffer ^ 1));
            bl_wait_staged(more ? 1 : 0);
            buffer ^= 1;
        }
        bl_sync_row_ids(stage);   // the row's copies of this batch's ids, landed

        bl_bounds at;
        at.own = bl_steps_bound(sb - t_end + 1);
        at.bot = bl_steps_bound(sb - s_bot);
        at.pos = bl_steps_bound(sb);
        at.fin = bl_steps_bound(sb - (L - CC1D_K));
        x_t* pdx = row.dx + sb * p.dx_stride_l;
        const bool interior = lane.vec && at.own <= 0 && at.bot >= kBlSteps - 1 && at.pos >= kBlSteps - 1 &&
                              (!CC1D_HAS_FINAL_STATES || at.fin < 0);
#if CC1D_HAS_SEQ_IDX
        const int one_sequence = kBlIdFreeBatches && interior ? bl_batch_sequence(stage, win) : -1;
        if (one_sequence >= 0) {
            bl_walk_batch<false, false>(p, row, lane, stage, at, sb, pdx, win, st);
#pragma unroll
            for (int m = 0; m < kBlIds; ++m) win.ids[m] = one_sequence;   // what the steps would have moved in
        } else
#endif
        if (interior) bl_walk_batch<false, true>(p, row, lane, stage, at, sb, pdx, win, st);
        else bl_walk_batch<true, true>(p, row, lane, stage, at, sb, pdx, win, st);
    }
}

extern "C" __global__ void BL_LAUNCH_BOUNDS CC1D_ENTRY(cc1d_bwd_params p) {
    __shared__ __attribute__((aligned(128))) cc1d_vec16 bl_smem[(kBlSharedBytes + 15) / 16];
    // The reduce kernel may be scheduled now; it waits for this one to finish.
    cc1d_allow_dependent_launch();

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

    bl_stage stage;
    stage.x = reinterpret_cast<bl_raw*>(bl_smem);
    stage.d = stage.x + kBlBuffers * kBlBufferSlots;
    stage.id = reinterpret_cast<int*>(stage.d + kBlBuffers * kBlBufferSlots);
    stage.tid = (int)(threadIdx.y * blockDim.x + threadIdx.x);
    stage.row = (int)threadIdx.y;
    stage.tx = (int)threadIdx.x;
    // The lanes that walk: every lane of the row up to the end of D (lanes past it skip
    // the walk), all present here.
    stage.row_mask = kBlRowIds ? cc1d_ballot_group32(lane.n > 0) : 0u;
    stage.lanes = __popc(stage.row_mask);

    bl_state st;   // weights from the first walk on (bl_walk)
#pragma unroll
    for (int c = 0; c < kBlCpt; ++c) {
#pragma unroll
        for (int k = 0; k < CC1D_WIDTH; ++k) st.w[c][k] = st.dw[c][k] = 0.0f;
        st.bias[c] = st.db[c] = 0.0f;
    }

    if (lane.n > 0) {
        const cc1d_i64 units = p.batch * (p.tiles + p.tail_tiles);
        const cc1d_i64 first = group * p.units_per_part;
        const cc1d_i64 last = first + p.units_per_part < units ? first + p.units_per_part : units;
        for (cc1d_i64 u = first + threadIdx.y; u < last; u += blockDim.y) {
            const bl_unit unit = bl_unit_of(p, u);
            bl_row row;
            row.b = unit.b;
            row.L = p.seqlen;
            row.x = reinterpret_cast<const x_t*>(p.x) + row.b * p.x_stride_b + lane.c0 * p.x_stride_d;
            row.dout = reinterpret_cast<const x_t*>(p.dout) + row.b * p.dout_stride_b + lane.c0 * p.dout_stride_d;
            row.dx = reinterpret_cast<x_t*>(p.dx) + row.b * p.dx_stride_b + lane.c0 * p.dx_stride_d;
            row.seq = CC1D_HAS_SEQ_IDX ? p.seq_idx + row.b * p.seq_stride_b : 0;
            bl_walk(p, row, lane, unit.t_begin, unit.t_end, u == first + threadIdx.y, stage, st);
        }
    }
#pragma unroll
    for (int c = 0; c < kBlCpt; ++c) cc1d_bwd_release_sums(st.dw[c], st.db[c]);
    // The blockDim.y threads of each channel summed in index order (`red` aliases the staging slots).
    cc1d_bwd_block_sums(p, reinterpret_cast<float*>(bl_smem), group, lane.c0, lane.n, st, blockDim.y, blockDim.x,
                        threadIdx.y, threadIdx.x);
}

extern "C" __global__ void __launch_bounds__(CC1D_REDUCE_THREADS) CC1D_ENTRY_REDUCE(cc1d_bwd_params p) {
    cc1d_bwd_reduce(p);
}
