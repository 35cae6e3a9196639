// Host side shared by the two backward launchers: how a call is split into blocks (a
// Plan, one per layout), the kernel parameter block, and the launch sequence of the main
// and reduce kernels. backward_workspace.cpp sizes the workspace from the same plans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "api/launch/launch.hpp"
#include "params.h"

namespace cc1d::launch::backward {

// One way of splitting the (batch, tile) units of every channel over blocks.
struct Plan {
    device::Dim3 block;
    unsigned shared_bytes = 0;
    std::int64_t channel_groups = 0;   // blocks across channels (channel-first: dim)
    std::int64_t tiles = 1;            // tiles (chunks) per row, at least 1
    std::int64_t tile_len = 0;         // time steps per tile (chunk)
    std::int64_t units_per_part = 1;   // units a part (a block, or a block row) walks
    std::int64_t parts = 1;            // unit groups: partial rows of dweight/dbias sums
    int ilp = 1;                       // channel-first: vectors per thread per tile
    bool stage_async = false;          // channel-first 16-bit: tiles staged by cp.async (where it can)
    std::int64_t seq_mask_stride = 0;  // channel-first with seq_idx: masks a row in the workspace (else 0)
    bool tile = false;                 // channel-last: the tile kernel runs (the tiled module's; else the walk)
    bool cluster_sums = false;         // channel-first: a channel's parts run as one thread-block cluster,
                                       // which sums them (CC1D_DW_CLUSTER; sums_in_clusters)
    // Channel-last register walk: each row's tail, [tail_start, seqlen), in tail_tiles chunks
    // of tail_len steps walked by blocks after every long walk's (none when tail_tiles is 0;
    // the `tiles` chunks of tile_len then reach seqlen).
    std::int64_t tail_start = 0, tail_len = 0, tail_tiles = 0;
};

// The plans. `sm_count` sets how many blocks make the GPU busy; in both layouts the parts
// are the larger of a rule that never gives fewer for a larger count and one that never
// gives fewer for a smaller (backward_workspace_bytes relies on both). `fast_memory`: the device's
// DRAM is fast (util::fast_memory), which decides how channel-first 16-bit tiles are staged.
// `own_boundaries`: the tiles follow x's rows' own 16-byte boundaries (follows_own_boundaries,
// which the shorter form asks; the workspace query plans both ways where they may).
Plan plan_channel_first(const Variant& variant, const BackwardArgs& args, int sm_count, bool fast_memory);
Plan plan_channel_first(const Variant& variant, const BackwardArgs& args, int sm_count, bool fast_memory,
                        bool own_boundaries);
// How many blocks of the module's main kernel (of `block` threads and `shared_bytes` of
// dynamic shared memory) an SM holds: Launcher::resident_blocks, 0 where unknown (taken
// as the wave's). The channel-last plan asks only where it would take a tail of short
// walks, and takes none where the answer is more than its wave plans.
using ResidentBlocks = std::function<int(device::Dim3 block, unsigned shared_bytes)>;
Plan plan_channel_last(const Variant& variant, const BackwardArgs& args, int sm_count,
                       const ResidentBlocks& resident_blocks);
// The same with the answer given (the workspace query, tests).
Plan plan_channel_last(const Variant& variant, const BackwardArgs& args, int sm_count, int resident_blocks = 0);
// The two plans plan_channel_last chooses between by takes_tile, each whatever that says:
// the workspace query covers both for calls the tile kernel fits, since
// CC1D_DISABLE_BACKWARD_TILE may change between the query and the call.
Plan plan_channel_last_tile(const Variant& variant, const BackwardArgs& args, int sm_count);
Plan plan_channel_last_walk(const Variant& variant, const BackwardArgs& args, int sm_count,
                            const ResidentBlocks& resident_blocks);
Plan plan_channel_last_walk(const Variant& variant, const BackwardArgs& args, int sm_count, int resident_blocks = 0);

// The most partial rows the tail of plan_channel_last adds to a call's, on any device
// (backward_workspace_bytes: a tail comes and goes with the multiprocessor count).
std::int64_t channel_last_tail_parts(const Variant& variant, const BackwardArgs& args);

// Whether a channel-first plan's parts are summed within thread-block clusters
// (cluster_sums: a cluster a channel, its parts its blocks, so no partial rows and no
// reduce launch) on a device that launches clusters and holds `resident_clusters` of
// plan.parts blocks of its main kernel at once (0: cannot say): where it has 2 to
// CC1D_BWD_MAX_CLUSTER_PARTS parts and every channel's cluster is resident at once.
bool sums_in_clusters(const Plan& plan, int resident_clusters);
// The part of that rule the plan alone decides (its parts and grid), so a launcher asks
// the device about residency only for plans that pass it.
bool may_sum_in_clusters(const Plan& plan);

// Where the blocks put their dweight/dbias sums (CC1D_DW_*).
int dw_mode(const Variant& variant, const BackwardArgs& args, const Plan& plan);

// Floats from one partial row of `partials` to the next: a row's dim * (width + 1) sums,
// and a 128-byte line more where that is a power of two of 2,048 floats or more. The
// reduce kernel reads the same column of many rows at once, and rows a power of two of
// 8 KiB or more apart are likely to meet in the same DRAM channels: on an H100 (Nsight
// Compute, docs/perf.md entry 152) the fp32 channel-last reduce of 8x2048x1024 at width
// 3 (8,192 sums a row) took 6.6-6.9 us to read 1.42 MB, width 4's (10,240) 5.5-6.2 us for
// 1.77 MB, and the width-3 calls ran 1.0-1.2 us slower than width 4's though their main
// kernel alone was faster; with the padding (entry 156) those calls run 1.5-2.0% faster
// and width 3 no longer trails width 4.
inline constexpr std::int64_t kPartialsPaddedFrom = 2048;
inline constexpr std::int64_t kPartialsRowPad = 32;
std::int64_t partials_row_floats(const Variant& variant, std::int64_t dim);

// Workspace bytes a plan needs: `partials` (none when blocks write dweight/dbias
// themselves), then the seq masks of plan.seq_mask_stride (from a 256-byte boundary).
std::size_t workspace_bytes(const Variant& variant, const BackwardArgs& args, const Plan& plan);

// Whether x, dout and dx all have rows of whole 16-byte vectors along the layout's
// contiguous axis (L channel-first, D channel-last): cc1d_bwd_params.vector_ok.
bool vector_rows(const Variant& variant, const BackwardArgs& args);

// Whether a call whose rows are not all whole 16-byte vectors (vector_rows) runs the
// module of such rows (Variant::shifted_rows: two aligned loads and a shift a vector where
// a row has unit stride), when the variant has one and the call is not empty: channel-first
// in 16-bit (bwd_channel_first.cu) when x, dout or dx has unit stride along L; channel-last
// on the tile kernel (variant.tiled, as takes_tile sets it; bwd_channel_last_tile.cu).
// CC1D_DISABLE_SHIFTED_ROWS=1 keeps such calls on the main module (element-by-element loads
// and stores).
bool takes_shifted_rows(const Variant& variant, const BackwardArgs& args);

// Whether a channel-last call runs the tile kernel (bwd_channel_last_tile.cu, the module of
// Variant::tiled) rather than the register walk: calls of up to 2^27 elements (fp32: 2^25,
// with rows of whole 16-byte vectors) of the variants that have it (up to width 4 without
// states). plan_channel_last plans by it, the Runtime loads the module by it.
// CC1D_DISABLE_BACKWARD_TILE=1 (read on every call) sends every call to the register walk;
// tile_fits is the same rule without that switch.
bool takes_tile(const Variant& variant, const BackwardArgs& args);
bool tile_fits(const Variant& variant, const BackwardArgs& args);

// Whether a channel-first call's tiles follow x's rows' own 16-byte boundaries: the
// shifted-rows module without seq_idx, x of unit stride along L at whole-element
// addresses (bwd_channel_first.cu, BF_OWN_BOUNDARIES). cc1d_bwd_params.vector_ok then says
// so, and the plan leaves room for a row's first vector to start up to a vector before it.
// CC1D_DISABLE_OWN_BOUNDARIES=1 gives such calls the module's shifted loads instead.
bool follows_own_boundaries(const Variant& variant, const BackwardArgs& args);
// The same rule without CC1D_DISABLE_OWN_BOUNDARIES.
bool may_follow_own_boundaries(const Variant& variant, const BackwardArgs& args);

// Pointers, shapes, strides and flags; the split and the modes are run()'s.
cc1d_bwd_params make_params(const Variant& variant, const BackwardArgs& args);

// Runs the reduce kernel splits `parts` rows into: 1 up to CC1D_REDUCE_BATCH rows, else
// the fewest powers of two (at most CC1D_REDUCE_MAX_SLICES) that leave a run at most
// CC1D_REDUCE_BATCH rows long. The result divides CC1D_REDUCE_THREADS.
int reduce_slices(std::int64_t parts);

// Sets the reduce kernel's split of p.parts rows into `slices` runs (a power of two that
// divides CC1D_REDUCE_THREADS): reduce_slices, the column shift and the rows per run, so
// the kernel shifts and masks instead of dividing.
void set_reduce_split(cc1d_bwd_params& p, int slices);

// Zero (atomic target), seq masks, main kernel, reduce: whichever the plan and variant need.
void run(Launcher& launcher, const Variant& variant, const BackwardArgs& args, const Plan& plan, cc1d_bwd_params p);

}  // namespace cc1d::launch::backward
