// How a packed prefill call is launched: the main pass, then, with conv-state slots, the
// sequence-finishing kernel (history outputs and slot write-back) as an overlapped launch
// (it loads before it waits, and only a kernel of the same call comes before it); without
// slots nothing more.
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "api/launch/launch.hpp"
#include "params.h"
#include "support/fake_tensors.hpp"
#include "support/recording_launcher.hpp"

using namespace cc1d;
using launch::Kernel;

namespace {

std::vector<test::RecordingLauncher<cc1d_varlen_params>::Launch> launches(Layout layout, bool states,
                                                                           std::int64_t total = 4096, std::int64_t D = 67) {
    constexpr std::int64_t N = 3;
    VarlenForwardArgs args;
    args.x = layout == Layout::channel_last ? Tensor(test::fake_address(0), DType::bf16, {D, total}, {1, D})
                                            : Tensor(test::fake_address(0), DType::bf16, {D, total}, {total, 1});
    args.out = layout == Layout::channel_last ? Tensor(test::fake_address(1), DType::bf16, {D, total}, {1, D})
                                              : Tensor(test::fake_address(1), DType::bf16, {D, total}, {total, 1});
    args.weight = Tensor(test::fake_address(2), DType::bf16, {D, 4});
    args.cu_seqlens = Tensor(test::fake_address(3), DType::int32, {N + 1});
    args.activation = Activation::silu;
    if (states) {
        args.conv_states = Tensor(test::fake_address(4), DType::bf16, {8, D, 3});
        args.cache_indices = Tensor(test::fake_address(5), DType::int32, {N});
        args.has_initial_state = Tensor(test::fake_address(6), DType::int32, {N});
    }
    Variant v;
    v.op = Op::varlen_fwd;
    v.layout = layout;
    v.width = 4;
    v.x_dtype = v.weight_dtype = DType::bf16;
    v.activation = Activation::silu;
    v.initial_states = states;
    test::RecordingLauncher<cc1d_varlen_params> launcher;
    launch::varlen_forward(launcher, v, args);
    return launcher.launches;
}

}  // namespace

TEST_CASE("varlen: with slots the finishing kernel is a second, overlapped launch; without them one launch") {
    for (Layout layout : {Layout::channel_first, Layout::channel_last}) {
        INFO("channel-last=", layout == Layout::channel_last);
        const auto with = launches(layout, true);
        REQUIRE(with.size() == 2);
        CHECK(with[0].kernel == Kernel::main);
        CHECK_FALSE(with[0].overlapped);
        CHECK(with[1].kernel == Kernel::finish);
        CHECK(with[1].overlapped);
        CHECK(std::int64_t(with[1].grid.x) * with[1].grid.y == 3);   // 3 sequences x 1 block of 67 channels
        const auto without = launches(layout, false);
        REQUIRE(without.size() == 1);
        CHECK(without[0].kernel == Kernel::main);
        // A call without tokens launches the finishing kernel alone (the launcher makes a
        // call's first kernel a plain launch whatever is asked).
        const auto empty = launches(layout, true, 0);
        REQUIRE(empty.size() == 1);
        CHECK(empty[0].kernel == Kernel::finish);
    }
}

TEST_CASE("varlen: a call of no channels launches nothing, with slots too") {
    // The finishing kernel's block was sized from the channels: with none, its grid was a
    // division by zero on the host (SIGFPE, the caller's process gone).
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (bool states : {false, true}) {
            INFO("channel-last=", layout == Layout::channel_last, " slots=", states);
            CHECK(launches(layout, states, 4096, 0).empty());
            CHECK(launches(layout, states, 0, 0).empty());
        }
}
