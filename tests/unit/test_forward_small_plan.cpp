// Which forward calls run the small-call kernel (fwd_small.cu) and how it is launched:
// calls of at least one position and at most 2^17 outputs (channel-first rows of at most
// 64 positions: 2^21), views within 2^31 elements, not switched off; one thread an
// output, the flat index split by multiplies whose divisors the host computes
// (util::divisor_of).
#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "api/launch/forward_small.hpp"
#include "api/launch/launch_util.hpp"
#include "support/fake_tensors.hpp"
#include "support/recording_launcher.hpp"
#include "support/scoped_env.hpp"
#include "params.h"

using namespace cc1d;
using namespace cc1d::launch;

namespace {

const void* address(int slot) { return test::fake_address(slot); }

// A whole call's tensors at fake aligned addresses, contiguous in `layout`, with every
// optional tensor.
ForwardArgs call_args(std::int64_t B, std::int64_t D, std::int64_t L, Layout layout, int width = 4) {
    ForwardArgs a;
    a.x = test::fake_bdl(0, DType::bf16, B, D, L, layout);
    a.out = test::fake_bdl(1, DType::bf16, B, D, L, layout);
    a.weight = Tensor(address(2), DType::bf16, {D, width});
    a.bias = Tensor(address(3), DType::bf16, {D});
    a.seq_idx = Tensor(address(4), DType::int32, {B, L});
    a.initial_states = Tensor(address(5), DType::bf16, {B, D, width - 1});
    a.final_states = Tensor(const_cast<void*>(address(6)), DType::bf16, {B, D, width - 1});
    a.activation = Activation::silu;
    return a;
}

// The small plan of a bf16 call in `layout`.
std::optional<forward::SmallPlan> plan_for(const ForwardArgs& args, Layout layout) {
    Variant v;
    v.op = Op::fwd;
    v.layout = layout;
    v.x_dtype = v.weight_dtype = DType::bf16;
    return forward::plan_small(v, args);
}

}  // namespace

TEST_CASE("divisor_of: the kernels' multiply-and-shift equals n / d for every n below 2^31") {
    std::mt19937 rng(7);
    std::vector<std::uint32_t> divisors = {1, 2, 3, 5, 7, 64, 67, 127, 128, 129, 641, 1000, 65535, 65536, 65537,
                                           (1u << 24) + 1, (1u << 30) - 1, 1u << 30, (1u << 31) - 1};
    for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % ((1u << 31) - 1));
    for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 70000);
    for (std::uint32_t d : divisors) {
        const cc1d_divisor by = util::divisor_of(d);
        std::vector<std::uint32_t> ns = {0, 1, d - 1, d, d + 1, (1u << 31) - 1, (1u << 31) - 2};
        // Around multiples of d, where a rounding error would show first.
        for (std::uint32_t q : {1u, 2u, 3u, 1000u, (1u << 31) / d - 1, (1u << 31) / d})
            for (std::int64_t delta : {-1, 0, 1}) {
                const std::int64_t n = std::int64_t(q) * d + delta;
                if (n >= 0 && n < (std::int64_t(1) << 31)) ns.push_back(static_cast<std::uint32_t>(n));
            }
        for (int i = 0; i < 100; ++i) ns.push_back(rng() & 0x7fffffffu);
        for (std::uint32_t n : ns) {
            if (n >= (1u << 31)) continue;
            INFO("n=", n, " d=", d);
            REQUIRE(util::divide(n, by) == n / d);
        }
    }
}

TEST_CASE("small forward plan: one thread an output, up to 2^17 outputs") {
    for (Layout layout : {Layout::channel_first, Layout::channel_last}) {
        INFO("channel-last=", layout == Layout::channel_last);
        const auto small = plan_for(call_args(2, 64, 128, layout), layout);
        REQUIRE(small.has_value());
        CHECK(small->blocks == 2 * 64 * 128 / CC1D_FWD_SMALL_THREADS);
        CHECK(plan_for(call_args(3, 5, 7, layout), layout)->blocks == 1);
        CHECK(plan_for(call_args(1, 1024, 128, layout), layout));    // 2^17 outputs
        CHECK_FALSE(plan_for(call_args(1, 1025, 128, layout), layout));
        CHECK(plan_for(call_args(1, 1, 1, layout), layout));
    }
}

