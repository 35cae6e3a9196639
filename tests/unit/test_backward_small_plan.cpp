// Which backward calls run the small-call kernel (bwd_small.cu) and how it is laid out:
// calls of at most CC1D_BWD_SMALL_POSITIONS positions a thread and 2^17 elements
// (channel-first short rows more: 16 positions a thread and 2^21 elements in 16-bit, 8
// and 2^19 in fp32; channel-last runs 2^19 over at most 128 positions, 2^18 over 256),
// views within 2^31 elements, shared memory within 48 KiB, not switched off; as many
// slots a channel as positions (channel-last at widths up to 4: as runs of
// CC1D_BWD_SMALL_CL_RUN(silu) positions; a power of two, at most the block), the rest of
// the block in channels. Channel-first calls whose rows are whole 16-byte vectors (widths
// up to 4, no seq_idx or states) take the module's vector kernel instead, up to two
// vectors a thread at any D. Such a call is one launch of the small-call variant's
// module, writing dweight and dbias itself; that variant is one module for both modes.
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "api/launch/backward_small.hpp"
#include "support/fake_tensors.hpp"
#include "support/recording_launcher.hpp"
#include "support/scoped_env.hpp"
#include "params.h"

using namespace cc1d;
using namespace cc1d::launch;

namespace {

Variant small_variant(Layout layout, int width = 4, bool seq_idx = false) {
    Variant v;
    v.op = Op::bwd;
    v.layout = layout;
    v.width = width;
    v.x_dtype = v.weight_dtype = DType::bf16;
    v.activation = Activation::silu;
    v.bias = true;
    v.seq_idx = seq_idx;
    return v;
}

const void* address(int slot) { return test::fake_address(slot); }

// `args` with x, dout and dx of `dtype` instead.
BackwardArgs with_x_dtype(BackwardArgs args, DType dtype) {
    for (Tensor* t : {&args.x, &args.dout, &args.dx}) t->dtype = dtype;
    return args;
}

// While alive, channel-first calls of whole vectors plan the element-wise kernel too.
struct ElementWiseOnly : test::ScopedEnv {
    ElementWiseOnly() : ScopedEnv("CC1D_DISABLE_SMALL_VECTORS", "1") {}
};

// A whole call's tensors at fake aligned addresses, contiguous in `layout`.
BackwardArgs call_args(std::int64_t B, std::int64_t D, std::int64_t L, Layout layout, int width = 4) {
    BackwardArgs a;
    a.x = test::fake_bdl(0, DType::bf16, B, D, L, layout);
    a.dout = test::fake_bdl(1, DType::bf16, B, D, L, layout);
    a.dx = test::fake_bdl(2, DType::bf16, B, D, L, layout);
    a.weight = Tensor(address(3), DType::bf16, {D, width});
    a.dweight = Tensor(const_cast<void*>(address(4)), DType::fp32, {D, width});
    a.bias = Tensor(address(5), DType::bf16, {D});
    a.dbias = Tensor(const_cast<void*>(address(6)), DType::fp32, {D});
    a.activation = Activation::silu;
    return a;
}

}  // namespace

