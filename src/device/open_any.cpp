#include "common/fail.hpp"
#include "device/device.hpp"

namespace cc1d::device {

std::unique_ptr<Device> open_any() {
    std::string reasons;
    try {
        return open_cuda();
    } catch (const Error& e) {
        reasons = std::string("CUDA: ") + e.what();
    }
    try {
        return open_hip();
    } catch (const Error& e) {
        reasons += std::string("; HIP: ") + e.what();
    }
    throw Error(ErrorCode::backend_unavailable, "no usable GPU: " + reasons);
}

}  // namespace cc1d::device
