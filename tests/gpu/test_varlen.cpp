// Variable-length prefill on the GPU against the fp64 reference.
//
// Variants: every (layout, width) pair, with the dtype pair, activation, bias and
// conv_states rotated by a pairwise covering design. Each variant packs sequences of
// lengths {1, W-1, W, 37, 1000} (shuffled, plus a few random ones) and runs three ways
// when it has states: permuted cache_indices with pad slots and random
// has_initial_state; slot i per sequence; and no has_initial_state (nothing read).
// x is logically (D, total); the token-major layout is its transposed view.
// Out is poisoned first; conv_states must equal the reference exactly.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <numeric>

#include "reference/reference.hpp"
#include "support/case_inputs.hpp"
#include "support/covering.hpp"
#include "support/gpu_checks.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

struct VarlenVariant {
    Layout layout;
    int width;
    DTypePair dtypes;
    Activation activation;
    bool bias, states;
    std::string name() const {
        return fmt::format("{} width={} x={} w={} act={} bias={} states={}", to_string(layout), width, to_string(dtypes.x),
                           to_string(dtypes.weight), to_string(activation), bias, states);
    }
};

std::vector<VarlenVariant> varlen_variants() {
    const auto& widths = all_widths();
    const std::vector<int> crossed = {2, static_cast<int>(widths.size())}, rotated = {9, 2, 2, 2};
    auto allowed = [](const DesignRow& r) { return r[1] != 0 || r[5] == 0; };   // width 1 has no states
    std::vector<VarlenVariant> variants;
    for (const auto& r : covering_design(crossed, rotated, allowed))
        variants.push_back({r[0] ? Layout::channel_last : Layout::channel_first, widths[static_cast<std::size_t>(r[1])],
                            dtype_pairs()[static_cast<std::size_t>(r[2])], r[3] ? Activation::silu : Activation::none,
                            r[4] != 0, r[5] != 0});
    return variants;
}

enum class SlotMode { indexed_with_pads, slot_per_sequence, no_history };

struct Run {
    std::int64_t D, S;
    SlotMode mode;
    ViewOptions x_view, out_view, state_view;
    std::int32_t pad_slot_id;
    std::int64_t long_sequence = 0;   // > 0: one more sequence of this length (several tiles)
    bool many_short = false;          // 60 more sequences of 1 to 9 tokens (dozens of starts per tile)
                                      // and a run of 40 of 0 to 2 tokens (more than a tile lists)
    std::int64_t gap = 0;             // tokens before cu[0] and after cu[N], in no sequence (out 0)
    int empty_sequences = -1;         // >= 0: only that many sequences, all of 0 tokens
    std::string name() const {
        const char* modes[] = {"cache_indices with pads", "slot i", "no has_initial_state"};
        return fmt::format("D={} S={} {} x[{}] out[{}] states[{}] pad_slot_id={} gap={}", D, S,
                           modes[static_cast<int>(mode)], describe(x_view), describe(out_view), describe(state_view),
                           pad_slot_id, gap);
    }
};

std::vector<Run> runs_for(const VarlenVariant& v, std::size_t variant_index) {
    const bool cl = v.layout == Layout::channel_last;
    std::vector<Run> runs;
    const int count = v.states ? 3 : 2;
    for (int k = 0; k < count; ++k) {
        const int i = static_cast<int>(variant_index) * 3 + k;
        const std::int64_t D = std::vector<std::int64_t>{5, 67, 64}[static_cast<std::size_t>(i % 3)];
        const std::int64_t S = v.width - 1 + (k == 1 ? 2 : 0);
        runs.push_back({D, S, static_cast<SlotMode>(k), view_kind(i, cl), view_kind(i + 1, cl),
                        view_kind(i + 2, i % 4 == 3), k == 0 && i % 2 ? 123456 : -1, 0, false, i % 3 == 1 ? 5 : 0});
    }
    return runs;
}

