#include "results.hpp"

namespace cc1d::bench {

std::optional<double> CaseResult::gb_per_s(bool replayed) const {
    const auto& t = replayed ? replay : timing;
    if (!t || t->median_us <= 0) return std::nullopt;
    return static_cast<double>(bytes) / (t->median_us * 1e3);
}

std::optional<double> CaseResult::percent_of_copy(double copy_gb_per_s, bool replayed) const {
    const auto rate = gb_per_s(replayed);
    if (!rate || copy_gb_per_s <= 0) return std::nullopt;
    return 100.0 * *rate / copy_gb_per_s;
}

std::optional<double> CaseResult::percent_of_same_size_copy(bool replayed) const {
    const auto& t = replayed ? replay : timing;
    const auto& copy = replayed ? same_size_copy_replay : same_size_copy;
    if (!t || !copy || t->median_us <= 0) return std::nullopt;
    return 100.0 * copy->median_us / t->median_us;
}

}  // namespace cc1d::bench
