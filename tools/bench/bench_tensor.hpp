// A tensor the bench owns on both sides: the host bytes it generated (inputs, kept as
// uploaded so the reference sees what the device saw), a device allocation, and a
// second host buffer for what the device produced (download()). Views of a channel
// range let the reference check a sample of a large problem.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "cc1d/cc1d.hpp"
#include "device/device.hpp"

namespace cc1d::bench {

// Device memory, released on scope exit.
class DeviceMemory {
public:
    DeviceMemory() = default;
    DeviceMemory(device::Device& device, std::size_t bytes);
    ~DeviceMemory();
    DeviceMemory(DeviceMemory&& other) noexcept;
    DeviceMemory& operator=(DeviceMemory&& other) noexcept;
    void* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }

private:
    device::Device* device_ = nullptr;
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

class BenchTensor {
public:
    BenchTensor() = default;
    // Logical `shape` with element `strides` (the memory order); the allocation covers
    // the whole strided extent.
    BenchTensor(device::Device& device, DType dtype, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides);
    // Row-major contiguous.
    BenchTensor(device::Device& device, DType dtype, std::vector<std::int64_t> shape);

    // Uniform values in [lo, hi), rounded to the dtype, uploaded.
    void fill_random(std::mt19937_64& rng, double lo = -1.0, double hi = 1.0);
    // int32 contents in logical row-major order, uploaded.
    void fill_int(const std::vector<std::int32_t>& values);
    // Every byte 0xFF on the device: NaN in every float type, so an element the call
    // should have written and did not fails the check.
    void poison();
    void download();

    bool present() const { return !shape_.empty(); }
    Tensor device_view() const;
    Tensor input_view() const;    // host bytes as generated
    Tensor result_view() const;   // host bytes as downloaded
    // `view` narrowed to `count` indices starting at `first` along `axis`.
    static Tensor narrowed(Tensor view, int axis, std::int64_t first, std::int64_t count);

private:
    Tensor view_of(const void* base) const;

    DType dtype_ = DType::fp32;
    std::vector<std::int64_t> shape_, strides_;
    std::vector<unsigned char> input_, result_;
    DeviceMemory memory_;
    device::Device* device_ = nullptr;
};

// Values of a host view in logical row-major order (what the reference returns).
std::vector<double> logical_values(const Tensor& host_view);

}  // namespace cc1d::bench
