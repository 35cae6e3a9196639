// Packed variable-length prefill: x (D, total) in either layout, cu_seqlens from the
// case's lengths; with states, one conv-state slot per sequence in a shuffled order and a
// random has_initial_state. out and the rewritten slots are checked.
#include <algorithm>
#include <numeric>

#include "reference/reference.hpp"
#include "workload.hpp"

namespace cc1d::bench {
namespace {

// (D, total) with the tokens contiguous (channel-first) or the channels (channel-last).
BenchTensor token_matrix(device::Device& device, DType dtype, std::int64_t dim, std::int64_t total, Layout layout) {
    if (layout == Layout::channel_last) return BenchTensor(device, dtype, {dim, total}, {1, dim});
    return BenchTensor(device, dtype, {dim, total});
}

class VarlenWorkload final : public Workload {
public:
    VarlenWorkload(device::Device& device, const config::BenchCase& c, std::mt19937_64& rng) : case_(c) {
        const Variant& v = c.variant;
        const std::int64_t D = c.dim, total = c.total_tokens(), N = static_cast<std::int64_t>(c.seqlens.size());
        x_ = token_matrix(device, v.x_dtype, D, total, v.layout);
        out_ = token_matrix(device, v.x_dtype, D, total, v.layout);
        weight_ = BenchTensor(device, v.weight_dtype, {D, v.width});
        x_.fill_random(rng);
        weight_.fill_random(rng, -0.5, 0.5);
        out_.poison();
        if (v.bias) {
            bias_ = BenchTensor(device, v.weight_dtype, {D});
            bias_.fill_random(rng, -0.5, 0.5);
        }
        std::vector<std::int32_t> offsets{0};
        for (std::int64_t length : c.seqlens) offsets.push_back(offsets.back() + static_cast<std::int32_t>(length));
        cu_seqlens_ = BenchTensor(device, DType::int32, {N + 1});
        cu_seqlens_.fill_int(offsets);
        if (v.initial_states) {
            states_ = BenchTensor(device, v.x_dtype, {N, D, v.width - 1});
            states_.fill_random(rng);
            std::vector<std::int32_t> slots(static_cast<std::size_t>(N));
            std::iota(slots.begin(), slots.end(), 0);
            std::shuffle(slots.begin(), slots.end(), rng);
            cache_indices_ = BenchTensor(device, DType::int32, {N});
            cache_indices_.fill_int(slots);
            std::vector<std::int32_t> has_history(static_cast<std::size_t>(N));
            for (std::size_t i = 0; i < has_history.size(); ++i) has_history[i] = static_cast<std::int32_t>((rng() >> 7) & 1u);
            has_initial_state_ = BenchTensor(device, DType::int32, {N});
            has_initial_state_.fill_int(has_history);
        }
        args_ = args([](const BenchTensor& t, int) { return t.device_view(); });
    }

    void run(Runtime& runtime, void* stream) override { runtime.varlen_forward(args_, stream); }

    CheckOutcome check() override {
        out_.download();
        if (states_.present()) states_.download();
        CheckRecorder recorder(case_.dim);
        const reference::Tolerance tolerance = reference::tolerance_for(case_.variant.x_dtype);
        const std::int64_t per_channel =
            case_.total_tokens() + static_cast<std::int64_t>(case_.seqlens.size()) * (case_.variant.width - 1);
        for (const ChannelRange& range : channels_to_check(case_.dim, per_channel)) {
            const reference::VarlenResult want = reference::varlen_forward(args(host_channels(range)));
            recorder.add("out", range, result_values(out_, 0, range), want.out, tolerance);
            if (states_.present())
                recorder.add("conv_states", range, result_values(states_, 1, range), want.conv_states, reference::exact());
            recorder.count_channels(range);
        }
        return recorder.finish();
    }

private:
    template <typename View>
    VarlenForwardArgs args(View view) const {
        VarlenForwardArgs a;
        a.x = view(x_, 0);
        a.weight = view(weight_, 0);
        a.bias = view(bias_, 0);
        a.out = view(out_, 0);
        a.activation = case_.variant.activation;
        a.cu_seqlens = view(cu_seqlens_, no_channel_axis);
        a.conv_states = view(states_, 1);
        a.cache_indices = view(cache_indices_, no_channel_axis);
        a.has_initial_state = view(has_initial_state_, no_channel_axis);
        return a;
    }

    config::BenchCase case_;
    BenchTensor x_, weight_, bias_, out_, cu_seqlens_, states_, cache_indices_, has_initial_state_;
    VarlenForwardArgs args_;
};

}  // namespace

std::unique_ptr<Workload> make_varlen_workload(device::Device& device, const config::BenchCase& c,
                                               std::mt19937_64& rng) {
    return std::make_unique<VarlenWorkload>(device, c, rng);
}

}  // namespace cc1d::bench
