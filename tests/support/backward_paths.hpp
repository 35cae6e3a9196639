// The two ways a small backward call can run, for GPU tests that check both: the
// small-call kernel (bwd_small.cu, taken by default) and the main kernels with their
// reduce launch (CC1D_DISABLE_SMALL_BACKWARD, read per call).
#pragma once

#include "api/launch/backward_small.hpp"
#include "api/validate.hpp"
#include "support/scoped_env.hpp"

namespace cc1d::test {

// True when the backward call `args` goes to the small-call kernel as things stand.
inline bool takes_small_backward_kernel(const BackwardArgs& args) {
    return launch::backward::plan_small(validate::backward(args), args).has_value();
}

// While alive, backward calls run through the main kernels only.
struct MainBackwardKernelsOnly : ScopedEnv {
    MainBackwardKernelsOnly() : ScopedEnv("CC1D_DISABLE_SMALL_BACKWARD", "1") {}
};

}  // namespace cc1d::test
