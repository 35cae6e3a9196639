// How the backward splits a call over blocks. Channel-last: one wave of long walks at most
// (a thread walks its chunk for the whole call, so a second wave would double the time),
// as full as whole chunks allow, and for fp32 and widths 5-8 a tail of short walks after
// it where the kernel holds no more blocks an SM than the wave plans (else, for fp32 up
// to width 4 without seq_idx, several waves of short walks); the tile kernel for calls
// of up to 2^27 elements, fp32 2^25 (without states, up to width 4; fp32 only
// with rows of whole 16-byte vectors); and a workspace query that covers the plan of any
// multiprocessor count, with or without a tail. Channel-first: tiles within the shared
// memory a block gets without opting in, the tile shapes and splits the measurements
// chose, a workspace query that covers the plan of any multiprocessor count, and in
// 16-bit the module of rows off 16-byte boundaries.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "api/launch/backward_plan.hpp"
#include "support/backward_variants.hpp"
#include "support/scoped_env.hpp"

using namespace cc1d;
using namespace cc1d::launch;

namespace {

// Only shapes matter to a plan: x (B, D, L), channel-last strides.
BackwardArgs shape_only_args(std::int64_t batch, std::int64_t dim, std::int64_t seqlen, DType dtype) {
    BackwardArgs args;
    args.x = Tensor(nullptr, dtype, {batch, dim, seqlen}, {dim * seqlen, 1, dim});
    return args;
}

BackwardArgs channel_first_args(std::int64_t batch, std::int64_t dim, std::int64_t seqlen, DType dtype) {
    BackwardArgs args;
    args.x = Tensor(nullptr, dtype, {batch, dim, seqlen}, {dim * seqlen, seqlen, 1});
    return args;
}

std::int64_t blocks_of(const backward::Plan& plan) { return plan.channel_groups * plan.parts; }

// Channel-last register walk: the blocks of the long walks, which start together (the
// tail's blocks, numbered after them, take the slots they leave).
constexpr std::int64_t kUnitsPerPart = CC1D_BWD_CL_THREADS / CC1D_BWD_CL_THREADS_X;
std::int64_t long_blocks_of(const backward::Plan& plan, std::int64_t batch) {
    return plan.channel_groups * ((batch * plan.tiles + kUnitsPerPart - 1) / kUnitsPerPart);
}

// The chunks of a channel-last plan cover every step of a row once: the long ones up to
// the tail (or the row end), the tail's up to the row end.
void check_covers(const backward::Plan& plan, std::int64_t batch, std::int64_t seqlen) {
    const std::int64_t long_end = plan.tail_tiles > 0 ? plan.tail_start : seqlen;
    CHECK(plan.tiles * plan.tile_len >= long_end);        // every step in some chunk
    CHECK((plan.tiles - 1) * plan.tile_len < long_end);   // and no empty chunk
    if (plan.tail_tiles > 0) {
        CHECK(plan.tail_start > 0);
        CHECK(plan.tail_start + plan.tail_tiles * plan.tail_len == seqlen);
    }
    CHECK(plan.parts * plan.units_per_part >= batch * (plan.tiles + plan.tail_tiles));
    CHECK((plan.parts - 1) * plan.units_per_part < batch * (plan.tiles + plan.tail_tiles));
}

constexpr int kH200Multiprocessors = 132;
// A channel-last kernel that holds 5 blocks an SM: more than any wave of the register walk
// plans, so its calls take no tail.
constexpr int kMoreThanPlanned = 5;
// The blocks a wave of the channel-last backward's register walk holds (up to width 4).
std::int64_t wave_of(DType dtype) {
    return kH200Multiprocessors * CC1D_BWD_CL_BLOCKS_PER_SM(static_cast<int>(dtype_size(dtype)));
}
// ... and of the kernel a plan runs.
std::int64_t wave_of(const backward::Plan& plan, DType dtype) {
    return plan.tile ? kH200Multiprocessors * CC1D_BWD_CL_TILE_BLOCKS_PER_SM : wave_of(dtype);
}
// A variant whose calls always take the register walk: states keep it at every size;
// 16-bit with seq_idx keeps the walk's 4 channels a thread (and its plan) at width 4
// (the states change no plan).
Variant register_walk_variant(DType dtype) {
    Variant v = test::silu_backward(dtype);
    v.seq_idx = true;
    v.initial_states = true;
    return v;
}

}  // namespace

TEST_CASE("channel-last backward plan: one wave, nearly full, every step covered") {
    struct Shape {
        std::int64_t batch, dim, seqlen;
        DType dtype;
        bool seq_idx;
    };
    // (fp32 with seq_idx: the long-walk rule below leaves those alone; 16-bit with it too
    // up to 2^27 elements, with states: without them those take the tile kernel.)
    const Shape shapes[] = {{4, 5376, 4096, DType::bf16, true},  {4, 5376, 4096, DType::fp32, true},
                            {8, 2048, 1024, DType::bf16, true},  {4, 4096, 512, DType::fp16, false},
                            {4, 256, 4096, DType::fp32, true},   {1, 64, 1000003, DType::bf16, true},
                            {8, 5376, 4096, DType::fp16, false}, {3, 1000, 777, DType::fp32, true}};
    for (const Shape& s : shapes) {
        CAPTURE(s.batch);
        CAPTURE(s.dim);
        CAPTURE(s.seqlen);
        Variant v = test::silu_backward(s.dtype);
        v.seq_idx = v.initial_states = s.seq_idx;
        const backward::Plan plan =
            backward::plan_channel_last(v, shape_only_args(s.batch, s.dim, s.seqlen, s.dtype), kH200Multiprocessors);
        CHECK(long_blocks_of(plan, s.batch) <= std::max(wave_of(plan, s.dtype), plan.channel_groups));
        check_covers(plan, s.batch, s.seqlen);
    }
    // 4x5376x4096 in 16-bit (4 channels a thread, 42 channel groups, 3 blocks a
    // multiprocessor): powers of two gave 336 of 396 blocks; whole-granule chunks fill 378.
    const backward::Plan wide = backward::plan_channel_last(
        register_walk_variant(DType::bf16), shape_only_args(4, 5376, 4096, DType::bf16), kH200Multiprocessors);
    CHECK(blocks_of(wide) == 378);
    CHECK(wide.tile_len == 456);
    // fp32 with seq_idx (2 channels a thread, 84 groups, 4 blocks): 504 of 528, then the tail.
    Variant fp32_seq = register_walk_variant(DType::fp32);
    const backward::Plan wide32 =
        backward::plan_channel_last(fp32_seq, shape_only_args(4, 5376, 4096, DType::fp32), kH200Multiprocessors);
    CHECK(long_blocks_of(wide32, 4) == 504);
    // 8x2048x1024 in 16-bit: 64-step chunks (512 blocks) overfill the wave; 128-step
    // chunks keep 256 blocks, at least 1.5 a multiprocessor.
    const backward::Plan mid = backward::plan_channel_last(
        register_walk_variant(DType::bf16), shape_only_args(8, 2048, 1024, DType::bf16), kH200Multiprocessors);
    CHECK(mid.tile_len == 128);
    CHECK(blocks_of(mid) == 256);
    // 4x4096x512 in 16-bit: 128-step chunks would leave 128 blocks; the wave-fitting 48
    // stay (352 blocks: 64-step chunks would leave 256).
    const backward::Plan short_rows = backward::plan_channel_last(
        register_walk_variant(DType::fp16), shape_only_args(4, 4096, 512, DType::fp16), kH200Multiprocessors);
    CHECK(short_rows.tile_len == 48);
    CHECK(blocks_of(short_rows) == 352);
}

