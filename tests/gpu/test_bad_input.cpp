// Bad input through the public API: the Runtime must reject each case with
// invalid_argument or unsupported before launching anything, so every output stays
// poisoned and every state keeps its bytes.
#include <doctest/doctest.h>

#include <functional>

#include "support/case_inputs.hpp"
#include "support/gpu_checks.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

// Runs `call` expecting a rejection; `outputs` are poisoned first and must stay so,
// `states` must keep their contents.
void expect_rejected(const char* what, const std::function<void()>& call, std::initializer_list<TestTensor*> outputs,
                     std::initializer_list<TestTensor*> states = {}) {
    INFO(std::string(what));
    for (auto* t : outputs) t->poison();
    std::vector<std::vector<unsigned char>> before;
    for (auto* t : states) before.push_back(t->host_bytes());
    gpu().synchronize();
    try {
        call();
        FAIL_CHECK("accepted, expected invalid_argument or unsupported");
    } catch (const Error& e) {
        const bool code_ok = e.code() == ErrorCode::invalid_argument || e.code() == ErrorCode::unsupported;
        CHECK_MESSAGE(code_ok, "rejected with " << std::string(to_string(e.code())) << ": " << std::string(e.what()));
        MESSAGE("rejected: ", std::string(e.what()));
    }
    gpu().synchronize();
    for (auto* t : outputs) {
        t->download();
        CHECK_MESSAGE(t->all_poisoned(), "an output was written although the call was rejected");
    }
    std::size_t i = 0;
    for (auto* t : states) {
        t->download();
        CHECK_MESSAGE(t->host_bytes() == before[i++], "a state changed although the call was rejected");
    }
}

constexpr std::int64_t B = 2, D = 5, L = 33, W = 4;
const DType f = DType::fp32;

struct Inputs {
    std::mt19937 rng{case_seed(71, 0)};
    TestTensor x{f, {B, D, L}}, weight{f, {D, W}}, wide{f, {D, 17}}, narrow{f, {D, 1}}, bias{f, {D}};
    TestTensor seq{DType::int32, {B, L}}, seq_as_float{f, {B, L}}, init{f, {B, D, W - 1}}, init_too_long{f, {B, D, W}};
    TestTensor x_int{DType::int32, {B, D, L}}, dout{f, {B, D, L}}, dout_cl{f, {B, D, L}, view_kind(0, true)};
    Inputs() {
        for (TestTensor* t : {&x, &weight, &wide, &narrow, &bias, &seq_as_float, &init, &init_too_long, &dout, &dout_cl})
            t->fill_random(rng);
        seq.fill_int(std::vector<std::int32_t>(static_cast<std::size_t>(B * L), 0));
        x_int.fill_int(std::vector<std::int32_t>(static_cast<std::size_t>(B * D * L), 1));
    }
    ForwardArgs forward(TestTensor& out) const {
        ForwardArgs a;
        a.x = x.device_view(), a.weight = weight.device_view(), a.bias = bias.device_view(), a.out = out.device_view();
        return a;
    }
};

}  // namespace

TEST_CASE("bad input: forward") {
    Inputs in;
    TestTensor out(f, {B, D, L}), out_short(f, {B, D, L - 1}), out_half(DType::fp16, {B, D, L}), final_states(f, {B, D, W - 1});
    auto& rt = runtime();
    auto with = [&](auto change) { return [&rt, &in, &out, change] { ForwardArgs a = in.forward(out); change(a); rt.forward(a); }; };
    expect_rejected("width 17", with([&](ForwardArgs& a) { a.weight = in.wide.device_view(); }), {&out});
    expect_rejected("out shorter than x", [&] { rt.forward(in.forward(out_short)); }, {&out_short});
    expect_rejected("out in another dtype", [&] { rt.forward(in.forward(out_half)); }, {&out_half});
    expect_rejected("x without a unit stride", with([&](ForwardArgs& a) {
        a.x = Tensor(in.x.device_view().data, f, {B, D, 16}, {D * L, L, 2});
        a.out = Tensor(out.device_view().data, f, {B, D, 16}, {D * L, L, 2});
    }), {&out});
    expect_rejected("x of rank 2", with([&](ForwardArgs& a) { a.x = Tensor(in.x.device_view().data, f, {B * D, L}); }), {&out});
    expect_rejected("x of int32", with([&](ForwardArgs& a) { a.x = in.x_int.device_view(); }), {&out});
    expect_rejected("seq_idx of fp32", with([&](ForwardArgs& a) { a.seq_idx = in.seq_as_float.device_view(); }), {&out});
    expect_rejected("initial_states of width W instead of W-1",
                    with([&](ForwardArgs& a) { a.initial_states = in.init_too_long.device_view(); }), {&out});
    expect_rejected("final_states with width 1", with([&](ForwardArgs& a) {
        a.weight = in.narrow.device_view();
        a.final_states = Tensor(final_states.device_view().data, f, {B, D, 0});
    }), {&out, &final_states});
    expect_rejected("out overlapping x (in place)", with([&](ForwardArgs& a) { a.out = in.x.device_view(); }), {&out});
}

