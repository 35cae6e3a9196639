// Backward reference (SEMANTICS.md "Backward"): the exact gradient of the forward
// reference, with padding masked and cross-sequence terms dropped.
#include "reference/conv_row.hpp"
#include "reference/reference.hpp"

#include "common/host_dtype.hpp"

namespace cc1d::reference {
namespace {

using detail::require_shape;

struct Shape {
    std::int64_t B, D, L, W, K;
};

Shape check_backward(const BackwardArgs& args) {
    detail::require(args.x.rank == 3 && args.weight.rank == 2, "backward: x must be rank 3 and weight rank 2");
    Shape s{args.x.shape[0], args.x.shape[1], args.x.shape[2], args.weight.shape[1], args.weight.shape[1] - 1};
    require_shape(args.x, "x", {s.B, s.D, s.L});
    require_shape(args.weight, "weight", {s.D, s.W});
    require_shape(args.dout, "dout", {s.B, s.D, s.L});
    detail::require(s.W >= 1, "backward: width must be at least 1");
    if (args.bias.present()) require_shape(args.bias, "bias", {s.D});
    if (args.seq_idx.present()) require_shape(args.seq_idx, "seq_idx", {s.B, s.L});
    if (args.initial_states.present()) require_shape(args.initial_states, "initial_states", {s.B, s.D, s.K});
    if (args.dfinal_states.present()) require_shape(args.dfinal_states, "dfinal_states", {s.B, s.D, s.K});
    return s;
}

// g[t] = dout[t]·act'(z[t]); 0 at padding, which contributes to no gradient.
std::vector<double> output_gradient(const BackwardArgs& args, const detail::ConvRow& row,
                                    const std::vector<double>& z, std::int64_t b, std::int64_t d) {
    std::vector<double> g(z.size(), 0.0);
    for (std::int64_t t = 0; t < row.length(); ++t) {
        if (row.padding(t)) continue;
        const auto i = static_cast<std::size_t>(t);
        g[i] = host::at(args.dout, b, d, t) * detail::activation_derivative(z[i], args.activation);
    }
    return g;
}

}  // namespace

BackwardResult backward(const BackwardArgs& args) {
    const Shape s = check_backward(args);
    const auto B = s.B, D = s.D, L = s.L, W = s.W, K = s.K;
    const bool has_dfinal = args.dfinal_states.present();
    const bool want_dinit = args.dinitial_states.present();

    BackwardResult r;
    r.dx.assign(static_cast<std::size_t>(B * D * L), 0.0);
    r.dweight.assign(static_cast<std::size_t>(D * W), 0.0);
    if (args.bias.present()) r.dbias.assign(static_cast<std::size_t>(D), 0.0);
    if (want_dinit) r.dinitial_states.assign(static_cast<std::size_t>(B * D * K), 0.0);

    for (std::int64_t d = 0; d < D; ++d) {
        const auto w = detail::channel_weights(args.weight, d);
        const double bias = detail::channel_bias(args.bias, d);
        for (std::int64_t b = 0; b < B; ++b) {
            const detail::ConvRow row(args.x, args.initial_states, args.seq_idx, b, d, K);
            const auto g = output_gradient(args, row, detail::preactivation(row, w, bias), b, d);
            // Gradient of the padded input x̃ at positions -K..L-1: each kept term
            // w[k]·x̃[p] of output t (p = t-K+k) sends w[k]·g[t] to p.
            std::vector<double> dpadded(static_cast<std::size_t>(L + K), 0.0);
            for (std::int64_t t = 0; t < L; ++t) {
                const double gt = g[static_cast<std::size_t>(t)];
                if (gt == 0.0) continue;
                for (std::int64_t k = 0; k <= K; ++k) {
                    const std::int64_t p = t - K + k;
                    if (!row.keeps(p, t)) continue;
                    dpadded[static_cast<std::size_t>(p + K)] += w[static_cast<std::size_t>(k)] * gt;
                    r.dweight[static_cast<std::size_t>(d * W + k)] += gt * row.value(p);
                }
                if (args.bias.present()) r.dbias[static_cast<std::size_t>(d)] += gt;
            }
            // final_states[j] is x̃[L-K+j]: its gradient lands on x (p >= 0) or on the
            // initial states (p < 0, when L < K).
            if (has_dfinal)
                for (std::int64_t j = 0; j < K; ++j)
                    dpadded[static_cast<std::size_t>(L + j)] += host::at(args.dfinal_states, b, d, j);
            for (std::int64_t t = 0; t < L; ++t)
                r.dx[static_cast<std::size_t>((b * D + d) * L + t)] = dpadded[static_cast<std::size_t>(t + K)];
            if (want_dinit)
                for (std::int64_t j = 0; j < K; ++j)
                    r.dinitial_states[static_cast<std::size_t>((b * D + d) * K + j)] =
                        dpadded[static_cast<std::size_t>(j)];
        }
    }
    return r;
}

}  // namespace cc1d::reference
