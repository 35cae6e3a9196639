// Forward on the GPU against the fp64 reference.
//
// Variants: every (layout, dtype pair, width) triple (2 × 9 × 7 = 126 compiles), with
// activation, bias, seq_idx, initial and final states rotated through them by a
// pairwise covering design. Each variant runs on every length of
// {1, 2, W-1, W, 129, 130, 1134, 4096}, with channels rotating through 5, 67 and 64
// and the views of x, out and the states rotating through contiguous, strided and
// misaligned memory. Outputs are poisoned first; states must match exactly. A call small
// enough for the small-call kernel (fwd_small.cu) runs twice: through it and through the
// main kernels (so short rows still test those).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <optional>

#include "reference/reference.hpp"
#include "support/case_inputs.hpp"
#include "support/covering.hpp"
#include "support/gpu_checks.hpp"
#include "support/scoped_env.hpp"
#include "support/small_call_paths.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

const std::vector<int>& widths = all_widths();

struct ForwardVariant {
    Layout layout;
    DTypePair dtypes;
    int width;
    Activation activation;
    bool bias, seq_idx, initial_states, final_states;

    std::string name() const {
        return fmt::format("{} x={} w={} width={} act={} bias={} seq_idx={} init={} final={}", to_string(layout),
                           to_string(dtypes.x), to_string(dtypes.weight), width, to_string(activation), bias, seq_idx,
                           initial_states, final_states);
    }
};

std::vector<ForwardVariant> forward_variants() {
    // Fields: layout, dtype pair, width (crossed); activation, bias, seq_idx, initial,
    // final (rotated). Width 1 has no states.
    const std::vector<int> crossed = {2, 9, static_cast<int>(widths.size())}, rotated = {2, 2, 2, 2, 2};
    auto allowed = [](const DesignRow& r) { return r[2] != 0 || (r[6] == 0 && r[7] == 0); };
    std::vector<ForwardVariant> variants;
    for (const auto& r : covering_design(crossed, rotated, allowed))
        variants.push_back({r[0] ? Layout::channel_last : Layout::channel_first, dtype_pairs()[static_cast<std::size_t>(r[1])],
                            widths[static_cast<std::size_t>(r[2])], r[3] ? Activation::silu : Activation::none, r[4] != 0,
                            r[5] != 0, r[6] != 0, r[7] != 0});
    return variants;
}

struct Geometry {
    std::int64_t B, D, L;
    ViewOptions x_view, out_view, state_view;
    std::string name() const {
        return fmt::format("B={} D={} L={} x[{}] out[{}] states[{}]", B, D, L, describe(x_view), describe(out_view),
                           describe(state_view));
    }
};

std::vector<Geometry> geometries(const ForwardVariant& v, std::size_t variant_index) {
    const bool cl = v.layout == Layout::channel_last;
    std::vector<Geometry> out;
    int i = static_cast<int>(variant_index);
    for (std::int64_t L : standard_lengths(v.width)) {
        const std::int64_t D = std::vector<std::int64_t>{5, 67, 64}[static_cast<std::size_t>(i % 3)];
        const std::int64_t B = L >= 1134 ? 1 : (L >= 129 ? 2 : 3);
        out.push_back({B, D, L, view_kind(i, cl), view_kind(i + 1, cl), view_kind(i + 2, i % 2 == 1)});
        ++i;
    }
    return out;
}

// Every tensor of one forward call, on host and device.
struct ForwardTensors {
    TestTensor x, weight, bias, seq_idx, initial_states, final_states, out;

    ForwardTensors(const ForwardVariant& v, const Geometry& g, std::mt19937& rng)
        : x(v.dtypes.x, {g.B, g.D, g.L}, g.x_view),
          weight(v.dtypes.weight, {g.D, v.width}),
          bias(v.dtypes.weight, {g.D}),
          seq_idx(DType::int32, {g.B, g.L}),
          initial_states(v.dtypes.x, {g.B, g.D, v.width - 1}, g.state_view),
          final_states(v.dtypes.x, {g.B, g.D, v.width - 1}, g.state_view),
          out(v.dtypes.x, {g.B, g.D, g.L}, g.out_view) {
        x.fill_random(rng);
        weight.fill_random(rng);
        bias.fill_random(rng);
        seq_idx.fill_int(random_seq_idx(rng, g.B, g.L, g.L % 2 == 0));
        initial_states.fill_random(rng);
    }

