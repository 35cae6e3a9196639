// How the bench measures: device events around each call with L2 flushed before it (or,
// where the config asks, a stream of calls replayed from a graph), copy bandwidth as the
// yardstick, and the host's cost of issuing a call.
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

// More bytes than any GPU's last level cache holds (H200: 60 MB of L2; MI300: 256 MB of
// Infinity Cache).
constexpr std::size_t kBeyondLastLevelCache = std::size_t{256} << 20;

// Evicts the caches between timed runs by copying kBeyondLastLevelCache bytes on the stream.
class CacheFlusher {
public:
    explicit CacheFlusher(device::Device& device, std::size_t bytes_copied = kBeyondLastLevelCache);
    void flush(void* stream);

private:
    device::Device& device_;
    DeviceMemory from_, to_;
};

// `warmup` calls, then `reps` calls each preceded by a flush and bracketed by events
// (recorded all at once, read afterwards: no host sync between runs).
TimingStats time_on_stream(device::Device& device, void* stream, CacheFlusher& flusher, int warmup, int reps,
                           const std::function<void()>& call);

// A stream of calls as a serving engine issues them: one graph holding back-to-back calls
// that cycle through `sets` input sets (call(i) runs set i), replayed once to warm up and
// then `replays` times between events; the time per call is a replay's time over its calls.
// No flush: the sets together span more than the last level cache (replay_sets), so
// every call reads its inputs from memory, and the launch gaps are the graph's, not the
// host's. The graph holds at least 64 calls.
TimingStats time_graph_replay(device::Device& device, void* stream, int sets, int replays,
                              const std::function<void(int)>& call);

// Input sets a case of `bytes` rotates through in a graph replay: enough to span
// kBeyondLastLevelCache, at least 1, at most kMaxReplaySets.
constexpr int kMaxReplaySets = 4096;
int replay_sets(std::uint64_t bytes);

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

// The same-size copy as a graph replay: replay_sets(bytes_moved) pairs of buffers, one
// copy per pair, cycled as the cases' sets are. Empty when the buffers do not fit.
std::optional<TimingStats> time_same_size_copy_replay(device::Device& device, void* stream, int replays,
                                                      std::uint64_t bytes_moved);

// Host microseconds per call of `calls` back-to-back calls (the GPU catches up after).
double host_us_per_call(device::Device& device, void* stream, int calls, const std::function<void()>& call);

}  // namespace cc1d::bench
