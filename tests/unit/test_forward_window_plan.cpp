// How the channel-last forward's register-window kernel splits a call: every step of
// every row in exactly one chunk of whole batches of rows; one resident wave at most (as
// full as whole chunks allow) while the rows fit in it; one batch per task for calls too
// small to fill it; enough blocks for every task. With seq_idx up to width 4, two-batch
// chunks in place of those longer than eight batches, in as many waves as they take, run
// by the module's short-chunk kernel. Which variants take the window kernel at all.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "api/launch/forward_window_plan.hpp"
#include "api/launch/launch.hpp"
#include "codegen/render.hpp"
#include "params.h"
#include "support/recording_launcher.hpp"

using cc1d::launch::forward::plan_channel_last_window;
using cc1d::launch::forward::window_batch_rows;

namespace {

constexpr int kH100 = 132;
constexpr std::int64_t kTasksPerBlock = CC1D_FWD_CL_WINDOW_THREADS / CC1D_FWD_CL_WINDOW_GROUP;

void check_plan(std::int64_t batch, std::int64_t dim, std::int64_t seqlen, int width, int x_bytes, bool seq_idx,
                int sms, int resident) {
    INFO("B=", batch, " D=", dim, " L=", seqlen, " W=", width, " x bytes=", x_bytes, " seq_idx=", seq_idx,
         " SMs=", sms, " resident=", resident);
    const auto plan = plan_channel_last_window(batch, dim, seqlen, width, x_bytes, seq_idx, sms, resident);
    const std::int64_t granule = window_batch_rows(width, x_bytes);
    CHECK(plan.chunk_len % granule == 0);
    CHECK(plan.chunk_len >= granule);
    CHECK(plan.tiles >= 1);
    CHECK(plan.tiles * plan.chunk_len >= seqlen);
    CHECK((plan.tiles - 1) * plan.chunk_len < std::max<std::int64_t>(seqlen, 1));
    const std::int64_t channels = CC1D_FWD_CL_WINDOW_CHANNELS(width);
    const std::int64_t rows = (dim + channels * CC1D_FWD_CL_WINDOW_GROUP - 1) / (channels * CC1D_FWD_CL_WINDOW_GROUP) * batch;
    CHECK(plan.tasks == rows * plan.tiles);
    CHECK(plan.blocks * kTasksPerBlock >= plan.tasks);
    CHECK((plan.blocks - 1) * kTasksPerBlock < plan.tasks);
    const std::int64_t wave = std::int64_t(sms) * (resident > 0 ? resident : 4) * kTasksPerBlock;
    if (seq_idx && width <= 4) {
        // The wave-fitting chunk (checked below), cut to two batches when longer than eight.
        const std::int64_t per_row = std::max<std::int64_t>(1, wave / rows);
        const std::int64_t fitting = ((std::max<std::int64_t>(seqlen, 1) + per_row - 1) / per_row + granule - 1) / granule * granule;
        CHECK(plan.chunk_len == (fitting > 8 * granule ? 2 * granule : fitting));
        if (plan.chunk_len != fitting) return;
    }
    if (rows <= wave) {
        CHECK(plan.tasks <= wave);
        // Any shorter chunk (by one batch) would not fit the wave, or not be needed.
        if (plan.chunk_len > granule) {
            const std::int64_t shorter = plan.chunk_len - granule;
            CHECK(rows * ((seqlen + shorter - 1) / shorter) > wave);
        }
    } else {
        CHECK(plan.tiles == 1);
    }
}

// The chunk a 16-bit call of width `width` gets on 132 SMs at 6 resident blocks.
std::int64_t chunk_16bit(std::int64_t batch, std::int64_t dim, std::int64_t seqlen, int width, bool seq_idx,
                         int resident = 6) {
    return plan_channel_last_window(batch, dim, seqlen, width, 2, seq_idx, kH100, resident).chunk_len;
}

}  // namespace

TEST_CASE("window plan: every step of every row in one chunk, for any shape") {
    for (std::int64_t batch : {1, 3, 8})
        for (std::int64_t dim : {1, 5, 64, 67, 129, 2048, 5376})
            for (std::int64_t seqlen : {0, 1, 2, 15, 16, 17, 129, 1134, 4096, 100000})
                for (int width : {1, 2, 3, 4, 5, 8})
                    for (int x_bytes : {2, 4})
                        for (bool seq_idx : {false, true})
                            for (int sms : {1, kH100, 304})
                                for (int resident : {0, 1, 6, 16})
                                    check_plan(batch, dim, seqlen, width, x_bytes, seq_idx, sms, resident);
}

