// Backward on the GPU against the fp64 reference: dx, dweight, dbias, dinitial_states.
//
// Variants: every (layout, dtype pair, width) triple, with activation, bias, seq_idx,
// initial states, dfinal_states and deterministic mode rotated by a pairwise covering
// design. Each variant runs on the standard lengths; the runs rotate the dweight/dbias
// dtype (fp32 or the weight's), accumulate (adding into random prior contents),
// whether dinitial_states is requested, channel counts and memory views.
// dweight/dbias are compared with reduction_tolerance(B·L).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <memory>
#include <optional>

#include "reference/reference.hpp"
#include "support/backward_tile_paths.hpp"
#include "support/small_call_paths.hpp"
#include "support/case_inputs.hpp"
#include "support/covering.hpp"
#include "support/gpu_checks.hpp"
#include "support/scoped_env.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

struct BackwardVariant {
    Layout layout;
    DTypePair dtypes;
    int width;
    Activation activation;
    bool bias, seq_idx, initial_states, dfinal_states, deterministic;

    std::string name() const {
        return fmt::format("{} x={} w={} width={} act={} bias={} seq_idx={} init={} dfinal={} deterministic={}",
                           to_string(layout), to_string(dtypes.x), to_string(dtypes.weight), width, to_string(activation),
                           bias, seq_idx, initial_states, dfinal_states, deterministic);
    }
};

std::vector<BackwardVariant> backward_variants() {
    const auto& widths = all_widths();
    const std::vector<int> crossed = {2, 9, static_cast<int>(widths.size())}, rotated = {2, 2, 2, 2, 2, 2};
    auto allowed = [](const DesignRow& r) { return r[2] != 0 || (r[6] == 0 && r[7] == 0); };   // width 1: no states
    std::vector<BackwardVariant> variants;
    for (const auto& r : covering_design(crossed, rotated, allowed))
        variants.push_back({r[0] ? Layout::channel_last : Layout::channel_first, dtype_pairs()[static_cast<std::size_t>(r[1])],
                            widths[static_cast<std::size_t>(r[2])], r[3] ? Activation::silu : Activation::none, r[4] != 0,
                            r[5] != 0, r[6] != 0, r[7] != 0, r[8] != 0});
    return variants;
}

// Shape, views and the per-call options of one run.
struct Run {
    std::int64_t B, D, L;
    ViewOptions x_view, dout_view, dx_view, state_view;
    bool dweight_fp32, accumulate, want_dinit;
    std::string name() const {
        return fmt::format("B={} D={} L={} x[{}] dout[{}] dx[{}] states[{}] dweight={} accumulate={} dinit={}", B, D, L,
                           describe(x_view), describe(dout_view), describe(dx_view), describe(state_view),
                           dweight_fp32 ? "fp32" : "weight dtype", accumulate, want_dinit);
    }
};

std::vector<Run> runs_for(const BackwardVariant& v, std::size_t variant_index) {
    const bool cl = v.layout == Layout::channel_last;
    std::vector<Run> runs;
    int i = static_cast<int>(variant_index);
    for (std::int64_t L : standard_lengths(v.width)) {
        const std::int64_t D = std::vector<std::int64_t>{67, 5, 64}[static_cast<std::size_t>(i % 3)];
        const std::int64_t B = L >= 1134 ? 1 : (L >= 129 ? 2 : 3);
        runs.push_back({B, D, L, view_kind(i, cl), view_kind(i + 3, cl), view_kind(i + 1, cl), view_kind(i + 2, i % 2 == 0),
                        i % 2 == 0, i % 3 == 1, v.initial_states && i % 4 != 3});
        ++i;
    }
    return runs;
}

// Every tensor of one backward call, on host and device.
struct BackwardTensors {
    TestTensor x, weight, bias, dout, seq_idx, initial_states, dfinal_states;
    TestTensor dx, dweight, dbias, dinitial_states;
    std::vector<double> prior_dweight, prior_dbias;   // contents before an accumulating call

    BackwardTensors(const BackwardVariant& v, const Run& r, std::mt19937& rng)
        : x(v.dtypes.x, {r.B, r.D, r.L}, r.x_view),
          weight(v.dtypes.weight, {r.D, v.width}),
          bias(v.dtypes.weight, {r.D}),
          dout(v.dtypes.x, {r.B, r.D, r.L}, r.dout_view),
          seq_idx(DType::int32, {r.B, r.L}),
          initial_states(v.dtypes.x, {r.B, r.D, v.width - 1}, r.state_view),
          dfinal_states(v.dtypes.x, {r.B, r.D, v.width - 1}, r.state_view),
          dx(v.dtypes.x, {r.B, r.D, r.L}, r.dx_view),
          dweight(r.dweight_fp32 ? DType::fp32 : v.dtypes.weight, {r.D, v.width}, view_kind(r.L % 4 == 1 ? 2 : 0, false)),
          dbias(r.dweight_fp32 ? DType::fp32 : v.dtypes.weight, {r.D}),
          dinitial_states(v.dtypes.x, {r.B, r.D, v.width - 1}, r.state_view) {
        for (TestTensor* t : {&x, &weight, &bias, &dout, &initial_states, &dfinal_states}) t->fill_random(rng);
        seq_idx.fill_int(random_seq_idx(rng, r.B, r.L, r.L % 2 == 1));
        if (r.accumulate) {
            dweight.fill_random(rng);
            dbias.fill_random(rng);
            prior_dweight = dweight.values();
            prior_dbias = dbias.values();
        }
    }

    BackwardArgs args(const BackwardVariant& v, const Run& r, bool on_device) const {
        auto view = [on_device](const TestTensor& t) { return on_device ? t.device_view() : t.host_view(); };
        BackwardArgs a;
        a.x = view(x), a.weight = view(weight), a.dout = view(dout), a.dx = view(dx), a.dweight = view(dweight);
        a.activation = v.activation, a.accumulate = r.accumulate, a.deterministic = v.deterministic;
        if (v.bias) a.bias = view(bias), a.dbias = view(dbias);
        if (v.seq_idx) a.seq_idx = view(seq_idx);
        if (v.initial_states) a.initial_states = view(initial_states);
        if (r.want_dinit) a.dinitial_states = view(dinitial_states);
        if (v.dfinal_states) a.dfinal_states = view(dfinal_states);
        return a;
    }

    // The outputs as before the first call: poisoned, or dweight/dbias holding the
    // contents an accumulating call adds to.
    void reset_outputs() {
        dx.poison();
        dinitial_states.poison();
        if (prior_dweight.empty()) {
            dweight.poison();
            dbias.poison();
        } else {
            dweight.fill_values(prior_dweight);
            dbias.fill_values(prior_dbias);
        }
    }
};

std::vector<double> plus(const std::vector<double>& prior, const std::vector<double>& gradient) {
    if (prior.empty()) return gradient;
    std::vector<double> sum(gradient.size());
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = prior[i] + gradient[i];
    return sum;
}