TEST_CASE("channel-last backward plan: 16-bit x in waves of 3 blocks, fp32 in waves of 4") {
    // 16-bit kernels ask for 3 blocks a multiprocessor (up to 168 registers,
    // CC1D_BWD_CL_BLOCKS_PER_SM): a grid planned for 4 would run as 1.33 waves.
    for (const int width : {1, 2, 3, 4}) {
        for (const bool seq_idx : {false, true}) {
            for (const DType dtype : {DType::bf16, DType::fp32}) {
                if (dtype == DType::fp32 && !seq_idx) continue;   // several waves of short walks (below)
                Variant v = test::silu_backward(dtype);
                v.width = width;
                v.seq_idx = v.initial_states = seq_idx;   // (states: the walk at every size)
                CAPTURE(width);
                CAPTURE(seq_idx);
                CAPTURE(to_string(dtype));
                // 16-bit without states walks only past the tile kernel's 2^27 elements.
                const std::int64_t batch = dtype == DType::fp32 || seq_idx ? 4 : 8;
                const backward::Plan plan =
                    backward::plan_channel_last(v, shape_only_args(batch, 5376, 4096, dtype), kH200Multiprocessors);
                const std::int64_t wave = (dtype == DType::fp32 ? 4 : 3) * kH200Multiprocessors;
                CHECK(long_blocks_of(plan, batch) <= wave);
                CHECK(long_blocks_of(plan, batch) * 4 >= 3 * wave);   // at least 3/4 of that wave
            }
        }
    }
}

TEST_CASE("channel-last backward plan: walks shorter than the minimum chunk only for calls far from a wave") {
    // 4x256x4096 in 16-bit: 256 blocks of 32 steps, not 512 of 16.
    const backward::Plan long_rows = backward::plan_channel_last(
        register_walk_variant(DType::bf16), shape_only_args(4, 256, 4096, DType::bf16), kH200Multiprocessors);
    CHECK(long_rows.tile_len == CC1D_BWD_CL_MIN_CHUNK);
    // 2x64x128: a handful of blocks either way; 4-step walks finish sooner (16 partial rows).
    const backward::Plan tiny = backward::plan_channel_last(
        register_walk_variant(DType::bf16), shape_only_args(2, 64, 128, DType::bf16), kH200Multiprocessors);
    CHECK(tiny.tile_len == 4);
    // 4x256x512: 4-step walks would leave 128 partial rows, two batches per reduce run.
    const backward::Plan medium = backward::plan_channel_last(
        register_walk_variant(DType::bf16), shape_only_args(4, 256, 512, DType::bf16), kH200Multiprocessors);
    CHECK(medium.tile_len == 8);
    CHECK(medium.parts == 64);
}

