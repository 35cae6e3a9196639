// cc1d-precompile: compiles a config's variants for its targets into the disk cache,
// in parallel and without a GPU, so deployments never compile at run time.
// Exit status: 0 every compile succeeded (or was cached); 1 some failed; 2 a bad
// argument or config.
#include <fmt/format.h>

#include <iostream>
#include <thread>

#include "cc1d/cc1d.hpp"
#include "compile_jobs.hpp"
#include "config/command_line.hpp"
#include "config/precompile_config.hpp"

namespace cc1d::precompile {
namespace {

constexpr const char* usage = R"(usage: cc1d-precompile --config FILE [--target T]... [--cache-dir DIR] [--jobs N]

Compiles every variant of a precompile config (configs/precompile/*.json) for every
target into the disk cache. Needs no GPU: only the compiler library of each target's
vendor (NVRTC for sm_XY, HIPRTC for gfx...).

  --config FILE     the variant sets (and, unless --target is given, the targets)
  --target T        a target such as sm_90 or gfx942; repeat for several; replaces the
                    config's targets
  --cache-dir DIR   the cache to fill (default: CC1D_CACHE_DIR, $XDG_CACHE_HOME/cc1d,
                    ~/.cache/cc1d)
  --jobs N          compiles in parallel (default: the number of hardware threads)

Prints one line per variant and target, with the seconds a compile took (rendering,
compiling and storing; a failed compile's log follows its line, indented, up to 40
lines), then
"N variants x M targets: C compiled, H already cached, F failed".

Timing compiles: use --jobs 1 and an empty --cache-dir. With CC1D_NVRTC_TIME=FILE, NVRTC
also appends each compile's phases (front end, NVVM optimizer, and ptxas as "PTX
Translation") to FILE as CSV rows named by the kernel's source name. On a host with a
CUDA driver, NVRTC 13 also reuses code from the driver's compute cache
(~/.nv/ComputeCache), so a kernel compiled before compiles in a fraction of the time;
CUDA_CACHE_DISABLE=1 makes every compile cold. A module of two large kernels (the
channel-first forward with its staged kernel) compiles on two threads on NVRTC 12.4+
(CC1D_COMPILE_THREADS=N sets the count, 1 keeps one a compile).

Exit status: 0 when nothing failed, 1 when a compile failed, 2 bad arguments or config.
)";

struct Options {
    config::PrecompileConfig config;
    std::vector<std::string> targets;
    std::optional<std::string> cache_dir;
    unsigned jobs = 1;
};

Options parse_options(int argc, char** argv) {
    const auto line = config::CommandLine::parse(argc, argv, {{"target"}, {"config", "cache-dir", "jobs"}, {}});
    Options options;
    const auto jobs = line.integer("jobs", 1, 4096);
    options.config = config::load_precompile_config(line.required("config"));
    options.targets = line.values("target").empty() ? options.config.targets : line.values("target");
    for (const auto& target : line.values("target"))
        if (const std::string problem = config::target_problem(target); !problem.empty())
            throw config::UsageError("--target: " + problem);
    if (options.targets.empty())
        throw config::UsageError(fmt::format("no targets: {} lists none and no --target was given", options.config.file));
    options.cache_dir = line.value("cache-dir");
    options.jobs = jobs ? static_cast<unsigned>(*jobs) : std::max(1u, std::thread::hardware_concurrency());
    return options;
}

int run(const Options& options) {
    RuntimeOptions runtime_options;
    if (options.cache_dir) runtime_options.cache_dir = *options.cache_dir;
    Runtime runtime(runtime_options);
    const std::string cache = runtime.cache_dir();
    if (cache.empty())
        std::cerr << "cc1d-precompile: warning: the disk cache is off (CC1D_DISABLE_DISK_CACHE?); "
                     "nothing compiled now will be kept\n";

    std::vector<CompileJob> jobs;
    for (const Variant& variant : options.config.variants)
        for (const std::string& target : options.targets) jobs.push_back({variant.canonical(), target});
    fmt::print("cc1d-precompile: {} variants x {} targets into {}, {} jobs\n", options.config.variants.size(),
               options.targets.size(), cache.empty() ? "(no disk cache)" : cache, options.jobs);
    std::fflush(stdout);

    const Tally tally = run_compile_jobs(
        jobs, options.jobs, [&](const CompileJob& job) { return runtime.precompile(job.variant, job.target); },
        std::cout);
    fmt::print("{} variants x {} targets: {} compiled, {} already cached, {} failed\n", options.config.variants.size(),
               options.targets.size(), tally.compiled, tally.cached, tally.failed);
    return tally.failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace cc1d::precompile

int main(int argc, char** argv) {
    using namespace cc1d;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
            std::cout << precompile::usage;
            return 0;
        }
    }
    precompile::Options options;
    try {
        options = precompile::parse_options(argc, argv);
    } catch (const std::exception& error) {   // UsageError, ConfigError
        std::cerr << "cc1d-precompile: error: " << error.what() << '\n';
        return 2;
    }
    try {
        return precompile::run(options);
    } catch (const std::exception& error) {
        std::cerr << "cc1d-precompile: error: " << error.what() << '\n';
        return 1;
    }
}
