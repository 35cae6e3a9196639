// Error, Tensor and the small enum helpers of the public header.
#include <fmt/format.h>

#include "cc1d/cc1d.hpp"
#include "common/version.hpp"

namespace cc1d {

std::string version() { return CC1D_VERSION_STRING; }

const char* to_string(DType dtype) {
    switch (dtype) {
        case DType::fp32: return "fp32";
        case DType::fp16: return "fp16";
        case DType::bf16: return "bf16";
        case DType::int32: return "int32";
    }
    return "?";
}
const char* to_string(Activation activation) {
    return activation == Activation::silu ? "silu" : "none";
}
const char* to_string(Layout layout) {
    return layout == Layout::channel_last ? "channel_last" : "channel_first";
}
const char* to_string(ErrorCode code) {
    switch (code) {
        case ErrorCode::invalid_argument: return "invalid_argument";
        case ErrorCode::unsupported: return "unsupported";
        case ErrorCode::compile_failed: return "compile_failed";
        case ErrorCode::device_error: return "device_error";
        case ErrorCode::backend_unavailable: return "backend_unavailable";
    }
    return "?";
}
std::size_t dtype_size(DType dtype) {
    return (dtype == DType::fp16 || dtype == DType::bf16) ? 2 : 4;
}

Tensor::Tensor(const void* data_, DType dtype_, std::initializer_list<std::int64_t> shape_,
               std::initializer_list<std::int64_t> strides_)
    : data(data_), dtype(dtype_), rank(static_cast<int>(shape_.size())) {
    if (shape_.size() > static_cast<std::size_t>(max_rank))
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("Tensor: rank {} given, at most {} supported", shape_.size(), max_rank));
    if (strides_.size() != 0 && strides_.size() != shape_.size())
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("Tensor: {} strides given for {} dimensions", strides_.size(), shape_.size()));
    int i = 0;
    for (auto s : shape_) shape[i++] = s;
    if (strides_.size() != 0) {
        i = 0;
        for (auto s : strides_) strides[i++] = s;
    } else {
        std::int64_t stride = 1;
        for (int d = rank - 1; d >= 0; --d) {
            strides[d] = stride;
            stride *= shape[d];
        }
    }
}

std::int64_t Tensor::numel() const {
    std::int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= shape[d];
    return n;
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(message), code_(code) {}

Error::Error(ErrorCode code, const std::string& message, CompileDetails details)
    : std::runtime_error(message), code_(code), compile_(std::move(details)) {}

Error::Error(ErrorCode code, const std::string& message, int driver_code, std::string driver_name)
    : std::runtime_error(message), code_(code), driver_code_(driver_code),
      driver_name_(std::move(driver_name)) {}

}  // namespace cc1d