    ForwardArgs args(const ForwardVariant& v, bool on_device) const {
        auto view = [on_device](const TestTensor& t) { return on_device ? t.device_view() : t.host_view(); };
        ForwardArgs a;
        a.x = view(x), a.weight = view(weight), a.out = view(out), a.activation = v.activation;
        if (v.bias) a.bias = view(bias);
        if (v.seq_idx) a.seq_idx = view(seq_idx);
        if (v.initial_states) a.initial_states = view(initial_states);
        if (v.final_states) a.final_states = view(final_states);
        return a;
    }
};

// Returns whether the call took the small-call kernel; such a call runs a second time
// through the main kernels, outputs poisoned again, against the same reference.
bool run_forward_case(const ForwardVariant& v, const Geometry& g, std::uint32_t seed) {
    std::mt19937 rng(seed);
    ForwardTensors t(v, g, rng);
    const ForwardArgs args = t.args(v, true);
    const auto want = reference::forward(t.args(v, false));
    const bool small = takes_small_forward_kernel(args);
    for (int pass = 0; pass < (small ? 2 : 1); ++pass) {
        std::optional<MainForwardKernelsOnly> main_only;
        if (pass == 1) {
            main_only.emplace();
            t.out.poison();
            t.final_states.poison();
        }
        const char* path = !small ? "main kernels" : (pass == 0 ? "small-call kernel" : "main kernels (small-call kernel off)");
        INFO(path);
        if (!call_ok([&] { runtime().forward(args); })) break;
        check_tensor("out", t.out, want.out, reference::tolerance_for(v.dtypes.x));
        if (v.final_states) check_tensor("final_states", t.final_states, want.final_states, reference::exact());
    }
    return small;
}

}  // namespace

TEST_CASE("forward: every layout x dtype pair x width, features rotated") {
    const auto variants = forward_variants();
    CHECK(variants.size() == 2 * 9 * widths.size());
    std::uint64_t index = 0;
    for (std::size_t i = 0; i < variants.size(); ++i) {
        const auto& v = variants[i];
        for (const auto& g : geometries(v, i)) {
            const std::uint32_t seed = case_seed(1, index++);
            INFO(v.name(), " | ", g.name(), " | seed ", seed);
            run_forward_case(v, g, seed);
        }
    }
}

TEST_CASE("forward: seq_idx together with initial and final states, both layouts") {
    // The feature pairs the covering design meets only once, crossed here on one width.
    std::uint64_t index = 0;
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (DType x : {DType::fp32, DType::bf16})
            for (int flags = 0; flags < 8; ++flags) {
                ForwardVariant v{layout, {x, DType::fp32}, 4, (flags & 4) ? Activation::silu : Activation::none,
                                 true, true, (flags & 1) != 0, (flags & 2) != 0};
                const bool cl = layout == Layout::channel_last;
                const Geometry g{2, 67, 300, view_kind(flags, cl), view_kind(flags + 1, cl), view_kind(flags + 2, cl)};
                const std::uint32_t seed = case_seed(2, index++);
                INFO(v.name(), " | ", g.name(), " | seed ", seed);
                run_forward_case(v, g, seed);
            }
}

TEST_CASE("forward: x of one channel read channel-last, as an out sliced from a wider channel-last tensor needs") {
    // x of one channel is channel-first by its strides too; an out whose positions lie a
    // padded row apart is readable channel-last only, so the call runs channel-last
    // (validate's layout_for; such calls were refused before).
    std::uint64_t index = 0;
    for (DType x : {DType::fp32, DType::bf16})
        for (int width : {1, 4})
            for (std::int64_t L : {std::int64_t(1), std::int64_t(129), std::int64_t(1134)})
                for (bool states : {false, true}) {
                    if (width == 1 && states) continue;
                    ForwardVariant v{Layout::channel_last, {x, x}, width, Activation::silu, true, states, states, states};
                    ViewOptions x_view, out_view;
                    x_view.channel_last = out_view.channel_last = true;
                    out_view.pad[1] = 2;   // D = 1 in rows of 3
                    const Geometry g{2, 1, L, x_view, out_view, view_kind(1, true)};
                    const std::uint32_t seed = case_seed(81, index++);
                    INFO(v.name(), " | ", g.name(), " | seed ", seed);
                    run_forward_case(v, g, seed);
                }
}

