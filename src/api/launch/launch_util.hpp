// Small helpers the forward-family launchers share: grid flattening, the 16-byte vector
// test, and the forward parameter block both forward layouts fill the same way.
#pragma once

#include <algorithm>
#include <cstdint>

#include "api/launch/launch.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"
#include "params.h"

namespace cc1d::launch::util {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Peak DRAM bandwidth (Launcher::memory_bandwidth_gbps) from which a device counts as one
// of fast memory (an H200's 4.8 TB/s, not an H100's 3.35): there the same bytes take 30%
// less time while each block's fixed costs stay, and a few plans and kernels differ.
constexpr double kFastMemoryGbps = 4000.0;
inline bool fast_memory(Launcher& launcher) { return launcher.memory_bandwidth_gbps() >= kFastMemoryGbps; }

// Elements of `dtype` in one 16-byte vector.
inline int vector_elems(DType dtype) { return static_cast<int>(16 / dtype_size(dtype)); }

// The most blocks a grid takes along x: x * blockDim.x stays below 2^32 for blocks of up
// to 1,024 threads, as HIP requires (its launch takes the threads along x as 32 bits; at
// 2^24 blocks of 256 threads they were 2^32, which a random launch test found).
constexpr std::int64_t kMaxGridX = (std::int64_t(1) << 22) - 1;

// `blocks` blocks as a grid: x alone while it fits, else x * y. Kernels rebuild the linear
// index as blockIdx.y * gridDim.x + blockIdx.x in 32 bits (cc1d_flat_block) and drop the
// few past `blocks`.
inline device::Dim3 flat_grid(std::int64_t blocks) {
    constexpr std::int64_t max_x = kMaxGridX;
    device::Dim3 grid;
    if (blocks <= 0) {
        grid.x = 0;
        return grid;
    }
    if (blocks >= (std::int64_t(1) << 32))
        fail(ErrorCode::unsupported, "launch: {} blocks; at most 2^32 - 1 are supported (split the call)", blocks);
    grid.x = static_cast<unsigned>(std::min(blocks, max_x));
    grid.y = static_cast<unsigned>(ceil_div(blocks, max_x));
    return grid;
}

// True when 16-byte vectors along `vector_axis` are safe for every row of `t`: the data
// is 16-byte aligned, that axis has unit stride, and every other axis steps by whole
// vectors (size-1 axes never step).
inline bool rows_vectorizable(const Tensor& t, int vector_axis) {
    if (!aligned16(t.data)) return false;
    const std::int64_t vec = 16 / static_cast<std::int64_t>(dtype_size(t.dtype));
    if (t.shape[vector_axis] > 1 && t.strides[vector_axis] != 1) return false;
    for (int axis = 0; axis < t.rank; ++axis)
        if (axis != vector_axis && t.shape[axis] > 1 && t.strides[axis] % vec != 0) return false;
    return true;
}

// Positions a tile that follows the rows of channel-first `x` from each row's own 16-byte
// boundary (the modules of rows off such boundaries) may start before the row: up to a
// vector less one, none where every row starts at a boundary.
inline std::int64_t lead_room(const Tensor& x) {
    return rows_vectorizable(x, 2) ? 0 : static_cast<std::int64_t>(16 / dtype_size(x.dtype)) - 1;
}

// True when `t`'s data address is a whole number of its elements (every element access
// is then naturally aligned).
inline bool element_aligned(const Tensor& t) {
    return reinterpret_cast<std::uintptr_t>(t.data) % dtype_size(t.dtype) == 0;
}

// True when the variant has the module a flag of its names: the flag, set, survives
// normalized(). Variant::shifted_rows: rows off 16-byte boundaries (the channel-first
// backward in 16-bit, the channel-first forward without seq_idx, the channel-last forward,
// the 16-bit channel-last backward's tile kernel); Variant::tiled: the
// channel-last backward's tile kernel (up to width 4 without states).
inline bool has_module(const Variant& variant, bool Variant::*flag) {
    Variant with = variant;
    with.*flag = true;
    return with.normalized().*flag;
}

// True when a call of `x` may take the variant's module of rows off 16-byte boundaries:
// the variant has one, the call has elements, and CC1D_DISABLE_SHIFTED_ROWS (read on every
// call) is not set. Each op's own rule then says whether its rows need that module.
inline bool shifted_rows_allowed(const Variant& variant, const Tensor& x) {
    return has_module(variant, &Variant::shifted_rows) && x.numel() != 0 && !env::flag("CC1D_DISABLE_SHIFTED_ROWS");
}

// True when seq_idx is given and its rows can be read as 16-byte vectors of 4 ids.
inline bool seq_vectorizable(const Tensor& seq) { return seq.present() && rows_vectorizable(seq, 1); }

// True when `axis` of `t` has unit stride (or a single element), whatever the alignment:
// kernels that split each row at its own 16-byte boundaries (varlen_fwd.cu) need no more.
inline bool unit_stride(const Tensor& t, int axis) { return t.shape[axis] <= 1 || t.strides[axis] == 1; }

// True when every element `t`'s view reaches, and every partial sum of an offset on the
// way there (strides may be negative), lies within 2^31 - 1 elements of its start: what
// kernels with 32-bit offsets need (the small-call kernels). An absent or empty tensor fits.
inline bool offsets_fit_int32(const Tensor& t) {
    if (!t.present() || t.numel() == 0) return true;
    std::int64_t reach = 0;
    for (int i = 0; i < t.rank; ++i) reach += (t.shape[i] - 1) * (t.strides[i] < 0 ? -t.strides[i] : t.strides[i]);
    return reach < (std::int64_t(1) << 31);
}

// The multiplier and shift that divide any 0 <= n < 2^31 by d (1 <= d < 2^31) in a
// kernel: n / d == (umulhi(n, magic) + n) >> shift with shift = ceil(log2 d) and
// magic = floor(2^32 (2^shift - d) / d) + 1, so that 2^32 + magic = floor(2^(32+shift) / d) + 1
// (Granlund and Montgomery, "Division by invariant integers using multiplication", 1994).
inline cc1d_divisor divisor_of(std::uint32_t d) {
    unsigned shift = 0;
    while ((std::uint64_t(1) << shift) < d) ++shift;
    const std::uint64_t magic = (((std::uint64_t(1) << shift) - d) << 32) / d + 1;
    return {static_cast<unsigned>(magic), shift};
}

// The kernels' n / d (fs_div in fwd_small.cu), for host tests of divisor_of.
inline std::uint32_t divide(std::uint32_t n, cc1d_divisor d) {
    const std::uint32_t high = static_cast<std::uint32_t>((std::uint64_t(n) * d.magic) >> 32);
    return (high + n) >> d.shift;
}

// The forward parameter block with everything but the geometry (tiles, chunk_len).
inline cc1d_fwd_params forward_params(const ForwardArgs& args) {
    cc1d_fwd_params p{};
    p.x = args.x.data;
    p.weight = args.weight.data;
    p.bias = args.bias.present() ? args.bias.data : nullptr;
    p.out = args.out.mutable_data();
    p.seq_idx = args.seq_idx.present() ? static_cast<const int*>(args.seq_idx.data) : nullptr;
    p.initial_states = args.initial_states.present() ? args.initial_states.data : nullptr;
    p.final_states = args.final_states.present() ? args.final_states.mutable_data() : nullptr;
    p.batch = args.x.shape[0];
    p.dim = args.x.shape[1];
    p.seqlen = args.x.shape[2];
    p.x_stride_b = args.x.strides[0];
    p.x_stride_d = args.x.strides[1];
    p.x_stride_l = args.x.strides[2];
    p.out_stride_b = args.out.strides[0];
    p.out_stride_d = args.out.strides[1];
    p.out_stride_l = args.out.strides[2];
    p.w_stride_d = args.weight.strides[0];
    p.w_stride_k = args.weight.strides[1];
    if (args.bias.present()) p.bias_stride = args.bias.strides[0];
    if (args.seq_idx.present()) {
        p.seq_stride_b = args.seq_idx.strides[0];
        p.seq_stride_l = args.seq_idx.strides[1];
        p.seq_vector_ok = seq_vectorizable(args.seq_idx);
    }
    if (args.initial_states.present()) {
        p.init_stride_b = args.initial_states.strides[0];
        p.init_stride_d = args.initial_states.strides[1];
        p.init_stride_k = args.initial_states.strides[2];
    }
    if (args.final_states.present()) {
        p.final_stride_b = args.final_states.strides[0];
        p.final_stride_d = args.final_states.strides[1];
        p.final_stride_k = args.final_states.strides[2];
    }
    return p;
}

}  // namespace cc1d::launch::util