TEST_CASE("window plan: the anchor shapes on an H100 at 6 resident blocks") {
    // 4x5376x4096 16-bit with seq_idx: 168 task rows, 3168 tasks a wave: 18 chunks of 232
    // steps would fill it (95%); cut to 16-step chunks (two batches of 8 rows, 29 batches
    // being more than 8), 256 per row, 13.6 waves.
    const auto short_chunks = plan_channel_last_window(4, 5376, 4096, 4, 2, true, kH100, 6);
    CHECK(short_chunks.chunk_len == 16);
    CHECK(short_chunks.tasks == 168 * 256);
    // Width 8 keeps the wave-fitting chunk: 336 task rows of 2-channel vectors, 9 chunks
    // each, in 16-row batches: 464 steps; with seq_idx too.
    CHECK(chunk_16bit(4, 5376, 4096, 8, false) == 464);
    CHECK(chunk_16bit(4, 5376, 4096, 8, true) == 464);
    // 8x2048x1024 16-bit with seq_idx: 128 task rows, 24 chunks each at most: 48 steps (6
    // batches), kept.
    CHECK(chunk_16bit(8, 2048, 1024, 4, true) == 48);
    // 4x4096x512 16-bit with seq_idx: 128 task rows, 24 chunks each at most: 24 steps (3
    // batches); at 5 resident blocks (the H100's), 20 chunks of 32 steps (4 batches).
    CHECK(chunk_16bit(4, 4096, 512, 4, true) == 24);
    CHECK(chunk_16bit(4, 4096, 512, 4, true, 5) == 32);
    // 4x256x512 16-bit fills no wave: one batch (8 rows) per task.
    CHECK(chunk_16bit(4, 256, 512, 4, true) == 8);
    // Without seq_idx the plan is the wave-fitting one (width 5: 2-channel vectors, 16-row
    // batches, 336 task rows, 9 chunks each: 464 steps).
    CHECK(chunk_16bit(4, 5376, 4096, 5, false) == 464);
    for (std::int64_t seqlen : {1, 7, 8, 9, 31, 33, 4095, 4096, 4097}) check_plan(4, 5376, seqlen, 4, 2, true, kH100, 6);
}

TEST_CASE("window kernel: 16-bit x with seq_idx up to width 8 and without it at widths 5-8; the tile elsewhere") {
    auto family = [](int width, cc1d::DType x, bool seq_idx) {
        cc1d::Variant v;
        v.op = cc1d::Op::fwd;
        v.layout = cc1d::Layout::channel_last;
        v.width = width;
        v.x_dtype = v.weight_dtype = x;
        v.seq_idx = seq_idx;
        return cc1d::codegen::family_template(v);
    };
    for (int width = 1; width <= 16; ++width)
        for (bool seq_idx : {false, true}) {
            INFO("width ", width, " seq_idx ", seq_idx);
            const bool window = width <= 8 && (seq_idx || width > 4);
            const char* sixteen_bit = window ? "fwd_channel_last_window.cu" : "fwd_channel_last.cu";
            CHECK(family(width, cc1d::DType::bf16, seq_idx) == sixteen_bit);
            CHECK(family(width, cc1d::DType::fp16, seq_idx) == sixteen_bit);
            CHECK(family(width, cc1d::DType::fp32, seq_idx) == "fwd_channel_last.cu");
        }
}

namespace {

// The kernel and chunk a channel-last forward call of (B, D, L) runs with (fake, aligned
// device addresses: only the launch is recorded).
std::pair<cc1d::launch::Kernel, std::int64_t> launched(std::int64_t B, std::int64_t D, std::int64_t L, int width,
                                                       cc1d::DType x, bool seq_idx) {
    auto address = [](int slot) { return reinterpret_cast<const void*>(std::uintptr_t(0x10000000) * (slot + 1)); };
    cc1d::ForwardArgs args;
    args.x = cc1d::Tensor(address(0), x, {B, D, L}, {L * D, 1, D});
    args.out = cc1d::Tensor(address(1), x, {B, D, L}, {L * D, 1, D});
    args.weight = cc1d::Tensor(address(2), x, {D, width});
    if (seq_idx) args.seq_idx = cc1d::Tensor(address(3), cc1d::DType::int32, {B, L});
    cc1d::Variant v;
    v.op = cc1d::Op::fwd;
    v.layout = cc1d::Layout::channel_last;
    v.width = width;
    v.x_dtype = v.weight_dtype = x;
    v.seq_idx = seq_idx;
    cc1d::test::RecordingLauncher<cc1d_fwd_params> launcher;
    launcher.sm_count = kH100;
    cc1d::launch::forward_channel_last(launcher, v, args);
    REQUIRE(launcher.launches.size() == 1);
    return {launcher.launches[0].kernel, launcher.launches[0].params.chunk_len};
}

}  // namespace

TEST_CASE("window launch: with seq_idx up to width 4, chunks of at most two batches run the short-chunk kernel") {
    using cc1d::DType;
    using cc1d::launch::Kernel;
    // 4x5376x4096: 16-step chunks (two batches).
    CHECK(launched(4, 5376, 4096, 4, DType::bf16, true) == std::make_pair(Kernel::short_chunks, std::int64_t{16}));
    CHECK(launched(4, 5376, 4096, 2, DType::fp16, true) == std::make_pair(Kernel::short_chunks, std::int64_t{16}));
    // Too small to fill a wave: one batch a task, short too.
    CHECK(launched(2, 64, 128, 4, DType::bf16, true) == std::make_pair(Kernel::short_chunks, std::int64_t{8}));
    // 8x2048x1024 at 4 resident blocks: the wave-fitting 64-step chunk (eight batches) stays,
    // and the main kernel compares ids at every step.
    CHECK(launched(8, 2048, 1024, 4, DType::bf16, true) == std::make_pair(Kernel::main, std::int64_t{64}));
    // Without seq_idx, at widths 5-8 and for fp32 x there is one kernel; 16-bit x without
    // seq_idx up to width 4 runs the tile kernel (its tile height as the chunk).
    CHECK(launched(4, 5376, 4096, 4, DType::bf16, false) ==
          std::make_pair(Kernel::main, std::int64_t{CC1D_FWD_CL_TILE_ROWS(4, 2)}));
    CHECK(launched(4, 5376, 4096, 5, DType::bf16, true).first == Kernel::main);
    CHECK(launched(4, 5376, 4096, 4, DType::fp32, true).first == Kernel::main);
}
