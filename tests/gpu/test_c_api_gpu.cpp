// The C ABI on a GPU: forward, backward and update through cc1d.h give the same bytes as
// the same calls through the C++ Runtime (one layer only copies structs), a refused call
// writes nothing, and the handle's stats count the launches.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cc1d/cc1d.h"
#include "support/case_inputs.hpp"
#include "support/gpu_checks.hpp"

using namespace cc1d;
using namespace cc1d::test;

namespace {

cc1d_tensor to_c(const Tensor& t) {
    cc1d_tensor c{};
    c.data = t.data;
    c.dtype = static_cast<std::int32_t>(t.dtype);
    c.rank = t.rank;
    for (int d = 0; d < t.rank; ++d) {
        c.shape[d] = t.shape[d];
        c.strides[d] = t.strides[d];
    }
    return c;
}

cc1d_tensor to_c_if(bool present, const TestTensor& t) { return present ? to_c(t.device_view()) : cc1d_tensor{}; }

// A C ABI runtime sharing the test Runtime's disk cache, so nothing compiles twice.
struct CRuntime {
    CRuntime() {
        gpu();   // skips the test binary when there is no GPU
        cache_dir = runtime().cache_dir();
        cc1d_runtime_options options;
        cc1d_runtime_options_init(&options);
        options.cache_dir = cache_dir.c_str();
        options.disk_cache = cache_dir.empty() ? 0 : 1;
        REQUIRE(cc1d_runtime_create(&options, &handle) == CC1D_STATUS_OK);
    }
    ~CRuntime() { cc1d_runtime_destroy(handle); }
    std::string cache_dir;
    cc1d_runtime* handle = nullptr;
};

CRuntime& c_runtime() {
    static CRuntime instance;
    return instance;
}

void require_ok(cc1d_status status) { REQUIRE_MESSAGE(status == CC1D_STATUS_OK, cc1d_last_error()); }

// Both tensors downloaded; their whole allocations (view, padding, guards) compared.
void check_same_bytes(const char* what, TestTensor& from_cpp, TestTensor& from_c) {
    gpu().synchronize();
    from_cpp.download();
    from_c.download();
    CHECK_MESSAGE(from_cpp.host_bytes() == from_c.host_bytes(), what << ": the C ABI result differs from C++");
    CHECK_MESSAGE(from_c.padding_untouched(), what << ": written outside its view");
}

struct Case {
    Layout layout;
    DType dtype;
    bool bias, silu, states, seq_idx;
};

std::vector<Case> cases() {
    std::vector<Case> all;
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (DType dtype : {DType::fp32, DType::bf16}) {
            all.push_back({layout, dtype, false, false, false, false});
            all.push_back({layout, dtype, true, true, true, false});
            all.push_back({layout, dtype, true, true, true, true});
        }
    return all;
}

std::string name(const Case& c) {
    return std::string(to_string(c.layout)) + " " + to_string(c.dtype) + (c.bias ? " bias" : "") +
           (c.silu ? " silu" : "") + (c.states ? " states" : "") + (c.seq_idx ? " seq_idx" : "");
}

struct Inputs {
    static constexpr std::int64_t B = 2, D = 67, L = 133, W = 4;
    TestTensor x, weight, bias, seq_idx, init, dout, dfinal;
    Inputs(const Case& c, std::mt19937& rng)
        : x(c.dtype, {B, D, L}, view_kind(1, c.layout == Layout::channel_last)),
          weight(c.dtype, {D, W}),
          bias(c.dtype, {D}),
          seq_idx(DType::int32, {B, L}),
          init(c.dtype, {B, D, W - 1}),
          dout(c.dtype, {B, D, L}, view_kind(0, c.layout == Layout::channel_last)),
          dfinal(c.dtype, {B, D, W - 1}) {
        for (TestTensor* t : {&x, &weight, &bias, &init, &dout, &dfinal}) t->fill_random(rng);
        seq_idx.fill_int(random_seq_idx(rng, B, L, false));
    }
    TestTensor like_x(const Case& c) const {
        return TestTensor(c.dtype, {B, D, L}, view_kind(2, c.layout == Layout::channel_last));
    }
};

}  // namespace

