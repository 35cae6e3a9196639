// The ways a small call can run, for GPU tests that check each: the small-call kernel
// (fwd_small.cu, bwd_small.cu, or for channel-first rows of whole vectors
// bwd_channel_first_vectors.cu; taken by default) and the main kernels (the backward's with their
// reduce launch), with the small-call kernel switched off (CC1D_DISABLE_SMALL_FORWARD,
// CC1D_DISABLE_SMALL_BACKWARD, CC1D_DISABLE_SMALL_VECTORS, read per call).
#pragma once

#include "api/launch/backward_small.hpp"
#include "api/launch/forward_small.hpp"
#include "api/validate.hpp"
#include "support/scoped_env.hpp"

namespace cc1d::test {

// True when the forward call `args` goes to the small-call kernel as things stand.
inline bool takes_small_forward_kernel(const ForwardArgs& args) {
    return launch::forward::plan_small(validate::forward(args), args).has_value();
}

// True when the backward call `args` goes to the small-call kernel as things stand.
inline bool takes_small_backward_kernel(const BackwardArgs& args) {
    return launch::backward::plan_small(validate::backward(args), args).has_value();
}

// True when it goes to the small-call module's vector kernel (bwd_channel_first_vectors.cu).
inline bool takes_small_vector_kernel(const BackwardArgs& args) {
    const auto plan = launch::backward::plan_small(validate::backward(args), args);
    return plan.has_value() && plan->vectors;
}

// While alive, forward calls run through the main kernels only.
struct MainForwardKernelsOnly : ScopedEnv {
    MainForwardKernelsOnly() : ScopedEnv("CC1D_DISABLE_SMALL_FORWARD", "1") {}
};

// While alive, backward calls run through the main kernels only.
struct MainBackwardKernelsOnly : ScopedEnv {
    MainBackwardKernelsOnly() : ScopedEnv("CC1D_DISABLE_SMALL_BACKWARD", "1") {}
};

// While alive, backward calls skip the vector kernel: the element-wise small-call kernel
// where a call fits it, else the main kernels.
struct NoSmallVectorKernel : ScopedEnv {
    NoSmallVectorKernel() : ScopedEnv("CC1D_DISABLE_SMALL_VECTORS", "1") {}
};

}  // namespace cc1d::test
