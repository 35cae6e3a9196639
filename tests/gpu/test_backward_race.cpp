// Races in backward: 1000 repeated runs on one medium shape (2 × 64 × 1134, the main
// kernels) and one small one (2 × 64 × 300, the small-call kernel, whose sums go through
// shuffles and shared memory) must give bit-identical dx in every mode, and bit-identical
// dweight/dbias in deterministic mode (the small-call kernel: in every mode).
// The first run is also checked against the reference. Non-deterministic mode may
// reorder the dweight/dbias sums; how many distinct results it gave is reported.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>

#include "reference/reference.hpp"
#include "support/case_inputs.hpp"
#include "support/small_call_paths.hpp"
#include "support/gpu_checks.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

constexpr int repeats = 1000;
constexpr std::int64_t B = 2, D = 64, W = 4;

struct RaceCase {
    Layout layout;
    bool deterministic, all_features;   // all_features: seq_idx, initial states, dinit, dfinal
    std::int64_t L;
};

void run_race(const RaceCase& c, std::uint32_t seed) {
    std::mt19937 rng(seed);
    const bool cl = c.layout == Layout::channel_last;
    const DType f = DType::fp32;
    const std::int64_t L = c.L;
    TestTensor x(f, {B, D, L}, view_kind(0, cl)), weight(f, {D, W}), bias(f, {D}), dout(f, {B, D, L}, view_kind(0, cl));
    TestTensor seq(DType::int32, {B, L}), init(f, {B, D, W - 1}), dfinal(f, {B, D, W - 1});
    TestTensor dx(f, {B, D, L}, view_kind(0, cl)), dweight(f, {D, W}), dbias(f, {D}), dinit(f, {B, D, W - 1});
    for (TestTensor* t : {&x, &weight, &bias, &dout, &init, &dfinal}) t->fill_random(rng);
    seq.fill_int(random_seq_idx(rng, B, L, false));

    auto args = [&](bool on_device) {
        auto view = [on_device](const TestTensor& t) { return on_device ? t.device_view() : t.host_view(); };
        BackwardArgs a;
        a.x = view(x), a.weight = view(weight), a.bias = view(bias), a.dout = view(dout);
        a.dx = view(dx), a.dweight = view(dweight), a.dbias = view(dbias);
        a.activation = Activation::silu, a.deterministic = c.deterministic;
        if (c.all_features) {
            a.seq_idx = view(seq), a.initial_states = view(init), a.dinitial_states = view(dinit);
            a.dfinal_states = view(dfinal);
        }
        return a;
    };
    const BackwardArgs device_args = args(true);
    const bool small = takes_small_backward_kernel(device_args);
    CHECK_MESSAGE(small == (L == 300), "the small-call kernel should take L = 300 and only that shape");
    if (!call_ok([&] { runtime().backward(device_args); })) return;
    const auto want = reference::backward(args(false));
    check_tensor("dx", dx, want.dx, reference::tolerance_for(f));
    check_tensor("dweight", dweight, want.dweight, reduction_tolerance_in(f, B * L));
    check_tensor("dbias", dbias, want.dbias, reduction_tolerance_in(f, B * L));
    if (c.all_features) check_tensor("dinitial_states", dinit, want.dinitial_states, reference::tolerance_for(f));
    const auto first_dx = dx.host_bytes(), first_dw = dweight.host_bytes(), first_db = dbias.host_bytes();
    const auto first_dinit = dinit.host_bytes();

    int dx_differs = 0, dw_differs = 0;
    std::set<std::vector<unsigned char>> distinct_dw;
    for (int run = 1; run < repeats; ++run) {
        runtime().backward(device_args);
        gpu().synchronize();
        dx.download(), dweight.download(), dbias.download(), dinit.download();
        dx_differs += dx.host_bytes() != first_dx || dinit.host_bytes() != first_dinit;
        const bool dw_same = dweight.host_bytes() == first_dw && dbias.host_bytes() == first_db;
        dw_differs += !dw_same;
        if (!dw_same && distinct_dw.size() < 64) distinct_dw.insert(dweight.host_bytes());
    }
    CHECK_MESSAGE(dx_differs == 0, dx_differs << " of " << repeats - 1 << " repeats gave a different dx/dinitial_states");
    if (c.deterministic || small)
        CHECK_MESSAGE(dw_differs == 0, dw_differs << " of " << repeats - 1 << " deterministic repeats gave a different dweight/dbias");
    else
        MESSAGE("non-deterministic mode: ", dw_differs, " of ", repeats - 1, " repeats differed in dweight/dbias (",
                distinct_dw.size(), " distinct dweight results seen)");
}

}  // namespace

TEST_CASE("backward: repeated runs are bit-identical") {
    std::uint64_t index = 0;
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (bool deterministic : {true, false})
            for (bool all_features : {false, true})
                for (std::int64_t L : {1134, 300}) {
                    const std::uint32_t seed = case_seed(21, index++);
                    INFO(std::string(to_string(layout)), " deterministic=", deterministic, " seq_idx/states=", all_features,
                         " B=", B, " D=", D, " L=", L, " W=", W, " fp32 silu bias | seed ", seed);
                    run_race({layout, deterministic, all_features, L}, seed);
                }
}
