#include "bench_tensor.hpp"

#include <utility>

#include "common/host_dtype.hpp"

namespace cc1d::bench {
namespace {

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> strides(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    return strides;
}

std::size_t extent_elements(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides) {
    std::int64_t last = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 0) return 0;
        last += (shape[d] - 1) * strides[d];
    }
    return static_cast<std::size_t>(last + 1);
}

}  // namespace

DeviceMemory::DeviceMemory(device::Device& device, std::size_t bytes)
    : device_(&device), data_(bytes ? device.allocate(bytes) : nullptr), bytes_(bytes) {}

DeviceMemory::~DeviceMemory() {
    if (data_) device_->release(data_);
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : device_(other.device_), data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
    if (this != &other) {
        if (data_) device_->release(data_);
        device_ = other.device_;
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

BenchTensor::BenchTensor(device::Device& device, DType dtype, std::vector<std::int64_t> shape,
                         std::vector<std::int64_t> strides)
    : dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)), device_(&device) {
    const std::size_t bytes = extent_elements(shape_, strides_) * dtype_size(dtype_);
    input_.assign(bytes, 0);
    memory_ = DeviceMemory(device, bytes);
}

BenchTensor::BenchTensor(device::Device& device, DType dtype, std::vector<std::int64_t> shape)
    : BenchTensor(device, dtype, shape, row_major_strides(shape)) {}

void BenchTensor::fill_random(std::mt19937_64& rng, double lo, double hi) {
    // One 64-bit draw gives two 32-bit uniforms: the big inputs are ~10^8 elements.
    const std::size_t count = input_.size() / dtype_size(dtype_);
    const double scale = (hi - lo) / 4294967296.0;
    for (std::size_t i = 0; i < count; i += 2) {
        const std::uint64_t bits = rng();
        host::store(input_.data(), dtype_, static_cast<std::int64_t>(i), lo + scale * double(bits & 0xffffffffu));
        if (i + 1 < count)
            host::store(input_.data(), dtype_, static_cast<std::int64_t>(i + 1), lo + scale * double(bits >> 32));
    }
    device_->copy_to_device(memory_.data(), input_.data(), input_.size());
}

void BenchTensor::fill_int(const std::vector<std::int32_t>& values) {
    const Tensor view = input_view();
    std::size_t next = 0;
    const std::int64_t n0 = view.rank > 0 ? view.shape[0] : 1, n1 = view.rank > 1 ? view.shape[1] : 1;
    for (std::int64_t i = 0; i < n0; ++i)
        for (std::int64_t j = 0; j < n1 && next < values.size(); ++j) {
            const std::int64_t offset = i * view.strides[0] + (view.rank > 1 ? j * view.strides[1] : 0);
            host::store(input_.data(), DType::int32, offset, values[next++]);
        }
    device_->copy_to_device(memory_.data(), input_.data(), input_.size());
}

void BenchTensor::poison() { device_->fill_bytes(memory_.data(), 0xFF, memory_.bytes()); }

void BenchTensor::download() {
    result_.resize(input_.size());
    device_->copy_to_host(result_.data(), memory_.data(), result_.size());
}

Tensor BenchTensor::view_of(const void* base) const {
    Tensor t;
    if (shape_.empty()) return t;
    t.data = base;
    t.dtype = dtype_;
    t.rank = static_cast<int>(shape_.size());
    for (int d = 0; d < t.rank; ++d) {
        t.shape[d] = shape_[static_cast<std::size_t>(d)];
        t.strides[d] = strides_[static_cast<std::size_t>(d)];
    }
    return t;
}

Tensor BenchTensor::device_view() const { return view_of(memory_.data()); }
Tensor BenchTensor::input_view() const { return view_of(input_.data()); }
Tensor BenchTensor::result_view() const { return view_of(result_.data()); }

Tensor BenchTensor::narrowed(Tensor view, int axis, std::int64_t first, std::int64_t count) {
    if (!view.present()) return view;
    view.data = static_cast<const unsigned char*>(view.data) +
                first * view.strides[axis] * static_cast<std::int64_t>(dtype_size(view.dtype));
    view.shape[axis] = count;
    return view;
}

std::vector<double> logical_values(const Tensor& t) {
    std::vector<double> values;
    values.reserve(static_cast<std::size_t>(t.numel()));
    const std::int64_t n0 = t.rank > 0 ? t.shape[0] : 1, n1 = t.rank > 1 ? t.shape[1] : 1,
                       n2 = t.rank > 2 ? t.shape[2] : 1;
    for (std::int64_t i = 0; i < n0; ++i)
        for (std::int64_t j = 0; j < n1; ++j)
            for (std::int64_t k = 0; k < n2; ++k) values.push_back(host::at(t, i, j, k));
    return values;
}

}  // namespace cc1d::bench
