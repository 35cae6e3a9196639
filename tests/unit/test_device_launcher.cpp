// Which launches may overlap the kernel before them. An overlapped kernel reads its inputs
// before it waits, so only a kernel of the same call may come before it: the first
// kernel of every call is a plain launch, whatever the family asks. Checked against a
// device that records launches, for the launcher alone and for whole backward calls in
// each of their reduction modes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "api/device_launcher.hpp"
#include "api/launch/backward_plan.hpp"
#include "common/fail.hpp"
#include "support/fake_device.hpp"
#include "support/scoped_env.hpp"

using namespace cc1d;

namespace {

struct Launch {
    void* function;
    bool overlapped;
};

// Records launches; everything else a launcher must not need here fails the test.
class RecordingDevice final : public test::FakeDevice {
public:
    explicit RecordingDevice(bool overlap) : overlap_(overlap) {}
    std::vector<Launch> launches;

    void launch(void* function, device::Dim3, device::Dim3, unsigned, void*, const void*, std::size_t) override {
        launches.push_back({function, false});
    }
    bool overlapped_launches(int) override { return overlap_; }
    void launch_overlapped(void* function, device::Dim3, device::Dim3, unsigned, void*, const void*,
                           std::size_t) override {
        launches.push_back({function, true});
    }

private:
    bool overlap_;
};

// Stand-ins for the two kernels of a loaded module and a caller's workspace.
int main_kernel, second_kernel;
float workspace[1 << 16];

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
