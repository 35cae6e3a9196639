// Workspace a backward call needs when the caller brings its own (BackwardArgs::workspace).
#include <algorithm>

#include "api/launch/backward_plan.hpp"

namespace cc1d::launch {

// The plans depend on the device's multiprocessor count and (channel-first) its memory
// speed, which this query does not know. In both layouts the parts are the larger of
// one rule that never gives fewer for more multiprocessors (wave-fitting walks) and one
// that never gives fewer for fewer (channel-first: fp32 walks of at most 4 units;
// channel-last: fp32 walks of 256 channel-steps where the wave-fitting ones are long, fp32
// tile walks of at most 3 units),
// so the plans for one multiprocessor and for a generous count (H200: 132 SMs, MI300X:
// 304 CUs), on either memory, bound what any current GPU asks for. The CC1D_DISABLE_*
// switches that choose among plans are read on every call, so they may differ between
// this query and the call: it covers the plans of either setting (the tile kernel and the
// register walk, tiles on or off rows' own boundaries, rows off 16-byte boundaries in
// their module or not, a tail or none).
std::size_t backward_workspace_bytes(const Variant& variant, const BackwardArgs& args) {
    constexpr int kManyMultiprocessors = 1024;
    std::size_t bytes = 0;
    auto cover = [&](const backward::Plan& plan) { bytes = std::max(bytes, backward::workspace_bytes(variant, args, plan)); };
    if (variant.layout == Layout::channel_first) {
        // (The module of rows off 16-byte boundaries may plan one more tile a row.)
        for (bool shifted_rows : {false, true}) {
            Variant v = variant;
            v.shifted_rows = shifted_rows;
            for (bool own_boundaries : {false, backward::may_follow_own_boundaries(v, args)})
                for (int sm_count : {1, kManyMultiprocessors})
                    for (bool fast_memory : {false, true})
                        cover(backward::plan_channel_first(v, args, sm_count, fast_memory, own_boundaries));
        }
        return bytes;
    }
    // Channel-last: the tile kernel's parts grow with the multiprocessors up to one unit
    // a part.
    if (backward::tile_fits(variant, args)) cover(backward::plan_channel_last_tile(variant, args, kManyMultiprocessors));
    // The register walk with and without a tail (the tail needs a kernel that holds no
    // more blocks an SM than the wave plans, which the query cannot know; without it the
    // fp32 drain rule may come instead). A tail comes and goes with the multiprocessor
    // count, and need not at either end: bound it by the long walks' most parts and the
    // tail's.
    constexpr int kNoTail = kManyMultiprocessors;   // (resident blocks past any wave's)
    for (int sm_count : {1, kManyMultiprocessors})
        for (int resident : {0, kNoTail}) cover(backward::plan_channel_last_walk(variant, args, sm_count, resident));
    backward::Plan bound = backward::plan_channel_last_walk(variant, args, kManyMultiprocessors, kNoTail);
    bound.parts = std::max(bound.parts, backward::plan_channel_last_walk(variant, args, 1, kNoTail).parts) +
                  backward::channel_last_tail_parts(variant, args);
    cover(bound);
    return bytes;
}

}  // namespace cc1d::launch
