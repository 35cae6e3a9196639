#include "empty_kernel.hpp"

#include "rtc/compiler.hpp"

namespace cc1d::bench {
namespace {

// One by-value parameter block, like every cc1d kernel, so the launch path is the same.
constexpr const char* empty_source = R"(
struct cc1d_empty_params { int unused; };
extern "C" __global__ void cc1d_empty_kernel(cc1d_empty_params) {}
)";

}  // namespace

std::optional<EmptyKernelTimes> time_empty_kernel(device::Device& device, void* stream, CacheFlusher& flusher,
                                                  int warmup, int reps, int host_calls, std::optional<int> replays,
                                                  std::string& why_not) {
    void* module = nullptr;
    try {
        const std::string target = device.target(device.current_device());
        const auto compiler = rtc::open_compiler_for_target(target);
        const rtc::CompileResult built = compiler->compile({empty_source, "cc1d_empty_kernel.cu", target});
        if (!built.ok) {
            why_not = "the empty kernel did not compile: " + built.log.substr(0, built.log.find('\n'));
            return std::nullopt;
        }
        module = device.load_module(built.code_object);
        void* function = device.get_function(module, "cc1d_empty_kernel");
        const int params = 0;
        const auto launch = [&] { device.launch(function, {1, 1, 1}, {32, 1, 1}, 0, stream, &params, sizeof(params)); };
        EmptyKernelTimes times;
        times.timing = time_on_stream(device, stream, flusher, warmup, reps, launch);
        times.host_us_per_launch = host_us_per_call(device, stream, host_calls, launch);
        if (replays) times.replay = time_graph_replay(device, stream, 1, *replays, [&](int) { launch(); });
        device.unload_module(module);
        return times;
    } catch (const std::exception& error) {
        if (module) device.unload_module(module);
        why_not = error.what();
        return std::nullopt;
    }
}

}  // namespace cc1d::bench
