// Disk cache round trip: a Runtime on a fresh cache folder compiles every kernel it
// needs; a second Runtime on the same folder, and then a child process (this binary
// run again, on its own test case), load them all from disk with zero compiles.
// Every run's results are also checked against the reference.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "common/env.hpp"
#include "reference/reference.hpp"
#include "support/case_inputs.hpp"
#include "support/gpu_checks.hpp"
#include "variant/variant.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

constexpr const char* child_cache_variable = "CC1D_TEST_CHILD_CACHE_DIR";
constexpr const char* child_report_variable = "CC1D_TEST_CHILD_REPORT";

// One small call of each op (four modules; the forward and backward are small calls,
// which run their small-call modules: forward_small.cpp, backward_small.cpp).
void run_every_op(Runtime& rt, std::uint32_t seed) {
    std::mt19937 rng(seed);
    const std::int64_t B = 2, D = 67, L = 300, W = 4;
    const DType f = DType::fp32;
    TestTensor x(f, {B, D, L}), weight(f, {D, W}), bias(f, {D}), out(f, {B, D, L});
    TestTensor dout(f, {B, D, L}), dx(f, {B, D, L}), dweight(f, {D, W}), dbias(f, {D});
    TestTensor state(f, {B, D, W - 1}), token(f, {B, D, 1}), token_out(f, {B, D, 1});
    for (TestTensor* t : {&x, &weight, &bias, &dout, &state, &token}) t->fill_random(rng);
    auto on = [](bool device, const TestTensor& t) { return device ? t.device_view() : t.host_view(); };

    auto forward = [&](bool device) {
        ForwardArgs a;
        a.x = on(device, x), a.weight = on(device, weight), a.bias = on(device, bias), a.out = on(device, out);
        a.activation = Activation::silu;
        return a;
    };
    auto backward = [&](bool device) {
        BackwardArgs a;
        a.x = on(device, x), a.weight = on(device, weight), a.bias = on(device, bias), a.dout = on(device, dout);
        a.dx = on(device, dx), a.dweight = on(device, dweight), a.dbias = on(device, dbias), a.activation = Activation::silu;
        return a;
    };
    auto update = [&](bool device) {
        UpdateArgs a;
        a.x = on(device, token), a.weight = on(device, weight), a.conv_state = on(device, state), a.out = on(device, token_out);
        return a;
    };
    const auto tol = reference::tolerance_for(f);
    const auto want_update = reference::update(update(false));   // before the state changes
    if (!call_ok([&] { rt.forward(forward(true)); })) return;
    check_tensor("forward out", out, reference::forward(forward(false)).out, tol);
    if (!call_ok([&] { rt.backward(backward(true)); })) return;
    check_tensor("backward dx", dx, reference::backward(backward(false)).dx, tol);
    if (!call_ok([&] { rt.update(update(true)); })) return;
    check_tensor("update out", token_out, want_update.out, tol);

    const std::int64_t total = 50;
    TestTensor packed(f, {D, total}), packed_out(f, {D, total}), cu(DType::int32, {3});
    packed.fill_random(rng);
    cu.fill_int({0, 7, 50});
    auto varlen = [&](bool device) {
        VarlenForwardArgs a;
        a.x = on(device, packed), a.weight = on(device, weight), a.out = on(device, packed_out), a.cu_seqlens = on(device, cu);
        return a;
    };
    if (!call_ok([&] { rt.varlen_forward(varlen(true)); })) return;
    check_tensor("varlen out", packed_out, reference::varlen_forward(varlen(false)).out, tol);
}

// Runs this binary's child test case in a new process; returns its exit status.
int run_child(const std::string& cache_dir, const std::string& report) {
    const pid_t pid = fork();
    if (pid == 0) {
        setenv(child_cache_variable, cache_dir.c_str(), 1);
        setenv(child_report_variable, report.c_str(), 1);
        execl("/proc/self/exe", "/proc/self/exe", "--test-case=disk cache child*", static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("disk cache: a second Runtime and a child process compile nothing") {
    if (env::flag("CC1D_DISABLE_DISK_CACHE") || env::flag("CC1D_ALWAYS_COMPILE")) {
        MESSAGE("skipped: CC1D_DISABLE_DISK_CACHE or CC1D_ALWAYS_COMPILE is set");
        return;
    }
    gpu();
    const std::string dir = temporary_directory();
    const std::uint32_t seed = case_seed(61, 0);
    INFO("cache folder ", dir, " | seed ", seed);
    {
        Runtime first(RuntimeOptions{dir, true, ""});
        run_every_op(first, seed);
        const Stats s = first.stats();
        CHECK(s.compiles >= 4);
    }
    {
        Runtime second(RuntimeOptions{dir, true, ""});
        run_every_op(second, seed);
        const Stats s = second.stats();
        CHECK(s.compiles == 0);
        CHECK(s.disk_hits >= 4);
    }
    const std::string report = temporary_directory() + "/child-stats.txt";
    const int status = run_child(dir, report);
    REQUIRE_MESSAGE(status == 0, "the child process exited with status " << status);
    std::ifstream in(report);
    long long compiles = -1, disk_hits = -1;
    in >> compiles >> disk_hits;
    REQUIRE_MESSAGE(in, "the child wrote no stats to " << report);
    CHECK_MESSAGE(compiles == 0, "the child compiled " << compiles << " kernels");
    CHECK_MESSAGE(disk_hits >= 4, "the child had " << disk_hits << " disk hits");
}

TEST_CASE("disk cache child: runs every op on the parent's cache folder") {
    // Only does something in the child process started by the test case above.
    const auto dir = env::get(child_cache_variable);
    const auto report = env::get(child_report_variable);
    if (!dir || !report) return;
    Runtime rt(RuntimeOptions{*dir, true, ""});
    run_every_op(rt, case_seed(61, 1));
    const Stats s = rt.stats();
    std::ofstream(*report) << s.compiles << ' ' << s.disk_hits << '\n';
}

TEST_CASE("precompile: a cache filled without launching serves every op with zero compiles") {
    if (env::flag("CC1D_DISABLE_DISK_CACHE") || env::flag("CC1D_ALWAYS_COMPILE")) {
        MESSAGE("skipped: CC1D_DISABLE_DISK_CACHE or CC1D_ALWAYS_COMPILE is set");
        return;
    }
    gpu();
    const std::string dir = temporary_directory();
    // The variants run_every_op launches, named as the precompile tool names them.
    auto variant = [](Op op, Activation act, bool bias, bool small_call = false) {
        Variant v;
        v.op = op;
        v.width = 4;
        v.activation = act;
        v.bias = bias;
        v.small_call = small_call;
        return v.canonical();
    };
    {
        Runtime filler(RuntimeOptions{dir, true, ""});
        const std::string device_target = filler.device_target();   // "cuda:sm_90"
        const std::string target = device_target.substr(device_target.find(':') + 1);
        for (const auto& v : {variant(Op::fwd, Activation::silu, true, true), variant(Op::bwd, Activation::silu, true, true),
                              variant(Op::update, Activation::none, false), variant(Op::varlen_fwd, Activation::none, false)}) {
            INFO(v, " for ", target);
            CHECK(filler.precompile(v, target));         // compiled now
            CHECK_FALSE(filler.precompile(v, target));   // and found the second time
        }
        CHECK(filler.stats().launches == 0);
    }
    Runtime user(RuntimeOptions{dir, true, ""});
    run_every_op(user, case_seed(62, 0));
    CHECK(user.stats().compiles == 0);
    CHECK(user.stats().disk_hits >= 4);
}
