// Graph capture: forward, backward, update and varlen_forward recorded on a stream into a
// graph and replayed must give the eager results bit for bit (backward's atomic dweight
// path: dx bit for bit, dweight/dbias against the reference). Each kernel runs once
// eagerly first, so loading (and compiling) happens outside the capture. Update and
// varlen change their states, so the eager run and the replay get identical copies.
// Backward launches two or three kernels per call, overlapped where the device allows:
// the capture must keep their order.
#include <doctest/doctest.h>

#include "reference/reference.hpp"
#include "support/case_inputs.hpp"
#include "support/gpu_checks.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

// A stream of its own, destroyed on scope exit.
struct Stream {
    void* handle = gpu().create_stream();
    ~Stream() { gpu().destroy_stream(handle); }
};

// Records `call` on `stream`, replays the graph `replays` times and waits.
template <typename Call>
bool capture_and_replay(void* stream, int replays, Call&& call) {
    void* graph = nullptr;
    try {
        gpu().begin_capture(stream);
        call();
        graph = gpu().end_capture(stream);
        for (int i = 0; i < replays; ++i) gpu().launch_graph(graph, stream);
        gpu().synchronize_stream(stream);
    } catch (const Error& e) {
        FAIL_CHECK("graph capture failed: cc1d::Error(" << std::string(to_string(e.code())) << "): " << std::string(e.what()));
        if (graph) gpu().destroy_graph(graph);
        return false;
    }
    gpu().destroy_graph(graph);
    return true;
}

// Poisons `outputs` and makes sure the fill is done before the stream runs.
void poison_all(std::initializer_list<TestTensor*> outputs) {
    for (auto* t : outputs) t->poison();
    gpu().synchronize();
}

void check_same_bytes(const char* what, TestTensor& replayed, const std::vector<unsigned char>& eager) {
    replayed.download();
    CHECK_MESSAGE(replayed.host_bytes() == eager, std::string(what) << ": the replayed graph differs from the eager call");
}

// 2 x 67 x 1134 runs the main kernels, 2 x 67 x 129 the small-call kernel (forward_small.cpp).
void forward_case(Layout layout, DType dtype, bool seq_idx, std::int64_t L, std::uint32_t seed) {
    const bool cl = layout == Layout::channel_last;
    std::mt19937 rng(seed);
    const std::int64_t B = 2, D = 67, W = 4;
    TestTensor x(dtype, {B, D, L}, view_kind(0, cl)), weight(dtype, {D, W}), bias(dtype, {D});
    TestTensor seq(DType::int32, {B, L}), init(dtype, {B, D, W - 1}), final_states(dtype, {B, D, W - 1});
    TestTensor out(dtype, {B, D, L}, view_kind(1, cl));
    for (TestTensor* t : {&x, &weight, &bias, &init}) t->fill_random(rng);
    seq.fill_int(random_seq_idx(rng, B, L, false));
    ForwardArgs a;
    a.x = x.device_view(), a.weight = weight.device_view(), a.bias = bias.device_view(), a.out = out.device_view();
    a.activation = Activation::silu, a.initial_states = init.device_view(), a.final_states = final_states.device_view();
    if (seq_idx) a.seq_idx = seq.device_view();

    Stream stream;
    if (!call_ok([&] { runtime().forward(a, stream.handle); })) return;
    out.download(), final_states.download();
    const auto eager_out = out.host_bytes(), eager_final = final_states.host_bytes();
    ForwardArgs h = a;
    h.x = x.host_view(), h.weight = weight.host_view(), h.bias = bias.host_view(), h.initial_states = init.host_view();
    h.seq_idx = seq_idx ? seq.host_view() : Tensor{};
    check_tensor("eager out", out, reference::forward(h).out, reference::tolerance_for(dtype));

    poison_all({&out, &final_states});
    if (!capture_and_replay(stream.handle, 3, [&] { runtime().forward(a, stream.handle); })) return;
    check_same_bytes("out", out, eager_out);
    check_same_bytes("final_states", final_states, eager_final);
}

