// The two ways a small backward call can run, for GPU tests that check both: the
// small-call kernel (bwd_small.cu, taken by default) and the main kernels with their
// reduce launch (CC1D_DISABLE_SMALL_BACKWARD, read per call).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "api/launch/backward_small.hpp"
#include "api/validate.hpp"

namespace cc1d::test {

// True when the backward call `args` goes to the small-call kernel as things stand.
inline bool takes_small_backward_kernel(const BackwardArgs& args) {
    return launch::backward::plan_small(validate::backward(args), args).has_value();
}

// While alive, backward calls run through the main kernels only.
class MainBackwardKernelsOnly {
public:
    MainBackwardKernelsOnly() {
        if (const char* old = std::getenv(kName)) old_ = std::string(old);
        ::setenv(kName, "1", 1);
    }
    ~MainBackwardKernelsOnly() {
        if (old_) ::setenv(kName, old_->c_str(), 1);
        else ::unsetenv(kName);
    }
    MainBackwardKernelsOnly(const MainBackwardKernelsOnly&) = delete;
    MainBackwardKernelsOnly& operator=(const MainBackwardKernelsOnly&) = delete;

private:
    static constexpr const char* kName = "CC1D_DISABLE_SMALL_BACKWARD";
    std::optional<std::string> old_;
};

}  // namespace cc1d::test
