#include "reference/conv_row.hpp"

#include <cmath>

#include "common/fail.hpp"
#include "common/host_dtype.hpp"

namespace cc1d::reference::detail {

void require(bool ok, const std::string& what) {
    if (!ok) fail(ErrorCode::invalid_argument, "reference: {}", what);
}

void require_shape(const Tensor& t, const char* name, std::initializer_list<std::int64_t> shape) {
    require(t.data != nullptr, fmt::format("{} has no data", name));
    require(t.rank == static_cast<int>(shape.size()),
            fmt::format("{} has rank {}, expected {}", name, t.rank, shape.size()));
    int i = 0;
    for (auto expected : shape) {
        require(t.shape[i] == expected,
                fmt::format("{} dimension {} is {}, expected {}", name, i, t.shape[i], expected));
        ++i;
    }
}

double activate(double z, Activation activation) {
    if (activation == Activation::none) return z;
    return z / (1.0 + std::exp(-z));
}

double activation_derivative(double z, Activation activation) {
    if (activation == Activation::none) return 1.0;
    const double s = 1.0 / (1.0 + std::exp(-z));
    return s * (1.0 + z * (1.0 - s));
}

std::vector<double> channel_weights(const Tensor& weight, std::int64_t d) {
    std::vector<double> w(static_cast<std::size_t>(weight.shape[1]));
    for (std::int64_t k = 0; k < weight.shape[1]; ++k) w[static_cast<std::size_t>(k)] = host::at(weight, d, k);
    return w;
}

double channel_bias(const Tensor& bias, std::int64_t d) { return bias.present() ? host::at(bias, d) : 0.0; }

ConvRow::ConvRow(const Tensor& x, const Tensor& initial_states, const Tensor& seq_idx, std::int64_t b,
                 std::int64_t d, std::int64_t K)
    : L_(x.shape[2]), K_(K), values_(static_cast<std::size_t>(L_ + K), 0.0) {
    const bool has_init = initial_states.present();
    for (std::int64_t j = 0; j < K; ++j)
        if (has_init) values_[static_cast<std::size_t>(j)] = host::at(initial_states, b, d, j);
    for (std::int64_t t = 0; t < L_; ++t) values_[static_cast<std::size_t>(t + K)] = host::at(x, b, d, t);
    if (!seq_idx.present()) return;
    ids_.resize(values_.size());
    for (std::int64_t t = 0; t < L_; ++t)
        ids_[static_cast<std::size_t>(t + K)] = static_cast<int>(host::at(seq_idx, b, t));
    const int before_start = (has_init && L_ > 0) ? ids_[static_cast<std::size_t>(K)] : -1;
    for (std::int64_t j = 0; j < K; ++j) ids_[static_cast<std::size_t>(j)] = before_start;
}

std::vector<double> preactivation(const ConvRow& row, const std::vector<double>& w, double bias) {
    const auto L = row.length();
    const auto K = static_cast<std::int64_t>(w.size()) - 1;
    std::vector<double> z(static_cast<std::size_t>(L), 0.0);
    for (std::int64_t t = 0; t < L; ++t) {
        if (row.padding(t)) continue;
        double sum = bias;
        for (std::int64_t k = 0; k <= K; ++k) {
            const std::int64_t p = t - K + k;
            if (row.keeps(p, t)) sum += w[static_cast<std::size_t>(k)] * row.value(p);
        }
        z[static_cast<std::size_t>(t)] = sum;
    }
    return z;
}

}  // namespace cc1d::reference::detail
