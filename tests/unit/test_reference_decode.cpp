// The fp64 reference of update (decoding) and varlen_forward (packed prefill) against
// cases worked out by hand. W = width, K = W-1, w[K] multiplies the current token.
#include <doctest/doctest.h>

#include <vector>

#include "reference/reference.hpp"
#include "unit/host_tensors.hpp"

using namespace cc1d;
using namespace cc1d::unit;
using Values = std::vector<double>;

namespace {

void check_values(const Values& got, const Values& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        CAPTURE(i);
        CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
    }
}

reference::UpdateResult run_update(const HostTensor& x, const HostTensor& state, const HostTensor& w,
                                   const Tensor& seqlens = {}, const Tensor& indices = {}, int pad = -1) {
    UpdateArgs a;
    a.x = x, a.conv_state = state, a.weight = w, a.cache_seqlens = seqlens, a.conv_state_indices = indices;
    a.pad_slot_id = pad;
    return reference::update(a);
}

}  // namespace

TEST_CASE("update: plain shift, state as long as K") {
    // W = 3, w = [1,2,3], state = [10,20], x = [1]: out = 10 + 40 + 3 = 53, state -> [20, 1].
    auto r = run_update(fp32({1, 1, 1}, {1}), fp32({1, 1, 2}, {10, 20}), fp32({1, 3}, {1, 2, 3}));
    check_values(r.out, {53});
    check_values(r.conv_state, {20, 1});
}

TEST_CASE("update: plain shift, longer state and several tokens") {
    // S = 3, state = [5,10,20], x = [1,2]: u = [5,10,20,1,2]
    //   out0 = 1·10 + 2·20 + 3·1 = 53;  out1 = 1·20 + 2·1 + 3·2 = 28;  state = [20,1,2]
    auto r = run_update(fp32({1, 1, 2}, {1, 2}), fp32({1, 1, 3}, {5, 10, 20}), fp32({1, 3}, {1, 2, 3}));
    check_values(r.out, {53, 28});
    check_values(r.conv_state, {20, 1, 2});
    // T = 3 > S = 2: state [10,20], x = [1,2,3] -> out [53, 20+2+6, 1+4+9], state = [2, 3].
    r = run_update(fp32({1, 1, 3}, {1, 2, 3}), fp32({1, 1, 2}, {10, 20}), fp32({1, 3}, {1, 2, 3}));
    check_values(r.out, {53, 28, 14});
    check_values(r.conv_state, {2, 3});
}

TEST_CASE("update: bias and silu") {
    // W = 1, w = [1], bias 1, x = [0]: z = 1, out = silu(1).
    UpdateArgs a;
    auto x = fp32({1, 1, 1}, {0});
    auto state = fp32({1, 1, 1}, {9});
    auto w = fp32({1, 1}, {1});
    auto bias = fp32({1}, {1});
    a.x = x, a.conv_state = state, a.weight = w, a.bias = bias, a.activation = Activation::silu;
    auto r = reference::update(a);
    check_values(r.out, {0.7310585786300049});
    check_values(r.conv_state, {0});   // W = 1 still shifts the state: last S of [9, 0]
}

TEST_CASE("update: circular buffer") {
    // S = 4, state = [1,2,3,4], c = 1, W = 3, x = [7,8]:
    //   history j = 0,1 reads (c-2+j) mod 4 = 3, 0 -> [4, 1];  u = [4,1,7,8]
    //   out0 = 1·4 + 2·1 + 3·7 = 27;  out1 = 1·1 + 2·7 + 3·8 = 39
    //   tokens go to (c+t) mod 4 = 1, 2 -> state [1,7,8,4]
    auto w = fp32({1, 3}, {1, 2, 3});
    auto x = fp32({1, 1, 2}, {7, 8});
    auto state = fp32({1, 1, 4}, {1, 2, 3, 4});
    for (int c : {1, 5, 9}) {   // c is taken mod S
        CAPTURE(c);
        auto seqlens = int32({1}, {double(c)});
        auto r = run_update(x, state, w, seqlens);
        check_values(r.out, {27, 39});
        check_values(r.conv_state, {1, 7, 8, 4});
    }
    // c = 0: history = positions 2, 3 -> [3,4]; out0 = 3 + 8 + 21 = 32; out1 = 4 + 14 + 24 = 42;
    // tokens go to positions 0, 1 -> [7,8,3,4].
    auto zero = int32({1}, {0});
    auto r = run_update(x, state, w, zero);
    check_values(r.out, {32, 42});
    check_values(r.conv_state, {7, 8, 3, 4});
}

