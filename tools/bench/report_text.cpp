#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "report.hpp"

namespace cc1d::bench {

std::string number_or_dash(const std::optional<double>& value, int decimals) {
    return value ? fmt::format("{:.{}f}", *value, decimals) : "-";
}

std::optional<double> timing_field(const std::optional<TimingStats>& timing, double TimingStats::*field) {
    return timing ? std::optional((*timing).*field) : std::nullopt;
}

std::string check_text(const CaseResult& result) {
    if (!result.error.empty()) return "ERROR: " + result.error;
    if (!result.check) return "-";
    return result.check->ok ? "ok" : "FAILED: " + result.check->detail;
}

std::string progress_summary(const CaseResult& result, double copy_gb_per_s, std::optional<double> bare_launch_host_us) {
    if (!result.error.empty()) return "ERROR: " + result.error;
    std::string text;
    if (result.timing)
        text = fmt::format("{} us  {} GB/s  {}% of copy ({}% of a same-size copy)",
                           number_or_dash(result.timing->median_us, 1), number_or_dash(result.gb_per_s(), 0),
                           number_or_dash(result.percent_of_copy(copy_gb_per_s), 1),
                           number_or_dash(result.percent_of_same_size_copy(), 1));
    if (result.replay)
        text += fmt::format(" | graph replay {} us, {}% of copy ({}% of a same-size copy), {} input sets",
                            number_or_dash(result.replay->median_us, 1),
                            number_or_dash(result.percent_of_copy(copy_gb_per_s, true), 1),
                            number_or_dash(result.percent_of_same_size_copy(true), 1), result.replay_sets);
    else if (!result.replay_note.empty())
        text += " | graph replay: " + result.replay_note;
    text += " | compile " + (result.compile_s ? fmt::format("{:.2f} s", *result.compile_s) : std::string("(loaded)"));
    if (result.disk_load_ms) text += fmt::format(", disk hit {:.2f} ms", *result.disk_load_ms);
    if (result.launches) text += fmt::format(", {} launch{}", *result.launches, *result.launches == 1 ? "" : "es");
    if (result.host_us_per_call) {
        text += fmt::format(", host {:.2f} us/call", *result.host_us_per_call);
        if (bare_launch_host_us)
            text += fmt::format(" ({:+.2f} over a bare launch)", *result.host_us_per_call - *bare_launch_host_us);
    }
    return text + " | check " + check_text(result);
}

std::vector<std::string> case_cells(const CaseResult& r, const RunResult& run) {
    std::vector<std::string> row{r.bench_case.label(),
                                 r.bench_case.shape_text(),
                                 number_or_dash(timing_field(r.timing, &TimingStats::median_us), 1),
                                 number_or_dash(timing_field(r.timing, &TimingStats::min_us), 1),
                                 number_or_dash(timing_field(r.timing, &TimingStats::max_us), 1),
                                 number_or_dash(r.gb_per_s(), 0),
                                 number_or_dash(r.percent_of_copy(run.copy_gb_per_s), 1),
                                 number_or_dash(r.percent_of_same_size_copy(), 1)};
    if (run.graph_replay)
        row.insert(row.end(), {number_or_dash(timing_field(r.replay, &TimingStats::median_us), 1),
                               number_or_dash(r.percent_of_copy(run.copy_gb_per_s, true), 1),
                               number_or_dash(r.percent_of_same_size_copy(true), 1)});
    row.insert(row.end(), {number_or_dash(r.compile_s, 2), number_or_dash(r.disk_load_ms, 2),
                           number_or_dash(r.host_us_per_call, 2), check_text(r)});
    return row;
}

void print_table(std::ostream& out, const RunResult& run) {
    std::vector<std::string> header{"case", "shape", "median us", "min", "max", "GB/s", "% copy", "% size copy"};
    if (run.graph_replay) header.insert(header.end(), {"replay us", "% copy", "% size copy"});
    header.insert(header.end(), {"compile s", "disk ms", "host us", "check"});
    std::vector<std::vector<std::string>> rows{header};
    for (const CaseResult& r : run.cases) rows.push_back(case_cells(r, run));
    std::vector<std::size_t> widths(header.size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
        std::string line;
        for (std::size_t i = 0; i < rows[r].size(); ++i) {
            // Text columns left-aligned, numbers right-aligned; the last column unpadded.
            const bool text = i < 2 || i + 1 == rows[r].size();
            const std::size_t width = i + 1 == rows[r].size() ? 0 : widths[i];
            line += text ? fmt::format("{:<{}}", rows[r][i], width) : fmt::format("{:>{}}", rows[r][i], width);
            if (i + 1 < rows[r].size()) line += "  ";
        }
        out << line << '\n';
        if (r == 0) out << std::string(line.size(), '-') << '\n';
    }
}

}  // namespace cc1d::bench
