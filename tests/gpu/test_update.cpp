// Update (decoding) on the GPU against the fp64 reference.
//
// Variants: every (dtype pair, width in {1,2,3,4,8,16}) pair, with activation, bias,
// circular buffer (cache_seqlens) and conv_state_indices rotated by a pairwise covering
// design. Each variant runs T in {1, 2, 5} new tokens against state lengths
// S in {W-1, W+3, 17}, batches up to 257, circular positions that wrap, permuted slots
// with pad rows (pad_slot_id -1 or a large positive id). Out is poisoned first; the
// whole conv_state must equal the reference exactly afterwards (pad slots untouched).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>

#include "reference/reference.hpp"
#include "support/case_inputs.hpp"
#include "support/covering.hpp"
#include "support/gpu_checks.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

const std::vector<int> update_widths = {1, 2, 3, 4, 8, 16};

struct UpdateVariant {
    DTypePair dtypes;
    int width;
    Activation activation;
    bool bias, circular, indexed;
    std::string name() const {
        return fmt::format("x={} w={} width={} act={} bias={} circular={} indexed={}", to_string(dtypes.x),
                           to_string(dtypes.weight), width, to_string(activation), bias, circular, indexed);
    }
};

std::vector<UpdateVariant> update_variants() {
    const std::vector<int> crossed = {9, static_cast<int>(update_widths.size())}, rotated = {2, 2, 2, 2};
    std::vector<UpdateVariant> variants;
    for (const auto& r : covering_design(crossed, rotated))
        variants.push_back({dtype_pairs()[static_cast<std::size_t>(r[0])], update_widths[static_cast<std::size_t>(r[1])],
                            r[2] ? Activation::silu : Activation::none, r[3] != 0, r[4] != 0, r[5] != 0});
    return variants;
}

struct Run {
    std::int64_t B, D, T, S, slots;
    ViewOptions x_view, out_view, state_view;
    std::int32_t pad_slot_id;
    std::string name() const {
        return fmt::format("B={} D={} T={} S={} slots={} x[{}] out[{}] state[{}] pad_slot_id={}", B, D, T, S, slots,
                           describe(x_view), describe(out_view), describe(state_view), pad_slot_id);
    }
};

std::vector<Run> runs_for(const UpdateVariant& v, std::size_t variant_index) {
    std::vector<Run> runs;
    int i = static_cast<int>(variant_index);
    std::vector<std::int64_t> state_lengths;
    for (std::int64_t S : {std::int64_t{v.width} - 1, std::int64_t{v.width} + 3, std::int64_t{17}})
        if (S > 0 && std::find(state_lengths.begin(), state_lengths.end(), S) == state_lengths.end()) state_lengths.push_back(S);
    for (std::int64_t T : {1, 2, 5})
        for (std::int64_t S : state_lengths) {
            const std::int64_t B = std::vector<std::int64_t>{1, 3, 257}[static_cast<std::size_t>(i % 3)];
            const std::int64_t D = std::vector<std::int64_t>{5, 67, 64, 67}[static_cast<std::size_t>(i % 4)];
            const std::int64_t slots = v.indexed ? B + 3 : B + (i % 2) * 2;
            // State views: contiguous, padded, misaligned, or stored (slots, S, D).
            ViewOptions state_view = view_kind(i + 1, false);
            if (i % 4 == 3) state_view = view_kind(0, true);
            runs.push_back({B, D, T, S, slots, view_kind(i, i % 2 == 1), view_kind(i + 2, i % 3 == 1), state_view,
                            i % 3 == 2 ? 1000000 : -1});
            ++i;
        }
    return runs;
}

struct UpdateTensors {
    TestTensor x, weight, bias, state, out, seqlens, indices;

