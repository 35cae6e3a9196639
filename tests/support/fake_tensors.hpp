// Tensors for host tests of the launch plans: distinct, 16-byte aligned fake device
// addresses (never dereferenced) and contiguous (B, D, L) views in either layout.
#pragma once

#include <cstdint>

#include "cc1d/cc1d.hpp"
#include "variant/variant.hpp"

namespace cc1d::test {

inline void* fake_address(int slot) { return reinterpret_cast<void*>(std::uintptr_t(0x10000000) * (slot + 1)); }

// A contiguous (B, D, L) tensor of `layout` (stored (B, L, D) when channel-last) at slot `slot`.
inline Tensor fake_bdl(int slot, DType dtype, std::int64_t B, std::int64_t D, std::int64_t L, Layout layout) {
    if (layout == Layout::channel_last) return Tensor(fake_address(slot), dtype, {B, D, L}, {L * D, 1, D});
    return Tensor(fake_address(slot), dtype, {B, D, L}, {D * L, L, 1});
}

}  // namespace cc1d::test
