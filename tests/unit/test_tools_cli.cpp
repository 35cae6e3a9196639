// cc1d-precompile and cc1d-bench run as programs: their contract without a GPU. Bad
// arguments and configs exit 2 with one line naming the file and the JSON path; --list
// needs no GPU; the precompile summary line has the documented shape; no GPU exits 3.
// The tools are found through CC1D_TOOLS_DIR or beside the tests (../tools/); without
// them the whole file reports itself skipped (exit 77).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path find_tools_dir() {
    if (const char* given = std::getenv("CC1D_TOOLS_DIR"); given && *given) return given;
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (error) return {};
    const fs::path beside = self.parent_path().parent_path() / "tools";
    return fs::exists(beside / "cc1d-precompile", error) && fs::exists(beside / "cc1d-bench", error) ? beside : fs::path{};
}

const fs::path& tools_dir() {
    static const fs::path dir = [] {
        fs::path found = find_tools_dir();
        if (found.empty()) {
            std::printf("SKIPPED: cc1d-precompile / cc1d-bench not found (build them, or set CC1D_TOOLS_DIR)\n");
            std::fflush(stdout);
            std::_Exit(77);
        }
        return found;
    }();
    return dir;
}
const bool tools_checked_at_start = !tools_dir().empty();

fs::path source_dir() {
    if (const char* dir = std::getenv("CC1D_TEST_SOURCE_DIR")) return dir;
    return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

// A scratch folder for configs and caches, removed when the tests end.
struct ScratchFolder {
    fs::path path;
    ScratchFolder() {
        std::string pattern = (fs::temp_directory_path() / "cc1d-tools-cli-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::perror("mkdtemp");
            std::exit(1);
        }
        path = pattern;
    }
    ~ScratchFolder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};
const fs::path& scratch() {
    static const ScratchFolder folder;
    return folder.path;
}

std::string write_config(const std::string& name, const std::string& text) {
    const fs::path path = scratch() / name;
    std::ofstream(path) << text;
    return path.string();
}

std::string read_text(const fs::path& path) {
    std::ifstream stream(path);
    std::ostringstream text;
    text << stream.rdbuf();
    return text.str();
}

struct Run {
    int status = -1;
    std::string out, err;
    int error_lines() const {
        int lines = 0;
        for (char c : err) lines += c == '\n';
        return lines;
    }
};

// Runs tools_dir()/tool with `args`; stdout and stderr go to files (no pipe to fill up).
Run run_tool(const std::string& tool, const std::vector<std::string>& args) {
    static int serial = 0;
    const fs::path out_path = scratch() / ("out" + std::to_string(serial));
    const fs::path err_path = scratch() / ("err" + std::to_string(serial++));
    const std::string program = (tools_dir() / tool).string();
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, 1);
        ::dup2(err, 2);
        std::vector<char*> argv{const_cast<char*>(program.c_str())};
        for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    Run run;
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = read_text(out_path);
    run.err = read_text(err_path);
    return run;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Exit 2 with exactly one line on stderr that contains every one of `parts`.
void expect_usage_error(const Run& run, const std::vector<std::string>& parts) {
    CHECK(run.status == 2);
    CHECK(run.error_lines() == 1);
    for (const auto& part : parts) CHECK_MESSAGE(has(run.err, part), "stderr: " << run.err << " lacks: " << part);
}

}  // namespace

TEST_CASE("cc1d-precompile: help and every argument error") {
    const Run help = run_tool("cc1d-precompile", {"--help"});
    CHECK(help.status == 0);
    CHECK(has(help.out, "usage: cc1d-precompile --config FILE [--target T]... [--cache-dir DIR] [--jobs N]"));

    const std::string good = write_config("good.json", R"({"variants": [{"op": "fwd"}]})");
    expect_usage_error(run_tool("cc1d-precompile", {}), {"cc1d-precompile: error: --config is required"});
    expect_usage_error(run_tool("cc1d-precompile", {"--config", good, "--frobnicate"}), {"unknown option --frobnicate"});
    expect_usage_error(run_tool("cc1d-precompile", {"--config", good, "--jobs", "0"}), {"--jobs '0'"});
    expect_usage_error(run_tool("cc1d-precompile", {"--config", good, "--target", "sm90"}),
                       {"--target: unknown target \"sm90\""});
    expect_usage_error(run_tool("cc1d-precompile", {"--config", good}), {"no targets:", good});
    expect_usage_error(run_tool("cc1d-precompile", {"--config", (scratch() / "missing.json").string()}),
                       {"missing.json: cannot open"});
}