// B x L = 9 x 1031 has several parts per channel group, so the call launches the main
// kernel and the reduce kernel (deterministic) or the zeroing and the main kernel (atomic);
// channel-first 4 x 2048 has 4 parts a channel, summed within thread-block clusters in one
// launch on NVIDIA compute capability 9.0+ (backward_plan.cpp, sums_in_clusters);
// 2 x 129 is a small call, one launch of the small-call kernel (backward_small.cpp).
void backward_case(Layout layout, bool deterministic, std::int64_t B, std::int64_t L, std::uint32_t seed) {
    const bool cl = layout == Layout::channel_last;
    std::mt19937 rng(seed);
    const std::int64_t D = 67, W = 4;
    const DType dtype = DType::bf16;
    TestTensor x(dtype, {B, D, L}, view_kind(0, cl)), dout(dtype, {B, D, L}, view_kind(1, cl));
    TestTensor weight(dtype, {D, W}), bias(dtype, {D});
    TestTensor dx(dtype, {B, D, L}, view_kind(2, cl)), dweight(DType::fp32, {D, W}), dbias(DType::fp32, {D});
    for (TestTensor* t : {&x, &dout, &weight, &bias}) t->fill_random(rng);
    BackwardArgs a;
    a.x = x.device_view(), a.weight = weight.device_view(), a.bias = bias.device_view(), a.dout = dout.device_view();
    a.dx = dx.device_view(), a.dweight = dweight.device_view(), a.dbias = dbias.device_view();
    a.activation = Activation::silu, a.deterministic = deterministic;

    Stream stream;
    if (!call_ok([&] { runtime().backward(a, stream.handle); })) return;
    gpu().synchronize_stream(stream.handle);
    dx.download(), dweight.download(), dbias.download();
    const auto eager_dx = dx.host_bytes(), eager_dweight = dweight.host_bytes(), eager_dbias = dbias.host_bytes();
    BackwardArgs h = a;
    h.x = x.host_view(), h.weight = weight.host_view(), h.bias = bias.host_view(), h.dout = dout.host_view();
    const auto want = reference::backward(h);
    check_tensor("eager dx", dx, want.dx, reference::tolerance_for(dtype));

    poison_all({&dx, &dweight, &dbias});
    if (!capture_and_replay(stream.handle, 3, [&] { runtime().backward(a, stream.handle); })) return;
    check_same_bytes("dx", dx, eager_dx);
    if (deterministic) {
        check_same_bytes("dweight", dweight, eager_dweight);
        check_same_bytes("dbias", dbias, eager_dbias);
    } else {
        const auto reduction = reduction_tolerance_in(DType::fp32, B * L);
        check_tensor("replayed dweight", dweight, want.dweight, reduction);
        check_tensor("replayed dbias", dbias, want.dbias, reduction);
    }
}

void update_case(std::uint32_t seed) {
    std::mt19937 rng(seed);
    const std::int64_t B = 9, D = 67, T = 2, S = 6, W = 4, slots = 12;
    const DType dtype = DType::bf16;
    TestTensor x(dtype, {B, D, T}), weight(dtype, {D, W}), bias(dtype, {D}), out(dtype, {B, D, T});
    TestTensor eager_state(dtype, {slots, D, S}), graph_state(dtype, {slots, D, S});
    TestTensor seqlens(DType::int32, {B}), indices(DType::int32, {B});
    for (TestTensor* t : {&x, &weight, &bias, &eager_state}) t->fill_random(rng);
    graph_state.fill_values(eager_state.values());
    std::vector<std::int32_t> positions(static_cast<std::size_t>(B));
    for (auto& p : positions) p = std::uniform_int_distribution<std::int32_t>(0, 3 * S)(rng);
    seqlens.fill_int(positions);
    auto slot = permutation(rng, static_cast<std::int32_t>(slots));
    slot.resize(static_cast<std::size_t>(B));
    slot[3] = -1;
    indices.fill_int(slot);
    auto args = [&](const TestTensor& state) {
        UpdateArgs a;
        a.x = x.device_view(), a.weight = weight.device_view(), a.bias = bias.device_view(), a.out = out.device_view();
        a.conv_state = state.device_view(), a.cache_seqlens = seqlens.device_view(), a.conv_state_indices = indices.device_view();
        a.activation = Activation::silu;
        return a;
    };

    Stream stream;
    if (!call_ok([&] { runtime().update(args(eager_state), stream.handle); })) return;
    out.download(), eager_state.download();
    const auto eager_out = out.host_bytes();

    poison_all({&out});
    const UpdateArgs captured = args(graph_state);
    if (!capture_and_replay(stream.handle, 1, [&] { runtime().update(captured, stream.handle); })) return;
    check_same_bytes("out", out, eager_out);
    check_same_bytes("conv_state", graph_state, eager_state.host_bytes());
}

