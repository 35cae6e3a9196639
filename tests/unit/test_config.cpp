// Config loading and expansion (src/config): every combination of the lists, the
// defaults, and one test per error path: each error must name the file, the JSON path of
// the bad value and what was expected.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>

#include "config/bench_config.hpp"
#include "config/command_line.hpp"
#include "config/json_file.hpp"
#include "config/precompile_config.hpp"

using namespace cc1d;
using namespace cc1d::config;

namespace {

const char* const file = "cfg.json";

PrecompileConfig precompile_from(const std::string& text) {
    return parse_precompile_config(parse_json_text(text, file), file);
}
BenchConfig bench_from(const std::string& text) { return parse_bench_config(parse_json_text(text, file), file); }

// The message of the ConfigError `action` throws ("" when it throws none).
std::string config_error(const std::function<void()>& action) {
    try {
        action();
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}
std::string precompile_error(const std::string& text) {
    return config_error([&] { precompile_from(text); });
}
std::string bench_error(const std::string& text) {
    return config_error([&] { bench_from(text); });
}

// A bench config with one case whose fields are `fields` (JSON members without braces).
std::string one_case(const std::string& fields) { return R"({"cases": [{)" + fields + "}]}"; }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::filesystem::path source_dir() {
    if (const char* dir = std::getenv("CC1D_TEST_SOURCE_DIR")) return dir;
    return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

}  // namespace

TEST_CASE("position_of counts lines and columns from 1") {
    const std::string text = "{\n  \"a\": 1,\n  oops\n}";
    CHECK(position_of(text, 0).line == 1);
    CHECK(position_of(text, 0).column == 1);
    const auto oops = position_of(text, text.find("oops"));
    CHECK(oops.line == 3);
    CHECK(oops.column == 3);
    CHECK(position_of(text, text.size() + 10).line == 4);
}

TEST_CASE("malformed JSON names the file, the line and the column") {
    const std::string message = config_error([] { parse_json_text("{\n  \"targets\": [\"sm_90\",]\n}", "bad.json"); });
    CHECK(has(message, "bad.json: line 2, column 23: malformed JSON"));
    CHECK(message.find('\n') == std::string::npos);
    CHECK(has(config_error([] { parse_json_text("", "empty.json"); }), "empty.json: line 1, column 1: malformed JSON"));
}

TEST_CASE("a missing file or a folder is a config error naming it") {
    CHECK(has(config_error([] { read_json_file("/nonexistent/cc1d.json"); }), "/nonexistent/cc1d.json: cannot open"));
    const auto dir = std::filesystem::temp_directory_path();
    CHECK(has(config_error([&] { read_json_file(dir.string()); }), "is a folder"));

    const auto path = dir / "cc1d_test_config_read.json";
    std::ofstream(path) << R"({"variants": [{"op": "update"}]})";
    CHECK(load_precompile_config(path.string()).variants.size() == 1);
    std::filesystem::remove(path);
}

TEST_CASE("the design's precompile example expands to every combination") {
    const auto config = precompile_from(R"({ "targets": ["sm_80", "sm_90", "gfx90a", "gfx942"],
      "variants": [
        { "op": ["fwd", "bwd"], "layout": ["channel_first", "channel_last"],
          "width": [2, 3, 4], "x_dtype": ["fp32", "fp16", "bf16"], "weight_dtype": "same",
          "activation": ["none", "silu"], "bias": true } ] })");
    CHECK(config.targets == std::vector<std::string>{"sm_80", "sm_90", "gfx90a", "gfx942"});
    // 72 fwd/bwd combinations, each also as its small-call module, and the 18 channel-last
    // backwards as their tile kernel's module.
    REQUIRE(config.variants.size() == 2 * (2 * 2 * 3 * 3 * 2) + 3 * 3 * 2);
    std::set<std::string> texts;
    for (const Variant& v : config.variants) {
        texts.insert(v.canonical());
        CHECK(v.bias);
        CHECK(v.weight_dtype == v.x_dtype);
    }
    CHECK(texts.size() == config.variants.size());
    // The first field varies slowest, the last fastest.
    CHECK(config.variants.front().canonical() ==
          "op=fwd,layout=channel_first,width=2,x=fp32,weight=fp32,act=none,bias=1,seq_idx=0,initial_states=0,"
          "final_states=0");
    CHECK(config.variants[1].small_call);   // the unnamed small_call axis comes last: both modules
    CHECK(config.variants[2].activation == Activation::silu);
    CHECK(config.variants.back().op == Op::bwd);
    CHECK(config.variants.back().small_call);
    // The tiled axis comes after small_call: a channel-last backward's walk, its tile
    // module, then its small-call module.
    const auto tiled = std::find_if(config.variants.begin(), config.variants.end(), [](const Variant& v) { return v.tiled; });
    REQUIRE(tiled != config.variants.end());
    CHECK(tiled->canonical() ==
          "op=bwd,layout=channel_last,width=2,x=fp32,weight=fp32,act=none,bias=1,seq_idx=0,initial_states=0,"
          "final_states=0,deterministic=1,tiled=1");
    CHECK_FALSE(tiled[-1].tiled);
    CHECK(tiled[-1].layout == Layout::channel_last);
    CHECK(tiled[1].small_call);
    CHECK(std::count_if(config.variants.begin(), config.variants.end(), [](const Variant& v) { return v.tiled; }) == 18);
}

TEST_CASE("omitted fields take the Variant defaults; aliases are accepted") {
    const auto config = precompile_from(R"({"variants": [{}]})");
    REQUIRE(config.variants.size() == 2);   // the forward's main and small-call modules
    CHECK(config.variants[0] == Variant{});
    Variant small;
    small.small_call = true;
    CHECK(config.variants[1] == small);
    CHECK(config.targets.empty());

    const auto alias = precompile_from(
        R"({"variants": [{"activation": "swish", "x_dtype": "bfloat16", "weight_dtype": "fp32", "small_call": false}]})");
    REQUIRE(alias.variants.size() == 1);
    CHECK(alias.variants[0].activation == Activation::silu);
    CHECK(alias.variants[0].x_dtype == DType::bf16);
    CHECK(alias.variants[0].weight_dtype == DType::fp32);
}

TEST_CASE("weight_dtype \"same\" follows each x dtype; lists mix") {
    const auto config =
        precompile_from(R"({"variants": [{"x_dtype": ["fp16", "bf16"], "weight_dtype": ["same", "fp32"], "small_call": false}]})");
    REQUIRE(config.variants.size() == 4);
    CHECK(config.variants[0].weight_dtype == DType::fp16);
    CHECK(config.variants[1].weight_dtype == DType::fp32);
    CHECK(config.variants[2].weight_dtype == DType::bf16);
    CHECK(config.variants[3].weight_dtype == DType::fp32);
}

TEST_CASE("duplicates are removed after normalization, across sets; targets too") {
    // deterministic only matters to bwd: fwd x {true, false} is one variant (two with its
    // small-call module), and so is the backward's small-call module (it sums in a fixed
    // order in either mode); the second set repeats the first's forwards.
    const auto config = precompile_from(R"({"targets": ["sm_90", "sm_90", "gfx942"],
        "variants": [{"op": ["fwd", "bwd"], "deterministic": [true, false]}, {"op": "fwd"}]})");
    CHECK(config.variants.size() == 5);
    CHECK(config.targets == std::vector<std::string>{"sm_90", "gfx942"});
}