TEST_CASE("small backward plan: slots a channel follow the positions, the block's rest takes channels") {
    const ElementWiseOnly element_wise;   // (rows of whole vectors would take the vector kernel)
    struct Case {
        std::int64_t B, D, L;
        int shift, slots;
        std::int64_t blocks;
    };
    // Channel-first: a slot a position.
    for (const Case& c : {Case{2, 64, 128, 0, 256, 64}, Case{1, 300, 1, 8, 1, 2}, Case{1, 37, 3, 6, 4, 1},
                          Case{3, 67, 5, 4, 16, 5}, Case{4, 64, 256, 0, 256, 64}, Case{1, 4096, 16, 4, 16, 256}}) {
        INFO("B=", c.B, " D=", c.D, " L=", c.L);
        const auto plan = backward::plan_small(small_variant(Layout::channel_first), call_args(c.B, c.D, c.L, Layout::channel_first));
        REQUIRE(plan.has_value());
        CHECK(plan->channel_shift == c.shift);
        CHECK(plan->slots == c.slots);
        CHECK((plan->slots << plan->channel_shift) == CC1D_BWD_SMALL_THREADS);
        CHECK(plan->blocks == c.blocks);
        // Every position has a slot within CC1D_BWD_SMALL_POSITIONS per thread.
        CHECK(c.B * c.L <= std::int64_t(plan->slots) * CC1D_BWD_SMALL_POSITIONS);
    }
    // Channel-last at widths up to 4: a slot a run of CC1D_BWD_SMALL_CL_RUN(silu)
    // positions of a row, 4 with SiLU (2x64x128: 2 rows of 32 runs, so 64 slots and 4
    // channels a block), 8 without (2 rows of 16 runs: 32 slots, 8 channels).
    static_assert(CC1D_BWD_SMALL_CL_RUN(true) == 4 && CC1D_BWD_SMALL_CL_RUN(false) == 8,
                  "the runs counted below are of 4 positions with SiLU, 8 without");
    Variant no_silu = small_variant(Layout::channel_last);
    no_silu.activation = Activation::none;
    for (const auto& [v, c] : {std::pair{small_variant(Layout::channel_last), Case{2, 64, 128, 2, 64, 16}},
                               std::pair{small_variant(Layout::channel_last), Case{1, 300, 1, 8, 1, 2}},
                               std::pair{small_variant(Layout::channel_last), Case{1, 37, 3, 8, 1, 1}},
                               std::pair{small_variant(Layout::channel_last), Case{3, 67, 5, 5, 8, 3}},
                               std::pair{small_variant(Layout::channel_last), Case{4, 64, 256, 0, 256, 64}},
                               std::pair{small_variant(Layout::channel_last), Case{1, 4096, 16, 6, 4, 64}},
                               std::pair{small_variant(Layout::channel_last), Case{3, 67, 341, 0, 256, 67}},
                               std::pair{no_silu, Case{2, 64, 128, 3, 32, 8}}, std::pair{no_silu, Case{1, 4096, 16, 7, 2, 32}},
                               std::pair{no_silu, Case{4, 64, 256, 1, 128, 32}}}) {
        INFO("B=", c.B, " D=", c.D, " L=", c.L, " silu=", v.activation == Activation::silu);
        const auto plan = backward::plan_small(v, call_args(c.B, c.D, c.L, Layout::channel_last));
        REQUIRE(plan.has_value());
        CHECK(plan->channel_shift == c.shift);
        CHECK(plan->slots == c.slots);
        CHECK((plan->slots << plan->channel_shift) == CC1D_BWD_SMALL_THREADS);
        CHECK(plan->blocks == c.blocks);
    }
    // Wider windows stage, a slot a position, as channel-first does.
    const auto wide = backward::plan_small(small_variant(Layout::channel_last, 16), call_args(2, 64, 128, Layout::channel_last, 16));
    REQUIRE(wide.has_value());
    CHECK(wide->channel_shift == 0);
    CHECK(wide->slots == 256);
    // dinitial_states adds the K positions before each row start to its runs: rows of 126
    // are 32 runs of 4 without them, 33 with them (so 66 slots, rounded up to 128).
    Variant states = small_variant(Layout::channel_last);
    states.initial_states = true;
    BackwardArgs with_dinit = call_args(2, 64, 126, Layout::channel_last);
    with_dinit.initial_states = Tensor(address(7), DType::bf16, {2, 64, 3});
    auto plan = backward::plan_small(states, with_dinit);
    REQUIRE(plan.has_value());
    CHECK(plan->slots == 64);
    with_dinit.dinitial_states = Tensor(const_cast<void*>(address(8)), DType::bf16, {2, 64, 3});
    plan = backward::plan_small(states, with_dinit);
    REQUIRE(plan.has_value());
    CHECK(plan->slots == 128);
}

