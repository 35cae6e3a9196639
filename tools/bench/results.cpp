#include "results.hpp"

namespace cc1d::bench {

std::optional<double> CaseResult::gb_per_s() const {
    if (!timing || timing->median_us <= 0) return std::nullopt;
    return static_cast<double>(bytes) / (timing->median_us * 1e3);
}

std::optional<double> CaseResult::percent_of_copy(double copy_gb_per_s) const {
    const auto rate = gb_per_s();
    if (!rate || copy_gb_per_s <= 0) return std::nullopt;
    return 100.0 * *rate / copy_gb_per_s;
}

std::optional<double> CaseResult::percent_of_same_size_copy() const {
    if (!timing || !same_size_copy || timing->median_us <= 0) return std::nullopt;
    return 100.0 * same_size_copy->median_us / timing->median_us;
}

}  // namespace cc1d::bench