TEST_CASE("precompile config errors name the file, the JSON path and what was expected") {
    const auto width = precompile_error(R"({"variants": [{"width": [2, 3, 17]}]})");
    CHECK(width == "cfg.json: variants[0].width[2]: 17 is outside 1 to 16");
    CHECK(has(precompile_error(R"({"variants": [{"width": 0}]})"), "variants[0].width: 0 is outside 1 to 16"));
    CHECK(has(precompile_error(R"({"variants": [{"width": "4"}]})"),
              "variants[0].width: expected an integer from 1 to 16, got the string \"4\""));
    CHECK(has(precompile_error(R"({"variants": [{"width": 4.5}]})"), "variants[0].width: expected an integer"));
    CHECK(has(precompile_error(R"({"variants": [{"width": 99999999999999999999}]})"), "variants[0].width"));
    CHECK(has(precompile_error(R"({"variants": [{"op": ["fwd", "fwdd"]}]})"),
              "variants[0].op[1]: unknown op \"fwdd\" (expected fwd, bwd, update, or varlen_fwd)"));
    CHECK(has(precompile_error(R"({"variants": [{"layout": "cl"}]})"), "variants[0].layout: unknown layout \"cl\""));
    CHECK(has(precompile_error(R"({"variants": [{"x_dtype": "fp8"}]})"),
              "variants[0].x_dtype: unknown dtype \"fp8\" (expected fp32, fp16, or bf16)"));
    CHECK(has(precompile_error(R"({"variants": [{"x_dtype": "int32"}]})"), "variants[0].x_dtype: unknown dtype"));
    CHECK(has(precompile_error(R"({"variants": [{"weight_dtype": "half"}]})"),
              "variants[0].weight_dtype: unknown weight dtype \"half\" (expected same, fp32, fp16, or bf16)"));
    CHECK(has(precompile_error(R"({"variants": [{"activation": "relu"}]})"),
              "variants[0].activation: unknown activation \"relu\" (expected none or silu)"));
    CHECK(has(precompile_error(R"({"variants": [{"bias": "yes"}]})"),
              "variants[0].bias: expected true or false, got the string \"yes\""));
    CHECK(has(precompile_error(R"({"variants": [{"op": 3}]})"), "variants[0].op: expected op"));
    CHECK(has(precompile_error(R"({"variants": [{"width": [[2, 3]]}]})"), "variants[0].width[0]: expected a single value"));
    CHECK(has(precompile_error(R"({"variants": [{"width": []}]})"), "variants[0].width: expected a value or a non-empty list"));
    CHECK(has(precompile_error(R"({"variants": [{"op": "fwd"}, {"widht": 4}]})"),
              "variants[1].widht: unknown field (expected one of op, layout, width"));
    CHECK(has(precompile_error(R"({"variants": ["fwd"]})"), "variants[0]: expected an object"));
    CHECK(has(precompile_error(R"({"targets": ["sm_90"]})"), "cfg.json: variants: missing"));
    CHECK(has(precompile_error(R"({"variants": []})"), "variants: expected a non-empty list"));
    CHECK(has(precompile_error(R"({"variants": {"op": "fwd"}})"), "variants: expected a list"));
    CHECK(has(precompile_error(R"([1, 2])"), "cfg.json: top level: expected an object"));
    CHECK(has(precompile_error(R"({"variant": []})"), "cfg.json: variant: unknown field (expected one of description, targets, or variants)"));
    CHECK(has(precompile_error(R"({"targets": ["sm_90", "sm90"], "variants": [{}]})"),
              "targets[1]: unknown target \"sm90\" (expected an NVIDIA target"));
    CHECK(has(precompile_error(R"({"targets": 90, "variants": [{}]})"), "targets: expected a string, got the number 90"));
}