TEST_CASE("update: conv_state_indices and pad slots") {
    // W = 2, w = [1,1], S = 1, slots = [[10],[20],[30]], x = [[1],[2]]:
    //   indices [2, -1]: row 0 uses slot 2: out 30 + 1 = 31, slot 2 <- 1; row 1 is padding:
    //   out 0, no state touched.
    auto w = fp32({1, 2}, {1, 1});
    auto x = fp32({2, 1, 1}, {1, 2});
    auto state = fp32({3, 1, 1}, {10, 20, 30});
    auto indices = int32({2}, {2, -1});
    auto r = run_update(x, state, w, {}, indices);
    check_values(r.out, {31, 0});
    check_values(r.conv_state, {10, 20, 1});
    // pad_slot_id = 7, indices [7, 0]: row 0 pads; row 1 uses slot 0: 10 + 2 = 12, slot 0 <- 2.
    auto other = int32({2}, {7, 0});
    r = run_update(x, state, w, {}, other, 7);
    check_values(r.out, {0, 12});
    check_values(r.conv_state, {2, 20, 30});
}

TEST_CASE("update: circular buffer with indices") {
    // Two rows share nothing: row 0 -> slot 1 with c = 3, row 1 -> slot 0 with c = 0.
    // W = 2, w = [1,10], S = 2, slots = [[1,2],[3,4]], x = [[5],[6]]:
    //   row 0: history (3-1) mod 2 = 0 -> 3; out = 3 + 50 = 53; token -> 3 mod 2 = 1: slot 1 = [3,5]
    //   row 1: history (0-1) mod 2 = 1 -> 2; out = 2 + 60 = 62; token -> 0: slot 0 = [6,2]
    auto w = fp32({1, 2}, {1, 10});
    auto x = fp32({2, 1, 1}, {5, 6});
    auto state = fp32({2, 1, 2}, {1, 2, 3, 4});
    auto seqlens = int32({2}, {3, 0});
    auto indices = int32({2}, {1, 0});
    auto r = run_update(x, state, w, seqlens, indices);
    check_values(r.out, {53, 62});
    check_values(r.conv_state, {6, 2, 3, 5});
}

TEST_CASE("varlen: packed sequences without states") {
    // W = 2, w = [1,10], cu = [0,2,3], x = [1,2,3]:
    //   sequence 0: out0 = 10·1 = 10, out1 = 1 + 20 = 21;  sequence 1 starts fresh: out2 = 30
    auto x = fp32({1, 3}, {1, 2, 3});
    auto w = fp32({1, 2}, {1, 10});
    auto cu = int32({3}, {0, 2, 3});
    VarlenForwardArgs a;
    a.x = x, a.weight = w, a.cu_seqlens = cu;
    const auto r = reference::varlen_forward(a);
    check_values(r.out, {10, 21, 30});
    CHECK(r.conv_states.empty());
}

