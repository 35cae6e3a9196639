// The fp64 reference of forward and backward against cases worked out by hand (the
// arithmetic is in the comments), plus the tolerances and compare().
// Conventions: W = width, K = W-1, w[0] multiplies the oldest input, w[K] the current.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "reference/compare.hpp"
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

const double sigmoid1 = 0.7310585786300049;   // 1 / (1 + e^-1)

}  // namespace

TEST_CASE("forward: one channel, bias, no activation") {
    // w = [1,2,3], x = [1,2,3,4], bias 0.5, zero history:
    //   out0 = 3·1                 + .5 = 3.5
    //   out1 = 2·1 + 3·2           + .5 = 8.5
    //   out2 = 1·1 + 2·2 + 3·3     + .5 = 14.5
    //   out3 = 1·2 + 2·3 + 3·4     + .5 = 20.5
    auto x = fp32({1, 1, 4}, {1, 2, 3, 4});
    auto w = fp32({1, 3}, {1, 2, 3});
    auto bias = fp32({1}, {0.5});
    ForwardArgs a;
    a.x = x, a.weight = w, a.bias = bias;
    check_values(reference::forward(a).out, {3.5, 8.5, 14.5, 20.5});
}

TEST_CASE("forward: initial and final states") {
    // init = [10, 20] stands at positions -2, -1:
    //   out0 = 1·10 + 2·20 + 3·1 + .5 = 53.5
    //   out1 = 1·20 + 2·1  + 3·2 + .5 = 28.5
    // final = the last K = 2 raw inputs = [3, 4].
    auto x = fp32({1, 1, 4}, {1, 2, 3, 4});
    auto w = fp32({1, 3}, {1, 2, 3});
    auto bias = fp32({1}, {0.5});
    auto init = fp32({1, 1, 2}, {10, 20});
    auto final_states = fp32({1, 1, 2}, {});
    ForwardArgs a;
    a.x = x, a.weight = w, a.bias = bias, a.initial_states = init, a.final_states = final_states;
    const auto r = reference::forward(a);
    check_values(r.out, {53.5, 28.5, 14.5, 20.5});
    check_values(r.final_states, {3, 4});
}

TEST_CASE("forward: final states of a sequence shorter than K") {
    // L = 1, K = 2: final = [x̃(-1), x̃(0)] = [init[1], x0] = [20, 5], or [0, 5] without init.
    auto x = fp32({1, 1, 1}, {5});
    auto w = fp32({1, 3}, {1, 2, 3});
    auto init = fp32({1, 1, 2}, {10, 20});
    auto final_states = fp32({1, 1, 2}, {});
    ForwardArgs a;
    a.x = x, a.weight = w, a.final_states = final_states;
    check_values(reference::forward(a).final_states, {0, 5});
    a.initial_states = init;
    const auto r = reference::forward(a);
    check_values(r.final_states, {20, 5});
    check_values(r.out, {1 * 10 + 2 * 20 + 3 * 5});
}

TEST_CASE("forward: silu") {
    // w = [0,0,1] passes x through, so out = x·sigmoid(x):
    //   silu(0) = 0, silu(1) = 0.731058..., silu(-1) = -1/(1+e) = -0.268941..., silu(2) = 2/(1+e^-2)
    auto x = fp32({1, 1, 4}, {0, 1, -1, 2});
    auto w = fp32({1, 3}, {0, 0, 1});
    ForwardArgs a;
    a.x = x, a.weight = w, a.activation = Activation::silu;
    check_values(reference::forward(a).out, {0, sigmoid1, -0.2689414213699951, 1.7615941559557646});
}

TEST_CASE("forward: batches and channels are independent, in every layout") {
    // Channel 0 has w = [1,0] (output = previous input), channel 1 w = [0,1] (current input);
    // bias = [100, 200].
    //   b0: x[d0] = [1,2,3] -> [100,101,102];  x[d1] = [4,5,6]   -> [204,205,206]
    //   b1: x[d0] = [7,8,9] -> [100,107,108];  x[d1] = [10,11,12]-> [210,211,212]
    const Values xs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    const Values want = {100, 101, 102, 204, 205, 206, 100, 107, 108, 210, 211, 212};
    auto w = fp32({2, 2}, {1, 0, 0, 1});
    auto bias = fp32({2}, {100, 200});
    for (const Memory& memory : {Memory{}, channel_last(), Memory{{1, 0, 2}, {3, 1, 2}}, Memory{{0, 2, 1}, {1, 2, 5}}}) {
        auto x = fp32({2, 2, 3}, xs, memory);
        ForwardArgs a;
        a.x = x, a.weight = w, a.bias = bias;
        check_values(reference::forward(a).out, want);
    }
}