TEST_CASE("channel-last backward plan: calls of up to 2^27 elements (fp32 2^25) take the tile kernel") {
    auto plan_of = [](Variant v, std::int64_t batch, std::int64_t dim, std::int64_t seqlen) {
        return backward::plan_channel_last(v, shape_only_args(batch, dim, seqlen, v.x_dtype), kH200Multiprocessors);
    };
    constexpr std::int64_t kRows = CC1D_BWD_CL_TILE_STEPS * CC1D_BWD_CL_THREADS / 32;
    for (const DType dtype : {DType::fp16, DType::bf16}) {
        for (const int width : {1, 2, 3, 4}) {
            for (const bool silu : {false, true}) {
                Variant v = test::silu_backward(dtype);
                v.width = width;
                v.activation = silu ? Activation::silu : Activation::none;
                CAPTURE(to_string(dtype));
                CAPTURE(width);
                CAPTURE(silu);
                // 4x4096x512: 64 channel groups, 32 tiles; 4 parts of 8 tiles each (16-bit
                // plans 2 blocks an SM, 264 on 132 SMs).
                const backward::Plan plan = plan_of(v, 4, 4096, 512);
                CHECK(plan.tile);
                CHECK(plan.tile_len == kRows);
                CHECK(plan.channel_groups == 4096 / CC1D_BWD_CL_TILE_CHANNELS(2));
                CHECK(plan.units_per_part == 8);
                CHECK(blocks_of(plan) == 256);
                // 8x2048x1024: 32 groups, 128 tiles; 8 parts of 16. 4x256x4096: 4 groups,
                // 256 tiles; 64 parts of 4. 8x2048x2048 (2^25): 8 parts of 32.
                CHECK(plan_of(v, 8, 2048, 1024).units_per_part == 16);
                CHECK(plan_of(v, 4, 256, 4096).units_per_part == 4);
                CHECK(plan_of(v, 4, 256, 512).units_per_part == 1);
                CHECK(plan_of(v, 8, 2048, 2048).units_per_part == 32);
                // Up to 2^27 elements at every width, with and without SiLU (4x5376x4096
                // among them); one element past 2^27 walks registers.
                CHECK(plan_of(v, 8, 2048, 1024).tile);
                CHECK(plan_of(v, 8, 4096, 1024).tile);
                CHECK(plan_of(v, 4, 5376, 4096).tile);
                CHECK(plan_of(v, 1, std::int64_t(1) << 27, 1).tile);
                CHECK(plan_of(v, 1, (std::int64_t(1) << 27) + 1, 1).tile == false);
                CHECK(plan_of(v, 8, 5376, 4096).tile == false);
            }
        }
    }
    // fp32: tiles of 32 channels, but only for rows of whole 16-byte vectors (an x of 1001
    // channels, or a dx view starting 4 bytes into its buffer, keeps the register walk).
    const Variant fp32 = test::silu_backward(DType::fp32);
    const backward::Plan plan32 = plan_of(fp32, 4, 4096, 512);
    CHECK(plan32.tile);
    CHECK(plan32.channel_groups == 4096 / CC1D_BWD_CL_TILE_CHANNELS(4));
    // fp32 walks at most 3 units a part: 4x4096x512 11 parts of 3 (a wave would be 6 of
    // 6), 1,408 blocks; 8x2048x1024 43 of 3 (a wave: 12 of 11); 4x256x4096 as the wave (3).
    CHECK(plan32.units_per_part == 3);
    CHECK(blocks_of(plan32) == 11 * 128);
    CHECK(plan_of(fp32, 8, 2048, 1024).units_per_part == 3);
    CHECK(plan_of(fp32, 8, 2048, 1024).parts == 43);
    CHECK(plan_of(fp32, 4, 256, 4096).units_per_part == 3);
    CHECK(plan_of(fp32, 4, 256, 512).units_per_part == 1);
    for (const bool silu : {false, true}) {
        Variant v = fp32;
        v.activation = silu ? Activation::silu : Activation::none;
        CAPTURE(silu);
        CHECK(plan_of(v, 8, 2048, 1024).tile);   // 2^24, width 4 with SiLU too
        CHECK(plan_of(v, 8, 2048, 2048).tile);   // 2^25
        CHECK(plan_of(v, 8, 2048, 2049).tile == false);
        CHECK(plan_of(v, 4, 5376, 4096).tile == false);
    }
    CHECK(CC1D_BWD_CL_TILE_CHANNELS(4) == 32);
    CHECK_FALSE(plan_of(fp32, 3, 1001, 777).tile);
    BackwardArgs shifted = shape_only_args(4, 256, 512, DType::fp32);
    shifted.dx = Tensor(reinterpret_cast<void*>(std::uintptr_t(4)), DType::fp32, {4, 256, 512}, {256 * 512, 1, 256});
    CHECK_FALSE(backward::plan_channel_last(fp32, shifted, kH200Multiprocessors).tile);
    CHECK(plan_of(test::silu_backward(DType::bf16), 3, 1001, 777).tile);   // 16-bit: either way
    // 16-bit rows off 16-byte boundaries (the module of such rows, staged through registers)
    // fill the whole wave, 6 blocks an SM (docs/perf.md entry 160): 4x2051x1024 on 132 SMs,
    // 33 channel groups, 792 / 33 = 24 parts of 3 units (22 parts), where D = 2048 plans 2
    // blocks an SM (8 parts of 8 units); with seq_idx too.
    CHECK(CC1D_BWD_CL_TILE_BLOCKS_PER_SM == 6);
    CHECK(plan_of(test::silu_backward(DType::bf16), 4, 2051, 1024).parts == 22);
    CHECK(plan_of(test::silu_backward(DType::bf16), 4, 2051, 1024).units_per_part == 3);
    CHECK(plan_of(test::silu_backward(DType::bf16), 4, 2048, 1024).parts == 8);
    // With seq_idx too (docs/perf.md entries 158-159), by the same limits; in 16-bit with
    // SiLU at width 4 up to 2^25 elements on a grid of 4 blocks an SM, where the others plan 2.
    Variant seq = test::silu_backward(DType::bf16);
    seq.seq_idx = true;
    CHECK(plan_of(seq, 4, 256, 512).tile);
    CHECK(plan_of(seq, 4, 4096, 512).tile);   // 2^23
    CHECK(plan_of(seq, 4, 5376, 4096).tile);
    CHECK_FALSE(plan_of(seq, 8, 5376, 4096).tile);   // past 2^27
    const Variant no_seq = test::silu_backward(DType::bf16);
    // 8x2048x1024 (2^24): 32 channel groups of 64; 4 blocks an SM give 16 parts of 8 units
    // (128 units), 2 give 8 of 16.
    CHECK(plan_of(seq, 8, 2048, 1024).parts == 16);
    CHECK(plan_of(seq, 8, 2048, 1024).units_per_part == 8);
    CHECK(plan_of(no_seq, 8, 2048, 1024).parts == 8);
    CHECK(plan_of(seq, 8, 4096, 1024).parts == 8);   // 2^25: 64 groups, 8 parts of 16
    CHECK(plan_of(seq, 8, 4096, 1025).parts == plan_of(no_seq, 8, 4096, 1025).parts);   // past 2^25
    for (const int width : {2, 3}) {
        Variant narrow = seq;
        narrow.width = width;
        CHECK(plan_of(narrow, 8, 2048, 1024).parts == 8);
    }
    Variant plain = seq;
    plain.activation = Activation::none;
    CHECK(plan_of(plain, 8, 2048, 1024).parts == 8);
    CHECK(plan_of(seq, 4, 5376, 4096).parts == plan_of(no_seq, 4, 5376, 4096).parts);
    CHECK(plan_of(seq, 4, 2051, 1024).parts == 22);   // rows off 16-byte boundaries: the whole wave
    for (const DType dtype : {DType::bf16, DType::fp16}) {
        CAPTURE(to_string(dtype));
        Variant other = test::silu_backward(dtype);
        other.seq_idx = true;
        other.width = 3;
        CHECK(plan_of(other, 4, 5376, 4096).tile);
        other.width = 4;
        other.activation = Activation::none;
        CHECK(plan_of(other, 4, 5376, 4096).tile);
        CHECK_FALSE(plan_of(other, 8, 5376, 4096).tile);   // past 2^27
    }
    Variant seq32 = fp32;
    seq32.seq_idx = true;
    CHECK(plan_of(seq32, 8, 2048, 1024).tile);   // fp32 with SiLU at width 4: up to 2^25
    CHECK_FALSE(plan_of(seq32, 4, 5376, 4096).tile);
    CHECK_FALSE(plan_of(seq32, 3, 1001, 777).tile);
    // Not for states or widths past 4, at any size.
    Variant init = test::silu_backward(DType::bf16);
    init.initial_states = true;
    CHECK_FALSE(plan_of(init, 4, 256, 512).tile);
    Variant fin = test::silu_backward(DType::bf16);
    fin.final_states = true;
    CHECK_FALSE(plan_of(fin, 4, 256, 512).tile);
    Variant wide = test::silu_backward(DType::bf16);
    wide.width = 5;
    CHECK_FALSE(plan_of(wide, 4, 256, 512).tile);
    // Every step and unit covered, one wave at most, for odd shapes.
    const std::int64_t shapes[][3] = {{1, 1, 1}, {3, 1001, 777}, {2, 65, 64}, {5, 64, 65}, {1, 130, 100003}, {7, 3, 129}};
    for (const auto& s : shapes) {
        CAPTURE(s[0]);
        CAPTURE(s[1]);
        CAPTURE(s[2]);
        const backward::Plan plan = plan_of(test::silu_backward(DType::bf16), s[0], s[1], s[2]);
        CHECK(plan.tile);
        CHECK(plan.tiles * plan.tile_len >= s[2]);
        CHECK((plan.tiles - 1) * plan.tile_len < s[2]);
        CHECK(plan.parts * plan.units_per_part >= s[0] * plan.tiles);
        CHECK((plan.parts - 1) * plan.units_per_part < s[0] * plan.tiles);   // no empty part
        CHECK(blocks_of(plan) <= std::max(wave_of(plan, DType::bf16), plan.channel_groups));
    }
}

TEST_CASE("channel-last backward: the module a call loads (Variant::tiled) is the one its plan runs") {
    // The Runtime sets Variant::tiled from takes_tile and loads that module, whose main
    // kernel the launcher runs for the plan: the two rules must agree on every call, and
    // the plan must not change with the flag.
    struct Call {
        DType dtype;
        int width;
        bool seq_idx;
        std::int64_t batch, dim, seqlen;
    };
    const Call calls[] = {{DType::bf16, 4, false, 4, 4096, 512},    {DType::fp16, 2, false, 4, 5376, 4096},
                          {DType::bf16, 4, false, 8, 5376, 4096},   {DType::fp32, 4, false, 8, 2048, 2048},
                          {DType::fp32, 3, false, 4, 5376, 4096},   {DType::fp32, 4, false, 3, 1001, 777},
                          {DType::bf16, 3, false, 3, 1001, 777},    {DType::bf16, 4, true, 4, 4096, 512},
                          {DType::bf16, 5, false, 4, 4096, 512},    {DType::fp32, 1, false, 1, 1, 1},
                          {DType::bf16, 4, true, 8, 5376, 4096},    {DType::fp32, 4, true, 4, 4096, 512},
                          {DType::bf16, 3, true, 4, 5376, 4096},    {DType::fp16, 4, true, 4, 256, 512}};
    int tiled = 0;
    for (const Call& c : calls) {
        CAPTURE(to_string(c.dtype));
        CAPTURE(c.width);
        CAPTURE(c.seq_idx);
        CAPTURE(c.dim);
        Variant v = test::silu_backward(c.dtype);
        v.width = c.width;
        v.seq_idx = c.seq_idx;
        const BackwardArgs args = shape_only_args(c.batch, c.dim, c.seqlen, c.dtype);
        const backward::Plan plan = backward::plan_channel_last(v, args, kH200Multiprocessors);
        CHECK(backward::takes_tile(v, args) == plan.tile);
        Variant loaded = v;
        loaded.tiled = backward::takes_tile(v, args);
        CHECK(loaded.normalized().tiled == plan.tile);
        const backward::Plan again = backward::plan_channel_last(loaded, args, kH200Multiprocessors);
        CHECK(again.tile == plan.tile);
        CHECK(again.parts == plan.parts);
        CHECK(again.units_per_part == plan.units_per_part);
        tiled += plan.tile;
    }
    CHECK(tiled == 9);
    // Never for channel-first calls.
    const Variant first = test::silu_backward(DType::bf16, Layout::channel_first);
    CHECK_FALSE(backward::takes_tile(first, channel_first_args(4, 4096, 512, DType::bf16)));
}

