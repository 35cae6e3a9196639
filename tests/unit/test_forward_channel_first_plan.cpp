// Which channel-first forward calls take the module's cp.async-staged kernel
// (fwd_channel_first.cu, CC1D_FWD_CF_STAGED_KERNEL): fp32 SiLU without seq_idx, 16-byte
// rows, on a device of fast DRAM (util::kFastMemoryGbps) and a grid of 16 resident waves
// or more. The geometry is the main kernel's either way.
#include <cstdint>

#include <doctest/doctest.h>

#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"
#include "params.h"
#include "support/fake_tensors.hpp"
#include "support/recording_launcher.hpp"

using namespace cc1d;
using launch::Kernel;

namespace {

constexpr double kH100Gbps = 3352.0, kH200Gbps = 4814.3;   // peak DRAM bandwidth as the driver reports it

struct Call {
    std::int64_t B, D, L;
    DType x = DType::fp32;
    Activation activation = Activation::silu;
    bool seq_idx = false, misaligned = false;
};

test::RecordingLauncher<cc1d_fwd_params>::Launch launched(const Call& c, double gbps) {
    ForwardArgs args;
    args.x = test::fake_bdl(0, c.x, c.B, c.D, c.L, Layout::channel_first);
    if (c.misaligned) args.x.data = static_cast<const char*>(args.x.data) + 4;
    args.out = test::fake_bdl(1, c.x, c.B, c.D, c.L, Layout::channel_first);
    args.weight = Tensor(test::fake_address(2), c.x, {c.D, 4});
    if (c.seq_idx) args.seq_idx = Tensor(test::fake_address(3), DType::int32, {c.B, c.L});
    args.activation = c.activation;
    Variant v;
    v.op = Op::fwd;
    v.layout = Layout::channel_first;
    v.width = 4;
    v.x_dtype = v.weight_dtype = c.x;
    v.activation = c.activation;
    v.seq_idx = c.seq_idx;
    test::RecordingLauncher<cc1d_fwd_params> launcher;
    launcher.sm_count = 132;
    launcher.resident = 16;   // the kernel's launch bound
    launcher.memory_gbps = gbps;
    launch::forward_channel_first(launcher, v, args);
    REQUIRE(launcher.launches.size() == 1);
    return launcher.launches[0];
}

}  // namespace

TEST_CASE("channel-first forward: fp32 SiLU on large grids takes the staged kernel where DRAM is fast") {
    const Call big{4, 5376, 4096};   // 86,016 blocks of 1,024 outputs: 41 waves of 132 x 16
    const auto fast = launched(big, kH200Gbps), slow = launched(big, kH100Gbps);
    CHECK(fast.kernel == Kernel::staged);
    CHECK(slow.kernel == Kernel::main);
    // The same geometry and parameters either way.
    CHECK(fast.grid.x == slow.grid.x);
    CHECK(std::int64_t(fast.grid.x) * fast.grid.y == 4 * 5376 * 4);
    CHECK(fast.block.x == slow.block.x);
    CHECK(fast.shared == slow.shared);
    CHECK(fast.params.vector_ok == 1);
    // util::kFastMemoryGbps is the line.
    CHECK(launched(big, launch::util::kFastMemoryGbps).kernel == Kernel::staged);
    CHECK(launched(big, launch::util::kFastMemoryGbps - 1.0).kernel == Kernel::main);
}

TEST_CASE("channel-first forward: the main kernel for small grids, other variants and unaligned rows") {
    // 8x2048x1024: 16,384 blocks, under 16 waves (33,792).
    CHECK(launched(Call{8, 2048, 1024}, kH200Gbps).kernel == Kernel::main);
    // Just under and at 16 waves: 2 x 4224 rows of 4 tiles = 33,792 blocks.
    CHECK(launched(Call{2, 4223, 4096}, kH200Gbps).kernel == Kernel::main);
    CHECK(launched(Call{2, 4224, 4096}, kH200Gbps).kernel == Kernel::staged);
    Call c{4, 5376, 4096};
    c.x = DType::bf16;
    CHECK(launched(c, kH200Gbps).kernel == Kernel::main);
    c = Call{4, 5376, 4096};
    c.activation = Activation::none;
    CHECK(launched(c, kH200Gbps).kernel == Kernel::main);
    c = Call{4, 5376, 4096};
    c.seq_idx = true;
    CHECK(launched(c, kH200Gbps).kernel == Kernel::main);
    c = Call{4, 5376, 4096};
    c.misaligned = true;   // rows not on 16-byte boundaries: the element-wise path
    const auto unaligned = launched(c, kH200Gbps);
    CHECK(unaligned.params.vector_ok == 0);
    CHECK(unaligned.kernel == Kernel::main);
}
