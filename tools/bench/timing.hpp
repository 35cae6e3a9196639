// How the bench measures: device events around each call with L2 flushed before it,
// copy bandwidth as the yardstick, and the host's cost of issuing a call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "bench_tensor.hpp"
#include "device/device.hpp"

namespace cc1d::bench {

struct TimingStats {
    double median_us = 0, min_us = 0, max_us = 0;
    int reps = 0;
};

// Evicts the caches between timed runs by copying a buffer larger than any GPU's last
// level cache (H200: 60 MB of L2; MI300: 256 MB of Infinity Cache) on the stream.
class CacheFlusher {
public:
    CacheFlusher(device::Device& device, std::size_t bytes_copied = std::size_t{256} << 20);
    void flush(void* stream);

private:
    device::Device& device_;
    DeviceMemory from_, to_;
};

// `warmup` calls, then `reps` calls each preceded by a flush and bracketed by events
// (recorded all at once, read afterwards: no host sync between runs).
TimingStats time_on_stream(device::Device& device, void* stream, CacheFlusher& flusher, int warmup, int reps,
                           const std::function<void()>& call);

struct CopyBandwidth {
    double gb_per_s = 0;          // (bytes read + bytes written) / median time
    std::size_t buffer_bytes = 0; // size of the copied buffer
};
// Device-to-device copy of 2 GiB (or the largest power-of-two size that fits), median of 10.
CopyBandwidth measure_copy_bandwidth(device::Device& device, void* stream);

// A device-to-device copy moving `bytes_moved` bytes (read + written, so half of them
// copied), timed exactly as the cases are (warm-up, a flush before every run, events):
// what a plain copy of a case's bytes reaches under the same per-call costs (the event to
// kernel latency, the flush's dirty lines in the cache). Empty when the two buffers do not
// fit in device memory.
std::optional<TimingStats> time_same_size_copy(device::Device& device, void* stream, CacheFlusher& flusher, int warmup,
                                               int reps, std::uint64_t bytes_moved);

// Host microseconds per call of `calls` back-to-back calls (the GPU catches up after).
double host_us_per_call(device::Device& device, void* stream, int calls, const std::function<void()>& call);

}  // namespace cc1d::bench
