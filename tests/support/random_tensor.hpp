// Test tensors that live on the host and on the device at once: random contents,
// optional strided views into a larger allocation, optional misalignment, poisoning of
// outputs, and the check that a call wrote exactly the elements it owns.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cc1d/cc1d.hpp"
#include "support/gpu_fixture.hpp"

namespace cc1d::test {

struct ViewOptions {
    // (B, D, L) tensors: store as (B, L, D). Rank-2 tensors: store transposed (the
    // token-major layout of a logical (D, total) varlen tensor).
    bool channel_last = false;
    std::int64_t pad[3] = {0, 0, 0}; // extra elements per logical dim of the allocation (strided view)
    std::int64_t misalign = 0;       // start this many elements past a 16-byte-aligned address
};

class TestTensor {
public:
    // Logical `shape` (rank 1..3). Memory order: row-major over the logical dims, or
    // (B, L, D) when channel_last, with each dim padded by pad[]. Poisoned guard bytes
    // sit before and after the view. When `device` is false only the host copy exists
    // (for CPU-only reference tests). A new tensor is poisoned everywhere.
    TestTensor(DType dtype, std::vector<std::int64_t> shape, ViewOptions view = {}, bool device = true);

    // Uniform random values in [lo, hi) (rounded to the dtype), on host and device.
    // Everything outside the view stays poisoned, so a read of it shows up as NaN.
    void fill_random(std::mt19937& rng, double lo = -1.0, double hi = 1.0);
    // Values from the caller in logical order (rounded to the dtype; int32 for ids), on
    // host and device.
    void fill_values(const std::vector<double>& logical_values);
    // int32 contents from the caller.
    void fill_int(const std::vector<std::int32_t>& logical_values);
    // Every byte of the allocation (view and padding) set to a NaN pattern (0xFF bytes).
    void poison();
    void upload();     // host -> device (whole allocation)
    void download();   // device -> host (whole allocation)

    Tensor device_view() const;   // for the API under test
    Tensor host_view() const;     // for the reference
    // Logical contents as doubles (host copy; download() first).
    std::vector<double> values() const;
    // True when every byte outside the view still holds the poison (download() first).
    bool padding_untouched() const;
    // True when every byte of the allocation still holds the poison (download() first).
    bool all_poisoned() const;
    // The whole host allocation, for bit-exact comparisons between runs.
    const std::vector<unsigned char>& host_bytes() const { return host_; }

    std::int64_t numel() const;
    DType dtype() const { return dtype_; }
    const std::vector<std::int64_t>& shape() const { return shape_; }

private:
    std::int64_t offset_of(std::int64_t logical) const;   // elements from allocation start
    void* device_start() const;

    DType dtype_;
    std::vector<std::int64_t> shape_;
    std::vector<std::int64_t> strides_;
    std::int64_t offset_ = 0;          // elements from allocation start to view start
    std::vector<unsigned char> host_;
    DeviceBuffer device_;
    bool has_device_ = false;
};

}  // namespace cc1d::test
