// How a channel-last forward call is launched: one launch of the tile kernel, a block per
// tile of CC1D_FWD_CL_CHANNELS channels x CC1D_FWD_CL_TILE_ROWS steps of one batch row,
// for every dtype and width, with and without seq_idx; vector tiles only where x's and
// out's rows are 16-byte aligned.
#include <cstdint>

#include <doctest/doctest.h>

#include "api/launch/launch.hpp"
#include "params.h"
#include "support/fake_tensors.hpp"
#include "support/recording_launcher.hpp"
#include "support/scoped_env.hpp"

namespace {

struct Call {
    std::int64_t B, D, L;
    int width;
    cc1d::DType x;
    bool seq_idx;
    std::uintptr_t out_offset = 0;   // bytes added to out's (aligned) address
};

cc1d::test::RecordingLauncher<cc1d_fwd_params> launch_call(const Call& c) {
    using cc1d::test::fake_address;
    using cc1d::test::fake_bdl;
    cc1d::ForwardArgs args;
    args.x = fake_bdl(0, c.x, c.B, c.D, c.L, cc1d::Layout::channel_last);
    args.out = fake_bdl(1, c.x, c.B, c.D, c.L, cc1d::Layout::channel_last);
    args.out.data = static_cast<const char*>(args.out.data) + c.out_offset;
    args.weight = cc1d::Tensor(fake_address(2), c.x, {c.D, c.width});
    if (c.seq_idx) args.seq_idx = cc1d::Tensor(fake_address(3), cc1d::DType::int32, {c.B, c.L});
    cc1d::Variant v;
    v.op = cc1d::Op::fwd;
    v.layout = cc1d::Layout::channel_last;
    v.width = c.width;
    v.x_dtype = v.weight_dtype = c.x;
    v.seq_idx = c.seq_idx;
    cc1d::test::RecordingLauncher<cc1d_fwd_params> launcher;
    launcher.sm_count = 132;
    cc1d::launch::forward_channel_last(launcher, v, args);
    return launcher;
}

}  // namespace

TEST_CASE("channel-last forward: one tile-kernel launch, a block per tile, with and without seq_idx") {
    for (cc1d::DType x : {cc1d::DType::fp32, cc1d::DType::fp16, cc1d::DType::bf16})
        for (int width : {1, 2, 4, 5, 8, 9, 14, 16})
            for (bool seq_idx : {false, true})
                for (std::int64_t L : {1, 63, 64, 65, 4096, 4099}) {
                    const Call c{3, 5376 + 8, L, width, x, seq_idx};   // a partial channel group
                    INFO("x bytes ", cc1d::dtype_size(x), " width ", width, " seq_idx ", seq_idx, " L ", L);
                    const auto launcher = launch_call(c);
                    const std::int64_t rows = CC1D_FWD_CL_TILE_ROWS(width, static_cast<int>(cc1d::dtype_size(x)));
                    const std::int64_t tiles = (L + rows - 1) / rows;
                    const std::int64_t groups = (c.D + CC1D_FWD_CL_CHANNELS - 1) / CC1D_FWD_CL_CHANNELS;
                    const auto& l = launcher.only_main_launch(CC1D_FWD_CL_THREADS, groups * tiles * c.B, 0);
                    CHECK(l.params.tiles == tiles);
                    CHECK(l.params.chunk_len == rows);
                    CHECK(l.params.vector_ok == 1);
                }
}

TEST_CASE("channel-last forward: tile heights, an empty row, and element tiles for a misaligned out") {
    // 16-bit tiles are 64 steps, fp32 32 (8 KiB of x), twice that where the halo is a
    // fifth of the tile or more (16-bit from width 14, fp32 from width 9).
    CHECK(CC1D_FWD_CL_TILE_ROWS(4, 2) == 64);
    CHECK(CC1D_FWD_CL_TILE_ROWS(13, 2) == 64);
    CHECK(CC1D_FWD_CL_TILE_ROWS(14, 2) == 128);
    CHECK(CC1D_FWD_CL_TILE_ROWS(8, 4) == 32);
    CHECK(CC1D_FWD_CL_TILE_ROWS(9, 4) == 64);
    // L == 0 still launches one tile a row: the block writes final_states from the halo.
    const auto empty = launch_call({2, 64, 0, 4, cc1d::DType::bf16, true});
    CHECK(empty.only_main_launch(CC1D_FWD_CL_THREADS, 2, 0).params.tiles == 1);
    // out 2 bytes off a 16-byte boundary: the kernel loads and stores element by element.
    const auto misaligned = launch_call({2, 64, 100, 4, cc1d::DType::bf16, true, 2});
    CHECK(misaligned.only_main_launch(CC1D_FWD_CL_THREADS, 2 * 2, 0).params.vector_ok == 0);
}

TEST_CASE("channel-last forward: rows off 16-byte boundaries take the module of such rows") {
    // forward_takes_shifted_rows: where x's or out's rows along D are not whole 16-byte
    // vectors, in every dtype, with seq_idx and states too; not for aligned rows, empty
    // calls, the small-call module or with CC1D_DISABLE_SHIFTED_ROWS.
    auto args_of = [](cc1d::DType x, std::int64_t D, std::uintptr_t out_offset) {
        cc1d::ForwardArgs args;
        args.x = cc1d::test::fake_bdl(0, x, 2, D, 300, cc1d::Layout::channel_last);
        args.out = cc1d::test::fake_bdl(1, x, 2, D, 300, cc1d::Layout::channel_last);
        args.out.data = static_cast<const char*>(args.out.data) + out_offset;
        return args;
    };
    for (cc1d::DType x : {cc1d::DType::bf16, cc1d::DType::fp16, cc1d::DType::fp32}) {
        INFO(cc1d::to_string(x));
        cc1d::Variant v;
        v.op = cc1d::Op::fwd;
        v.layout = cc1d::Layout::channel_last;
        v.x_dtype = v.weight_dtype = x;
        v.seq_idx = v.initial_states = v.final_states = true;
        CHECK_FALSE(cc1d::launch::forward_takes_shifted_rows(v, args_of(x, 2048, 0)));   // whole vectors
        CHECK(cc1d::launch::forward_takes_shifted_rows(v, args_of(x, 2051, 0)));         // odd D
        CHECK(cc1d::launch::forward_takes_shifted_rows(v, args_of(x, 2048, 4)));         // out off a boundary
        CHECK_FALSE(cc1d::launch::forward_takes_shifted_rows(v, args_of(x, 0, 0)));      // empty
        cc1d::Variant small = v;
        small.small_call = true;
        CHECK_FALSE(cc1d::launch::forward_takes_shifted_rows(small, args_of(x, 2051, 0)));
        cc1d::test::ScopedEnv off("CC1D_DISABLE_SHIFTED_ROWS", "1");
        CHECK_FALSE(cc1d::launch::forward_takes_shifted_rows(v, args_of(x, 2051, 0)));
    }
}
