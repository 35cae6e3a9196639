// Random calls of every op, layout, dtype pair, width and feature, from empty shapes to
// 2^28 elements, with strided views, rows off 16-byte boundaries and random settings of
// the CC1D_DISABLE_* switches, taken through the Runtime's own path from validated
// arguments to launches (launch/call.hpp) on a launcher that reaches no device. Each
// launch must be one the hardware and the module take: a kernel the module holds, grid
// and block in range, at most 48 KiB of dynamic shared memory (no kernel opts in to more),
// clusters only where the device launches them; and a backward call may ask for no more
// workspace than backward_workspace_size answered under other switch settings, whatever
// the device. What the kernels compute is the GPU tests' part; these are the host plans'
// promises, over far more shapes than a GPU test can run.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "api/launch/call.hpp"
#include "api/validate.hpp"
#include "codegen/render.hpp"
#include "params.h"
#include "support/scoped_env.hpp"

using namespace cc1d;

namespace {

using Rng = std::mt19937_64;

bool coin(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
std::int64_t uniform(Rng& rng, std::int64_t lo, std::int64_t hi) {   // [lo, hi]
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
template <typename T, std::size_t N>
T pick(Rng& rng, const T (&options)[N]) {
    return options[uniform(rng, 0, N - 1)];
}
// A size in [1, most], log-uniform, so small and odd sizes come as often as large ones;
// 0 now and then (empty calls).
std::int64_t size_up_to(Rng& rng, std::int64_t most, double empty_chance = 0.03) {
    if (coin(rng, empty_chance)) return 0;
    const double e = std::uniform_real_distribution<double>(0, std::log(double(most)))(rng);
    return std::max<std::int64_t>(1, std::min<std::int64_t>(most, std::llround(std::exp(e))));
}

// Distinct fake device addresses far apart (never dereferenced), each tensor at its own
// slot, `shift` elements past a 256-byte boundary.
const void* address(int slot, DType dtype, std::int64_t shift = 0) {
    return reinterpret_cast<const void*>((std::uintptr_t(slot + 1) << 40) + std::uintptr_t(shift) * dtype_size(dtype));
}

// A (B, D, L) view in `layout`: rows (along L channel-first, along D channel-last) padded
// now and then, batches spaced now and then, the start off a 16-byte boundary now and then.
Tensor view_bdl(Rng& rng, int slot, DType dtype, std::int64_t B, std::int64_t D, std::int64_t L, Layout layout) {
    const std::int64_t row_pad = coin(rng, 0.25) ? uniform(rng, 1, 9) : 0;
    const std::int64_t batch_pad = coin(rng, 0.2) ? uniform(rng, 1, 40) : 0;
    const std::int64_t shift = coin(rng, 0.25) ? uniform(rng, 1, 7) : 0;
    if (layout == Layout::channel_last) {
        const std::int64_t row = D + row_pad;
        return Tensor(address(slot, dtype, shift), dtype, {B, D, L}, {L * row + batch_pad, 1, row});
    }
    const std::int64_t row = L + row_pad;
    return Tensor(address(slot, dtype, shift), dtype, {B, D, L}, {D * row + batch_pad, row, 1});
}
// States (B, D, K), contiguous in either order of D and K.
Tensor states(Rng& rng, int slot, DType dtype, std::int64_t B, std::int64_t D, int K) {
    if (coin(rng, 0.5)) return Tensor(address(slot, dtype), dtype, {B, D, K}, {D * K, K, 1});
    return Tensor(address(slot, dtype), dtype, {B, D, K}, {D * K, 1, D});
}

struct Shape {
    std::int64_t B, D, L;
};
// B, D and L of at most 2^28 elements in all (a tenth up to 2^33); a quarter of them with L at or next to a
// length or a size where the plans change their minds (the small-call bounds, the tile
// kernel's limits, row lengths of one or two tiles).
Shape random_shape(Rng& rng, std::int64_t most_l = std::int64_t(1) << 18) {
    Shape s{size_up_to(rng, 64), size_up_to(rng, 16384), size_up_to(rng, most_l)};
    if (coin(rng, 0.25) && s.B * s.D > 0) {
        const std::int64_t sizes[] = {1 << 17, 1 << 19, 1 << 21, 1 << 22, 1 << 24, 1 << 25, 1 << 26, 1 << 27};
        const std::int64_t lengths[] = {16, 64, 65, 128, 129, 256, 512, 1024, 4096, 4097};
        const std::int64_t near = coin(rng, 0.5) ? pick(rng, sizes) / (s.B * s.D) : pick(rng, lengths);
        s.L = std::max<std::int64_t>(1, near + uniform(rng, -1, 1));
    }
    // Now and then past 2^31 elements (64-bit indexing), up to 2^33.
    const std::int64_t most = std::int64_t(1) << (coin(rng, 0.1) ? 33 : 28);
    if (most > (std::int64_t(1) << 28) && s.B * s.D > 0) s.L = std::max(s.L, most / (s.B * s.D) - uniform(rng, 0, 3));
    while (s.B * s.D * s.L > most) s.L = std::max<std::int64_t>(1, s.L / 2);
    return s;
}

const DType kDtypes[] = {DType::fp32, DType::fp16, DType::bf16};
const Layout kLayouts[] = {Layout::channel_first, Layout::channel_last};

// Each switch set or not at random for one scope (read on every call).
struct RandomSwitches {
    static constexpr const char* kNames[] = {
        "CC1D_DISABLE_SMALL_FORWARD", "CC1D_DISABLE_SMALL_BACKWARD", "CC1D_DISABLE_SMALL_VECTORS",
        "CC1D_DISABLE_BACKWARD_TILE", "CC1D_DISABLE_BACKWARD_TAIL",  "CC1D_DISABLE_SHIFTED_ROWS",
        "CC1D_DISABLE_OWN_BOUNDARIES"};
    std::vector<std::unique_ptr<test::ScopedEnv>> set;
    std::string text;
    explicit RandomSwitches(Rng& rng) {
        for (const char* name : kNames) {
            const bool on = coin(rng, 0.2);
            set.push_back(std::make_unique<test::ScopedEnv>(name, on ? "1" : nullptr));
            if (on) text += std::string(name) + " ";
        }
    }
};

// A launcher of no device: it answers like one (a random multiprocessor count, DRAM
// speed, residency and cluster support) and checks every launch of a call against what
// the hardware and the call's module take.
struct CheckingLauncher final : launch::Launcher {
    Variant module;   // the call's module (its kernels: codegen::second_kernel, third_kernel)
    int sm_count = 132;
    bool clusters = false;
    int blocks_per_sm = 0;   // resident_blocks' answer (0: cannot say)
    double memory_gbps = 3352.0;
    std::size_t workspace_asked = 0;
    int launches = 0;
    std::vector<std::vector<unsigned char>> params_of;   // each launch's parameter block

    CheckingLauncher(Rng& rng, const Variant& call_module) : module(call_module.normalized()) {
        const int sms[] = {1, 2, 8, 46, 108, 132, 144, 228, 304};
        sm_count = pick(rng, sms);
        clusters = coin(rng, 0.5);
        blocks_per_sm = coin(rng, 0.3) ? 0 : int(uniform(rng, 1, 16));
        const double gbps[] = {900.0, 2039.0, 3352.0, 4800.0, 5300.0};
        memory_gbps = pick(rng, gbps);
    }

    void launch(launch::Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared, const void* params,
                std::size_t size) override {
        check(kernel, grid, block, shared, params, size, 1);
    }
    void launch_overlapped(launch::Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared,
                           const void* params, std::size_t size) override {
        check(kernel, grid, block, shared, params, size, 1);
    }
    bool cluster_launches() override { return clusters; }
    int resident_clusters(launch::Kernel, device::Dim3, unsigned, unsigned cluster_y) override {
        return clusters ? sm_count * 8 / int(cluster_y) : 0;
    }
    void launch_in_clusters(launch::Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared,
                            const void* params, std::size_t size, unsigned cluster_y) override {
        CHECK_MESSAGE(clusters, "a launch in clusters on a device without them");
        CHECK(cluster_y >= 1);
        CHECK(cluster_y <= unsigned(CC1D_BWD_MAX_CLUSTER_PARTS));
        CHECK(grid.y % cluster_y == 0);
        check(kernel, grid, block, shared, params, size, cluster_y);
    }
    int multiprocessor_count() override { return sm_count; }
    int resident_blocks(launch::Kernel, device::Dim3, unsigned) override { return blocks_per_sm; }
    double memory_bandwidth_gbps() override { return memory_gbps; }
    void* workspace(std::size_t bytes) override {
        workspace_asked = std::max(workspace_asked, bytes);
        return const_cast<void*>(address(60, DType::fp32));
    }

private:
    void check(launch::Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared, const void* params,
               std::size_t size, unsigned cluster_y) {
        ++launches;
        INFO("launch ", launches, ": kernel ", int(kernel), ", grid (", grid.x, ", ", grid.y, ", ", grid.z, "), block (", block.x,
             ", ", block.y, ", ", block.z, "), ", shared, " bytes of shared memory");
        // A kernel the module holds: the main one, else the second or third it names.
        if (kernel == launch::Kernel::reduce) CHECK_MESSAGE(*codegen::second_kernel(module).suffix != 0, "no second kernel in the module");
        if (kernel == launch::Kernel::vectors) CHECK_MESSAGE(*codegen::third_kernel(module).suffix != 0, "no third kernel in the module");
        CHECK(params != nullptr);
        CHECK(size > 0);
        if (params != nullptr) params_of.emplace_back(static_cast<const unsigned char*>(params), static_cast<const unsigned char*>(params) + size);
        CHECK(size <= 4096);   // the kernel parameter limit of every target
        if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;   // launches nothing (DeviceLauncher skips it)
        const std::uint64_t threads = std::uint64_t(block.x) * block.y * block.z;
        CHECK(threads >= 1);
        CHECK(threads <= 1024);
        CHECK(block.z <= 64);
        CHECK(grid.x <= 0x7fffffffu);
        CHECK(grid.y <= 65535u);
        CHECK(grid.z <= 65535u);
        CHECK(std::uint64_t(grid.x) * block.x < (std::uint64_t(1) << 32));   // HIP's bound
        CHECK(shared <= 48u * 1024u);
        CHECK(cluster_y >= 1);
    }
};

// What a backward launch's parameter block promises: the partial rows and seq masks lie
// inside the workspace the call asked for, every position of a row is in some tile or
// chunk, and the parts walk every (batch, tile) unit.
void check_backward_params(const CheckingLauncher& launcher, const Variant& module) {
    const auto base = reinterpret_cast<std::uintptr_t>(address(60, DType::fp32));
    const std::uintptr_t end = base + launcher.workspace_asked;
    for (const auto& bytes : launcher.params_of) {
        REQUIRE(bytes.size() == sizeof(cc1d_bwd_params));
        cc1d_bwd_params p;
        std::memcpy(&p, bytes.data(), sizeof(p));
        const bool rows = p.dw_mode == CC1D_DW_PARTIAL_ROWS || p.dw_mode == CC1D_DW_ATOMIC_PARTIAL;
        if (rows && p.dim > 0) {
            const auto at = reinterpret_cast<std::uintptr_t>(p.partials);
            CHECK(p.partials_row >= p.dim * (module.width + 1));
            CHECK(at >= base);
            const std::int64_t used_rows = p.dw_mode == CC1D_DW_PARTIAL_ROWS ? p.parts : 1;
            CHECK(at + std::uintptr_t(((used_rows - 1) * p.partials_row + p.dim * (module.width + 1)) * 4) <= end);
        }
        if (p.seq_masks != nullptr && p.batch * p.seqlen > 0) {
            const auto at = reinterpret_cast<std::uintptr_t>(p.seq_masks);
            CHECK(p.seq_mask_stride >= p.seqlen);
            CHECK(at >= base);
            CHECK(at + std::uintptr_t(p.batch * p.seq_mask_stride * CC1D_SEQ_MASK_BYTES(module.width)) <= end);
        }
        if (module.small_call || p.batch * p.seqlen * p.dim == 0 || p.reduce_mode != CC1D_REDUCE_SUM) continue;
        // The main kernel's walk (the reduce launches carry the same block).
        if (module.layout == Layout::channel_last && !module.tiled) {
            const std::int64_t reach = p.tail_tiles > 0 ? p.tail_start + p.tail_tiles * p.tail_len : p.tiles * p.tile_len;
            CHECK(reach >= p.seqlen);
        } else if (module.layout == Layout::channel_first) {
            CHECK(p.tiles * p.tile_len >= p.seqlen);
        }
        if (p.dw_mode != CC1D_DW_ATOMIC_DIRECT && p.dw_mode != CC1D_DW_ATOMIC_PARTIAL)
            CHECK(p.groups * p.units_per_part >= p.batch * p.tiles);
    }
}

std::string describe(const Variant& v, const Shape& s, const std::string& switches) {
    return v.canonical() + " B=" + std::to_string(s.B) + " D=" + std::to_string(s.D) + " L=" + std::to_string(s.L) +
           " switches: " + switches;
}

// What a forward or backward call draws first: its shape, layout, dtypes and width.
struct ConvDraw {
    Layout layout;
    DType x, w;
    int width, K;
};
ConvDraw draw_conv(Rng& rng, Shape& s) {
    s = random_shape(rng);
    ConvDraw c{pick(rng, kLayouts), pick(rng, kDtypes), pick(rng, kDtypes), int(uniform(rng, 1, 16)), 0};
    c.K = c.width - 1;
    return c;
}

BackwardArgs random_backward(Rng& rng, Shape& s) {
    const auto [layout, x, w, width, K] = draw_conv(rng, s);
    BackwardArgs a;
    a.x = view_bdl(rng, 0, x, s.B, s.D, s.L, layout);
    a.dout = view_bdl(rng, 1, x, s.B, s.D, s.L, layout);
    a.dx = view_bdl(rng, 2, x, s.B, s.D, s.L, layout);
    a.weight = Tensor(address(3, w), w, {s.D, width});
    const DType dw = coin(rng, 0.7) ? DType::fp32 : w;
    a.dweight = Tensor(address(4, dw), dw, {s.D, width});
    if (coin(rng, 0.7)) {
        a.bias = Tensor(address(5, w), w, {s.D});
        if (coin(rng, 0.9)) a.dbias = Tensor(address(6, dw), dw, {s.D});
    }
    a.activation = coin(rng, 0.6) ? Activation::silu : Activation::none;
    if (coin(rng, 0.3)) a.seq_idx = Tensor(address(7, DType::int32), DType::int32, {s.B, s.L});
    if (K > 0 && coin(rng, 0.2)) {
        a.initial_states = states(rng, 8, x, s.B, s.D, K);
        if (coin(rng, 0.7)) a.dinitial_states = states(rng, 9, x, s.B, s.D, K);
    }
    if (K > 0 && coin(rng, 0.2)) a.dfinal_states = states(rng, 10, x, s.B, s.D, K);
    a.accumulate = coin(rng, 0.2);
    a.deterministic = coin(rng, 0.8);
    return a;
}

ForwardArgs random_forward(Rng& rng, Shape& s) {
    const auto [layout, x, w, width, K] = draw_conv(rng, s);
    ForwardArgs a;
    a.x = view_bdl(rng, 0, x, s.B, s.D, s.L, layout);
    a.out = view_bdl(rng, 1, x, s.B, s.D, s.L, layout);
    a.weight = Tensor(address(2, w), w, {s.D, width});
    if (coin(rng, 0.7)) a.bias = Tensor(address(3, w), w, {s.D});
    a.activation = coin(rng, 0.6) ? Activation::silu : Activation::none;
    if (coin(rng, 0.3)) a.seq_idx = Tensor(address(4, DType::int32), DType::int32, {s.B, s.L});
    if (K > 0 && coin(rng, 0.2)) a.initial_states = states(rng, 5, x, s.B, s.D, K);
    if (K > 0 && coin(rng, 0.2)) a.final_states = states(rng, 6, x, s.B, s.D, K);
    return a;
}

UpdateArgs random_update(Rng& rng, Shape& s) {
    s = {size_up_to(rng, 1024), size_up_to(rng, 16384), coin(rng, 0.7) ? 1 : size_up_to(rng, 8, 0.0)};
    const DType x = pick(rng, kDtypes), w = pick(rng, kDtypes);
    const int width = int(uniform(rng, 1, 16));
    const std::int64_t state_len = std::max(1, width - 1) + (coin(rng, 0.3) ? uniform(rng, 1, 8) : 0);
    UpdateArgs a;
    if (s.L == 1 && coin(rng, 0.5)) {   // (B, D): one token a row
        a.x = Tensor(address(0, x), x, {s.B, s.D});
        a.out = Tensor(address(1, x), x, {s.B, s.D});
    } else {
        a.x = Tensor(address(0, x), x, {s.B, s.D, s.L});
        a.out = Tensor(address(1, x), x, {s.B, s.D, s.L});
    }
    a.weight = Tensor(address(2, w), w, {s.D, width});
    if (coin(rng, 0.7)) a.bias = Tensor(address(3, w), w, {s.D});
    a.activation = coin(rng, 0.6) ? Activation::silu : Activation::none;
    std::int64_t cache_batch = s.B + (coin(rng, 0.5) ? uniform(rng, 0, 64) : 0);
    if (coin(rng, 0.4)) {
        a.conv_state_indices = Tensor(address(4, DType::int32), DType::int32, {s.B});
        cache_batch = uniform(rng, 1, 2048);
    }
    if (coin(rng, 0.4)) a.cache_seqlens = Tensor(address(5, DType::int32), DType::int32, {s.B});
    a.conv_state = coin(rng, 0.5) ? Tensor(address(6, x), x, {cache_batch, s.D, state_len})
                                  : Tensor(address(6, x), x, {cache_batch, s.D, state_len}, {s.D * state_len, 1, s.D});
    return a;
}

VarlenForwardArgs random_varlen(Rng& rng, Shape& s) {
    const std::int64_t sequences = size_up_to(rng, 256);
    s = {1, size_up_to(rng, 8192), size_up_to(rng, std::int64_t(1) << 17)};
    while (s.D * s.L > (std::int64_t(1) << 28)) s.L = std::max<std::int64_t>(1, s.L / 2);
    const DType x = pick(rng, kDtypes), w = pick(rng, kDtypes);
    const int width = int(uniform(rng, 1, 16));
    VarlenForwardArgs a;
    const bool cl = coin(rng, 0.5);
    auto tokens = [&](int slot) {
        return cl ? Tensor(address(slot, x), x, {s.D, s.L}, {1, s.D}) : Tensor(address(slot, x), x, {s.D, s.L});
    };
    a.x = tokens(0);
    a.out = tokens(1);
    a.weight = Tensor(address(2, w), w, {s.D, width});
    if (coin(rng, 0.7)) a.bias = Tensor(address(3, w), w, {s.D});
    a.activation = coin(rng, 0.6) ? Activation::silu : Activation::none;
    a.cu_seqlens = Tensor(address(4, DType::int32), DType::int32, {sequences + 1});
    if (width > 1 && coin(rng, 0.4)) {
        const std::int64_t slots = sequences + uniform(rng, 0, 16), state_len = width - 1 + uniform(rng, 0, 3);
        a.conv_states = Tensor(address(5, x), x, {slots, s.D, state_len});
        if (coin(rng, 0.5)) a.cache_indices = Tensor(address(6, DType::int32), DType::int32, {sequences});
        if (coin(rng, 0.5)) a.has_initial_state = Tensor(address(7, DType::int32), DType::int32, {sequences});
    }
    return a;
}

constexpr int kCalls = 20000;

}  // namespace

TEST_CASE("random backward calls: every launch valid for its module, workspace within the query") {
    Rng rng(20261207);
    int launched = 0, tiled = 0, small = 0, shifted = 0;
    for (int i = 0; i < kCalls; ++i) {
        Shape s;
        const BackwardArgs args = random_backward(rng, s);
        const Variant validated = validate::backward(args);
        // The query under one setting of the switches, the call under another, on a device
        // the query knows nothing of.
        std::size_t query = 0;
        {
            RandomSwitches at_query(rng);
            query = launch::backward_workspace_bytes(validated, args);
        }
        RandomSwitches at_call(rng);
        const launch::BackwardCall call = launch::plan_backward(validated, args);
        CheckingLauncher launcher(rng, call.variant);
        INFO(describe(call.variant, s, at_call.text));
        launch::run_backward(launcher, call, args);
        if (s.D > 0) CHECK(launcher.launches >= 1);   // dweight/dbias are written even for an empty x
        CHECK(launcher.workspace_asked <= query);
        check_backward_params(launcher, call.variant);
        launched += launcher.launches;
        tiled += call.variant.tiled;
        small += call.variant.small_call;
        shifted += call.variant.shifted_rows;
    }
    // The draw reaches every kind of module.
    CHECK(tiled > 50);
    CHECK(small > 50);
    CHECK(shifted > 50);
    MESSAGE(kCalls << " backward calls, " << launched << " launches: " << tiled << " tile-kernel, " << small
                   << " small-call, " << shifted << " shifted-rows modules");
}

TEST_CASE("random forward calls: every launch valid for its module") {
    Rng rng(7);
    int launched = 0, small = 0, shifted = 0, silent = 0;
    for (int i = 0; i < kCalls; ++i) {
        Shape s;
        const ForwardArgs args = random_forward(rng, s);
        const Variant validated = validate::forward(args);
        RandomSwitches at_call(rng);
        const launch::ForwardCall call = launch::plan_forward(validated, args);
        CheckingLauncher launcher(rng, call.variant);
        INFO(describe(call.variant, s, at_call.text));
        launch::run_forward(launcher, call, args);
        // A call launches exactly when it has outputs or states to write.
        const bool writes = args.x.numel() != 0 || (args.final_states.present() && args.final_states.numel() != 0);
        if (writes) CHECK(launcher.launches >= 1);
        silent += launcher.launches == 0;
        launched += launcher.launches;
        small += call.variant.small_call;
        shifted += call.variant.shifted_rows;
    }
    CHECK(small > 50);
    CHECK(shifted > 50);
    MESSAGE(kCalls << " forward calls, " << launched << " launches, " << silent << " without one: " << small
                   << " small-call, " << shifted << " shifted-rows modules");
}

TEST_CASE("random decoding steps and packed prefills: every launch valid for its module") {
    Rng rng(11);
    int update_launches = 0, varlen_launches = 0;
    for (int i = 0; i < kCalls; ++i) {
        Shape s;
        UpdateArgs args = random_update(rng, s);
        const Variant variant = validate::update(args);   // (views (B, D) as (B, D, 1))
        CheckingLauncher launcher(rng, variant);
        INFO(describe(variant, s, ""));
        if (args.x.numel() != 0) launch::update(launcher, variant, args);   // as the Runtime: nothing for an empty x
        if (args.x.numel() != 0) CHECK(launcher.launches >= 1);
        update_launches += launcher.launches;
    }
    for (int i = 0; i < kCalls; ++i) {
        Shape s;
        const VarlenForwardArgs args = random_varlen(rng, s);
        const Variant variant = validate::varlen_forward(args);
        CheckingLauncher launcher(rng, variant);
        INFO(describe(variant, s, ""));
        launch::varlen_forward(launcher, variant, args);
        varlen_launches += launcher.launches;
    }
    MESSAGE(kCalls << " decoding steps, " << update_launches << " launches; " << kCalls << " packed prefills, "
                   << varlen_launches << " launches");
}

namespace {

// A tensor of random fields: absent, or any rank, shape, strides, dtype and address,
// sensible or not.
Tensor garbage_tensor(Rng& rng, int slot) {
    if (coin(rng, 0.1)) return Tensor();
    const DType dtypes[] = {DType::fp32, DType::fp16, DType::bf16, DType::int32};
    Tensor t;
    t.dtype = pick(rng, dtypes);
    t.rank = int(uniform(rng, 0, 3));
    const std::int64_t sizes[] = {0, 1, 2, 3, 5, 8, 64, 129, -1, std::int64_t(1) << 20, std::int64_t(1) << 33};
    for (int i = 0; i < t.rank; ++i) {
        t.shape[i] = pick(rng, sizes);
        const std::int64_t strides[] = {0, 1, -1, 2, 3, 64, 129, -129, std::int64_t(1) << 20, std::int64_t(1) << 40};
        t.strides[i] = pick(rng, strides);
    }
    const int offsets[] = {0, 0, 0, 1, 2, 4};
    t.data = coin(rng, 0.05) ? nullptr : static_cast<const char*>(address(slot, DType::fp32)) + pick(rng, offsets);
    return t;
}

// A valid call of the op with some of its tensors replaced by garbage (or, one time in
// ten, all of them): validation must refuse with a cc1d::Error or pass, and a call it
// passes must plan and launch within the limits (or refuse with a cc1d::Error too).
template <typename Args, typename Make, typename Validate, typename Run>
void garbage_calls(Rng& rng, Make make, Validate validate_args, Run run, std::initializer_list<Tensor Args::*> fields,
                   int& refused, int& passed) {
    for (int i = 0; i < kCalls; ++i) {
        Shape s;
        Args args = make(rng, s);
        int slot = 20;
        const bool all = coin(rng, 0.1);
        for (Tensor Args::*field : fields)
            if (all || coin(rng, 0.15)) args.*field = garbage_tensor(rng, slot++);
        try {
            const Variant validated = validate_args(args);
            ++passed;
            run(rng, validated, args);
        } catch (const Error&) {
            ++refused;
        } catch (const std::exception& e) {
            FAIL("not a cc1d::Error: " << e.what());
        }
    }
}

}  // namespace

TEST_CASE("forward and backward calls with garbage tensors: a cc1d::Error or a valid call, nothing else") {
    Rng rng(5);
    int refused = 0, passed = 0;
    garbage_calls<ForwardArgs>(
        rng, random_forward, [](const ForwardArgs& a) { return validate::forward(a); },
        [](Rng& r, const Variant& v, const ForwardArgs& a) {
            const launch::ForwardCall call = launch::plan_forward(v, a);
            CheckingLauncher launcher(r, call.variant);
            launch::run_forward(launcher, call, a);
        },
        {&ForwardArgs::x, &ForwardArgs::weight, &ForwardArgs::bias, &ForwardArgs::out, &ForwardArgs::seq_idx,
         &ForwardArgs::initial_states, &ForwardArgs::final_states},
        refused, passed);
    garbage_calls<BackwardArgs>(
        rng, random_backward, [](const BackwardArgs& a) { return validate::backward(a); },
        [](Rng& r, const Variant& v, const BackwardArgs& a) {
            const std::size_t query = launch::backward_workspace_bytes(v, a);
            const launch::BackwardCall call = launch::plan_backward(v, a);
            CheckingLauncher launcher(r, call.variant);
            launch::run_backward(launcher, call, a);
            CHECK(launcher.workspace_asked <= query);
        },
        {&BackwardArgs::x, &BackwardArgs::weight, &BackwardArgs::bias, &BackwardArgs::dout, &BackwardArgs::dx,
         &BackwardArgs::dweight, &BackwardArgs::dbias, &BackwardArgs::seq_idx, &BackwardArgs::initial_states,
         &BackwardArgs::dinitial_states, &BackwardArgs::dfinal_states},
        refused, passed);
    CHECK(refused > kCalls);
    CHECK(passed > kCalls / 4);
    MESSAGE(refused << " refused, " << passed << " passed validation");
}