TEST_CASE("small backward plan: shared memory as the kernel lays it out") {
    const ElementWiseOnly element_wise;   // (rows of whole vectors would take the vector kernel)
    // 2x64x128, width 4, one channel a block: x̃ rows 2 * (128 + 3), g 256, no ids.
    auto plan = backward::plan_small(small_variant(Layout::channel_first), call_args(2, 64, 128, Layout::channel_first));
    REQUIRE(plan.has_value());
    CHECK(plan->shared_bytes == 4u * (2 * 131 + 256));
    // With seq_idx the ids of the staged rows follow.
    plan = backward::plan_small(small_variant(Layout::channel_first, 4, true), call_args(2, 64, 128, Layout::channel_first));
    REQUIRE(plan.has_value());
    CHECK(plan->shared_bytes == 4u * (2 * 131 + 256 + 2 * 131));
    // One position: 256 channels a block, whose sums (width + 1 a channel, one lane group
    // each) outgrow the staged rows of 1 + K.
    plan = backward::plan_small(small_variant(Layout::channel_first, 4), call_args(1, 300, 1, Layout::channel_first));
    REQUIRE(plan.has_value());
    CHECK(plan->shared_bytes == 4u * 256 * (5 + 1));
    // Channel-last runs in registers stage nothing: the sums alone, width + 1 a channel and
    // lane group (2x64x128 with SiLU: 4 channels of 64 runs, 8 lanes a channel in a warp,
    // so 8 groups), with or without seq_idx.
    for (bool seq_idx : {false, true}) {
        plan = backward::plan_small(small_variant(Layout::channel_last, 4, seq_idx), call_args(2, 64, 128, Layout::channel_last));
        REQUIRE(plan.has_value());
        CHECK(plan->shared_bytes == 4u * 4 * 5 * 8);
    }
    plan = backward::plan_small(small_variant(Layout::channel_last, 4), call_args(1, 300, 1, Layout::channel_last));
    REQUIRE(plan.has_value());
    CHECK(plan->shared_bytes == 4u * 256 * 5);
    // Wider windows stage as in channel-first.
    plan = backward::plan_small(small_variant(Layout::channel_last, 16, true), call_args(2, 64, 128, Layout::channel_last, 16));
    REQUIRE(plan.has_value());
    CHECK(plan->shared_bytes == 4u * (2 * 143 + 256 + 2 * 143));
}

TEST_CASE("small backward plan: larger calls, far-reaching views and switched off go to the main kernels") {
    const Variant v = small_variant(Layout::channel_last);
    CHECK(backward::plan_small(v, call_args(4, 64, 256, Layout::channel_last)));      // 1024 positions
    CHECK_FALSE(backward::plan_small(v, call_args(5, 64, 205, Layout::channel_last)));   // 1025 positions
    CHECK(backward::plan_small(v, call_args(1, 128, 1024, Layout::channel_last)));       // 2^17 elements
    CHECK_FALSE(backward::plan_small(v, call_args(1, 129, 1024, Layout::channel_last)));
    CHECK_FALSE(backward::plan_small(v, call_args(0, 64, 128, Layout::channel_last)));   // nothing to walk
    CHECK_FALSE(backward::plan_small(v, call_args(2, 0, 128, Layout::channel_last)));
    CHECK_FALSE(backward::plan_small(v, call_args(2, 64, 0, Layout::channel_last)));
    // Width 16 with ids on 1024 rows of one step: 2 * 1024 * 16 staged entries, over 48 KiB.
    CHECK(backward::plan_small(small_variant(Layout::channel_last, 4, true), call_args(1024, 1, 1, Layout::channel_last)));
    CHECK_FALSE(backward::plan_small(small_variant(Layout::channel_last, 16, true),
                                     call_args(1024, 1, 1, Layout::channel_last, 16)));
    // A view of a larger tensor whose last element lies 2^31 elements on: 32-bit offsets
    // would not reach it.
    BackwardArgs far = call_args(2, 64, 128, Layout::channel_last);
    far.dout = Tensor(address(1), DType::bf16, {2, 64, 128}, {std::int64_t(1) << 31, 1, 64});
    CHECK_FALSE(backward::plan_small(v, far));
    // The same with a negative stride: offsets down to -2^31 do not fit either.
    far.dout = Tensor(address(1), DType::bf16, {2, 64, 128}, {-(std::int64_t(1) << 31), 1, 64});
    CHECK_FALSE(backward::plan_small(v, far));
    {
        test::ScopedEnv off("CC1D_DISABLE_SMALL_BACKWARD", "1");
        CHECK_FALSE(backward::plan_small(v, call_args(2, 64, 128, Layout::channel_last)));
    }
    CHECK(backward::plan_small(v, call_args(2, 64, 128, Layout::channel_last)));
}

