#include "api/workspace_pool.hpp"

namespace cc1d {

WorkspacePool::~WorkspacePool() {
    for (auto& [key, buffer] : buffers_) buffer.device->release(buffer.data);
}

void* WorkspacePool::get(device::Device& device, int ordinal, void* stream, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Buffer& buffer = buffers_[{ordinal, stream}];
    if (buffer.bytes < bytes) {
        // The old buffer may still be read by work queued on this stream: a full
        // synchronize before freeing keeps that safe (growth is rare).
        if (buffer.data) {
            device.synchronize();
            device.release(buffer.data);
            buffer.data = nullptr;
            buffer.bytes = 0;
        }
        buffer.data = device.allocate(bytes);
        buffer.device = &device;
        buffer.bytes = bytes;
    }
    return buffer.data;
}

}  // namespace cc1d