TEST_CASE("forward: channel-first seq_idx, a block's channels sharing its tile's ids") {
    // With 16-bit x a block computes CC1D_FWD_CF_SEQ_ROWS (4) channels of one batch row
    // (fp32: one): channel counts that leave a partial last group (1, 5, 67) or fill them
    // (8), rows shorter than a tile (fewer threads a channel), and rows of several tiles;
    // ids rows 16-byte aligned (L a multiple of 4: four ids a load) or not; states and
    // views rotated.
    std::uint64_t index = 0;
    for (DType x : {DType::bf16, DType::fp32})
        for (std::int64_t D : {1, 5, 8, 67})
            for (std::int64_t L : {37, 300, 2051}) {
                const int turn = static_cast<int>(index);
                ForwardVariant v{Layout::channel_first, {x, x}, turn % 3 == 0 ? 4 : (turn % 3 == 1 ? 2 : 9),
                                 turn % 2 ? Activation::silu : Activation::none, true, true, turn % 4 < 2, turn % 4 != 1};
                const Geometry g{L > 1000 ? 2 : 3, D, L, view_kind(turn, false), view_kind(turn + 1, false),
                                 view_kind(turn + 2, false)};
                const std::uint32_t seed = case_seed(14, index++);
                INFO(v.name(), " | ", g.name(), " | seed ", seed);
                run_forward_case(v, g, seed);
            }
}

TEST_CASE("forward: a long row with many tiles and odd channel counts") {
    std::uint64_t index = 0;
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (std::int64_t D : {1, 3, 129}) {
            ForwardVariant v{layout, {DType::fp16, DType::fp16}, 4, Activation::silu, true, false, true, true};
            const bool cl = layout == Layout::channel_last;
            const Geometry g{2, D, 10007, view_kind(0, cl), view_kind(2, cl), view_kind(0, false)};
            const std::uint32_t seed = case_seed(3, index++);
            INFO(v.name(), " | ", g.name(), " | seed ", seed);
            run_forward_case(v, g, seed);
        }
}

TEST_CASE("forward: channel-first rows not aligned to a vector, at every offset, x and out apart") {
    // L = 1031 puts the rows' starts at every 2-byte (16-bit) or 4-byte (fp32) offset from
    // a 16-byte boundary across 19 channels; the views misalign x and out by different
    // amounts, or pad them. Interior vectors load aligned from tiles at each row's own
    // boundaries (and store as aligned pieces where out sits at another offset); a row's
    // first and last vectors go element by element. Rows longer than a tile (L = 4099)
    // cross tiles at unaligned positions too.
    std::uint64_t index = 0;
    for (const DTypePair& dtypes : dtype_pairs())
        for (int width : {2, 4, 16})
            for (std::int64_t L : {1031, 4099}) {
                // Each length meets both activations and both views of x and of out.
                const int turn = static_cast<int>(index), pair = turn / 2, row = turn % 2;
                ForwardVariant v{Layout::channel_first, dtypes, width, pair % 2 ? Activation::silu : Activation::none,
                                 true, false, turn % 3 == 0, turn % 3 == 1};
                const Geometry g{L > 2000 ? 1 : 3, 19, L, view_kind((pair / 2 + row) % 2 ? 2 : 3, false),
                                 view_kind((pair / 4 + row) % 2 ? 0 : 2, false), view_kind(turn, false)};
                const std::uint32_t seed = case_seed(11, index++);
                INFO(v.name(), " | ", g.name(), " | seed ", seed);
                run_forward_case(v, g, seed);
            }
}

