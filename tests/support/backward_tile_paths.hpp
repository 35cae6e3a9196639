// The two main kernels a channel-last backward call up to width 4 without states can run,
// for GPU tests that check both: the tile kernel (bwd_channel_last_tile.cu; taken by calls
// within its limits) and the register walk (bwd_channel_last.cu; taken past them, and by
// every call with CC1D_DISABLE_BACKWARD_TILE, read per call).
#pragma once

#include "api/launch/backward_plan.hpp"
#include "api/validate.hpp"
#include "support/scoped_env.hpp"

namespace cc1d::test {

// True when the backward call `args` goes to the tile kernel as things stand.
inline bool takes_backward_tile(const BackwardArgs& args) {
    return launch::backward::takes_tile(validate::backward(args), args);
}

// While alive, channel-last backward calls run the register walk only.
struct RegisterWalkOnly : ScopedEnv {
    RegisterWalkOnly() : ScopedEnv("CC1D_DISABLE_BACKWARD_TILE", "1") {}
};

}  // namespace cc1d::test
