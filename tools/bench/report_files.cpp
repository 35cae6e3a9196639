#include <fmt/format.h>

#include "report.hpp"

namespace cc1d::bench {
namespace {

nlohmann::ordered_json optional_number(const std::optional<double>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json case_json(const CaseResult& r, double copy_gb_per_s) {
    const config::BenchCase& c = r.bench_case;
    const Variant v = c.variant.normalized();
    nlohmann::ordered_json j;
    j["name"] = c.name;
    j["label"] = c.label();
    j["variant"] = v.canonical();
    j["op"] = to_string(v.op);
    j["layout"] = to_string(v.layout);
    j["width"] = v.width;
    j["x_dtype"] = to_string(v.x_dtype);
    j["weight_dtype"] = to_string(v.weight_dtype);
    j["activation"] = to_string(v.activation);
    j["bias"] = v.bias;
    j["seq_idx"] = v.seq_idx;
    j["initial_states"] = v.initial_states;
    j["final_states"] = v.final_states;
    j["deterministic"] = v.deterministic;
    j["cache_seqlens"] = v.cache_seqlens;
    j["state_indices"] = v.state_indices;
    nlohmann::ordered_json shape;
    if (v.op == Op::varlen_fwd) {
        shape = {{"dim", c.dim}, {"seqlens", c.seqlens}, {"total_tokens", c.total_tokens()}};
    } else if (v.op == Op::update) {
        shape = {{"batch", c.batch}, {"dim", c.dim}, {"tokens", c.tokens}, {"state_len", c.state_len},
                 {"cache_batch", c.cache_batch}};
    } else {
        shape = {{"batch", c.batch}, {"dim", c.dim}, {"seqlen", c.seqlen}};
    }
    j["shape"] = shape;
    j["shape_text"] = c.shape_text();
    j["bytes"] = r.bytes;
    j["median_us"] = optional_number(timing_field(r.timing, &TimingStats::median_us));
    j["min_us"] = optional_number(timing_field(r.timing, &TimingStats::min_us));
    j["max_us"] = optional_number(timing_field(r.timing, &TimingStats::max_us));
    j["reps"] = r.timing ? r.timing->reps : 0;
    j["gb_per_s"] = optional_number(r.gb_per_s());
    j["percent_of_copy"] = optional_number(r.percent_of_copy(copy_gb_per_s));
    j["same_size_copy_us"] = optional_number(timing_field(r.same_size_copy, &TimingStats::median_us));
    j["percent_of_same_size_copy"] = optional_number(r.percent_of_same_size_copy());
    if (r.replay || !r.replay_note.empty()) {
        j["graph_replay"] = {
            {"median_us", optional_number(timing_field(r.replay, &TimingStats::median_us))},
            {"min_us", optional_number(timing_field(r.replay, &TimingStats::min_us))},
            {"max_us", optional_number(timing_field(r.replay, &TimingStats::max_us))},
            {"replays", r.replay ? r.replay->reps : 0},
            {"input_sets", r.replay_sets},
            {"gb_per_s", optional_number(r.gb_per_s(true))},
            {"percent_of_copy", optional_number(r.percent_of_copy(copy_gb_per_s, true))},
            {"same_size_copy_us", optional_number(timing_field(r.same_size_copy_replay, &TimingStats::median_us))},
            {"percent_of_same_size_copy", optional_number(r.percent_of_same_size_copy(true))},
            {"note", r.replay_note.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.replay_note)}};
    }
    j["compile_s"] = optional_number(r.compile_s);
    j["first_call_ms"] = optional_number(r.first_call_ms);
    j["disk_load_ms"] = optional_number(r.disk_load_ms);
    j["host_us_per_call"] = optional_number(r.host_us_per_call);
    j["launches"] = r.launches ? nlohmann::ordered_json(*r.launches) : nlohmann::ordered_json(nullptr);
    if (r.check) {
        j["check"] = {{"ok", r.check->ok},
                      {"detail", r.check->detail},
                      {"channels_checked", r.check->channels_checked},
                      {"channels_total", r.check->channels_total},
                      {"max_abs_error", r.check->max_abs_error}};
    } else {
        j["check"] = nullptr;
    }
    j["error"] = r.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error);
    return j;
}

}  // namespace