TEST_CASE("forward: channel-last 16-bit calls over many tiles, several waves") {
    // 4 x 1029 x 4099 at widths 2-4, odd channels (a partial vector per row), an odd length
    // (a partial last tile), states at both ends and the views rotating through contiguous,
    // strided and misaligned: the tile kernel staged by cp.async, 65 tiles a row. With
    // seq_idx, sequences up to half a row and padding give time segments inside one
    // sequence (walked without ids), of padding only (stored as zeros) and across a
    // boundary (ids compared at every step).
    std::uint64_t index = 0;
    for (bool seq_idx : {false, true})
        for (DType x : {DType::bf16, DType::fp16})
            for (int width : {2, 3, 4}) {
                const int turn = static_cast<int>(index);
                ForwardVariant v{Layout::channel_last, {x, x}, width, turn % 2 ? Activation::silu : Activation::none,
                                 true, seq_idx, turn % 3 != 1, turn % 3 != 2};
                const Geometry g{4, 1029, 4099, view_kind(turn, true), view_kind(turn + 1, true), view_kind(turn + 2, false)};
                const std::uint32_t seed = case_seed(5, index++);
                INFO(v.name(), " | ", g.name(), " | seed ", seed);
                run_forward_case(v, g, seed);
            }
}

TEST_CASE("forward: channel-last seq_idx with long sequences, tile segments inside one and across several") {
    // 2 x D x 2053: sequences up to half a row long (random_seq_idx) leave most of a tile's
    // time segments inside one sequence, which the tile kernel walks without comparing ids,
    // some of padding only (stored as zeros), and the rest across boundaries; widths up to
    // 16 (a segment's window reaches 15 rows back). Contiguous rows of 520 channels take
    // vector tiles (staged by cp.async up to width 4) but for the partial last channel
    // group; 523 channels in rotating views take element tiles. States at both ends.
    std::uint64_t index = 0;
    for (DType x : {DType::bf16, DType::fp16, DType::fp32})
        for (int width : {1, 3, 4, 5, 8, 16})
            for (bool vector_rows : {true, false}) {
                const int turn = static_cast<int>(index);
                const bool states = width > 1;   // (width 1 has none)
                ForwardVariant v{Layout::channel_last, {x, x}, width, turn % 4 < 2 ? Activation::silu : Activation::none,
                                 true, true, states && turn % 3 != 1, states && turn % 3 != 2};
                const Geometry g{2, vector_rows ? 520 : 523, 2053, view_kind(vector_rows ? 0 : turn, true),
                                 view_kind(vector_rows ? 0 : turn + 1, true), view_kind(turn + 2, false)};
                const std::uint32_t seed = case_seed(6, index++);
                INFO(v.name(), " | ", g.name(), " | seed ", seed);
                run_forward_case(v, g, seed);
            }
}

TEST_CASE("forward: the kernels of fast- and slow-memory devices (CC1D_MEMORY_GBPS)") {
    // The channel-first forward's kernel depends on the device's DRAM bandwidth
    // (util::kFastMemoryGbps): fast devices take the one staged by cp.async (its tile at a
    // 128-byte boundary past a padded halo). Both run here whatever the device, every dtype,
    // with and without SiLU, at widths 2-4 and 16, states at both ends. The rows are padded
    // to 4104 (16-byte rows in every dtype, which the staged kernel needs) and end in a
    // partial vector.
    std::uint64_t index = 0;
    for (const char* gbps : {"3000", "5000"}) {
        ScopedEnv memory("CC1D_MEMORY_GBPS", gbps);
        for (DType x : {DType::fp32, DType::bf16, DType::fp16})
            for (int width : {2, 3, 4, 16}) {
                const int turn = static_cast<int>(index);
                const Activation act = turn % 4 < 2 ? Activation::silu : Activation::none;
                ForwardVariant v{Layout::channel_first, {x, x}, width, act, true, false, turn % 3 != 1, turn % 3 != 2};
                const Geometry g{3, 211, 4101, view_kind(1, false), view_kind(1, false), view_kind(turn, true)};
                const std::uint32_t seed = case_seed(9, index++);
                INFO("CC1D_MEMORY_GBPS=", gbps, " | ", v.name(), " | ", g.name(), " | seed ", seed);
                run_forward_case(v, g, seed);
            }
    }
}