std::vector<std::int64_t> sequence_lengths(int width, std::int64_t long_sequence, bool many_short, std::mt19937& rng) {
    std::vector<std::int64_t> lengths = {1, width - 1, width, 37, 1000};
    if (long_sequence > 0) lengths.push_back(long_sequence);
    for (int extra = 0; many_short && extra < 60; ++extra)
        lengths.push_back(std::uniform_int_distribution<std::int64_t>(1, 9)(rng));
    for (int extra = 0; extra < 3; ++extra) lengths.push_back(std::uniform_int_distribution<std::int64_t>(1, 300)(rng));
    std::shuffle(lengths.begin(), lengths.end(), rng);
    if (many_short) {
        // Together, so that one tile holds more sequence boundaries than it lists.
        std::vector<std::int64_t> run(40);
        for (auto& n : run) n = std::uniform_int_distribution<std::int64_t>(0, 2)(rng);
        const auto at = std::uniform_int_distribution<std::size_t>(0, lengths.size())(rng);
        lengths.insert(lengths.begin() + static_cast<std::ptrdiff_t>(at), run.begin(), run.end());
    }
    return lengths;
}

struct VarlenTensors {
    std::vector<std::int64_t> lengths;
    std::int64_t total = 0, slots = 0;
    TestTensor cu, x, weight, bias, out, states, cache_indices, has_initial;

    VarlenTensors(const VarlenVariant& v, const Run& r, std::mt19937& rng)
        : lengths(r.empty_sequences >= 0 ? std::vector<std::int64_t>(static_cast<std::size_t>(r.empty_sequences), 0)
                                         : sequence_lengths(v.width, r.long_sequence, r.many_short, rng)),
          total(std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0}) + 2 * r.gap),
          slots(static_cast<std::int64_t>(lengths.size()) + 2),
          cu(DType::int32, {static_cast<std::int64_t>(lengths.size()) + 1}),
          x(v.dtypes.x, {r.D, total}, r.x_view),
          weight(v.dtypes.weight, {r.D, v.width}),
          bias(v.dtypes.weight, {r.D}),
          out(v.dtypes.x, {r.D, total}, r.out_view),
          states(v.dtypes.x, {slots, r.D, std::max<std::int64_t>(r.S, 1)}, r.state_view),
          cache_indices(DType::int32, {static_cast<std::int64_t>(lengths.size())}),
          has_initial(DType::int32, {static_cast<std::int64_t>(lengths.size())}) {
        std::vector<std::int32_t> offsets = {static_cast<std::int32_t>(r.gap)};
        for (auto n : lengths) offsets.push_back(offsets.back() + static_cast<std::int32_t>(n));
        cu.fill_int(offsets);
        for (TestTensor* t : {&x, &weight, &bias, &states}) t->fill_random(rng);
        auto order = permutation(rng, static_cast<std::int32_t>(slots));
        order.resize(lengths.size());
        for (std::size_t i = 0; i < order.size(); ++i)
            if (i % 4 == 2) order[i] = r.pad_slot_id;   // a few sequences without a slot
        cache_indices.fill_int(order);
        std::vector<std::int32_t> has(lengths.size());
        for (auto& h : has) h = std::uniform_int_distribution<int>(0, 2)(rng) != 0;
        has_initial.fill_int(has);
    }

    VarlenForwardArgs args(const VarlenVariant& v, const Run& r, bool on_device) const {
        auto view = [on_device](const TestTensor& t) { return on_device ? t.device_view() : t.host_view(); };
        VarlenForwardArgs a;
        a.x = view(x), a.weight = view(weight), a.out = view(out), a.cu_seqlens = view(cu), a.activation = v.activation;
        a.pad_slot_id = r.pad_slot_id;
        if (v.bias) a.bias = view(bias);
        if (!v.states) return a;
        a.conv_states = view(states);
        if (r.mode == SlotMode::indexed_with_pads) a.cache_indices = view(cache_indices);
        if (r.mode != SlotMode::no_history) a.has_initial_state = view(has_initial);
        return a;
    }
};

// null_empty: every empty tensor comes with null data, as frameworks may pass them.
void run_varlen_case(const VarlenVariant& v, const Run& r, std::uint32_t seed, bool null_empty = false) {
    std::mt19937 rng(seed);
    VarlenTensors t(v, r, rng);
    INFO("sequence lengths ", fmt::format("{}", fmt::join(t.lengths, ",")));
    const auto want = reference::varlen_forward(t.args(v, r, false));
    VarlenForwardArgs args = t.args(v, r, true);
    if (null_empty)
        for (Tensor* tensor : {&args.x, &args.out, &args.cache_indices, &args.has_initial_state})
            if (tensor->numel() == 0) tensor->data = nullptr;
    if (!call_ok([&] { runtime().varlen_forward(args); })) return;
    check_tensor("out", t.out, want.out, reference::tolerance_for(v.dtypes.x));
    if (v.states) check_tensor("conv_states", t.states, want.conv_states, reference::exact());
}

}  // namespace

