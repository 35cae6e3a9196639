// The covering design that picks the GPU tests' variants: complete over the crossed
// fields, pairwise complete over the rotated ones, deterministic, and filter-respecting.
#include <doctest/doctest.h>

#include <set>

#include "support/covering.hpp"

using cc1d::test::covering_design;
using cc1d::test::DesignRow;
using cc1d::test::uncovered_pairs;

TEST_CASE("covering design: small example covers every pair") {
    const std::vector<int> full = {2}, rotated = {2, 3};
    const auto rows = covering_design(full, rotated);
    CHECK(uncovered_pairs(rows, full, rotated) == 0);
    // (rotated 0) x (rotated 1) alone needs 6 rows, more than the 2 full rows.
    CHECK(rows.size() >= 6);
}

TEST_CASE("covering design: the forward matrix") {
    // layout x dtype pair x width crossed; activation, bias, seq_idx, initial, final rotated;
    // states need width > 1 (level 0 of the width field).
    const std::vector<int> full = {2, 9, 7}, rotated = {2, 2, 2, 2, 2};
    auto allowed = [](const DesignRow& r) { return r[2] != 0 || (r[6] == 0 && r[7] == 0); };
    const auto rows = covering_design(full, rotated, allowed);
    CHECK(rows.size() == 2 * 9 * 7);   // the crossed rows already cover every pair
    CHECK(uncovered_pairs(rows, full, rotated, allowed) == 0);
    std::set<std::vector<int>> crossed;
    for (const auto& r : rows) {
        CHECK(allowed(r));
        crossed.insert({r[0], r[1], r[2]});
    }
    CHECK(crossed.size() == 2 * 9 * 7);
    CHECK(covering_design(full, rotated, allowed) == rows);   // deterministic
}

TEST_CASE("covering design: rotated fields stay balanced once all pairs are covered") {
    // 126 crossed rows need far fewer to cover the pairs; ties go to the least used
    // rotated part, so every rotated level still shows up in about half the rows.
    const std::vector<int> full = {2, 9, 7}, rotated = {2, 2, 2, 2, 2};
    const auto rows = covering_design(full, rotated);
    for (std::size_t field = 3; field < 8; ++field) {
        int ones = 0;
        for (const auto& r : rows) ones += r[field];
        CAPTURE(field);
        CHECK(ones >= 50);
        CHECK(ones <= 76);
    }
    // Every combination of the rotated fields appears (32 combinations, 126 rows).
    std::set<std::vector<int>> combos;
    for (const auto& r : rows) combos.insert(std::vector<int>(r.begin() + 3, r.end()));
    CHECK(combos.size() == 32);
}

TEST_CASE("covering design: one crossed field needs a row per pair") {
    const std::vector<int> full = {4}, rotated = {2};
    const auto rows = covering_design(full, rotated);
    CHECK(rows.size() == 8);
    CHECK(uncovered_pairs(rows, full, rotated) == 0);
}
