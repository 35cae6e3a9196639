// Small forward calls, one output a thread: fwd_small.cu, the module of a small-call
// variant (Variant::small_call, compiled only when such a call comes). The Runtime asks
// plan_small first and picks the variant and launcher from its answer.
#pragma once

#include <cstdint>
#include <optional>

#include "api/launch/launch.hpp"

namespace cc1d::launch::forward {

struct SmallPlan {
    std::int64_t blocks = 0;   // of CC1D_FWD_SMALL_THREADS threads, one output each
};

// The plan when the call fits the small kernel: at least one position (L = 0 still writes
// final_states, which the main kernels do), at most 2^17 outputs (beyond that the main
// kernels' vector loads win; channel-first rows of at most 64 positions up to 2^21, where
// the main kernel's row-sized tiles leave most threads idle) and every view within 2^31
// elements (32-bit offsets). nullopt otherwise, or when CC1D_DISABLE_SMALL_FORWARD is set
// (read per call, so tests can run a call both ways).
std::optional<SmallPlan> plan_small(const Variant& variant, const ForwardArgs& args);

// Launches the small-call kernel (the main kernel of `variant`'s module, a small-call
// variant) with `plan`.
void run_small(Launcher& launcher, const Variant& variant, const ForwardArgs& args, const SmallPlan& plan);

}  // namespace cc1d::launch::forward
