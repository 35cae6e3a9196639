// A Launcher for host tests of the launch code: it records every launch (kernel,
// geometry, shared memory and the parameter block, of type Params) and reaches no
// device. Header-only (uses doctest).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "api/launch/launch.hpp"

namespace cc1d::test {

template <typename Params>
struct RecordingLauncher final : launch::Launcher {
    struct Launch {
        launch::Kernel kernel;
        device::Dim3 grid, block;
        unsigned shared;
        Params params;
        bool overlapped;   // through launch_overlapped or launch_in_clusters
        unsigned cluster_y;   // launch_in_clusters: blocks a cluster along y (else 1)
    };
    int sm_count = 132;
    bool clusters = false;   // what cluster_launches answers
    double memory_gbps = 3352.0;   // an H100 SXM
    void* workspace_address = nullptr;
    std::vector<Launch> launches;

    void launch(launch::Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared, const void* p,
                std::size_t size) override {
        record(kernel, grid, block, shared, p, size, false);
    }
    void launch_overlapped(launch::Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared,
                           const void* p, std::size_t size) override {
        record(kernel, grid, block, shared, p, size, true);
    }
    bool cluster_launches() override { return clusters; }
    // What resident_clusters answers: cluster_blocks_per_sm blocks an SM in clusters (the
    // H100's 8 by default), whatever the cluster's size.
    int cluster_blocks_per_sm = 8;
    int resident_clusters(launch::Kernel, device::Dim3, unsigned, unsigned cluster_y) override {
        return clusters ? sm_count * cluster_blocks_per_sm / int(cluster_y) : 0;
    }
    void launch_in_clusters(launch::Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared,
                            const void* p, std::size_t size, unsigned cluster_y) override {
        REQUIRE(clusters);
        REQUIRE(cluster_y >= 1);
        CHECK(grid.y % cluster_y == 0);
        record(kernel, grid, block, shared, p, size, true, cluster_y);
    }
    // The call's one launch, checked to be the main kernel with `threads` threads a block,
    // `blocks` blocks (the grid flattened) and `shared` bytes of dynamic shared memory.
    const Launch& only_main_launch(unsigned threads, std::int64_t blocks, unsigned shared) const {
        REQUIRE(launches.size() == 1);
        const Launch& l = launches[0];
        CHECK(l.kernel == launch::Kernel::main);
        CHECK(l.block.x == threads);
        CHECK(std::int64_t(l.grid.x) * l.grid.y == blocks);
        CHECK(l.shared == shared);
        return l;
    }
    int multiprocessor_count() override { return sm_count; }
    double memory_bandwidth_gbps() override { return memory_gbps; }
    void* workspace(std::size_t) override { return workspace_address; }

private:
    void record(launch::Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared, const void* p,
                std::size_t size, bool overlapped, unsigned cluster_y = 1) {
        REQUIRE(size == sizeof(Params));
        launches.push_back({kernel, grid, block, shared, {}, overlapped, cluster_y});
        std::memcpy(&launches.back().params, p, size);
    }
};

}  // namespace cc1d::test