TEST_CASE("channel-last backward plan: fp32 walks of 256 channel-steps where one wave of walks would be long") {
    // Where no tail comes: a kernel that holds more blocks an SM than the wave plans
    // (below: with 4, the tail comes instead).
    auto plan_of = [](int width, DType dtype, std::int64_t batch, std::int64_t dim, std::int64_t seqlen,
                      bool seq_idx = false, bool states = false, int resident = kMoreThanPlanned) {
        Variant v = test::silu_backward(dtype);
        v.width = width;
        v.seq_idx = seq_idx;
        v.initial_states = v.final_states = states;
        return backward::plan_channel_last(v, shape_only_args(batch, dim, seqlen, dtype), kH200Multiprocessors, resident);
    };
    // 4x5376x4096 fp32, one wave of 688-step walks: 2 channels a thread (widths 3-4) walk
    // 128 steps, 4 (widths 1-2) walk 64; 2688 blocks either way, 5 waves of 528.
    for (const int width : {3, 4}) {
        CAPTURE(width);
        const backward::Plan plan = plan_of(width, DType::fp32, 4, 5376, 4096);
        CHECK(plan.tile_len == 128);
        CHECK(blocks_of(plan) == 2688);
        CHECK(plan_of(width, DType::fp32, 4, 5376, 4096, false, true).tile_len == 128);   // with both states
    }
    for (const int width : {1, 2}) {
        CAPTURE(width);
        const backward::Plan plan = plan_of(width, DType::fp32, 4, 5376, 4096);
        CHECK(plan.tile_len == 64);
        CHECK(blocks_of(plan) == 2688);
    }
    CHECK(plan_of(4, DType::fp32, 2, 4096, 8192).tile_len == 128);   // 512-step walks before
    // A kernel of 4 blocks an SM (or one whose count is unknown) takes the tail instead.
    for (const int resident : {4, 0}) {
        CAPTURE(resident);
        const backward::Plan tail = plan_of(4, DType::fp32, 4, 5376, 4096, false, false, resident);
        CHECK(tail.tail_tiles == 8);
        CHECK(tail.tile_len == 600);
        CHECK(plan_of(1, DType::fp32, 4, 5376, 4096, false, false, resident).tail_tiles == 8);
    }
    // Left alone: seq_idx, 16-bit x, widths past 4, and walks under 4 times the short one
    // (fp32 8x4100x1024, just past the fp32 tile kernel's 2^25 elements: the wave's walks of
    // 128 steps at width 2 and 256 at width 4 stay).
    // (Their long walks take a tail instead, below.)
    CHECK(long_blocks_of(plan_of(4, DType::fp32, 4, 5376, 4096, true), 4) == 504);
    CHECK(plan_of(4, DType::bf16, 4, 5376, 4096, true, true).tile_len == 456);   // (states: the walk)
    CHECK(long_blocks_of(plan_of(5, DType::fp32, 4, 5376, 4096), 4) <= wave_of(DType::fp32));
    for (const int width : {2, 4}) {
        CAPTURE(width);
        CHECK(plan_of(width, DType::fp32, 8, 4100, 1024).tile_len == (width == 2 ? 128 : 256));
    }
}

TEST_CASE("channel-last backward plan: a tail of 64-step walks after one wave of long ones, fp32 and widths 5-8") {
    auto plan_of = [](int width, DType dtype, std::int64_t batch, std::int64_t dim, std::int64_t seqlen, bool seq_idx,
                      int sm_count = kH200Multiprocessors, int resident = 0) {
        Variant v = test::silu_backward(dtype);
        v.width = width;
        v.seq_idx = seq_idx;
        return backward::plan_channel_last(v, shape_only_args(batch, dim, seqlen, dtype), sm_count, resident);
    };
    // 4x5376x4096 fp32 with seq_idx: 6 walks a row of 688 steps become 6 of 600 (the last
    // 584) and 8 of 64 from step 3584; 24 long units in 6 parts, then 32 tail units in 8.
    const backward::Plan seq32 = plan_of(4, DType::fp32, 4, 5376, 4096, true);
    CHECK(seq32.tile_len == 600);
    CHECK(seq32.tiles == 6);
    CHECK(seq32.tail_len == 64);
    CHECK(seq32.tail_tiles == 8);
    CHECK(seq32.tail_start == 3584);
    CHECK(seq32.parts == 14);
    check_covers(seq32, 4, 4096);
    // 16-bit x at widths 5-8 (two channels a thread, as fp32): the same split.
    for (const int width : {5, 8}) {
        CAPTURE(width);
        const backward::Plan plan = plan_of(width, DType::bf16, 4, 5376, 4096, false);
        CHECK(plan.tail_tiles == 8);
        check_covers(plan, 4, 4096);
    }
    // No tail: 16-bit up to width 4 (measured slower or no faster), widths past 8, walks
    // under 256 steps (8x2048x1024 fp32 with seq_idx), rows shorter than 512 steps, and the
    // tile kernel's calls; nor a kernel that holds more blocks an SM than the wave plans.
    for (const int width : {1, 2, 3, 4})
        for (const bool seq_idx : {false, true})
            for (const DType dtype : {DType::bf16, DType::fp16}) {
                CAPTURE(width);
                CAPTURE(seq_idx);
                CHECK(plan_of(width, dtype, 4, 5376, 4096, seq_idx).tail_tiles == 0);
                CHECK(plan_of(width, dtype, 1, 2048, 100000, seq_idx).tail_tiles == 0);
            }
    CHECK(plan_of(16, DType::bf16, 4, 5376, 4096, false).tail_tiles == 0);
    CHECK(plan_of(12, DType::fp32, 4, 5376, 4096, true).tail_tiles == 0);
    CHECK(plan_of(4, DType::fp32, 8, 2048, 1024, true).tail_tiles == 0);
    CHECK(plan_of(4, DType::fp32, 64, 2048, 500, true).tail_tiles == 0);
    CHECK(plan_of(4, DType::fp32, 4, 5376, 4096, false).tail_tiles == 8);   // (instead of the drain rule's walks)
    CHECK(plan_of(4, DType::fp32, 2, 4096, 2000, true).tail_tiles == 0);   // (tile kernel: <= 2^24 elements)
    for (const int resident : {0, 1, 3, 4, 5, 8}) {
        CAPTURE(resident);
        const bool fits = resident <= 4;   // (fp32, and 16-bit past width 4: waves of 4 blocks)
        CHECK((plan_of(4, DType::fp32, 4, 5376, 4096, true, kH200Multiprocessors, resident).tail_tiles > 0) == fits);
        CHECK((plan_of(8, DType::bf16, 4, 5376, 4096, false, kH200Multiprocessors, resident).tail_tiles > 0) == fits);
    }
    // The GPU test's shape (gpu/test_backward.cpp, "long walks with a tail") takes the
    // tail on every GPU of 100 to 163 multiprocessors, each variant it runs.
    for (int sm_count = 100; sm_count <= 163; ++sm_count) {
        CAPTURE(sm_count);
        const backward::Plan fp32 = plan_of(4, DType::fp32, 2, 1001, 21011, true, sm_count);
        CHECK(fp32.tail_tiles == 41);
        check_covers(fp32, 2, 21011);
        CHECK(plan_of(8, DType::bf16, 2, 1001, 21011, false, sm_count).tail_tiles == 41);
        CHECK(plan_of(5, DType::fp16, 2, 1001, 21011, true, sm_count).tail_tiles == 41);
        CHECK(plan_of(4, DType::fp32, 2, 1001, 21011, false, sm_count).tail_tiles == 41);
    }
}

