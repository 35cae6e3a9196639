#include "api/launch/backward_small.hpp"

#include <algorithm>

#include "api/launch/backward_plan.hpp"
#include "api/launch/launch_util.hpp"
#include "common/env.hpp"

namespace cc1d::launch::backward {
namespace {

// Calls of up to this many elements (B * D * L). The small kernel loads element by
// element, one channel per thread; past a few hundred thousand elements the main kernels'
// vector loads move the bytes faster than this kernel saves latency.
constexpr std::int64_t kSmallMaxElements = std::int64_t(1) << 17;
// Dynamic shared memory any block may have without opting in to more.
constexpr std::int64_t kSmallSharedBytes = 48 * 1024;

// Channel-first calls of short rows (windows of up to 4 taps): rows of at most
// kShortRow positions, and of at most kShortRowMany where a thread takes two or more
// positions; a thread may take up to 16 of them in 16-bit (B·L up to 4,096), 8 in fp32.
// The main channel-first kernel tiles one row at a time with at least 64 threads of a
// 16-byte vector each, so a 16-bit row of 128 positions leaves 75% of its threads idle,
// one of 64 88% (fp32: 50% and 75%). Such calls take the small kernel up to the element
// counts below. 16-bit: on an H200 and an H100 2-66% faster (4x1024x128 bf16 on the H200
// 16.2 -> 10.7 us, 8x1024x128 22.3 -> 14.3 us, 16x1024x128 = 2^21 elements 34.9 -> 19.8
// us, 32x1024x64 59.7 -> 20.6 us, 32x512x128 34.2 -> 18.9 us). fp32: 7-34% faster up to
// 2^19 elements and 8 positions a thread on both, but 25% slower at 2^21 and 7-8% at 16
// positions a thread on rows of 128 (32x128x128), on the H200. Rows of 128 positions at
// one position a thread (2x2048x128 bf16) ran 4% faster on the H200 but 11% slower on the
// H100, and rows of 256 at four 19-29% slower (4x2048x256 bf16): those keep the general
// limits (docs/perf.md, entry 90).
constexpr std::int64_t kShortRow = 64;
constexpr std::int64_t kShortRowMany = 128;
constexpr int kShortRowMaxWidth = 4;

// How far a call may go in the small kernel: positions a thread and elements in all.
struct SmallLimits {
    int positions_per_thread;
    std::int64_t elements;
};
constexpr SmallLimits kGeneralLimits{CC1D_BWD_SMALL_POSITIONS, kSmallMaxElements};
constexpr SmallLimits kShortRowLimits16{16, std::int64_t(1) << 21};   // 16-bit x
constexpr SmallLimits kShortRowLimitsFp32{8, std::int64_t(1) << 19};
// Channel-last calls at widths up to 4 (runs in registers) of few positions take it
// further: a block holds several channels of them, and against the main kernels and
// their reduce launch it ran 8-25% faster on an H100 at 2^18 elements over 128 or 256
// positions (1x2048x128, 2x1024x128) and 0.5-17% at 2^19 over 128 (1x4096x128); over
// 512 positions it was even or slower at 2^18 (2x512x256 -17 to +3%) and up to 46% slower
// at 2^19, where a block holds one or two channels (docs/perf.md entry 138).
constexpr std::int64_t kRunsFewPositions = 128, kRunsSomePositions = 256;
constexpr SmallLimits kRunsFewPositionsLimits{CC1D_BWD_SMALL_POSITIONS, std::int64_t(1) << 19};
constexpr SmallLimits kRunsSomePositionsLimits{CC1D_BWD_SMALL_POSITIONS, std::int64_t(1) << 18};
// B * (L + K) <= positions * width < 2^16, the bound the kernel's index split needs.
static_assert(CC1D_BWD_SMALL_POSITIONS * CC1D_BWD_SMALL_THREADS * Variant::max_width < (1 << 16) &&
                  kShortRowLimits16.positions_per_thread * CC1D_BWD_SMALL_THREADS * kShortRowMaxWidth < (1 << 16) &&
                  kShortRowLimitsFp32.positions_per_thread <= kShortRowLimits16.positions_per_thread,
              "bwd_small.cu splits indices below 2^16 by multiplies");

// Channel-last calls at widths up to 4: bwd_small.cu walks runs of a row's positions in
// registers, so their limits, slots and shared memory follow their own rules below.
bool walks_runs(const Variant& v) {
    return v.layout == Layout::channel_last && CC1D_BWD_SMALL_IN_REGISTERS(v.width);
}

SmallLimits limits_for(const Variant& v, std::int64_t positions, std::int64_t seqlen) {
    if (walks_runs(v)) {
        if (positions <= kRunsFewPositions) return kRunsFewPositionsLimits;
        if (positions <= kRunsSomePositions) return kRunsSomePositionsLimits;
        return kGeneralLimits;
    }
    const bool short_rows = v.layout == Layout::channel_first && v.width <= kShortRowMaxWidth &&
                            (seqlen <= kShortRow || (seqlen <= kShortRowMany && positions > CC1D_BWD_SMALL_THREADS));
    if (!short_rows) return kGeneralLimits;
    return v.x_dtype == DType::fp32 ? kShortRowLimitsFp32 : kShortRowLimits16;
}

int log2_exact(std::int64_t v) {
    int s = 0;
    while ((std::int64_t(1) << s) < v) ++s;
    return s;
}

// A block of CC1D_BWD_SMALL_THREADS threads laid out for `units` units a channel
// (positions, or vectors): as many slots a channel as units (a power of two, at most the
// block), so a thread takes as few units as the block allows; the rest of the block takes
// more channels.
SmallPlan block_layout(std::int64_t units, std::int64_t dim) {
    SmallPlan plan;
    const int threads_log2 = log2_exact(CC1D_BWD_SMALL_THREADS);
    const int slots_log2 = std::min(log2_exact(units), threads_log2);
    plan.channel_shift = threads_log2 - slots_log2;
    plan.slots = 1 << slots_log2;
    plan.blocks = util::ceil_div(dim, std::int64_t(1) << plan.channel_shift);
    return plan;
}

// Largest calls (B * D * L) with SiLU where a thread takes two vectors: there each thread
// carries two vectors' activations, and past these sizes the main kernel's walk wins
// (H200, docs/perf.md entry 117: fp32 2x2048x1024 and 2x4096x1024 13% slower than the
// main kernel, 4x1024x512 4% faster; 16-bit 4x1024x1024 21% faster, 4x5376x1024 and
// 1x5376x4096 within 1% of it). One vector a thread, or no SiLU, has no limit: the
// largest such calls measured were 8-25% faster (8x4096x512, 2x4096x1024, 4x4096x512).
constexpr std::int64_t kTwoVectorSiluMaxElementsFp32 = std::int64_t(1) << 21;
constexpr std::int64_t kTwoVectorSiluMaxElements16 = std::int64_t(1) << 24;

// Calls the vector kernel (bwd_channel_first_vectors.cu) takes: channel-first, a
// module that has it, rows of whole 16-byte vectors in x, dout and dx, at most
// CC1D_BWD_CF_VECTOR_CHUNKS vectors a thread (with SiLU, two only up to the sizes
// above), and not switched off.
std::optional<SmallPlan> plan_vectors(const Variant& v, const BackwardArgs& args) {
    if (v.layout != Layout::channel_first ||
        !CC1D_BWD_CF_VECTORS_KERNEL(v.width, v.seq_idx, v.initial_states || v.final_states))
        return std::nullopt;
    const std::int64_t batch = args.x.shape[0], dim = args.x.shape[1], seqlen = args.x.shape[2];
    const std::int64_t vec = util::vector_elems(v.x_dtype);
    if (seqlen % vec != 0 || !vector_rows(v, args)) return std::nullopt;
    const std::int64_t chunks = batch * seqlen / vec;   // vectors a channel
    if (chunks > std::int64_t(CC1D_BWD_CF_VECTOR_CHUNKS) * CC1D_BWD_SMALL_THREADS) return std::nullopt;
    if (v.activation == Activation::silu && chunks > CC1D_BWD_SMALL_THREADS &&
        batch * dim * seqlen > (v.x_dtype == DType::fp32 ? kTwoVectorSiluMaxElementsFp32 : kTwoVectorSiluMaxElements16))
        return std::nullopt;
    if (env::flag("CC1D_DISABLE_SMALL_VECTORS")) return std::nullopt;
    SmallPlan plan = block_layout(chunks, dim);
    plan.vectors = true;
    plan.one_vector = chunks <= plan.slots;
    return plan;
}

// What a slot of the small kernel takes: channel-last calls at widths up to 4 walk runs
// of CC1D_BWD_SMALL_CL_RUN(silu) positions of a row in registers (the positions before a row
// start included when dinitial_states is asked for), so a channel needs a slot a run
// and a warp's lanes are neighbouring channels; the other calls a slot a position.
std::int64_t slot_units(const Variant& v, const BackwardArgs& args) {
    const std::int64_t batch = args.x.shape[0], seqlen = args.x.shape[2];
    if (!walks_runs(v)) return batch * seqlen;
    const std::int64_t before = v.initial_states && args.dinitial_states.present() ? v.width - 1 : 0;
    const bool silu = v.activation == Activation::silu;
    return batch * util::ceil_div(seqlen + before, std::int64_t(CC1D_BWD_SMALL_CL_RUN(silu)));
}

}  // namespace

std::optional<SmallPlan> plan_small(const Variant& variant, const BackwardArgs& args) {
    const std::int64_t batch = args.x.shape[0], dim = args.x.shape[1], seqlen = args.x.shape[2];
    const std::int64_t positions = batch * seqlen;
    if (positions < 1 || dim < 1) return std::nullopt;
    for (const Tensor* t : {&args.x, &args.dout, &args.dx, &args.seq_idx, &args.initial_states, &args.dinitial_states,
                            &args.dfinal_states})
        if (!util::offsets_fit_int32(*t)) return std::nullopt;
    if (env::flag("CC1D_DISABLE_SMALL_BACKWARD")) return std::nullopt;
    if (auto vectors = plan_vectors(variant, args)) return vectors;
    const SmallLimits limits = limits_for(variant, positions, seqlen);
    if (positions > std::int64_t(limits.positions_per_thread) * CC1D_BWD_SMALL_THREADS) return std::nullopt;
    if (positions * dim > limits.elements) return std::nullopt;

    SmallPlan plan = block_layout(slot_units(variant, args), dim);
    const std::int64_t channels = std::int64_t(1) << plan.channel_shift;
    // Shared memory as bwd_small.cu lays it out: the rows of x̃ with the K positions
    // before each start (or the lane groups' sums, whichever is larger; lanes of one
    // channel within 32 form a group), g of every position, and with seq_idx the ids.
    // Channel-last runs in registers use only the sums' part. Channel-first calls the
    // kernel walks in registers (one or two positions a thread) get the staged size too,
    // so which calls the small kernel takes does not depend on that choice of its.
    const bool cl = variant.layout == Layout::channel_last;
    const int lane_slots = cl ? std::max(1, 32 >> std::min(plan.channel_shift, 5)) : std::min(plan.slots, 32);
    const std::int64_t staged = batch * (seqlen + variant.width - 1);
    const std::int64_t sums = std::int64_t(variant.width + 1) * (plan.slots / lane_slots);
    const std::int64_t floats = walks_runs(variant)
                                    ? channels * sums
                                    : channels * (std::max(staged, sums) + positions) + (variant.seq_idx ? staged : 0);
    if (floats * std::int64_t(sizeof(float)) > kSmallSharedBytes) return std::nullopt;
    plan.shared_bytes = static_cast<unsigned>(floats * std::int64_t(sizeof(float)));
    return plan;
}

void run_small(Launcher& launcher, const Variant& variant, const BackwardArgs& args, const SmallPlan& plan) {
    cc1d_bwd_params p = make_params(variant, args);
    p.dw_mode = CC1D_DW_DIRECT;
    p.groups = 1;
    p.parts = 1;
    p.small_channel_shift = plan.channel_shift;
    device::Dim3 block;
    block.x = CC1D_BWD_SMALL_THREADS;
    const Kernel kernel = !plan.vectors ? Kernel::main : plan.one_vector ? Kernel::vectors_one : Kernel::vectors;
    launcher.launch(kernel, util::flat_grid(plan.blocks), block, plan.shared_bytes, &p, sizeof(p));
}

}  // namespace cc1d::launch::backward