TEST_CASE("forward: width 1 and 16-bit inputs are read as stored") {
    // W = 1: out = 2·x + 1 = [3, 5, 7].
    auto x = fp32({1, 1, 3}, {1, 2, 3});
    auto w = fp32({1, 1}, {2});
    auto bias = fp32({1}, {1});
    ForwardArgs a;
    a.x = x, a.weight = w, a.bias = bias;
    check_values(reference::forward(a).out, {3, 5, 7});
    // 0.1 is stored as the nearest fp16 (0.0999755859375) and bf16 (0.10009765625) value.
    auto x16 = HostTensor(DType::fp16, {1, 1, 1}, {0.1});
    auto xb16 = HostTensor(DType::bf16, {1, 1, 1}, {0.1});
    auto one = fp32({1, 1}, {1});
    ForwardArgs h;
    h.x = x16, h.weight = one;
    check_values(reference::forward(h).out, {0.0999755859375});
    h.x = xb16;
    check_values(reference::forward(h).out, {0.10009765625});
}

TEST_CASE("forward: seq_idx drops cross-sequence terms and zeroes padding") {
    // w = [1,1] (previous + current), bias .5, seq = [0,0,1,1,-1], x = [1..5]:
    //   out0 = 1 (start: the zero history counts as id -1) + .5 = 1.5
    //   out1 = 1 + 2 + .5 = 3.5
    //   out2 = 3 (x1 belongs to sequence 0) + .5 = 3.5
    //   out3 = 3 + 4 + .5 = 7.5
    //   out4 = 0 exactly (padding: no bias, no activation)
    // With init = [10]: position -1 counts as seq_idx[0] = 0, so out0 = 10 + 1 + .5 = 11.5.
    auto x = fp32({1, 1, 5}, {1, 2, 3, 4, 5});
    auto w = fp32({1, 2}, {1, 1});
    auto bias = fp32({1}, {0.5});
    auto seq = int32({1, 5}, {0, 0, 1, 1, -1});
    auto init = fp32({1, 1, 1}, {10});
    ForwardArgs a;
    a.x = x, a.weight = w, a.bias = bias, a.seq_idx = seq;
    check_values(reference::forward(a).out, {1.5, 3.5, 3.5, 7.5, 0});
    a.initial_states = init;
    check_values(reference::forward(a).out, {11.5, 3.5, 3.5, 7.5, 0});
    a.activation = Activation::silu;   // padding stays exactly 0 under silu too
    CHECK(reference::forward(a).out[4] == 0.0);
}

TEST_CASE("forward: seq_idx boundaries are equality of ids, not order") {
    // seq = [0,1,0], w = [1,1,1], x = [1,2,4]:
    //   out0 = 1;  out1 = 2 (x0 has id 0);  out2 = 4 + x0 (id 0 again) = 5, x1 (id 1) dropped.
    // With init = [10,20] (ids = seq[0] = 0): out0 = 10 + 20 + 1 = 31; out1 and out2 unchanged.
    auto x = fp32({1, 1, 3}, {1, 2, 4});
    auto w = fp32({1, 3}, {1, 1, 1});
    auto seq = int32({1, 3}, {0, 1, 0});
    auto init = fp32({1, 1, 2}, {10, 20});
    ForwardArgs a;
    a.x = x, a.weight = w, a.seq_idx = seq;
    check_values(reference::forward(a).out, {1, 2, 5});
    a.initial_states = init;
    check_values(reference::forward(a).out, {31, 2, 5});
}

TEST_CASE("forward: initial states feed nothing when the row starts with padding") {
    // seq = [-1, 0], init = [10], w = [1,1]: the history takes id seq[0] = -1, so
    // out0 = 0 (padding) and out1 = x1 = 2 (x0 is padding, the history too).
    auto x = fp32({1, 1, 2}, {1, 2});
    auto w = fp32({1, 2}, {1, 1});
    auto seq = int32({1, 2}, {-1, 0});
    auto init = fp32({1, 1, 1}, {10});
    ForwardArgs a;
    a.x = x, a.weight = w, a.seq_idx = seq, a.initial_states = init;
    check_values(reference::forward(a).out, {0, 2});
}