TEST_CASE("a feature flag that no listed op reads is an error") {
    CHECK(has(precompile_error(R"({"variants": [{"op": "update", "seq_idx": true}]})"),
              "variants[0].seq_idx: seq_idx true applies to op fwd, bwd only"));
    CHECK(has(precompile_error(R"({"variants": [{"op": "fwd", "deterministic": false}]})"),
              "variants[0].deterministic: deterministic false applies to op bwd only"));
    CHECK(has(precompile_error(R"({"variants": [{"op": "fwd", "state_indices": [false, true]}]})"),
              "variants[0].state_indices"));
    CHECK(has(precompile_error(R"({"variants": [{"op": "update", "initial_states": true}]})"),
              "variants[0].initial_states"));
    CHECK(has(precompile_error(R"({"variants": [{"op": "update", "small_call": true}]})"),
              "variants[0].small_call: small_call true applies to op fwd, bwd only"));
    CHECK(has(precompile_error(R"({"variants": [{"op": "update", "shifted_rows": true}]})"),
              "variants[0].shifted_rows: shifted_rows true applies to op fwd, bwd only"));
    CHECK(has(precompile_error(R"({"variants": [{"op": "fwd", "layout": "channel_last", "tiled": true}]})"),
              "variants[0].tiled: tiled true applies to op bwd only"));
    // The tile kernel's module only where it exists (channel-last, up to width 4, without
    // states); a set that does not name tiled fills both modules there, `false` keeps the
    // register walk's only.
    const auto tiled = precompile_from(
        R"({"variants": [{"op": "bwd", "layout": ["channel_first", "channel_last"], "width": [4, 5], "seq_idx": [false, true], "small_call": false}]})")
                           .variants;
    REQUIRE(tiled.size() == 2 * 2 * 2 + 2);
    for (const Variant& tile_module : tiled) {
        if (!tile_module.tiled) continue;
        CHECK(tile_module.layout == Layout::channel_last);
        CHECK(tile_module.width == 4);
    }
    CHECK(std::count_if(tiled.begin(), tiled.end(), [](const Variant& s) { return s.tiled; }) == 2);
    CHECK(std::count_if(tiled.begin(), tiled.end(), [](const Variant& s) { return s.tiled && s.seq_idx; }) == 1);
    const auto walk_only = precompile_from(
        R"({"variants": [{"op": "bwd", "layout": "channel_last", "small_call": false, "tiled": false}]})").variants;
    REQUIRE(walk_only.size() == 1);
    CHECK_FALSE(walk_only[0].tiled);
    // The forward's shifted-rows module: every dtype, no seq_idx (the main module serves those).
    const auto forward_shifted = precompile_from(
        R"({"variants": [{"op": "fwd", "x_dtype": ["fp32", "bf16"], "seq_idx": [false, true], "small_call": false, "shifted_rows": true}]})")
                                     .variants;
    CHECK(std::count_if(forward_shifted.begin(), forward_shifted.end(), [](const Variant& s) { return s.shifted_rows; }) == 2);
    // The shifted-rows module only where asked for, and only where it exists (16-bit).
    const auto shifted = precompile_from(
        R"({"variants": [{"op": "bwd", "x_dtype": ["fp32", "bf16"], "small_call": false, "shifted_rows": [false, true]}]})")
                             .variants;
    REQUIRE(shifted.size() == 3);   // fp32 has one module
    CHECK(std::count_if(shifted.begin(), shifted.end(), [](const Variant& s) { return s.shifted_rows; }) == 1);
    for (const auto& s : precompile_from(R"({"variants": [{"op": "bwd", "x_dtype": "bf16"}]})").variants)
        CHECK_FALSE(s.shifted_rows);
    // A forward's or backward's small-call module, named apart from its main module.
    const auto small = precompile_from(R"({"variants": [{"op": "bwd", "small_call": [false, true]}]})").variants;
    REQUIRE(small.size() == 2);
    CHECK(small[0].small_call != small[1].small_call);
    // A set that does not name small_call fills both modules of each forward and backward
    // (a call picks one by its size); `false` keeps the main module only.
    for (const char* op : {"fwd", "bwd"}) {
        INFO(op);
        const auto unnamed = precompile_from(fmt::format(R"({{"variants": [{{"op": "{}"}}]}})", op)).variants;
        REQUIRE(unnamed.size() == 2);
        CHECK(unnamed[0].small_call != unnamed[1].small_call);
        const auto main_only = precompile_from(fmt::format(R"({{"variants": [{{"op": "{}", "small_call": false}}]}})", op)).variants;
        REQUIRE(main_only.size() == 1);
        CHECK_FALSE(main_only[0].small_call);
    }
    CHECK(precompile_from(R"({"variants": [{"op": ["update", "varlen_fwd"]}]})").variants.size() == 2);
    // Allowed when one of the listed ops reads it, and `false` (the default) is always fine.
    CHECK(precompile_from(R"({"variants": [{"op": ["fwd", "update"], "seq_idx": true}]})").variants.size() == 3);
    CHECK(precompile_from(R"({"variants": [{"op": "update", "seq_idx": false}]})").variants.size() == 1);
}

