// The Launcher a Runtime call hands to its kernel family: the call's device, stream,
// loaded kernel and workspace. Every kernel after the call's first may be an overlapped
// launch where the family asks for one; the first is always a plain launch, because the
// kernel before it in the stream is the caller's, whose writes an overlapped kernel could
// read too early.
#pragma once

#include <cstddef>

#include "api/kernel_store.hpp"
#include "api/launch/launch.hpp"
#include "api/workspace_pool.hpp"
#include "device/device.hpp"

namespace cc1d {

class DeviceLauncher final : public launch::Launcher {
public:
    DeviceLauncher(device::Device& device, int ordinal, const LoadedKernel& kernel, void* stream,
                   StoreCounters& counters, WorkspacePool& pool, void* caller_workspace, std::size_t caller_bytes)
        : device_(device), ordinal_(ordinal), kernel_(kernel), stream_(stream), counters_(counters), pool_(pool),
          caller_workspace_(caller_workspace), caller_bytes_(caller_bytes) {}

    void launch(launch::Kernel which, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes, const void* params,
                std::size_t params_size) override;
    void launch_overlapped(launch::Kernel which, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes,
                           const void* params, std::size_t params_size) override;
    bool cluster_launches() override;
    int resident_clusters(launch::Kernel which, device::Dim3 block, unsigned shared_bytes, unsigned cluster_y) override;
    void launch_in_clusters(launch::Kernel which, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes,
                            const void* params, std::size_t params_size, unsigned cluster_y) override;
    int multiprocessor_count() override;
    int resident_blocks(launch::Kernel which, device::Dim3 block, unsigned shared_bytes) override;
    // The device's (cached there), or CC1D_MEMORY_GBPS when set to a positive number.
    double memory_bandwidth_gbps() override;
    void* workspace(std::size_t bytes) override;

private:
    void* function(launch::Kernel which) const;
    void start(launch::Kernel which, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes, const void* params,
               std::size_t params_size, bool overlapped, unsigned cluster_y = 1);

    device::Device& device_;
    int ordinal_;
    const LoadedKernel& kernel_;
    void* stream_;
    StoreCounters& counters_;
    WorkspacePool& pool_;
    void* caller_workspace_;
    std::size_t caller_bytes_;
    int sm_count_ = 0;
    int launched_ = 0;   // kernels this call has launched
};

}  // namespace cc1d