TEST_CASE("small forward plan: channel-first rows of at most 64 positions up to 2^21 outputs") {
    // The main kernel's row-sized tiles would leave most of their threads idle.
    const Layout cf = Layout::channel_first, cl = Layout::channel_last;
    CHECK(plan_for(call_args(2, 8192, 64, cf), cf));    // 2^20 outputs
    CHECK(plan_for(call_args(4, 8192, 64, cf), cf));    // 2^21
    CHECK_FALSE(plan_for(call_args(4, 8193, 64, cf), cf));
    CHECK(plan_for(call_args(64, 1024, 7, cf), cf));
    CHECK_FALSE(plan_for(call_args(4, 1024, 65, cf), cf));   // rows of 65: 2^17 as before
    CHECK_FALSE(plan_for(call_args(2, 8192, 64, cl), cl));   // channel-last: 2^17 as before
}

TEST_CASE("small forward plan: empty calls, far-reaching views and switched off go to the main kernels") {
    const Layout cl = Layout::channel_last;
    CHECK_FALSE(plan_for(call_args(0, 64, 128, cl), cl));
    CHECK_FALSE(plan_for(call_args(2, 0, 128, cl), cl));
    // L = 0 with final_states: the main kernels write the states from initial_states.
    CHECK_FALSE(plan_for(call_args(2, 64, 0, cl), cl));
    // A view whose last element lies 2^31 elements on (or back): 32-bit offsets would not
    // reach it. Every tensor counts, the states and ids too.
    for (int which = 0; which < 4; ++which) {
        INFO("tensor ", which);
        ForwardArgs far = call_args(2, 64, 128, cl);
        const std::int64_t step = which % 2 == 0 ? (std::int64_t(1) << 31) : -(std::int64_t(1) << 31);
        if (which < 2) far.out = Tensor(const_cast<void*>(address(1)), DType::bf16, {2, 64, 128}, {step, 1, 64});
        else far.initial_states = Tensor(address(5), DType::bf16, {2, 64, 3}, {step, 3, 1});
        CHECK_FALSE(plan_for(far, cl));
    }
    ForwardArgs far_ids = call_args(2, 64, 128, cl);
    far_ids.seq_idx = Tensor(address(4), DType::int32, {2, 128}, {std::int64_t(1) << 31, 1});
    CHECK_FALSE(plan_for(far_ids, cl));
    {
        test::ScopedEnv off("CC1D_DISABLE_SMALL_FORWARD", "1");
        CHECK_FALSE(plan_for(call_args(2, 64, 128, cl), cl));
    }
    CHECK(plan_for(call_args(2, 64, 128, cl), cl));
}

TEST_CASE("small forward call: one launch of its module's kernel, the index split by L and D in layout order") {
    for (Layout layout : {Layout::channel_first, Layout::channel_last}) {
        const bool cl = layout == Layout::channel_last;
        INFO("channel-last=", cl);
        Variant v;
        v.op = Op::fwd;
        v.layout = layout;
        v.small_call = true;
        const ForwardArgs args = call_args(3, 67, 129, layout);
        const auto plan = plan_for(args, layout);
        REQUIRE(plan.has_value());
        test::RecordingLauncher<cc1d_fwd_params> launcher;
        forward::run_small(launcher, v, args, *plan);
        const auto& l =
            launcher.only_main_launch(CC1D_FWD_SMALL_THREADS, util::ceil_div(3 * 67 * 129, CC1D_FWD_SMALL_THREADS), 0);
        // The fastest index first: time channel-first, channels channel-last.
        const std::uint32_t inner = cl ? 67 : 129, middle = cl ? 129 : 67;
        CHECK(util::divide(1000, l.params.small_by_inner) == 1000 / inner);
        CHECK(util::divide(100, l.params.small_by_middle) == 100 / middle);
        CHECK(l.params.batch == 3);
        CHECK(l.params.final_stride_d == 3);
    }
}

TEST_CASE("small-call forward variants: named apart from the main kernels' module") {
    Variant main;
    main.op = Op::fwd;
    main.layout = Layout::channel_last;
    main.x_dtype = main.weight_dtype = DType::bf16;
    main.seq_idx = main.final_states = true;
    Variant small = main;
    small.small_call = true;
    CHECK_FALSE(small == main);
    CHECK(small.entry_name() == main.entry_name() + "_small");
    CHECK(small.canonical() == main.canonical() + ",small_call=1");
    CHECK(Variant::parse(small.canonical()) == small);
    CHECK(small.normalized().small_call);
}