TEST_CASE("small backward plan: channel-first short rows up to 2^21 elements in 16-bit, 2^19 in fp32") {
    const ElementWiseOnly element_wise;   // (rows of whole vectors would take the vector kernel)
    // Rows of at most 64 positions, or of 128 at two or more positions a thread (up to 16
    // in 16-bit, B * L <= 4096; 8 in fp32), at widths up to 4: the main kernel's row-sized
    // tiles would leave most of their threads idle.
    const Variant cf = small_variant(Layout::channel_first);
    CHECK(backward::plan_small(cf, call_args(4, 1024, 128, Layout::channel_first)));    // 2^19 elements
    CHECK(backward::plan_small(cf, call_args(4, 4096, 128, Layout::channel_first)));    // 2^21
    CHECK_FALSE(backward::plan_small(cf, call_args(4, 4097, 128, Layout::channel_first)));
    CHECK(backward::plan_small(cf, call_args(8, 2048, 128, Layout::channel_first)));    // four positions a thread
    CHECK(backward::plan_small(cf, call_args(16, 1024, 128, Layout::channel_first)));   // eight
    CHECK(backward::plan_small(cf, call_args(32, 512, 128, Layout::channel_first)));    // sixteen
    CHECK(backward::plan_small(cf, call_args(64, 512, 64, Layout::channel_first)));
    CHECK_FALSE(backward::plan_small(cf, call_args(33, 128, 128, Layout::channel_first)));   // 4,224 positions
    CHECK_FALSE(backward::plan_small(cf, call_args(3, 64, 512, Layout::channel_first)));     // rows of 512: four a thread at most
    CHECK(backward::plan_small(cf, call_args(2, 16384, 64, Layout::channel_first)));    // rows of 64
    CHECK_FALSE(backward::plan_small(cf, call_args(2, 2048, 128, Layout::channel_first)));   // 256 positions, rows of 128
    CHECK_FALSE(backward::plan_small(cf, call_args(4, 512, 129, Layout::channel_first)));    // rows of 129
    CHECK_FALSE(backward::plan_small(cf, call_args(1, 1024, 512, Layout::channel_first)));   // rows of 512
    CHECK(backward::plan_small(cf, call_args(1, 128, 1024, Layout::channel_first)));    // 2^17: any call that small
    auto fp16 = cf;
    fp16.x_dtype = fp16.weight_dtype = DType::fp16;
    CHECK(backward::plan_small(fp16, call_args(4, 1024, 128, Layout::channel_first)));
    auto fp32 = cf;
    fp32.x_dtype = fp32.weight_dtype = DType::fp32;
    CHECK(backward::plan_small(fp32, call_args(4, 1024, 128, Layout::channel_first)));   // 2^19
    CHECK_FALSE(backward::plan_small(fp32, call_args(4, 1025, 128, Layout::channel_first)));
    CHECK(backward::plan_small(fp32, call_args(2, 4096, 64, Layout::channel_first)));    // rows of 64
    CHECK_FALSE(backward::plan_small(fp32, call_args(2, 8192, 64, Layout::channel_first)));
    CHECK(backward::plan_small(fp32, call_args(16, 256, 128, Layout::channel_first)));   // eight positions a thread
    CHECK_FALSE(backward::plan_small(fp32, call_args(17, 128, 128, Layout::channel_first)));   // nine
    // Not for wider windows (the staged phases) or channel-last calls of 512 positions
    // (their own limits below): those keep 2^17.
    CHECK_FALSE(backward::plan_small(small_variant(Layout::channel_first, 5), call_args(4, 1024, 128, Layout::channel_first, 5)));
    CHECK_FALSE(backward::plan_small(small_variant(Layout::channel_last), call_args(4, 1024, 128, Layout::channel_last)));
}

