// Channel-first backward calls whose channels are split into 2 to 8 parts: where the
// device launches thread-block clusters and holds every channel's cluster at once, one launch of the main kernel whose grid is (channels,
// parts) in clusters of (1, parts), with the sums added within each cluster
// (CC1D_DW_CLUSTER: no partial rows, no zeroing or reduce launch, on either path); else
// the partial rows and the reduce kernel (or atomics) as before. Calls of one part or of
// more parts than a cluster holds never take clusters.
#include <doctest/doctest.h>

#include <cstdint>

#include "api/launch/backward_plan.hpp"
#include "support/backward_variants.hpp"
#include "support/fake_tensors.hpp"
#include "support/recording_launcher.hpp"
#include "params.h"

using namespace cc1d;
using namespace cc1d::launch;

namespace {

Variant channel_first_variant(DType dtype, bool deterministic, bool seq_idx = false) {
    Variant v = test::silu_backward(dtype, Layout::channel_first);
    v.deterministic = deterministic;
    v.seq_idx = seq_idx;
    return v;
}

// A whole contiguous call's tensors at fake aligned addresses (no small call: these
// shapes are past the small-call limits).
BackwardArgs call_args(std::int64_t B, std::int64_t D, std::int64_t L, DType dtype, bool deterministic,
                       bool seq_idx = false) {
    BackwardArgs a;
    a.x = test::fake_bdl(0, dtype, B, D, L, Layout::channel_first);
    a.dout = test::fake_bdl(1, dtype, B, D, L, Layout::channel_first);
    a.dx = test::fake_bdl(2, dtype, B, D, L, Layout::channel_first);
    a.weight = Tensor(test::fake_address(3), dtype, {D, 4});
    a.dweight = Tensor(test::fake_address(4), DType::fp32, {D, 4});
    a.bias = Tensor(test::fake_address(5), dtype, {D});
    a.dbias = Tensor(test::fake_address(6), DType::fp32, {D});
    if (seq_idx) a.seq_idx = Tensor(test::fake_address(7), DType::int32, {B, L});
    a.activation = Activation::silu;
    a.deterministic = deterministic;
    return a;
}

struct Shape {
    std::int64_t B, D, L;
    DType dtype;
};

}  // namespace

// Parts in clusters only where every channel's cluster is resident at once, 2 to 8 of them.
TEST_CASE("channel-first backward plan: parts in clusters only where every channel's cluster is resident") {
    backward::Plan plan;
    plan.channel_groups = 256;
    plan.parts = 4;
    plan.units_per_part = 2;
    CHECK(backward::sums_in_clusters(plan, 256));
    CHECK(backward::sums_in_clusters(plan, 1000));
    CHECK_FALSE(backward::sums_in_clusters(plan, 248));   // an H100's answer for 10-block-an-SM kernels
    CHECK_FALSE(backward::sums_in_clusters(plan, 0));     // a device that cannot say
    for (std::int64_t parts : {std::int64_t(1), std::int64_t(CC1D_BWD_MAX_CLUSTER_PARTS + 1), std::int64_t(16)}) {
        plan.parts = parts;
        CHECK_FALSE(backward::sums_in_clusters(plan, 1 << 20));
    }
    for (std::int64_t parts : {std::int64_t(2), std::int64_t(CC1D_BWD_MAX_CLUSTER_PARTS)}) {
        plan.parts = parts;
        CHECK(backward::sums_in_clusters(plan, 1 << 20));
    }
}