    UpdateTensors(const UpdateVariant& v, const Run& r, std::mt19937& rng)
        : x(v.dtypes.x, {r.B, r.D, r.T}, r.x_view),
          weight(v.dtypes.weight, {r.D, v.width}),
          bias(v.dtypes.weight, {r.D}),
          state(v.dtypes.x, {r.slots, r.D, r.S}, r.state_view),
          out(v.dtypes.x, {r.B, r.D, r.T}, r.out_view),
          seqlens(DType::int32, {r.B}),
          indices(DType::int32, {r.B}) {
        for (TestTensor* t : {&x, &weight, &bias, &state}) t->fill_random(rng);
        // Positions anywhere in [0, 3S): reads before 0 and writes past S wrap around.
        std::vector<std::int32_t> positions(static_cast<std::size_t>(r.B));
        for (auto& p : positions) p = std::uniform_int_distribution<std::int32_t>(0, static_cast<std::int32_t>(3 * r.S - 1))(rng);
        seqlens.fill_int(positions);
        // Distinct slots in random order; about one row in five is a pad row.
        auto slots = permutation(rng, static_cast<std::int32_t>(r.slots));
        slots.resize(static_cast<std::size_t>(r.B));
        for (std::size_t b = 0; b < slots.size(); ++b)
            if (std::uniform_int_distribution<int>(0, 4)(rng) == 0 || (r.B > 1 && b == 1)) slots[b] = r.pad_slot_id;
        indices.fill_int(slots);
    }

    UpdateArgs args(const UpdateVariant& v, const Run& r, bool on_device) const {
        auto view = [on_device](const TestTensor& t) { return on_device ? t.device_view() : t.host_view(); };
        UpdateArgs a;
        a.x = view(x), a.weight = view(weight), a.conv_state = view(state), a.out = view(out);
        a.activation = v.activation, a.pad_slot_id = r.pad_slot_id;
        if (v.bias) a.bias = view(bias);
        if (v.circular) a.cache_seqlens = view(seqlens);
        if (v.indexed) a.conv_state_indices = view(indices);
        return a;
    }
};

// null_empty: every empty tensor comes with null data, as frameworks may pass them.
void run_update_case(const UpdateVariant& v, const Run& r, std::uint32_t seed, bool null_empty = false) {
    std::mt19937 rng(seed);
    UpdateTensors t(v, r, rng);
    // The reference reads the state before the device call changes it.
    const auto want = reference::update(t.args(v, r, false));
    UpdateArgs args = t.args(v, r, true);
    if (null_empty)
        for (Tensor* tensor : {&args.x, &args.weight, &args.bias, &args.conv_state, &args.out, &args.cache_seqlens,
                               &args.conv_state_indices})
            if (tensor->numel() == 0) tensor->data = nullptr;
    if (!call_ok([&] { runtime().update(args); })) return;
    check_tensor("out", t.out, want.out, reference::tolerance_for(v.dtypes.x));
    check_tensor("conv_state", t.state, want.conv_state, reference::exact());
}

}  // namespace

TEST_CASE("update: every dtype pair x width, features rotated") {
    const auto variants = update_variants();
    CHECK(variants.size() == 9 * update_widths.size());
    std::uint64_t index = 0;
    for (std::size_t i = 0; i < variants.size(); ++i)
        for (const auto& r : runs_for(variants[i], i)) {
            const std::uint32_t seed = case_seed(31, index++);
            INFO(variants[i].name(), " | ", r.name(), " | seed ", seed);
            run_update_case(variants[i], r, seed);
        }
}

TEST_CASE("update: circular buffer with indices, crossed over widths and token counts") {
    std::uint64_t index = 0;
    for (int width : {2, 4, 16})
        for (std::int64_t T : {1, 3, 20}) {   // T = 20 > S: the buffer wraps within one call
            UpdateVariant v{{DType::bf16, DType::fp32}, width, Activation::silu, true, true, true};
            const Run r{33, 67, T, width + 1, 40, view_kind(index, false), view_kind(index + 1, true), view_kind(index + 2, false), -1};
            const std::uint32_t seed = case_seed(32, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_update_case(v, r, seed);
        }
}

TEST_CASE("update: x and out as (B, D) for one token") {
    std::uint64_t index = 0;
    for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
        const std::uint32_t seed = case_seed(33, index++);
        INFO("x=out=(B, D) ", std::string(to_string(dtype)), " | seed ", seed);
        std::mt19937 rng(seed);
        const std::int64_t B = 7, D = 67, W = 4, S = 3;
        TestTensor x(dtype, {B, D}), weight(dtype, {D, W}), state(dtype, {B, D, S}), out(dtype, {B, D});
        for (TestTensor* t : {&x, &weight, &state}) t->fill_random(rng);
        UpdateArgs host;
        host.x = Tensor(x.host_view().data, dtype, {B, D, 1}, {D, 1, 1});
        host.weight = weight.host_view(), host.conv_state = state.host_view();
        host.out = Tensor(out.host_view().data, dtype, {B, D, 1}, {D, 1, 1});
        const auto want = reference::update(host);
        UpdateArgs device;
        device.x = x.device_view(), device.weight = weight.device_view(), device.conv_state = state.device_view();
        device.out = out.device_view();
        if (!call_ok([&] { runtime().update(device); })) continue;
        check_tensor("out", out, want.out, reference::tolerance_for(dtype));
        check_tensor("conv_state", state, want.conv_state, reference::exact());
    }
}

