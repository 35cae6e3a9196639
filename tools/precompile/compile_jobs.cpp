#include "compile_jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>

namespace cc1d::precompile {
namespace {

// The error's first line, then the compiler's log beneath it, indented and cut at
// kLogLines: the first line alone ("... failed:") hid what the compiler said.
std::string failure_report(const std::string& message) {
    constexpr int kLogLines = 40;
    std::istringstream lines(message);
    std::string report, line;
    std::getline(lines, report);
    int shown = 0;
    while (std::getline(lines, line)) {
        if (line.empty()) continue;
        if (++shown > kLogLines) return report + "\n    ...";
        report += "\n    " + line;
    }
    return report;
}

}  // namespace

Tally run_compile_jobs(const std::vector<CompileJob>& jobs, unsigned threads,
                       const std::function<bool(const CompileJob&)>& compile, std::ostream& progress) {
    Tally tally;
    std::atomic<std::size_t> next{0};
    std::mutex report;   // guards tally, the finished count and the output
    std::size_t finished = 0;

    const auto worker = [&] {
        for (std::size_t i = next++; i < jobs.size(); i = next++) {
            const CompileJob& job = jobs[i];
            const auto start = std::chrono::steady_clock::now();
            std::string outcome;
            bool compiled = false, failed = false;
            try {
                compiled = compile(job);
            } catch (const std::exception& error) {
                outcome = "FAILED: " + failure_report(error.what());
                failed = true;
            }
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (!failed) outcome = compiled ? fmt::format("compiled {:.2f} s", seconds) : "cached";

            const std::lock_guard<std::mutex> lock(report);
            ++(failed ? tally.failed : compiled ? tally.compiled : tally.cached);
            progress << fmt::format("[{}/{}] {} {}: {}\n", ++finished, jobs.size(), job.variant, job.target, outcome);
            progress.flush();
        }
    };

    const unsigned count = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(jobs.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < count; ++t) pool.emplace_back(worker);
    worker();
    for (auto& thread : pool) thread.join();
    return tally;
}

}  // namespace cc1d::precompile
