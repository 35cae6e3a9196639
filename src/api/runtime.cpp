// Runtime: validate -> Variant -> KernelStore -> family launcher, on the caller's stream.
#include <fmt/format.h>

#include <chrono>
#include <mutex>

#include "api/device_launcher.hpp"
#include "api/kernel_store.hpp"
#include "api/launch/call.hpp"
#include "api/launch/launch.hpp"
#include "api/validate.hpp"
#include "api/workspace_pool.hpp"
#include "cache/disk_cache.hpp"
#include "cc1d/cc1d.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"
#include "common/log.hpp"
#include "device/device.hpp"

namespace cc1d {

struct Runtime::Impl {
    explicit Impl(const RuntimeOptions& options)
        : disk(disk_config(options)), store(disk, counters) {}

    static cache::DiskCacheConfig disk_config(const RuntimeOptions& options) {
        if (!options.log_level.empty()) log::set_threshold(log::parse_level(options.log_level, log::threshold()));
        cache::DiskCacheConfig config;
        config.root = options.cache_dir;
        config.enabled = options.disk_cache && !env::flag("CC1D_DISABLE_DISK_CACHE");
        return config;
    }

    // The GPU backend, opened on first use so a Runtime works on hosts without a GPU
    // (precompile). A failure is remembered and reported on every call.
    device::Device& gpu() {
        std::call_once(device_once, [this] {
            try {
                device = device::open_any();
            } catch (const Error& e) {
                device_error = e.what();
            }
        });
        if (!device) fail(ErrorCode::backend_unavailable, "{}", device_error);
        return *device;
    }

    cache::DiskCache disk;
    StoreCounters counters;
    std::once_flag device_once;
    std::unique_ptr<device::Device> device;   // declared before store: outlives its modules
    std::string device_error;
    KernelStore store;
    WorkspacePool workspaces;
};

namespace {

bool empty(const Tensor& x) { return x.numel() == 0; }

}  // namespace

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(options)) {}
Runtime::~Runtime() = default;

// One call: the device, its current ordinal, the stream check and the kernel, then the
// family launcher. Templates keep the four ops to one line each below.
template <typename Args, typename Family>
static void run_op(Runtime::Impl& impl, const Variant& variant, const Args& args, void* stream, Family family,
                   void* caller_workspace = nullptr, std::size_t caller_bytes = 0) {
    device::Device& device = impl.gpu();
    const int ordinal = device.current_device();
    device.check_stream(stream, ordinal);
    const LoadedKernel& kernel = impl.store.get(device, ordinal, variant);
    DeviceLauncher launcher(device, ordinal, kernel, stream, impl.counters, impl.workspaces, caller_workspace, caller_bytes);
    family(launcher, variant, args);
}

void Runtime::forward(const ForwardArgs& args, void* stream) {
    const launch::ForwardCall call = launch::plan_forward(validate::forward(args), args);
    if (!call.launches) return;
    auto run = [&call](launch::Launcher& launcher, const Variant&, const ForwardArgs& a) { launch::run_forward(launcher, call, a); };
    run_op(*impl_, call.variant, args, stream, run);
}

void Runtime::backward(const BackwardArgs& args, void* stream) {
    const launch::BackwardCall call = launch::plan_backward(validate::backward(args), args);
    auto run = [&call](launch::Launcher& launcher, const Variant&, const BackwardArgs& a) { launch::run_backward(launcher, call, a); };
    run_op(*impl_, call.variant, args, stream, run, args.workspace, args.workspace_bytes);
}

void Runtime::update(const UpdateArgs& raw, void* stream) {
    UpdateArgs args = raw;
    const Variant variant = validate::update(args);
    if (empty(args.x)) return;
    run_op(*impl_, variant, args, stream, launch::update);
}

void Runtime::varlen_forward(const VarlenForwardArgs& args, void* stream) {
    const Variant variant = validate::varlen_forward(args);
    if (args.x.shape[0] == 0) return;   // no channels: nothing to write (x is (dim, total))
    run_op(*impl_, variant, args, stream, launch::varlen_forward);
}

std::size_t Runtime::backward_workspace_size(const BackwardArgs& args) const {
    return launch::backward_workspace_bytes(validate::backward(args), args);
}

bool Runtime::precompile(const std::string& variant_text, const std::string& target) {
    const Variant variant = Variant::parse(variant_text);
    if (!impl_->disk.enabled())
        log::warn_once("precompile-no-disk", "precompile: the disk cache is off, so compiled kernels are not kept");
    return impl_->store.precompile(variant, target);
}

std::string Runtime::device_target() {
    device::Device& device = impl_->gpu();
    return device.backend() + ":" + device.target(device.current_device());
}

Stats Runtime::stats() const {
    const auto& c = impl_->counters;
    Stats s;
    s.memory_hits = c.memory_hits;
    s.disk_hits = c.disk_hits;
    s.compiles = c.compiles;
    s.compile_failures = c.compile_failures;
    s.compile_seconds = static_cast<double>(c.compile_ns.load()) * 1e-9;
    s.disk_load_seconds = static_cast<double>(c.disk_load_ns.load()) * 1e-9;
    s.launches = c.launches;
    return s;
}

std::string Runtime::cache_dir() const { return impl_->disk.enabled() ? impl_->disk.root() : std::string(); }

}  // namespace cc1d