TEST_CASE("target names") {
    for (const char* good : {"sm_80", "sm_90", "sm_90a", "sm_100", "gfx90a", "gfx942", "gfx1100", "gfx942:sramecc+:xnack-"})
        CHECK_MESSAGE(target_problem(good).empty(), good);
    for (const char* bad : {"", "sm90", "sm_", "cuda", "gfx", "SM_90", "sm_90 ", "gfx942 sramecc"})
        CHECK_MESSAGE(has(target_problem(bad), "expected an NVIDIA target"), bad);
}

TEST_CASE("the design's bench example expands, with labels, shapes and byte counts") {
    const auto config = bench_from(R"({ "warmup": 25, "reps": 200,
      "cases": [ { "name": "large-mamba", "op": ["fwd", "bwd"], "layout": "channel_first",
                   "batch": 8, "dim": 2048, "seqlen": 1024, "width": 4,
                   "x_dtype": ["fp32", "fp16"], "activation": ["none", "silu"] } ] })");
    CHECK(config.warmup == 25);
    CHECK(config.reps == 200);
    CHECK(config.host_calls == 1000);
    CHECK_FALSE(config.graph_replay);
    CHECK(bench_from(R"({"graph_replay": true, "cases": [{"op": "update", "batch": 1, "dim": 1}]})").graph_replay);
    REQUIRE(config.cases.size() == 8);
    const BenchCase& first = config.cases[0];
    CHECK(first.label() == "large-mamba fwd cf w4 fp32 none");
    CHECK(first.shape_text() == "8x2048x1024");
    CHECK(counted_bytes(first) == 2ull * 8 * 2048 * 1024 * 4);
    const BenchCase& last = config.cases.back();
    CHECK(last.label() == "large-mamba bwd cf w4 fp16 silu");
    // ANCHORS.md: the seed's large fp32 backward, 87.86 us, is 2292 GB/s.
    BenchCase seed = first;
    seed.variant.op = Op::bwd;
    CHECK(counted_bytes(seed) / 87.86e-6 / 1e9 == doctest::Approx(2291.5).epsilon(0.001));
}

