#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "workload.hpp"

namespace cc1d::bench {

std::unique_ptr<Workload> make_workload(device::Device& device, const config::BenchCase& c, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    switch (c.variant.op) {
        case Op::fwd: return make_forward_workload(device, c, rng);
        case Op::bwd: return make_backward_workload(device, c, rng);
        case Op::update: return make_update_workload(device, c, rng);
        case Op::varlen_fwd: return make_varlen_workload(device, c, rng);
    }
    return nullptr;
}

BenchTensor sequence_tensor(device::Device& device, DType dtype, std::int64_t batch, std::int64_t dim,
                            std::int64_t seqlen, Layout layout) {
    if (layout == Layout::channel_last) return BenchTensor(device, dtype, {batch, dim, seqlen}, {seqlen * dim, 1, dim});
    return BenchTensor(device, dtype, {batch, dim, seqlen});
}

std::vector<ChannelRange> channels_to_check(std::int64_t dim, std::int64_t elements_per_channel) {
    constexpr std::int64_t budget = std::int64_t{1} << 21;
    const std::int64_t per_channel = std::max<std::int64_t>(elements_per_channel, 1);
    if (dim * per_channel <= 2 * budget) return {{0, dim}};
    const std::int64_t count = std::clamp<std::int64_t>(budget / (3 * per_channel), 1, 64);
    if (3 * count >= dim) return {{0, dim}};
    // The odd middle offset makes sure vectorized channel-last paths meet unaligned channels.
    const std::int64_t middle = std::min(dim / 2 + 3, dim - 2 * count);
    return {{0, count}, {middle, count}, {dim - count, count}};
}

void CheckRecorder::add(const std::string& what, const ChannelRange& range, const std::vector<double>& got,
                        const std::vector<double>& want, reference::Tolerance tolerance) {
    const reference::Comparison comparison = reference::compare(got, want, tolerance);
    outcome_.max_abs_error = std::max(outcome_.max_abs_error, comparison.max_abs_error);
    if (got.size() != want.size()) {
        if (outcome_.ok)
            outcome_.detail = fmt::format("{}: {} values, the reference has {}", what, got.size(), want.size());
        outcome_.ok = false;
        return;
    }
    if (!comparison.ok && outcome_.ok) {
        outcome_.ok = false;
        outcome_.detail = fmt::format("channels {}..{}: {}", range.first, range.first + range.count - 1,
                                      comparison.describe(what));
    }
}

CheckOutcome CheckRecorder::finish() {
    if (outcome_.ok)
        outcome_.detail = outcome_.channels_checked == outcome_.channels_total
                              ? "all channels"
                              : fmt::format("{} of {} channels", outcome_.channels_checked, outcome_.channels_total);
    return outcome_;
}

std::vector<std::int32_t> random_seq_idx(std::int64_t batch, std::int64_t seqlen, std::mt19937_64& rng) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * seqlen));
    std::uniform_int_distribution<std::int64_t> length(1, std::max<std::int64_t>(1, seqlen / 3));
    for (std::int64_t b = 0; b < batch; ++b) {
        const std::int64_t padded_from = b % 2 == 1 ? seqlen - seqlen / 8 : seqlen;
        std::int32_t id = 0;
        std::int64_t left = length(rng);
        for (std::int64_t t = 0; t < seqlen; ++t) {
            if (left == 0) {
                ++id;
                left = length(rng);
            }
            --left;
            ids[static_cast<std::size_t>(b * seqlen + t)] = t >= padded_from ? -1 : id;
        }
    }
    return ids;
}

}  // namespace cc1d::bench
