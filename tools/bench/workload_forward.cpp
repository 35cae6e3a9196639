// Forward: x, weight, bias, seq_idx and initial_states in; out and final_states out.
#include "reference/reference.hpp"
#include "workload.hpp"

namespace cc1d::bench {
namespace {

class ForwardWorkload final : public Workload {
public:
    ForwardWorkload(device::Device& device, const config::BenchCase& c, std::mt19937_64& rng) : case_(c) {
        const Variant& v = c.variant;
        const std::int64_t B = c.batch, D = c.dim, L = c.seqlen, K = v.width - 1;
        x_ = sequence_tensor(device, v.x_dtype, B, D, L, v.layout);
        out_ = sequence_tensor(device, v.x_dtype, B, D, L, v.layout);
        weight_ = BenchTensor(device, v.weight_dtype, {D, v.width});
        x_.fill_random(rng);
        weight_.fill_random(rng, -0.5, 0.5);
        out_.poison();
        if (v.bias) {
            bias_ = BenchTensor(device, v.weight_dtype, {D});
            bias_.fill_random(rng, -0.5, 0.5);
        }
        if (v.seq_idx) {
            seq_idx_ = BenchTensor(device, DType::int32, {B, L});
            seq_idx_.fill_int(random_seq_idx(B, L, rng));
        }
        if (v.initial_states) {
            initial_ = BenchTensor(device, v.x_dtype, {B, D, K});
            initial_.fill_random(rng);
        }
        if (v.final_states) {
            final_ = BenchTensor(device, v.x_dtype, {B, D, K});
            final_.poison();
        }
        args_ = args([](const BenchTensor& t, int) { return t.device_view(); });
    }

    void run(Runtime& runtime, void* stream) override { runtime.forward(args_, stream); }

    CheckOutcome check() override {
        out_.download();
        if (final_.present()) final_.download();
        CheckRecorder recorder(case_.dim);
        const reference::Tolerance tolerance = reference::tolerance_for(case_.variant.x_dtype);
        for (const ChannelRange& range : channels_to_check(case_.dim, case_.batch * case_.seqlen)) {
            const reference::ForwardResult want = reference::forward(args(host_channels(range)));
            recorder.add("out", range, result_values(out_, 1, range), want.out, tolerance);
            if (final_.present())
                recorder.add("final_states", range, result_values(final_, 1, range), want.final_states, reference::exact());
            recorder.count_channels(range);
        }
        return recorder.finish();
    }

private:
    // `view(tensor, channel_axis)`: the device view, or a host view of sampled channels.
    template <typename View>
    ForwardArgs args(View view) const {
        ForwardArgs a;
        a.x = view(x_, 1);
        a.weight = view(weight_, 0);
        a.bias = view(bias_, 0);
        a.out = view(out_, 1);
        a.activation = case_.variant.activation;
        a.seq_idx = view(seq_idx_, no_channel_axis);
        a.initial_states = view(initial_, 1);
        a.final_states = view(final_, 1);
        return a;
    }

    config::BenchCase case_;
    BenchTensor x_, weight_, bias_, out_, seq_idx_, initial_, final_;
    ForwardArgs args_;
};

}  // namespace

std::unique_ptr<Workload> make_forward_workload(device::Device& device, const config::BenchCase& c, std::mt19937_64& rng) {
    return std::make_unique<ForwardWorkload>(device, c, rng);
}

}  // namespace cc1d::bench
