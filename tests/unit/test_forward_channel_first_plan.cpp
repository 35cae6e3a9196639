// Which channel-first forward calls take the module's cp.async-staged kernel
// (fwd_channel_first.cu): on 16-byte rows, every variant on a device of fast DRAM
// (util::kFastMemoryGbps), and with seq_idx on every device. The geometry is the main
// kernel's either way; the staged kernel's shared memory pads each channel's halo to 8
// vectors and, with seq_idx, the halo's ids to 32. With seq_idx, the kernel reads ids as
// 16-byte vectors where the parameters allow it. Without seq_idx, rows of unit stride off
// 16-byte boundaries run the module of such rows (Variant::shifted_rows), which takes
// vectors too, its tiles following each row's own boundaries.
#include <cstdint>

#include <doctest/doctest.h>

#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"
#include "params.h"
#include "support/fake_tensors.hpp"
#include "support/recording_launcher.hpp"
#include "support/scoped_env.hpp"

using namespace cc1d;
using launch::Kernel;

namespace {

constexpr double kH100Gbps = 3352.0, kH200Gbps = 4814.3;   // peak DRAM bandwidth as the driver reports it

struct Call {
    std::int64_t B, D, L;
    DType x = DType::fp32;
    Activation activation = Activation::silu;
    bool seq_idx = false, misaligned = false;
    std::int64_t seq_offset = 0, seq_stride_l = 1;   // seq_idx view: first id, step along L
};

test::RecordingLauncher<cc1d_fwd_params>::Launch launched(const Call& c, double gbps) {
    ForwardArgs args;
    args.x = test::fake_bdl(0, c.x, c.B, c.D, c.L, Layout::channel_first);
    if (c.misaligned) args.x.data = static_cast<const char*>(args.x.data) + 4;
    args.out = test::fake_bdl(1, c.x, c.B, c.D, c.L, Layout::channel_first);
    args.weight = Tensor(test::fake_address(2), c.x, {c.D, 4});
    if (c.seq_idx)
        args.seq_idx = Tensor(static_cast<const std::int32_t*>(test::fake_address(3)) + c.seq_offset, DType::int32,
                              {c.B, c.L}, {c.L * c.seq_stride_l, c.seq_stride_l});
    args.activation = c.activation;
    Variant v;
    v.op = Op::fwd;
    v.layout = Layout::channel_first;
    v.width = 4;
    v.x_dtype = v.weight_dtype = c.x;
    v.activation = c.activation;
    v.seq_idx = c.seq_idx;
    v.shifted_rows = launch::forward_takes_shifted_rows(v, args);   // as the Runtime picks the module
    test::RecordingLauncher<cc1d_fwd_params> launcher;
    launcher.sm_count = 132;
    launcher.memory_gbps = gbps;
    launch::forward_channel_first(launcher, v, args);
    REQUIRE(launcher.launches.size() == 1);
    return launcher.launches[0];
}

}  // namespace

TEST_CASE("channel-first forward: every dtype, with and without SiLU, takes the staged kernel where DRAM is fast") {
    for (DType x : {DType::fp32, DType::fp16, DType::bf16})
        for (Activation act : {Activation::none, Activation::silu})
            for (const Call& shape : {Call{4, 5376, 4096}, Call{8, 2048, 1024}, Call{2, 64, 128}}) {
                Call c = shape;
                c.x = x;
                c.activation = act;
                CAPTURE(to_string(x));
                CAPTURE(c.D);
                const auto fast = launched(c, kH200Gbps), slow = launched(c, kH100Gbps);
                CHECK(fast.kernel == Kernel::staged);
                CHECK(slow.kernel == Kernel::main);
                // The same geometry and parameters either way; the staged tile 128-byte aligned.
                CHECK(fast.grid.x == slow.grid.x);
                CHECK(fast.block.x == slow.block.x);
                const int vec = x == DType::fp32 ? 4 : 8, halo = (3 + vec - 1) / vec;
                CHECK(fast.shared == slow.shared + unsigned(8 - halo) * 16);
                CHECK(fast.params.vector_ok == 1);
            }
    const Call big{4, 5376, 4096};
    CHECK(std::int64_t(launched(big, kH200Gbps).grid.x) * launched(big, kH200Gbps).grid.y == 4 * 5376 * 4);
    // util::kFastMemoryGbps is the line.
    CHECK(launched(big, launch::util::kFastMemoryGbps).kernel == Kernel::staged);
    CHECK(launched(big, launch::util::kFastMemoryGbps - 1.0).kernel == Kernel::main);
}