void varlen_case(Layout layout, std::uint32_t seed) {
    const bool cl = layout == Layout::channel_last;
    std::mt19937 rng(seed);
    const std::vector<std::int32_t> offsets = {0, 1, 4, 41, 1041, 1045};
    const std::int64_t N = 5, D = 67, W = 4, S = 3, slots = 7, total = offsets.back();
    const DType dtype = DType::fp16;
    TestTensor x(dtype, {D, total}, view_kind(0, cl)), weight(dtype, {D, W}), out(dtype, {D, total}, view_kind(0, cl));
    TestTensor eager_states(dtype, {slots, D, S}), graph_states(dtype, {slots, D, S});
    TestTensor cu(DType::int32, {N + 1}), indices(DType::int32, {N}), has(DType::int32, {N});
    for (TestTensor* t : {&x, &weight, &eager_states}) t->fill_random(rng);
    graph_states.fill_values(eager_states.values());
    cu.fill_int(offsets);
    indices.fill_int({4, -1, 0, 6, 2});
    has.fill_int({1, 1, 0, 1, 0});
    auto args = [&](const TestTensor& states) {
        VarlenForwardArgs a;
        a.x = x.device_view(), a.weight = weight.device_view(), a.out = out.device_view(), a.cu_seqlens = cu.device_view();
        a.conv_states = states.device_view(), a.cache_indices = indices.device_view(), a.has_initial_state = has.device_view();
        return a;
    };

    Stream stream;
    if (!call_ok([&] { runtime().varlen_forward(args(eager_states), stream.handle); })) return;
    out.download(), eager_states.download();
    const auto eager_out = out.host_bytes();

    poison_all({&out});
    const VarlenForwardArgs captured = args(graph_states);
    if (!capture_and_replay(stream.handle, 1, [&] { runtime().varlen_forward(captured, stream.handle); })) return;
    check_same_bytes("out", out, eager_out);
    check_same_bytes("conv_states", graph_states, eager_states.host_bytes());
}

}  // namespace

TEST_CASE("graph capture: forward replays bit-exactly") {
    std::uint64_t index = 0;
    for (std::int64_t L : {1134, 129})
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (bool seq_idx : {false, true}) {
                const std::uint32_t seed = case_seed(51, index++);
                INFO(std::string(to_string(layout)), " bf16 2x67x", L, " W=4 silu bias states seq_idx=", seq_idx,
                     " | seed ", seed);
                forward_case(layout, DType::bf16, seq_idx, L, seed);
            }
}

TEST_CASE("graph capture: backward replays bit-exactly (its one to three launches in order)") {
    std::uint64_t index = 0;
    for (const auto& [B, L] : {std::pair<std::int64_t, std::int64_t>{9, 1031}, {4, 2048}, {2, 129}})
        for (Layout layout : {Layout::channel_first, Layout::channel_last})
            for (bool deterministic : {true, false}) {
                const std::uint32_t seed = case_seed(54, index++);
                INFO(std::string(to_string(layout)), " bf16 ", B, "x67x", L, " W=4 silu bias deterministic=",
                     deterministic, " | seed ", seed);
                backward_case(layout, deterministic, B, L, seed);
            }
}

TEST_CASE("graph capture: update replays bit-exactly") {
    const std::uint32_t seed = case_seed(52, 0);
    INFO("bf16 W=4 circular + indices | seed ", seed);
    update_case(seed);
}

TEST_CASE("graph capture: varlen_forward replays bit-exactly") {
    std::uint64_t index = 0;
    for (Layout layout : {Layout::channel_first, Layout::channel_last}) {
        const std::uint32_t seed = case_seed(53, index++);
        INFO(std::string(to_string(layout)), " fp16 W=4 with states | seed ", seed);
        varlen_case(layout, seed);
    }
}
