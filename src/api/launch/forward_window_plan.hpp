// How the channel-last forward's register-window kernel (fwd_channel_last_window.cu)
// splits a call: row-group tasks of 32 threads, each walking one chunk of time steps.
#pragma once

#include <cstdint>

namespace cc1d::launch::forward {

struct WindowPlan {
    std::int64_t chunk_len = 0;   // time steps a task walks (a multiple of every batch of rows)
    std::int64_t tiles = 1;       // chunks per batch row, at least 1 (L == 0 still writes final states)
    std::int64_t tasks = 0;       // row groups across D x tiles x batch
    std::int64_t blocks = 0;      // CC1D_FWD_CL_WINDOW_THREADS / 32 tasks each
};

// A thread walks its chunk from start to end, so a task lives as long as the whole call
// and a grid just past one resident wave leaves a tail of a few tasks per SM (8x2048x1024
// in 16-bit: 1.29 waves, 57% of DRAM bandwidth). So the chunk is the shortest multiple of
// `granule` steps (the rows a thread loads at once) whose tasks fit one wave of
// `resident_blocks` blocks per multiprocessor: as many chunks per row as the wave holds.
// Calls with more rows than the wave hold one chunk per row. A call too small to fill the
// wave gets one batch per task, so each task issues all of its loads at once.
// With seq_idx up to width 4, a wave-fitting chunk longer than eight batches is cut to
// two (16 steps in 16-bit), in as many waves as that takes, for the module's short-chunk
// kernel. Cutting helped because the blocks in flight then hold a short, contiguous
// stretch of rows, as a copy's do, where long walks that drift apart spread the reads over
// many rows at once (4x5376x4096 bf16 on an H100: 134.9 -> 123.4 us; docs/perf.md, entry
// 46, when 16-bit calls without seq_idx took this kernel too; they take the tile kernel
// since entry 87). Halo rows cost 3 in 16 at most, mostly from L2 (the neighbouring
// chunk's task runs at the same time).
WindowPlan plan_channel_last_window(std::int64_t batch, std::int64_t dim, std::int64_t seqlen, int width,
                                    int x_bytes, bool seq_idx, int sm_count, int resident_blocks);

// Time steps a thread loads at once (CC1D_FWD_CL_WINDOW_BATCH_BYTES of its channels).
int window_batch_rows(int width, int x_bytes);

}  // namespace cc1d::launch::forward
