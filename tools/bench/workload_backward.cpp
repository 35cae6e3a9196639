// Backward: x, weight, bias, dout, seq_idx, initial_states and dfinal_states in; dx,
// dweight and dbias (fp32), dinitial_states out.
#include "reference/reference.hpp"
#include "workload.hpp"

namespace cc1d::bench {
namespace {

class BackwardWorkload final : public Workload {
public:
    BackwardWorkload(device::Device& device, const config::BenchCase& c, std::mt19937_64& rng) : case_(c) {
        const Variant& v = c.variant;
        const std::int64_t B = c.batch, D = c.dim, L = c.seqlen, K = v.width - 1;
        x_ = sequence_tensor(device, v.x_dtype, B, D, L, v.layout);
        dout_ = sequence_tensor(device, v.x_dtype, B, D, L, v.layout);
        dx_ = sequence_tensor(device, v.x_dtype, B, D, L, v.layout);
        weight_ = BenchTensor(device, v.weight_dtype, {D, v.width});
        dweight_ = BenchTensor(device, DType::fp32, {D, v.width});
        x_.fill_random(rng);
        dout_.fill_random(rng);
        weight_.fill_random(rng, -0.5, 0.5);
        dx_.poison();
        dweight_.poison();
        if (v.bias) {
            bias_ = BenchTensor(device, v.weight_dtype, {D});
            dbias_ = BenchTensor(device, DType::fp32, {D});
            bias_.fill_random(rng, -0.5, 0.5);
            dbias_.poison();
        }
        if (v.seq_idx) {
            seq_idx_ = BenchTensor(device, DType::int32, {B, L});
            seq_idx_.fill_int(random_seq_idx(B, L, rng));
        }
        if (v.initial_states) {
            initial_ = BenchTensor(device, v.x_dtype, {B, D, K});
            dinitial_ = BenchTensor(device, v.x_dtype, {B, D, K});
            initial_.fill_random(rng);
            dinitial_.poison();
        }
        if (v.final_states) {
            dfinal_ = BenchTensor(device, v.x_dtype, {B, D, K});
            dfinal_.fill_random(rng);
        }
        args_ = args([](const BenchTensor& t, int) { return t.device_view(); });
    }

    void run(Runtime& runtime, void* stream) override { runtime.backward(args_, stream); }

    CheckOutcome check() override {
        for (BenchTensor* output : {&dx_, &dweight_, &dbias_, &dinitial_})
            if (output->present()) output->download();
        CheckRecorder recorder(case_.dim);
        const reference::Tolerance tolerance = reference::tolerance_for(case_.variant.x_dtype);
        const reference::Tolerance reduction = reference::reduction_tolerance(case_.batch * case_.seqlen);
        for (const ChannelRange& range : channels_to_check(case_.dim, case_.batch * case_.seqlen)) {
            const reference::BackwardResult want = reference::backward(args(host_channels(range)));
            recorder.add("dx", range, result_values(dx_, 1, range), want.dx, tolerance);
            recorder.add("dweight", range, result_values(dweight_, 0, range), want.dweight, reduction);
            if (dbias_.present()) recorder.add("dbias", range, result_values(dbias_, 0, range), want.dbias, reduction);
            if (dinitial_.present())
                recorder.add("dinitial_states", range, result_values(dinitial_, 1, range), want.dinitial_states, tolerance);
            recorder.count_channels(range);
        }
        return recorder.finish();
    }

private:
    // `view(tensor, channel_axis)`: the device view, or a host view of sampled channels.
    template <typename View>
    BackwardArgs args(View view) const {
        BackwardArgs a;
        a.x = view(x_, 1);
        a.weight = view(weight_, 0);
        a.bias = view(bias_, 0);
        a.dout = view(dout_, 1);
        a.dx = view(dx_, 1);
        a.dweight = view(dweight_, 0);
        a.dbias = view(dbias_, 0);
        a.activation = case_.variant.activation;
        a.seq_idx = view(seq_idx_, no_channel_axis);
        a.initial_states = view(initial_, 1);
        a.dinitial_states = view(dinitial_, 1);
        a.dfinal_states = view(dfinal_, 1);
        a.deterministic = case_.variant.deterministic;
        return a;
    }

    config::BenchCase case_;
    BenchTensor x_, weight_, bias_, dout_, dx_, dweight_, dbias_, seq_idx_, initial_, dinitial_, dfinal_;
    BackwardArgs args_;
};

}  // namespace

std::unique_ptr<Workload> make_backward_workload(device::Device& device, const config::BenchCase& c,
                                                 std::mt19937_64& rng) {
    return std::make_unique<BackwardWorkload>(device, c, rng);
}

}  // namespace cc1d::bench
