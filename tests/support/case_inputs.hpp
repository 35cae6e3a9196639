// Inputs shared by the GPU test matrices: the dtype pairs, the rotation of memory views
// (contiguous, strided, misaligned), per-case seeds and random seq_idx rows.
// Header-only; every test binary uses a few of these.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cc1d/cc1d.hpp"
#include "support/gpu_fixture.hpp"
#include "support/random_tensor.hpp"

namespace cc1d::test {

struct DTypePair {
    DType x, weight;
};

// x in fp32/fp16/bf16 × weight in fp32/fp16/bf16.
inline const std::vector<DTypePair>& dtype_pairs() {
    static const std::vector<DTypePair> pairs = [] {
        std::vector<DTypePair> p;
        for (DType x : {DType::fp32, DType::fp16, DType::bf16})
            for (DType w : {DType::fp32, DType::fp16, DType::bf16}) p.push_back({x, w});
        return p;
    }();
    return pairs;
}

// Widths the forward and backward matrices cross completely.
inline const std::vector<int>& all_widths() {
    static const std::vector<int> widths = {1, 2, 3, 4, 5, 8, 16};
    return widths;
}

// Sequence lengths every forward/backward variant runs on: {1, 2, W-1, W, 129, 130,
// 1134, 4096} without repeats or zero (edges of the width, of a 128-thread tile, and a
// few tiles long).
inline std::vector<std::int64_t> standard_lengths(int width) {
    std::vector<std::int64_t> lengths;
    for (std::int64_t L : {std::int64_t{1}, std::int64_t{2}, std::int64_t{width} - 1, std::int64_t{width}, std::int64_t{129},
                           std::int64_t{130}, std::int64_t{1134}, std::int64_t{4096}})
        if (L > 0 && std::find(lengths.begin(), lengths.end(), L) == lengths.end()) lengths.push_back(L);
    return lengths;
}

// The seed of one case: the run's base seed mixed with the test's salt and the case's
// index (splitmix64), so every case has fresh data and can be repeated alone.
inline std::uint32_t case_seed(std::uint64_t salt, std::uint64_t index) {
    std::uint64_t z = (static_cast<std::uint64_t>(base_seed()) << 32) ^ (salt * 0x9E3779B97F4A7C15ull) ^ index;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::uint32_t>(z ^ (z >> 31));
}

// Four kinds of memory view, picked by `which` (mod 4): contiguous; strided (every
// dim padded); misaligned by one element; strided and misaligned by three.
inline ViewOptions view_kind(int which, bool channel_last) {
    ViewOptions v;
    v.channel_last = channel_last;
    switch (((which % 4) + 4) % 4) {
        case 1: v.pad[0] = 1, v.pad[1] = 2, v.pad[2] = 3; break;
        case 2: v.misalign = 1; break;
        case 3: v.pad[0] = 2, v.pad[1] = 1, v.pad[2] = 5, v.misalign = 3; break;
        default: break;
    }
    return v;
}

inline std::string describe(const ViewOptions& v) {
    std::string text = v.channel_last ? "cl" : "cf";
    if (v.pad[0] || v.pad[1] || v.pad[2]) text += fmt::format(" pad({},{},{})", v.pad[0], v.pad[1], v.pad[2]);
    if (v.misalign) text += fmt::format(" misalign {}", v.misalign);
    return text;
}

// seq_idx rows: runs of random length (short ones near the width, long ones up to half
// the row) with increasing ids, some padding runs (-1), and, when `reuse_ids`, an id
// that comes back after another one (boundaries are equality of ids, not order).
inline std::vector<std::int32_t> random_seq_idx(std::mt19937& rng, std::int64_t B, std::int64_t L, bool reuse_ids) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(B * L));
    std::uniform_int_distribution<int> coin(0, 5);
    for (std::int64_t b = 0; b < B; ++b) {
        std::int32_t next_id = 0;
        std::int64_t t = 0;
        while (t < L) {
            const std::int64_t longest = coin(rng) < 3 ? 9 : std::max<std::int64_t>(1, L / 2);
            const std::int64_t run = std::uniform_int_distribution<std::int64_t>(1, longest)(rng);
            std::int32_t id = next_id++;
            if (coin(rng) == 0) id = -1;                              // padding
            else if (reuse_ids && next_id > 2 && coin(rng) == 1) id = 0;   // an earlier id again
            for (std::int64_t i = 0; i < run && t < L; ++i, ++t) ids[static_cast<std::size_t>(b * L + t)] = id;
        }
    }
    return ids;
}

// A random permutation of 0..n-1.
inline std::vector<std::int32_t> permutation(std::mt19937& rng, std::int32_t n) {
    std::vector<std::int32_t> p(static_cast<std::size_t>(n));
    for (std::int32_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
    std::shuffle(p.begin(), p.end(), rng);
    return p;
}

}  // namespace cc1d::test
