// Pieces every reference op shares: reading one (batch, channel) row of the padded
// input x̃ with the sequence id of each position, the weights and bias of a channel,
// the activation and its derivative, and the argument checks the reference needs to
// index safely. Internal to src/reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cc1d/cc1d.hpp"

namespace cc1d::reference::detail {

// Throws Error(invalid_argument) "reference: <what>" unless `ok`.
void require(bool ok, const std::string& what);
// Checks rank and every dimension of a present tensor.
void require_shape(const Tensor& t, const char* name, std::initializer_list<std::int64_t> shape);

double activate(double z, Activation activation);
double activation_derivative(double z, Activation activation);   // d act(z) / dz

std::vector<double> channel_weights(const Tensor& weight, std::int64_t d);   // w[d, 0..W)
double channel_bias(const Tensor& bias, std::int64_t d);                     // 0 when absent

// Row (b, d) of the padded input: positions -K..L-1, with the seq_idx id of each.
// Positions before the row start hold initial_states (or 0) and count as the id of
// seq_idx[b, 0] when initial_states are given (they feed the first sequence), else -1.
class ConvRow {
public:
    ConvRow(const Tensor& x, const Tensor& initial_states, const Tensor& seq_idx, std::int64_t b,
            std::int64_t d, std::int64_t K);

    std::int64_t length() const { return L_; }
    double value(std::int64_t p) const { return values_[static_cast<std::size_t>(p + K_)]; }
    // Term reading position p is kept for the output at t (same sequence).
    bool keeps(std::int64_t p, std::int64_t t) const { return ids_.empty() || id(p) == id(t); }
    // Output t is padding (seq_idx < 0): exactly 0, and no gradient flows through it.
    bool padding(std::int64_t t) const { return !ids_.empty() && id(t) < 0; }

private:
    int id(std::int64_t p) const { return ids_[static_cast<std::size_t>(p + K_)]; }
    std::int64_t L_, K_;
    std::vector<double> values_;
    std::vector<int> ids_;   // empty without seq_idx
};

// z[t] = bias + Σ_k w[k]·x̃[t−K+k] over the kept terms; 0 at padding positions.
std::vector<double> preactivation(const ConvRow& row, const std::vector<double>& w, double bias);

}  // namespace cc1d::reference::detail
