// Presenting a run: the progress line of each case, the closing table, and the JSON
// and Markdown files (the same numbers; scripts/plot_bench.py draws the JSON).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "results.hpp"

namespace cc1d::bench {

// "43.2 us  2795 GB/s  65.4% of copy (83.0% of a same-size copy) | compile 0.31 s, disk hit
// 1.2 ms | check ok", with the graph replay's numbers where the run has them.
// bare_launch_host_us: the host time of a bare driver launch, to show what a call adds.
std::string progress_summary(const CaseResult& result, double copy_gb_per_s, std::optional<double> bare_launch_host_us);
void print_table(std::ostream& out, const RunResult& run);
nlohmann::ordered_json to_json(const RunResult& run);
std::string to_markdown(const RunResult& run);

// Shared by the text and file reports.
std::string check_text(const CaseResult& result);
std::string number_or_dash(const std::optional<double>& value, int decimals);
// A field of a timing that may be missing (&TimingStats::median_us, min_us, max_us).
std::optional<double> timing_field(const std::optional<TimingStats>& timing, double TimingStats::*field);
// A case's row of the closing table and the Markdown table: label, shape, the per-call
// timing, the graph replay's (where the run has one), compile, disk hit, host, check.
std::vector<std::string> case_cells(const CaseResult& result, const RunResult& run);

}  // namespace cc1d::bench