TEST_CASE("bench defaults: update state length and cache rows; varlen totals") {
    const auto update = bench_from(one_case(R"("op": "update", "batch": 256, "dim": 8192, "x_dtype": "bf16")"));
    REQUIRE(update.cases.size() == 1);
    const BenchCase& u = update.cases[0];
    CHECK(u.tokens == 1);
    CHECK(u.state_len == 3);
    CHECK(u.cache_batch == 256);
    CHECK(u.shape_text() == "B=256 D=8192 T=1 S=3");
    CHECK(u.label() == "case0 update w4 bf16 none");
    // ANCHORS.md: update B=256 D=8192 bf16 at 33.0 us is 24% of 4248 GB/s.
    CHECK(counted_bytes(u) == 256ull * 8192 * (1 + 3 + 3 + 1) * 2);
    CHECK(counted_bytes(u) / 33.0e-6 / 1e9 / 4248 == doctest::Approx(0.24).epsilon(0.02));

    const auto varlen = bench_from(one_case(R"("name": "p", "op": "varlen_fwd", "dim": 5376, "seqlens": [100, 28],
                                                 "layout": "channel_last", "initial_states": true)"));
    REQUIRE(varlen.cases.size() == 1);
    const BenchCase& v = varlen.cases[0];
    CHECK(v.total_tokens() == 128);
    CHECK(v.shape_text() == "2 seqs 128 tok D=5376");
    CHECK(v.label() == "p varlen_fwd cl w4 fp32 none states");
    CHECK(counted_bytes(v) == 2ull * 5376 * 128 * 4);
}

TEST_CASE("bench shape lists expand; fields an op does not read are dropped, duplicates removed") {
    const auto config = bench_from(one_case(R"("name": "m", "op": ["fwd", "update"], "batch": 2, "dim": [64, 128],
                                                "seqlen": [16, 32], "state_len": 5)"));
    // fwd: 2 dims x 2 seqlens; update: 2 dims (seqlen does not apply, so its copies merge).
    REQUIRE(config.cases.size() == 6);
    int updates = 0;
    for (const BenchCase& c : config.cases) {
        if (c.variant.op == Op::update) {
            ++updates;
            CHECK(c.seqlen == 1);
            CHECK(c.state_len == 5);
        } else {
            CHECK(c.state_len == 0);
        }
    }
    CHECK(updates == 2);
}

TEST_CASE("bench config errors") {
    CHECK(has(bench_error(one_case(R"("op": "fwd", "batch": 2, "dim": 64)")),
              "cfg.json: cases[0]: missing field \"seqlen\" (op fwd needs it)"));
    CHECK(has(bench_error(one_case(R"("op": "varlen_fwd", "dim": 64)")), "cases[0]: missing field \"seqlens\""));
    CHECK(has(bench_error(one_case(R"("op": "fwd", "batch": 2, "dim": 64, "seqlen": 8, "tokens": 1)")),
              "cases[0].tokens: tokens applies to op update only"));
    CHECK(has(bench_error(one_case(R"("op": "fwd", "batch": 0, "dim": 64, "seqlen": 8)")),
              "cases[0].batch: 0 is outside 1 to 2147483647"));
    CHECK(has(bench_error(one_case(R"("op": "fwd", "batch": 1, "dim": 64, "seqlen": [8, -1])")),
              "cases[0].seqlen[1]: -1 is outside"));
    CHECK(has(bench_error(one_case(R"("op": "update", "batch": 4, "dim": 64, "width": [2, 4], "state_len": 2)")),
              "cases[0].state_len: state_len 2 is shorter than width - 1 = 3"));
    CHECK(has(bench_error(one_case(R"("op": "update", "batch": 4, "dim": 64, "cache_batch": 2)")),
              "cases[0].cache_batch: cache_batch 2 is smaller than batch 4"));
    CHECK(has(bench_error(one_case(R"("op": "varlen_fwd", "dim": 64, "seqlens": [])")),
              "cases[0].seqlens: expected a non-empty list"));
    CHECK(has(bench_error(one_case(R"("op": "varlen_fwd", "dim": 64, "seqlens": [4, 0])")),
              "cases[0].seqlens[1]: 0 is outside"));
    CHECK(has(bench_error(one_case(R"("op": "varlen_fwd", "dim": 64, "seqlens": 4)")),
              "cases[0].seqlens: expected a list"));
    CHECK(has(bench_error(one_case(R"("op": "fwd", "batch": 65536, "dim": 65536, "seqlen": 65536)")),
              "cases[0]: shape 65536x65536x65536 has"));
    CHECK(has(bench_error(one_case(R"("name": 7, "op": "update", "batch": 1, "dim": 1)")),
              "cases[0].name: expected a string, got the number 7"));
    CHECK(has(bench_error(one_case(R"("name": "", "op": "update", "batch": 1, "dim": 1)")),
              "cases[0].name: expected a non-empty name"));
    CHECK(has(bench_error(one_case(R"("op": "update", "batch": 1, "dim": 1, "sequence": 1)")),
              "cases[0].sequence: unknown field"));
    CHECK(has(bench_error(one_case(R"("op": "update", "batch": 1, "dim": 1, "width": 17)")),
              "cases[0].width: 17 is outside 1 to 16"));
    CHECK(has(bench_error(one_case(R"("op": "bwd", "batch": 1, "dim": 1, "seqlen": 8, "small_call": true)")),
              "cases[0].small_call: a call takes the small-call kernel by its size"));
    CHECK(has(bench_error(one_case(R"("op": "bwd", "batch": 1, "dim": 1, "seqlen": 8, "shifted_rows": true)")),
              "cases[0].shifted_rows: a call takes the shifted-rows module by its rows"));
    CHECK(has(bench_error(one_case(R"("op": "bwd", "layout": "channel_last", "batch": 1, "dim": 1, "seqlen": 8, "tiled": true)")),
              "cases[0].tiled: a call takes the tile kernel's module by its size and rows"));
    CHECK(has(bench_error(R"({"reps": 0, "cases": []})"), "cfg.json: reps: 0 is outside 1 to 100000"));
    CHECK(has(bench_error(R"({"graph_replay": 1, "cases": []})"),
              "cfg.json: graph_replay: expected true or false, got the number 1"));
    CHECK(has(bench_error(R"({"warmup": -1, "cases": []})"), "warmup: -1 is outside"));
    CHECK(has(bench_error(R"({"cases": []})"), "cases: expected a non-empty list"));
    CHECK(has(bench_error(R"({"warmup": 3})"), "cases: missing"));
    CHECK(has(bench_error(R"({"case": []})"), "case: unknown field"));
}

TEST_CASE("command lines: values, repeats, switches and every misuse") {
    const CommandLineSpec spec{{"target"}, {"config", "jobs"}, {"list"}};
    const auto line = CommandLine::parse({"--config", "a.json", "--target=sm_90", "--target", "gfx942", "--list"}, spec);
    CHECK(line.required("config") == "a.json");
    CHECK(line.values("target") == std::vector<std::string>{"sm_90", "gfx942"});
    CHECK(line.has("list"));
    CHECK_FALSE(line.has("jobs"));
    CHECK_FALSE(line.integer("jobs", 1, 10).has_value());
    CHECK(CommandLine::parse({"--jobs", "4"}, spec).integer("jobs", 1, 1024) == 4);

    const auto usage = [&](std::vector<std::string> arguments) -> std::string {
        try {
            const auto parsed = CommandLine::parse(arguments, spec);
            parsed.required("config");
            parsed.integer("jobs", 1, 1024);
        } catch (const UsageError& error) {
            return error.what();
        }
        return "";
    };
    CHECK(has(usage({"--config", "a", "--frobnicate"}), "unknown option --frobnicate"));
    CHECK(has(usage({"--config"}), "--config needs a value"));
    CHECK(has(usage({"--config="}), "--config needs a non-empty value"));
    CHECK(has(usage({"--config", "a", "--config", "b"}), "--config given more than once"));
    CHECK(has(usage({"--config", "a", "--list=yes"}), "--list takes no value"));
    CHECK(has(usage({"a.json"}), "unexpected argument 'a.json'"));
    CHECK(has(usage({"--list"}), "--config is required"));
    CHECK(has(usage({"--config", "a", "--jobs", "0"}), "--jobs '0': expected a whole number from 1 to 1024"));
    CHECK(has(usage({"--config", "a", "--jobs", "4x"}), "--jobs '4x'"));
}

TEST_CASE("the shipped configs load") {
    const auto configs = source_dir() / "configs";
    const auto mamba = load_precompile_config((configs / "precompile/mamba.json").string());
    CHECK(mamba.targets == std::vector<std::string>{"sm_80", "sm_90", "gfx90a", "gfx942"});
    std::set<Op> ops;
    for (const Variant& v : mamba.variants) ops.insert(v.op);
    CHECK(ops.size() == 4);
    // 72 plain fwd/bwd + 63 Mamba-2 forwards + 9 Mamba-2 backwards + 36 updates + 72 varlen,
    // each of the 36 + 63 forwards and 36 + 9 backwards also as its small-call module, 12
    // 16-bit channel-first backwards and 18 channel-first forwards as their shifted-rows
    // module, and the 18 channel-last backwards without seq_idx and the 9 Mamba-2 ones
    // (with seq_idx, no states) as their tile kernel's.
    CHECK(mamba.variants.size() == 72 + 63 + 9 + 36 + 72 + 36 + 63 + 36 + 9 + 12 + 18 + 18 + 9);
    CHECK(std::count_if(mamba.variants.begin(), mamba.variants.end(), [](const Variant& v) {
              return v.tiled && v.op == Op::bwd && v.layout == Layout::channel_last && !v.seq_idx;
          }) == 18);
    CHECK(std::count_if(mamba.variants.begin(), mamba.variants.end(), [](const Variant& v) {
              return v.tiled && v.op == Op::bwd && v.layout == Layout::channel_last && v.seq_idx;
          }) == 9);
    CHECK(std::count_if(mamba.variants.begin(), mamba.variants.end(), [](const Variant& v) { return v.shifted_rows; }) == 12 + 18);
    CHECK(std::count_if(mamba.variants.begin(), mamba.variants.end(),
                        [](const Variant& v) { return v.shifted_rows && v.op == Op::fwd; }) == 18);
    int small_forwards = 0, small_backwards = 0;
    for (const Variant& v : mamba.variants) {
        small_forwards += v.small_call && v.op == Op::fwd;
        small_backwards += v.small_call && v.op == Op::bwd;
    }
    CHECK(small_forwards == 36 + 63);
    CHECK(small_backwards == 36 + 9);

    const auto seeds = load_bench_config((configs / "bench/seeds.json").string());
    // Seed 002: 5 shapes x silu on/off x 3 dtypes x fwd/bwd; seed 001: 6 channel-last bwd x 3 dtypes.
    CHECK(seeds.cases.size() == 5 * 2 * 3 * 2 + 6 * 3);

    const auto anchors = load_bench_config((configs / "bench/anchors.json").string());
    // 8 shapes x fwd/bwd x 2 layouts x 3 dtypes x 2 activations, plus 6 feature rows for 2 shapes.
    CHECK(anchors.cases.size() == 8 * 2 * 2 * 3 * 2 + 2 * 6);
    std::set<std::string> shapes;
    for (const BenchCase& c : anchors.cases) shapes.insert(c.shape_text());
    CHECK(shapes == std::set<std::string>{"2x64x128", "4x256x512", "8x2048x1024", "4x256x4096", "4x4096x512",
                                          "4x5376x4096"});

    const auto decode = load_bench_config((configs / "bench/decode.json").string());
    int updates = 0;
    for (const BenchCase& c : decode.cases) {
        if (c.variant.op == Op::update) ++updates;
        if (c.variant.op == Op::varlen_fwd) {
            CHECK(c.seqlens.size() == 16);
            CHECK(c.total_tokens() == 32768);
            CHECK(c.dim == 5376);
        }
    }
    CHECK(updates == 6 + 2);

    const auto quick = load_bench_config((configs / "bench/quick.json").string());
    CHECK(quick.cases.size() <= 12);
}
