// From a validated call to its module and launches: which module a forward or backward
// call loads (its small-call, tile-kernel and shifted-rows forms) and which launcher runs
// it. One path for the Runtime and for the host tests that drive every plan without a GPU.
#pragma once

#include <optional>

#include "api/launch/backward_small.hpp"
#include "api/launch/forward_small.hpp"
#include "api/launch/launch.hpp"

namespace cc1d::launch {

struct ForwardCall {
    Variant variant;                          // the module: small_call and shifted_rows set
    std::optional<forward::SmallPlan> small;  // a small call's plan (forward_small.hpp)
    bool launches = true;                     // false: an empty call with no states to write
};
// `validated` is validate::forward's answer for `args`.
ForwardCall plan_forward(Variant validated, const ForwardArgs& args);
// The call's launches, on the module of call.variant that `launcher` holds.
void run_forward(Launcher& launcher, const ForwardCall& call, const ForwardArgs& args);

struct BackwardCall {
    Variant variant;                           // the module: small_call, tiled and shifted_rows set
    std::optional<backward::SmallPlan> small;  // a small call's plan (backward_small.hpp)
};
// `validated` is validate::backward's answer for `args`. An empty x still defines
// dweight/dbias (zero, or unchanged with accumulate): the launchers handle it, so every
// backward call runs.
BackwardCall plan_backward(Variant validated, const BackwardArgs& args);
void run_backward(Launcher& launcher, const BackwardCall& call, const BackwardArgs& args);

}  // namespace cc1d::launch