TEST_CASE("forward through the C ABI is bit-identical to C++") {
    const std::vector<Case> all = cases();
    for (std::size_t index = 0; index < all.size(); ++index) {
        const Case& c = all[index];
        CAPTURE(name(c));
        std::mt19937 rng(case_seed(0xC0A1, index));
        Inputs in(c, rng);
        TestTensor out_cpp = in.like_x(c), out_c = in.like_x(c);
        TestTensor final_cpp(c.dtype, {Inputs::B, Inputs::D, Inputs::W - 1});
        TestTensor final_c(c.dtype, {Inputs::B, Inputs::D, Inputs::W - 1});
        gpu().synchronize();

        ForwardArgs args;
        args.x = in.x.device_view();
        args.weight = in.weight.device_view();
        if (c.bias) args.bias = in.bias.device_view();
        args.out = out_cpp.device_view();
        args.activation = c.silu ? Activation::silu : Activation::none;
        if (c.seq_idx) args.seq_idx = in.seq_idx.device_view();
        if (c.states) args.initial_states = in.init.device_view();
        if (c.states) args.final_states = final_cpp.device_view();
        runtime().forward(args);

        cc1d_forward_args c_args;
        cc1d_forward_args_init(&c_args);
        c_args.x = to_c(in.x.device_view());
        c_args.weight = to_c(in.weight.device_view());
        c_args.bias = to_c_if(c.bias, in.bias);
        c_args.out = to_c(out_c.device_view());
        c_args.activation = c.silu ? CC1D_ACTIVATION_SILU : CC1D_ACTIVATION_NONE;
        c_args.seq_idx = to_c_if(c.seq_idx, in.seq_idx);
        c_args.initial_states = to_c_if(c.states, in.init);
        c_args.final_states = to_c_if(c.states, final_c);
        require_ok(cc1d_forward(c_runtime().handle, &c_args, nullptr));

        check_same_bytes("out", out_cpp, out_c);
        if (c.states) check_same_bytes("final_states", final_cpp, final_c);
    }
}

TEST_CASE("backward through the C ABI is bit-identical to C++") {
    const std::vector<Case> all = cases();
    for (std::size_t index = 0; index < all.size(); ++index) {
        const Case& c = all[index];
        CAPTURE(name(c));
        std::mt19937 rng(case_seed(0xC0A2, index));
        Inputs in(c, rng);
        TestTensor dx_cpp = in.like_x(c), dx_c = in.like_x(c);
        TestTensor dw_cpp(DType::fp32, {Inputs::D, Inputs::W}), dw_c(DType::fp32, {Inputs::D, Inputs::W});
        TestTensor db_cpp(DType::fp32, {Inputs::D}), db_c(DType::fp32, {Inputs::D});
        TestTensor dinit_cpp(c.dtype, {Inputs::B, Inputs::D, Inputs::W - 1});
        TestTensor dinit_c(c.dtype, {Inputs::B, Inputs::D, Inputs::W - 1});
        gpu().synchronize();

        BackwardArgs args;
        args.x = in.x.device_view();
        args.weight = in.weight.device_view();
        if (c.bias) args.bias = in.bias.device_view();
        args.dout = in.dout.device_view();
        args.dx = dx_cpp.device_view();
        args.dweight = dw_cpp.device_view();
        if (c.bias) args.dbias = db_cpp.device_view();
        args.activation = c.silu ? Activation::silu : Activation::none;
        if (c.seq_idx) args.seq_idx = in.seq_idx.device_view();
        if (c.states) {
            args.initial_states = in.init.device_view();
            args.dinitial_states = dinit_cpp.device_view();
            args.dfinal_states = in.dfinal.device_view();
        }
        runtime().backward(args);

        cc1d_backward_args c_args;
        cc1d_backward_args_init(&c_args);
        c_args.x = to_c(in.x.device_view());
        c_args.weight = to_c(in.weight.device_view());
        c_args.bias = to_c_if(c.bias, in.bias);
        c_args.dout = to_c(in.dout.device_view());
        c_args.dx = to_c(dx_c.device_view());
        c_args.dweight = to_c(dw_c.device_view());
        c_args.dbias = to_c_if(c.bias, db_c);
        c_args.activation = c.silu ? CC1D_ACTIVATION_SILU : CC1D_ACTIVATION_NONE;
        c_args.seq_idx = to_c_if(c.seq_idx, in.seq_idx);
        c_args.initial_states = to_c_if(c.states, in.init);
        c_args.dinitial_states = to_c_if(c.states, dinit_c);
        c_args.dfinal_states = to_c_if(c.states, in.dfinal);
        require_ok(cc1d_backward(c_runtime().handle, &c_args, nullptr));

        check_same_bytes("dx", dx_cpp, dx_c);
        check_same_bytes("dweight", dw_cpp, dw_c);
        if (c.bias) check_same_bytes("dbias", db_cpp, db_c);
        if (c.states) check_same_bytes("dinitial_states", dinit_cpp, dinit_c);
    }
}

