// Argument validation through the public API. Pointers here are fake addresses: every
// case must be refused before anything touches a device, which is what is tested.
#include <doctest/doctest.h>

#include <string>

#include "api/validate.hpp"
#include "cc1d/cc1d.hpp"
#include "device/device.hpp"

using namespace cc1d;

namespace {

// Distinct fake device addresses, 256-byte aligned, far apart.
const void* fake(int slot) { return reinterpret_cast<const void*>(std::uintptr_t(0x10000000) * (slot + 1)); }

Runtime& runtime() {
    static Runtime rt(RuntimeOptions{"", false, "error"});
    return rt;
}

ForwardArgs good_forward(int B = 2, int D = 8, int L = 33, int W = 4, DType dt = DType::bf16) {
    ForwardArgs a;
    a.x = Tensor(fake(0), dt, {B, D, L});
    a.weight = Tensor(fake(1), dt, {D, W});
    a.bias = Tensor(fake(2), dt, {D});
    a.out = Tensor(fake(3), dt, {B, D, L});
    return a;
}

// The message of the error `call` throws, checked to be `code`.
template <typename F>
std::string error_of(F call, ErrorCode code = ErrorCode::invalid_argument) {
    try {
        call();
    } catch (const Error& e) {
        CHECK_MESSAGE(e.code() == code, "got " << to_string(e.code()) << ": " << e.what());
        return e.what();
    }
    FAIL("no error was thrown");
    return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("forward: each bad argument is named") {
    auto run = [](ForwardArgs a) { return error_of([&] { runtime().forward(a); }); };
    { auto a = good_forward(); a.x.data = nullptr; CHECK(contains(run(a), "x: data pointer is null")); }
    { auto a = good_forward(); a.out = Tensor(); CHECK(contains(run(a), "out: required")); }
    {   // an address off the element size's boundary (a byte offset into a 16-bit buffer)
        auto a = good_forward();
        a.out.data = static_cast<const char*>(a.out.data) + 1;
        CHECK(contains(run(a), "out: expected an address aligned to its element size (2 bytes, bf16)"));
    }
    { auto a = good_forward(); a.weight = Tensor(fake(1), DType::bf16, {7, 4}); CHECK(contains(run(a), "weight: expected 8 rows")); }
    { auto a = good_forward(); a.bias = Tensor(fake(2), DType::bf16, {9}); CHECK(contains(run(a), "bias: expected shape (8)")); }
    { auto a = good_forward(); a.bias = Tensor(fake(2), DType::fp32, {8}); CHECK(contains(run(a), "bias: expected dtype bf16")); }
    { auto a = good_forward(); a.out = Tensor(fake(3), DType::fp32, {2, 8, 33}); CHECK(contains(run(a), "out: expected dtype bf16")); }
    { auto a = good_forward(); a.out = Tensor(fake(3), DType::bf16, {2, 8, 32}); CHECK(contains(run(a), "out: expected shape (2, 8, 33)")); }
    { auto a = good_forward(); a.x = Tensor(fake(0), DType::bf16, {2, 8, 33}, {8 * 33 * 2, 33 * 2, 2}); CHECK(contains(run(a), "x: strides")); }
    { auto a = good_forward(); a.x = Tensor(fake(0), DType::bf16, {8, 33}); CHECK(contains(run(a), "x: expected rank 3")); }
    { auto a = good_forward(); a.out = a.x; CHECK(contains(run(a), "out: its memory overlaps x")); }
    {   // channel-last out for a channel-first x
        auto a = good_forward();
        a.out = Tensor(fake(3), DType::bf16, {2, 8, 33}, {8 * 33, 1, 8});
        CHECK(contains(run(a), "out: expected the channel_first layout"));
    }
    {   // ... but where the unit axis has one element its stride is never used: a channel-first
        // x of one step takes an out whose unit stride is along dim (and the other way round).
        auto a = good_forward(2, 8, 1);
        a.out = Tensor(fake(3), DType::bf16, {2, 8, 1}, {8, 1, 8});
        CHECK(validate::forward(a).layout == Layout::channel_first);
        a.x = Tensor(fake(0), DType::bf16, {2, 1, 33}, {33, 33, 1});
        a.weight = Tensor(fake(1), DType::bf16, {1, 4});
        a.bias = Tensor(fake(2), DType::bf16, {1});
        a.out = Tensor(fake(3), DType::bf16, {2, 1, 33}, {33, 1, 1});
        CHECK_NOTHROW(validate::forward(a));
        // x of one channel is channel-first and channel-last alike: with an out readable
        // only channel-last (a slice of a wider channel-last tensor, positions a row apart),
        // the call is channel-last (it was refused as "expected the channel_first layout").
        a.x = Tensor(fake(0), DType::bf16, {2, 1, 33}, {33, 1, 1});
        a.out = Tensor(fake(3), DType::bf16, {2, 1, 33}, {66, 1, 2});
        CHECK(validate::forward(a).layout == Layout::channel_last);
        BackwardArgs b;   // the same for a backward's dout and dx
        b.x = a.x;
        b.weight = a.weight;
        b.dout = Tensor(fake(3), DType::bf16, {2, 1, 33}, {33, 1, 1});
        b.dx = Tensor(fake(4), DType::bf16, {2, 1, 33}, {66, 1, 2});
        b.dweight = Tensor(fake(5), DType::fp32, {1, 4});
        CHECK(validate::backward(b).layout == Layout::channel_last);
    }
    { auto a = good_forward(); a.seq_idx = Tensor(fake(4), DType::int32, {2, 32}); CHECK(contains(run(a), "seq_idx: expected shape (2, 33)")); }
    { auto a = good_forward(); a.seq_idx = Tensor(fake(4), DType::fp32, {2, 33}); CHECK(contains(run(a), "seq_idx: expected dtype int32")); }
    { auto a = good_forward(); a.initial_states = Tensor(fake(5), DType::bf16, {2, 8, 4}); CHECK(contains(run(a), "initial_states: expected shape (2, 8, 3)")); }
    { auto a = good_forward(); a.final_states = Tensor(fake(5), DType::fp32, {2, 8, 3}); CHECK(contains(run(a), "final_states: expected dtype bf16")); }
    {   // width 1 has no states
        auto a = good_forward(2, 8, 33, 1);
        a.initial_states = Tensor(fake(5), DType::bf16, {2, 8, 0});
        CHECK(contains(run(a), "width 1 has no states"));
    }
}

TEST_CASE("forward: unsupported widths and dtypes") {
    auto a = good_forward(2, 8, 33, 17);
    CHECK(contains(error_of([&] { runtime().forward(a); }, ErrorCode::unsupported), "width 17"));
    auto b = good_forward();
    b.x.dtype = DType::int32;
    CHECK(contains(error_of([&] { runtime().forward(b); }, ErrorCode::unsupported), "x: dtype int32"));
}

TEST_CASE("backward: gradients are checked like outputs") {
    BackwardArgs a;
    a.x = Tensor(fake(0), DType::fp16, {2, 8, 40});
    a.weight = Tensor(fake(1), DType::fp16, {8, 3});
    a.dout = Tensor(fake(2), DType::fp16, {2, 8, 40});
    a.dx = Tensor(fake(3), DType::fp16, {2, 8, 40});
    a.dweight = Tensor(fake(4), DType::bf16, {8, 3});
    CHECK(contains(error_of([&] { runtime().backward(a); }), "dweight: expected dtype fp32 or fp16"));
    a.dweight = Tensor(static_cast<const char*>(fake(4)) + 2, DType::fp32, {8, 3});
    CHECK(contains(error_of([&] { runtime().backward(a); }), "dweight: expected an address aligned to its element size (4 bytes, fp32)"));
    a.dweight = Tensor(fake(4), DType::fp32, {8, 3});
    a.dbias = Tensor(fake(5), DType::fp32, {8});
    CHECK(contains(error_of([&] { runtime().backward(a); }), "dbias: given, but the forward had no bias"));
    a.dbias = Tensor();
    a.dx = a.dout;
    CHECK(contains(error_of([&] { runtime().backward(a); }), "dx: its memory overlaps dout"));
    a.dx = Tensor(fake(3), DType::fp16, {2, 8, 40});
    a.dinitial_states = Tensor(fake(6), DType::fp16, {2, 8, 2});
    CHECK(contains(error_of([&] { runtime().backward(a); }), "dinitial_states: given, but initial_states is absent"));
    a.dinitial_states = Tensor();
    a.workspace = reinterpret_cast<void*>(std::uintptr_t(0x80000002));   // fp32 partial sums need 4
    a.workspace_bytes = 1024;
    CHECK(contains(error_of([&] { runtime().backward(a); }), "workspace: expected a 4-byte aligned address"));
}

TEST_CASE("update: state shape and indices") {
    UpdateArgs a;
    a.x = Tensor(fake(0), DType::bf16, {4, 16});
    a.weight = Tensor(fake(1), DType::bf16, {16, 4});
    a.out = Tensor(fake(2), DType::bf16, {4, 16});
    a.conv_state = Tensor(fake(3), DType::bf16, {4, 16, 2});
    CHECK(contains(error_of([&] { runtime().update(a); }), "conv_state: expected state_len >= max(1, width - 1) = 3"));
    a.conv_state = Tensor(fake(3), DType::bf16, {3, 16, 3});
    CHECK(contains(error_of([&] { runtime().update(a); }), "conv_state: expected at least 4 rows"));
    a.conv_state_indices = Tensor(fake(4), DType::int32, {5});
    CHECK(contains(error_of([&] { runtime().update(a); }), "conv_state_indices: expected shape (4)"));
    a.conv_state_indices = Tensor();
    a.conv_state = Tensor(fake(3), DType::bf16, {4, 16, 3});
    a.cache_seqlens = Tensor(fake(5), DType::fp32, {4});
    CHECK(contains(error_of([&] { runtime().update(a); }), "cache_seqlens: expected dtype int32"));
}

TEST_CASE("varlen_forward: offsets and slots") {
    VarlenForwardArgs a;
    a.x = Tensor(fake(0), DType::bf16, {16, 100});
    a.weight = Tensor(fake(1), DType::bf16, {16, 4});
    a.out = Tensor(fake(2), DType::bf16, {16, 100});
    a.cu_seqlens = Tensor(fake(3), DType::fp32, {3});
    CHECK(contains(error_of([&] { runtime().varlen_forward(a); }), "cu_seqlens: expected dtype int32"));
    a.cu_seqlens = Tensor(fake(3), DType::int32, {3});
    a.cache_indices = Tensor(fake(4), DType::int32, {2});
    CHECK(contains(error_of([&] { runtime().varlen_forward(a); }), "cache_indices: given, but conv_states is absent"));
    a.cache_indices = Tensor();
    a.conv_states = Tensor(fake(5), DType::bf16, {1, 16, 3});
    CHECK(contains(error_of([&] { runtime().varlen_forward(a); }), "conv_states: expected at least 2 slots"));
}

TEST_CASE("written tensors: distinct elements, and no memory shared with another tensor of the call") {
    auto fwd = [](ForwardArgs a) { return error_of([&] { runtime().forward(a); }); };
    {   // out expanded along the batch (stride 0): both rows would be written to one place
        auto a = good_forward();
        a.out = Tensor(fake(3), DType::bf16, {2, 8, 33}, {0, 33, 1});
        CHECK(contains(fwd(a), "out: strides (0, 33, 1) for shape (2, 8, 33) give several elements one address"));
    }
    {   // interleaving strides: channel rows overlap the time steps of the one before
        auto a = good_forward();
        a.out = Tensor(fake(3), DType::bf16, {2, 8, 33}, {8 * 33, 16, 1});
        CHECK(contains(fwd(a), "out: strides (264, 16, 1)"));
    }
    {   // a size-1 dim's stride does not matter, and padding between rows is fine: out
        // passes, and the error is the later one, about final_states
        auto a = good_forward(1);
        a.out = Tensor(fake(3), DType::bf16, {1, 8, 33}, {0, 40, 1});
        a.final_states = Tensor(fake(5), DType::fp32, {1, 8, 3});
        CHECK(contains(fwd(a), "final_states: expected dtype bf16"));
    }
    {   // final_states in place of initial_states
        auto a = good_forward();
        a.initial_states = Tensor(fake(5), DType::bf16, {2, 8, 3});
        a.final_states = a.initial_states;
        CHECK(contains(fwd(a), "final_states: its memory overlaps initial_states"));
    }
    {   // out over the weight
        auto a = good_forward();
        a.weight = Tensor(fake(3), DType::bf16, {8, 4});
        CHECK(contains(fwd(a), "out: its memory overlaps weight"));
    }
    BackwardArgs b;
    b.x = Tensor(fake(0), DType::fp16, {2, 8, 40});
    b.weight = Tensor(fake(1), DType::fp16, {8, 3});
    b.dout = Tensor(fake(2), DType::fp16, {2, 8, 40});
    b.dx = Tensor(fake(3), DType::fp16, {2, 8, 40});
    b.dweight = b.weight;
    CHECK(contains(error_of([&] { runtime().backward(b); }), "dweight: its memory overlaps weight"));
    b.dweight = Tensor(fake(4), DType::fp32, {8, 3}, {0, 1});
    CHECK(contains(error_of([&] { runtime().backward(b); }), "dweight: strides (0, 1)"));
    b.dweight = Tensor(fake(3), DType::fp32, {8, 3});
    CHECK(contains(error_of([&] { runtime().backward(b); }), "dweight: its memory overlaps dx"));

    UpdateArgs u;
    u.x = Tensor(fake(0), DType::bf16, {4, 16});
    u.weight = Tensor(fake(1), DType::bf16, {16, 4});
    u.out = Tensor(fake(2), DType::bf16, {4, 16});
    u.conv_state = Tensor(fake(1), DType::bf16, {4, 16, 3});
    CHECK(contains(error_of([&] { runtime().update(u); }), "conv_state: its memory overlaps weight"));

    VarlenForwardArgs v;
    v.x = Tensor(fake(0), DType::bf16, {16, 100});
    v.weight = Tensor(fake(1), DType::bf16, {16, 4});
    v.out = Tensor(fake(2), DType::bf16, {16, 100}, {0, 1});
    v.cu_seqlens = Tensor(fake(3), DType::int32, {3});
    CHECK(contains(error_of([&] { runtime().varlen_forward(v); }), "out: strides (0, 1)"));
}

TEST_CASE("valid arguments on a host without a GPU give backend_unavailable, not a crash") {
    try {
        device::open_any();
        MESSAGE("a GPU is present: this case only runs where none is");
        return;
    } catch (const Error&) {
    }
    auto a = good_forward();
    CHECK(contains(error_of([&] { runtime().forward(a); }, ErrorCode::backend_unavailable), "no usable GPU"));
}
