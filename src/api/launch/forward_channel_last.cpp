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
// With seq_idx up to width 4 (forward_window_plan.hpp), chunks longer than eight
// batches are cut to two, which the module's short-chunk kernel walks without ids and
// recomputes near a sequence boundary: 4x5376x4096 (43 batches) 3-5% faster,
// 8x2048x1024 (8 batches) 2-8% slower when cut (docs/perf.md, entries 50 and 55). Without
// seq_idx these widths take the tile kernel (CC1D_FWD_CL_USES_WINDOW).
constexpr std::int64_t kShortChunkBatches = CC1D_FWD_CL_SHORT_CHUNK_BATCHES;
constexpr std::int64_t kLongSeqChunkBatches = 8;
constexpr int kShortChunkMaxWidth = 4;

int window_batch_rows(int width, int x_bytes) {
    return CC1D_FWD_CL_WINDOW_BATCH_BYTES / (CC1D_FWD_CL_WINDOW_CHANNELS(width) * x_bytes);
}

WindowPlan plan_channel_last_window(std::int64_t batch, std::int64_t dim, std::int64_t seqlen, int width,
                                    int x_bytes, bool seq_idx, int sm_count, int resident_blocks) {
    constexpr std::int64_t kTasksPerBlock = CC1D_FWD_CL_WINDOW_THREADS / CC1D_FWD_CL_WINDOW_GROUP;
    const std::int64_t granule = window_batch_rows(width, x_bytes);
    const std::int64_t vectors = util::ceil_div(dim, CC1D_FWD_CL_WINDOW_CHANNELS(width));
    const std::int64_t rows = util::ceil_div(vectors, CC1D_FWD_CL_WINDOW_GROUP) * batch;   // task rows
    const std::int64_t wave = std::int64_t(std::max(sm_count, 1)) *
                              (resident_blocks > 0 ? resident_blocks : kFallbackResidentBlocks) * kTasksPerBlock;
    const std::int64_t chunks_per_row = std::max<std::int64_t>(1, wave / std::max<std::int64_t>(rows, 1));
    WindowPlan plan;
    plan.chunk_len = util::ceil_div(util::ceil_div(std::max<std::int64_t>(seqlen, 1), chunks_per_row), granule) * granule;
    if (seq_idx && width <= kShortChunkMaxWidth && plan.chunk_len > kLongSeqChunkBatches * granule)
        plan.chunk_len = kShortChunkBatches * granule;
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
                                          launcher.multiprocessor_count(), launcher.main_resident_blocks());
    // The kernel splits task indices in 32 bits.
    if (plan.tasks >= (std::int64_t(1) << 32))
        fail(ErrorCode::unsupported, "forward: {} row-group tasks; at most 2^32 - 1 are supported (split the call)",
             plan.tasks);
    p.tiles = plan.tiles;
    p.chunk_len = plan.chunk_len;
    const int vector_bytes = CC1D_FWD_CL_WINDOW_CHANNELS(variant.width) * x_bytes;
    p.vector_ok = util::rows_vectorizable(args.x, 1, vector_bytes) && util::rows_vectorizable(args.out, 1, vector_bytes);
    // Chunks of at most two batches run in the module's short-chunk kernel (the main one
    // compares ids throughout the walk).
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
    if (CC1D_FWD_CL_USES_WINDOW(variant.width, x_bytes, variant.seq_idx))
        launch_window(launcher, variant, args, x_bytes, p);
    else
        launch_tiles(launcher, variant, args, x_bytes, p);
}

}  // namespace cc1d::launch
