// configs/bench/*.json: the cases a benchmark run measures.
//   { "warmup": 25, "reps": 200,
//     "cases": [ { "name": "large-mamba", "op": ["fwd", "bwd"], "batch": 8, "dim": 2048,
//                  "seqlen": 1024, "width": 4, "x_dtype": ["fp32", "bf16"], ... } ] }
// A case holds the variant fields (variant_choices.hpp) and its shape: batch, dim,
// seqlen (fwd, bwd); batch, dim, tokens, state_len, cache_batch (update); dim, seqlens
// (varlen_fwd: the packed sequence lengths). Every field but name and seqlens may be a
// list; lists expand to every combination. Top level: warmup, reps, host_calls (update
// calls timed back to back for host overhead), graph_replay (also time every case as a
// stream of calls replayed from a graph, as serving engines issue them), description.
#pragma once

#include <string>
#include <vector>

#include "config/bench_case.hpp"
#include "config/field_reader.hpp"

namespace cc1d::config {

struct BenchConfig {
    std::string file;
    int warmup = 25;
    int reps = 200;
    int host_calls = 1000;
    bool graph_replay = false;
    std::vector<BenchCase> cases;   // expanded, duplicates (same label and shape) removed
};

BenchConfig parse_bench_config(const Json& root, const std::string& file);
BenchConfig load_bench_config(const std::string& file);

}  // namespace cc1d::config