TEST_CASE("channel-first forward with seq_idx: the staged kernel on every device, padded per channel") {
    for (DType x : {DType::fp32, DType::fp16, DType::bf16})
        for (const Call& shape : {Call{4, 5376, 4096}, Call{8, 2048, 1024}, Call{2, 67, 128}}) {
            Call c = shape;
            c.x = x;
            c.seq_idx = true;
            CAPTURE(to_string(x));
            CAPTURE(c.D);
            const auto fast = launched(c, kH200Gbps), slow = launched(c, kH100Gbps);
            CHECK(fast.kernel == Kernel::staged);
            CHECK(slow.kernel == Kernel::staged);
            CHECK(fast.shared == slow.shared);
            // 16-bit: four channels a block, each [8 vectors of lead + tile], then [32 ids of
            // lead + the tile's ids]; fp32 one channel.
            const int elem = static_cast<int>(dtype_size(x)), vec = 16 / elem, rows = CC1D_FWD_CF_SEQ_ROWS(elem);
            const std::int64_t tile_vecs = std::int64_t(fast.block.x) / rows * CC1D_FWD_CF_ILP(elem);
            CHECK(fast.shared == unsigned(rows * (8 + tile_vecs) * 16 + (32 + tile_vecs * vec) * 4));
            CHECK(std::int64_t(fast.grid.x) * fast.grid.y == c.B * ((c.D + rows - 1) / rows) * fast.params.tiles);
        }
}

TEST_CASE("channel-first forward: rows off 16-byte boundaries follow their own boundaries, without seq_idx") {
    // Rows 4 bytes off a boundary (x only, or an L that is not a multiple of a vector):
    // without seq_idx the module of such rows, whose tiles follow each row's own
    // boundaries (vector_ok), so the staged kernel serves them where DRAM is fast, with
    // room for a lead of up to vec - 1 elements before position 0; with seq_idx, or with
    // the module switched off, the main module's shifted loads.
    for (DType x : {DType::fp32, DType::bf16})
        for (bool seq_idx : {false, true}) {
            CAPTURE(to_string(x));
            CAPTURE(seq_idx);
            const std::int64_t vec = x == DType::fp32 ? 4 : 8;
            Call c{4, 2048, 1024};
            c.x = x;
            c.seq_idx = seq_idx;
            const auto aligned = launched(c, kH200Gbps);
            c.misaligned = true;
            const auto shifted_x = launched(c, kH200Gbps), shifted_x_slow = launched(c, kH100Gbps);
            c.misaligned = false;
            c.L = 1031;   // every row but the first starts off a boundary
            const auto odd = launched(c, kH200Gbps);
            {
                test::ScopedEnv off("CC1D_DISABLE_SHIFTED_ROWS", "1");
                c.L = 1031;
                const auto main_module = launched(c, kH200Gbps);
                c.L = 1024;
                CHECK(main_module.params.vector_ok == 0);
                CHECK(main_module.kernel == Kernel::main);
            }
            if (seq_idx) {
                CHECK(shifted_x.params.vector_ok == 0);
                CHECK(shifted_x.kernel == Kernel::main);
                CHECK(odd.params.vector_ok == 0);
                CHECK(shifted_x.params.tiles == aligned.params.tiles);
            } else {
                CHECK(shifted_x.params.vector_ok == 1);
                CHECK(shifted_x.kernel == Kernel::staged);
                CHECK(shifted_x_slow.kernel == Kernel::main);
                CHECK(odd.params.vector_ok == 1);
                // Room for the lead: 1024 + vec - 1 positions. The first kernel's tiles are
                // its threads' ILP vectors each, a second tile where the room needs it.
                const int ilp = CC1D_FWD_CF_ILP(dtype_size(x));
                const std::int64_t tile = std::int64_t(shifted_x_slow.block.x) * ilp * vec;
                CHECK(shifted_x_slow.params.tiles == (1024 + vec - 1 + tile - 1) / tile);
                CHECK(shifted_x_slow.params.chunk_len == tile);
                // The staged kernel's tile takes the vectors the row needs, up to ILP + 1 a
                // thread: 129 vectors in bf16 (a warp, 5 rounds), 257 in fp32 (128 threads, 3).
                const std::int64_t vectors = (1024 + vec - 1 + vec - 1) / vec;
                CHECK(shifted_x.params.tiles == 1);
                CHECK(shifted_x.params.chunk_len == vectors * vec);
                CHECK(std::int64_t(shifted_x.block.x) * (ilp + 1) >= vectors);
                CHECK(std::int64_t(shifted_x.block.x) / 2 * (ilp + 1) < vectors);
                CHECK(shifted_x.block.x == (x == DType::bf16 ? 32u : 128u));
                CHECK(std::int64_t(shifted_x.grid.x) * shifted_x.grid.y == c.B * c.D * shifted_x.params.tiles);
                // The first kernel's tile where the round more would only halve 128 threads
                // (2055 + 7 in bf16: 258 vectors, one tile of 512); rows of several tiles
                // in the fewest of at most ILP + 1 vectors a thread that keep ILP (8199 + 7:
                // 1026 vectors, two tiles of 513, not three of 512; 16383 + 7: 2049, four of
                // 513; 5121 + 7: 641, two of 321 would keep fewer than ILP, so two of 512).
                if (x == DType::bf16) {
                    c.misaligned = true;
                    struct Row {
                        std::int64_t L, threads, tiles, vecs;
                    };
                    for (const Row row : {Row{2055, 128, 1, 512}, Row{8199, 128, 2, 513}, Row{16383, 128, 4, 513},
                                          Row{5121, 128, 2, 512}}) {
                        CAPTURE(row.L);
                        c.L = row.L;
                        const auto call = launched(c, kH200Gbps);
                        CHECK(call.kernel == Kernel::staged);
                        CHECK(call.block.x == unsigned(row.threads));
                        CHECK(call.params.tiles == row.tiles);
                        CHECK(call.params.chunk_len == row.vecs * vec);
                    }
                    c.misaligned = false;
                }
            }
            CHECK(aligned.params.vector_ok == 1);
        }
}