TEST_CASE("backward: dx, dweight, dbias") {
    // W = 2, w = [2,3], x = [1,2,3], dout = g = [1,10,100] (no activation):
    //   dx[t] = w1·g[t] + w0·g[t+1]:  dx = [3+20, 30+200, 300] = [23, 230, 300]
    //   dw0 = Σ g[t]·x̃[t-1] = 1·0 + 10·1 + 100·2 = 210
    //   dw1 = Σ g[t]·x[t]   = 1·1 + 10·2 + 100·3 = 321
    //   db  = 1 + 10 + 100 = 111
    auto x = fp32({1, 1, 3}, {1, 2, 3});
    auto w = fp32({1, 2}, {2, 3});
    auto bias = fp32({1}, {0.25});
    auto dout = fp32({1, 1, 3}, {1, 10, 100});
    BackwardArgs a;
    a.x = x, a.weight = w, a.bias = bias, a.dout = dout;
    const auto r = reference::backward(a);
    check_values(r.dx, {23, 230, 300});
    check_values(r.dweight, {210, 321});
    check_values(r.dbias, {111});
}

TEST_CASE("backward: initial states and dfinal") {
    // As above with init = [5] and dfinal = [7]:
    //   dinit0 = w0·g0 = 2;  dw0 gains g0·init0 = 5 -> 215
    //   final0 = x2, so dx2 gains 7 -> 307
    auto x = fp32({1, 1, 3}, {1, 2, 3});
    auto w = fp32({1, 2}, {2, 3});
    auto dout = fp32({1, 1, 3}, {1, 10, 100});
    auto init = fp32({1, 1, 1}, {5});
    auto dinit = fp32({1, 1, 1}, {});
    auto dfinal = fp32({1, 1, 1}, {7});
    BackwardArgs a;
    a.x = x, a.weight = w, a.dout = dout, a.initial_states = init, a.dinitial_states = dinit, a.dfinal_states = dfinal;
    const auto r = reference::backward(a);
    check_values(r.dx, {23, 230, 307});
    check_values(r.dweight, {215, 321});
    check_values(r.dinitial_states, {2});
    CHECK(r.dbias.empty());
}

TEST_CASE("backward: dfinal reaches the initial states when L < K") {
    // W = 3, w = [1,2,3], L = 1, x = [4], init = [5,6], dout = [10], dfinal = [100, 1000].
    // out0 = 1·init0 + 2·init1 + 3·x0; final = [x̃(-1), x̃(0)] = [init1, x0].
    //   dinit = [1·10, 2·10 + 100] = [10, 120];  dx = [3·10 + 1000] = [1030]
    //   dw = g0·[init0, init1, x0] = [50, 60, 40]
    auto x = fp32({1, 1, 1}, {4});
    auto w = fp32({1, 3}, {1, 2, 3});
    auto dout = fp32({1, 1, 1}, {10});
    auto init = fp32({1, 1, 2}, {5, 6});
    auto dinit = fp32({1, 1, 2}, {});
    auto dfinal = fp32({1, 1, 2}, {100, 1000});
    BackwardArgs a;
    a.x = x, a.weight = w, a.dout = dout, a.initial_states = init, a.dinitial_states = dinit, a.dfinal_states = dfinal;
    const auto r = reference::backward(a);
    check_values(r.dx, {1030});
    check_values(r.dinitial_states, {10, 120});
    check_values(r.dweight, {50, 60, 40});
}

TEST_CASE("backward: silu") {
    // W = 1, w = [1], x = [1], no bias: z = 1, s = sigmoid(1),
    // g = s·(1 + z·(1-s)) = 0.7310585786300049 · 1.2689414213699951 = 0.9276705118714869,
    // and dx = w·g, dw = g·x, db = g.
    const double g = 0.9276705118714869;
    auto x = fp32({1, 1, 1}, {1});
    auto w = fp32({1, 1}, {1});
    auto bias = fp32({1}, {0});
    auto dout = fp32({1, 1, 1}, {1});
    BackwardArgs a;
    a.x = x, a.weight = w, a.bias = bias, a.dout = dout, a.activation = Activation::silu;
    const auto r = reference::backward(a);
    check_values(r.dx, {g});
    check_values(r.dweight, {g});
    check_values(r.dbias, {g});
}

TEST_CASE("backward: seq_idx masks padding and cross-sequence terms") {
    // W = 2, w = [2,3], x = [1,2,3,4], seq = [0,0,1,-1], dout = [1,10,100,1000]:
    //   g = [1, 10, 100, 0]   (padding gets no gradient)
    //   dx0 = 3·1 + 2·10 = 23;  dx1 = 3·10 (+2·100 dropped: other sequence) = 30
    //   dx2 = 3·100 = 300;  dx3 = 0
    //   dw0 = g1·x0 = 10 (g0 reads the history, g2 reads x1 of another sequence)
    //   dw1 = 1·1 + 10·2 + 100·3 = 321;  db = 111
    auto x = fp32({1, 1, 4}, {1, 2, 3, 4});
    auto w = fp32({1, 2}, {2, 3});
    auto bias = fp32({1}, {0.5});
    auto dout = fp32({1, 1, 4}, {1, 10, 100, 1000});
    auto seq = int32({1, 4}, {0, 0, 1, -1});
    BackwardArgs a;
    a.x = x, a.weight = w, a.bias = bias, a.dout = dout, a.seq_idx = seq;
    const auto r = reference::backward(a);
    check_values(r.dx, {23, 30, 300, 0});
    check_values(r.dweight, {10, 321});
    check_values(r.dbias, {111});
}

