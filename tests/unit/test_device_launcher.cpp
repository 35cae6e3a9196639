// Which launches may overlap the kernel before them. An overlapped kernel reads its inputs
// before it waits, so only a kernel of the same call may come before it: the first
// kernel of every call is a plain launch, whatever the family asks. Checked against a
// device that records launches, for the launcher alone and for whole backward calls in
// each of their reduction modes. Also: the occupancy query the channel-last backward
// makes before it takes a tail of short walks, launches in thread-block clusters, and the
// channel-last backward's launches from the tile kernel's module (Variant::tiled).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "api/device_launcher.hpp"
#include "api/launch/backward_plan.hpp"
#include "common/fail.hpp"
#include "support/backward_variants.hpp"
#include "support/fake_device.hpp"
#include "support/scoped_env.hpp"

using namespace cc1d;

namespace {

struct Launch {
    void* function;
    bool overlapped;
    unsigned blocks = 0;      // grid.x * grid.y
    unsigned cluster_y = 1;   // blocks a cluster along y (1: no clusters)
};

// Records launches; everything else a launcher must not need here fails the test.
class RecordingDevice final : public test::FakeDevice {
public:
    explicit RecordingDevice(bool overlap) : overlap_(overlap) {}
    std::vector<Launch> launches;

    void launch(void* function, device::Dim3 grid, device::Dim3, unsigned, void*, const void*, std::size_t) override {
        launches.push_back({function, false, grid.x * grid.y});
    }
    bool overlapped_launches(int) override { return overlap_; }
    bool clusters = false;   // what cluster_launches answers
    bool cluster_launches(int) override { return clusters; }
    void launch_in_clusters(void* function, device::Dim3 grid, device::Dim3, unsigned, void*, const void*, std::size_t,
                            unsigned cluster_y, bool overlapped) override {
        launches.push_back({function, overlapped, grid.x * grid.y, cluster_y});
    }
    void launch_overlapped(void* function, device::Dim3 grid, device::Dim3, unsigned, void*, const void*,
                           std::size_t) override {
        launches.push_back({function, true, grid.x * grid.y});
    }
    // Occupancy queries: answered with `resident`, and recorded.
    int resident = 0;
    struct Query {
        void* function;
        int threads;
        unsigned shared;
    };
    std::vector<Query> queries;
    int resident_blocks(void* function, int block_threads, unsigned shared_bytes) override {
        queries.push_back({function, block_threads, shared_bytes});
        return resident;
    }

private:
    bool overlap_;
};

// Stand-ins for the two kernels of a loaded module and a caller's workspace.
int main_kernel, second_kernel;
float workspace[1 << 20];

struct Call {
    RecordingDevice device;
    LoadedKernel kernel;
    StoreCounters counters;
    WorkspacePool pool;
    DeviceLauncher launcher;
    explicit Call(bool overlap)
        : device(overlap),
          kernel{nullptr, &main_kernel, &second_kernel},
          launcher(device, 0, kernel, nullptr, counters, pool, workspace, sizeof(workspace)) {}
};

const device::Dim3 kGrid{4, 1, 1}, kBlock{128, 1, 1};

// A channel-last backward variant of width 4 with SiLU, deterministic.
Variant channel_last_backward(DType dtype) {
    Variant variant = test::silu_backward(dtype, Layout::channel_last);
    variant.deterministic = true;
    return variant;
}

// Its x, dout, dx (B, D, L stored channel-last) and weight, dweight; only shapes and strides.
BackwardArgs channel_last_args(DType dtype, std::int64_t B, std::int64_t D, std::int64_t L) {
    BackwardArgs args;
    args.x = args.dout = args.dx = Tensor(nullptr, dtype, {B, D, L}, {D * L, 1, D});
    args.weight = args.dweight = Tensor(nullptr, dtype, {D, 4}, {4, 1});
    return args;
}

}  // namespace

TEST_CASE("device launcher: the first kernel of a call is a plain launch, later ones overlap where asked") {
    Call call(true);
    call.launcher.launch_overlapped(launch::Kernel::main, kGrid, kBlock, 0, nullptr, 0);
    call.launcher.launch_overlapped(launch::Kernel::reduce, kGrid, kBlock, 0, nullptr, 0);
    call.launcher.launch(launch::Kernel::reduce, kGrid, kBlock, 0, nullptr, 0);
    REQUIRE(call.device.launches.size() == 3);
    CHECK(call.device.launches[0].function == &main_kernel);
    CHECK_FALSE(call.device.launches[0].overlapped);
    CHECK(call.device.launches[1].function == &second_kernel);
    CHECK(call.device.launches[1].overlapped);
    CHECK_FALSE(call.device.launches[2].overlapped);   // a plain request stays plain
    CHECK(call.counters.launches == 3);
}

