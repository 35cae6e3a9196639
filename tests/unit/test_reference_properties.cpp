// Properties of the fp64 reference on random data: backward is the gradient of forward
// (central finite differences, every feature on), and the ops agree with each other
// (packing with seq_idx, update vs forward with states, circular vs plain, varlen vs
// forward). Values are multiples of 1/64 so that fp32 storage and the ±h steps are exact.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "reference/reference.hpp"
#include "unit/host_tensors.hpp"

using namespace cc1d;
using namespace cc1d::unit;
using Values = std::vector<double>;

namespace {

constexpr double step = 1.0 / 4096;   // exact in fp32 next to multiples of 1/64 in [-2, 2]

Values dyadic(std::mt19937& rng, std::int64_t n) {
    std::uniform_int_distribution<int> units(-64, 64);
    Values v(static_cast<std::size_t>(n));
    for (auto& e : v) e = units(rng) / 64.0;
    return v;
}

Values ids(std::mt19937& rng, std::int64_t n) {
    std::uniform_int_distribution<int> id(-1, 2);   // unsorted ids and padding anywhere
    Values v(static_cast<std::size_t>(n));
    for (auto& e : v) e = id(rng);
    return v;
}

struct Problem {
    std::int64_t B = 2, D = 2, L = 5, W = 3;
    bool channel_last = false, bias = true, seq = false, init = false, final_states = false;
    Activation activation = Activation::none;
};

// Inputs of one Problem plus the loss Σ dout·out + Σ dfinal·final whose gradient
// backward must return.
struct GradientCase {
    HostTensor x, w, bias, seq, init, dout, dfinal, final_out, dinit;
    Problem p;

    GradientCase(const Problem& problem, std::mt19937& rng) : p(problem) {
        const auto K = p.W - 1;
        x = fp32({p.B, p.D, p.L}, dyadic(rng, p.B * p.D * p.L), p.channel_last ? channel_last() : Memory{});
        w = fp32({p.D, p.W}, dyadic(rng, p.D * p.W));
        bias = fp32({p.D}, dyadic(rng, p.D));
        seq = int32({p.B, p.L}, ids(rng, p.B * p.L));
        init = fp32({p.B, p.D, K}, dyadic(rng, p.B * p.D * K));
        dout = fp32({p.B, p.D, p.L}, dyadic(rng, p.B * p.D * p.L));
        dfinal = fp32({p.B, p.D, K}, dyadic(rng, p.B * p.D * K));
        final_out = fp32({p.B, p.D, K}, {});
        dinit = fp32({p.B, p.D, K}, {});
    }

    ForwardArgs forward_args() const {
        ForwardArgs a;
        a.x = x, a.weight = w, a.activation = p.activation;
        if (p.bias) a.bias = bias;
        if (p.seq) a.seq_idx = seq;
        if (p.init) a.initial_states = init;
        if (p.final_states) a.final_states = final_out;
        return a;
    }
    BackwardArgs backward_args() const {
        BackwardArgs a;
        a.x = x, a.weight = w, a.dout = dout, a.activation = p.activation;
        if (p.bias) a.bias = bias;
        if (p.seq) a.seq_idx = seq;
        if (p.init) a.initial_states = init, a.dinitial_states = dinit;
        if (p.final_states) a.dfinal_states = dfinal;
        return a;
    }
    double loss() const {
        const auto r = reference::forward(forward_args());
        double l = 0;
        for (std::int64_t i = 0; i < dout.numel(); ++i) l += dout.get(i) * r.out[static_cast<std::size_t>(i)];
        if (p.final_states)
            for (std::int64_t i = 0; i < dfinal.numel(); ++i) l += dfinal.get(i) * r.final_states[static_cast<std::size_t>(i)];
        return l;
    }
    // Central difference of the loss along every element of `input`.
    Values numeric_gradient(HostTensor& input) {
        Values g(static_cast<std::size_t>(input.numel()));
        for (std::int64_t i = 0; i < input.numel(); ++i) {
            const double v = input.get(i);
            input.set(i, v + step);
            const double up = loss();
            input.set(i, v - step);
            const double down = loss();
            input.set(i, v);
            g[static_cast<std::size_t>(i)] = (up - down) / (2 * step);
        }
        return g;
    }
};

void check_close(const Values& analytic, const Values& numeric, const std::string& what) {
    REQUIRE(analytic.size() == numeric.size());
    for (std::size_t i = 0; i < numeric.size(); ++i) {
        CAPTURE(what);
        CAPTURE(i);
        CHECK(analytic[i] == doctest::Approx(numeric[i]).epsilon(1e-6).scale(1.0));
    }
}

}  // namespace

