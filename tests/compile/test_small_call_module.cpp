// A small backward call's way from the plan to a launch, on the host: backward::plan_small
// takes it, the small-call variant's module is compiled by the real NVRTC through the
// KernelStore (as the Runtime does), its kernel is looked up by the name the code object
// holds (no reduce kernel is asked for; a channel-first module also has its vector kernel),
// and the DeviceLauncher launches the function the plan names with the plan's geometry. A
// fake device stands in for the GPU: it keeps the code object and hands out the functions
// it names.
#include <doctest/doctest.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/device_launcher.hpp"
#include "api/kernel_store.hpp"
#include "api/launch/backward_small.hpp"
#include "api/workspace_pool.hpp"
#include "cache/disk_cache.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"
#include "params.h"
#include "rtc/compiler.hpp"
#include "support/fake_device.hpp"
#include "support/scoped_env.hpp"

using namespace cc1d;

namespace {

class ModuleDevice final : public test::FakeDevice {
public:
    std::string code;                     // the last code object loaded
    std::vector<std::string> looked_up;   // function names asked for
    std::vector<std::string> launched;    // the name of each launched function
    device::Dim3 grid, block;
    unsigned shared = 0;
    cc1d_bwd_params params{};

    void* load_module(const std::string& code_object) override {
        code = code_object;
        return &code;
    }
    void* get_function(void*, const std::string& function) override {
        looked_up.push_back(function);
        if (code.find(function) == std::string::npos) fail(ErrorCode::device_error, "no kernel named {}", function);
        names_.push_back(std::make_unique<std::string>(function));
        return names_.back().get();
    }
    void launch(void* function, device::Dim3 g, device::Dim3 b, unsigned s, void*, const void* p,
                std::size_t size) override {
        launched.push_back(*static_cast<std::string*>(function));
        grid = g, block = b, shared = s;
        REQUIRE(size == sizeof(params));
        std::memcpy(&params, p, size);
    }

private:
    std::vector<std::unique_ptr<std::string>> names_;
};

const void* address(int slot) { return reinterpret_cast<const void*>(std::uintptr_t(0x10000000) * (slot + 1)); }

}  // namespace

TEST_CASE("a small backward call compiles its own module and launches the kernel named in it") {
    try {
        rtc::open_nvrtc();
    } catch (const std::exception& e) {
        if (env::flag("CI")) FAIL("NVRTC is required in CI: " << e.what());
        std::cout << "SKIPPED: small-call module: " << e.what() << "\n";
        return;
    }
    // Channel-first rows of whole vectors take the module's vector kernel, unless it is
    // switched off: its one-vector form (the module's second kernel) where a thread has one
    // vector (L = 128: 32 a channel), its two-vector form (the third) where some have two
    // (L = 2048: 512); channel-last modules have neither.
    struct Case {
        Layout layout;
        bool vectors;
        std::int64_t L;
    };
    for (const Case& c : {Case{Layout::channel_first, true, 128}, Case{Layout::channel_first, true, 2048},
                          Case{Layout::channel_first, false, 128}, Case{Layout::channel_last, false, 128}}) {
        const Layout layout = c.layout;
        const bool vectors = c.vectors;
        INFO("channel-last=", layout == Layout::channel_last, " vector kernel=", vectors, " L=", c.L);
        std::optional<test::ScopedEnv> no_vectors;
        if (layout == Layout::channel_first && !vectors) no_vectors.emplace("CC1D_DISABLE_SMALL_VECTORS", "1");
        const std::int64_t B = 2, D = 64, L = c.L;
        const bool cl = layout == Layout::channel_last;
        const std::vector<std::int64_t> st = cl ? std::vector<std::int64_t>{L * D, 1, D} : std::vector<std::int64_t>{D * L, L, 1};
        const std::initializer_list<std::int64_t> strides = {st[0], st[1], st[2]};
        BackwardArgs args;
        args.x = Tensor(address(0), DType::bf16, {B, D, L}, strides);
        args.dout = Tensor(address(1), DType::bf16, {B, D, L}, strides);
        args.dx = Tensor(const_cast<void*>(address(2)), DType::bf16, {B, D, L}, strides);
        args.weight = Tensor(address(3), DType::bf16, {D, 4});
        args.dweight = Tensor(const_cast<void*>(address(4)), DType::fp32, {D, 4});
        Variant variant;
        variant.op = Op::bwd;
        variant.layout = layout;
        variant.width = 4;
        variant.x_dtype = variant.weight_dtype = DType::bf16;
        variant.deterministic = false;   // either mode: the one module

        const auto plan = launch::backward::plan_small(variant, args);
        REQUIRE(plan.has_value());
        CHECK(plan->vectors == vectors);
        variant.small_call = true;
        cache::DiskCacheConfig config;
        config.enabled = false;
        cache::DiskCache disk(config);
        StoreCounters counters;
        KernelStore store(disk, counters);
        ModuleDevice device;
        const LoadedKernel& kernel = store.get(device, 0, variant);
        const std::string main = variant.entry_name(), vector_kernel = main + "_vectors",
                          one_vector_kernel = main + "_vectors_one";
        if (layout == Layout::channel_first) {   // the main one and the vector kernel's two forms (no reduce kernel)
            CHECK(device.looked_up == std::vector<std::string>{main, one_vector_kernel, vector_kernel});
            CHECK(kernel.second != nullptr);
            CHECK(kernel.third != nullptr);
        } else {
            CHECK(device.looked_up == std::vector<std::string>{main});
            CHECK(kernel.second == nullptr);
            CHECK(kernel.third == nullptr);
        }
        WorkspacePool pool;
        DeviceLauncher launcher(device, 0, kernel, nullptr, counters, pool, nullptr, 0);
        launch::backward::run_small(launcher, variant, args, *plan);
        REQUIRE(device.launched.size() == 1);
        CHECK(plan->one_vector == (vectors && L == 128));
        CHECK(device.launched[0] == (!vectors ? main : L == 128 ? one_vector_kernel : vector_kernel));
        CHECK(device.block.x == CC1D_BWD_SMALL_THREADS);
        CHECK(std::int64_t(device.grid.x) * device.grid.y == plan->blocks);
        CHECK(device.shared == plan->shared_bytes);
        CHECK(device.params.dw_mode == CC1D_DW_DIRECT);
        CHECK(device.params.x == args.x.data);
    }
}