TEST_CASE("small backward plan: channel-last runs up to 2^19 elements over 128 positions, 2^18 over 256") {
    // Widths up to 4 (runs in registers): a block holds several channels of so few
    // positions. Past 256 positions, and at wider windows (staged), 2^17 as before.
    const Variant cl = small_variant(Layout::channel_last);
    CHECK(backward::plan_small(cl, call_args(1, 4096, 128, Layout::channel_last)));         // 2^19, 128 positions
    CHECK_FALSE(backward::plan_small(cl, call_args(1, 4097, 128, Layout::channel_last)));
    CHECK(backward::plan_small(cl, call_args(4, 1024, 32, Layout::channel_last)));          // 2^17, 128 positions
    CHECK(backward::plan_small(cl, call_args(2, 1024, 128, Layout::channel_last)));         // 2^18, 256 positions
    CHECK_FALSE(backward::plan_small(cl, call_args(2, 1025, 128, Layout::channel_last)));
    CHECK_FALSE(backward::plan_small(cl, call_args(3, 2100, 43, Layout::channel_last)));    // 129 positions, over 2^18
    CHECK(backward::plan_small(cl, call_args(3, 2000, 43, Layout::channel_last)));          // (258,000 elements)
    CHECK_FALSE(backward::plan_small(cl, call_args(2, 512, 256, Layout::channel_last)));    // 512 positions, 2^18
    CHECK(backward::plan_small(cl, call_args(2, 256, 256, Layout::channel_last)));          // 2^17
    auto fp32 = cl;
    fp32.x_dtype = fp32.weight_dtype = DType::fp32;
    CHECK(backward::plan_small(fp32, with_x_dtype(call_args(1, 4096, 128, Layout::channel_last), DType::fp32)));
    CHECK_FALSE(backward::plan_small(small_variant(Layout::channel_last, 5),
                                     call_args(1, 2048, 128, Layout::channel_last, 5)));   // staged: 2^17
    CHECK(backward::plan_small(small_variant(Layout::channel_last, 5), call_args(1, 1024, 128, Layout::channel_last, 5)));
}

TEST_CASE("small backward call: one launch of its module's kernel, which writes dweight and dbias itself") {
    const ElementWiseOnly element_wise;   // (rows of whole vectors would take the vector kernel)
    for (Layout layout : {Layout::channel_first, Layout::channel_last})
        for (bool deterministic : {true, false}) {
            INFO("channel-last=", layout == Layout::channel_last, " deterministic=", deterministic);
            Variant v = small_variant(layout);
            v.deterministic = deterministic;
            const BackwardArgs args = call_args(2, 64, 128, layout);
            const auto plan = backward::plan_small(v, args);
            REQUIRE(plan.has_value());
            v.small_call = true;
            test::RecordingLauncher<cc1d_bwd_params> launcher;
            backward::run_small(launcher, v, args, *plan);
            // Channel-first a slot a position (one channel a block), channel-last a slot a
            // run of 4 with SiLU (4 channels a block).
            const bool cl = layout == Layout::channel_last;
            const auto& l = launcher.only_main_launch(CC1D_BWD_SMALL_THREADS, cl ? 16 : 64, plan->shared_bytes);
            CHECK(l.params.dw_mode == CC1D_DW_DIRECT);
            CHECK(l.params.small_channel_shift == (cl ? 2 : 0));
            CHECK(l.params.dim == 64);
        }
}

