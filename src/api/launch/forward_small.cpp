#include "api/launch/forward_small.hpp"

#include "api/launch/launch_util.hpp"
#include "common/env.hpp"

namespace cc1d::launch::forward {
namespace {

// Calls of up to this many outputs (B * D * L). A thread loads its W taps element by
// element, mostly from lines its neighbours brought in; past this size the main kernels,
// a thread per vector or batch of steps, move the bytes faster than this kernel saves
// latency (measured: docs/perf.md, entry 60).
constexpr std::int64_t kSmallMaxOutputs = std::int64_t(1) << 17;
// Channel-first calls of rows of at most kShortRow positions, up to kShortRowOutputs. The
// main channel-first kernel gives each row at least a warp of 8 (fp32) or 32 (16-bit)
// positions a thread, so such a row keeps 2-8 of its 32 threads busy; these calls ran
// 20-27% faster here on an H200 (2x8192x64 15.0 -> 11.0 us) and 23-54% on an H100. Rows
// of 128 positions ran 2-13% slower here (docs/perf.md, entry 91), so they keep
// kSmallMaxOutputs.
constexpr std::int64_t kShortRow = 64;
constexpr std::int64_t kShortRowOutputs = std::int64_t(1) << 21;

}  // namespace

std::optional<SmallPlan> plan_small(const Variant& variant, const ForwardArgs& args) {
    const std::int64_t batch = args.x.shape[0], dim = args.x.shape[1], seqlen = args.x.shape[2];
    if (batch < 1 || dim < 1 || seqlen < 1) return std::nullopt;
    const bool short_rows = variant.layout == Layout::channel_first && seqlen <= kShortRow;
    if (batch * dim * seqlen > (short_rows ? kShortRowOutputs : kSmallMaxOutputs)) return std::nullopt;
    for (const Tensor* t : {&args.x, &args.weight, &args.bias, &args.out, &args.seq_idx, &args.initial_states,
                            &args.final_states})
        if (!util::offsets_fit_int32(*t)) return std::nullopt;
    if (env::flag("CC1D_DISABLE_SMALL_FORWARD")) return std::nullopt;
    SmallPlan plan;
    plan.blocks = util::ceil_div(batch * dim * seqlen, CC1D_FWD_SMALL_THREADS);
    return plan;
}

void run_small(Launcher& launcher, const Variant& variant, const ForwardArgs& args, const SmallPlan& plan) {
    cc1d_fwd_params p = util::forward_params(args);
    // Lanes follow the unit stride: the flat index is (b, d, t) channel-first, (b, t, d)
    // channel-last, split by its two fastest extents.
    const bool last = variant.layout == Layout::channel_last;
    p.small_by_inner = util::divisor_of(static_cast<std::uint32_t>(last ? p.dim : p.seqlen));
    p.small_by_middle = util::divisor_of(static_cast<std::uint32_t>(last ? p.seqlen : p.dim));
    device::Dim3 block;
    block.x = CC1D_FWD_SMALL_THREADS;
    launcher.launch(Kernel::main, util::flat_grid(plan.blocks), block, 0, &p, sizeof(p));
}

}  // namespace cc1d::launch::forward
