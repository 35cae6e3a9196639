// Workspace a backward call needs when the caller brings its own (BackwardArgs::workspace).
#include <algorithm>

#include "api/launch/backward_plan.hpp"

namespace cc1d::launch {

// The plans depend on the device's multiprocessor count and (channel-first) its memory
// speed, which this query does not know. Channel-last: more multiprocessors never mean
// fewer parts, so the plan for a generous count bounds what any current GPU asks for
// (H200: 132 SMs, MI300X: 304 CUs). Channel-first: its parts are the larger of one rule
// that never gives fewer for more multiprocessors and one that never gives fewer for
// fewer, so the plans for one multiprocessor and for that generous count, on either
// memory, bound it.
std::size_t backward_workspace_bytes(const Variant& variant, const BackwardArgs& args) {
    constexpr int kManyMultiprocessors = 1024;
    if (variant.layout == Layout::channel_last)
        return backward::workspace_bytes(variant, args, backward::plan_channel_last(variant, args, kManyMultiprocessors));
    std::size_t bytes = 0;
    for (int sm_count : {1, kManyMultiprocessors})
        for (bool fast_memory : {false, true})
            bytes = std::max(bytes, backward::workspace_bytes(
                                        variant, args, backward::plan_channel_first(variant, args, sm_count, fast_memory)));
    return bytes;
}

}  // namespace cc1d::launch
