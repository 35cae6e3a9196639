#include "config/bench_case.hpp"

#include <fmt/format.h>

#include <numeric>

namespace cc1d::config {

std::int64_t BenchCase::total_tokens() const {
    return std::accumulate(seqlens.begin(), seqlens.end(), std::int64_t{0});
}

std::string BenchCase::label() const {
    const Variant v = variant.normalized();
    std::string text = fmt::format("{} {}", name, to_string(v.op));
    if (v.op != Op::update) text += v.layout == Layout::channel_last ? " cl" : " cf";
    text += fmt::format(" w{} {}", v.width, to_string(v.x_dtype));
    if (v.weight_dtype != v.x_dtype) text += fmt::format("/{}", to_string(v.weight_dtype));
    text += fmt::format(" {}", to_string(v.activation));
    if (v.bias) text += " bias";
    if (v.seq_idx) text += " seq_idx";
    if (v.initial_states) text += v.op == Op::varlen_fwd ? " states" : " init";
    if (v.final_states) text += " final";
    if (!v.deterministic) text += " nondet";
    if (v.cache_seqlens) text += " circular";
    if (v.state_indices) text += " indexed";
    return text;
}

std::string BenchCase::shape_text() const {
    switch (variant.op) {
        case Op::fwd:
        case Op::bwd: return fmt::format("{}x{}x{}", batch, dim, seqlen);
        case Op::update: {
            std::string text = fmt::format("B={} D={} T={} S={}", batch, dim, tokens, state_len);
            if (cache_batch != batch) text += fmt::format(" cache={}", cache_batch);
            return text;
        }
        case Op::varlen_fwd: return fmt::format("{} seqs {} tok D={}", seqlens.size(), total_tokens(), dim);
    }
    return "?";
}

std::int64_t BenchCase::x_elements() const {
    switch (variant.op) {
        case Op::fwd:
        case Op::bwd: return batch * dim * seqlen;
        case Op::update: return batch * dim * tokens;
        case Op::varlen_fwd: return dim * total_tokens();
    }
    return 0;
}

std::uint64_t counted_bytes(const BenchCase& c) {
    const auto element = static_cast<std::uint64_t>(dtype_size(c.variant.x_dtype));
    const auto B = static_cast<std::uint64_t>(c.batch), D = static_cast<std::uint64_t>(c.dim);
    const auto L = static_cast<std::uint64_t>(c.seqlen), T = static_cast<std::uint64_t>(c.tokens);
    const auto K = static_cast<std::uint64_t>(c.variant.width - 1);
    switch (c.variant.op) {
        case Op::fwd: return 2 * B * D * L * element;
        case Op::bwd: return 3 * B * D * L * element;
        case Op::update: return B * D * (T + K + K + T) * element;
        case Op::varlen_fwd: return 2 * D * static_cast<std::uint64_t>(c.total_tokens()) * element;
    }
    return 0;
}

}  // namespace cc1d::config