TEST_CASE("small-call variants: one module for both modes, named apart from the main kernels' module") {
    Variant main = small_variant(Layout::channel_last);
    Variant small = main;
    small.small_call = true;
    Variant small_atomic = small;
    small_atomic.deterministic = false;
    CHECK(small == small_atomic);
    CHECK_FALSE(small == main);
    CHECK(small.entry_name() == main.entry_name() + "_small");
    CHECK(small.canonical() == main.canonical() + ",small_call=1");
    CHECK(Variant::parse(small.canonical()) == small);
    // update and varlen_fwd have no small-call module (the forward's: test_forward_small_plan.cpp).
    for (Op op : {Op::update, Op::varlen_fwd}) {
        Variant other = small;
        other.op = op;
        CHECK_FALSE(other.normalized().small_call);
    }
}

TEST_CASE("small backward plan: channel-first rows of whole vectors take the vector kernel, up to 2 vectors a thread") {
    // 16-bit vectors of 8 positions, fp32 of 4; as many slots a channel as vectors (a power
    // of two, at most the block), the rest of the block in channels; no dynamic shared memory;
    // the kernel's one-vector form where every slot has at most one.
    struct Case {
        std::int64_t B, D, L;
        DType x;
        int shift, slots;
        std::int64_t blocks;
    };
    for (const Case& c : {Case{4, 256, 512, DType::bf16, 0, 256, 256},   // 256 vectors a channel
                          Case{4, 256, 512, DType::fp32, 0, 256, 256},   // 512: two a thread
                          Case{2, 64, 128, DType::bf16, 3, 32, 8}, Case{2, 64, 128, DType::fp32, 2, 64, 16},
                          Case{1, 300, 8, DType::fp16, 8, 1, 2}, Case{3, 37, 16, DType::bf16, 5, 8, 2},
                          Case{8, 4096, 512, DType::bf16, 0, 256, 4096}, Case{4, 16384, 512, DType::bf16, 0, 256, 16384}}) {
        INFO("B=", c.B, " D=", c.D, " L=", c.L, " x=", std::string(to_string(c.x)));
        Variant v = small_variant(Layout::channel_first);
        v.x_dtype = v.weight_dtype = c.x;
        const BackwardArgs args = with_x_dtype(call_args(c.B, c.D, c.L, Layout::channel_first), c.x);
        const auto plan = backward::plan_small(v, args);
        REQUIRE(plan.has_value());
        CHECK(plan->vectors);
        CHECK(plan->channel_shift == c.shift);
        CHECK(plan->slots == c.slots);
        CHECK((plan->slots << plan->channel_shift) == CC1D_BWD_SMALL_THREADS);
        CHECK(plan->blocks == c.blocks);
        CHECK(plan->shared_bytes == 0u);
        const std::int64_t vec = c.x == DType::fp32 ? 4 : 8;
        CHECK(c.B * c.L <= std::int64_t(plan->slots) * CC1D_BWD_CF_VECTOR_CHUNKS * vec);
        const bool one_vector = c.B * c.L <= std::int64_t(plan->slots) * vec;   // a vector a slot
        CHECK(plan->one_vector == one_vector);

        v.small_call = true;
        test::RecordingLauncher<cc1d_bwd_params> launcher;
        backward::run_small(launcher, v, args, *plan);
        REQUIRE(launcher.launches.size() == 1);
        const auto& l = launcher.launches[0];
        CHECK(l.kernel == (one_vector ? Kernel::vectors_one : Kernel::vectors));
        CHECK_FALSE(l.overlapped);
        CHECK(l.block.x == CC1D_BWD_SMALL_THREADS);
        CHECK(std::int64_t(l.grid.x) * l.grid.y == c.blocks);
        CHECK(l.shared == 0u);
        CHECK(l.params.dw_mode == CC1D_DW_DIRECT);
        CHECK(l.params.small_channel_shift == c.shift);
    }
}

