// The precompile tool's work list: every (variant, target) pair, compiled on a pool of
// threads, with one progress line per pair as it finishes and a tally at the end.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace cc1d::precompile {

struct CompileJob {
    std::string variant;   // canonical text
    std::string target;
};

struct Tally {
    std::size_t compiled = 0, cached = 0, failed = 0;
};

// `compile(job)` returns true when it compiled now, false when the cache already held the
// code object, and throws on failure (the first line of the message is shown).
// Lines look like "[3/12] op=fwd,... sm_90: compiled 0.31 s | cached | FAILED: ...".
Tally run_compile_jobs(const std::vector<CompileJob>& jobs, unsigned threads,
                       const std::function<bool(const CompileJob&)>& compile, std::ostream& progress);

}  // namespace cc1d::precompile