TEST_CASE("forward: channel-first rows off 16-byte boundaries through both modules and both kernels") {
    // Without seq_idx, rows of unit stride that start off a 16-byte boundary run the module
    // of such rows, tiled from the boundary before position 0: the first vector of a row
    // holds positions before the row start, which must come from initial_states (or be
    // zero), the last holds positions past its end, and a row of L + lead past a tile's
    // length takes one tile more than L alone. Contiguous rows of odd length put every row
    // at another offset, x and out alike; misaligned views put x and out at the same offset
    // (aligned vector stores) or at different ones (out stored as aligned pieces). Lengths
    // below a vector and below the window (width 16), around a 16-bit tile (4096 positions
    // at 128 threads) and an fp32 one (1024), past them by a few vectors (the staged
    // kernel's tiles of the row's vectors, up to one a thread more: 2603, 4099) and rows of
    // several tiles (5121, 8199); states at both ends; both kernels of each
    // module (CC1D_MEMORY_GBPS), and the main module's shifted loads
    // (CC1D_DISABLE_SHIFTED_ROWS).
    struct Views {
        int x, out;
    };
    const Views views[] = {{0, 0}, {2, 2}, {3, 3}, {2, 0}, {0, 3}};
    std::uint64_t index = 0;
    for (const char* main_module : {static_cast<const char*>(nullptr), "1"}) {
        for (const char* gbps : {"3000", "5000"}) {
            ScopedEnv shifted("CC1D_DISABLE_SHIFTED_ROWS", main_module);
            ScopedEnv memory("CC1D_MEMORY_GBPS", gbps);
            MainForwardKernelsOnly main_only;   // short rows too through the kernels under test
            for (DType x : {DType::bf16, DType::fp32, DType::fp16})
                for (std::int64_t L : {1, 3, 7, 9, 15, 1021, 1027, 2603, 4093, 4099, 4103, 5121, 8199})
                    for (int width : {4, 16}) {
                        const int turn = static_cast<int>(index);
                        const Views vw = views[turn % 5];
                        ForwardVariant v{Layout::channel_first, {x, turn % 2 ? x : DType::fp32}, width,
                                         turn % 4 < 2 ? Activation::silu : Activation::none, turn % 3 != 0, false,
                                         turn % 3 != 1, turn % 3 != 2};
                        const Geometry g{L > 1000 ? 2 : 3, 9, L, view_kind(vw.x, false), view_kind(vw.out, false),
                                         view_kind(turn, false)};
                        const std::uint32_t seed = case_seed(15, index++);
                        INFO("CC1D_DISABLE_SHIFTED_ROWS=", main_module ? main_module : "(unset)", " | CC1D_MEMORY_GBPS=",
                             gbps, " | ", v.name(), " | ", g.name(), " | seed ", seed);
                        run_forward_case(v, g, seed);
                    }
        }
    }
}