nlohmann::ordered_json to_json(const RunResult& run) {
    nlohmann::ordered_json j;
    j["tool"] = "cc1d-bench";
    j["cc1d_version"] = run.version;
    j["config"] = run.config_file;
    j["date"] = run.date;
    j["device"] = run.device_name;
    j["backend"] = run.backend;
    j["target"] = run.target;
    j["copy_gb_per_s"] = run.copy_gb_per_s;
    j["copy_buffer_bytes"] = run.copy_buffer_bytes;
    j["empty_kernel_us"] = optional_number(timing_field(run.empty_kernel, &TimingStats::median_us));
    if (run.graph_replay)
        j["empty_kernel_replay_us"] = optional_number(timing_field(run.empty_kernel_replay, &TimingStats::median_us));
    if (!run.empty_kernel_note.empty()) j["empty_kernel_note"] = run.empty_kernel_note;
    j["bare_launch_host_us"] = optional_number(run.bare_launch_host_us);
    j["warmup"] = run.warmup;
    j["reps"] = run.reps;
    j["host_calls"] = run.host_calls;
    j["graph_replay"] = run.graph_replay;
    j["bytes_counted"] =
        "fwd 2*B*D*L*sizeof(x); bwd 3*B*D*L*sizeof(x); update B*D*(T + 2*(W-1) + T)*sizeof(x); "
        "varlen_fwd 2*D*total*sizeof(x)";
    j["cases"] = nlohmann::ordered_json::array();
    for (const CaseResult& r : run.cases) j["cases"].push_back(case_json(r, run.copy_gb_per_s));
    return j;
}

std::string to_markdown(const RunResult& run) {
    std::string md = fmt::format("# cc1d bench: {}\n\n", run.config_file);
    md += fmt::format("Device: {} ({} {}) · cc1d {} · {} · measured copy bandwidth (read+write, {:.0f} MiB "
                      "device-to-device): **{:.0f} GB/s**",
                      run.device_name, run.backend, run.target, run.version, run.date,
                      static_cast<double>(run.copy_buffer_bytes) / (1 << 20), run.copy_gb_per_s);
    if (run.empty_kernel) md += fmt::format(" · empty kernel: {:.1f} µs", run.empty_kernel->median_us);
    if (run.empty_kernel_replay)
        md += fmt::format(" · empty kernel in a graph replay: {:.1f} µs", run.empty_kernel_replay->median_us);
    if (run.bare_launch_host_us)
        md += fmt::format(" · host time of a bare driver launch: {:.2f} µs", *run.bare_launch_host_us);
    md += fmt::format("\n\nMedian of {} runs after {} warm-up calls, caches flushed before every timed run. Bytes "
                      "counted as ANCHORS.md: fwd 2·B·D·L·sizeof(x), bwd 3·B·D·L·sizeof(x), update x + state read + "
                      "state write + out, varlen 2·D·total·sizeof(x). Compile: first call with an empty cache; "
                      "disk hit: a second runtime on that cache. "
                      "% of same-size copy: the median time of a device-to-device copy moving the case's bytes, timed "
                      "the same way, over the case's median time.",
                      run.reps, run.warmup);
    if (run.graph_replay)
        md += " Replay: the time per call of a graph of 64 or more back-to-back calls over input sets spanning "
              "256 MiB (at most 4096 sets), no flush, median of the replays; its same-size copy is replayed the same way.";
    std::vector<std::string> header{"case", "shape", "µs (median)", "min", "max", "GB/s", "% of copy",
                                    "% of same-size copy"};
    if (run.graph_replay) header.insert(header.end(), {"replay µs", "replay % of copy", "replay % of same-size copy"});
    header.insert(header.end(), {"compile s", "disk hit ms", "host µs/call", "check"});
    const auto line = [](const std::vector<std::string>& cells) {
        std::string text = "|";
        for (const std::string& cell : cells) text += " " + cell + " |";
        return text + "\n";
    };
    md += "\n\n" + line(header) + line(std::vector<std::string>(header.size(), "---"));
    for (const CaseResult& r : run.cases) {
        std::vector<std::string> cells = case_cells(r, run);
        for (char& ch : cells.back())   // the check's text may hold a '|'
            if (ch == '|') ch = '/';
        md += line(cells);
    }
    return md;
}

}  // namespace cc1d::bench
