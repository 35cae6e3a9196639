// The backward workspace query (Runtime::backward_workspace_size) against the switches
// that choose among a call's plans. CC1D_DISABLE_BACKWARD_TILE, CC1D_DISABLE_SHIFTED_ROWS,
// CC1D_DISABLE_OWN_BOUNDARIES and CC1D_DISABLE_BACKWARD_TAIL are read on every call, so a
// caller may query with one setting and call with another: the bytes queried under any
// setting must cover the plan of the call under any setting, on any multiprocessor count.
// (Unit tests of each plan's own rules: test_backward_plan.cpp.)
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "api/launch/backward_plan.hpp"
#include "api/launch/launch.hpp"
#include "support/backward_variants.hpp"
#include "support/scoped_env.hpp"

using namespace cc1d;
using namespace cc1d::launch;

namespace {

constexpr std::array<const char*, 4> kSwitches = {"CC1D_DISABLE_BACKWARD_TILE", "CC1D_DISABLE_SHIFTED_ROWS",
                                                  "CC1D_DISABLE_OWN_BOUNDARIES", "CC1D_DISABLE_BACKWARD_TAIL"};
constexpr int kSettings = 1 << kSwitches.size();
// Channel-last kernels that hold 5 blocks an SM: more than any wave of the register walk
// plans, so its calls take no tail (0: unknown, taken as the wave's: a tail where it fits).
constexpr int kMoreThanPlanned = 5;

// While alive, sets the switches whose bits are in `setting` and unsets the others.
class SwitchSetting {
public:
    explicit SwitchSetting(int setting) {
        for (std::size_t i = 0; i < kSwitches.size(); ++i)
            envs_[i].emplace(kSwitches[i], (setting >> i) & 1 ? "1" : nullptr);
    }

private:
    std::array<std::optional<test::ScopedEnv>, kSwitches.size()> envs_;
};

// x, dout and dx of one (B, D, L) view in `layout`, contiguous, starting at `data`.
BackwardArgs view_args(Layout layout, DType dtype, std::array<std::int64_t, 3> shape, std::uintptr_t data) {
    const auto [batch, dim, seqlen] = shape;
    const void* start = reinterpret_cast<const void*>(data);
    BackwardArgs args;
    args.x = layout == Layout::channel_last ? Tensor(start, dtype, {batch, dim, seqlen}, {dim * seqlen, 1, dim})
                                            : Tensor(start, dtype, {batch, dim, seqlen}, {dim * seqlen, seqlen, 1});
    args.dout = args.dx = args.x;
    return args;
}

// The most workspace the call's plan takes on any of a range of multiprocessor counts (and
// either memory speed, or with and without a tail), choosing its modules as the Runtime
// does under the switches now set.
std::size_t most_planned_bytes(Variant variant, const BackwardArgs& args) {
    variant.tiled = backward::takes_tile(variant, args);
    variant.shifted_rows = backward::takes_shifted_rows(variant, args);
    std::size_t most = 0;
    for (const int sm_count : {1, 2, 8, 66, 78, 114, 132, 304, 1024})
        for (const bool either : {false, true}) {
            const backward::Plan plan =
                variant.layout == Layout::channel_first
                    ? backward::plan_channel_first(variant, args, sm_count, either)
                    : backward::plan_channel_last(variant, args, sm_count, either ? kMoreThanPlanned : 0);
            most = std::max(most, backward::workspace_bytes(variant, args, plan));
        }
    return most;
}

void check_query_covers_every_setting(const Variant& variant, const BackwardArgs& args) {
    std::size_t least_queried = SIZE_MAX, most_planned = 0;
    for (int setting = 0; setting < kSettings; ++setting) {
        const SwitchSetting switches(setting);
        least_queried = std::min(least_queried, launch::backward_workspace_bytes(variant, args));
        most_planned = std::max(most_planned, most_planned_bytes(variant, args));
    }
    CHECK(most_planned <= least_queried);
}

// Every dtype, width, seq_idx and alignment of `shapes` in `layout`.
void check_query_covers_every_setting(Layout layout, const std::vector<std::array<std::int64_t, 3>>& shapes,
                                      const std::vector<int>& widths) {
    for (const DType dtype : {DType::bf16, DType::fp32})
        for (const int width : widths)
            for (const bool seq_idx : {false, true})
                for (const auto& shape : shapes)
                    for (const std::uintptr_t data : {std::uintptr_t(0x10000), std::uintptr_t(0x10004)}) {
                        Variant v = test::silu_backward(dtype, layout);
                        v.width = width;
                        v.seq_idx = seq_idx;
                        const std::string dtype_name(to_string(dtype));
                        CAPTURE(dtype_name);
                        CAPTURE(width);
                        CAPTURE(seq_idx);
                        CAPTURE(shape[1]);
                        CAPTURE(shape[2]);
                        CAPTURE(data);
                        check_query_covers_every_setting(v, view_args(layout, dtype, shape, data));
                    }
}

}  // namespace

TEST_CASE("backward workspace query: covers the plan of every switch setting, channel-last") {
    // 9x67x1031 bf16 with dx off 16-byte boundaries: the tile kernel plans 153 parts, the
    // register walk 291 (CC1D_DISABLE_BACKWARD_TILE); the larger shapes take the walk with
    // a tail in fp32, the tile kernel with rows off 16-byte boundaries in 16-bit.
    check_query_covers_every_setting(Layout::channel_last,
                                     {{9, 67, 1031}, {9, 300, 1031}, {4, 2051, 1024}, {3, 1001, 777}, {16, 96, 300},
                                      {4, 5377, 4096}, {4, 5376, 4096}, {2, 64, 128}},
                                     {1, 4, 8});
}

TEST_CASE("backward workspace query: covers the plan of every switch setting, channel-first") {
    // Odd L and misaligned views take the 16-bit module of rows off 16-byte boundaries,
    // whose tiles follow the rows' own boundaries (CC1D_DISABLE_OWN_BOUNDARIES) without seq_idx.
    check_query_covers_every_setting(
        Layout::channel_first,
        {{16, 3, 4099}, {4, 5376, 4095}, {8, 4, 4100}, {9, 67, 1031}, {4, 256, 4096}, {2, 20000, 777}}, {1, 4});
}