TEST_CASE("forward: channel-last rows off 16-byte boundaries, the module of such rows and the main one") {
    // Channel-last calls whose x or out rows along D are not whole 16-byte vectors run
    // the module of such rows (Variant::shifted_rows): every tile's vectors through
    // registers, two aligned loads and a shift each inside a row, element by element at
    // its ends (cc1d_load_tile_rows_any), out as the widest aligned pieces; with
    // CC1D_DISABLE_SHIFTED_ROWS the main module, element by element. D of 1001 (every row
    // at another offset), 5 and 7 (less than a vector), 17 and 23 (one whole vector at
    // most), 130 (rows on 4-byte boundaries), 200 and 64 (whole vectors; x or out
    // misaligned by an element, or strided and by three); every dtype, widths 2 to 16,
    // seq_idx, both states (the first tile's halo from initial_states), partial last
    // tiles.
    struct Shape {
        std::int64_t B, D, L;
    };
    const Shape shapes[] = {{3, 1001, 777}, {2, 5, 129}, {3, 7, 1031}, {2, 17, 517}, {4, 23, 64}, {2, 130, 259},
                            {1, 200, 2049}, {2, 64, 65}};
    const DType dtypes[] = {DType::bf16, DType::fp32, DType::fp16};
    const int widths[] = {4, 2, 3, 8, 16, 1};
    std::uint64_t index = 0;
    for (const char* main_module : {static_cast<const char*>(nullptr), "1"}) {
        ScopedEnv shifted("CC1D_DISABLE_SHIFTED_ROWS", main_module);
        MainForwardKernelsOnly main_only;   // short calls too through the kernels under test
        for (const Shape& shape : shapes)
            for (int features = 0; features < 3; ++features) {
                const int turn = static_cast<int>(index);
                const DType x = dtypes[turn % 3];
                const int width = widths[turn % 6];
                const bool states = width > 1;   // (width 1 has none)
                const ForwardVariant v{Layout::channel_last, {x, turn % 2 ? x : DType::fp32}, width,
                                       turn % 4 < 2 ? Activation::silu : Activation::none, turn % 5 != 0,
                                       features == 1, states && features != 0 && turn % 2 == 0, states && features == 2};
                const int odd = 2 + turn % 2, which = turn % 3;   // x, out, or both misaligned
                const Geometry g{shape.B, shape.D, shape.L, view_kind(which != 1 ? odd : 0, true),
                                 view_kind(which != 0 ? odd : 0, true), view_kind(turn, false)};
                const std::uint32_t seed = case_seed(16, index++);
                INFO("CC1D_DISABLE_SHIFTED_ROWS=", main_module ? main_module : "(unset)", " | ", v.name(), " | ",
                     g.name(), " | seed ", seed);
                run_forward_case(v, g, seed);
            }
    }
}

TEST_CASE("forward: channel-first seq_idx through the staged kernel (16-byte rows) and the main one") {
    // With seq_idx the staged kernel takes every call of 16-byte rows, on every device: it
    // moves x and, where the id rows are 16-byte aligned, the ids by cp.async, four
    // channels a block in 16-bit. x and out padded to rows of 4104 (16-byte rows in every
    // dtype) over L = 4101 (a partial last vector and tile), or misaligned as well (the
    // main kernel); one batch row (ids rows aligned: four ids a copy, the last partial
    // group element by element) or two (ids rows of 4101: one id at a time); 67 channels
    // (a partial last group of four); states rotated.
    std::uint64_t index = 0;
    for (bool aligned_rows : {true, false})
        for (DType x : {DType::fp32, DType::bf16, DType::fp16})
            for (int width : {2, 4, 16})
                for (std::int64_t B : {1, 2}) {
                    const int turn = static_cast<int>(index);
                    const Activation act = turn % 4 < 2 ? Activation::silu : Activation::none;
                    ForwardVariant v{Layout::channel_first, {x, x}, width, act, true, true, turn % 3 != 1, turn % 3 != 2};
                    const ViewOptions rows = view_kind(aligned_rows ? 1 : 3, false);
                    const Geometry g{B, 67, 4101, rows, rows, view_kind(turn, true)};
                    const std::uint32_t seed = case_seed(28, index++);
                    INFO(v.name(), " | ", g.name(), " | seed ", seed);
                    run_forward_case(v, g, seed);
                }
}

