// GPU test support: the device (or a visible skip), device buffers, and host mirrors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cc1d/cc1d.hpp"
#include "device/device.hpp"

namespace cc1d::test {

// The process's device. When none can be opened, prints "SKIPPED: <reason>" and exits
// with status 77, which CTest reports as a skipped test (never as a pass).
device::Device& gpu();

// One Runtime per test process, with its disk cache in a fresh temporary folder.
Runtime& runtime();

// Device memory, freed on scope exit.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    void* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

}  // namespace cc1d::test
