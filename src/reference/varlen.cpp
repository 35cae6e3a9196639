// Variable-length prefill reference (SEMANTICS.md "Variable-length prefill").
//
// x and out are rank 2: logically (D, total), or given as (total, D) for the token-major
// layout. Which dimension holds the channels is read from the shape against the weight's
// D; when both equal D, (D, total) is assumed. Strides are free (host::at reads them).
#include "reference/conv_row.hpp"
#include "reference/reference.hpp"

#include <fmt/format.h>

#include "common/host_dtype.hpp"

namespace cc1d::reference {
namespace {

using detail::require_shape;

// Reads x[d, token] whichever way round the rank-2 tensor is given.
struct TokenMatrix {
    const Tensor& t;
    bool channels_first;
    double at(std::int64_t d, std::int64_t token) const {
        return channels_first ? host::at(t, d, token) : host::at(t, token, d);
    }
    std::int64_t tokens() const { return channels_first ? t.shape[1] : t.shape[0]; }
};

TokenMatrix token_matrix(const Tensor& t, std::int64_t D, const char* name) {
    detail::require(t.data != nullptr && t.rank == 2, fmt::format("varlen: {} must be a rank-2 tensor", name));
    detail::require(t.shape[0] == D || t.shape[1] == D,
                    fmt::format("varlen: {} has no dimension of size D = {}", name, D));
    return TokenMatrix{t, t.shape[0] == D};
}

struct Sequence {
    std::int64_t start, length, slot;
    bool pad, reads_history;
};

Sequence sequence(const VarlenForwardArgs& args, std::int64_t i, std::int64_t slots) {
    Sequence s{};
    s.start = static_cast<std::int64_t>(host::at(args.cu_seqlens, i));
    s.length = static_cast<std::int64_t>(host::at(args.cu_seqlens, i + 1)) - s.start;
    detail::require(s.start >= 0 && s.length >= 0, fmt::format("varlen: cu_seqlens decreases at {}", i));
    s.slot = args.cache_indices.present() ? static_cast<std::int64_t>(host::at(args.cache_indices, i)) : i;
    const bool has_states = args.conv_states.present();
    s.pad = has_states && args.cache_indices.present() && s.slot == args.pad_slot_id;
    if (has_states && !s.pad)
        detail::require(s.slot >= 0 && s.slot < slots, fmt::format("varlen: sequence {} has slot {} out of range", i, s.slot));
    s.reads_history = has_states && !s.pad && args.has_initial_state.present() &&
                      host::at(args.has_initial_state, i) != 0.0;
    return s;
}

}  // namespace

VarlenResult varlen_forward(const VarlenForwardArgs& args) {
    detail::require(args.weight.rank == 2, "varlen: weight must be rank 2");
    const std::int64_t D = args.weight.shape[0], W = args.weight.shape[1], K = W - 1;
    detail::require(W >= 1, "varlen: width must be at least 1");
    const TokenMatrix x = token_matrix(args.x, D, "x");
    const std::int64_t total = x.tokens();
    detail::require(args.cu_seqlens.rank == 1 && args.cu_seqlens.shape[0] >= 1, "varlen: cu_seqlens must be (N+1)");
    const std::int64_t N = args.cu_seqlens.shape[0] - 1;
    if (args.bias.present()) require_shape(args.bias, "bias", {D});
    if (args.cache_indices.present()) require_shape(args.cache_indices, "cache_indices", {N});
    if (args.has_initial_state.present()) require_shape(args.has_initial_state, "has_initial_state", {N});
    const bool has_states = args.conv_states.present();
    const std::int64_t slots = has_states ? args.conv_states.shape[0] : 0;
    const std::int64_t S = has_states ? args.conv_states.shape[2] : 0;
    if (has_states) {
        require_shape(args.conv_states, "conv_states", {slots, D, S});
        detail::require(S >= K, "varlen: conv_states hold fewer than width - 1 positions");
    }

    VarlenResult r;
    r.out.assign(static_cast<std::size_t>(D * total), 0.0);
    r.conv_states.resize(static_cast<std::size_t>(slots * D * S));
    for (std::int64_t s = 0; s < slots; ++s)
        for (std::int64_t d = 0; d < D; ++d)
            for (std::int64_t j = 0; j < S; ++j)
                r.conv_states[static_cast<std::size_t>((s * D + d) * S + j)] = host::at(args.conv_states, s, d, j);

    for (std::int64_t i = 0; i < N; ++i) {
        const Sequence seq = sequence(args, i, slots);
        detail::require(seq.start + seq.length <= total, fmt::format("varlen: sequence {} ends past the tokens", i));
        for (std::int64_t d = 0; d < D; ++d) {
            // u = K history values (the slot's last K positions, or zeros) then the sequence.
            std::vector<double> u(static_cast<std::size_t>(K + seq.length), 0.0);
            double* state = has_states && !seq.pad ? &r.conv_states[static_cast<std::size_t>((seq.slot * D + d) * S)] : nullptr;
            if (seq.reads_history)
                for (std::int64_t j = 0; j < K; ++j) u[static_cast<std::size_t>(j)] = state[S - K + j];
            for (std::int64_t t = 0; t < seq.length; ++t) u[static_cast<std::size_t>(K + t)] = x.at(d, seq.start + t);

            const auto w = detail::channel_weights(args.weight, d);
            const double bias = detail::channel_bias(args.bias, d);
            for (std::int64_t t = 0; t < seq.length; ++t) {
                double z = bias;
                for (std::int64_t k = 0; k <= K; ++k) z += w[static_cast<std::size_t>(k)] * u[static_cast<std::size_t>(t + k)];
                r.out[static_cast<std::size_t>(d * total + seq.start + t)] = detail::activate(z, args.activation);
            }
            // The slot keeps the last K values of concat(history, sequence) at S-K..S-1.
            if (state)
                for (std::int64_t j = 0; j < K; ++j) state[S - K + j] = u[static_cast<std::size_t>(seq.length + j)];
        }
    }
    return r;
}

}  // namespace cc1d::reference
