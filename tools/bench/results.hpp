// What a bench run measured, for the progress lines, the table, JSON and Markdown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/bench_case.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace cc1d::bench {

struct CaseResult {
    config::BenchCase bench_case;
    std::uint64_t bytes = 0;                  // counted as ANCHORS.md counts them
    std::optional<TimingStats> timing;
    std::optional<TimingStats> same_size_copy;   // a copy moving `bytes`, timed the same way
    // Graph replay (configs with graph_replay): time per call in a replayed stream of calls
    // over `replay_sets` input sets, and a same-size copy replayed the same way.
    std::optional<TimingStats> replay, same_size_copy_replay;
    int replay_sets = 0;
    std::string replay_note;                  // why there is no replay time
    std::optional<double> compile_s;          // compiler time of the first call (empty cache)
    std::optional<double> first_call_ms;      // wall time of that first call, compile included
    std::optional<double> disk_load_ms;       // a second Runtime, same cache: lookup to loaded kernel
    std::optional<double> host_us_per_call;   // update: back-to-back calls on a tiny shape
    std::optional<std::uint64_t> launches;    // kernels one call launches (which path it took:
                                              // e.g. a backward's reduce launch or its absence)
    std::optional<CheckOutcome> check;
    std::string error;                        // why the case could not run

    bool failed() const { return !error.empty() || (check && !check->ok); }
    // Of the per-call timing, or with `replayed` of the graph replay's.
    std::optional<double> gb_per_s(bool replayed = false) const;
    std::optional<double> percent_of_copy(double copy_gb_per_s, bool replayed = false) const;
    // The same-size copy's time over the case's time, in percent.
    std::optional<double> percent_of_same_size_copy(bool replayed = false) const;
};

struct RunResult {
    std::string config_file, device_name, backend, target, date, version;
    double copy_gb_per_s = 0;
    std::size_t copy_buffer_bytes = 0;
    std::optional<TimingStats> empty_kernel;
    std::optional<TimingStats> empty_kernel_replay;   // configs with graph_replay
    std::optional<double> bare_launch_host_us;   // host µs of one back-to-back driver launch
    std::string empty_kernel_note;            // why there is no empty-kernel time
    int warmup = 0, reps = 0, host_calls = 0;
    bool graph_replay = false;
    std::vector<CaseResult> cases;
};

}  // namespace cc1d::bench
