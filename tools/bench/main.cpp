// cc1d-bench: runs the cases of a JSON config on the GPU and reports each as time,
// bandwidth, % of the device's measured copy bandwidth and % of what a copy of the same
// bytes reaches timed the same way, with its first-use compile
// time, disk-hit load time and a check against the CPU reference.
// Exit status: 0 all cases ran and matched; 1 a case failed its check or could not
// run; 2 a bad argument or config; 3 no GPU.
#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include "case_runner.hpp"
#include "config/bench_config.hpp"
#include "config/command_line.hpp"
#include "empty_kernel.hpp"
#include "report.hpp"

namespace cc1d::bench {
namespace {

constexpr const char* usage = R"(usage: cc1d-bench --config FILE [--json OUT] [--markdown OUT] [--filter REGEX] [--list]

Runs the cases of a bench config (configs/bench/*.json) on the GPU: measures the copy
bandwidth first, then for every case checks the result against the CPU reference and
times it (warm-up, caches flushed, median of the config's reps), and times a
device-to-device copy moving the same bytes the same way, once per size in a run ("% of
a same-size copy": the per-call costs a 2 GiB copy hides weigh on a 30 us call too).
A config with "graph_replay": true also times every case as a stream of back-to-back
calls replayed from a graph over input sets spanning 256 MiB, as serving engines issue
decode steps, with the empty kernel and the same-size copy replayed the same way.

  --config FILE     the bench config
  --json OUT        write the results as JSON (scripts/plot_bench.py draws it)
  --markdown OUT    write the results as a Markdown table
  --filter REGEX    only the cases whose label, shape or variant text matches
  --list            print the expanded cases and exit (no GPU needed)

Exit status: 0 all ran and matched the reference, 1 a case failed, 2 bad arguments or
config, 3 no GPU.
)";

struct Options {
    config::BenchConfig config;
    std::optional<std::string> json_path, markdown_path;
    bool list = false;
};

Options parse_options(int argc, char** argv) {
    const auto line = config::CommandLine::parse(argc, argv, {{}, {"config", "json", "markdown", "filter"}, {"list"}});
    Options options;
    options.config = config::load_bench_config(line.required("config"));
    options.json_path = line.value("json");
    options.markdown_path = line.value("markdown");
    options.list = line.has("list");
    if (const auto filter = line.value("filter")) {
        std::regex pattern;
        try {
            pattern = std::regex(*filter, std::regex::ECMAScript);
        } catch (const std::regex_error& error) {
            throw config::UsageError(fmt::format("--filter '{}': not a valid regular expression ({})", *filter, error.what()));
        }
        std::vector<config::BenchCase> kept;
        for (const auto& c : options.config.cases)
            if (std::regex_search(c.label() + " " + c.shape_text() + " " + c.variant.canonical(), pattern))
                kept.push_back(c);
        if (kept.empty())
            throw config::UsageError(fmt::format("--filter '{}' matches none of the {} cases of {}", *filter,
                                                 options.config.cases.size(), options.config.file));
        options.config.cases = kept;
    }
    return options;
}

void print_list(const config::BenchConfig& config) {
    for (std::size_t i = 0; i < config.cases.size(); ++i) {
        const auto& c = config.cases[i];
        fmt::print("{:>4}  {:<48} {:<24} {:>10.3f} MB  {}\n", i + 1, c.label(), c.shape_text(),
                   static_cast<double>(config::counted_bytes(c)) / 1e6, c.variant.canonical());
    }
    fmt::print("{} cases in {} (warmup {}, reps {})\n", config.cases.size(), config.file, config.warmup, config.reps);
}

// Opened before the run, so a bad path fails at once rather than after the last case.
std::ofstream open_output(const std::optional<std::string>& path, const char* option) {
    std::ofstream stream;
    if (!path) return stream;
    stream.open(*path);
    if (!stream) throw config::UsageError(fmt::format("--{} '{}': cannot write the file", option, *path));
    return stream;
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm parts{};
    gmtime_r(&now, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

// A fresh cache folder per run, so every variant's first call is a real compile.
class TemporaryFolder {
public:
    TemporaryFolder() {
        std::string pattern = (std::filesystem::temp_directory_path() / "cc1d-bench-XXXXXX").string();
        if (!mkdtemp(pattern.data())) throw Error(ErrorCode::invalid_argument, "cannot create a temporary cache folder");
        path_ = pattern;
    }
    ~TemporaryFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

class StreamGuard {
public:
    explicit StreamGuard(device::Device& device) : device_(device), stream_(device.create_stream()) {}
    ~StreamGuard() { device_.destroy_stream(stream_); }
    void* get() const { return stream_; }

private:
    device::Device& device_;
    void* stream_;
};

int run(const Options& options, device::Device& device) {
    std::ofstream json_file = open_output(options.json_path, "json");
    std::ofstream markdown_file = open_output(options.markdown_path, "markdown");
    const config::BenchConfig& config = options.config;

    RunResult run;
    const int ordinal = device.current_device();
    run.config_file = config.file;
    run.device_name = device.name(ordinal);
    run.backend = device.backend();
    run.target = device.target(ordinal);
    run.date = utc_now();
    run.version = version();
    run.warmup = config.warmup;
    run.reps = config.reps;
    run.host_calls = config.host_calls;
    run.graph_replay = config.graph_replay;
    fmt::print("cc1d-bench {}: {} ({} {}), {} cases of {}\n", run.version, run.device_name, run.backend, run.target,
               config.cases.size(), config.file);

    StreamGuard stream(device);
    CacheFlusher flusher(device);
    const CopyBandwidth copy = measure_copy_bandwidth(device, stream.get());
    run.copy_gb_per_s = copy.gb_per_s;
    run.copy_buffer_bytes = copy.buffer_bytes;
    fmt::print("copy bandwidth: {:.0f} GB/s (read+write, {} MiB device-to-device)\n", copy.gb_per_s,
               copy.buffer_bytes >> 20);
    const auto replays = config.graph_replay ? std::optional(replay_count(config)) : std::nullopt;
    if (const auto empty = time_empty_kernel(device, stream.get(), flusher, config.warmup, config.reps,
                                             config.host_calls, replays, run.empty_kernel_note)) {
        run.empty_kernel = empty->timing;
        run.empty_kernel_replay = empty->replay;
        run.bare_launch_host_us = empty->host_us_per_launch;
        fmt::print("empty kernel: {:.1f} us (launched and timed as the cases are); host {:.2f} us per bare driver "
                   "launch\n",
                   run.empty_kernel->median_us, empty->host_us_per_launch);
        if (empty->replay) fmt::print("empty kernel in a graph replay: {:.2f} us per launch\n", empty->replay->median_us);
    } else
        fmt::print("empty kernel: not measured ({})\n", run.empty_kernel_note);

    TemporaryFolder cache_folder;
    RuntimeOptions runtime_options;
    runtime_options.cache_dir = cache_folder.path();
    Runtime runtime(runtime_options), disk_runtime(runtime_options);
    BenchEnvironment env{device, stream.get(), flusher, runtime, disk_runtime, config};

    int failures = 0;
    for (std::size_t i = 0; i < config.cases.size(); ++i) {
        const auto& c = config.cases[i];
        fmt::print("[{}/{}] {} {} ... ", i + 1, config.cases.size(), c.label(), c.shape_text());
        std::fflush(stdout);
        run.cases.push_back(run_case(env, c));
        fmt::print("{}\n", progress_summary(run.cases.back(), run.copy_gb_per_s, run.bare_launch_host_us));
        std::fflush(stdout);
        if (run.cases.back().failed()) ++failures;
    }

    fmt::print("\n");
    print_table(std::cout, run);
    if (json_file.is_open()) json_file << to_json(run).dump(2) << '\n';
    if (markdown_file.is_open()) markdown_file << to_markdown(run);
    fmt::print("\n{} cases: {} ok, {} failed\n", run.cases.size(), run.cases.size() - failures, failures);
    return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace cc1d::bench

int main(int argc, char** argv) {
    using namespace cc1d;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
            std::cout << bench::usage;
            return 0;
        }
    }
    bench::Options options;
    try {
        options = bench::parse_options(argc, argv);
    } catch (const std::exception& error) {   // UsageError, ConfigError
        std::cerr << "cc1d-bench: error: " << error.what() << '\n';
        return 2;
    }
    if (options.list) {
        bench::print_list(options.config);
        return 0;
    }
    std::unique_ptr<device::Device> device;
    try {
        device = device::open_any();
        device->current_device();
    } catch (const std::exception& error) {
        std::string reason = error.what();
        const std::string redundant = "no usable GPU: ";
        if (reason.rfind(redundant, 0) == 0) reason = reason.substr(redundant.size());
        std::cerr << "cc1d-bench: no GPU: " << reason << '\n';
        return 3;
    }
    try {
        return bench::run(options, *device);
    } catch (const config::UsageError& error) {
        std::cerr << "cc1d-bench: error: " << error.what() << '\n';
        return 2;
    } catch (const std::exception& error) {
        std::cerr << "cc1d-bench: error: " << error.what() << '\n';
        return 1;
    }
}
