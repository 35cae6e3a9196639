#include "support/random_tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "common/fail.hpp"
#include "common/host_dtype.hpp"

namespace cc1d::test {
namespace {

constexpr std::int64_t guard_bytes = 64;   // poisoned bytes on each side of the view; keeps 16-byte alignment
constexpr unsigned char poison_byte = 0xFF;

std::vector<int> memory_order(std::size_t rank, bool channel_last) {
    std::vector<int> order(rank);
    std::iota(order.begin(), order.end(), 0);
    if (channel_last && rank == 3) order = {0, 2, 1};
    if (channel_last && rank == 2) order = {1, 0};
    return order;
}

}  // namespace

TestTensor::TestTensor(DType dtype, std::vector<std::int64_t> shape, ViewOptions view, bool device)
    : dtype_(dtype), shape_(std::move(shape)), strides_(shape_.size()) {
    const auto rank = shape_.size();
    if (rank < 1 || rank > 3) fail(ErrorCode::invalid_argument, "TestTensor: rank {} (expected 1..3)", rank);
    const auto order = memory_order(rank, view.channel_last);
    std::int64_t span = 1;
    for (auto i = rank; i-- > 0;) {
        const auto dim = static_cast<std::size_t>(order[i]);
        strides_[dim] = span;
        span *= shape_[dim] + view.pad[dim];
    }
    const auto element = static_cast<std::int64_t>(dtype_size(dtype_));
    offset_ = guard_bytes / element + view.misalign;
    const std::int64_t elements = offset_ + span + guard_bytes / element;
    host_.assign(static_cast<std::size_t>(elements * element), poison_byte);
    if (device) {
        device_ = DeviceBuffer(host_.size());
        has_device_ = true;
        upload();
    }
}

std::int64_t TestTensor::numel() const {
    return std::accumulate(shape_.begin(), shape_.end(), std::int64_t{1}, std::multiplies<>());
}

std::int64_t TestTensor::offset_of(std::int64_t logical) const {
    std::int64_t offset = offset_;
    for (auto d = shape_.size(); d-- > 0;) {
        offset += (logical % shape_[d]) * strides_[d];
        logical /= shape_[d];
    }
    return offset;
}

void TestTensor::fill_random(std::mt19937& rng, double lo, double hi) {
    std::uniform_real_distribution<double> uniform(lo, hi);
    for (std::int64_t i = 0; i < numel(); ++i) {
        const double value = dtype_ == DType::int32 ? std::floor(uniform(rng)) : uniform(rng);
        host::store(host_.data(), dtype_, offset_of(i), value);
    }
    if (has_device_) upload();
}

void TestTensor::fill_values(const std::vector<double>& logical_values) {
    if (static_cast<std::int64_t>(logical_values.size()) != numel())
        fail(ErrorCode::invalid_argument, "TestTensor::fill_values: {} values for {} elements", logical_values.size(), numel());
    for (std::int64_t i = 0; i < numel(); ++i)
        host::store(host_.data(), dtype_, offset_of(i), logical_values[static_cast<std::size_t>(i)]);
    if (has_device_) upload();
}

void TestTensor::fill_int(const std::vector<std::int32_t>& logical_values) {
    fill_values(std::vector<double>(logical_values.begin(), logical_values.end()));
}

void TestTensor::poison() {
    std::fill(host_.begin(), host_.end(), poison_byte);
    if (has_device_) gpu().fill_bytes(device_.data(), poison_byte, host_.size());
}

void TestTensor::upload() {
    if (has_device_) gpu().copy_to_device(device_.data(), host_.data(), host_.size());
}

void TestTensor::download() {
    if (has_device_) gpu().copy_to_host(host_.data(), device_.data(), host_.size());
}

void* TestTensor::device_start() const {
    return static_cast<unsigned char*>(device_.data()) + offset_ * static_cast<std::int64_t>(dtype_size(dtype_));
}

static Tensor make_view(const void* data, DType dtype, const std::vector<std::int64_t>& shape,
                        const std::vector<std::int64_t>& strides) {
    Tensor t;
    t.data = data;
    t.dtype = dtype;
    t.rank = static_cast<int>(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
        t.shape[d] = shape[d];
        t.strides[d] = strides[d];
    }
    return t;
}

Tensor TestTensor::device_view() const {
    if (!has_device_) fail(ErrorCode::invalid_argument, "TestTensor::device_view: a host-only tensor");
    return make_view(device_start(), dtype_, shape_, strides_);
}

Tensor TestTensor::host_view() const {
    return make_view(host_.data() + offset_ * static_cast<std::int64_t>(dtype_size(dtype_)), dtype_, shape_, strides_);
}

std::vector<double> TestTensor::values() const {
    std::vector<double> out(static_cast<std::size_t>(numel()));
    for (std::int64_t i = 0; i < numel(); ++i) out[static_cast<std::size_t>(i)] = host::load(host_.data(), dtype_, offset_of(i));
    return out;
}

bool TestTensor::padding_untouched() const {
    const auto element = dtype_size(dtype_);
    std::vector<char> in_view(host_.size() / element, 0);
    for (std::int64_t i = 0; i < numel(); ++i) in_view[static_cast<std::size_t>(offset_of(i))] = 1;
    for (std::size_t e = 0; e < in_view.size(); ++e) {
        if (in_view[e]) continue;
        for (std::size_t b = 0; b < element; ++b)
            if (host_[e * element + b] != poison_byte) return false;
    }
    return true;
}

bool TestTensor::all_poisoned() const {
    return std::all_of(host_.begin(), host_.end(), [](unsigned char b) { return b == poison_byte; });
}

}  // namespace cc1d::test