TEST_CASE("channel-last backward plan: the workspace query covers the plan of every multiprocessor count") {
    // (8x5376x8192 fp32: 128-step walks on 132 multiprocessors give more parts than the
    // wave-fitting walks of 1024.)
    for (const DType dtype : {DType::fp32, DType::bf16})
        for (const int width : {1, 2, 4, 8})
            for (const bool seq_idx : {false, true})
                for (const auto& shape : std::vector<std::array<std::int64_t, 3>>{
                         {4, 5376, 4096}, {8, 5376, 8192}, {2, 4096, 8192}, {8, 2048, 2048}, {8, 2048, 1024},
                         {4, 256, 4096}, {1, 64, 100003}, {16, 96, 300}}) {
                    Variant v = test::silu_backward(dtype);
                    v.width = width;
                    v.seq_idx = seq_idx;
                    const BackwardArgs args = shape_only_args(shape[0], shape[1], shape[2], dtype);
                    const std::size_t query = launch::backward_workspace_bytes(v, args);
                    for (int sm_count = 1; sm_count <= 1024; sm_count += sm_count < 16 ? 1 : 7)
                        for (const int resident : {0, kMoreThanPlanned}) {   // (a tail, or none)
                            CAPTURE(to_string(dtype));
                            CAPTURE(width);
                            CAPTURE(seq_idx);
                            CAPTURE(shape[1]);
                            CAPTURE(sm_count);
                            CAPTURE(resident);
                            const backward::Plan plan = backward::plan_channel_last(v, args, sm_count, resident);
                            CHECK(backward::workspace_bytes(v, args, plan) <= query);
                        }
                }
}

TEST_CASE("channel-last backward plan: 16-bit calls get no fewer parts on more multiprocessors") {
    const std::int64_t shapes[][3] = {{4, 5376, 4096}, {2, 64, 128}, {8, 2048, 1024}, {1, 4096, 100000}, {16, 96, 300}};
    for (const auto& s : shapes) {
        std::int64_t previous = 0;
        for (int sms = 1; sms <= 1024; sms += 7) {
            const backward::Plan plan = backward::plan_channel_last(
                test::silu_backward(DType::bf16), shape_only_args(s[0], s[1], s[2], DType::bf16), sms);
            CAPTURE(sms);
            CHECK(plan.parts >= previous);
            previous = plan.parts;
        }
    }
}

TEST_CASE("channel-first backward plan: tiles within 48 KiB of shared memory, every step covered") {
    for (const DType dtype : {DType::fp32, DType::fp16, DType::bf16})
        for (const int width : {2, 4, 16})
            for (const bool seq_idx : {false, true})
                for (const bool silu : {false, true})
                    for (const std::int64_t seqlen : {1, 129, 1024, 4096, 100000})
                        for (const bool fast_memory : {false, true}) {
                            Variant v = test::silu_backward(dtype, Layout::channel_first);
                            v.width = width;
                            v.seq_idx = seq_idx;
                            v.final_states = seq_idx;
                            v.activation = silu ? Activation::silu : Activation::none;
                            CAPTURE(to_string(dtype));
                            CAPTURE(width);
                            CAPTURE(seq_idx);
                            CAPTURE(silu);
                            CAPTURE(seqlen);
                            CAPTURE(fast_memory);
                            const backward::Plan plan = backward::plan_channel_first(
                                v, channel_first_args(4, 96, seqlen, dtype), kH200Multiprocessors, fast_memory);
                            CHECK(plan.shared_bytes <= 48u * 1024u);
                            CHECK(plan.block.x % 64 == 0);
                            CHECK(plan.block.x <= CC1D_BWD_CF_THREADS);
                            CHECK(plan.ilp <= CC1D_BWD_CF_ILP(static_cast<int>(dtype_size(dtype))));
                            // The kernel holds CC1D_BWD_CF_REG_ILP vectors a thread in registers, no more.
                            if (!plan.stage_async) CHECK(plan.ilp <= CC1D_BWD_CF_REG_ILP);
                            if (dtype == DType::fp32) CHECK(!plan.stage_async);
                            if (dtype != DType::fp32 && (silu || fast_memory)) CHECK(plan.stage_async);
                            CHECK(plan.tiles * plan.tile_len >= seqlen);
                            CHECK((plan.tiles - 1) * plan.tile_len < std::max<std::int64_t>(seqlen, 1));
                            CHECK(plan.parts * plan.units_per_part >= 4 * plan.tiles);
                        }
}

TEST_CASE("channel-first backward plan: fp32 walks of at most 4 units where the channels fill 3 waves") {
    const Variant fp32 = test::silu_backward(DType::fp32, Layout::channel_first);
    // 4x5376x4096 fp32: 16 units a channel, 5376 channels >= 24 a multiprocessor: 4 parts of 4.
    const backward::Plan large =
        backward::plan_channel_first(fp32, channel_first_args(4, 5376, 4096, DType::fp32), kH200Multiprocessors, true);
    CHECK(large.tiles == 4);
    CHECK(large.parts == 4);
    CHECK(large.units_per_part == 4);
    // On a GPU of 256 multiprocessors the same channels fill under 3 waves: one walk.
    CHECK(backward::plan_channel_first(fp32, channel_first_args(4, 5376, 4096, DType::fp32), 256, true).parts == 1);
    // 8x2048x1024 fp32 (under a wave) and 16-bit calls keep one part.
    CHECK(backward::plan_channel_first(fp32, channel_first_args(8, 2048, 1024, DType::fp32), kH200Multiprocessors, true)
              .parts == 1);
    const Variant bf16 = test::silu_backward(DType::bf16, Layout::channel_first);
    CHECK(backward::plan_channel_first(bf16, channel_first_args(8, 5376, 8192, DType::bf16), kH200Multiprocessors, true)
              .parts == 1);
}

TEST_CASE("channel-first backward plan: the workspace query covers the plan of every multiprocessor count") {
    for (const DType dtype : {DType::fp32, DType::bf16})
        for (const bool seq_idx : {false, true})
            for (const auto& shape : std::vector<std::array<std::int64_t, 3>>{
                     {4, 5376, 4096}, {4, 256, 4096}, {16, 3, 4099}, {3, 4800, 2050}, {8, 2048, 1024}, {2, 20000, 777},
                     {8, 4, 4095}, {8, 4, 4100}}) {
                Variant v = test::silu_backward(dtype, Layout::channel_first);
                v.seq_idx = seq_idx;
                const BackwardArgs args = channel_first_args(shape[0], shape[1], shape[2], dtype);
                const std::size_t query = launch::backward_workspace_bytes(v, args);
                // (The Runtime picks the module of rows off 16-byte boundaries after the
                // query; its plan may take other tiles: 8x4x4100 in 16-bit.)
                for (const bool shifted_rows : {false, true})
                    for (int sm_count = 1; sm_count <= 1024; sm_count += sm_count < 16 ? 1 : 7)
                        for (const bool fast_memory : {false, true}) {
                            CAPTURE(to_string(dtype));
                            CAPTURE(seq_idx);
                            CAPTURE(shape[1]);
                            CAPTURE(shifted_rows);
                            CAPTURE(sm_count);
                            Variant planned = v;
                            planned.shifted_rows = shifted_rows;
                            const backward::Plan plan = backward::plan_channel_first(planned, args, sm_count, fast_memory);
                            CHECK(backward::workspace_bytes(v, args, plan) <= query);
                        }
            }
}

