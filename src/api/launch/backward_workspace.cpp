// Workspace a backward call needs when the caller brings its own (BackwardArgs::workspace).
#include <algorithm>

#include "api/launch/backward_plan.hpp"

namespace cc1d::launch {

// The plans depend on the device's multiprocessor count and (channel-first) its memory
// speed, which this query does not know. In both layouts the parts are the larger of
// one rule that never gives fewer for more multiprocessors (wave-fitting walks) and one
// that never gives fewer for fewer (channel-first: fp32 walks of at most 4 units;
// channel-last: fp32 walks of 256 channel-steps where the wave-fitting ones are long),
// so the plans for one multiprocessor and for a generous count (H200: 132 SMs, MI300X:
// 304 CUs), on either memory, bound what any current GPU asks for.
std::size_t backward_workspace_bytes(const Variant& variant, const BackwardArgs& args) {
    constexpr int kManyMultiprocessors = 1024;
    auto plan_for = [&](int sm_count, bool fast_memory) {
        return variant.layout == Layout::channel_last
                   ? backward::plan_channel_last(variant, args, sm_count)   // (memory speed not used)
                   : backward::plan_channel_first(variant, args, sm_count, fast_memory);
    };
    std::size_t bytes = 0;
    for (int sm_count : {1, kManyMultiprocessors})
        for (bool fast_memory : {false, true})
            bytes = std::max(bytes, backward::workspace_bytes(variant, args, plan_for(sm_count, fast_memory)));
    // A channel-last tail (plan_channel_last) adds parts on the devices whose wave of long
    // walks it fills, which need not be either end: bound it by the long walks' most parts
    // and the tail's.
    if (variant.layout == Layout::channel_last) {
        backward::Plan bound = plan_for(kManyMultiprocessors, false);
        if (!bound.tile) {
            bound.parts = std::max(bound.parts, plan_for(1, false).parts) + backward::channel_last_tail_parts(variant, args);
            bytes = std::max(bytes, backward::workspace_bytes(variant, args, bound));
        }
    }
    return bytes;
}

}  // namespace cc1d::launch