// caller_workspace: the call brings its own workspace, workspace_bytes exactly what
// backward_workspace_size asks for, random contents (the zeroing and reduce launches must
// not rely on them), starting 4 bytes past an allocation (the seq masks in it need 16-byte
// alignment, which the call finds for itself). null_empty: every empty tensor comes with
// null data, as frameworks may pass them. `rt`: the Runtime to call (the test Runtime when
// null). Returns whether the call took the small-call kernel (and so ran again through the
// main kernels).
bool run_backward_case(const BackwardVariant& v, const Run& r, std::uint32_t seed, bool caller_workspace = false,
                       bool null_empty = false, Runtime* rt = nullptr) {
    Runtime& runner = rt != nullptr ? *rt : runtime();
    std::mt19937 rng(seed);
    BackwardTensors t(v, r, rng);
    BackwardArgs args = t.args(v, r, true);
    if (null_empty)
        for (Tensor* tensor : {&args.x, &args.weight, &args.bias, &args.dout, &args.seq_idx, &args.initial_states,
                               &args.dfinal_states, &args.dx, &args.dweight, &args.dbias, &args.dinitial_states})
            if (tensor->numel() == 0) tensor->data = nullptr;
    std::unique_ptr<TestTensor> workspace;
    if (caller_workspace) {
        const std::size_t bytes = runner.backward_workspace_size(args);
        workspace = std::make_unique<TestTensor>(DType::fp32, std::vector<std::int64_t>{static_cast<std::int64_t>(bytes / 4 + 2)});
        workspace->fill_random(rng);
        args.workspace = static_cast<char*>(workspace->device_view().mutable_data()) + 4;
        args.workspace_bytes = bytes;
    }
    const auto want = reference::backward(t.args(v, r, false));
    const auto tol = reference::tolerance_for(v.dtypes.x);
    const auto reduction = reduction_tolerance_in(t.dweight.dtype(), r.B * r.L);
    // A call the small-call kernel takes runs again through the main kernels; one its
    // vector kernel takes also runs with that kernel switched off; one whose main kernel is
    // the channel-last tile kernel also runs the register walk.
    enum class Path { as_planned, no_vector_kernel, main_kernels, register_walk };
    std::vector<Path> paths = {Path::as_planned};
    const bool small = takes_small_backward_kernel(args);
    if (takes_small_vector_kernel(args)) paths.push_back(Path::no_vector_kernel);
    if (small) paths.push_back(Path::main_kernels);
    // (Not on a caller's Runtime: the test that brings one counts the modules it compiles.)
    if (rt == nullptr && takes_backward_tile(args)) paths.push_back(Path::register_walk);
    for (const Path path : paths) {
        std::optional<NoSmallVectorKernel> no_vectors;
        std::optional<MainBackwardKernelsOnly> main_only;
        std::optional<RegisterWalkOnly> walk_only;
        if (path == Path::no_vector_kernel) no_vectors.emplace();
        if (path == Path::main_kernels || path == Path::register_walk) main_only.emplace();
        if (path == Path::register_walk) walk_only.emplace();
        if (path != Path::as_planned) t.reset_outputs();
        const char* name = path == Path::register_walk      ? "main kernels, register walk (tile kernel off)"
                           : !small                         ? "main kernels"
                           : path == Path::as_planned       ? "small-call kernel"
                           : path == Path::no_vector_kernel ? "small-call vector kernel off"
                                                            : "main kernels (small-call kernel off)";
        INFO(name);
        if (!call_ok([&] { runner.backward(args); })) break;
        check_tensor("dx", t.dx, want.dx, tol);
        check_tensor("dweight", t.dweight, plus(t.prior_dweight, want.dweight), reduction);
        if (v.bias) check_tensor("dbias", t.dbias, plus(t.prior_dbias, want.dbias), reduction);
        if (r.want_dinit) check_tensor("dinitial_states", t.dinitial_states, want.dinitial_states, tol);
    }
    return small;
}

// A call the small-call kernel should take, its features rotated by `turn`: SiLU on odd
// turns, bias, seq_idx, states (past width 1) with their gradients, the mode and each
// tensor's view; run through that kernel and again through the main kernels.
void check_small_call(Layout layout, const DTypePair& dtypes, int width, std::int64_t B, std::int64_t D,
                      std::int64_t L, int turn, std::uint32_t seed) {
    const bool cl = layout == Layout::channel_last;
    const bool states = width > 1 && turn % 3 != 2;
    BackwardVariant v{layout, dtypes, width, turn % 2 ? Activation::silu : Activation::none, turn % 4 != 3,
                      turn % 3 != 1, states, states && turn % 2 == 0, turn % 5 != 4};
    const Run r{B, D, L, view_kind(turn, cl), view_kind(turn + 1, cl), view_kind(turn + 2, cl),
                view_kind(turn + 3, false), turn % 2 == 1, turn % 3 == 0, states};
    INFO(v.name(), " | ", r.name(), " | seed ", seed);
    CHECK_MESSAGE(run_backward_case(v, r, seed), "the call did not take the small-call kernel");
}