TEST_CASE("channel-first backward plan: the shifted-rows module's tiles follow x's rows' own boundaries") {
    // x, dout and dx alike, `data` as the start, contiguous unless `strides` are given.
    auto args_of = [](DType dtype, std::int64_t batch, std::int64_t dim, std::int64_t seqlen, std::uintptr_t data,
                      std::array<std::int64_t, 3> strides) {
        BackwardArgs args;
        args.x = Tensor(reinterpret_cast<const void*>(data), dtype, {batch, dim, seqlen}, {strides[0], strides[1], strides[2]});
        args.dout = args.dx = args.x;
        args.weight = Tensor(nullptr, dtype, {dim, 4}, {4, 1});
        args.dweight = Tensor(nullptr, DType::fp32, {dim, 4}, {4, 1});
        return args;
    };
    auto contiguous = [](std::int64_t dim, std::int64_t seqlen) { return std::array<std::int64_t, 3>{dim * seqlen, seqlen, 1}; };
    const std::uintptr_t aligned = 0x10000, off_by_one = 0x10002;
    for (DType dtype : {DType::bf16, DType::fp16}) {
        INFO(to_string(dtype));
        const Variant main_module = test::silu_backward(dtype, Layout::channel_first);
        Variant v = main_module;
        v.shifted_rows = true;
        const BackwardArgs odd = args_of(dtype, 4, 5376, 4095, aligned, contiguous(5376, 4095));
        CHECK(backward::follows_own_boundaries(v, odd));
        CHECK(backward::make_params(v, odd).vector_ok == 1);   // (x's vectors follow its rows' boundaries)
        CHECK_FALSE(backward::follows_own_boundaries(main_module, odd));
        CHECK(backward::make_params(main_module, odd).vector_ok == 0);
        // A row starts up to 7 positions after its first vector, yet the tiles cover L
        // positions, an aligned row's vectors, the kernel taking a row's tail after its last
        // tile from the tile's halo: 4095 and 4089 take one tile of 512 vectors (4 rounds of
        // 128 threads), 8190 two. 4100 would take a second tile of one vector, so its tile
        // takes up to 5 vectors a thread (within the shared memory a block may use), as
        // many as the row needs: 513 (4104 positions, not the block's 640 slots). The main
        // module plans tiles of 4096 for all.
        auto plan_of = [&](const Variant& variant, std::int64_t seqlen) {
            return backward::plan_channel_first(variant, args_of(dtype, 4, 5376, seqlen, aligned, contiguous(5376, seqlen)),
                                                kH200Multiprocessors, true);
        };
        for (std::int64_t seqlen : {4095, 4089, 8190, 4100}) {
            CAPTURE(seqlen);
            const backward::Plan plan = plan_of(v, seqlen);
            CHECK(plan.shared_bytes <= 48u * 1024u);
            CHECK(plan.stage_async);
            CHECK(plan.tile_len == (seqlen == 4100 ? 4104 : 4096));
            CHECK(plan.block.x == 128u);
            CHECK(plan.ilp == (seqlen == 4100 ? CC1D_BWD_CF_OWN_ILP(2) : 4));
            CHECK(plan.tiles == (seqlen == 8190 ? 2 : 1));
            CHECK(plan.tiles * plan.tile_len >= seqlen);   // (the tail is under a vector)
            CHECK(plan_of(main_module, seqlen).tile_len == 4096);
        }
        // Its shared memory is that of the tile, not of the block's slots: 4100 takes less
        // than 4096 + 1024 positions would (the main module's tile at 5 vectors a thread).
        CHECK(plan_of(v, 4100).shared_bytes < plan_of(v, 4089).shared_bytes * 5 / 4);
        // Rows of one tile: 1023 takes 128 vectors (64 threads, 2 rounds; with its lead it
        // took 129, a third round of one vector), 511 takes 64 (one round); 1031 passes 128
        // vectors by one (64 threads, 3 rounds, the last of one vector).
        for (const auto& [seqlen, vectors, ilp] :
             {std::array<std::int64_t, 3>{1023, 128, 2}, {511, 64, 1}, {1031, 129, 3}}) {
            CAPTURE(seqlen);
            const backward::Plan plan = backward::plan_channel_first(
                v, args_of(dtype, 4, 4096, seqlen, aligned, contiguous(4096, seqlen)), kH200Multiprocessors, true);
            CHECK(plan.tile_len == vectors * 8);
            CHECK(plan.block.x == 64u);
            CHECK(plan.ilp == ilp);
            CHECK(plan.tiles == 1);
        }
        // Width 1 has no halo to hold a row's tail: its tiles cover L + lead positions,
        // 1023 + 7 in 129 vectors.
        Variant narrow = v;
        narrow.width = 1;
        CHECK(backward::plan_channel_first(narrow, args_of(dtype, 4, 4096, 1023, aligned, contiguous(4096, 1023)),
                                           kH200Multiprocessors, true)
                  .tile_len == 129 * 8);
        // x on 16-byte boundaries (dout or dx off them): no lead, no room.
        BackwardArgs dout_off = args_of(dtype, 4, 5376, 4096, aligned, contiguous(5376, 4096));
        dout_off.dout = Tensor(reinterpret_cast<const void*>(off_by_one), dtype, {4, 5376, 4096}, {5376 * 4096, 4096, 1});
        CHECK(backward::follows_own_boundaries(v, dout_off));
        CHECK(backward::plan_channel_first(v, dout_off, kH200Multiprocessors, true).tile_len == 4096);
        // With seq_idx (the masks lie on vectors from position 0), or x of no unit stride:
        // the module's shifted loads, tiles from position 0.
        Variant seq = v;
        seq.seq_idx = true;
        CHECK_FALSE(backward::follows_own_boundaries(seq, odd));
        CHECK(backward::plan_channel_first(seq, odd, kH200Multiprocessors, true).tile_len == 4096);
        const BackwardArgs strided = args_of(dtype, 4, 5376, 4095, aligned, std::array<std::int64_t, 3>{5376 * 4095, 1, 5376});
        CHECK_FALSE(backward::follows_own_boundaries(v, strided));
        CHECK(backward::make_params(v, strided).vector_ok == 0);
        // CC1D_DISABLE_OWN_BOUNDARIES: the module's shifted loads, no room for a lead.
        {
            test::ScopedEnv shifted("CC1D_DISABLE_OWN_BOUNDARIES", "1");
            CHECK_FALSE(backward::follows_own_boundaries(v, odd));
            CHECK(backward::make_params(v, odd).vector_ok == 0);
            CHECK(plan_of(v, 4100).tile_len == 4096);
        }
        CHECK(plan_of(v, 4100).tile_len == 4104);
    }
    // fp32 has no such module (normalized away).
    Variant fp32 = test::silu_backward(DType::fp32, Layout::channel_first);
    fp32.shifted_rows = true;
    CHECK_FALSE(backward::follows_own_boundaries(fp32, args_of(DType::fp32, 4, 256, 4095, aligned, contiguous(256, 4095))));
}