TEST_CASE("varlen: every layout x width, dtypes and features rotated") {
    const auto variants = varlen_variants();
    std::uint64_t index = 0;
    for (std::size_t i = 0; i < variants.size(); ++i)
        for (const auto& r : runs_for(variants[i], i)) {
            const std::uint32_t seed = case_seed(41, index++);
            INFO(variants[i].name(), " | ", r.name(), " | seed ", seed);
            run_varlen_case(variants[i], r, seed);
        }
}

TEST_CASE("varlen: states in every slot mode, both layouts, crossed") {
    std::uint64_t index = 0;
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (int mode = 0; mode < 3; ++mode)
            for (DType x : {DType::fp32, DType::bf16}) {
                const bool cl = layout == Layout::channel_last;
                VarlenVariant v{layout, 4, {x, x}, Activation::silu, true, true};
                const Run r{67, mode == 1 ? 8 : 3, static_cast<SlotMode>(mode), view_kind(mode, cl), view_kind(mode + 1, cl),
                            view_kind(mode + 2, false), mode == 0 ? 99 : -1};
                const std::uint32_t seed = case_seed(42, index++);
                INFO(v.name(), " | ", r.name(), " | seed ", seed);
                run_varlen_case(v, r, seed);
            }
}

TEST_CASE("varlen: long packed rows of odd length, split at each row's own 16-byte boundaries") {
    // An odd total leaves the channel-first rows of (D, total) at every offset within a
    // 16-byte vector; each row's tiles follow its own boundaries, over several tiles, with
    // out at the same offset as x or at another one (stored element-wise then); one run
    // packs dozens of short sequences, more starts per tile than a tile lists.
    std::uint64_t index = 0;
    for (DType x : {DType::fp32, DType::fp16, DType::bf16})
        for (int views = 0; views < 3; ++views) {
            VarlenVariant v{Layout::channel_first, 4, {x, x}, Activation::silu, true, true};
            const ViewOptions x_view = views == 2 ? view_kind(2, false) : ViewOptions{};
            const ViewOptions out_view = views == 1 ? view_kind(3, false) : ViewOptions{};
            const Run r{37, 3, SlotMode::indexed_with_pads, x_view, out_view, ViewOptions{}, -1, 9001, views == 1,
                        views == 2 ? 70 : 0};
            const std::uint32_t seed = case_seed(43, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_varlen_case(v, r, seed);
        }
}

TEST_CASE("varlen: channel-last tiles crossing dozens of sequences, tokens outside every sequence") {
    // A run of 40 sequences of 0 to 2 tokens puts more boundaries in one tile than a tile
    // lists (those tokens look their sequence up one by one); gap tokens before cu[0] and
    // after cu[N] belong to no sequence and must come out 0.
    std::uint64_t index = 0;
    for (DType x : {DType::fp32, DType::bf16})
        for (int mode = 0; mode < 3; ++mode) {
            VarlenVariant v{Layout::channel_last, mode == 2 ? 2 : 4, {x, x}, Activation::silu, true, true};
            const Run r{72, 3, static_cast<SlotMode>(mode), view_kind(mode, true), view_kind(mode + 1, true),
                        ViewOptions{}, -1, mode == 1 ? 700 : 0, true, mode == 0 ? 0 : 9};
            const std::uint32_t seed = case_seed(44, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_varlen_case(v, r, seed);
        }
}

TEST_CASE("varlen: no tokens (no sequences, or only empty ones), empty tensors with null data") {
    // Nothing may read or write x or out; with states, every slot ends as the reference
    // says (an empty sequence keeps its history, or gets zeros without one).
    std::uint64_t index = 0;
    for (int sequences : {0, 3})
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (int width : {2, 4})
                for (bool states : {false, true}) {
                    const bool cl = layout == Layout::channel_last;
                    const VarlenVariant v{layout, width, {DType::bf16, DType::bf16}, Activation::silu, true, states};
                    const int i = static_cast<int>(index);
                    Run r{67, width - 1, static_cast<SlotMode>(i % 3), view_kind(i, cl), view_kind(i + 1, cl),
                          view_kind(i + 2, false), -1};
                    r.empty_sequences = sequences;
                    const std::uint32_t seed = case_seed(25, index++);
                    INFO(v.name(), " | ", r.name(), " | ", sequences, " sequences | seed ", seed);
                    run_varlen_case(v, r, seed, true);
                }
}
