// A deterministic covering design for the GPU test matrices: the full cross product of
// every variant field is far too many compiles, so some fields ("full") are crossed
// completely and the others ("rotated") are chosen row by row so that every pair of
// levels of any two fields appears in at least one row (pairwise coverage), as long as
// some allowed row can hold that pair. Header-only: the tests and its unit test use it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace cc1d::test {

using DesignRow = std::vector<int>;   // one level per field: full fields first, then rotated
using DesignFilter = std::function<bool(const DesignRow&)>;   // false: the row is not allowed

namespace covering_detail {

struct Space {
    std::vector<int> levels;       // per field
    std::vector<int> offset;       // first flat index of each field's levels
    int total = 0;
    std::size_t first_rotated = 0;

    Space(const std::vector<int>& full, const std::vector<int>& rotated) : levels(full) {
        levels.insert(levels.end(), rotated.begin(), rotated.end());
        first_rotated = full.size();
        for (int n : levels) {
            offset.push_back(total);
            total += n;
        }
    }
    // Every row of the product of fields [begin, end), in odometer order.
    std::vector<DesignRow> product(std::size_t begin, std::size_t end) const {
        std::vector<DesignRow> rows(1);
        for (std::size_t f = begin; f < end; ++f) {
            std::vector<DesignRow> next;
            for (const auto& row : rows)
                for (int level = 0; level < levels[f]; ++level) {
                    next.push_back(row);
                    next.back().push_back(level);
                }
            rows = std::move(next);
        }
        return rows;
    }
    // Calls visit(a, b) with the flat indices of each pair of the row that involves a rotated field.
    template <typename Visit>
    void pairs(const DesignRow& row, Visit visit) const {
        for (std::size_t i = 0; i < row.size(); ++i)
            for (std::size_t j = std::max(i + 1, first_rotated); j < row.size(); ++j)
                visit(offset[i] + row[i], offset[j] + row[j]);
    }
};

}  // namespace covering_detail

// Rows covering every pair (at least one rotated field) that some allowed row contains.
inline std::vector<DesignRow> covering_design(const std::vector<int>& full, const std::vector<int>& rotated,
                                              const DesignFilter& allowed = {}) {
    const covering_detail::Space space(full, rotated);
    const auto n = static_cast<std::size_t>(space.total);
    std::vector<char> needed(n * n, 0), covered(n * n, 0);
    const auto full_rows = space.product(0, space.first_rotated);
    const auto rotated_rows = space.product(space.first_rotated, space.levels.size());
    auto joined = [](const DesignRow& f, const DesignRow& r) {
        DesignRow row = f;
        row.insert(row.end(), r.begin(), r.end());
        return row;
    };
    for (const auto& f : full_rows)
        for (const auto& r : rotated_rows) {
            const auto row = joined(f, r);
            if (!allowed || allowed(row)) space.pairs(row, [&](int a, int b) { needed[a * n + b] = 1; });
        }
    auto gain = [&](const DesignRow& row) {
        int g = 0;
        space.pairs(row, [&](int a, int b) { g += needed[a * n + b] && !covered[a * n + b]; });
        return g;
    };
    std::vector<int> uses(rotated_rows.size(), 0);
    std::vector<DesignRow> design;
    // Picks the rotated part that covers the most new pairs; ties go to the least used
    // rotated part, then to the first one, so the choice is deterministic and spread out.
    auto best_for = [&](const DesignRow& f) -> int {
        int best = -1;
        long best_score = 0;
        for (std::size_t r = 0; r < rotated_rows.size(); ++r) {
            const auto row = joined(f, rotated_rows[r]);
            if (allowed && !allowed(row)) continue;
            const long score = 100000L * gain(row) - uses[r];
            if (best < 0 || score > best_score) best = static_cast<int>(r), best_score = score;
        }
        return best;
    };
    auto take = [&](const DesignRow& f, int r) {
        const auto row = joined(f, rotated_rows[static_cast<std::size_t>(r)]);
        space.pairs(row, [&](int a, int b) { covered[a * n + b] = 1; });
        ++uses[static_cast<std::size_t>(r)];
        design.push_back(row);
    };
    for (const auto& f : full_rows) {
        const int r = best_for(f);
        if (r >= 0) take(f, r);
    }
    // Few full rows for many rotated levels: add rows until every pair is covered.
    for (;;) {
        int best_gain = 0, best_r = -1;
        const DesignRow* best_f = nullptr;
        for (const auto& f : full_rows) {
            const int r = best_for(f);
            if (r < 0) continue;
            const int g = gain(joined(f, rotated_rows[static_cast<std::size_t>(r)]));
            if (g > best_gain) best_gain = g, best_r = r, best_f = &f;
        }
        if (best_gain == 0) break;
        take(*best_f, best_r);
    }
    return design;
}

// Pairs an allowed row could hold that no row of `design` holds (0 for a covering design).
inline int uncovered_pairs(const std::vector<DesignRow>& design, const std::vector<int>& full,
                           const std::vector<int>& rotated, const DesignFilter& allowed = {}) {
    const covering_detail::Space space(full, rotated);
    const auto n = static_cast<std::size_t>(space.total);
    std::vector<char> needed(n * n, 0), covered(n * n, 0);
    for (const auto& f : space.product(0, space.first_rotated))
        for (const auto& r : space.product(space.first_rotated, space.levels.size())) {
            DesignRow row = f;
            row.insert(row.end(), r.begin(), r.end());
            if (!allowed || allowed(row)) space.pairs(row, [&](int a, int b) { needed[a * n + b] = 1; });
        }
    for (const auto& row : design) space.pairs(row, [&](int a, int b) { covered[a * n + b] = 1; });
    int missing = 0;
    for (std::size_t i = 0; i < n * n; ++i) missing += needed[i] && !covered[i];
    return missing;
}

}  // namespace cc1d::test