TEST_CASE("channel-first backward plan: seq_idx puts a row of masks a batch in the workspace") {
    // The masks kernel writes seq_mask_stride masks a row (the length rounded up to 16),
    // 1 byte each up to width 8, 2 past it, from the first 256-byte boundary after the
    // partial sums, wherever the workspace starts.
    for (const int width : {4, 8, 9, 16})
        for (const std::int64_t seqlen : {1, 16, 129, 4096}) {
            CAPTURE(width);
            CAPTURE(seqlen);
            Variant v = test::silu_backward(DType::bf16, Layout::channel_first);
            v.width = width;
            v.seq_idx = true;
            const BackwardArgs args = channel_first_args(3, 64, seqlen, DType::bf16);
            const backward::Plan plan = backward::plan_channel_first(v, args, kH200Multiprocessors, true);
            CHECK(plan.seq_mask_stride == (seqlen + 15) / 16 * 16);
            backward::Plan without_masks = plan;
            without_masks.seq_mask_stride = 0;
            const std::size_t mask_bytes = width <= 8 ? 1 : 2;
            CHECK(backward::workspace_bytes(v, args, plan) ==
                  backward::workspace_bytes(v, args, without_masks) + 255 + 3 * plan.seq_mask_stride * mask_bytes);
        }
    Variant plain = test::silu_backward(DType::bf16, Layout::channel_first);
    CHECK(backward::plan_channel_first(plain, channel_first_args(3, 64, 129, DType::bf16), kH200Multiprocessors, true)
              .seq_mask_stride == 0);
    // 16-bit 4x5376x4096 with seq_idx: the masks leave room for the tile without seq_idx
    // (128 threads of 4 vectors; int32 ids took 64 threads).
    plain.seq_idx = true;
    const backward::Plan large =
        backward::plan_channel_first(plain, channel_first_args(4, 5376, 4096, DType::bf16), kH200Multiprocessors, true);
    CHECK(large.block.x == 128);
    CHECK(large.ilp == 4);
}

TEST_CASE("channel-first backward plan: the measured tile shapes") {
    const Variant fp32 = test::silu_backward(DType::fp32, Layout::channel_first);
    // 8x2048x1024 fp32 without SiLU: two tiles of 64 threads a row (more blocks resident
    // than 128-thread tiles); with SiLU one of 128 threads (docs/perf.md, entry 154). The
    // same for rows of 513 steps (129 vectors), the shortest that two tiles of 64 take.
    Variant fp32_none = fp32;
    fp32_none.activation = Activation::none;
    for (std::int64_t seqlen : {1024, 513}) {
        CAPTURE(seqlen);
        const backward::Plan mid_none = backward::plan_channel_first(
            fp32_none, channel_first_args(8, 2048, seqlen, DType::fp32), kH200Multiprocessors, true);
        CHECK(mid_none.block.x == 64);
        CHECK(mid_none.ilp == 2);
        CHECK(mid_none.tiles == 2);
        const backward::Plan mid_silu =
            backward::plan_channel_first(fp32, channel_first_args(8, 2048, seqlen, DType::fp32), kH200Multiprocessors, true);
        CHECK(mid_silu.block.x == 128);
        CHECK(mid_silu.ilp == 2);
        CHECK(mid_silu.tiles == 1);
    }
    // Rows of one 64-thread tile (128 vectors) keep it, with SiLU too.
    CHECK(backward::plan_channel_first(fp32, channel_first_args(4, 4096, 512, DType::fp32), kH200Multiprocessors, true)
              .block.x == 64);
    // 4x5376x4096 fp32: long rows keep 128-thread tiles.
    const backward::Plan wide =
        backward::plan_channel_first(fp32, channel_first_args(4, 5376, 4096, DType::fp32), kH200Multiprocessors, true);
    CHECK(wide.block.x == 128);
    CHECK(wide.ilp == 2);
    // 16-bit: 4 vectors a thread staged by cp.async, a whole 4096-step row in one tile;
    // with few channels (256) 2 vectors, more units to split, staged through registers
    // without SiLU unless DRAM is fast. Rows of 1024 steps: 2 vectors, the same choice.
    for (Activation act : {Activation::silu, Activation::none})
        for (bool fast_memory : {false, true}) {
            Variant bf16 = test::silu_backward(DType::bf16, Layout::channel_first);
            bf16.activation = act;
            CAPTURE(to_string(act));
            CAPTURE(fast_memory);
            const bool async_if_short = act == Activation::silu || fast_memory;
            const backward::Plan large =
                backward::plan_channel_first(bf16, channel_first_args(4, 5376, 4096, DType::bf16), kH200Multiprocessors, fast_memory);
            CHECK(large.stage_async);
            CHECK(large.ilp == 4);
            CHECK(large.block.x == 128);
            CHECK(large.tiles == 1);
            CHECK(large.parts == 1);
            const backward::Plan few =
                backward::plan_channel_first(bf16, channel_first_args(4, 256, 4096, DType::bf16), kH200Multiprocessors, fast_memory);
            CHECK(few.stage_async == async_if_short);
            CHECK(few.ilp == 2);
            CHECK(few.block.x == 128);
            CHECK(few.tiles == 2);
            CHECK(few.parts > 1);
            const backward::Plan mid =
                backward::plan_channel_first(bf16, channel_first_args(8, 2048, 1024, DType::bf16), kH200Multiprocessors, fast_memory);
            CHECK(mid.stage_async == async_if_short);
            CHECK(mid.ilp == 2);
        }
}

TEST_CASE("channel-first backward plan: 16-bit SiLU keeps g in registers, a slot a warp in shared memory") {
    // bwd_channel_first.cu, BF_G_IN_REGISTERS: 16-bit with SiLU, no seq_idx, rows on
    // 16-byte boundaries, K up to a vector. Where it holds, the block's shared memory lacks
    // the fp32 g planes (2 planes of the tile's 512 vectors and the one after it) and
    // holds a slot of kBfGPad = 4 floats for each of the 4 warps and one after them; the
    // rest of the layout, and the tile, are those of the same call without SiLU.
    for (DType dtype : {DType::bf16, DType::fp16}) {
        CAPTURE(to_string(dtype));
        const Variant silu = test::silu_backward(dtype, Layout::channel_first);
        Variant none = silu;
        none.activation = Activation::none;
        auto plan_of = [&](const Variant& v) {
            return backward::plan_channel_first(v, channel_first_args(4, 5376, 4096, dtype), kH200Multiprocessors, true);
        };
        const backward::Plan with = plan_of(silu), without = plan_of(none);
        REQUIRE(with.block.x == 128);
        REQUIRE(with.ilp * with.block.x == without.ilp * without.block.x);
        CHECK(without.shared_bytes - with.shared_bytes == 2u * (512u + 1u) * 16u - (128u / 32u + 1u) * 4u * 4u);
        // With seq_idx, or past width 9, g keeps its planes whatever the activation.
        Variant silu_seq = silu, none_seq = none;
        silu_seq.seq_idx = none_seq.seq_idx = true;
        CHECK(plan_of(silu_seq).shared_bytes == plan_of(none_seq).shared_bytes);
        Variant silu_wide = silu, none_wide = none;
        silu_wide.width = none_wide.width = 10;
        CHECK(plan_of(silu_wide).shared_bytes == plan_of(none_wide).shared_bytes);
    }
}

