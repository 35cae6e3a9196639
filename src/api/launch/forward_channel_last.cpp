// Host side of the channel-last forward: fwd_channel_last_window.cu where
// CC1D_FWD_CL_USES_WINDOW (row-group tasks over time chunks, forward_window_plan.hpp; the
// same macro picks the template in codegen), fwd_channel_last.cu otherwise (one block of
// CC1D_FWD_CL_THREADS per tile of CC1D_FWD_CL_CHANNELS channels x CC1D_FWD_CL_TILE_ROWS
// time steps, 8 KiB of x, 16 KiB for wide kernels).
#include <algorithm>

#include "api/launch/forward_window_plan.hpp"
#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"
#include "params.h"

namespace cc1d::launch {
namespace forward {

// Assumed when the driver reports no occupancy (0 resident blocks).
constexpr int kFallbackResidentBlocks = 4;
// Short chunks (forward_window_plan.hpp): two batches a task, in place of wave-fitting
// chunks longer than four batches, up to width 4 (a halo of at most 3 rows on 16).
// Measured on an H100 (docs/perf.md, entries 46 and 50): widths 6 and 8 (5-7 halo rows on
// 16 or 32 steps) ran 5-26% slower, and 4x4096x512, whose wave-fitting chunk is 4
// batches, up to 10% slower. With seq_idx (short chunks run the short-chunk kernel, which
// walks them without ids and recomputes the steps near a sequence boundary), only chunks
// longer than eight batches: 4x5376x4096 (43 batches) 3-5% faster, 8x2048x1024 (8
// batches) 2-8% slower when measured (entry 50); four batches was mixed again after entry
// 53 (entry 55).
constexpr std::int64_t kShortChunkBatches = CC1D_FWD_CL_SHORT_CHUNK_BATCHES;
// Without seq_idx and from width 3 on (halos of 2 rows or more), devices with this much
// DRAM bandwidth or more cut to four batches instead: the H200 (4.8 TB/s behind the
// H100's L2, from which the halo rows are re-read) ran 4x5376x4096 bf16 SiLU 106.8 ->
// 97.9 us at 32 steps and 8x2048x1024 at widths 3-4 5% faster, where the H100 (3.35
// TB/s) ran 4x5376x4096 3% slower than at 16; at width 2 (one halo row) 8x2048x1024 ran
// 8% slower on the H200 too (docs/perf.md, entry 68).
constexpr std::int64_t kFastMemoryShortChunkBatches = 4;
constexpr int kFastMemoryMinWidth = 3;
constexpr std::int64_t kLongChunkBatches = 4;
constexpr std::int64_t kLongSeqChunkBatches = 8;
constexpr int kShortChunkMaxWidth = 4;

int window_batch_rows(int width, int x_bytes) {
    return CC1D_FWD_CL_WINDOW_BATCH_BYTES / (CC1D_FWD_CL_WINDOW_CHANNELS(width) * x_bytes);
}

WindowPlan plan_channel_last_window(std::int64_t batch, std::int64_t dim, std::int64_t seqlen, int width,
                                    int x_bytes, bool seq_idx, int sm_count, int resident_blocks, double memory_gbps) {
    constexpr std::int64_t kTasksPerBlock = CC1D_FWD_CL_WINDOW_THREADS / CC1D_FWD_CL_WINDOW_GROUP;
    const std::int64_t granule = window_batch_rows(width, x_bytes);
    const std::int64_t vectors = util::ceil_div(dim, CC1D_FWD_CL_WINDOW_CHANNELS(width));
    const std::int64_t rows = util::ceil_div(vectors, CC1D_FWD_CL_WINDOW_GROUP) * batch;   // task rows
    const std::int64_t wave = std::int64_t(std::max(sm_count, 1)) *
                              (resident_blocks > 0 ? resident_blocks : kFallbackResidentBlocks) * kTasksPerBlock;
    const std::int64_t chunks_per_row = std::max<std::int64_t>(1, wave / std::max<std::int64_t>(rows, 1));
    WindowPlan plan;
    plan.chunk_len = util::ceil_div(util::ceil_div(std::max<std::int64_t>(seqlen, 1), chunks_per_row), granule) * granule;
    const std::int64_t long_chunk = (seq_idx ? kLongSeqChunkBatches : kLongChunkBatches) * granule;
    const bool fast_memory_cut = !seq_idx && width >= kFastMemoryMinWidth && memory_gbps >= util::kFastMemoryGbps;
    const std::int64_t short_batches = fast_memory_cut ? kFastMemoryShortChunkBatches : kShortChunkBatches;
    if (width <= kShortChunkMaxWidth && plan.chunk_len > long_chunk) plan.chunk_len = short_batches * granule;
    plan.tiles = std::max<std::int64_t>(1, util::ceil_div(seqlen, plan.chunk_len));
    plan.tasks = rows * plan.tiles;
    plan.blocks = util::ceil_div(plan.tasks, kTasksPerBlock);
    return plan;
}

}  // namespace forward

namespace {

void launch_window(Launcher& launcher, const Variant& variant, const ForwardArgs& args, int x_bytes,
                   cc1d_fwd_params p) {
    const auto plan =
        forward::plan_channel_last_window(p.batch, p.dim, p.seqlen, variant.width, x_bytes, variant.seq_idx,
                                          launcher.multiprocessor_count(), launcher.main_resident_blocks(),
                                          launcher.memory_bandwidth_gbps());
    // The kernel splits task indices in 32 bits.
    if (plan.tasks >= (std::int64_t(1) << 32))
        fail(ErrorCode::unsupported, "forward: {} row-group tasks; at most 2^32 - 1 are supported (split the call)",
             plan.tasks);
    p.tiles = plan.tiles;
    p.chunk_len = plan.chunk_len;
    const int vector_bytes = CC1D_FWD_CL_WINDOW_CHANNELS(variant.width) * x_bytes;
    p.vector_ok = util::rows_vectorizable(args.x, 1, vector_bytes) && util::rows_vectorizable(args.out, 1, vector_bytes);
    // With seq_idx up to width 4, chunks of at most two batches run in the module's
    // short-chunk kernel (the main one compares ids throughout the walk).
    const bool short_chunks =
        CC1D_FWD_CL_SHORT_KERNEL(variant.width, x_bytes, variant.seq_idx) &&
        plan.chunk_len <= forward::kShortChunkBatches * forward::window_batch_rows(variant.width, x_bytes);
    device::Dim3 block;
    block.x = CC1D_FWD_CL_WINDOW_THREADS;
    launcher.launch(short_chunks ? Kernel::short_chunks : Kernel::main, util::flat_grid(plan.blocks), block, 0, &p,
                    sizeof(p));
}

void launch_tiles(Launcher& launcher, const Variant& variant, const ForwardArgs& args, int x_bytes,
                  cc1d_fwd_params p) {
    // The kernel's tile height: CHUNK steps for 16-bit x, CHUNK / 2 for fp32 (twice that
    // from width 9 on).
    const std::int64_t rows = CC1D_FWD_CL_TILE_ROWS(variant.width, x_bytes);
    // At least one tile: with L == 0 the block still writes final_states (from the halo).
    p.tiles = std::max<std::int64_t>(1, util::ceil_div(p.seqlen, rows));
    p.chunk_len = rows;
    p.vector_ok = util::rows_vectorizable(args.x, 1) && util::rows_vectorizable(args.out, 1);

    const std::int64_t groups = util::ceil_div(p.dim, CC1D_FWD_CL_CHANNELS);
    device::Dim3 block;
    block.x = CC1D_FWD_CL_THREADS;
    launcher.launch(Kernel::main, util::flat_grid(groups * p.tiles * p.batch), block, 0, &p, sizeof(p));
}

}  // namespace

void forward_channel_last(Launcher& launcher, const Variant& variant, const ForwardArgs& args) {
    const cc1d_fwd_params p = util::forward_params(args);
    const int x_bytes = static_cast<int>(dtype_size(variant.x_dtype));
    if (CC1D_FWD_CL_USES_WINDOW(variant.width, x_bytes))
        launch_window(launcher, variant, args, x_bytes, p);
    else
        launch_tiles(launcher, variant, args, x_bytes, p);
}

}  // namespace cc1d::launch
