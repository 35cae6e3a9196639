// Checks the GPU tests share: running a call so that a library error becomes one test
// failure (and the remaining cases still run), and comparing a downloaded output with
// the reference, including the bytes outside its view. Header-only (uses doctest).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "reference/compare.hpp"
#include "support/gpu_fixture.hpp"
#include "support/random_tensor.hpp"

namespace cc1d::test {

// Runs `call` and waits for the device. A cc1d::Error fails the check with its code
// and message; returns whether the call succeeded.
template <typename Call>
bool call_ok(Call&& call) {
    try {
        call();
        gpu().synchronize();
        return true;
    } catch (const Error& e) {
        FAIL_CHECK("cc1d::Error(" << std::string(to_string(e.code())) << "): " << std::string(e.what()));
        return false;
    }
}

// Downloads `t`, compares it with `want` (logical order) and checks that no byte
// outside its view changed. Unwritten elements stay poisoned (NaN) and fail.
inline bool check_tensor(const char* what, TestTensor& t, const std::vector<double>& want, reference::Tolerance tol) {
    t.download();
    const auto comparison = reference::compare(t.values(), want, tol);
    CHECK_MESSAGE(comparison.ok, comparison.describe(what));
    const bool padding = t.padding_untouched();
    CHECK_MESSAGE(padding, std::string(what) << ": bytes outside the view were written");
    return comparison.ok && padding;
}

// Tolerance of a reduction over `terms` stored in `dtype`: the fp32 accumulation's
// bound plus the final rounding to a 16-bit type (a relative error).
inline reference::Tolerance reduction_tolerance_in(DType dtype, std::int64_t terms) {
    auto tol = reference::reduction_tolerance(terms);
    if (dtype != DType::fp32) tol.rtol = std::max(tol.rtol, reference::tolerance_for(dtype).rtol);
    return tol;
}

}  // namespace cc1d::test