TEST_CASE("cc1d-precompile: config errors name the file and the JSON path") {
    const std::string width = write_config("width.json", R"({"targets": ["sm_90"], "variants": [{"width": [2, 3, 17]}]})");
    expect_usage_error(run_tool("cc1d-precompile", {"--config", width}),
                       {width + ": variants[0].width[2]: 17 is outside 1 to 16"});
    const std::string op = write_config("op.json", R"({"targets": "sm_90", "variants": [{"op": "fwdd"}]})");
    expect_usage_error(run_tool("cc1d-precompile", {"--config", op}), {"variants[0].op: unknown op \"fwdd\""});
    const std::string dtype = write_config("dtype.json", R"({"targets": "sm_90", "variants": [{"x_dtype": "fp8"}]})");
    expect_usage_error(run_tool("cc1d-precompile", {"--config", dtype}), {"variants[0].x_dtype: unknown dtype"});
    const std::string broken = write_config("broken.json", "{\n  \"variants\": [\n    {\"op\": \"fwd\",}\n  ]\n}\n");
    expect_usage_error(run_tool("cc1d-precompile", {"--config", broken}), {"broken.json: line 3, column", "malformed JSON"});
}

TEST_CASE("cc1d-precompile: a failed compile shows the compiler's log under its progress line") {
    // A copy of the templates with an #error in the channel-first forward: NVRTC must
    // fail it, and the line the compiler wrote must reach the user (indented under the
    // variant's line). Without NVRTC the job fails for that reason instead.
    const fs::path templates = scratch() / "broken-templates";
    fs::copy(source_dir() / "kernel_templates", templates, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ofstream(templates / "fwd_channel_first.cu", std::ios::app) << "\n#error cc1d-test-broken-template\n";
    const std::string config = write_config("broken-template.json", R"({"variants": [{"op": "fwd", "width": 4, "x_dtype": "bf16", "small_call": false}]})");
    const std::string cache = (scratch() / "broken-template-cache").string();
    setenv("CC1D_TEMPLATE_DIR", templates.c_str(), 1);
    const Run run = run_tool("cc1d-precompile", {"--config", config, "--target", "sm_90", "--cache-dir", cache, "--jobs", "1"});
    unsetenv("CC1D_TEMPLATE_DIR");
    CHECK(run.status == 1);
    REQUIRE_MESSAGE(has(run.out, "sm_90: FAILED: "), run.out);
    if (has(run.out, "with nvrtc-")) {
        CHECK_MESSAGE(has(run.out, "\n    "), run.out);
        CHECK_MESSAGE(has(run.out, "cc1d-test-broken-template"), run.out);
    } else {
        MESSAGE("no NVRTC here: the compiler's log was not checked (", run.out, ")");
    }
}

TEST_CASE("cc1d-precompile: one progress line per variant and target, then the summary") {
    // Compiles for real when NVRTC is installed; without it the one job fails, and the
    // summary and the exit status must say so.
    const std::string config = write_config("one.json", R"({"variants": [{"op": "fwd", "width": 4, "x_dtype": "bf16", "small_call": false}]})");
    const std::string cache = (scratch() / "cache").string();
    const Run first = run_tool("cc1d-precompile", {"--config", config, "--target", "sm_90", "--cache-dir", cache, "--jobs", "1"});
    CHECK(has(first.out, "[1/1] op=fwd,layout=channel_first,width=4,x=bf16,weight=bf16,act=none,bias=0"));
    std::smatch summary;
    const std::regex shape(R"(1 variants x 1 targets: (\d+) compiled, (\d+) already cached, (\d+) failed)");
    REQUIRE_MESSAGE(std::regex_search(first.out, summary, shape), first.out);
    const int compiled = std::stoi(summary[1]), cached = std::stoi(summary[2]), failed = std::stoi(summary[3]);
    CHECK(compiled + cached + failed == 1);
    CHECK(first.status == (failed == 0 ? 0 : 1));
    if (failed == 1) CHECK(has(first.out, "sm_90: FAILED: "));
    if (compiled == 1) {
        CHECK(has(first.out, "sm_90: compiled "));
        const Run again = run_tool("cc1d-precompile", {"--config", config, "--target", "sm_90", "--cache-dir", cache});
        CHECK(again.status == 0);
        CHECK(has(again.out, "sm_90: cached"));
        CHECK(has(again.out, "1 variants x 1 targets: 0 compiled, 1 already cached, 0 failed"));
    }
}

TEST_CASE("cc1d-precompile: parallel jobs for NVRTC and HIPRTC targets together") {
    // Debian's HIPRTC 5.2 crashed (SIGSEGV) when two threads compiled at once; the tool
    // must finish with every job accounted for, whatever compilers are installed.
    const std::string config = write_config(
        "mixed.json", R"({"variants": [{"op": ["fwd", "update"], "width": [3, 4], "x_dtype": "bf16", "activation": "silu"}]})");
    const std::string cache = (scratch() / "mixed-cache").string();
    const Run run = run_tool("cc1d-precompile", {"--config", config, "--target", "sm_90", "--target", "gfx90a",
                                                 "--cache-dir", cache, "--jobs", "4"});
    CHECK_MESSAGE(run.status <= 1, "exit " << run.status << "\n" << run.out << run.err);
    std::smatch summary;
    const std::regex shape(R"(6 variants x 2 targets: (\d+) compiled, (\d+) already cached, (\d+) failed)");
    REQUIRE_MESSAGE(std::regex_search(run.out, summary, shape), run.out << run.err);
    // fwd (both modules) and update at widths 3 and 4.
    CHECK(std::stoi(summary[1]) + std::stoi(summary[2]) + std::stoi(summary[3]) == 12);
}

TEST_CASE("cc1d-bench --list needs no GPU and expands every shipped config") {
    const fs::path configs = source_dir() / "configs" / "bench";
    int shipped = 0;
    for (const auto& entry : fs::directory_iterator(configs)) {
        if (entry.path().extension() != ".json") continue;
        ++shipped;
        const std::string name = entry.path().filename().string();
        const Run list = run_tool("cc1d-bench", {"--config", entry.path().string(), "--list"});
        CHECK_MESSAGE(list.status == 0, name << ": " << list.err);
        CHECK_MESSAGE(has(list.out, " cases in "), name);
    }
    CHECK(shipped >= 8);   // (quick, seeds, anchors, decode, profile, the small calls', unaligned)
    const Run decode = run_tool("cc1d-bench", {"--config", (configs / "decode.json").string(), "--list", "--filter", "^decode "});
    CHECK(decode.status == 0);
    CHECK(has(decode.out, "decode update w4 bf16 silu bias"));
    CHECK_FALSE(has(decode.out, "varlen_fwd"));
    CHECK(has(decode.out, "6 cases in"));
}

TEST_CASE("cc1d-bench: argument and config errors exit 2 with one line") {
    const Run help = run_tool("cc1d-bench", {"--help"});
    CHECK(help.status == 0);
    CHECK(has(help.out, "usage: cc1d-bench --config FILE [--json OUT] [--markdown OUT] [--filter REGEX] [--list]"));

    const std::string quick = (source_dir() / "configs" / "bench" / "quick.json").string();
    expect_usage_error(run_tool("cc1d-bench", {"--list"}), {"cc1d-bench: error: --config is required"});
    expect_usage_error(run_tool("cc1d-bench", {"--config", quick, "--list", "--filter", "("}),
                       {"--filter '(': not a valid regular expression"});
    expect_usage_error(run_tool("cc1d-bench", {"--config", quick, "--list", "--filter", "no-such-case"}),
                       {"matches none of the"});
    expect_usage_error(run_tool("cc1d-bench", {"--config", quick, "extra"}), {"unexpected argument 'extra'"});
    const std::string bad = write_config("bench_bad.json", R"({"cases": [{"op": "fwd", "batch": 2, "dim": 64}]})");
    expect_usage_error(run_tool("cc1d-bench", {"--config", bad, "--list"}),
                       {bad + ": cases[0]: missing field \"seqlen\""});
    const std::string width = write_config("bench_width.json",
                                           R"({"cases": [{"op": "bwd", "batch": 2, "dim": 64, "seqlen": 8, "width": [4, 0]}]})");
    expect_usage_error(run_tool("cc1d-bench", {"--config", width}), {"cases[0].width[1]: 0 is outside 1 to 16"});
}

TEST_CASE("cc1d-bench without a GPU exits 3 with the reason") {
    const std::string tiny = write_config(
        "bench_tiny.json", R"({"warmup": 1, "reps": 2, "cases": [{"op": "fwd", "batch": 1, "dim": 8, "seqlen": 16}]})");
    const Run run = run_tool("cc1d-bench", {"--config", tiny});
    if (run.status != 3) {
        MESSAGE("a GPU is present (exit " << run.status << "); the no-GPU path is not exercised here");
        return;
    }
    CHECK(run.error_lines() == 1);
    CHECK(has(run.err, "cc1d-bench: no GPU: "));
}
