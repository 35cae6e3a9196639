// One decoding step: x (B, D, T), conv_state (B_cache, D, S), optional cache_seqlens
// (circular buffer positions) and conv_state_indices (each row's slot). out and the
// rewritten conv_state are checked; the state must come back exactly.
#include <algorithm>
#include <numeric>

#include "reference/reference.hpp"
#include "workload.hpp"

namespace cc1d::bench {
namespace {

class UpdateWorkload final : public Workload {
public:
    UpdateWorkload(device::Device& device, const config::BenchCase& c, std::mt19937_64& rng) : case_(c) {
        const Variant& v = c.variant;
        const std::int64_t B = c.batch, D = c.dim, T = c.tokens;
        x_ = BenchTensor(device, v.x_dtype, {B, D, T});
        out_ = BenchTensor(device, v.x_dtype, {B, D, T});
        state_ = BenchTensor(device, v.x_dtype, {c.cache_batch, D, c.state_len});
        weight_ = BenchTensor(device, v.weight_dtype, {D, v.width});
        x_.fill_random(rng);
        state_.fill_random(rng);
        weight_.fill_random(rng, -0.5, 0.5);
        out_.poison();
        if (v.bias) {
            bias_ = BenchTensor(device, v.weight_dtype, {D});
            bias_.fill_random(rng, -0.5, 0.5);
        }
        if (v.cache_seqlens) {
            std::uniform_int_distribution<std::int32_t> position(0, 4096);
            std::vector<std::int32_t> positions(static_cast<std::size_t>(B));
            for (auto& p : positions) p = position(rng);
            cache_seqlens_ = BenchTensor(device, DType::int32, {B});
            cache_seqlens_.fill_int(positions);
        }
        if (v.state_indices) {
            // Distinct slots in a shuffled order, as a serving engine's cache hands them out.
            std::vector<std::int32_t> slots(static_cast<std::size_t>(c.cache_batch));
            std::iota(slots.begin(), slots.end(), 0);
            std::shuffle(slots.begin(), slots.end(), rng);
            slots.resize(static_cast<std::size_t>(B));
            indices_ = BenchTensor(device, DType::int32, {B});
            indices_.fill_int(slots);
        }
        args_ = args([](const BenchTensor& t, int) { return t.device_view(); });
    }

    void run(Runtime& runtime, void* stream) override { runtime.update(args_, stream); }

    CheckOutcome check() override {
        out_.download();
        state_.download();
        CheckRecorder recorder(case_.dim);
        const reference::Tolerance tolerance = reference::tolerance_for(case_.variant.x_dtype);
        const std::int64_t per_channel = case_.batch * case_.tokens + case_.cache_batch * case_.state_len;
        for (const ChannelRange& range : channels_to_check(case_.dim, per_channel)) {
            const reference::UpdateResult want = reference::update(args(host_channels(range)));
            recorder.add("out", range, result_values(out_, 1, range), want.out, tolerance);
            recorder.add("conv_state", range, result_values(state_, 1, range), want.conv_state, reference::exact());
            recorder.count_channels(range);
        }
        return recorder.finish();
    }

private:
    template <typename View>
    UpdateArgs args(View view) const {
        UpdateArgs a;
        a.x = view(x_, 1);
        a.conv_state = view(state_, 1);
        a.weight = view(weight_, 0);
        a.bias = view(bias_, 0);
        a.out = view(out_, 1);
        a.activation = case_.variant.activation;
        a.cache_seqlens = view(cache_seqlens_, no_channel_axis);
        a.conv_state_indices = view(indices_, no_channel_axis);
        return a;
    }

    config::BenchCase case_;
    BenchTensor x_, state_, weight_, bias_, out_, cache_seqlens_, indices_;
    UpdateArgs args_;
};

}  // namespace

std::unique_ptr<Workload> make_update_workload(device::Device& device, const config::BenchCase& c,
                                               std::mt19937_64& rng) {
    return std::make_unique<UpdateWorkload>(device, c, rng);
}

}  // namespace cc1d::bench
