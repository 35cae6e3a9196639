// Update reference (SEMANTICS.md "Update"): one decoding step of T >= 1 tokens against
// a conv_state that is either shifted (plain) or a circular buffer (cache_seqlens).
#include "reference/conv_row.hpp"
#include "reference/reference.hpp"

#include <fmt/format.h>

#include "common/host_dtype.hpp"

namespace cc1d::reference {
namespace {

using detail::require_shape;

std::int64_t positive_mod(std::int64_t a, std::int64_t m) { return ((a % m) + m) % m; }

}  // namespace

UpdateResult update(const UpdateArgs& args) {
    detail::require(args.x.rank == 3 && args.weight.rank == 2 && args.conv_state.rank == 3,
                    "update: x and conv_state must be rank 3, weight rank 2");
    const std::int64_t B = args.x.shape[0], D = args.x.shape[1], T = args.x.shape[2];
    const std::int64_t W = args.weight.shape[1], K = W - 1;
    const std::int64_t slots = args.conv_state.shape[0], S = args.conv_state.shape[2];
    require_shape(args.x, "x", {B, D, T});
    require_shape(args.weight, "weight", {D, W});
    require_shape(args.conv_state, "conv_state", {slots, D, S});
    detail::require(W >= 1 && S >= K, "update: need width >= 1 and state length >= width - 1");
    if (args.bias.present()) require_shape(args.bias, "bias", {D});
    if (args.cache_seqlens.present()) require_shape(args.cache_seqlens, "cache_seqlens", {B});
    if (args.conv_state_indices.present()) require_shape(args.conv_state_indices, "conv_state_indices", {B});
    const bool indexed = args.conv_state_indices.present();
    detail::require(indexed || slots >= B, "update: conv_state has fewer rows than the batch");

    UpdateResult r;
    r.out.assign(static_cast<std::size_t>(B * D * T), 0.0);
    r.conv_state.resize(static_cast<std::size_t>(slots * D * S));
    for (std::int64_t s = 0; s < slots; ++s)
        for (std::int64_t d = 0; d < D; ++d)
            for (std::int64_t j = 0; j < S; ++j)
                r.conv_state[static_cast<std::size_t>((s * D + d) * S + j)] = host::at(args.conv_state, s, d, j);

    for (std::int64_t b = 0; b < B; ++b) {
        const std::int64_t slot = indexed ? static_cast<std::int64_t>(host::at(args.conv_state_indices, b)) : b;
        if (indexed && slot == args.pad_slot_id) continue;   // out stays 0, no state touched
        detail::require(slot >= 0 && slot < slots, fmt::format("update: row {} has slot {} out of range", b, slot));
        const std::int64_t c = args.cache_seqlens.present() ? static_cast<std::int64_t>(host::at(args.cache_seqlens, b)) : 0;
        for (std::int64_t d = 0; d < D; ++d) {
            double* state = &r.conv_state[static_cast<std::size_t>((slot * D + d) * S)];
            // u = K history values followed by the T new tokens.
            std::vector<double> u(static_cast<std::size_t>(K + T));
            for (std::int64_t j = 0; j < K; ++j)
                u[static_cast<std::size_t>(j)] =
                    args.cache_seqlens.present() ? state[positive_mod(c - K + j, S)] : state[S - K + j];
            for (std::int64_t t = 0; t < T; ++t) u[static_cast<std::size_t>(K + t)] = host::at(args.x, b, d, t);

            const auto w = detail::channel_weights(args.weight, d);
            const double bias = detail::channel_bias(args.bias, d);
            for (std::int64_t t = 0; t < T; ++t) {
                double z = bias;
                for (std::int64_t k = 0; k <= K; ++k) z += w[static_cast<std::size_t>(k)] * u[static_cast<std::size_t>(t + k)];
                r.out[static_cast<std::size_t>((b * D + d) * T + t)] = detail::activate(z, args.activation);
            }

            if (args.cache_seqlens.present()) {
                // In token order, so when T > S the latest token wins a slot.
                for (std::int64_t t = 0; t < T; ++t) state[positive_mod(c + t, S)] = u[static_cast<std::size_t>(K + t)];
            } else {
                // The state becomes the last S values of concat(state, x).
                std::vector<double> all(state, state + S);
                all.insert(all.end(), u.begin() + K, u.end());
                std::copy(all.end() - S, all.end(), state);
            }
        }
    }
    return r;
}

}  // namespace cc1d::reference
