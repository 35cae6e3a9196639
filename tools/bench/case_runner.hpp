// Runs one bench case end to end: build its workload, first call on a Runtime with an
// empty cache (compile time), check against the reference, a call on a second Runtime
// over the same cache (disk-hit load time), then the timed runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "cc1d/cc1d.hpp"
#include "config/bench_config.hpp"
#include "results.hpp"
#include "timing.hpp"

namespace cc1d::bench {

struct BenchEnvironment {
    device::Device& device;
    void* stream;
    CacheFlusher& flusher;
    Runtime& runtime;        // compiles into the run's fresh cache folder, then is timed
    Runtime& disk_runtime;   // same folder, its own memory: its first call is a disk hit
    const config::BenchConfig& config;
    // Same-size copies timed so far, by bytes moved: cases of one size share the measurement.
    std::map<std::uint64_t, std::optional<TimingStats>> same_size_copies{};
    std::map<std::uint64_t, std::optional<TimingStats>> same_size_copy_replays{};   // graph replay
};

// Graph replays per measurement of a config with graph_replay: each times 64 or more calls.
int replay_count(const config::BenchConfig& config);

// Never throws for a problem of the case itself: that is recorded in CaseResult::error.
CaseResult run_case(BenchEnvironment& env, const config::BenchCase& c);

}  // namespace cc1d::bench
