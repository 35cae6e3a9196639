#include "api/device_launcher.hpp"

#include <cstdlib>

#include "common/env.hpp"
#include "common/fail.hpp"

namespace cc1d {

void DeviceLauncher::launch(launch::Kernel which, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes,
                            const void* params, std::size_t params_size) {
    start(which, grid, block, shared_bytes, params, params_size, false);
}

void DeviceLauncher::launch_overlapped(launch::Kernel which, device::Dim3 grid, device::Dim3 block,
                                       unsigned shared_bytes, const void* params, std::size_t params_size) {
    start(which, grid, block, shared_bytes, params, params_size, launched_ > 0);
}

bool DeviceLauncher::cluster_launches() {
    // Read on every call, as the other launch switches (tests run both paths in one process).
    return device_.cluster_launches(ordinal_) && !env::flag("CC1D_DISABLE_CLUSTERS");
}

int DeviceLauncher::resident_clusters(launch::Kernel which, device::Dim3 block, unsigned shared_bytes,
                                      unsigned cluster_y) {
    void* f = function(which);
    return f == nullptr ? 0
                        : device_.resident_clusters(f, static_cast<int>(block.x * block.y * block.z), shared_bytes,
                                                    cluster_y);
}

void DeviceLauncher::launch_in_clusters(launch::Kernel which, device::Dim3 grid, device::Dim3 block,
                                        unsigned shared_bytes, const void* params, std::size_t params_size,
                                        unsigned cluster_y) {
    start(which, grid, block, shared_bytes, params, params_size, launched_ > 0, cluster_y);
}

double DeviceLauncher::memory_bandwidth_gbps() {
    // Read on every call, as the other launch switches: tests run the plans of fast- and
    // slow-memory devices on whichever device they have.
    if (const auto forced = env::get("CC1D_MEMORY_GBPS")) {
        char* end = nullptr;
        const double gbps = std::strtod(forced->c_str(), &end);
        if (end != forced->c_str() && *end == '\0' && gbps > 0) return gbps;
    }
    return device_.memory_bandwidth_gbps(ordinal_);
}

int DeviceLauncher::multiprocessor_count() {
    if (sm_count_ == 0) sm_count_ = device_.multiprocessor_count(ordinal_);
    return sm_count_;
}

int DeviceLauncher::resident_blocks(launch::Kernel which, device::Dim3 block, unsigned shared_bytes) {
    void* f = function(which);
    return f == nullptr ? 0 : device_.resident_blocks(f, static_cast<int>(block.x * block.y * block.z), shared_bytes);
}

void* DeviceLauncher::function(launch::Kernel which) const {
    return which == launch::Kernel::main ? kernel_.main : which == launch::Kernel::vectors ? kernel_.third : kernel_.second;
}

void* DeviceLauncher::workspace(std::size_t bytes) {
    if (caller_workspace_ != nullptr) {
        if (caller_bytes_ < bytes)
            fail(ErrorCode::invalid_argument, "workspace: {} bytes given, {} needed (backward_workspace_size)", caller_bytes_,
                 bytes);
        return caller_workspace_;
    }
    return pool_.get(device_, ordinal_, stream_, bytes);
}

void DeviceLauncher::start(launch::Kernel which, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes,
                           const void* params, std::size_t params_size, bool overlapped, unsigned cluster_y) {
    void* function = this->function(which);
    if (function == nullptr) fail(ErrorCode::unsupported, "this kernel family's module lacks the kernel asked for");
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;   // nothing to do (and not the call's first kernel)
    const bool overlap = overlapped && device_.overlapped_launches(ordinal_);
    if (cluster_y > 1)
        device_.launch_in_clusters(function, grid, block, shared_bytes, stream_, params, params_size, cluster_y, overlap);
    else if (overlap)
        device_.launch_overlapped(function, grid, block, shared_bytes, stream_, params, params_size);
    else
        device_.launch(function, grid, block, shared_bytes, stream_, params, params_size);
    ++launched_;
    ++counters_.launches;
}

}  // namespace cc1d
