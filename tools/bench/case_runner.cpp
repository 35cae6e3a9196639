#include "case_runner.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "workload.hpp"

namespace cc1d::bench {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Runs `call` once to completion; returns its wall time in ms.
double timed_call(BenchEnvironment& env, const std::function<void()>& call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    env.device.synchronize_stream(env.stream);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void measure_first_use(BenchEnvironment& env, Workload& workload, CaseResult& result) {
    const Stats before = env.runtime.stats();
    const double wall_ms = timed_call(env, [&] { workload.run(env.runtime, env.stream); });
    const Stats after = env.runtime.stats();
    // An earlier case with the same variant already compiled it: no first use to report.
    if (after.compiles > before.compiles) {
        result.compile_s = after.compile_seconds - before.compile_seconds;
        result.first_call_ms = wall_ms;
    }
}

void measure_disk_hit(BenchEnvironment& env, Workload& workload, CaseResult& result) {
    const Stats before = env.disk_runtime.stats();
    timed_call(env, [&] { workload.run(env.disk_runtime, env.stream); });
    const Stats after = env.disk_runtime.stats();
    if (after.disk_hits > before.disk_hits)
        result.disk_load_ms = 1e3 * (after.disk_load_seconds - before.disk_load_seconds);
    result.launches = after.launches - before.launches;
}

// Host cost of a call: the same variant on a tiny shape, so the GPU never holds the host back.
void measure_host_overhead(BenchEnvironment& env, const config::BenchCase& c, CaseResult& result) {
    config::BenchCase tiny = c;
    tiny.batch = 1;
    tiny.cache_batch = 1;
    tiny.dim = std::min<std::int64_t>(c.dim, 64);
    const auto workload = make_workload(env.device, tiny, 1);
    result.host_us_per_call = host_us_per_call(env.device, env.stream, env.config.host_calls,
                                               [&] { workload->run(env.runtime, env.stream); });
}

// The same-size copy of `bytes`, timed per call or (`replayed`) in a graph replay, on its
// first use in the run: cases of one size share the measurement.
std::optional<TimingStats> same_size_copy(BenchEnvironment& env, std::uint64_t bytes, bool replayed) {
    auto& known = replayed ? env.same_size_copy_replays : env.same_size_copies;
    if (const auto found = known.find(bytes); found != known.end()) return found->second;
    const auto timing =
        replayed ? time_same_size_copy_replay(env.device, env.stream, replay_count(env.config), bytes)
                 : time_same_size_copy(env.device, env.stream, env.flusher, env.config.warmup, env.config.reps, bytes);
    known.emplace(bytes, timing);
    return timing;
}

// The case as a stream of calls replayed from a graph, over replay_sets(bytes) input sets:
// `first` and fresh workloads of the same case. A set that cannot be allocated, or a
// capture the device refuses, leaves a note instead of a time; the case itself stands.
void measure_graph_replay(BenchEnvironment& env, const config::BenchCase& c, Workload& first, std::uint64_t seed,
                          CaseResult& result) {
    const int sets = replay_sets(result.bytes);
    try {
        std::vector<std::unique_ptr<Workload>> more;
        for (int i = 1; i < sets; ++i) more.push_back(make_workload(env.device, c, seed + static_cast<std::uint64_t>(i)));
        const auto run_set = [&](int set) {
            Workload& workload = set == 0 ? first : *more[static_cast<std::size_t>(set - 1)];
            workload.run(env.runtime, env.stream);
        };
        result.replay = time_graph_replay(env.device, env.stream, sets, replay_count(env.config), run_set);
        result.replay_sets = sets;
    } catch (const std::exception& error) {
        result.replay_note = first_line(error.what());
        return;
    }
    result.same_size_copy_replay = same_size_copy(env, result.bytes, true);
}

}  // namespace

int replay_count(const config::BenchConfig& config) { return std::max(5, config.reps / 10); }

CaseResult run_case(BenchEnvironment& env, const config::BenchCase& c) {
    CaseResult result;
    result.bench_case = c;
    result.bytes = config::counted_bytes(c);
    try {
        const std::uint64_t seed = std::hash<std::string>{}(c.label() + c.shape_text());
        const auto workload = make_workload(env.device, c, seed);
        measure_first_use(env, *workload, result);
        result.check = workload->check();
        measure_disk_hit(env, *workload, result);
        result.timing = time_on_stream(env.device, env.stream, env.flusher, env.config.warmup, env.config.reps,
                                       [&] { workload->run(env.runtime, env.stream); });
        result.same_size_copy = same_size_copy(env, result.bytes, false);
        if (env.config.graph_replay) measure_graph_replay(env, c, *workload, seed, result);
        if (c.variant.op == Op::update) measure_host_overhead(env, c, result);
    } catch (const std::exception& error) {
        result.error = first_line(error.what());
    }
    return result;
}

}  // namespace cc1d::bench
