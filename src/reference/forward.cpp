// Forward reference (SEMANTICS.md "Forward", "seq_idx", "final_states").
#include "reference/conv_row.hpp"
#include "reference/reference.hpp"

namespace cc1d::reference {

using detail::require_shape;

ForwardResult forward(const ForwardArgs& args) {
    detail::require(args.x.rank == 3 && args.weight.rank == 2, "forward: x must be rank 3 and weight rank 2");
    const std::int64_t B = args.x.shape[0], D = args.x.shape[1], L = args.x.shape[2];
    const std::int64_t W = args.weight.shape[1], K = W - 1;
    require_shape(args.x, "x", {B, D, L});
    require_shape(args.weight, "weight", {D, W});
    detail::require(W >= 1, "forward: width must be at least 1");
    if (args.bias.present()) require_shape(args.bias, "bias", {D});
    if (args.seq_idx.present()) require_shape(args.seq_idx, "seq_idx", {B, L});
    if (args.initial_states.present()) require_shape(args.initial_states, "initial_states", {B, D, K});

    ForwardResult result;
    result.out.assign(static_cast<std::size_t>(B * D * L), 0.0);
    const bool want_final = args.final_states.present();
    if (want_final) result.final_states.assign(static_cast<std::size_t>(B * D * K), 0.0);

    for (std::int64_t b = 0; b < B; ++b) {
        for (std::int64_t d = 0; d < D; ++d) {
            const detail::ConvRow row(args.x, args.initial_states, args.seq_idx, b, d, K);
            const auto z = detail::preactivation(row, detail::channel_weights(args.weight, d),
                                                 detail::channel_bias(args.bias, d));
            const std::int64_t base = (b * D + d) * L;
            for (std::int64_t t = 0; t < L; ++t) {
                if (row.padding(t)) continue;   // exactly 0: no bias, no activation
                result.out[static_cast<std::size_t>(base + t)] =
                    detail::activate(z[static_cast<std::size_t>(t)], args.activation);
            }
            // The last K raw inputs; for L < K the leading ones come from x̃'s padding.
            if (want_final)
                for (std::int64_t j = 0; j < K; ++j)
                    result.final_states[static_cast<std::size_t>((b * D + d) * K + j)] = row.value(L - K + j);
        }
    }
    return result;
}

}  // namespace cc1d::reference