TEST_CASE("backward is the gradient of forward, for every feature") {
    std::mt19937 rng(20240611);
    int cases = 0;
    for (int layout = 0; layout < 2; ++layout)
        for (std::int64_t W : {1, 2, 3, 4})
            for (std::int64_t L : {1, 2, 3, 7})
                for (int flags = 0; flags < 32; ++flags) {
                    Problem p;
                    p.channel_last = layout == 1, p.W = W, p.L = L;
                    p.bias = flags & 1, p.seq = flags & 2, p.init = (flags & 4) && W > 1;
                    p.final_states = (flags & 8) && W > 1;
                    p.activation = (flags & 16) ? Activation::silu : Activation::none;
                    GradientCase c(p, rng);
                    CAPTURE(layout);
                    CAPTURE(W);
                    CAPTURE(L);
                    CAPTURE(flags);
                    const auto r = reference::backward(c.backward_args());
                    check_close(r.dx, c.numeric_gradient(c.x), "dx");
                    check_close(r.dweight, c.numeric_gradient(c.w), "dweight");
                    if (p.bias) check_close(r.dbias, c.numeric_gradient(c.bias), "dbias");
                    if (p.init) check_close(r.dinitial_states, c.numeric_gradient(c.init), "dinitial_states");
                    ++cases;
                }
    CHECK(cases == 2 * 4 * 4 * 32);
}

TEST_CASE("seq_idx packing equals separate rows") {
    // Two sequences packed in one row (ids 3 then 8) give the same outputs as each alone.
    std::mt19937 rng(7);
    const std::int64_t D = 3, W = 4, a = 6, b = 5;
    const Values xa = dyadic(rng, D * a), xb = dyadic(rng, D * b), wv = dyadic(rng, D * W), bv = dyadic(rng, D);
    Values packed, seq;
    for (std::int64_t d = 0; d < D; ++d) {
        packed.insert(packed.end(), xa.begin() + d * a, xa.begin() + (d + 1) * a);
        packed.insert(packed.end(), xb.begin() + d * b, xb.begin() + (d + 1) * b);
    }
    for (std::int64_t t = 0; t < a + b; ++t) seq.push_back(t < a ? 3 : 8);
    auto w = fp32({D, W}, wv);
    auto bias = fp32({D}, bv);
    auto run = [&](const HostTensor& x, const Tensor& s) {
        ForwardArgs f;
        f.x = x, f.weight = w, f.bias = bias, f.seq_idx = s, f.activation = Activation::silu;
        return reference::forward(f).out;
    };
    auto xp = fp32({1, D, a + b}, packed);
    auto sp = int32({1, a + b}, seq);
    const auto together = run(xp, sp);
    const auto first = run(fp32({1, D, a}, xa), {});
    const auto second = run(fp32({1, D, b}, xb), {});
    for (std::int64_t d = 0; d < D; ++d)
        for (std::int64_t t = 0; t < a + b; ++t) {
            const double want = t < a ? first[static_cast<std::size_t>(d * a + t)] : second[static_cast<std::size_t>(d * b + t - a)];
            CHECK(together[static_cast<std::size_t>(d * (a + b) + t)] == doctest::Approx(want).epsilon(1e-14));
        }
}

TEST_CASE("update equals forward with initial states, and the state becomes final_states") {
    std::mt19937 rng(11);
    const std::int64_t B = 3, D = 2, W = 4, K = W - 1, T = 5;
    auto x = fp32({B, D, T}, dyadic(rng, B * D * T));
    auto w = fp32({D, W}, dyadic(rng, D * W));
    auto bias = fp32({D}, dyadic(rng, D));
    const Values state_values = dyadic(rng, B * D * K);
    auto state = fp32({B, D, K}, state_values);
    auto final_states = fp32({B, D, K}, {});

    UpdateArgs u;
    u.x = x, u.conv_state = state, u.weight = w, u.bias = bias, u.activation = Activation::silu;
    const auto updated = reference::update(u);
    ForwardArgs f;
    f.x = x, f.weight = w, f.bias = bias, f.activation = Activation::silu, f.initial_states = state;
    f.final_states = final_states;
    const auto forward = reference::forward(f);
    for (std::size_t i = 0; i < forward.out.size(); ++i) CHECK(updated.out[i] == forward.out[i]);
    for (std::size_t i = 0; i < forward.final_states.size(); ++i) CHECK(updated.conv_state[i] == forward.final_states[i]);
}

