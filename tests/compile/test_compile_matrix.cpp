// The compile matrix: kernel variants compiled with the real runtime compilers, no GPU
// needed; each code object must hold the kernels the runtime will look up by name. NVRTC for sm_90 and sm_80, HIPRTC for gfx90a. The matrix covers every width
// and dtype pair of every kernel family, with activation, bias and the feature flags
// rotated through those rows so each value of each field is compiled somewhere.
// CC1D_COMPILE_MATRIX=full compiles the whole cross product of widths and dtype pairs
// for every target (slow; for kernel work).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "codegen/render.hpp"
#include "common/env.hpp"
#include "rtc/compiler.hpp"
#include "variant/variant.hpp"

using namespace cc1d;

namespace {

const DType kDtypes[] = {DType::fp32, DType::fp16, DType::bf16};

Variant family_variant(Op op, Layout layout, int width, DType x, DType w, int rotation) {
    Variant v;
    v.op = op;
    v.layout = layout;
    v.width = width;
    v.x_dtype = x;
    v.weight_dtype = w;
    v.activation = (rotation & 1) ? Activation::silu : Activation::none;
    v.bias = (rotation >> 1) & 1;
    const bool has_states = width > 1;
    switch (op) {
        case Op::fwd:
        case Op::bwd:
            v.seq_idx = (rotation >> 2) & 1;
            v.initial_states = has_states && ((rotation >> 3) & 1);
            v.final_states = has_states && ((rotation * 7 >> 2) & 1);
            v.deterministic = ((rotation >> 4) & 1) == 0;
            break;
        case Op::update:
            v.cache_seqlens = (rotation >> 2) & 1;
            v.state_indices = (rotation >> 3) & 1;
            break;
        case Op::varlen_fwd:
            v.initial_states = has_states && ((rotation >> 2) & 1);
            break;
    }
    return v.normalized();
}

struct Family {
    Op op;
    Layout layout;
    bool small_call = false;   // the small-call module (fwd_small.cu, bwd_small.cu)
    bool shifted_rows = false;   // the module of rows off 16-byte boundaries (channel-first bwd 16-bit and fwd;
                                 // channel-last fwd and the tile kernel's in 16-bit)
    bool tiled = false;          // the channel-last backward's tile kernel module (up to width 4)
};
const Family kFamilies[] = {{Op::fwd, Layout::channel_first},      {Op::fwd, Layout::channel_last},
                            {Op::fwd, Layout::channel_first, true}, {Op::fwd, Layout::channel_last, true},
                            {Op::bwd, Layout::channel_first},      {Op::bwd, Layout::channel_last},
                            {Op::bwd, Layout::channel_first, true}, {Op::bwd, Layout::channel_last, true},
                            {Op::bwd, Layout::channel_first, false, true}, {Op::fwd, Layout::channel_first, false, true},
                            {Op::bwd, Layout::channel_last, false, false, true},
                            {Op::fwd, Layout::channel_last, false, true}, {Op::bwd, Layout::channel_last, false, true, true},
                            {Op::update, Layout::channel_first},   {Op::varlen_fwd, Layout::channel_first},
                            {Op::varlen_fwd, Layout::channel_last}};

// `stride` thins the widths for slower compilers: every `stride`-th width of 1..16,
// always including 1, 4 and 16.
std::vector<Variant> matrix(int width_stride, bool all_pairs) {
    const bool full = env::get("CC1D_COMPILE_MATRIX").value_or("") == "full";
    std::vector<Variant> out;
    int rotation = 0;
    for (const auto& f : kFamilies) {
        for (int width = 1; width <= Variant::max_width; ++width) {
            const bool listed = full || width == 1 || width == 4 || width == 16 || (width - 1) % width_stride == 0;
            if (!listed) continue;
            for (DType x : kDtypes)
                for (DType w : kDtypes) {
                    // Every dtype pair at width 4 (and everywhere in full mode); elsewhere x's own dtype.
                    if (!(full || all_pairs || width == 4 || w == x)) continue;
                    Variant v = family_variant(f.op, f.layout, width, x, w, rotation++);
                    v.small_call = f.small_call;
                    v.tiled = f.tiled;
                    if (f.tiled) v.initial_states = v.final_states = false;   // (the module has no states)
                    if (f.tiled && !v.normalized().tiled) continue;   // (no such module past width 4)
                    v.shifted_rows = f.shifted_rows;
                    // (The channel-first forward's module has no seq_idx.)
                    if (f.shifted_rows && f.op == Op::fwd && f.layout == Layout::channel_first) v.seq_idx = false;
                    if (f.shifted_rows && !v.normalized().shifted_rows) continue;   // (no such module: fp32 backward)
                    out.push_back(v.normalized());
                }
        }
    }
    return out;
}

// Code paths only one combination of fields takes, which the rotation above may miss
// for a thinned width list: compiled for every target besides the matrix.
std::vector<Variant> combination_paths() {
    std::vector<Variant> out;
    for (DType x : {DType::fp16, DType::bf16}) {
        // Channel-last forward with seq_idx: at widths 5-8 a batch's ids by lane shuffles,
        // at widths 1-4 the short-chunk kernel (ballots of the steps to recompute).
        for (int width : {3, 6}) {
            Variant forward = family_variant(Op::fwd, Layout::channel_last, width, x, x, 1);
            forward.seq_idx = true;
            out.push_back(forward.normalized());
        }
        // Channel-last backward at widths 3-4 with seq_idx: 4 channels a thread.
        Variant backward = family_variant(Op::bwd, Layout::channel_last, 3, x, x, 1);
        backward.seq_idx = true;
        out.push_back(backward.normalized());
    }
    // The channel-last backward's tile kernel with seq_idx (its id staging and the ballots
    // of a segment's id masks), in every dtype, with SiLU (a wider span of ids) and without.
    for (DType x : kDtypes)
        for (Activation act : {Activation::silu, Activation::none}) {
            Variant tile = family_variant(Op::bwd, Layout::channel_last, 4, x, x, 1);
            tile.activation = act;
            tile.seq_idx = true;
            tile.initial_states = tile.final_states = false;
            tile.tiled = true;
            out.push_back(tile.normalized());
        }
    // The channel-first small-call backward's vector kernel (widths up to 4 without seq_idx
    // or states), with and without SiLU, in every dtype.
    for (DType x : kDtypes)
        for (int rotation : {2, 3}) {
            Variant small = family_variant(Op::bwd, Layout::channel_first, 3, x, x, rotation);
            small.seq_idx = small.initial_states = small.final_states = false;
            small.small_call = true;
            out.push_back(small.normalized());
        }
    return out;
}

struct Outcome {
    int compiled = 0;
    std::vector<std::string> failures;
};

Outcome compile_all(rtc::Compiler& compiler, const std::vector<Variant>& variants, const std::string& target) {
    Outcome outcome;
    std::mutex mutex;
    std::atomic<std::size_t> next{0};
    const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < workers; ++t)
        pool.emplace_back([&] {
            for (std::size_t i; (i = next++) < variants.size();) {
                const auto source = codegen::render_source(variants[i], compiler.backend());
                const auto result = compiler.compile({source.text, source.name, target});
                std::lock_guard<std::mutex> lock(mutex);
                // The runtime looks the kernels up by name: each must be in the code object.
                auto has = [&result](const std::string& entry) {
                    return entry.empty() || result.code_object.find(entry) != std::string::npos;
                };
                const bool named = has(source.entry) && has(source.second_entry) && has(source.third_entry);
                if (result.ok && named) {
                    ++outcome.compiled;
                } else if (result.ok) {
                    outcome.failures.push_back(fmt::format("{} for {}: the code object lacks kernel {}, {} or {}",
                                                           variants[i].canonical(), target, source.entry,
                                                           source.second_entry, source.third_entry));
                } else {
                    outcome.failures.push_back(fmt::format("{} for {}:\n{}", variants[i].canonical(), target,
                                                           result.log.substr(0, 2000)));
                }
            }
        });
    for (auto& t : pool) t.join();
    return outcome;
}

