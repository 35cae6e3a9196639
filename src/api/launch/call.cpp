#include "api/launch/call.hpp"

#include "api/launch/backward_plan.hpp"

namespace cc1d::launch {

ForwardCall plan_forward(Variant validated, const ForwardArgs& args) {
    ForwardCall call{validated, forward::plan_small(validated, args)};
    // A small call runs one output a thread, from a module of its own.
    if (call.small) {
        call.variant.small_call = true;
        return call;
    }
    // With L == 0 there is still final_states to write (from initial_states or zeros).
    const bool states_only = args.final_states.present() && args.x.shape[0] * args.x.shape[1] > 0;
    call.launches = args.x.numel() != 0 || states_only;
    // Rows off 16-byte boundaries: a module of their own.
    if (call.launches) call.variant.shifted_rows = forward_takes_shifted_rows(call.variant, args);
    return call;
}

void run_forward(Launcher& launcher, const ForwardCall& call, const ForwardArgs& args) {
    if (!call.launches) return;
    if (call.small) return forward::run_small(launcher, call.variant, args, *call.small);
    if (call.variant.layout == Layout::channel_last) return forward_channel_last(launcher, call.variant, args);
    forward_channel_first(launcher, call.variant, args);
}

BackwardCall plan_backward(Variant validated, const BackwardArgs& args) {
    BackwardCall call{validated, backward::plan_small(validated, args)};
    // A small call runs in one launch, from a module of its own.
    if (call.small) {
        call.variant.small_call = true;
        return call;
    }
    // The channel-last calls of the tile kernel, and rows off 16-byte boundaries (16-bit
    // channel-first, and the tile kernel's): modules of their own (backward_plan.hpp).
    call.variant.tiled = backward::takes_tile(call.variant, args);
    call.variant.shifted_rows = backward::takes_shifted_rows(call.variant, args);
    return call;
}

void run_backward(Launcher& launcher, const BackwardCall& call, const BackwardArgs& args) {
    if (call.small) return backward::run_small(launcher, call.variant, args, *call.small);
    if (call.variant.layout == Layout::channel_last) return backward_channel_last(launcher, call.variant, args);
    backward_channel_first(launcher, call.variant, args);
}

}  // namespace cc1d::launch