TEST_CASE("device launcher: an empty grid launches nothing and leaves the next kernel the call's first") {
    Call call(true);
    call.launcher.launch_overlapped(launch::Kernel::reduce, device::Dim3{0, 1, 1}, kBlock, 0, nullptr, 0);
    call.launcher.launch_overlapped(launch::Kernel::main, kGrid, kBlock, 0, nullptr, 0);
    REQUIRE(call.device.launches.size() == 1);
    CHECK_FALSE(call.device.launches[0].overlapped);
}

TEST_CASE("device launcher: a device without overlapped launches gets plain ones only") {
    Call call(false);
    call.launcher.launch_overlapped(launch::Kernel::main, kGrid, kBlock, 0, nullptr, 0);
    call.launcher.launch_overlapped(launch::Kernel::reduce, kGrid, kBlock, 0, nullptr, 0);
    REQUIRE(call.device.launches.size() == 2);
    CHECK_FALSE(call.device.launches[0].overlapped);
    CHECK_FALSE(call.device.launches[1].overlapped);
}

TEST_CASE("backward call: the zeroing kernel is plain, the main and reduce kernels overlap the kernel before") {
    // A call split into 4 parts per channel group (the plan's shape does not matter here).
    launch::backward::Plan plan;
    plan.block = kBlock;
    plan.channel_groups = 2;
    plan.tiles = 4;
    plan.tile_len = 32;
    plan.units_per_part = 2;
    plan.parts = 4;
    Variant variant;
    variant.op = Op::bwd;
    variant.width = 4;
    variant.x_dtype = variant.weight_dtype = DType::bf16;
    BackwardArgs args;
    args.x = Tensor(nullptr, DType::bf16, {2, 64, 128}, {64 * 128, 1, 64});
    cc1d_bwd_params p{};
    p.dim = 64;

    struct Mode {
        const char* name;
        bool deterministic, one_part;
        DType dweight;
        std::vector<Launch> expected;
    };
    const std::vector<Mode> modes = {
        {"deterministic: partial rows, then the fixed-order sum", true, false, DType::fp32,
         {{&main_kernel, false}, {&second_kernel, true}}},
        {"atomic into an fp32 dweight: zeroing first", false, false, DType::fp32,
         {{&second_kernel, false}, {&main_kernel, true}}},
        {"atomic into a 16-bit dweight: zeroing, atomics into a row, its sum", false, false, DType::bf16,
         {{&second_kernel, false}, {&main_kernel, true}, {&second_kernel, true}}},
        {"one part: the main kernel alone", true, true, DType::fp32, {{&main_kernel, false}}},
    };
    for (const Mode& mode : modes) {
        CAPTURE(mode.name);
        Call call(true);
        variant.deterministic = mode.deterministic;
        args.dweight = Tensor(nullptr, mode.dweight, {64, 4}, {4, 1});
        launch::backward::Plan this_plan = plan;
        if (mode.one_part) this_plan.parts = 1, this_plan.units_per_part = 8;
        launch::backward::run(call.launcher, variant, args, this_plan, p);
        REQUIRE(call.device.launches.size() == mode.expected.size());
        for (std::size_t i = 0; i < mode.expected.size(); ++i) {
            CAPTURE(i);
            CHECK(call.device.launches[i].function == mode.expected[i].function);
            CHECK(call.device.launches[i].overlapped == mode.expected[i].overlapped);
        }
    }
}

TEST_CASE("device launcher: cluster launches where the device has them, overlapped as any launch, switched off by env") {
    for (bool overlap : {true, false}) {
        CAPTURE(overlap);
        Call call(overlap);
        CHECK_FALSE(call.launcher.cluster_launches());   // (the device says no)
        call.device.clusters = true;
        CHECK(call.launcher.cluster_launches());
        {
            test::ScopedEnv off("CC1D_DISABLE_CLUSTERS", "1");
            CHECK_FALSE(call.launcher.cluster_launches());
        }
        const device::Dim3 grid{64, 4, 1};
        call.launcher.launch_in_clusters(launch::Kernel::main, grid, kBlock, 0, nullptr, 0, 4);   // the call's first
        call.launcher.launch_in_clusters(launch::Kernel::main, grid, kBlock, 0, nullptr, 0, 4);
        REQUIRE(call.device.launches.size() == 2);
        for (const Launch& l : call.device.launches) {
            CHECK(l.function == &main_kernel);
            CHECK(l.cluster_y == 4u);
            CHECK(l.blocks == 256u);
        }
        CHECK_FALSE(call.device.launches[0].overlapped);
        CHECK(call.device.launches[1].overlapped == overlap);
    }
}

TEST_CASE("device launcher: CC1D_MEMORY_GBPS sets the DRAM bandwidth the plans see, when it is a positive number") {
    Call call(true);
    {
        test::ScopedEnv unset("CC1D_MEMORY_GBPS", nullptr);
        CHECK(call.launcher.memory_bandwidth_gbps() == 3352.0);   // the device's
    }
    {
        test::ScopedEnv forced("CC1D_MEMORY_GBPS", "4800.5");
        CHECK(call.launcher.memory_bandwidth_gbps() == 4800.5);
    }
    for (const char* bad : {"fast", "-1", "0", "12x", " "}) {
        INFO("CC1D_MEMORY_GBPS='", bad, "'");
        test::ScopedEnv ignored("CC1D_MEMORY_GBPS", bad);
        CHECK(call.launcher.memory_bandwidth_gbps() == 3352.0);
    }
}

