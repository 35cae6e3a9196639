// Tolerances of SEMANTICS.md and the element-wise comparison.
#include "reference/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cc1d::reference {

Tolerance tolerance_for(DType x_dtype) {
    switch (x_dtype) {
        case DType::fp32: return {3e-4, 1e-3};
        case DType::fp16: return {3e-3, 5e-3};
        case DType::bf16: return {1e-2, 5e-2};
        case DType::int32: return exact();
    }
    return exact();
}

Tolerance reduction_tolerance(std::int64_t terms) {
    return {1e-3, 1e-3 * std::sqrt(static_cast<double>(terms > 0 ? terms : 1))};
}

Comparison compare(const std::vector<double>& got, const std::vector<double>& want, Tolerance tol) {
    Comparison c;
    const std::size_t n = std::min(got.size(), want.size());
    for (std::size_t i = 0; i < n; ++i) {
        const double error = std::fabs(got[i] - want[i]);
        // Written so that a NaN on either side fails: every comparison with NaN is false.
        const bool within = error <= tol.atol + tol.rtol * std::fabs(want[i]);
        if (!std::isnan(error) && error > c.max_abs_error) c.max_abs_error = error;
        if (within) continue;
        if (std::isnan(error)) c.max_abs_error = error;
        if (c.mismatches++ == 0) {
            c.first_bad = static_cast<std::int64_t>(i);
            c.got_at_first_bad = got[i];
            c.want_at_first_bad = want[i];
        }
    }
    if (got.size() != want.size()) {
        // Every element one side lacks is a mismatch.
        const std::size_t missing = std::max(got.size(), want.size()) - n;
        if (c.mismatches == 0) {
            c.first_bad = static_cast<std::int64_t>(n);
            c.got_at_first_bad = n < got.size() ? got[n] : NAN;
            c.want_at_first_bad = n < want.size() ? want[n] : NAN;
        }
        c.mismatches += static_cast<std::int64_t>(missing);
    }
    c.ok = c.mismatches == 0;
    return c;
}

std::string Comparison::describe(const std::string& what) const {
    if (ok) return fmt::format("{}: ok (max abs error {:.3g})", what, max_abs_error);
    return fmt::format("{}: {} mismatches, first at index {} (got {:.9g}, want {:.9g}), max abs error {:.3g}", what,
                       mismatches, first_bad, got_at_first_bad, want_at_first_bad, max_abs_error);
}

}  // namespace cc1d::reference