TEST_CASE("channel-first backward call: one launch in clusters where they fit, the reduce kernel elsewhere") {
    // On 132 multiprocessors, 8 cluster blocks an SM: 4x256x4096 (4 parts, 256 clusters of
    // 264) and 3x100x3001 (6 parts) fit; fp32 4x5376x4096 (4 parts, 5,376 channels) does not.
    for (const Shape& s : {Shape{4, 256, 4096, DType::bf16}, Shape{4, 256, 4096, DType::fp32},
                           Shape{3, 100, 3001, DType::fp16}, Shape{4, 5376, 4096, DType::fp32}})
        for (bool deterministic : {true, false})
            for (bool seq_idx : {false, true}) {
                INFO("B=", s.B, " D=", s.D, " L=", s.L, " x=", std::string(to_string(s.dtype)),
                     " deterministic=", deterministic, " seq_idx=", seq_idx);
                const Variant v = channel_first_variant(s.dtype, deterministic, seq_idx);
                const BackwardArgs args = call_args(s.B, s.D, s.L, s.dtype, deterministic, seq_idx);
                const backward::Plan plan = backward::plan_channel_first(v, args, 132, true);
                REQUIRE(plan.parts >= 2);
                REQUIRE(plan.parts <= CC1D_BWD_MAX_CLUSTER_PARTS);
                const bool fits = s.D * plan.parts <= 132 * 8;

                test::RecordingLauncher<cc1d_bwd_params> launcher;
                launcher.clusters = true;
                backward_channel_first(launcher, v, args);
                if (fits) {
                    // With seq_idx the masks kernel comes first; no zeroing, no reduce.
                    REQUIRE(launcher.launches.size() == (seq_idx ? 2u : 1u));
                    const auto& main = launcher.launches.back();
                    CHECK(main.kernel == Kernel::main);
                    CHECK(main.grid.x == unsigned(s.D));
                    CHECK(main.grid.y == unsigned(plan.parts));
                    CHECK(main.cluster_y == unsigned(plan.parts));
                    CHECK(main.block.x == plan.block.x);
                    CHECK(main.shared == plan.shared_bytes);
                    CHECK(main.params.dw_mode == CC1D_DW_CLUSTER);
                    CHECK(main.params.groups == plan.parts);
                    CHECK(main.params.units_per_part == plan.units_per_part);
                    CHECK(main.params.partials == nullptr);   // no workspace rows
                    if (seq_idx) {
                        CHECK(launcher.launches[0].kernel == Kernel::reduce);
                        CHECK(launcher.launches[0].params.reduce_mode == CC1D_REDUCE_SEQ_MASKS);
                        CHECK(launcher.launches[0].cluster_y == 1u);
                    }
                    backward::Plan clustered = plan;
                    clustered.cluster_sums = true;
                    CHECK(backward::dw_mode(v, args, clustered) == CC1D_DW_CLUSTER);
                    if (!seq_idx) CHECK(backward::workspace_bytes(v, args, clustered) == 0u);
                }

                // Without clusters (or where they do not fit), the flat grid and: deterministic,
                // partial rows and the reduce kernel after the main one; atomic (fp32 dweight),
                // the zeroing launch before it.
                test::RecordingLauncher<cc1d_bwd_params> plain;
                backward_channel_first(plain, v, args);
                for (const auto* calls : {&plain, fits ? nullptr : &launcher}) {
                    if (calls == nullptr) continue;
                    REQUIRE(calls->launches.size() == (seq_idx ? 3u : 2u));
                    for (const auto& l : calls->launches) CHECK(l.cluster_y == 1u);
                    const auto& sums = deterministic ? calls->launches.back() : calls->launches.front();
                    CHECK(sums.kernel == Kernel::reduce);
                    CHECK(sums.params.reduce_mode == (deterministic ? CC1D_REDUCE_SUM : CC1D_REDUCE_ZERO));
                    CHECK(sums.params.dw_mode == (deterministic ? CC1D_DW_PARTIAL_ROWS : CC1D_DW_ATOMIC_DIRECT));
                }
            }
}

TEST_CASE("channel-first backward call: one part takes no clusters") {
    // 8x2048x1024 bf16: the channels fill the GPU, one part, blocks writing dweight themselves.
    const Variant v = channel_first_variant(DType::bf16, true);
    const BackwardArgs args = call_args(8, 2048, 1024, DType::bf16, true);
    const backward::Plan one = backward::plan_channel_first(v, args, 132, true);
    REQUIRE(one.parts == 1);
    test::RecordingLauncher<cc1d_bwd_params> launcher;
    launcher.clusters = true;
    backward_channel_first(launcher, v, args);
    const auto& l = launcher.only_main_launch(one.block.x, one.channel_groups, one.shared_bytes);
    CHECK(l.cluster_y == 1u);
    CHECK(l.params.dw_mode == CC1D_DW_DIRECT);
}
