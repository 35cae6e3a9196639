// What one bench case runs: its tensors on the device (random inputs, poisoned
// outputs), one call of the op under test, and the check of that call's outputs
// against the fp64 CPU reference. Large problems are checked on a sample of channels
// (every batch row and every position of those channels), which the reference computes
// exactly: nothing in causal conv1d mixes channels.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_tensor.hpp"
#include "cc1d/cc1d.hpp"
#include "config/bench_case.hpp"
#include "device/device.hpp"
#include "reference/compare.hpp"

namespace cc1d::bench {

struct CheckOutcome {
    bool ok = true;
    std::string detail;                 // first mismatch, or what was checked
    std::int64_t channels_checked = 0;
    std::int64_t channels_total = 0;
    double max_abs_error = 0;
};

class Workload {
public:
    virtual ~Workload() = default;
    // One call of the op under test, on `stream`.
    virtual void run(Runtime& runtime, void* stream) = 0;
    // Compares the outputs of the first run() with the reference. Call it right after
    // that run: update and varlen read and rewrite their states, so later runs differ.
    virtual CheckOutcome check() = 0;
};

std::unique_ptr<Workload> make_workload(device::Device& device, const config::BenchCase& c, std::uint64_t seed);

// --- shared by the workloads ---------------------------------------------------------

struct ChannelRange {
    std::int64_t first = 0, count = 0;
};
// All channels when the problem is small; else a few ranges (the start, an odd offset
// in the middle, the end) of about 2^21 checked elements in all.
std::vector<ChannelRange> channels_to_check(std::int64_t dim, std::int64_t elements_per_channel);

// Collects the comparisons of one check into an outcome.
class CheckRecorder {
public:
    explicit CheckRecorder(std::int64_t channels_total) { outcome_.channels_total = channels_total; }
    void add(const std::string& what, const ChannelRange& range, const std::vector<double>& got,
             const std::vector<double>& want, reference::Tolerance tolerance);
    void count_channels(const ChannelRange& range) { outcome_.channels_checked += range.count; }
    CheckOutcome finish();

private:
    CheckOutcome outcome_;
};

// Per-row segment ids for seq_idx (B, L): sequences of random lengths numbered from 0,
// odd rows ending in padding (-1), as packed training batches look.
std::vector<std::int32_t> random_seq_idx(std::int64_t batch, std::int64_t seqlen, std::mt19937_64& rng);

// Host input views narrowed to a channel range: `view(tensor, channel_axis)` for the
// workloads' args builders; tensors without a channel axis pass no_channel_axis.
constexpr int no_channel_axis = -1;
inline auto host_channels(const ChannelRange& range) {
    return [range](const BenchTensor& t, int channel_axis) {
        if (channel_axis == no_channel_axis) return t.input_view();
        return BenchTensor::narrowed(t.input_view(), channel_axis, range.first, range.count);
    };
}

// What the device wrote, narrowed to a channel range, in logical order.
inline std::vector<double> result_values(const BenchTensor& t, int channel_axis, const ChannelRange& range) {
    return logical_values(BenchTensor::narrowed(t.result_view(), channel_axis, range.first, range.count));
}

// (B, D, L) in the case's layout: channel-first (L contiguous) or channel-last (D contiguous).
BenchTensor sequence_tensor(device::Device& device, DType dtype, std::int64_t batch, std::int64_t dim,
                            std::int64_t seqlen, Layout layout);

std::unique_ptr<Workload> make_forward_workload(device::Device&, const config::BenchCase&, std::mt19937_64&);
std::unique_ptr<Workload> make_backward_workload(device::Device&, const config::BenchCase&, std::mt19937_64&);
std::unique_ptr<Workload> make_update_workload(device::Device&, const config::BenchCase&, std::mt19937_64&);
std::unique_ptr<Workload> make_varlen_workload(device::Device&, const config::BenchCase&, std::mt19937_64&);

}  // namespace cc1d::bench
