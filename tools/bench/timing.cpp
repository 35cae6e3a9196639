#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "cc1d/cc1d.hpp"

namespace cc1d::bench {
namespace {

// Events created up front and destroyed on scope exit, so an exception leaks none.
class EventSet {
public:
    EventSet(device::Device& device, std::size_t count) : device_(device) {
        events_.reserve(count);
        for (std::size_t i = 0; i < count; ++i) events_.push_back(device.create_event());
    }
    ~EventSet() {
        for (void* event : events_) device_.destroy_event(event);
    }
    EventSet(const EventSet&) = delete;
    EventSet& operator=(const EventSet&) = delete;
    void* operator[](std::size_t i) const { return events_[i]; }

private:
    device::Device& device_;
    std::vector<void*> events_;
};

TimingStats summarize(std::vector<double> us) {
    TimingStats stats;
    stats.reps = static_cast<int>(us.size());
    if (us.empty()) return stats;
    std::sort(us.begin(), us.end());
    const std::size_t n = us.size();
    stats.median_us = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
    stats.min_us = us.front();
    stats.max_us = us.back();
    return stats;
}

// `sets` pairs of device buffers of `bytes` each for copies, laid end to end in two
// allocations (each pair 256-byte aligned), the sources filled; empty when they do not fit.
struct CopyBuffers {
    DeviceMemory from, to;
    std::size_t bytes = 0, stride = 0;
    void copy(device::Device& device, void* stream, int set = 0) const {
        const std::size_t offset = static_cast<std::size_t>(set) * stride;
        device.copy_device_to_device_async(static_cast<char*>(to.data()) + offset,
                                           static_cast<const char*>(from.data()) + offset, bytes, stream);
    }
};
std::optional<CopyBuffers> copy_buffers(device::Device& device, std::size_t bytes, int sets = 1) {
    CopyBuffers buffers;
    buffers.stride = (bytes + 255) / 256 * 256;
    const std::size_t total = buffers.stride * static_cast<std::size_t>(sets);
    try {
        buffers.from = DeviceMemory(device, total);
        buffers.to = DeviceMemory(device, total);
    } catch (const Error&) {
        return std::nullopt;
    }
    device.fill_bytes(buffers.from.data(), 0x3C, total);
    buffers.bytes = bytes;
    return buffers;
}

// The copy buffers' size for a copy that moves `bytes_moved` (read + written).
std::size_t copied_bytes(std::uint64_t bytes_moved) {
    return std::max<std::size_t>(16, static_cast<std::size_t>(bytes_moved / 2));
}

// An executable graph, destroyed on scope exit.
class GraphExec {
public:
    GraphExec(device::Device& device, void* exec) : device_(device), exec_(exec) {}
    ~GraphExec() { device_.destroy_graph(exec_); }
    GraphExec(const GraphExec&) = delete;
    GraphExec& operator=(const GraphExec&) = delete;
    void* get() const { return exec_; }

private:
    device::Device& device_;
    void* exec_;
};

// Captures `calls` on `stream`; a call that throws ends the capture before the error goes on.
void* capture(device::Device& device, void* stream, const std::function<void()>& calls) {
    device.begin_capture(stream);
    try {
        calls();
    } catch (...) {
        try {
            device.destroy_graph(device.end_capture(stream));
        } catch (...) {
        }
        throw;
    }
    return device.end_capture(stream);
}

}  // namespace

CacheFlusher::CacheFlusher(device::Device& device, std::size_t bytes_copied)
    : device_(device), from_(device, bytes_copied), to_(device, bytes_copied) {
    device.fill_bytes(from_.data(), 0x5A, bytes_copied);
}

void CacheFlusher::flush(void* stream) { device_.copy_device_to_device_async(to_.data(), from_.data(), to_.bytes(), stream); }

TimingStats time_on_stream(device::Device& device, void* stream, CacheFlusher& flusher, int warmup, int reps,
                           const std::function<void()>& call) {
    for (int i = 0; i < warmup; ++i) call();
    EventSet events(device, 2 * static_cast<std::size_t>(reps));
    for (int i = 0; i < reps; ++i) {
        flusher.flush(stream);
        device.record_event(events[2 * i], stream);
        call();
        device.record_event(events[2 * i + 1], stream);
    }
    device.synchronize_stream(stream);
    std::vector<double> us;
    for (int i = 0; i < reps; ++i) us.push_back(1000.0 * device.elapsed_ms(events[2 * i], events[2 * i + 1]));
    return summarize(us);
}

TimingStats time_graph_replay(device::Device& device, void* stream, int sets, int replays,
                              const std::function<void(int)>& call) {
    const int rounds = (std::max(sets, 64) + sets - 1) / sets;
    const int calls = rounds * sets;
    const GraphExec graph(device, capture(device, stream, [&] {
                              for (int i = 0; i < calls; ++i) call(i % sets);
                          }));
    device.launch_graph(graph.get(), stream);   // warm-up: the graph's upload, first touches
    EventSet events(device, 2 * static_cast<std::size_t>(replays));
    for (int i = 0; i < replays; ++i) {
        device.record_event(events[2 * i], stream);
        device.launch_graph(graph.get(), stream);
        device.record_event(events[2 * i + 1], stream);
    }
    device.synchronize_stream(stream);
    std::vector<double> us;
    for (int i = 0; i < replays; ++i) us.push_back(1000.0 * device.elapsed_ms(events[2 * i], events[2 * i + 1]) / calls);
    return summarize(us);
}

int replay_sets(std::uint64_t bytes) {
    const std::uint64_t needed = (kBeyondLastLevelCache + std::max<std::uint64_t>(bytes, 1) - 1) /
                                 std::max<std::uint64_t>(bytes, 1);
    return static_cast<int>(std::clamp<std::uint64_t>(needed, 1, kMaxReplaySets));
}

CopyBandwidth measure_copy_bandwidth(device::Device& device, void* stream) {
    // Try 2 GiB each way; halve until two buffers fit (a shared or small GPU).
    for (std::size_t bytes = std::size_t{2} << 30; bytes >= (std::size_t{64} << 20); bytes /= 2) {
        const auto buffers = copy_buffers(device, bytes);
        if (!buffers) continue;
        const auto copy = [&] { buffers->copy(device, stream); };
        // No flush: a copy this size streams through any cache.
        EventSet events(device, 2 * 10);
        for (int i = 0; i < 2; ++i) copy();
        for (int i = 0; i < 10; ++i) {
            device.record_event(events[2 * i], stream);
            copy();
            device.record_event(events[2 * i + 1], stream);
        }
        device.synchronize_stream(stream);
        std::vector<double> us;
        for (int i = 0; i < 10; ++i) us.push_back(1000.0 * device.elapsed_ms(events[2 * i], events[2 * i + 1]));
        const TimingStats stats = summarize(us);
        return {2.0 * static_cast<double>(bytes) / (stats.median_us * 1e3), bytes};
    }
    throw Error(ErrorCode::device_error, "copy bandwidth: could not allocate two buffers of 64 MiB");
}

std::optional<TimingStats> time_same_size_copy(device::Device& device, void* stream, CacheFlusher& flusher, int warmup,
                                               int reps, std::uint64_t bytes_moved) {
    const auto buffers = copy_buffers(device, copied_bytes(bytes_moved));
    if (!buffers) return std::nullopt;
    return time_on_stream(device, stream, flusher, warmup, reps, [&] { buffers->copy(device, stream); });
}

std::optional<TimingStats> time_same_size_copy_replay(device::Device& device, void* stream, int replays,
                                                      std::uint64_t bytes_moved) {
    const std::size_t bytes = copied_bytes(bytes_moved);
    const int sets = replay_sets(bytes_moved);
    const auto buffers = copy_buffers(device, bytes, sets);
    if (!buffers) return std::nullopt;
    return time_graph_replay(device, stream, sets, replays, [&](int set) { buffers->copy(device, stream, set); });
}

double host_us_per_call(device::Device& device, void* stream, int calls, const std::function<void()>& call) {
    call();
    device.synchronize_stream(stream);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    const auto stop = std::chrono::steady_clock::now();
    device.synchronize_stream(stream);
    return std::chrono::duration<double, std::micro>(stop - start).count() / calls;
}

}  // namespace cc1d::bench