// The seq_idx cases of long sequences: every dtype x `widths`, with SiLU, initial and
// final states, views and the dweight dtype rotated; seeds from case_seed(salt, i).
void run_long_sequence_cases(Layout layout, std::int64_t B, std::int64_t D, std::int64_t L,
                             const std::array<int, 4>& widths, std::uint64_t salt) {
    const bool cl = layout == Layout::channel_last;
    std::uint64_t index = 0;
    for (DType x : {DType::bf16, DType::fp16, DType::fp32})
        for (int width : widths) {
            const int turn = static_cast<int>(index);
            BackwardVariant v{layout, {x, x}, width, turn % 2 ? Activation::silu : Activation::none, true,
                              true, turn % 3 == 0, turn % 3 == 1, turn != 4};
            const Run r{B, D, L, view_kind(turn, cl), view_kind(turn + 1, cl), view_kind(turn + 2, cl),
                        view_kind(0, false), turn % 2 == 0, false, turn % 3 == 0};
            const std::uint32_t seed = case_seed(salt, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

}  // namespace

TEST_CASE("backward: every layout x dtype pair x width, features rotated") {
    const auto variants = backward_variants();
    CHECK(variants.size() == 2 * 9 * all_widths().size());
    std::uint64_t index = 0;
    for (std::size_t i = 0; i < variants.size(); ++i)
        for (const auto& r : runs_for(variants[i], i)) {
            const std::uint32_t seed = case_seed(11, index++);
            INFO(variants[i].name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(variants[i], r, seed);
        }
}

TEST_CASE("backward: seq_idx with states, accumulate and both dweight dtypes, crossed") {
    std::uint64_t index = 0;
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (int flags = 0; flags < 16; ++flags) {
            const bool cl = layout == Layout::channel_last;
            BackwardVariant v{layout, {DType::bf16, DType::bf16}, 4, (flags & 8) ? Activation::silu : Activation::none,
                              true, true, true, (flags & 1) != 0, (flags & 2) != 0};
            const Run r{2, 67, 517, view_kind(flags, cl), view_kind(flags + 1, cl), view_kind(flags + 2, cl),
                        view_kind(flags + 3, false), (flags & 4) != 0, (flags & 2) == 0, true};
            const std::uint32_t seed = case_seed(12, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: x of one channel read channel-last, as a dx sliced from a wider channel-last tensor needs") {
    // As the forward's case: dout and dx with their positions a padded row apart are
    // readable channel-last only, so the call runs channel-last (validate's layout_for).
    std::uint64_t index = 0;
    for (DType x : {DType::fp32, DType::bf16})
        for (int width : {1, 4})
            for (std::int64_t L : {std::int64_t(1), std::int64_t(129), std::int64_t(1134)})
                for (bool states : {false, true}) {
                    if (width == 1 && states) continue;
                    BackwardVariant v{Layout::channel_last, {x, x}, width, Activation::silu, true, states, states, states, true};
                    ViewOptions x_view, dout_view, dx_view;
                    x_view.channel_last = dout_view.channel_last = dx_view.channel_last = true;
                    dout_view.pad[1] = 1;   // D = 1 in rows of 2
                    dx_view.pad[1] = 2;     // and of 3
                    const Run r{2, 1, L, x_view, dout_view, dx_view, view_kind(1, true), true, false, states};
                    const std::uint32_t seed = case_seed(82, index++);
                    INFO(v.name(), " | ", r.name(), " | seed ", seed);
                    run_backward_case(v, r, seed);
                }
}

TEST_CASE("backward: many rows feeding one dweight (large B·L reduction)") {
    std::uint64_t index = 0;
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (bool deterministic : {true, false}) {
            const bool cl = layout == Layout::channel_last;
            BackwardVariant v{layout, {DType::fp32, DType::fp32}, 4, Activation::silu, true, false, false, false, deterministic};
            const Run r{16, 3, 4099, view_kind(0, cl), view_kind(0, cl), view_kind(0, cl), view_kind(0, false), true, false, false};
            const std::uint32_t seed = case_seed(13, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: a caller's workspace of the queried size, random contents before the call") {
    std::uint64_t index = 0;
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (bool deterministic : {true, false})
            for (bool dweight_fp32 : {true, false})
                for (bool seq_idx : {false, true}) {   // (channel-first: seq masks in the workspace)
                    const bool cl = layout == Layout::channel_last;
                    const int i = static_cast<int>(index / 2);
                    const BackwardVariant v{layout, {DType::bf16, DType::bf16}, 4, Activation::silu, true,
                                            seq_idx, false, false, deterministic};
                    // 9 rows of 1031 steps and 67 or 300 channels: several parts per channel group.
                    const Run r{9, i % 2 == 0 ? 67 : 300, 1031, view_kind(i, cl), view_kind(i + 1, cl), view_kind(i + 2, cl),
                                view_kind(0, false), dweight_fp32, i % 3 == 1, false};
                    const std::uint32_t seed = case_seed(14, index++);
                    INFO(v.name(), " | ", r.name(), " | seed ", seed);
                    run_backward_case(v, r, seed, true);
                }
}

TEST_CASE("backward: partial rows padded off powers of two (dim * (width + 1) = 2,048)") {
    // Rows of dim * (width + 1) sums that are a power of two of 2,048 or more lie a 128-byte
    // line further apart (backward_plan.hpp, partials_row_floats): 512 channels at width 3,
    // 1024 at width 1, 256 at width 7, each over several parts a channel group, both
    // layouts and modes, the queried workspace every other call.
    struct Shape {
        std::int64_t dim;
        int width;
    };
    std::uint64_t index = 0;
    for (const Shape s : {Shape{512, 3}, Shape{1024, 1}, Shape{256, 7}})
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (DType dtype : {DType::fp32, DType::bf16})
                for (bool deterministic : {true, false}) {
                    const bool cl = layout == Layout::channel_last;
                    const int i = static_cast<int>(index);
                    const BackwardVariant v{layout, {dtype, dtype}, s.width, i % 2 == 0 ? Activation::silu : Activation::none,
                                            true, false, false, false, deterministic};
                    const Run r{4, s.dim, 1031, view_kind(i, cl), view_kind(i + 1, cl), view_kind(i + 2, cl),
                                view_kind(0, false), i % 3 != 0, i % 4 == 1, false};
                    const std::uint32_t seed = case_seed(74, index++);
                    INFO(v.name(), " | ", r.name(), " | seed ", seed);
                    run_backward_case(v, r, seed, i % 2 == 1);
                }
}

TEST_CASE("backward: channel-first 16-bit tiles staged both ways (CC1D_MEMORY_GBPS)") {
    // The 16-bit channel-first kernel stages a tile by cp.async or through registers, as
    // the plan asks (backward_channel_first.cpp: with SiLU, for tiles of more than 2
    // vectors a thread, or on fast DRAM). Both sides run here whatever the device: rows of
    // 1031 steps (2 vectors a thread, staged by the memory speed) and of 4099 steps over
    // 600 channels (4 vectors, cp.async on either), with and without SiLU, seq_idx and
    // states rotated, views rotated (strided and misaligned views take the element-wise
    // loads of either staging).
    std::uint64_t index = 0;
    for (const char* gbps : {"3000", "5000"}) {
        ScopedEnv memory("CC1D_MEMORY_GBPS", gbps);
        for (DType x : {DType::bf16, DType::fp16})
            for (Activation act : {Activation::none, Activation::silu})
                for (bool long_rows : {false, true}) {
                    const int turn = static_cast<int>(index);
                    const int width = std::array<int, 4>{2, 3, 4, 8}[static_cast<std::size_t>(turn % 4)];
                    BackwardVariant v{Layout::channel_first, {x, x}, width, act, true, turn % 3 == 2, turn % 3 == 1,
                                      turn % 3 == 1, true};
                    const Run r = long_rows ? Run{1, 600, 4099, view_kind(turn, false), view_kind(turn + 1, false),
                                                  view_kind(turn + 2, false), view_kind(0, false), true, false, v.initial_states}
                                            : Run{3, 67, 1031, view_kind(turn, false), view_kind(turn + 1, false),
                                                  view_kind(turn + 2, false), view_kind(0, false), turn % 2 == 0, false,
                                                  v.initial_states};
                    const std::uint32_t seed = case_seed(19, index++);
                    INFO("CC1D_MEMORY_GBPS=", gbps, " | ", v.name(), " | ", r.name(), " | seed ", seed);
                    run_backward_case(v, r, seed);
                }
    }
}

TEST_CASE("backward: channel-first SiLU, g passed between lanes (warps own runs of vectors)") {
    // SiLU rows on 16-byte boundaries keep g in registers (bwd_channel_first.cu,
    // BF_G_IN_REGISTERS, while K is at most a vector: 16-bit up to width 9, fp32 up to 5):
    // a lane's next K g come from the next lane, the next turn's first lane, the next
    // warp's slot or the slot after the tile. The shapes give 1, 2 and 4 vectors a thread,
    // rows of one tile and of several (the last mostly past the row end, one ending inside
    // a warp's turn), several parts a channel, and 64- and 128-thread blocks; widths 1 to
    // 9 (fp32 past width 5 keeps g in shared memory), dtypes, states and views (contiguous
    // or padded by whole vectors, which stay on this path) rotated.
    struct Shape {
        std::int64_t B, D, L;
    };
    const std::array<Shape, 4> shapes = {{{2, 33, 136}, {3, 40, 2056}, {2, 700, 4104}, {1, 9, 9000}}};
    ViewOptions padded;
    padded.pad[0] = 1, padded.pad[1] = 3, padded.pad[2] = 8;
    std::uint64_t index = 0;
    for (const auto& shape : shapes)
        for (int width : {1, 2, 3, 4, 5, 8, 9}) {
            const int turn = static_cast<int>(index);
            const DType x = turn % 3 == 0 ? DType::bf16 : (turn % 3 == 1 ? DType::fp16 : DType::fp32);
            const bool states = width > 1 && turn % 3 != 0;
            BackwardVariant v{Layout::channel_first, {x, turn % 4 == 2 ? DType::fp32 : x}, width, Activation::silu,
                              turn % 4 != 3, false, states, states && turn % 2 == 0, turn % 5 != 4};
            const ViewOptions view = turn % 2 ? padded : ViewOptions{};
            const Run r{shape.B, shape.D, shape.L, view, turn % 3 == 1 ? padded : view, view, ViewOptions{},
                        turn % 2 == 0, turn % 3 == 0, states};
            const std::uint32_t seed = case_seed(37, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: channel-first rows off 16-byte boundaries, x, dout and dx misaligned alone and together") {
    // Rows that do not start at a 16-byte boundary (vector_ok == 0): in 16-bit the
    // shifted-rows module (Variant::shifted_rows: two aligned loads and a shift a vector,
    // the widest aligned stores, element by element at a row's ends), and with
    // CC1D_DISABLE_SHIFTED_ROWS the main module's element-wise loads and stores, which fp32
    // always takes. Odd lengths move each row's start by another offset; x, dout and dx are
    // misaligned one at a time and together (a tensor at a boundary then takes the same
    // path); both stagings of 16-bit tiles; rows of 17 (a partial last vector in 16-bit),
    // 1031 and 4099 steps. Contiguous tensors of odd lengths (every row at x's offset, so
    // the module's tiles follow the rows' own boundaries with aligned dout and dx too):
    // 4095 (a tile of 512 vectors, 4 rounds of 128 threads, and a row's tail of up to 6
    // positions after it), 1029 at width 16, 5 (one vector holds the whole row, or all
    // but its tail), with states at both ends, 8190 (two tiles of 512 vectors a row), 1023
    // (128 vectors, 2 rounds of 64) and 2047 at width 2 with both states (tails of up to 6
    // positions, past the K after the tile); 1024 with x, dout and dx one element off
    // (every row a tail of one position, its dfinal).
    std::uint64_t index = 0;
    const ViewOptions aligned = view_kind(0, false), by_one = view_kind(2, false), strided_by_three = view_kind(3, false);
    for (const char* main_module : {"0", "1"})
        for (const char* gbps : {"3000", "5000"}) {
            ScopedEnv element_wise("CC1D_DISABLE_SHIFTED_ROWS", main_module);
            ScopedEnv memory("CC1D_MEMORY_GBPS", gbps);
            for (DType x : {DType::fp32, DType::bf16, DType::fp16})
                for (int turn = 0; turn < 11; ++turn) {
                    if (x == DType::fp32 && main_module[0] == '1') continue;   // (fp32: the same module either way)
                    const auto at = static_cast<std::size_t>(turn);
                    const int width = std::array<int, 11>{2, 4, 5, 8, 4, 16, 3, 4, 2, 3, 2}[at];
                    const Activation act = (turn + static_cast<int>(index)) % 2 == 0 ? Activation::silu : Activation::none;
                    BackwardVariant v{Layout::channel_first, {x, x}, width, act, true, turn == 3, turn == 1 || turn >= 4,
                                      turn == 2 || turn == 4 || turn == 6 || turn >= 9, true};
                    const std::int64_t L =
                        std::array<std::int64_t, 11>{1031, 4099, 17, 1031, 4095, 1029, 5, 8190, 1023, 1024, 2047}[at];
                    const ViewOptions views[11][3] = {{by_one, aligned, aligned},
                                                     {aligned, strided_by_three, aligned},
                                                     {aligned, aligned, by_one},
                                                     {strided_by_three, by_one, strided_by_three},
                                                     {aligned, aligned, aligned},
                                                     {aligned, aligned, aligned},
                                                     {aligned, aligned, aligned},
                                                     {aligned, aligned, aligned},
                                                     {aligned, aligned, aligned},
                                                     {by_one, by_one, by_one},
                                                     {aligned, aligned, aligned}};
                    const auto& view = views[turn];
                    const Run r{L > 2000 ? 1 : 3, L > 2000 ? 300 : 37, L, view[0], view[1], view[2], aligned, turn % 2 == 0,
                                turn == 2, v.initial_states};
                    const std::uint32_t seed = case_seed(73, index++);
                    INFO("CC1D_DISABLE_SHIFTED_ROWS=", main_module, " | CC1D_MEMORY_GBPS=", gbps, " | ", v.name(), " | ",
                         r.name(), " | seed ", seed);
                    run_backward_case(v, r, seed);
                }
        }
}

TEST_CASE("backward: fp32 channel-first walks without SiLU, dout buffers alternating by unit") {
    // Without SiLU the fp32 kernel's dx pass reads dout from the staged tile while the next
    // unit stages its dout into the other of two buffers (bwd_channel_first.cu,
    // BF_G_IS_DOUT). Walks of 2 units (calls of 2 units a channel take one block): two
    // tiles of one row (dx at the first tile's end reads the second's dout halo), and two
    // batch rows of one tile each; lengths even and odd, widths up to 16, seq_idx and
    // states rotated, contiguous and rotated views. Small enough for the sanitizers.
    MainBackwardKernelsOnly main_kernels;   // calls this small would take bwd_small.cu
    std::uint64_t index = 0;
    for (const auto& shape : std::vector<std::array<std::int64_t, 2>>{{1, 1000}, {2, 500}, {1, 999}, {2, 131}})
        for (bool seq_idx : {false, true}) {
            const int turn = static_cast<int>(index);
            const int width = std::array<int, 4>{4, 16, 3, 2}[static_cast<std::size_t>(turn % 4)];
            BackwardVariant v{Layout::channel_first, {DType::fp32, DType::fp32}, width, Activation::none, turn % 3 != 0,
                              seq_idx, turn % 2 == 0, turn % 3 != 1, turn % 4 != 3};
            const int views = turn % 2 == 0 ? 0 : turn;   // contiguous (whole vectors) or rotated
            const Run r{shape[0], 37, shape[1], view_kind(views, false), view_kind(views ? views + 1 : 0, false),
                        view_kind(views ? views + 2 : 0, false), view_kind(views, false), turn % 2 == 1, turn == 5,
                        v.initial_states};
            const std::uint32_t seed = case_seed(22, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: fp32 channel-first rows of 129 to 256 vectors, one tile of 128 threads with SiLU, two of 64 without") {
    // Such rows take two tiles of 64 threads without SiLU and one of 128 with it
    // (backward_channel_first.cpp, size_tile; docs/perf.md entry 154): 1024 positions fill
    // the tile, 513 leave all but one position of its second half past the row end, 1021
    // end inside a vector. SiLU (g in registers) at widths 2 to 4, without it 3 to 5 with
    // seq_idx; states, dtypes of the weight and the four kinds of view rotated.
    MainBackwardKernelsOnly main_kernels;   // (the small-call module takes whole-vector rows this short)
    std::uint64_t index = 0;
    for (const auto& shape : std::vector<std::array<std::int64_t, 3>>{{2, 45, 1024}, {3, 21, 513}, {1, 30, 1021}})
        for (Activation act : {Activation::silu, Activation::none}) {
            const int turn = static_cast<int>(index);
            const int width = std::array<int, 6>{2, 5, 3, 4, 4, 3}[static_cast<std::size_t>(turn)];
            const bool states = turn % 3 != 0;
            BackwardVariant v{Layout::channel_first, {DType::fp32, turn % 2 ? DType::bf16 : DType::fp32}, width, act,
                              turn % 4 != 3, act == Activation::none && turn % 2 == 1, states, states && turn % 2 == 0,
                              turn % 5 != 4};
            const Run r{shape[0], shape[1], shape[2], view_kind(turn, false), view_kind(turn + 1, false),
                        view_kind(turn + 2, false), view_kind(turn, false), turn % 2 == 0, turn % 3 == 1, states};
            const std::uint32_t seed = case_seed(39, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: fp32 channel-first calls of many channels, walks split into parts of at most 4 units") {
    // 3 x 4800 x 2050 fp32: 9 (batch, tile) units a channel, channels for 3 waves on GPUs
    // of up to 200 multiprocessors, so the plan splits each channel's walk into 3 parts
    // (backward_channel_first.cpp), summed within thread-block clusters where the device
    // launches them, else by the reduce kernel or by atomics; with and without SiLU,
    // deterministic and atomic, views rotated.
    std::uint64_t index = 0;
    for (Activation act : {Activation::none, Activation::silu})
        for (bool deterministic : {true, false}) {
            const int turn = static_cast<int>(index);
            BackwardVariant v{Layout::channel_first, {DType::fp32, DType::fp32}, turn % 2 ? 3 : 4, act, true, false,
                              turn == 1, turn == 2, deterministic};
            const Run r{3, 4800, 2050, view_kind(turn, false), view_kind(turn + 1, false), view_kind(turn + 2, false),
                        view_kind(0, false), turn % 2 == 0, turn == 3, v.initial_states};
            const std::uint32_t seed = case_seed(20, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: channel-first parts summed within thread-block clusters, the bits of the reduce kernel's sum") {
    // Calls whose channels the plan splits into 2-8 parts (backward_channel_first.cpp): on
    // a device that launches clusters and holds them all at once, one launch whose
    // clusters add a channel's parts (CC1D_DW_CLUSTER; seen in the call's launch count).
    // Each call runs so and again with clusters off (partial rows and the reduce kernel,
    // or atomics), both against the fp64 reference; the two add the parts in the same
    // order, so in deterministic mode dweight/dbias are bit-identical, and dx always is.
    // Every dtype, features, the dweight dtype, accumulate and the views rotated; lengths
    // not a multiple of a vector among them.
    struct Shape {
        std::int64_t B, D, L;
        DType x;
    };
    const std::vector<Shape> shapes = {{4, 256, 4096, DType::bf16}, {4, 256, 4096, DType::fp32}, {3, 100, 3001, DType::fp16},
                                       {2, 400, 2050, DType::fp32}, {4, 130, 2048, DType::bf16}, {5, 300, 1999, DType::bf16},
                                       {2, 61, 4103, DType::fp16},  {3, 200, 1500, DType::fp32}, {8, 64, 2048, DType::fp16},
                                       {7, 50, 1000, DType::bf16}};
    const bool device_clusters = gpu().cluster_launches(gpu().current_device());
    std::uint64_t index = 0;
    int clustered = 0;
    for (const Shape& s : shapes) {
        const int turn = static_cast<int>(index);
        const int width = std::array<int, 4>{4, 2, 3, 5}[static_cast<std::size_t>(turn % 4)];
        BackwardVariant v{Layout::channel_first, {s.x, turn % 3 == 2 ? DType::fp32 : s.x}, width,
                          turn % 2 ? Activation::silu : Activation::none, turn % 4 != 3, turn % 3 == 1,
                          turn % 3 == 2, turn % 4 == 0, turn != 5};
        const Run r{s.B, s.D, s.L, view_kind(turn, false), view_kind(turn + 1, false), view_kind(turn + 2, false),
                    view_kind(0, false), turn % 2 == 0, turn % 3 == 0, v.initial_states};
        const std::uint32_t seed = case_seed(29, index++);
        std::mt19937 rng(seed);
        BackwardTensors t(v, r, rng);
        const BackwardArgs args = t.args(v, r, true);
        REQUIRE_FALSE(takes_small_backward_kernel(args));
        INFO(v.name(), " | ", r.name(), " | seed ", seed);
        const auto want = reference::backward(t.args(v, r, false));
        const auto tol = reference::tolerance_for(v.dtypes.x);
        const auto reduction = reduction_tolerance_in(t.dweight.dtype(), r.B * r.L);
        std::vector<unsigned char> dx_bits, dweight_bits, dbias_bits;
        for (bool clusters_off : {false, true}) {
            const char* path = clusters_off ? "clusters off" : "as planned";
            INFO(path);
            std::optional<ScopedEnv> off;
            if (clusters_off) off.emplace("CC1D_DISABLE_CLUSTERS", "1");
            t.reset_outputs();
            const std::uint64_t launches_before = runtime().stats().launches;
            if (!call_ok([&] { runtime().backward(args); })) break;
            // In clusters: the main kernel alone (after the seq masks' kernel with seq_idx).
            const bool in_clusters = runtime().stats().launches - launches_before == (v.seq_idx ? 2u : 1u);
            if (clusters_off) CHECK_FALSE(in_clusters);
            else clustered += in_clusters;
            check_tensor("dx", t.dx, want.dx, tol);
            check_tensor("dweight", t.dweight, plus(t.prior_dweight, want.dweight), reduction);
            if (v.bias) check_tensor("dbias", t.dbias, plus(t.prior_dbias, want.dbias), reduction);
            if (r.want_dinit) check_tensor("dinitial_states", t.dinitial_states, want.dinitial_states, tol);
            t.dx.download(), t.dweight.download(), t.dbias.download();
            if (!clusters_off) {
                dx_bits = t.dx.host_bytes(), dweight_bits = t.dweight.host_bytes(), dbias_bits = t.dbias.host_bytes();
                continue;
            }
            CHECK_MESSAGE(t.dx.host_bytes() == dx_bits, "dx differs between the two paths");
            if (v.deterministic) {
                CHECK_MESSAGE(t.dweight.host_bytes() == dweight_bits, "dweight differs between the two paths");
                CHECK_MESSAGE(t.dbias.host_bytes() == dbias_bits, "dbias differs between the two paths");
            }
        }
    }
    // The shapes are 2-8 parts on GPUs of 100-150 multiprocessors; where clusters run, most
    // take them (on an H100 all ten).
    if (device_clusters) CHECK_MESSAGE(clustered >= 8, clustered << " of " << shapes.size() << " calls in clusters");
    else MESSAGE("this device launches no thread-block clusters: both runs took the reduce kernel");
}

TEST_CASE("backward: channel-last calls of mid size walked in 128-step chunks") {
    // 8 x 2051 x 1023: the wave-fitting chunk is under 128 steps and 128-step chunks keep
    // the grid at 1.5 blocks per multiprocessor or more (backward_channel_last.cpp), on
    // GPUs of 108 to ~180 multiprocessors; odd channels and an odd length leave a partial
    // channel group and a partial last chunk.
    std::uint64_t index = 0;
    for (DType x : {DType::bf16, DType::fp16})
        for (int width : {2, 3, 4}) {
            const int turn = static_cast<int>(index);
            BackwardVariant v{Layout::channel_last, {x, x}, width, turn % 2 ? Activation::silu : Activation::none, true,
                              false, turn % 3 == 0, turn % 3 == 1, turn != 4};
            const Run r{8, 2051, 1023, view_kind(turn, true), view_kind(turn + 1, true), view_kind(turn + 2, true),
                        view_kind(0, false), turn % 2 == 0, false, turn % 3 == 0};
            const std::uint32_t seed = case_seed(15, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: channel-last fp32 calls of long walks, walked in short ones over several waves") {
    // 2 x 2051 x 20011 fp32: one wave of walks would be 528-776 steps long at width 4 and
    // 272-408 at width 2 on GPUs of 108 to 160 multiprocessors, so the plan walks 128 and
    // 64 steps in 4-6 waves (backward_channel_last.cpp) where no tail of short walks comes
    // (here: none, CC1D_DISABLE_BACKWARD_TAIL); the odd channels and length leave a partial
    // channel group and a partial last chunk. Width 4: SiLU, both states, contiguous
    // (vector path), deterministic; width 2: a strided x (element path), atomic, into a
    // caller's workspace of the queried size (which must cover the extra partial rows).
    ScopedEnv no_tail("CC1D_DISABLE_BACKWARD_TAIL", "1");
    std::uint64_t index = 0;
    for (const int width : {4, 2}) {
        const bool first = index == 0;
        BackwardVariant v{Layout::channel_last, {DType::fp32, DType::fp32}, width,
                          first ? Activation::silu : Activation::none, true, false, first, first, first};
        const Run r{2, 2051, 20011, view_kind(first ? 0 : 1, true), view_kind(0, true), view_kind(0, true),
                    view_kind(0, false), first, false, v.initial_states};
        const std::uint32_t seed = case_seed(24, index++);
        INFO(v.name(), " | ", r.name(), " | seed ", seed);
        run_backward_case(v, r, seed, !first);
    }
}

TEST_CASE("backward: channel-last long walks with a tail of short ones") {
    // 2 x 1001 x 21011: fp32, and 16-bit past width 4, walk at least 256 steps in one wave
    // on GPUs of 100 to 163 multiprocessors, so each row's last 2,624 steps go to 41 walks
    // of 64 (the long ones then 232-368 steps) whose blocks run after the long walks'
    // (backward_channel_last.cpp, bl_unit_of): the long chunks end at the tail's start,
    // not at a multiple of their length, and a part may hold long and tail units. fp32 width 4 with SiLU, seq_idx and both states
    // (the row's first chunk walks into the initial states, the tail's last into dfinal),
    // contiguous, deterministic; bf16 width 8 with SiLU, atomic, into a caller's workspace
    // of the queried size (the tail's partial rows); fp16 width 5 with seq_idx, strided
    // and misaligned views (element path), accumulating into x's dtype; fp32 width 4 with
    // SiLU without seq_idx, padded and misaligned views, accumulating (a call the drain
    // rule walks in short walks where its kernel holds more blocks an SM than the wave
    // plans; on sm_90 it holds 4). The plan asks the driver how many blocks an SM holds
    // (Launcher::resident_blocks).
    struct Call {
        DType x;
        int width;
        bool silu, seq_idx, states, deterministic, caller_workspace;
        int views;
    };
    const Call calls[] = {{DType::fp32, 4, true, true, true, true, false, 0},
                          {DType::bf16, 8, true, false, false, false, true, 0},
                          {DType::fp16, 5, false, true, false, true, false, 3},
                          {DType::fp32, 4, true, false, false, true, false, 1}};
    std::uint64_t index = 0;
    for (const Call& c : calls) {
        const BackwardVariant v{Layout::channel_last, {c.x, c.x}, c.width, c.silu ? Activation::silu : Activation::none,
                                true, c.seq_idx, c.states, c.states, c.deterministic};
        const bool strided = c.views != 0;
        const Run r{2, 1001, 21011, view_kind(c.views, true), view_kind(strided ? c.views - 1 : 0, true),
                    view_kind(strided ? c.views - 2 : 0, true), view_kind(0, false), !strided, strided, c.states};
        const std::uint32_t seed = case_seed(72, index++);
        INFO(v.name(), " | ", r.name(), " | seed ", seed);
        run_backward_case(v, r, seed, c.caller_workspace);
    }
}

TEST_CASE("backward: channel-last calls below 2^24 elements, through the tile kernel") {
    // Up to width 4 without states, calls below 2^24 elements run the tile
    // kernel (bwd_channel_last_tile.cu: tiles of 64 channels of 16-bit x or 32 of fp32 by
    // 64 steps, blocks walking several tiles). Channels past a whole tile (1001, 130, 65,
    // 3: element staging and stores), lengths 1 to 4099 (partial last tiles, a walk
    // crossing batch rows), every dtype and width and both activations, views rotated
    // (misaligned and strided ones stage element by element too), deterministic and
    // atomic, dweight fp32 or x's dtype, accumulate. Small enough for the sanitizers.
    MainBackwardKernelsOnly main_kernels;   // the short calls here would take bwd_small.cu
    struct Shape {
        std::int64_t B, D, L;
    };
    const Shape shapes[] = {{3, 1001, 777}, {2, 64, 65},  {5, 130, 1031}, {1, 512, 4099}, {4, 65, 1},  {2, 3, 300},
                            {1, 256, 64},   {6, 192, 129}, {2, 33, 517},   {3, 96, 2000},  {1, 32, 33}, {2, 1000, 250}};
    const DType dtypes[] = {DType::bf16, DType::fp16, DType::fp32};
    std::uint64_t index = 0;
    for (const Shape& shape : shapes) {
        const int turn = static_cast<int>(index);
        const DType x = dtypes[turn % 3];
        BackwardVariant v{Layout::channel_last, {x, x}, turn % 4 + 1, (turn / 3) % 2 ? Activation::silu : Activation::none,
                          turn != 5, false, false, false, turn % 4 != 2};
        const int views = turn % 3 == 1 ? 0 : turn;   // contiguous (vector tiles) or rotated
        const Run r{shape.B, shape.D, shape.L, view_kind(views, true), view_kind(views ? views + 1 : 0, true),
                    view_kind(views ? views + 2 : 0, true), view_kind(0, false), turn % 2 == 0, turn % 3 == 2, false};
        const std::uint32_t seed = case_seed(26, index++);
        INFO(v.name(), " | ", r.name(), " | seed ", seed);
        run_backward_case(v, r, seed);
    }
}

TEST_CASE("backward: channel-last seq_idx through the tile kernel, segments inside one sequence and across several") {
    // The tile kernel with seq_idx (up to width 4 without states): a segment of a tile
    // (one warp, 16 own steps) whose walk reads ids of one sequence walks without comparing
    // them, one whose own steps are all padding stores zeros, the others test each term's
    // two ids in the masks its warp voted. Sequences up to half a row long between
    // short ones and padding (random_seq_idx; odd lengths also reuse an earlier id), so
    // segments come inside one, across several, in padding and at row ends; channels past a
    // whole tile (element staging), views rotated, every dtype and width, both activations
    // and modes. Each call also runs through the register walk (run_backward_case). Small
    // enough for the sanitizers.
    MainBackwardKernelsOnly main_kernels;   // the short calls here would take bwd_small.cu
    struct Shape {
        std::int64_t B, D, L;
    };
    const Shape shapes[] = {{2, 523, 2053}, {3, 1001, 777}, {1, 64, 4099}, {2, 130, 1031}, {4, 65, 67}, {2, 96, 300},
                            {1, 256, 2048}, {3, 32, 129}};
    const DType dtypes[] = {DType::bf16, DType::fp16, DType::fp32};
    std::uint64_t index = 0;
    for (const Shape& shape : shapes)
        for (int silu = 0; silu < 2; ++silu) {
            const int turn = static_cast<int>(index);
            const DType x = dtypes[turn % 3];
            const BackwardVariant v{Layout::channel_last, {x, x}, turn % 4 + 1, silu ? Activation::silu : Activation::none,
                                    turn % 5 != 2, true, false, false, turn % 4 != 1};
            // Contiguous (vector tiles; fp32 takes the tile kernel only so) or rotated.
            const int views = x != DType::bf16 ? 0 : turn;
            const Run r{shape.B, shape.D, shape.L, view_kind(views, true), view_kind(views ? views + 1 : 0, true),
                        view_kind(views ? views + 2 : 0, true), view_kind(0, false), turn % 2 == 0, turn % 3 == 2, false};
            const std::uint32_t seed = case_seed(40, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: channel-last rows off 16-byte boundaries, the tile kernel's module of such rows and its main one") {
    // Tile kernel calls (up to width 4 without states) whose rows along D are not whole
    // 16-byte vectors run the module of such rows (Variant::shifted_rows): every tile's
    // vectors through registers, two aligned loads and a shift each inside a row, element
    // by element at its ends (cc1d_load_tile_rows_any), dx element by element; with
    // CC1D_DISABLE_SHIFTED_ROWS the main module, element by element. D of 1001 and 2051
    // (every row at another offset), 5 and 7 (less than a vector: no vector whole), 17 and
    // 23 (one whole vector at most), 130 (rows on 4-byte boundaries), 200 and 64 (whole
    // vectors, one tensor misaligned by an element or three); x, dout and dx misaligned
    // alone and together; partial last tiles, seq_idx, both activations and modes, every
    // dtype (fp32 calls of such rows take the register walk) and width. Each call also runs
    // through the register walk (run_backward_case).
    // Small enough for the sanitizers.
    MainBackwardKernelsOnly main_kernels;   // the short calls here would take bwd_small.cu
    struct Shape {
        std::int64_t B, D, L;
    };
    const Shape shapes[] = {{3, 1001, 777}, {1, 2051, 300}, {2, 5, 129}, {3, 7, 1031}, {2, 17, 517},
                            {4, 23, 64},    {2, 130, 259},  {1, 200, 2049}, {2, 64, 65}};
    const DType dtypes[] = {DType::bf16, DType::fp16, DType::fp32};
    std::uint64_t index = 0;
    for (const char* main_module : {"0", "1"}) {
        ScopedEnv element_wise("CC1D_DISABLE_SHIFTED_ROWS", main_module);
        for (const Shape& shape : shapes)
            for (int silu = 0; silu < 2; ++silu) {
                const int turn = static_cast<int>(index);
                const DType x = dtypes[turn % 3];
                const BackwardVariant v{Layout::channel_last, {x, x}, turn % 4 + 1, silu ? Activation::silu : Activation::none,
                                        turn % 5 != 2, turn % 3 == 1, false, false, turn % 4 != 1};
                // Misaligned by one element (kind 2) or strided and by three (kind 3): x,
                // dout and dx one at a time, then all three.
                const int odd = 2 + turn % 2, which = turn % 4;
                auto kind = [&](int tensor) { return view_kind(which == 3 || which == tensor ? odd : 0, true); };
                const Run r{shape.B, shape.D, shape.L, kind(0), kind(1), kind(2), view_kind(0, false), turn % 2 == 0,
                            turn % 3 == 2, false};
                const std::uint32_t seed = case_seed(41, index++);
                INFO("CC1D_DISABLE_SHIFTED_ROWS=", main_module, " | ", v.name(), " | ", r.name(), " | seed ", seed);
                run_backward_case(v, r, seed);
            }
    }
}

TEST_CASE("backward: channel-last fp32 rows of whole 16-byte vectors through the tile kernel") {
    // fp32 calls take the tile kernel only with rows of whole 16-byte vectors (takes_tile):
    // contiguous views, D a multiple of 4. Its copies (cc1d_copy_tile_rows_async in the
    // hoisted form) stage tiles reaching before a row's start (the K rows before it: zeros)
    // and past its end (partial last tiles, lengths 1 to 4099), channel groups of 32 with a
    // partial last one (element staging beside vector tiles: 36, 68, 100, 200 channels);
    // widths 1-4, both activations, deterministic and atomic, dweight fp32 or x's dtype,
    // accumulate. Small enough for the sanitizers.
    MainBackwardKernelsOnly main_kernels;   // the short calls here would take bwd_small.cu
    struct Shape {
        std::int64_t B, D, L;
    };
    const Shape shapes[] = {{2, 36, 1031}, {3, 64, 65}, {1, 100, 129}, {2, 32, 3},
                            {4, 96, 1},    {1, 256, 4099}, {5, 68, 64}, {2, 200, 191}};
    std::uint64_t index = 0;
    for (const Shape& shape : shapes) {
        const int turn = static_cast<int>(index);
        const BackwardVariant v{Layout::channel_last, {DType::fp32, DType::fp32}, turn % 4 + 1,
                                (turn / 2) % 2 ? Activation::silu : Activation::none, turn != 3, false, false, false,
                                turn % 3 != 1};
        const Run r{shape.B, shape.D, shape.L, view_kind(0, true), view_kind(0, true), view_kind(0, true),
                    view_kind(0, false), turn % 2 == 0, turn % 3 == 2, false};
        const std::uint32_t seed = case_seed(38, index++);
        INFO(v.name(), " | ", r.name(), " | seed ", seed);
        run_backward_case(v, r, seed);
    }
}

TEST_CASE("backward: channel-last calls of 2^24 to 2^27 elements, tile kernel and register walk") {
    // The tile kernel runs up to 2^27 elements in 16-bit and 2^25 in fp32 (takes_tile), the
    // register walk past them; the unit plan tests say which call takes which.
    MainBackwardKernelsOnly main_kernels;
    struct Call {
        std::int64_t B, D, L;
        DType x;
        int width;
        Activation act;
    };
    const Call calls[] = {{1, 4096, 4096, DType::bf16, 3, Activation::silu},    // 2^24: tile
                          {2, 2048, 4096, DType::fp16, 4, Activation::silu},    // 2^24: tile
                          {8, 2048, 1024, DType::fp32, 4, Activation::silu},    // 2^24: tile
                          {8, 2048, 2048, DType::bf16, 4, Activation::silu},    // 2^25: tile
                          {2, 4096, 4096, DType::fp32, 3, Activation::none},    // 2^25: tile
                          {2, 4097, 8192, DType::fp16, 2, Activation::none},    // 2^26 and more, rows off 16 bytes: tile
                          {2, 4096, 4100, DType::fp32, 4, Activation::silu},    // just past 2^25: walk
                          {1, 16385, 8192, DType::bf16, 3, Activation::none}};  // just past 2^27: walk
    std::uint64_t index = 0;
    for (const Call& c : calls) {
        BackwardVariant v{Layout::channel_last, {c.x, c.x}, c.width, c.act, true, false, false, false, index != 1};
        const Run r{c.B, c.D, c.L, view_kind(0, true), view_kind(0, true), view_kind(0, true), view_kind(0, false),
                    index == 2, false, false};
        const std::uint32_t seed = case_seed(34, index++);
        INFO(v.name(), " | ", r.name(), " | seed ", seed);
        run_backward_case(v, r, seed);
    }
}

TEST_CASE("backward: a channel-last call compiles only the module it runs, the tile kernel's or the walk's") {
    // The tile kernel and the register walk are modules of their own (Variant::tiled): a
    // call that takes one loads that one alone. A Runtime on a fresh cache folder: an fp32
    // call of rows of whole 16-byte vectors (the tile kernel) compiles one module; a call of
    // 1001 channels (the walk) one more; the first call again none, from memory.
    MainBackwardKernelsOnly main_kernels;
    gpu();
    Runtime rt(RuntimeOptions{temporary_directory(), true, ""});
    const BackwardVariant v{Layout::channel_last, {DType::fp32, DType::fp32}, 3, Activation::silu, true, false, false, false, true};
    auto run = [&](std::int64_t D, std::uint64_t index) {
        const Run r{2, D, 1024, view_kind(0, true), view_kind(0, true), view_kind(0, true), view_kind(0, false),
                    true, false, false};
        const std::uint32_t seed = case_seed(35, index);
        INFO(v.name(), " | ", r.name(), " | seed ", seed);
        run_backward_case(v, r, seed, false, false, &rt);
        return rt.stats();
    };
    const Stats tile = run(1024, 0);
    CHECK(tile.compiles == 1);
    const Stats walk = run(1001, 1);
    CHECK(walk.compiles == 2);
    const Stats again = run(1024, 2);
    CHECK(again.compiles == 2);
    CHECK(again.memory_hits == walk.memory_hits + 1);
    CHECK(again.launches > walk.launches);
}

TEST_CASE("backward: channel-last seq_idx with long sequences, batches inside one and across several") {
    // 2 x 523 x 2053: sequences up to half a row long (random_seq_idx) between short ones
    // and padding, so the walk's batches come inside one sequence (walked without
    // comparing ids, bl_batch_sequence), across several and in padding; 16-bit widths 3-4
    // hold 4 channels a thread (3 blocks per multiprocessor), 5-8 two, fp32 two and one;
    // 523 channels leave a partial channel group.
    run_long_sequence_cases(Layout::channel_last, 2, 523, 2053, {3, 4, 5, 8}, 16);
}

TEST_CASE("backward: channel-first seq_idx with long sequences, warps of vectors inside one and across several") {
    // 2 x 37 x 4099: sequences up to half a row long (random_seq_idx) between short ones
    // and padding, so a warp's vectors (256 positions in 16-bit, 128 in fp32) come inside
    // one sequence (past width 4 both passes then leave the masks untested,
    // bf_warp_untested; widths 2 and 4 test them all), across several and in padding;
    // width 16 in 16-bit has two-byte masks and two halo vectors after a vector (its dx
    // vote tests both); the row end leaves lanes of the last warp past it.
    run_long_sequence_cases(Layout::channel_first, 2, 37, 4099, {2, 4, 5, 16}, 27);
}

TEST_CASE("backward: small calls in one launch, 1 to 4 positions a thread, blocks of 1 to 256 channels") {
    // B·L from 1 (a block of 256 channels, one position each) to 1024 (one channel a
    // block, 4 positions a thread); D cuts the last block short; every feature at widths
    // 1, 4 and 16 (16: the window reaches past the row start on short rows). Each call
    // runs through the small-call kernel and again through the main kernels.
    const std::array<std::array<std::int64_t, 3>, 6> shapes = {
        {{1, 300, 1}, {3, 37, 5}, {2, 67, 33}, {5, 19, 100}, {4, 3, 256}, {3, 67, 341}}};
    std::uint64_t index = 0;
    for (const auto& [B, D, L] : shapes)
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (int width : {1, 4, 16}) {
                const int turn = static_cast<int>(index);
                const DTypePair dtypes = dtype_pairs()[static_cast<std::size_t>(turn) % dtype_pairs().size()];
                check_small_call(layout, dtypes, width, B, D, L, turn, case_seed(18, index++));
            }
}

TEST_CASE("backward: channel-first short rows of many channels, small-call kernel and main kernels") {
    // Rows of at most 128 positions, more than 2^17 elements (at most 2^19, so fp32 too):
    // channel-first calls at widths up to 4 take the small-call kernel there (one position
    // a thread on rows of 64, else two to eight, and up to sixteen in 16-bit); rows cross a
    // thread's positions (61, 97, 100, 127), D cuts the last block short (4001 with two
    // channels a block). Each call runs through the small-call kernel and again through the
    // main kernels.
    const std::array<std::array<std::int64_t, 3>, 9> shapes = {{{4, 1000, 128},
                                                               {2, 4001, 64},
                                                               {8, 515, 61},
                                                               {5, 300, 100},
                                                               {8, 300, 127},
                                                               {7, 600, 100},
                                                               {13, 300, 97},
                                                               {16, 200, 128},
                                                               {30, 100, 127}}};
    std::uint64_t index = 0;
    for (const auto& [B, D, L] : shapes)
        for (int width : {2, 3, 4}) {
            const int turn = static_cast<int>(index);
            // Past eight positions a thread only 16-bit x takes the small-call kernel.
            const std::size_t pair = B * L > 2048 ? 3 + static_cast<std::size_t>(turn) % 6
                                                  : static_cast<std::size_t>(turn) % dtype_pairs().size();
            check_small_call(Layout::channel_first, dtype_pairs()[pair], width, B, D, L, turn, case_seed(23, index++));
        }
}

TEST_CASE("backward: channel-last calls of few positions and many channels, small-call kernel and main kernels") {
    // At most 256 positions (B·L) past 2^17 elements: channel-last calls at widths up to 4
    // take the small-call kernel there (runs of a row in registers, several channels a
    // block), up to 2^18 elements over 129-256 positions and 2^19 over at most 128. Rows
    // end inside a run (41, 43, 97, 127), D cuts the last block short. Each call runs
    // through the small-call kernel and again through the main kernels.
    const std::array<std::array<std::int64_t, 3>, 6> shapes = {
        {{1, 4099, 97}, {3, 1500, 41}, {2, 2050, 64}, {2, 1031, 127}, {5, 1201, 43}, {1, 1023, 256}}};
    std::uint64_t index = 0;
    for (const auto& [B, D, L] : shapes)
        for (int width : {2, 3, 4}) {
            const int turn = static_cast<int>(index);
            const DTypePair dtypes = dtype_pairs()[static_cast<std::size_t>(turn) % dtype_pairs().size()];
            check_small_call(Layout::channel_last, dtypes, width, B, D, L, turn, case_seed(27, index++));
        }
}

TEST_CASE("backward: channel-first rows of whole 16-byte vectors in one launch, up to 4096 positions a channel") {
    // The small-call module's vector kernel (bwd_channel_first_vectors.cu): rows of whole vectors,
    // widths 1 to 4 without seq_idx or states, from one vector a channel (256 channels a
    // block) to 512 (two a thread: 4096 positions in 16-bit, 2048 in fp32), so both of its
    // forms (one vector a thread up to 256 a channel, two past that) run; D cuts the
    // last block short; views contiguous or padded by whole vectors (both take the kernel),
    // and one misaligned or padded by odd amounts in every fifth call (which must not).
    // Each call also runs with the vector kernel off and through the main kernels.
    struct Shape {
        std::int64_t B, D, L;
        bool fp32;   // fp32 x takes the kernel up to 2048 positions, 16-bit up to 4096
    };
    const std::array<Shape, 9> shapes = {{{1, 300, 8, true},
                                          {3, 37, 16, false},
                                          {2, 67, 64, true},
                                          {4, 37, 512, true},
                                          {4, 29, 512, false},
                                          {8, 21, 512, false},
                                          {1, 13, 4096, false},
                                          {3, 5, 1360, false},
                                          {5, 260, 24, true}}};
    ViewOptions padded;
    padded.pad[0] = 1, padded.pad[1] = 3, padded.pad[2] = 8;
    std::uint64_t index = 0;
    for (const auto& shape : shapes)
        for (int width : {1, 2, 3, 4}) {
            const int turn = static_cast<int>(index);
            const std::size_t pair = static_cast<std::size_t>(shape.fp32 ? turn % 9 : 3 + turn % 6);
            const DTypePair dtypes = dtype_pairs()[pair];
            const bool takes = turn % 5 != 4;
            const ViewOptions whole = turn % 2 ? padded : ViewOptions{};
            const ViewOptions other = takes ? whole : view_kind(2 + turn % 2, false);
            BackwardVariant v{Layout::channel_first, dtypes, width, turn % 2 ? Activation::silu : Activation::none,
                              turn % 4 != 3, false, false, false, turn % 3 != 0};
            const Run r{shape.B, shape.D, shape.L, whole, turn % 3 == 1 ? other : whole, turn % 3 == 2 ? other : whole,
                        ViewOptions{}, turn % 2 == 1, turn % 3 == 0, false};
            const std::uint32_t seed = case_seed(31, index++);
            INFO(v.name(), " | ", r.name(), " | seed ", seed);
            {
                std::mt19937 rng(seed);
                const BackwardTensors t(v, r, rng);
                CHECK_MESSAGE(takes_small_vector_kernel(t.args(v, r, true)) == (takes || turn % 3 == 0),
                              "the vector kernel should take exactly the calls of whole vectors");
            }
            run_backward_case(v, r, seed);
        }
}

TEST_CASE("backward: empty calls (B, D or L = 0) with seq_idx and states, empty tensors with null data") {
    // Nothing may read or write an empty tensor. B = 0 or L = 0: dweight and dbias get
    // zeros (or keep their contents with accumulate); L = 0: dinitial_states gets
    // dfinal_states.
    std::uint64_t index = 0;
    for (const auto& [B, D, L] : {std::array<std::int64_t, 3>{2, 67, 0}, {0, 67, 37}, {2, 0, 37}})
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (DType x : {DType::fp32, DType::bf16})
                for (int width : {2, 4}) {
                    const bool cl = layout == Layout::channel_last;
                    const int turn = static_cast<int>(index);
                    BackwardVariant v{layout, {x, x}, width, Activation::silu, true, true, true, true, turn % 2 == 0};
                    const Run r{B, D, L, view_kind(turn, cl), view_kind(turn + 1, cl), view_kind(turn + 2, cl),
                                view_kind(turn + 3, false), turn % 2 == 1, turn % 3 == 1, true};
                    const std::uint32_t seed = case_seed(17, index++);
                    INFO(v.name(), " | ", r.name(), " | seed ", seed);
                    run_backward_case(v, r, seed, false, true);
                }
}
