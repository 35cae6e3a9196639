// One benchmark case: a variant plus the shape it runs on, and how its bytes are
// counted (ANCHORS.md), so every run reports comparable GB/s and % of copy bandwidth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "variant/variant.hpp"

namespace cc1d::config {

struct BenchCase {
    std::string name;                    // from the config, e.g. "large-mamba"
    Variant variant;
    std::int64_t batch = 1;              // fwd, bwd, update
    std::int64_t dim = 1;                // every op
    std::int64_t seqlen = 1;             // fwd, bwd
    std::int64_t tokens = 1;             // update: new tokens per sequence (T)
    std::int64_t state_len = 0;          // update: conv_state length S (>= width - 1)
    std::int64_t cache_batch = 0;        // update: conv_state rows (>= batch)
    std::vector<std::int64_t> seqlens;   // varlen_fwd: lengths of the packed sequences

    std::int64_t total_tokens() const;   // varlen_fwd: sum of seqlens
    // "large-mamba bwd cl w4 bf16 silu bias seq_idx"; with shape_text() unique in a config.
    std::string label() const;
    // "8x2048x1024", "B=64 D=8192 T=1 S=3", "16 seqs 32768 tok D=5376".
    std::string shape_text() const;
    // Elements of the largest activation tensor (x), for sizing checks and buffers.
    std::int64_t x_elements() const;
};

// Bytes one call moves as ANCHORS.md counts them: fwd 2·B·D·L·sizeof(x) (read x, write
// out); bwd 3·B·D·L·sizeof(x) (read x and dout, write dx); update B·D·(T + 2(W−1) + T)
// ·sizeof(x) (x, state read, state write, out); varlen_fwd 2·D·total·sizeof(x).
std::uint64_t counted_bytes(const BenchCase& c);

}  // namespace cc1d::config
