// Host tensors for the reference's unit tests: given values in logical row-major
// order, stored in any dtype with any memory order and padding. Unused bytes hold
// 0xFF (a NaN in every float type), so a stray read shows up in the results.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cc1d/cc1d.hpp"
#include "common/host_dtype.hpp"

namespace cc1d::unit {

struct Memory {
    std::vector<int> order;            // logical dims from outermost to innermost; empty: row-major
    std::vector<std::int64_t> pad;     // extra elements per logical dim; empty: none
};

class HostTensor {
public:
    HostTensor() = default;
    HostTensor(DType dtype, std::vector<std::int64_t> shape, const std::vector<double>& values, Memory memory = {})
        : shape_(std::move(shape)) {
        const int rank = static_cast<int>(shape_.size());
        if (memory.order.empty()) {
            memory.order.resize(static_cast<std::size_t>(rank));
            std::iota(memory.order.begin(), memory.order.end(), 0);
        }
        memory.pad.resize(static_cast<std::size_t>(rank), 0);
        view_.data = nullptr;
        view_.dtype = dtype;
        view_.rank = rank;
        std::int64_t stride = 1;
        for (int i = rank - 1; i >= 0; --i) {
            const int dim = memory.order[static_cast<std::size_t>(i)];
            view_.shape[dim] = shape_[static_cast<std::size_t>(dim)];
            view_.strides[dim] = stride;
            stride *= shape_[static_cast<std::size_t>(dim)] + memory.pad[static_cast<std::size_t>(dim)];
        }
        bytes_.assign(static_cast<std::size_t>(std::max<std::int64_t>(stride, 1)) * dtype_size(dtype), 0xFF);
        view_.data = bytes_.data();
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(values.size()); ++i) set(i, values[static_cast<std::size_t>(i)]);
    }
    HostTensor(HostTensor&&) = default;
    HostTensor& operator=(HostTensor&&) = default;
    HostTensor(const HostTensor&) = delete;
    HostTensor& operator=(const HostTensor&) = delete;

    const Tensor& view() const { return view_; }
    operator Tensor() const { return view_; }
    std::int64_t numel() const { return view_.numel(); }
    double get(std::int64_t logical) const { return host::load(bytes_.data(), view_.dtype, offset(logical)); }
    void set(std::int64_t logical, double value) { host::store(bytes_.data(), view_.dtype, offset(logical), value); }

private:
    std::int64_t offset(std::int64_t logical) const {
        std::int64_t off = 0;
        for (int d = view_.rank - 1; d >= 0; --d) {
            off += (logical % view_.shape[d]) * view_.strides[d];
            logical /= view_.shape[d];
        }
        return off;
    }
    std::vector<std::int64_t> shape_;
    std::vector<unsigned char> bytes_;
    Tensor view_;
};

inline HostTensor fp32(std::vector<std::int64_t> shape, const std::vector<double>& values, Memory memory = {}) {
    return HostTensor(DType::fp32, std::move(shape), values, std::move(memory));
}
inline HostTensor int32(std::vector<std::int64_t> shape, const std::vector<double>& values) {
    return HostTensor(DType::int32, std::move(shape), values);
}
// (B, D, L) stored as (B, L, D): the channel-last layout.
inline Memory channel_last() { return Memory{{0, 2, 1}, {}}; }

}  // namespace cc1d::unit