TEST_CASE("channel-first forward: rows of other strides, or off their element size, take the element-wise path") {
    Call c{4, 2048, 1024};
    c.x = DType::bf16;
    ForwardArgs args;
    Variant v;
    v.op = Op::fwd;
    v.layout = Layout::channel_first;
    v.width = 4;
    v.x_dtype = v.weight_dtype = DType::bf16;
    auto vector_ok = [&](const Tensor& x, const Tensor& out) {
        args.x = x;
        args.out = out;
        args.weight = Tensor(test::fake_address(2), DType::bf16, {c.D, 4});
        v.shifted_rows = launch::forward_takes_shifted_rows(v, args);
        test::RecordingLauncher<cc1d_fwd_params> launcher;
        launcher.sm_count = 132;
        launcher.memory_gbps = kH200Gbps;
        launch::forward_channel_first(launcher, v, args);
        REQUIRE(launcher.launches.size() == 1);
        return launcher.launches[0].params.vector_ok;
    };
    const Tensor x = test::fake_bdl(0, DType::bf16, c.B, c.D, c.L, Layout::channel_first);
    const Tensor out = test::fake_bdl(1, DType::bf16, c.B, c.D, c.L, Layout::channel_first);
    CHECK(vector_ok(x, out) == 1);
    // Every other element of a wider tensor along L (x or out): no vectors.
    const Tensor every_other(x.data, DType::bf16, {c.B, c.D, c.L}, {c.D * c.L * 2, c.L * 2, 2});
    CHECK(vector_ok(every_other, out) == 0);
    CHECK(vector_ok(x, Tensor(out.data, DType::bf16, {c.B, c.D, c.L}, {c.D * c.L * 2, c.L * 2, 2})) == 0);
    // The module of such rows launched for rows of another stride (which the Runtime never
    // picks it for): refused before anything is launched.
    {
        v.shifted_rows = true;
        args.x = every_other;
        args.out = out;
        test::RecordingLauncher<cc1d_fwd_params> launcher;
        launcher.sm_count = 132;
        launcher.memory_gbps = kH200Gbps;
        CHECK_THROWS_AS(launch::forward_channel_first(launcher, v, args), Error);
        CHECK(launcher.launches.empty());
    }
    // An address one byte off a bf16 element.
    const Tensor odd_byte(static_cast<const char*>(x.data) + 1, DType::bf16, {c.B, c.D, c.L},
                          {c.D * c.L, c.L, 1});
    CHECK(vector_ok(odd_byte, out) == 0);
}

TEST_CASE("channel-first forward: seq ids read 4 a 16-byte load only from aligned rows of unit stride") {
    Call c{4, 5376, 4096};
    c.seq_idx = true;
    CHECK(launched(c, kH200Gbps).params.seq_vector_ok == 1);
    c.seq_offset = 1;   // rows 4 bytes off a 16-byte boundary
    CHECK(launched(c, kH200Gbps).params.seq_vector_ok == 0);
    c.seq_offset = 4;
    CHECK(launched(c, kH100Gbps).params.seq_vector_ok == 1);
    c.seq_offset = 0;
    c.seq_stride_l = 2;   // every other id of a wider tensor
    CHECK(launched(c, kH200Gbps).params.seq_vector_ok == 0);
    c = Call{3, 64, 1031};   // rows of 1031 ids: the second row starts off a 16-byte boundary
    c.seq_idx = true;
    CHECK(launched(c, kH200Gbps).params.seq_vector_ok == 0);
    c.seq_idx = false;
    CHECK(launched(c, kH200Gbps).params.seq_vector_ok == 0);
}
