// cc1d-cache, run as a program: list, stats, verify [--fix], purge [--old], bad usage.
// The tool is found through CC1D_CACHE_TOOL or beside the tests (../tools/cc1d-cache);
// without it the whole file reports itself skipped (exit 77).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "cache/disk_cache.hpp"
#include "unit/cache_test_support.hpp"

using namespace cc1d::cache;
using namespace cc1d::cache::test;
namespace fs = std::filesystem;

namespace {

std::string find_tool() {
    if (const char* given = std::getenv("CC1D_CACHE_TOOL"); given && *given) return given;
    std::error_code error;
    fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (error) return "";
    fs::path beside = self.parent_path().parent_path() / "tools" / "cc1d-cache";
    return fs::exists(beside, error) ? beside.string() : "";
}

const std::string& tool() {
    static const std::string path = [] {
        std::string found = find_tool();
        if (found.empty()) {
            std::printf("SKIPPED: cc1d-cache not found (build the cc1d-cache target, or set CC1D_CACHE_TOOL)\n");
            std::fflush(stdout);
            std::_Exit(77);
        }
        return found;
    }();
    return path;
}
const bool tool_checked_at_start = !tool().empty();

struct Run {
    int status = -1;
    std::string output;   // stdout and stderr together
};

// Runs the tool with `args`, and CC1D_CACHE_DIR set to `env_cache_dir` (unset when empty).
Run run_tool(const std::vector<std::string>& args, const std::string& env_cache_dir = "") {
    int out[2];
    REQUIRE(::pipe(out) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(out[1], 2);
        ::close(out[0]);
        ::close(out[1]);
        if (env_cache_dir.empty()) ::unsetenv("CC1D_CACHE_DIR");
        else ::setenv("CC1D_CACHE_DIR", env_cache_dir.c_str(), 1);
        std::vector<char*> argv = {const_cast<char*>(tool().c_str())};
        for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    Run run;
    char buffer[4096];
    for (ssize_t got; (got = ::read(out[0], buffer, sizeof buffer)) != 0;) {
        if (got > 0) run.output.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// A cache with three entries: two for sm_90, one for sm_80.
struct FilledCache {
    CleanCacheEnv env;
    TempDir dir;
    std::string root = dir.sub("cache");
    DiskCache cache{config_at(root)};
    std::vector<std::string> variants = {"op=fwd,width=2", "op=fwd,width=3", "op=bwd,width=4"};
    std::vector<std::string> paths;

    FilledCache() {
        for (std::size_t i = 0; i < variants.size(); ++i) {
            EntryLocation where = sample_location();
            if (i == 2) where.target = "sm_80";
            CacheKey key = make_key(sample_inputs(variants[i]));
            REQUIRE(cache.store(key, where, sample_payload(variants[i], 1000 + i), sample_info(variants[i])));
            paths.push_back(cache.entry_path(key, where));
        }
    }
};

}  // namespace

TEST_CASE("list shows each entry's variant, target and size; stats the totals") {
    FilledCache filled;
    Run list = run_tool({"--cache-dir", filled.root, "list"});
    CHECK(list.status == 0);
    for (const auto& variant : filled.variants) CHECK(contains(list.output, variant));
    CHECK(contains(list.output, "sm_80"));
    CHECK(contains(list.output, " 1002 "));
    CHECK(contains(list.output, "cuda-nvrtc-13.0"));

    Run stats = run_tool({"stats", "--cache-dir=" + filled.root});
    CHECK(stats.status == 0);
    CHECK(contains(stats.output, "entries: 3"));
    CHECK(contains(stats.output, "target sm_90: 2 entries"));
    CHECK(contains(stats.output, "target sm_80: 1 entries"));
    std::uintmax_t bytes = 0;
    for (const auto& path : filled.paths) bytes += fs::file_size(path);
    CHECK(contains(stats.output, "bytes: " + std::to_string(bytes)));

    // Without --cache-dir: the library's default folder.
    Run by_default = run_tool({"list"}, filled.root);
    CHECK(by_default.status == 0);
    CHECK(contains(by_default.output, filled.variants[0]));
}

TEST_CASE("verify exits 1 naming each bad entry; --fix removes them and exits 0") {
    FilledCache filled;
    CHECK(run_tool({"--cache-dir", filled.root, "verify"}).status == 0);

    std::string bytes = read_bytes(filled.paths[0]);
    bytes[bytes.size() - 1] ^= 0x01;
    write_bytes(filled.paths[0], bytes);
    fs::copy_file(filled.paths[2], filled.paths[1], fs::copy_options::overwrite_existing);   // another key's entry
    std::string stale = filled.paths[2] + ".tmp.1.2.3.4", fresh = filled.paths[2] + ".tmp.5.6.7.8";
    write_bytes(stale, "half written");
    write_bytes(fresh, "being written now");
    fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(3));

    Run verify = run_tool({"--cache-dir", filled.root, "verify"});
    CHECK(verify.status == 1);
    CHECK(contains(verify.output, filled.paths[0]));
    CHECK(contains(verify.output, "checksum"));
    CHECK(contains(verify.output, filled.paths[1]));
    CHECK(contains(verify.output, "another key"));
    CHECK(contains(verify.output, stale));
    CHECK_FALSE(contains(verify.output, fresh));   // a live writer's file is left alone
    CHECK_FALSE(contains(verify.output, "bad " + filled.paths[2] + ":"));
    CHECK(fs::exists(filled.paths[0]));            // plain verify changes nothing

    Run fix = run_tool({"--cache-dir", filled.root, "verify", "--fix"});
    CHECK(fix.status == 0);
    CHECK_FALSE(fs::exists(filled.paths[0]));
    CHECK_FALSE(fs::exists(filled.paths[1]));
    CHECK_FALSE(fs::exists(stale));
    CHECK(fs::exists(fresh));
    CHECK(fs::exists(filled.paths[2]));
    CHECK(run_tool({"--cache-dir", filled.root, "verify"}).status == 0);
    CHECK(contains(run_tool({"--cache-dir", filled.root, "stats"}).output, "entries: 1"));
}

TEST_CASE("purge --old removes other format and library versions only; purge removes every entry") {
    FilledCache filled;
    // An entry of another library version, and a folder of another entry format.
    KeyInputs older = sample_inputs("op=fwd,width=9");
    older.library_version = "0.0.9";
    EntryInfo older_info = sample_info("op=fwd,width=9");
    older_info.library_version = "0.0.9";
    CacheKey older_key = make_key(older);
    REQUIRE(filled.cache.store(older_key, sample_location(), "old payload", older_info));
    std::string older_path = filled.cache.entry_path(older_key, sample_location());
    fs::create_directories(filled.root + "/v0/cuda-nvrtc-12.0/sm_90/ab");
    write_bytes(filled.root + "/v0/cuda-nvrtc-12.0/sm_90/ab/old.bin", "format 0");
    write_bytes(filled.root + "/notes.txt", "the user's own file");

    CHECK(contains(run_tool({"--cache-dir", filled.root, "stats"}).output, "other format versions: 1"));
    Run old = run_tool({"--cache-dir", filled.root, "purge", "--old"});
    CHECK(old.status == 0);
    CHECK_FALSE(fs::exists(filled.root + "/v0"));
    CHECK_FALSE(fs::exists(older_path));
    for (const auto& path : filled.paths) CHECK(fs::exists(path));

    Run all = run_tool({"--cache-dir", filled.root, "purge"});
    CHECK(all.status == 0);
    for (const auto& path : filled.paths) CHECK_FALSE(fs::exists(path));
    CHECK(fs::exists(filled.root + "/notes.txt"));   // only what cc1d made is removed
    CHECK(contains(run_tool({"--cache-dir", filled.root, "stats"}).output, "entries: 0"));
    CHECK(run_tool({"--cache-dir", filled.dir.sub("never-made"), "purge"}).status == 0);
}

TEST_CASE("bad usage exits 2 with a message naming the argument") {
    TempDir dir;
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"frobnicate"}, "frobnicate"},
        {{"list", "--verbose"}, "--verbose"},
        {{"list", "--cache-dir"}, "--cache-dir"},
        {{"list", "--fix"}, "--fix"},
        {{"verify", "--old"}, "--old"},
        {{"list", "stats"}, "stats"},
        {{}, "missing command"},
    };
    for (const auto& [args, named] : cases) {
        CAPTURE(named);
        Run run = run_tool(args, dir.path());
        CHECK(run.status == 2);
        CHECK(contains(run.output, named));
        CHECK(contains(run.output, "usage:"));
    }
    Run help = run_tool({"--help"});
    CHECK(help.status == 0);
    CHECK(contains(help.output, "purge --old"));
}
