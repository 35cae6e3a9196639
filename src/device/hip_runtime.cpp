// The HIP runtime's module API, opened with dlopen. Not yet run on AMD hardware: this
// file is compiled in every build, and its kernels are compile-checked with HIPRTC.
#include <fmt/format.h>

#include <mutex>
#include <vector>

#include "common/dynamic_library.hpp"
#include "common/fail.hpp"
#include "device/device.hpp"

#if CC1D_HAVE_HIP
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#endif

namespace cc1d::device {

#if CC1D_HAVE_HIP
namespace {

#define CC1D_HIP_STRINGIZE(x) #x
#define CC1D_HIP_SYMBOL_NAME(x) CC1D_HIP_STRINGIZE(x)
#define CC1D_HIP_FUNCTIONS(X)                                                                           \
    X(hipInit) X(hipGetErrorName) X(hipGetErrorString) X(hipGetDeviceCount) X(hipGetDevice)              \
    X(hipGetDeviceProperties) X(hipModuleLoadData) X(hipModuleUnload) X(hipModuleGetFunction)           \
    X(hipModuleLaunchKernel) X(hipFree) X(hipMemcpy) X(hipMemcpyAsync) X(hipMemset)         \
    X(hipDeviceSynchronize) X(hipEventCreate) X(hipEventDestroy) X(hipEventRecord) X(hipEventSynchronize) \
    X(hipEventElapsedTime) X(hipStreamCreateWithFlags) X(hipStreamDestroy) X(hipStreamSynchronize)      \
    X(hipStreamBeginCapture) X(hipStreamEndCapture) X(hipGraphInstantiate) X(hipGraphLaunch)            \
    X(hipGraphExecDestroy) X(hipGraphDestroy)

struct HipApi {
    DynamicLibrary library;
#define CC1D_DECLARE(name) decltype(&name) name##_ = nullptr;
    CC1D_HIP_FUNCTIONS(CC1D_DECLARE)
#undef CC1D_DECLARE
    // hipMalloc is overloaded in C++ (a typed template too): name the C signature.
    hipError_t (*hipMalloc_)(void**, size_t) = nullptr;
    decltype(&hipModuleOccupancyMaxActiveBlocksPerMultiprocessor) hipModuleOccupancyMaxActiveBlocksPerMultiprocessor_ =
        nullptr;   // optional
};

const HipApi& runtime() {
    static HipApi api;
    static std::string failure;
    static std::once_flag once;
    std::call_once(once, [] {
        std::string why;
        api.library = DynamicLibrary::open_first({"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}, &why);
        if (!api.library.loaded()) {
            failure = "HIP runtime not found (" + why + ")";
            return;
        }
#define CC1D_RESOLVE(name)                                                                 \
    if (failure.empty() && !api.library.resolve(api.name##_, CC1D_HIP_SYMBOL_NAME(name)))  \
        failure = std::string("HIP runtime lacks ") + CC1D_HIP_SYMBOL_NAME(name);
        CC1D_HIP_FUNCTIONS(CC1D_RESOLVE)
        CC1D_RESOLVE(hipMalloc)
#undef CC1D_RESOLVE
        if (!failure.empty()) return;
        api.library.resolve(api.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor_,
                            CC1D_HIP_SYMBOL_NAME(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor));
        if (hipError_t r = api.hipInit_(0); r != hipSuccess)
            failure = fmt::format("hipInit failed: {} ({})", api.hipGetErrorName_(r), int(r));
    });
    if (!failure.empty()) fail(ErrorCode::backend_unavailable, "{}", failure);
    return api;
}

class HipDevice final : public Device {
public:
    HipDevice() : hip_(runtime()) {
        int count = 0;
        if (hip_.hipGetDeviceCount_(&count) != hipSuccess || count == 0)
            fail(ErrorCode::backend_unavailable, "the HIP runtime reports no device");
    }

    std::string backend() const override { return "hip"; }
    int current_device() override {
        int device = 0;
        check(hip_.hipGetDevice_(&device), "hipGetDevice");
        return device;
    }
    int device_count() override {
        int count = 0;
        check(hip_.hipGetDeviceCount_(&count), "hipGetDeviceCount");
        return count;
    }
    // The full target id with its feature flags (gfx942:sramecc+:xnack-): code objects
    // must match them exactly.
    std::string target(int device) override { return properties(device).gcnArchName; }
    std::string name(int device) override { return properties(device).name; }
    int multiprocessor_count(int device) override { return properties(device).multiProcessorCount; }
    double memory_bandwidth_gbps(int device) override {
        const hipDeviceProp_t& p = properties(device);   // kHz x bits, two transfers a clock
        return 2.0 * p.memoryClockRate * p.memoryBusWidth / 8.0 / 1e6;
    }

    // HIP offers no portable stream -> device query across ROCm versions; streams are
    // taken to belong to the current device (documented in the README).
    void check_stream(void*, int) override {}

    void* load_module(const std::string& code_object) override {
        hipModule_t module = nullptr;
        check(hip_.hipModuleLoadData_(&module, code_object.data()), "hipModuleLoadData");
        return module;
    }
    void unload_module(void* module) noexcept override {
        if (module) (void)hip_.hipModuleUnload_(static_cast<hipModule_t>(module));
    }
    void* get_function(void* module, const std::string& name) override {
        hipFunction_t function = nullptr;
        check(hip_.hipModuleGetFunction_(&function, static_cast<hipModule_t>(module), name.c_str()),
              "hipModuleGetFunction(" + name + ")");
        return function;
    }
    void launch(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream, const void* params,
                std::size_t params_size) override {
        // The `extra` form passes the parameter block as the kernel's argument buffer, which
        // every ROCm version supports (kernelParams came later).
        std::size_t size = params_size;
        void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(params), HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                          HIP_LAUNCH_PARAM_END};
        check(hip_.hipModuleLaunchKernel_(static_cast<hipFunction_t>(function), grid.x, grid.y, grid.z, block.x, block.y,
                                          block.z, shared_bytes, static_cast<hipStream_t>(stream), nullptr, config),
              "hipModuleLaunchKernel");
    }

    int resident_blocks(void* function, int block_threads, unsigned shared_bytes) override {
        if (hip_.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor_ == nullptr) return 0;
        // (As on CUDA: a failed query is "cannot say".)
        int blocks = 0;
        if (hip_.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor_(&blocks, static_cast<hipFunction_t>(function),
                                                                     block_threads, shared_bytes) != hipSuccess)
            return 0;
        return blocks;
    }

    bool overlapped_launches(int /*device*/) override { return false; }
    void launch_overlapped(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream,
                           const void* params, std::size_t params_size) override {
        launch(function, grid, block, shared_bytes, stream, params, params_size);
    }
    bool cluster_launches(int /*device*/) override { return false; }
    void launch_in_clusters(void*, Dim3, Dim3, unsigned, void*, const void*, std::size_t, unsigned, bool) override {
        fail(ErrorCode::unsupported, "thread-block clusters are a CUDA feature");
    }

    void* allocate(std::size_t bytes) override {
        void* pointer = nullptr;
        check(hip_.hipMalloc_(&pointer, bytes == 0 ? 1 : bytes), fmt::format("hipMalloc({} bytes)", bytes));
        return pointer;
    }
    void release(void* pointer) noexcept override {
        if (pointer) (void)hip_.hipFree_(pointer);
    }
    void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
        check(hip_.hipMemcpy_(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy(host to device)");
    }
    void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
        check(hip_.hipMemcpy_(dst, src, bytes, hipMemcpyDeviceToHost), "hipMemcpy(device to host)");
    }
    void copy_device_to_device_async(void* dst, const void* src, std::size_t bytes, void* stream) override {
        check(hip_.hipMemcpyAsync_(dst, src, bytes, hipMemcpyDeviceToDevice, static_cast<hipStream_t>(stream)),
              "hipMemcpyAsync");
    }
    void fill_bytes(void* dst, unsigned char value, std::size_t bytes) override {
        check(hip_.hipMemset_(dst, value, bytes), "hipMemset");
        synchronize();
    }
    void synchronize() override { check(hip_.hipDeviceSynchronize_(), "hipDeviceSynchronize"); }

    void* create_event() override {
        hipEvent_t event = nullptr;
        check(hip_.hipEventCreate_(&event), "hipEventCreate");
        return event;
    }
    void destroy_event(void* event) noexcept override {
        if (event) (void)hip_.hipEventDestroy_(static_cast<hipEvent_t>(event));
    }
    void record_event(void* event, void* stream) override {
        check(hip_.hipEventRecord_(static_cast<hipEvent_t>(event), static_cast<hipStream_t>(stream)), "hipEventRecord");
    }
    float elapsed_ms(void* start, void* stop) override {
        check(hip_.hipEventSynchronize_(static_cast<hipEvent_t>(stop)), "hipEventSynchronize");
        float ms = 0;
        check(hip_.hipEventElapsedTime_(&ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(stop)),
              "hipEventElapsedTime");
        return ms;
    }
    void* create_stream() override {
        hipStream_t stream = nullptr;
        check(hip_.hipStreamCreateWithFlags_(&stream, hipStreamNonBlocking), "hipStreamCreateWithFlags");
        return stream;
    }
    void destroy_stream(void* stream) noexcept override {
        if (stream) (void)hip_.hipStreamDestroy_(static_cast<hipStream_t>(stream));
    }
    void synchronize_stream(void* stream) override {
        check(hip_.hipStreamSynchronize_(static_cast<hipStream_t>(stream)), "hipStreamSynchronize");
    }
    void begin_capture(void* stream) override {
        check(hip_.hipStreamBeginCapture_(static_cast<hipStream_t>(stream), hipStreamCaptureModeGlobal),
              "hipStreamBeginCapture");
    }
    void* end_capture(void* stream) override {
        hipGraph_t graph = nullptr;
        check(hip_.hipStreamEndCapture_(static_cast<hipStream_t>(stream), &graph), "hipStreamEndCapture");
        hipGraphExec_t exec = nullptr;
        hipError_t r = hip_.hipGraphInstantiate_(&exec, graph, nullptr, nullptr, 0);
        (void)hip_.hipGraphDestroy_(graph);
        check(r, "hipGraphInstantiate");
        return exec;
    }
    void launch_graph(void* graph_exec, void* stream) override {
        check(hip_.hipGraphLaunch_(static_cast<hipGraphExec_t>(graph_exec), static_cast<hipStream_t>(stream)),
              "hipGraphLaunch");
    }
    void destroy_graph(void* graph_exec) noexcept override {
        if (graph_exec) (void)hip_.hipGraphExecDestroy_(static_cast<hipGraphExec_t>(graph_exec));
    }

private:
    void check(hipError_t result, const std::string& what) const {
        if (result == hipSuccess) return;
        const char* name = hip_.hipGetErrorName_(result);
        throw Error(ErrorCode::device_error,
                    fmt::format("{} failed: {} ({}): {}", what, name ? name : "?", int(result),
                                hip_.hipGetErrorString_(result)),
                    int(result), name ? name : "");
    }
    const hipDeviceProp_t& properties(int device) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (device >= static_cast<int>(props_.size())) props_.resize(device + 1);
        auto& slot = props_[device];
        if (!slot) {
            // Newer runtimes' property struct is larger than these headers' one: leave room.
            slot = std::make_unique<Props>();
            check(hip_.hipGetDeviceProperties_(&slot->props, device), "hipGetDeviceProperties");
        }
        return slot->props;
    }

    struct Props {
        hipDeviceProp_t props{};
        char spare[4096]{};
    };
    const HipApi& hip_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Props>> props_;
};

}  // namespace

std::unique_ptr<Device> open_hip() { return std::make_unique<HipDevice>(); }

#else

std::unique_ptr<Device> open_hip() {
    fail(ErrorCode::backend_unavailable, "this build of cc1d has no AMD backend (HIP headers were not found at build time)");
}

#endif

}  // namespace cc1d::device
