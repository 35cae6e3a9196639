// Workspace a backward call needs when the caller brings its own (BackwardArgs::workspace).
#include "api/launch/backward_plan.hpp"

namespace cc1d::launch {

// The plans depend on the device's multiprocessor count, which this query does not know;
// more multiprocessors never mean fewer parts, so the plan for a generous count bounds
// what any current GPU asks for (H200: 132 SMs, MI300X: 304 CUs).
std::size_t backward_workspace_bytes(const Variant& variant, const BackwardArgs& args) {
    constexpr int kManyMultiprocessors = 1024;
    const backward::Plan plan = variant.layout == Layout::channel_last
                                    ? backward::plan_channel_last(variant, args, kManyMultiprocessors)
                                    : backward::plan_channel_first(variant, args, kManyMultiprocessors);
    return backward::workspace_bytes(variant, args, plan);
}

}  // namespace cc1d::launch
