// GPU test support: the device (or a visible skip), the Runtime under test, device
// buffers, temporary folders and the random seed of the run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cc1d/cc1d.hpp"
#include "device/device.hpp"

namespace cc1d::test {

// The process's device. When none can be opened, prints "SKIPPED: no usable GPU:
// <reason>" and exits with status 77, which CTest reports as a skipped test (never as
// a pass).
device::Device& gpu();

// One Runtime per test process, with its disk cache in a fresh temporary folder, or in
// CC1D_TEST_CACHE_DIR when set (so several test binaries can share one).
Runtime& runtime();

// A fresh, empty folder under the system's temporary directory, removed at exit.
std::string temporary_directory();

// The run's base seed: CC1D_TEST_SEED when set, else a fresh random one. Printed once,
// so a failing run can be repeated; tests derive per-case seeds from it.
std::uint32_t base_seed();

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