TEST_CASE("circular update reads the same history as a plain update of the rotated state") {
    std::mt19937 rng(13);
    const std::int64_t D = 2, W = 3, S = 5, T = 2;
    auto x = fp32({1, D, T}, dyadic(rng, D * T));
    auto w = fp32({D, W}, dyadic(rng, D * W));
    const Values state_values = dyadic(rng, D * S);
    auto state = fp32({1, D, S}, state_values);
    for (int c : {0, 1, 4, 7, 13}) {
        CAPTURE(c);
        Values rotated(state_values.size());
        for (std::int64_t d = 0; d < D; ++d)
            for (std::int64_t i = 0; i < S; ++i)
                rotated[static_cast<std::size_t>(d * S + i)] = state_values[static_cast<std::size_t>(d * S + (c + i) % S)];
        auto plain_state = fp32({1, D, S}, rotated);
        auto seqlens = int32({1}, {double(c)});
        UpdateArgs circular;
        circular.x = x, circular.conv_state = state, circular.weight = w, circular.cache_seqlens = seqlens;
        UpdateArgs plain = circular;
        plain.conv_state = plain_state, plain.cache_seqlens = {};
        const auto a = reference::update(circular), b = reference::update(plain);
        for (std::size_t i = 0; i < a.out.size(); ++i) CHECK(a.out[i] == b.out[i]);
        // The new tokens land at (c + t) mod S; everything else is untouched.
        for (std::int64_t d = 0; d < D; ++d)
            for (std::int64_t t = 0; t < T; ++t)
                CHECK(a.conv_state[static_cast<std::size_t>(d * S + (c + t) % S)] == x.get(d * T + t));
    }
}

TEST_CASE("varlen equals forward per sequence, with the slot as initial and final states") {
    std::mt19937 rng(17);
    const std::int64_t D = 3, W = 4, K = W - 1, S = 6;
    const std::vector<std::int64_t> lengths = {1, 7, 2, 4};
    const std::int64_t N = static_cast<std::int64_t>(lengths.size());
    Values cu = {0};
    for (auto n : lengths) cu.push_back(cu.back() + static_cast<double>(n));
    const auto total = static_cast<std::int64_t>(cu.back());
    const Values xv = dyadic(rng, D * total), sv = dyadic(rng, N * D * S);
    auto x = fp32({D, total}, xv);
    auto w = fp32({D, W}, dyadic(rng, D * W));
    auto states = fp32({N, D, S}, sv);
    auto cut = int32({N + 1}, cu);
    auto has = int32({N}, {1, 0, 1, 1});
    VarlenForwardArgs v;
    v.x = x, v.weight = w, v.cu_seqlens = cut, v.conv_states = states, v.has_initial_state = has;
    v.activation = Activation::silu;
    const auto varlen = reference::varlen_forward(v);

    for (std::int64_t i = 0; i < N; ++i) {
        CAPTURE(i);
        const auto start = static_cast<std::int64_t>(cu[static_cast<std::size_t>(i)]), n = lengths[static_cast<std::size_t>(i)];
        Values xs, init;
        for (std::int64_t d = 0; d < D; ++d) {
            for (std::int64_t t = 0; t < n; ++t) xs.push_back(xv[static_cast<std::size_t>(d * total + start + t)]);
            for (std::int64_t j = 0; j < K; ++j)
                init.push_back(has.get(i) ? sv[static_cast<std::size_t>((i * D + d) * S + S - K + j)] : 0.0);
        }
        auto xi = fp32({1, D, n}, xs);
        auto ii = fp32({1, D, K}, init);
        auto fi = fp32({1, D, K}, {});
        ForwardArgs f;
        f.x = xi, f.weight = w, f.initial_states = ii, f.final_states = fi, f.activation = Activation::silu;
        const auto r = reference::forward(f);
        for (std::int64_t d = 0; d < D; ++d) {
            for (std::int64_t t = 0; t < n; ++t)
                CHECK(varlen.out[static_cast<std::size_t>(d * total + start + t)] == r.out[static_cast<std::size_t>(d * n + t)]);
            for (std::int64_t j = 0; j < K; ++j)
                CHECK(varlen.conv_states[static_cast<std::size_t>((i * D + d) * S + S - K + j)] ==
                      r.final_states[static_cast<std::size_t>(d * K + j)]);
            for (std::int64_t j = 0; j < S - K; ++j)   // positions before S-K are untouched
                CHECK(varlen.conv_states[static_cast<std::size_t>((i * D + d) * S + j)] ==
                      sv[static_cast<std::size_t>((i * D + d) * S + j)]);
        }
    }
}
