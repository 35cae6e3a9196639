// Tolerances of SEMANTICS.md and the element-wise comparison the tests and the bench use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cc1d/cc1d.hpp"

namespace cc1d::reference {

struct Tolerance {
    double rtol = 0, atol = 0;
};
Tolerance tolerance_for(DType x_dtype);                      // outputs, dx
Tolerance reduction_tolerance(std::int64_t terms);           // dweight/dbias: atol 1e-3*sqrt(terms)
inline Tolerance exact() { return {0, 0}; }

struct Comparison {
    bool ok = true;
    std::int64_t mismatches = 0;
    std::int64_t first_bad = -1;     // logical index of the first mismatch
    double max_abs_error = 0;
    double got_at_first_bad = 0, want_at_first_bad = 0;
    std::string describe(const std::string& what) const;   // one line for logs
};
// |got - want| <= atol + rtol*|want| per element; NaN never passes.
Comparison compare(const std::vector<double>& got, const std::vector<double>& want, Tolerance tol);

}  // namespace cc1d::reference