TEST_CASE("backward: initial states get gradient only from the first sequence") {
    // W = 2, w = [2,3], x = [1,2], seq = [0,1], init = [5] (id 0), dout = g = [1,10]:
    //   dinit0 = w0·g0 = 2;  dx0 = w1·g0 = 3 (w0·g1 dropped);  dx1 = w1·g1 = 30
    //   dw0 = g0·init0 = 5 (g1·x0 dropped);  dw1 = 1·1 + 10·2 = 21
    // When the row starts with padding (seq = [-1,1]) nothing reaches the states.
    auto x = fp32({1, 1, 2}, {1, 2});
    auto w = fp32({1, 2}, {2, 3});
    auto dout = fp32({1, 1, 2}, {1, 10});
    auto seq = int32({1, 2}, {0, 1});
    auto init = fp32({1, 1, 1}, {5});
    auto dinit = fp32({1, 1, 1}, {});
    BackwardArgs a;
    a.x = x, a.weight = w, a.dout = dout, a.seq_idx = seq, a.initial_states = init, a.dinitial_states = dinit;
    auto r = reference::backward(a);
    check_values(r.dinitial_states, {2});
    check_values(r.dx, {3, 30});
    check_values(r.dweight, {5, 21});
    auto padded_start = int32({1, 2}, {-1, 1});
    a.seq_idx = padded_start;
    r = reference::backward(a);
    check_values(r.dinitial_states, {0});
    check_values(r.dx, {0, 30});
}

TEST_CASE("tolerances are the ones SEMANTICS.md states") {
    CHECK(reference::tolerance_for(DType::fp32).rtol == 3e-4);
    CHECK(reference::tolerance_for(DType::fp32).atol == 1e-3);
    CHECK(reference::tolerance_for(DType::fp16).rtol == 3e-3);
    CHECK(reference::tolerance_for(DType::fp16).atol == 5e-3);
    CHECK(reference::tolerance_for(DType::bf16).rtol == 1e-2);
    CHECK(reference::tolerance_for(DType::bf16).atol == 5e-2);
    CHECK(reference::reduction_tolerance(10000).rtol == 1e-3);
    CHECK(reference::reduction_tolerance(10000).atol == doctest::Approx(0.1));
    CHECK(reference::exact().atol == 0.0);
}

TEST_CASE("compare: bounds, counts, NaN and sizes") {
    const reference::Tolerance tol{0.25, 0.5};   // |a - r| <= 0.5 + 0.25·|r|
    auto c = reference::compare({1.75, -1.75, 4}, {1, -1, 4}, tol);   // errors exactly at the bound
    CHECK(c.ok);
    c = reference::compare({1, 2.5, 3, 9}, {1, 2, 3, 4}, reference::exact());
    CHECK_FALSE(c.ok);
    CHECK(c.mismatches == 2);
    CHECK(c.first_bad == 1);
    CHECK(c.got_at_first_bad == 2.5);
    CHECK(c.want_at_first_bad == 2);
    CHECK(c.max_abs_error == 5);
    CHECK(c.describe("out").find("index 1") != std::string::npos);
    CHECK(reference::compare({1, 2}, {1, 2}, reference::exact()).describe("out").find("ok") != std::string::npos);

    CHECK_FALSE(reference::compare({NAN}, {1}, tol).ok);
    CHECK_FALSE(reference::compare({1}, {NAN}, tol).ok);
    CHECK_FALSE(reference::compare({NAN}, {NAN}, tol).ok);
    CHECK_FALSE(reference::compare({INFINITY}, {INFINITY}, tol).ok);
    CHECK_FALSE(reference::compare({NAN}, {1}, {1e300, 1e300}).ok);

    c = reference::compare({1, 2}, {1, 2, 3}, tol);
    CHECK_FALSE(c.ok);
    CHECK(c.mismatches == 1);
    CHECK(c.first_bad == 2);
    CHECK(reference::compare({}, {}, tol).ok);
}