TEST_CASE("varlen: states with cache_indices and has_initial_state") {
    // K = 1, S = 2, slots = [[5,6],[7,8]], cache_indices = [1,0], has_initial_state = [1,0]:
    //   sequence 0 -> slot 1, history = slot1[S-K] = 8: out0 = 8 + 10 = 18, out1 = 21;
    //              slot 1 becomes [7, x1] = [7, 2]
    //   sequence 1 -> slot 0, no history: out2 = 30; slot 0 becomes [5, 3]
    auto x = fp32({1, 3}, {1, 2, 3});
    auto w = fp32({1, 2}, {1, 10});
    auto cu = int32({3}, {0, 2, 3});
    auto states = fp32({2, 1, 2}, {5, 6, 7, 8});
    auto indices = int32({2}, {1, 0});
    auto has_init = int32({2}, {1, 0});
    VarlenForwardArgs a;
    a.x = x, a.weight = w, a.cu_seqlens = cu, a.conv_states = states, a.cache_indices = indices;
    a.has_initial_state = has_init;
    auto r = reference::varlen_forward(a);
    check_values(r.out, {18, 21, 30});
    check_values(r.conv_states, {5, 3, 7, 2});

    // Sequence 1 padded (index -1): computed with zero history, its slot left alone.
    auto padded = int32({2}, {1, -1});
    auto both = int32({2}, {1, 1});
    a.cache_indices = padded, a.has_initial_state = both;
    r = reference::varlen_forward(a);
    check_values(r.out, {18, 21, 30});
    check_values(r.conv_states, {5, 6, 7, 2});

    // No cache_indices: sequence i uses slot i; no has_initial_state: nothing is read.
    a.cache_indices = {}, a.has_initial_state = {};
    r = reference::varlen_forward(a);
    check_values(r.out, {10, 21, 30});
    check_values(r.conv_states, {5, 2, 7, 3});
}

TEST_CASE("varlen: a sequence shorter than K keeps part of its history") {
    // W = 3, w = [1,1,1], S = 2, slot = [7,8], one sequence x = [3]:
    //   with history: out = 7 + 8 + 3 = 18, slot = last 2 of [7,8,3] = [8,3]
    //   without:      out = 3,              slot = last 2 of [0,0,3] = [0,3]
    auto x = fp32({1, 1}, {3});
    auto w = fp32({1, 3}, {1, 1, 1});
    auto cu = int32({2}, {0, 1});
    auto states = fp32({1, 1, 2}, {7, 8});
    auto yes = int32({1}, {1});
    auto no = int32({1}, {0});
    VarlenForwardArgs a;
    a.x = x, a.weight = w, a.cu_seqlens = cu, a.conv_states = states, a.has_initial_state = yes;
    auto r = reference::varlen_forward(a);
    check_values(r.out, {18});
    check_values(r.conv_states, {8, 3});
    a.has_initial_state = no;
    r = reference::varlen_forward(a);
    check_values(r.out, {3});
    check_values(r.conv_states, {0, 3});
}

TEST_CASE("varlen: a slot longer than K keeps its leading positions") {
    // W = 2, w = [1,10], S = 4, slot = [1,2,3,4]: history = slot[3] = 4; x = [5]:
    //   out = 4 + 50 = 54; slot = [1,2,3,5].
    auto x = fp32({1, 1}, {5});
    auto w = fp32({1, 2}, {1, 10});
    auto cu = int32({2}, {0, 1});
    auto states = fp32({1, 1, 4}, {1, 2, 3, 4});
    auto yes = int32({1}, {1});
    VarlenForwardArgs a;
    a.x = x, a.weight = w, a.cu_seqlens = cu, a.conv_states = states, a.has_initial_state = yes;
    const auto r = reference::varlen_forward(a);
    check_values(r.out, {54});
    check_values(r.conv_states, {1, 2, 3, 5});
}

TEST_CASE("varlen: token-major x, given as (total, D) or as a (D, total) view") {
    // D = 2, w = [[1,10],[2,20]], cu = [0,2,3]; channel 0 = [1,2,3], channel 1 = [4,5,6]:
    //   channel 0: [10, 1 + 20, 30] = [10, 21, 30]
    //   channel 1: [80, 2·4 + 20·5, 120] = [80, 108, 120]
    // Results are always in logical (D, total) order.
    auto w = fp32({2, 2}, {1, 10, 2, 20});
    auto cu = int32({3}, {0, 2, 3});
    const Values want = {10, 21, 30, 80, 108, 120};
    auto token_major = fp32({3, 2}, {1, 4, 2, 5, 3, 6});
    auto column_view = fp32({2, 3}, {1, 2, 3, 4, 5, 6}, Memory{{1, 0}, {}});
    auto padded_rows = fp32({2, 3}, {1, 2, 3, 4, 5, 6}, Memory{{}, {0, 3}});
    for (const HostTensor* x : {&token_major, &column_view, &padded_rows}) {
        VarlenForwardArgs a;
        a.x = *x, a.weight = w, a.cu_seqlens = cu;
        check_values(reference::varlen_forward(a).out, want);
    }
}