TEST_CASE("small backward plan: the vector kernel only where every row is whole vectors, at widths up to 4 without features") {
    const Variant cf = small_variant(Layout::channel_first);
    auto vectors = [](const Variant& v, const BackwardArgs& args) {
        const auto plan = backward::plan_small(v, args);
        return plan.has_value() && plan->vectors;
    };
    CHECK(vectors(cf, call_args(8, 64, 512, Layout::channel_first)));           // 4096 positions, 2 vectors a thread
    CHECK_FALSE(backward::plan_small(cf, call_args(8, 64, 520, Layout::channel_first)));   // 520 vectors: main kernels
    CHECK_FALSE(vectors(cf, call_args(4, 64, 100, Layout::channel_first)));      // L not a multiple of 8
    CHECK_FALSE(vectors(small_variant(Layout::channel_first, 5), call_args(4, 64, 512, Layout::channel_first, 5)));
    CHECK_FALSE(vectors(small_variant(Layout::channel_first, 4, true), call_args(2, 64, 128, Layout::channel_first)));
    Variant states = cf;
    states.initial_states = true;
    CHECK_FALSE(vectors(states, call_args(2, 64, 128, Layout::channel_first)));
    CHECK_FALSE(vectors(small_variant(Layout::channel_last), call_args(2, 64, 128, Layout::channel_last)));
    auto fp32 = cf;
    fp32.x_dtype = fp32.weight_dtype = DType::fp32;
    auto fp32_args = [](std::int64_t B, std::int64_t D, std::int64_t L) {
        return with_x_dtype(call_args(B, D, L, Layout::channel_first), DType::fp32);
    };
    CHECK(vectors(fp32, fp32_args(4, 64, 512)));                   // 2048 positions
    CHECK_FALSE(backward::plan_small(fp32, fp32_args(8, 64, 512)));   // 4096 fp32 positions: 1024 vectors
    // Any of x, dout, dx off a 16-byte boundary, or strided by other than whole vectors.
    for (int which = 0; which < 3; ++which) {
        BackwardArgs args = call_args(2, 64, 128, Layout::channel_first);
        Tensor* t = which == 0 ? &args.x : which == 1 ? &args.dout : &args.dx;
        const Tensor aligned = *t;
        t->data = static_cast<const char*>(aligned.data) + 2;
        CHECK_FALSE(vectors(cf, args));
        *t = Tensor(aligned.data, DType::bf16, {2, 64, 128}, {64 * 132, 132, 1});   // rows 132 apart
        CHECK_FALSE(vectors(cf, args));
        *t = Tensor(aligned.data, DType::bf16, {2, 64, 128}, {64 * 136, 136, 1});   // rows 136 apart: whole vectors
        CHECK(vectors(cf, args));
    }
    // With SiLU at two vectors a thread only up to 2^21 elements in fp32, 2^24 in 16-bit;
    // one vector a thread, or no SiLU, at any size.
    CHECK(vectors(cf, call_args(8, 4096, 512, Layout::channel_first)));         // 2^24, two vectors a thread
    CHECK_FALSE(vectors(cf, call_args(8, 4097, 512, Layout::channel_first)));
    CHECK(vectors(cf, call_args(4, 16384, 512, Layout::channel_first)));        // one vector a thread
    auto plain = cf;
    plain.activation = Activation::none;
    CHECK(vectors(plain, call_args(8, 8192, 512, Layout::channel_first)));
    for (const auto& [B, D, L, takes] : {std::tuple{4, 1024, 512, true}, std::tuple{4, 1025, 512, false},
                                         std::tuple{2, 8192, 512, true}}) {   // the last: one vector a thread
        CHECK(vectors(fp32, fp32_args(B, D, L)) == takes);
    }
    test::ScopedEnv off("CC1D_DISABLE_SMALL_VECTORS", "1");
    CHECK_FALSE(vectors(cf, call_args(2, 64, 128, Layout::channel_first)));
    CHECK(backward::plan_small(cf, call_args(2, 64, 128, Layout::channel_first)));   // the element-wise kernel
}
