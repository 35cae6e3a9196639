// Device workspace for backward's reductions, one buffer per (device, stream) so calls
// on different streams never share one. Buffers only grow, so steady-state calls
// allocate nothing.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

#include "device/device.hpp"

namespace cc1d {

class WorkspacePool {
public:
    ~WorkspacePool();
    void* get(device::Device& device, int ordinal, void* stream, std::size_t bytes);

private:
    struct Buffer {
        device::Device* device = nullptr;
        void* data = nullptr;
        std::size_t bytes = 0;
    };
    std::mutex mutex_;
    std::map<std::pair<int, void*>, Buffer> buffers_;
};

}  // namespace cc1d