TEST_CASE("update: the one-token path (state_len = width - 1, contiguous rows) with every dtype pair") {
    // update.cpp sends these calls to the registers kernel: a thread per 16-byte vector of
    // channels. D is a multiple of 8 here, slots are permuted with pad rows, and the
    // weight and the bias are either contiguous (16-byte tap loads) or a strided or
    // misaligned view (element loads).
    std::uint64_t index = 0;
    for (const DTypePair& dtypes : dtype_pairs())
        for (int width : {2, 3, 4, 5, 8})
            for (int shape = 0; shape < 3; ++shape) {
                const std::int64_t B = std::vector<std::int64_t>{1, 5, 257}[static_cast<std::size_t>(shape)];
                const std::int64_t D = std::vector<std::int64_t>{4104, 64, 136}[static_cast<std::size_t>(shape)];
                const bool indexed = (index % 2) == 1, strided_weight = (index % 3) == 2, strided_bias = (index % 3) == 1;
                const UpdateVariant v{dtypes, width, index % 4 < 2 ? Activation::silu : Activation::none, index % 5 != 0,
                                      false, indexed};
                const Run r{B, D, 1, width - 1, indexed ? B + 3 : B, ViewOptions{}, ViewOptions{}, ViewOptions{}, -1};
                const std::uint32_t seed = case_seed(34, index++);
                INFO(v.name(), " | ", r.name(), " | strided weight ", strided_weight, " | strided bias ", strided_bias,
                     " | seed ", seed);
                std::mt19937 rng(seed);
                UpdateTensors t(v, r, rng);
                TestTensor strided(dtypes.weight, {D, width}, view_kind(1, false));
                strided.fill_random(rng);
                const int bias_view = static_cast<int>(1 + index % 2);   // padded or misaligned
                TestTensor strided_b(dtypes.weight, {D}, view_kind(bias_view, false));
                strided_b.fill_random(rng);
                UpdateArgs host = t.args(v, r, false), device = t.args(v, r, true);
                if (strided_weight) host.weight = strided.host_view(), device.weight = strided.device_view();
                if (strided_bias && v.bias) host.bias = strided_b.host_view(), device.bias = strided_b.device_view();
                const auto want = reference::update(host);
                if (!call_ok([&] { runtime().update(device); })) continue;
                check_tensor("out", t.out, want.out, reference::tolerance_for(dtypes.x));
                check_tensor("conv_state", t.state, want.conv_state, reference::exact());
            }
}

TEST_CASE("update: empty calls (B or D = 0), empty tensors with null data") {
    // Nothing may read or write an empty tensor; with B = 0 every cache slot stays as it was.
    std::uint64_t index = 0;
    for (const auto& [B, D] : {std::array<std::int64_t, 2>{0, 67}, {3, 0}})
        for (int width : {2, 4})
            for (int features = 0; features < 4; ++features) {
                const UpdateVariant v{{DType::bf16, DType::bf16}, width, Activation::silu, true, (features & 1) != 0,
                                      (features & 2) != 0};
                const int i = static_cast<int>(index);
                const Run r{B, D, 1, width - 1 + (features & 1) * 2, B + 3, view_kind(i, false), view_kind(i + 1, false),
                            view_kind(i + 2, false), -1};
                const std::uint32_t seed = case_seed(24, index++);
                INFO(v.name(), " | ", r.name(), " | seed ", seed);
                run_update_case(v, r, seed, true);
            }
}
