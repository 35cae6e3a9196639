#include "api/launch/backward_plan.hpp"

#include <cstdint>

#include "api/launch/launch_util.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"

namespace cc1d::launch::backward {
namespace {

bool present(const Tensor& t) { return t.present(); }

// Bytes from one partial row to the next.
std::size_t row_bytes(const Variant& variant, const BackwardArgs& args) {
    return static_cast<std::size_t>(partials_row_floats(variant, args.x.shape[1])) * sizeof(float);
}

// Bytes of `partials` a plan needs (0 when blocks write dweight/dbias themselves).
std::size_t partials_bytes(const Variant& variant, const BackwardArgs& args, const Plan& plan) {
    switch (dw_mode(variant, args, plan)) {
        case CC1D_DW_PARTIAL_ROWS: return static_cast<std::size_t>(plan.parts) * row_bytes(variant, args);
        case CC1D_DW_ATOMIC_PARTIAL: return row_bytes(variant, args);
        default: return 0;
    }
}

// The masks start at the first 256-byte boundary after the partials, wherever the
// workspace starts (a caller's need only be 4-byte aligned): vector loads of them need 16.
constexpr std::size_t kSeqMasksAlign = 256;

}  // namespace

std::int64_t partials_row_floats(const Variant& variant, std::int64_t dim) {
    const std::int64_t sums = dim * (variant.width + 1);
    const bool power_of_two = sums >= kPartialsPaddedFrom && (sums & (sums - 1)) == 0;
    return power_of_two ? sums + kPartialsRowPad : sums;
}

std::size_t workspace_bytes(const Variant& variant, const BackwardArgs& args, const Plan& plan) {
    if (plan.seq_mask_stride == 0) return partials_bytes(variant, args, plan);
    const std::size_t masks = static_cast<std::size_t>(args.x.shape[0]) *
                              static_cast<std::size_t>(plan.seq_mask_stride) * CC1D_SEQ_MASK_BYTES(variant.width);
    return partials_bytes(variant, args, plan) + kSeqMasksAlign - 1 + masks;
}

bool may_sum_in_clusters(const Plan& plan) {
    // (The grid is (channels, parts): its x at most 2^31 - 1.)
    return plan.parts >= 2 && plan.parts <= CC1D_BWD_MAX_CLUSTER_PARTS &&
           plan.channel_groups <= std::int64_t(0x7fffffff);
}

bool sums_in_clusters(const Plan& plan, int resident_clusters) {
    if (!may_sum_in_clusters(plan)) return false;
    // Only where every cluster starts at once: a cluster's blocks wait for each other at
    // its end, holding their slots, and a device holds fewer blocks in clusters than
    // without (an H100 at most 8 an SM, each cluster within one GPC). On an H100,
    // 4x256x4096 in 4 parts, 1,024 blocks where the default placement fits 992 in
    // clusters (10 an SM without), ran 12-22% slower in clusters, and 1-5% slower in 3
    // parts that fit; fp32 4x5376x4096, many waves, 1-2.4% slower. Placed for load
    // balance (Device::launch_in_clusters) 1,056 fit, and it ran 1-7% faster (docs/perf.md
    // entry 139).
    return resident_clusters >= plan.channel_groups;
}

int dw_mode(const Variant& variant, const BackwardArgs& args, const Plan& plan) {
    // One part: each block is the only one for its channels, so it writes dweight/dbias
    // itself (in order, hence deterministic on either path) and no reduce kernel runs.
    if (plan.parts == 1) return CC1D_DW_DIRECT;
    // Parts in a cluster: its rank 0 adds them in order (deterministic on either path).
    if (plan.cluster_sums) return CC1D_DW_CLUSTER;
    if (variant.deterministic) return CC1D_DW_PARTIAL_ROWS;
    return args.dweight.dtype == DType::fp32 ? CC1D_DW_ATOMIC_DIRECT : CC1D_DW_ATOMIC_PARTIAL;
}

bool vector_rows(const Variant& variant, const BackwardArgs& args) {
    // Vectors run along L (channel-first) or D (channel-last) in x, dout and dx alike.
    const int axis = variant.layout == Layout::channel_last ? 1 : 2;
    return util::rows_vectorizable(args.x, axis) && util::rows_vectorizable(args.dout, axis) &&
           util::rows_vectorizable(args.dx, axis);
}

bool takes_shifted_rows(const Variant& variant, const BackwardArgs& args) {
    if (!util::shifted_rows_allowed(variant, args.x) || vector_rows(variant, args)) return false;
    if (variant.layout == Layout::channel_last) return true;   // (channel-last rows have unit stride along D)
    return util::unit_stride(args.x, 2) || util::unit_stride(args.dout, 2) || util::unit_stride(args.dx, 2);
}

bool may_follow_own_boundaries(const Variant& variant, const BackwardArgs& args) {
    const Variant v = variant.normalized();
    return v.layout == Layout::channel_first && v.shifted_rows && !v.seq_idx && util::unit_stride(args.x, 2) &&
           util::element_aligned(args.x);
}

bool follows_own_boundaries(const Variant& variant, const BackwardArgs& args) {
    return may_follow_own_boundaries(variant, args) && !env::flag("CC1D_DISABLE_OWN_BOUNDARIES");
}

cc1d_bwd_params make_params(const Variant& variant, const BackwardArgs& args) {
    cc1d_bwd_params p{};
    p.x = args.x.data;
    p.weight = args.weight.data;
    p.bias = present(args.bias) ? args.bias.data : nullptr;
    p.dout = args.dout.data;
    p.dx = args.dx.mutable_data();
    p.seq_idx = present(args.seq_idx) ? static_cast<const int*>(args.seq_idx.data) : nullptr;
    p.initial_states = present(args.initial_states) ? args.initial_states.data : nullptr;
    p.dinitial_states = present(args.dinitial_states) ? args.dinitial_states.mutable_data() : nullptr;
    p.dfinal_states = present(args.dfinal_states) ? args.dfinal_states.data : nullptr;
    p.dweight = args.dweight.mutable_data();
    p.dbias = present(args.dbias) ? args.dbias.mutable_data() : nullptr;
    p.batch = args.x.shape[0];
    p.dim = args.x.shape[1];
    p.seqlen = args.x.shape[2];
    p.x_stride_b = args.x.strides[0];
    p.x_stride_d = args.x.strides[1];
    p.x_stride_l = args.x.strides[2];
    p.dout_stride_b = args.dout.strides[0];
    p.dout_stride_d = args.dout.strides[1];
    p.dout_stride_l = args.dout.strides[2];
    p.dx_stride_b = args.dx.strides[0];
    p.dx_stride_d = args.dx.strides[1];
    p.dx_stride_l = args.dx.strides[2];
    p.w_stride_d = args.weight.strides[0];
    p.w_stride_k = args.weight.strides[1];
    if (present(args.bias)) p.bias_stride = args.bias.strides[0];
    if (present(args.seq_idx)) {
        p.seq_stride_b = args.seq_idx.strides[0];
        p.seq_stride_l = args.seq_idx.strides[1];
    }
    if (present(args.initial_states)) {
        p.init_stride_b = args.initial_states.strides[0];
        p.init_stride_d = args.initial_states.strides[1];
        p.init_stride_k = args.initial_states.strides[2];
    }
    if (present(args.dinitial_states)) {
        p.dinit_stride_b = args.dinitial_states.strides[0];
        p.dinit_stride_d = args.dinitial_states.strides[1];
        p.dinit_stride_k = args.dinitial_states.strides[2];
    }
    if (present(args.dfinal_states)) {
        p.dfinal_stride_b = args.dfinal_states.strides[0];
        p.dfinal_stride_d = args.dfinal_states.strides[1];
        p.dfinal_stride_k = args.dfinal_states.strides[2];
    }
    p.dw_stride_d = args.dweight.strides[0];
    p.dw_stride_k = args.dweight.strides[1];
    if (present(args.dbias)) p.db_stride = args.dbias.strides[0];
    p.vector_ok = vector_rows(variant, args) || follows_own_boundaries(variant, args);
    p.dw_is_fp32 = args.dweight.dtype == DType::fp32;
    p.accumulate = args.accumulate;
    return p;
}

int reduce_slices(std::int64_t parts) {
    int slices = 1;
    while (slices < CC1D_REDUCE_MAX_SLICES && parts > std::int64_t(slices) * CC1D_REDUCE_BATCH) slices *= 2;
    return slices;
}

void set_reduce_split(cc1d_bwd_params& p, int slices) {
    p.reduce_slices = slices;
    int shift = 0;
    while ((2 << shift) * slices <= CC1D_REDUCE_THREADS) ++shift;
    p.reduce_column_shift = shift;
    p.reduce_run_rows = util::ceil_div(p.parts, std::int64_t(slices));
}

void run(Launcher& launcher, const Variant& variant, const BackwardArgs& args, const Plan& plan, cc1d_bwd_params p) {
    if (plan.channel_groups == 0) return;   // dim == 0: nothing to compute or write
    const int mode = dw_mode(variant, args, plan);
    p.tiles = plan.tiles;
    p.tile_len = plan.tile_len;
    p.tail_start = plan.tail_tiles > 0 ? plan.tail_start : p.seqlen;
    p.tail_len = plan.tail_len;
    p.tail_tiles = plan.tail_tiles;
    p.units_per_part = plan.units_per_part;
    p.groups = plan.parts;
    p.ilp = plan.ilp;
    p.stage_async = plan.stage_async;
    p.dw_mode = mode;
    // `parts` counts the rows in `partials` the reduce kernel sums: one on the atomic path.
    p.parts = mode == CC1D_DW_PARTIAL_ROWS ? plan.parts : 1;
    p.partials_row = partials_row_floats(variant, p.dim);
    if (const std::size_t bytes = workspace_bytes(variant, args, plan)) {
        char* workspace = static_cast<char*>(launcher.workspace(bytes));
        const std::size_t partials = partials_bytes(variant, args, plan);
        if (partials != 0) p.partials = reinterpret_cast<float*>(workspace);
        if (plan.seq_mask_stride != 0) {
            const auto after = reinterpret_cast<std::uintptr_t>(workspace + partials);
            p.seq_masks = reinterpret_cast<void*>((after + kSeqMasksAlign - 1) / kSeqMasksAlign * kSeqMasksAlign);
            p.seq_mask_stride = plan.seq_mask_stride;
        }
    }

    device::Dim3 reduce_block;
    reduce_block.x = CC1D_REDUCE_THREADS;
    // The reduce kernel's grid: its blocks split the rows into `slices` runs when there are
    // more than one batch of them (a power of two, so the slices divide the block).
    auto reduce_grid = [&](int slices) {
        const std::int64_t columns = CC1D_REDUCE_THREADS / slices;
        const device::Dim3 grid = util::flat_grid(util::ceil_div(p.dim * (variant.width + 1), columns));
        if (grid.y > 1)
            fail(ErrorCode::unsupported, "backward: dim {} is too large for the dweight reduction (at most {})", p.dim,
                 util::kMaxGridX * columns / (variant.width + 1));
        return grid;
    };
    const int sum_slices = reduce_slices(p.parts);
    const device::Dim3 zero_grid = reduce_grid(1), sum_grid = reduce_grid(sum_slices);   // (before any launch)

    // The atomic targets start from zero; with accumulate the blocks add into the caller's
    // dweight/dbias directly, so only a partial row needs clearing then.
    if (mode == CC1D_DW_ATOMIC_PARTIAL || (mode == CC1D_DW_ATOMIC_DIRECT && !args.accumulate)) {
        p.reduce_mode = CC1D_REDUCE_ZERO;
        set_reduce_split(p, 1);
        launcher.launch(Kernel::reduce, zero_grid, reduce_block, 0, &p, sizeof(p));
    }
    // The seq masks every channel's blocks read (channel-first with seq_idx, L > 0).
    if (plan.seq_mask_stride != 0 && p.batch > 0) {
        p.reduce_mode = CC1D_REDUCE_SEQ_MASKS;
        set_reduce_split(p, 1);
        const std::int64_t masks = p.batch * plan.seq_mask_stride;
        launcher.launch_overlapped(Kernel::reduce, util::flat_grid(util::ceil_div(masks, std::int64_t(CC1D_REDUCE_THREADS))),
                                   reduce_block, 0, &p, sizeof(p));
    }
    // Each kernel after the first may start while the one before it runs (overlapped
    // launches): the masks kernel waits for the zeroing, the main kernel for the kernel
    // before it (before its sums go out, or with seq_idx before its first masks), the
    // reduce kernel for the main kernel before it reads a row, and their launch latency
    // and set-up hide behind the kernel before.
    p.reduce_mode = CC1D_REDUCE_SUM;
    if (plan.cluster_sums) {
        // Grid (channels, parts): block y * channels + x is part y of channel x, as in the
        // flat grid, and a cluster of (1, parts) is one channel's parts.
        device::Dim3 grid;
        grid.x = static_cast<unsigned>(plan.channel_groups);
        grid.y = static_cast<unsigned>(plan.parts);
        launcher.launch_in_clusters(Kernel::main, grid, plan.block, plan.shared_bytes, &p, sizeof(p), grid.y);
    } else {
        launcher.launch_overlapped(Kernel::main, util::flat_grid(plan.channel_groups * plan.parts), plan.block,
                                   plan.shared_bytes, &p, sizeof(p));
    }
    if (mode == CC1D_DW_PARTIAL_ROWS || mode == CC1D_DW_ATOMIC_PARTIAL) {
        set_reduce_split(p, sum_slices);
        const unsigned run_sums_bytes = sum_slices > 1 ? CC1D_REDUCE_THREADS * sizeof(float) : 0;
        launcher.launch_overlapped(Kernel::reduce, sum_grid, reduce_block, run_sums_bytes, &p, sizeof(p));
    }
}

}  // namespace cc1d::launch::backward