TEST_CASE("device launcher: resident blocks are the device's answer for the kernel asked, 0 for one the module lacks") {
    Call call(true);
    call.device.resident = 4;
    CHECK(call.launcher.resident_blocks(launch::Kernel::main, device::Dim3{32, 4, 1}, 512) == 4);
    REQUIRE(call.device.queries.size() == 1);
    CHECK(call.device.queries[0].function == &main_kernel);
    CHECK(call.device.queries[0].threads == 128);
    CHECK(call.device.queries[0].shared == 512);
    CHECK(call.launcher.resident_blocks(launch::Kernel::vectors, kBlock, 0) == 0);   // (no third kernel)
    CHECK(call.device.queries.size() == 1);
}

TEST_CASE("channel-last backward call: a tail only where the kernel holds no more blocks an SM than the wave plans") {
    // 2 x 1001 x 21011 fp32 with seq_idx on 132 multiprocessors: one wave of 16 channel
    // groups x 33 parts of 320-step walks, planned for 4 blocks an SM; with its tail 54
    // parts (backward_channel_last.cpp). Only calls a tail would come to ask the device:
    // not 2 x 1001 x 2000, whose walks are shorter than a tail needs.
    Variant variant = channel_last_backward(DType::fp32);
    variant.seq_idx = true;
    auto args_of = [](std::int64_t L) {
        BackwardArgs args = channel_last_args(DType::fp32, 2, 1001, L);
        args.seq_idx = Tensor(nullptr, DType::int32, {2, L}, {L, 1});
        return args;
    };
    struct Case {
        int resident;
        std::int64_t seqlen;
        unsigned main_blocks;
        std::size_t queries;
    };
    for (const Case c : {Case{4, 21011, 16 * 54, 1}, Case{0, 21011, 16 * 54, 1}, Case{5, 21011, 16 * 33, 1},
                         Case{4, 2000, 0, 0}}) {
        CAPTURE(c.resident);
        CAPTURE(c.seqlen);
        Call call(true);
        call.device.resident = c.resident;
        launch::backward_channel_last(call.launcher, variant, args_of(c.seqlen));
        CHECK(call.device.queries.size() == c.queries);
        REQUIRE_FALSE(call.device.launches.empty());
        CHECK(call.device.launches[0].function == &main_kernel);
        if (c.main_blocks != 0) CHECK(call.device.launches[0].blocks == c.main_blocks);
    }
}

TEST_CASE("channel-last backward call: the tile kernel's module launches its main kernel, then its reduce kernel") {
    // 4 x 4096 x 512 bf16, width 4 with SiLU (a call the tile kernel takes): on 132
    // multiprocessors 64 channel groups x 4 parts (backward_channel_last.cpp). Its module
    // (Variant::tiled) holds the tile kernel as the main entry and the reduce kernel as the
    // second; the register walk's module is never asked for, and a module that does not
    // match the call's plan is refused before anything is launched.
    const Variant variant = channel_last_backward(DType::bf16);
    const BackwardArgs args = channel_last_args(DType::bf16, 4, 4096, 512);
    REQUIRE(launch::backward::takes_tile(variant, args));
    {
        Variant tiled = variant;
        tiled.tiled = true;
        Call call(true);
        launch::backward_channel_last(call.launcher, tiled, args);
        REQUIRE(call.device.launches.size() == 2);
        CHECK(call.device.launches[0].function == &main_kernel);
        CHECK(call.device.launches[0].blocks == 64u * 4u);
        CHECK_FALSE(call.device.launches[0].overlapped);
        CHECK(call.device.launches[1].function == &second_kernel);
        CHECK(call.device.launches[1].overlapped);
        CHECK(call.device.queries.empty());   // (the walk's tail rule never asks)
    }
    {
        Call call(true);   // the walk's module for a call the tile kernel takes
        CHECK_THROWS_WITH_AS(launch::backward_channel_last(call.launcher, variant, args),
                             doctest::Contains("the register walk's module was loaded for a call that takes the tile kernel"),
                             Error);
        CHECK(call.device.launches.empty());
    }
    {
        // 8 x 5376 x 4096 (past 2^27 elements) walks registers: the tiled module is refused.
        const BackwardArgs large = channel_last_args(DType::bf16, 8, 5376, 4096);
        REQUIRE_FALSE(launch::backward::takes_tile(variant, large));
        Variant tiled = variant;
        tiled.tiled = true;
        Call call(true);
        CHECK_THROWS_WITH_AS(launch::backward_channel_last(call.launcher, tiled, large),
                             doctest::Contains("the tile kernel's module was loaded for a call that takes the register walk"),
                             Error);
        CHECK(call.device.launches.empty());
    }
}