TEST_CASE("bad input: backward") {
    Inputs in;
    TestTensor dx(f, {B, D, L}), dx_short(f, {B, D, L - 1}), dweight(f, {D, W}), dweight_int(DType::int32, {D, W}), dbias(f, {D});
    TestTensor dinit(f, {B, D, W - 1});
    auto& rt = runtime();
    auto args = [&] {
        BackwardArgs a;
        a.x = in.x.device_view(), a.weight = in.weight.device_view(), a.bias = in.bias.device_view();
        a.dout = in.dout.device_view(), a.dx = dx.device_view(), a.dweight = dweight.device_view(), a.dbias = dbias.device_view();
        return a;
    };
    auto with = [&](auto change) { return [&rt, args, change] { BackwardArgs a = args(); change(a); rt.backward(a); }; };
    const std::initializer_list<TestTensor*> outputs = {&dx, &dweight, &dbias};
    expect_rejected("dx shorter than x", with([&](BackwardArgs& a) { a.dx = dx_short.device_view(); }), {&dx_short, &dweight, &dbias});
    expect_rejected("dbias without bias", with([&](BackwardArgs& a) { a.bias = {}; }), outputs);
    expect_rejected("dweight of int32", with([&](BackwardArgs& a) { a.dweight = dweight_int.device_view(); }), {&dx, &dweight_int, &dbias});
    expect_rejected("dinitial_states without initial_states", with([&](BackwardArgs& a) { a.dinitial_states = dinit.device_view(); }),
                    {&dx, &dweight, &dbias, &dinit});
    expect_rejected("dout in another layout than x", with([&](BackwardArgs& a) { a.dout = in.dout_cl.device_view(); }), outputs);
    expect_rejected("width 17", with([&](BackwardArgs& a) { a.weight = in.wide.device_view(); }), outputs);
}

TEST_CASE("bad input: update") {
    Inputs in;
    TestTensor token(f, {B, D, 1}), out(f, {B, D, 1}), state(f, {B, D, W - 1}), short_state(f, {B, D, W - 2});
    TestTensor half_state(DType::fp16, {B, D, W - 1}), one_row(f, {1, D, W - 1});
    TestTensor indices_float(f, {B}), seqlens_long(DType::int32, {B + 1});
    std::mt19937 rng(case_seed(71, 1));
    for (TestTensor* t : {&token, &state, &short_state, &half_state, &one_row, &indices_float}) t->fill_random(rng);
    seqlens_long.fill_int({0, 1, 2});
    auto& rt = runtime();
    auto args = [&] {
        UpdateArgs a;
        a.x = token.device_view(), a.weight = in.weight.device_view(), a.conv_state = state.device_view(), a.out = out.device_view();
        return a;
    };
    auto with = [&](auto change) { return [&rt, args, change] { UpdateArgs a = args(); change(a); rt.update(a); }; };
    expect_rejected("state shorter than W-1", with([&](UpdateArgs& a) { a.conv_state = short_state.device_view(); }), {&out},
                    {&short_state});
    expect_rejected("state in another dtype", with([&](UpdateArgs& a) { a.conv_state = half_state.device_view(); }), {&out},
                    {&half_state});
    expect_rejected("conv_state_indices of fp32", with([&](UpdateArgs& a) { a.conv_state_indices = indices_float.device_view(); }),
                    {&out}, {&state});
    expect_rejected("cache_seqlens of B+1 entries", with([&](UpdateArgs& a) { a.cache_seqlens = seqlens_long.device_view(); }),
                    {&out}, {&state});
    expect_rejected("fewer state rows than the batch", with([&](UpdateArgs& a) { a.conv_state = one_row.device_view(); }), {&out},
                    {&one_row});
}

TEST_CASE("bad input: varlen_forward") {
    Inputs in;
    const std::int64_t total = 20;
    TestTensor x(f, {D, total}), out(f, {D, total}), cu(DType::int32, {3}), cu_float(f, {3});
    TestTensor states(f, {2, D, W - 1}), short_states(f, {2, D, W - 2}), indices_long(DType::int32, {3});
    std::mt19937 rng(case_seed(71, 2));
    for (TestTensor* t : {&x, &states, &short_states}) t->fill_random(rng);
    cu.fill_int({0, 5, 20});
    cu_float.fill_values({0, 5, 20});
    indices_long.fill_int({0, 1, 0});
    auto& rt = runtime();
    auto args = [&] {
        VarlenForwardArgs a;
        a.x = x.device_view(), a.weight = in.weight.device_view(), a.out = out.device_view(), a.cu_seqlens = cu.device_view();
        return a;
    };
    auto with = [&](auto change) { return [&rt, args, change] { VarlenForwardArgs a = args(); change(a); rt.varlen_forward(a); }; };
    expect_rejected("cu_seqlens of fp32", with([&](VarlenForwardArgs& a) { a.cu_seqlens = cu_float.device_view(); }), {&out});
    expect_rejected("conv_states shorter than W-1", with([&](VarlenForwardArgs& a) { a.conv_states = short_states.device_view(); }),
                    {&out}, {&short_states});
    expect_rejected("x of rank 3", with([&](VarlenForwardArgs& a) { a.x = in.x.device_view(); }), {&out});
    expect_rejected("cache_indices of N+1 entries", with([&](VarlenForwardArgs& a) {
        a.conv_states = states.device_view();
        a.cache_indices = indices_long.device_view();
    }), {&out}, {&states});
    expect_rejected("cache_indices without conv_states",
                    with([&](VarlenForwardArgs& a) { a.cache_indices = indices_long.device_view(); }), {&out});
}