TEST_CASE("backward reduce: rows split into runs only past one batch, runs that divide the block") {
    for (std::int64_t parts = 1; parts <= 1000; ++parts) {
        CAPTURE(parts);
        const int slices = backward::reduce_slices(parts);
        CHECK(slices >= 1);
        CHECK(slices <= CC1D_REDUCE_MAX_SLICES);
        CHECK(CC1D_REDUCE_THREADS % slices == 0);
        if (parts <= CC1D_REDUCE_BATCH) CHECK(slices == 1);   // one thread walks the rows, as ever
        if (parts <= std::int64_t(CC1D_REDUCE_MAX_SLICES) * CC1D_REDUCE_BATCH) {
            CHECK(parts <= std::int64_t(slices) * CC1D_REDUCE_BATCH);                          // a run is one batch
            CHECK((slices == 1 || parts > std::int64_t(slices / 2) * CC1D_REDUCE_BATCH));      // the fewest runs
        } else {
            CHECK(slices == CC1D_REDUCE_MAX_SLICES);
        }
    }
    CHECK(backward::reduce_slices(64) == 8);    // medium channel-last, 16-bit (measured)
    CHECK(backward::reduce_slices(12) == 2);
}

TEST_CASE("backward reduce: the kernel's shift and run length stand for the divisions it no longer does") {
    for (std::int64_t parts = 1; parts <= 1000; ++parts) {
        CAPTURE(parts);
        cc1d_bwd_params p{};
        p.parts = parts;
        for (int slices : {1, backward::reduce_slices(parts)}) {
            CAPTURE(slices);
            backward::set_reduce_split(p, slices);
            CHECK(p.reduce_slices == slices);
            CHECK((1 << p.reduce_column_shift) == CC1D_REDUCE_THREADS / slices);   // columns
            CHECK(p.reduce_run_rows == (parts + slices - 1) / slices);             // rows per run
            CHECK(p.reduce_run_rows * slices >= parts);                            // every row in a run
        }
    }
}

TEST_CASE("backward reduce: partial rows a power of two of 2,048 floats or more apart are a line further apart") {
    Variant v = test::silu_backward(DType::fp32);
    for (int width = 1; width <= Variant::max_width; ++width) {
        v.width = width;
        for (std::int64_t dim = 1; dim <= 9000; ++dim) {
            CAPTURE(width);
            CAPTURE(dim);
            const std::int64_t sums = dim * (width + 1), row = backward::partials_row_floats(v, dim);
            const bool power_of_two = (sums & (sums - 1)) == 0;
            CHECK(row >= sums);                                                  // a row holds its sums
            CHECK(row == (power_of_two && sums >= 2048 ? sums + 32 : sums));
            CHECK(((row & (row - 1)) != 0 || row < 2048));                       // never such a stride
        }
    }
    // The anchor shapes: 8x2048x1024 at width 3 (8,192 sums) is padded; widths 2 and 4 are not.
    v.width = 3;
    CHECK(backward::partials_row_floats(v, 2048) == 8224);
    v.width = 4;
    CHECK(backward::partials_row_floats(v, 2048) == 10240);
    v.width = 2;
    CHECK(backward::partials_row_floats(v, 2048) == 6144);
}

TEST_CASE("backward: 16-bit channel-first rows off 16-byte boundaries take the shifted-rows module") {
    // x, dout and dx of one (B, D, L) view: `data` as the start, `strides` as given.
    auto args_of = [](DType dtype, std::int64_t seqlen, std::uintptr_t data, std::array<std::int64_t, 3> strides) {
        BackwardArgs args;
        const void* start = reinterpret_cast<const void*>(data);
        args.x = Tensor(start, dtype, {2, 3, seqlen}, {strides[0], strides[1], strides[2]});
        args.dout = args.dx = args.x;
        return args;
    };
    const std::uintptr_t aligned = 0x10000, off_by_one = 0x10002;
    auto contiguous = [](std::int64_t seqlen) { return std::array<std::int64_t, 3>{3 * seqlen, seqlen, 1}; };
    for (DType dtype : {DType::bf16, DType::fp16}) {
        INFO(to_string(dtype));
        const Variant v = test::silu_backward(dtype, Layout::channel_first);
        CHECK_FALSE(backward::takes_shifted_rows(v, args_of(dtype, 4096, aligned, contiguous(4096))));   // whole vectors
        CHECK(backward::takes_shifted_rows(v, args_of(dtype, 1031, aligned, contiguous(1031))));         // odd L
        CHECK(backward::takes_shifted_rows(v, args_of(dtype, 4096, off_by_one, contiguous(4096))));      // misaligned view
        // Rows of no unit stride (a channel-last memory read as channel-first) gain nothing.
        CHECK_FALSE(backward::takes_shifted_rows(v, args_of(dtype, 1031, aligned, std::array<std::int64_t, 3>{3 * 1031, 1, 3})));
        CHECK_FALSE(backward::takes_shifted_rows(v, args_of(dtype, 0, off_by_one, contiguous(0))));      // empty
        Variant small = v;
        small.small_call = true;
        CHECK_FALSE(backward::takes_shifted_rows(small, args_of(dtype, 1031, aligned, contiguous(1031))));
        Variant last = v;
        last.layout = Layout::channel_last;
        CHECK_FALSE(backward::takes_shifted_rows(last, args_of(dtype, 1031, aligned, std::array<std::int64_t, 3>{3 * 1031, 1, 3})));
        {
            test::ScopedEnv off("CC1D_DISABLE_SHIFTED_ROWS", "1");
            CHECK_FALSE(backward::takes_shifted_rows(v, args_of(dtype, 1031, aligned, contiguous(1031))));
        }
    }
    // fp32 keeps its element loads (the shift won only on the largest shape, docs/perf.md entry 115).
    const Variant fp32 = test::silu_backward(DType::fp32, Layout::channel_first);
    CHECK_FALSE(backward::takes_shifted_rows(fp32, args_of(DType::fp32, 1031, aligned, contiguous(1031))));
}

TEST_CASE("backward: channel-last rows off 16-byte boundaries on the tile kernel take its shifted-rows module") {
    // x, dout and dx of one channel-last (B, D, L) view of D channels at `data`.
    auto args_of = [](DType dtype, std::int64_t dim, std::uintptr_t data) {
        BackwardArgs args;
        args.x = Tensor(reinterpret_cast<const void*>(data), dtype, {2, dim, 300}, {300 * dim, 1, dim});
        args.dout = args.dx = args.x;
        return args;
    };
    const std::uintptr_t aligned = 0x10000, off_by_one = 0x10004;
    for (DType dtype : {DType::bf16, DType::fp16}) {
        INFO(to_string(dtype));
        Variant v = test::silu_backward(dtype, Layout::channel_last);
        v.tiled = true;   // (as the Runtime sets it first, by takes_tile)
        CHECK_FALSE(backward::takes_shifted_rows(v, args_of(dtype, 2048, aligned)));   // whole vectors
        CHECK(backward::takes_shifted_rows(v, args_of(dtype, 2051, aligned)));         // odd D
        CHECK(backward::takes_shifted_rows(v, args_of(dtype, 2048, off_by_one)));      // misaligned view
        CHECK_FALSE(backward::takes_shifted_rows(v, args_of(dtype, 0, aligned)));      // empty
        Variant walk = v;
        walk.tiled = false;   // the register walk has no such module
        CHECK_FALSE(backward::takes_shifted_rows(walk, args_of(dtype, 2051, aligned)));
        test::ScopedEnv off("CC1D_DISABLE_SHIFTED_ROWS", "1");
        CHECK_FALSE(backward::takes_shifted_rows(v, args_of(dtype, 2051, aligned)));
    }
    // fp32 has no such module: its calls of such rows take the register walk (takes_tile).
    Variant fp32 = test::silu_backward(DType::fp32, Layout::channel_last);
    fp32.tiled = true;
    CHECK_FALSE(backward::takes_shifted_rows(fp32, args_of(DType::fp32, 2051, aligned)));
    CHECK_FALSE(backward::takes_tile(test::silu_backward(DType::fp32, Layout::channel_last), args_of(DType::fp32, 2051, aligned)));
}