TEST_CASE("update through the C ABI is bit-identical to C++") {
    const std::int64_t B = 3, D = 64, S = 5, W = 4, slots = 5;
    for (DType dtype : {DType::fp32, DType::fp16}) {
        CAPTURE(to_string(dtype));
        std::mt19937 rng(case_seed(0xC0A3, static_cast<std::uint64_t>(dtype)));
        TestTensor x(dtype, {B, D, 2}), weight(dtype, {D, W}), bias(dtype, {D});
        TestTensor seqlens(DType::int32, {B}), indices(DType::int32, {B});
        TestTensor state_cpp(dtype, {slots, D, S}), state_c(dtype, {slots, D, S});
        TestTensor out_cpp(dtype, {B, D, 2}), out_c(dtype, {B, D, 2});
        for (TestTensor* t : {&x, &weight, &bias}) t->fill_random(rng);
        seqlens.fill_int({3, 0, 11});
        indices.fill_int({4, -1, 1});
        std::mt19937 state_rng(rng());
        std::mt19937 same_again = state_rng;
        state_cpp.fill_random(state_rng);
        state_c.fill_random(same_again);   // identical starting states
        gpu().synchronize();

        UpdateArgs args;
        args.x = x.device_view();
        args.conv_state = state_cpp.device_view();
        args.weight = weight.device_view();
        args.bias = bias.device_view();
        args.out = out_cpp.device_view();
        args.activation = Activation::silu;
        args.cache_seqlens = seqlens.device_view();
        args.conv_state_indices = indices.device_view();
        runtime().update(args);

        cc1d_update_args c_args;
        cc1d_update_args_init(&c_args);
        c_args.x = to_c(x.device_view());
        c_args.conv_state = to_c(state_c.device_view());
        c_args.weight = to_c(weight.device_view());
        c_args.bias = to_c(bias.device_view());
        c_args.out = to_c(out_c.device_view());
        c_args.activation = CC1D_ACTIVATION_SILU;
        c_args.cache_seqlens = to_c(seqlens.device_view());
        c_args.conv_state_indices = to_c(indices.device_view());
        require_ok(cc1d_update(c_runtime().handle, &c_args, nullptr));

        check_same_bytes("out", out_cpp, out_c);
        check_same_bytes("conv_state", state_cpp, state_c);
    }
}

TEST_CASE("a refused call writes nothing and says why") {
    std::mt19937 rng(case_seed(0xC0A4, 0));
    TestTensor x(DType::fp32, {2, 8, 16}), weight(DType::fp32, {8, 4});
    TestTensor out(DType::fp16, {2, 8, 16});   // wrong dtype
    x.fill_random(rng);
    weight.fill_random(rng);
    gpu().synchronize();
    cc1d_forward_args args;
    cc1d_forward_args_init(&args);
    args.x = to_c(x.device_view());
    args.weight = to_c(weight.device_view());
    args.out = to_c(out.device_view());
    CHECK(cc1d_forward(c_runtime().handle, &args, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(std::string(cc1d_last_error()).find("out") != std::string::npos);
    gpu().synchronize();
    out.download();
    CHECK(out.all_poisoned());
}

TEST_CASE("device target and stats through the C ABI") {
    std::size_t length = 0;
    require_ok(cc1d_device_target(c_runtime().handle, nullptr, 0, &length));
    std::vector<char> target(length + 1);
    require_ok(cc1d_device_target(c_runtime().handle, target.data(), target.size(), &length));
    CHECK(std::string(target.data()) == runtime().device_target());

    cc1d_stats before;
    cc1d_stats_init(&before);
    require_ok(cc1d_runtime_stats(c_runtime().handle, &before));
    std::mt19937 rng(case_seed(0xC0A5, 0));
    TestTensor x(DType::fp32, {1, 8, 9}), weight(DType::fp32, {8, 2}), out(DType::fp32, {1, 8, 9});
    x.fill_random(rng);
    weight.fill_random(rng);
    cc1d_forward_args args;
    cc1d_forward_args_init(&args);
    args.x = to_c(x.device_view());
    args.weight = to_c(weight.device_view());
    args.out = to_c(out.device_view());
    require_ok(cc1d_forward(c_runtime().handle, &args, nullptr));
    gpu().synchronize();
    cc1d_stats after;
    cc1d_stats_init(&after);
    require_ok(cc1d_runtime_stats(c_runtime().handle, &after));
    CHECK(after.launches > before.launches);
    CHECK(after.memory_hits + after.disk_hits + after.compiles > 0);
}