TEST_CASE("forward: small calls, one output a thread, up to 2^17 outputs") {
    // From one output to 2^17 (1 x 1024 x 128, the largest small call of rows past 64
    // positions), with rows shorter than the window (L < W - 1: states and ids from before
    // the row start), at widths 1, 4 and 16, every feature rotated and the views through
    // contiguous, strided and misaligned. Each call runs through the small-call kernel and again through the main
    // kernels.
    const std::array<std::array<std::int64_t, 3>, 6> shapes = {
        {{1, 1, 1}, {3, 37, 5}, {2, 67, 33}, {5, 19, 100}, {4, 3, 256}, {1, 1024, 128}}};
    std::uint64_t index = 0;
    for (const auto& [B, D, L] : shapes)
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (int width : {1, 4, 16}) {
                const bool cl = layout == Layout::channel_last;
                const int turn = static_cast<int>(index);
                const DTypePair dtypes = dtype_pairs()[static_cast<std::size_t>(turn) % dtype_pairs().size()];
                const bool states = width > 1;
                ForwardVariant v{layout, dtypes, width, turn % 2 ? Activation::silu : Activation::none, turn % 4 != 3,
                                 turn % 3 != 1, states && turn % 3 != 2, states && turn % 2 == 0};
                const Geometry g{B, D, L, view_kind(turn, cl), view_kind(turn + 1, cl), view_kind(turn + 2, turn % 2 == 1)};
                const std::uint32_t seed = case_seed(8, index++);
                INFO(v.name(), " | ", g.name(), " | seed ", seed);
                CHECK_MESSAGE(run_forward_case(v, g, seed), "the call did not take the small-call kernel");
            }
}

TEST_CASE("forward: channel-first rows of at most 64 positions past 2^17 outputs, both kernels") {
    // Channel-first calls of short rows take the small-call kernel up to 2^21 outputs:
    // rows of 64, 61 and 3 (shorter than the window at width 16), D odd, every dtype pair,
    // features rotated, views contiguous, strided and misaligned. Each call runs through
    // the small-call kernel and again through the main kernels.
    const std::array<std::array<std::int64_t, 3>, 3> shapes = {{{3, 1001, 64}, {5, 517, 61}, {64, 1031, 3}}};
    std::uint64_t index = 0;
    for (const auto& [B, D, L] : shapes)
        for (int width : {2, 4, 16}) {
            const int turn = static_cast<int>(index);
            const DTypePair dtypes = dtype_pairs()[static_cast<std::size_t>(turn) % dtype_pairs().size()];
            ForwardVariant v{Layout::channel_first, dtypes, width, turn % 2 ? Activation::silu : Activation::none,
                             turn % 4 != 3, turn % 3 != 1, turn % 3 != 2, turn % 2 == 0};
            const Geometry g{B, D, L, view_kind(turn, false), view_kind(turn + 1, false), view_kind(turn + 2, turn % 2 == 1)};
            const std::uint32_t seed = case_seed(10, index++);
            INFO(v.name(), " | ", g.name(), " | seed ", seed);
            CHECK_MESSAGE(run_forward_case(v, g, seed), "the call did not take the small-call kernel");
        }
}

TEST_CASE("forward: empty calls (B, D or L = 0) with seq_idx and states, empty tensors with null data") {
    // Frameworks may pass an empty tensor with a null data pointer. Nothing may read or
    // write an empty tensor; with L = 0 the call only copies initial_states into
    // final_states (a kernel that looked up the first sequence's id read seq_idx[b, 0]).
    std::uint64_t index = 0;
    for (const auto& [B, D, L] : {std::array<std::int64_t, 3>{2, 67, 0}, {0, 67, 37}, {2, 0, 37}})
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (DType x : {DType::fp32, DType::bf16})
                for (int width : {2, 4}) {
                    ForwardVariant v{layout, {x, x}, width, Activation::silu, true, true, true, true};
                    const bool cl = layout == Layout::channel_last;
                    const Geometry g{B, D, L, view_kind(0, cl), view_kind(1, cl), view_kind(static_cast<int>(index), false)};
                    const std::uint32_t seed = case_seed(7, index++);
                    INFO(v.name(), " | ", g.name(), " | seed ", seed);
                    std::mt19937 rng(seed);
                    ForwardTensors t(v, g, rng);
                    ForwardArgs args = t.args(v, true);
                    for (Tensor* tensor : {&args.x, &args.weight, &args.bias, &args.seq_idx, &args.initial_states,
                                           &args.final_states, &args.out})
                        if (tensor->numel() == 0) tensor->data = nullptr;
                    if (!call_ok([&] { runtime().forward(args); })) continue;
                    const auto want = reference::forward(t.args(v, false));
                    check_tensor("final_states", t.final_states, want.final_states, reference::exact());
                }
}