// Opens a compiler or reports why the matrix for it cannot run (a visible skip).
std::unique_ptr<rtc::Compiler> open_or_skip(std::unique_ptr<rtc::Compiler> (*open)(), const char* name) {
    try {
        return open();
    } catch (const std::exception& e) {
        std::cout << "SKIPPED: " << name << " compile matrix: " << e.what() << "\n";
        return nullptr;
    }
}

void run_matrix(std::unique_ptr<rtc::Compiler> (*open)(), const char* name, const std::string& target, int width_stride,
                bool all_pairs) {
    auto compiler = open_or_skip(open, name);
    if (!compiler) {
        // The test must not count as passed: CI installs both compilers, so a missing one
        // is a failure there, and a skip elsewhere.
        if (env::flag("CI")) FAIL(std::string(name) << " is required in CI");
        return;
    }
    auto variants = matrix(width_stride, all_pairs);
    for (const Variant& v : combination_paths()) variants.push_back(v);
    // Every module kind is in the list (a family that normalizes away would compile nothing).
    CHECK(std::count_if(variants.begin(), variants.end(), [](const Variant& v) { return v.tiled; }) >= 3);
    CHECK(std::count_if(variants.begin(), variants.end(), [](const Variant& v) { return v.tiled && v.seq_idx; }) >= 6);
    CHECK(std::count_if(variants.begin(), variants.end(), [](const Variant& v) { return v.shifted_rows; }) >= 3);
    for (Op op : {Op::fwd, Op::bwd})
        CHECK(std::count_if(variants.begin(), variants.end(), [op](const Variant& v) {
                  return v.op == op && v.layout == Layout::channel_last && v.shifted_rows;
              }) >= 3);
    const auto outcome = compile_all(*compiler, variants, target);
    MESSAGE(std::string(name) << " " << target << ": " << outcome.compiled << " of " << variants.size() << " variants compiled");
    for (const auto& f : outcome.failures) FAIL_CHECK(f);
    CHECK(outcome.compiled == static_cast<int>(variants.size()));
}

}  // namespace

TEST_CASE("NVRTC compiles every kernel family for sm_90") {
    run_matrix(rtc::open_nvrtc, "NVRTC", "sm_90", 1, false);
}

TEST_CASE("NVRTC compiles every kernel family for sm_80") {
    run_matrix(rtc::open_nvrtc, "NVRTC", "sm_80", 3, false);
}

TEST_CASE("HIPRTC compiles every kernel family for gfx90a") {
    run_matrix(rtc::open_hiprtc, "HIPRTC", "gfx90a", 5, false);
}
