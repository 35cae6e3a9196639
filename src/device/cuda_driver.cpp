// The CUDA driver API, opened with dlopen. Kernels run in each device's primary
// context, the one the CUDA runtime and PyTorch use, so memory and streams are shared.
#include <fmt/format.h>

#include <mutex>
#include <vector>

#include "common/dynamic_library.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"
#include "device/device.hpp"

#if CC1D_HAVE_CUDA
#include <cuda.h>
#endif

namespace cc1d::device {

#if CC1D_HAVE_CUDA
namespace {

// cuda.h maps many names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2); expanding
// the name before stringizing looks up exactly the symbol the header declares.
#define CC1D_STRINGIZE(x) #x
#define CC1D_SYMBOL_NAME(x) CC1D_STRINGIZE(x)
#define CC1D_DRIVER_FUNCTIONS(X)                                                                          \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)             \
    X(cuDeviceGet)                                                                                        \
    X(cuDeviceGetAttribute) X(cuDeviceGetName) X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice)    \
    X(cuDevicePrimaryCtxRetain) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)              \
    X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoDAsync)     \
    X(cuMemsetD8) X(cuCtxSynchronize) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)                 \
    X(cuEventSynchronize) X(cuEventElapsedTime) X(cuStreamCreate) X(cuStreamDestroy)                      \
    X(cuStreamSynchronize) X(cuStreamGetCtx) X(cuStreamBeginCapture) X(cuStreamEndCapture)                \
    X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)

// Overlapped launches (programmatic dependent launch) need cuLaunchKernelEx, from CUDA 12.0;
// without it, or with older headers, every launch is a plain one.
#if CUDA_VERSION >= 12000
#define CC1D_HAVE_LAUNCH_EX 1
#else
#define CC1D_HAVE_LAUNCH_EX 0
#endif

struct DriverApi {
    DynamicLibrary library;
#define CC1D_DECLARE(name) decltype(&name) name##_ = nullptr;
    CC1D_DRIVER_FUNCTIONS(CC1D_DECLARE)
#undef CC1D_DECLARE
#if CC1D_HAVE_LAUNCH_EX
    decltype(&cuLaunchKernelEx) cuLaunchKernelEx_ = nullptr;   // optional
#endif
    decltype(&cuOccupancyMaxActiveBlocksPerMultiprocessor) cuOccupancyMaxActiveBlocksPerMultiprocessor_ = nullptr;   // optional
#if CC1D_HAVE_LAUNCH_EX
    decltype(&cuOccupancyMaxActiveClusters) cuOccupancyMaxActiveClusters_ = nullptr;   // optional
#endif
};

const DriverApi& driver() {
    static DriverApi api;
    static std::string failure;
    static std::once_flag once;
    std::call_once(once, [] {
        std::string why;
        api.library = DynamicLibrary::open_first({"libcuda.so.1", "libcuda.so"}, &why);
        if (!api.library.loaded()) {
            failure = "CUDA driver not found (" + why + ")";
            return;
        }
#define CC1D_RESOLVE(name)                                                             \
    if (failure.empty() && !api.library.resolve(api.name##_, CC1D_SYMBOL_NAME(name)))  \
        failure = std::string("CUDA driver lacks ") + CC1D_SYMBOL_NAME(name);
        CC1D_DRIVER_FUNCTIONS(CC1D_RESOLVE)
#undef CC1D_RESOLVE
        if (!failure.empty()) return;
#if CC1D_HAVE_LAUNCH_EX
        api.library.resolve(api.cuLaunchKernelEx_, CC1D_SYMBOL_NAME(cuLaunchKernelEx));
        api.library.resolve(api.cuOccupancyMaxActiveClusters_, CC1D_SYMBOL_NAME(cuOccupancyMaxActiveClusters));
#endif
        api.library.resolve(api.cuOccupancyMaxActiveBlocksPerMultiprocessor_,
                            CC1D_SYMBOL_NAME(cuOccupancyMaxActiveBlocksPerMultiprocessor));
        if (CUresult r = api.cuInit_(0); r != CUDA_SUCCESS) {
            const char* name = nullptr;
            api.cuGetErrorName_(r, &name);
            failure = fmt::format("cuInit failed: {} ({})", name ? name : "?", int(r));
        }
    });
    if (!failure.empty()) fail(ErrorCode::backend_unavailable, "{}", failure);
    return api;
}

class CudaDevice final : public Device {
public:
    CudaDevice() : cu_(driver()) {
        int count = 0;
        check(cu_.cuDeviceGetCount_(&count), "cuDeviceGetCount");
        if (count == 0) fail(ErrorCode::backend_unavailable, "the CUDA driver reports no device");
        overlapped_.resize(static_cast<std::size_t>(count), false);
        clusters_.resize(static_cast<std::size_t>(count), false);
        memory_gbps_.resize(static_cast<std::size_t>(count), -1.0);
#if CC1D_HAVE_LAUNCH_EX
        if (cu_.cuLaunchKernelEx_ == nullptr) return;
        const bool overlap = overlap_supported_by_driver();
        for (int device = 0; device < count; ++device) {
            const bool hopper_or_later = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) >= 9;
            clusters_[static_cast<std::size_t>(device)] = hopper_or_later;
            overlapped_[static_cast<std::size_t>(device)] = hopper_or_later && overlap;
        }
#endif
    }

    std::string backend() const override { return "cuda"; }

    int current_device() override {
        CUcontext context = nullptr;
        check(cu_.cuCtxGetCurrent_(&context), "cuCtxGetCurrent");
        if (context == nullptr) {
            // Like the CUDA runtime: with no context current, use device 0's primary one.
            CUdevice dev = 0;
            check(cu_.cuDeviceGet_(&dev, 0), "cuDeviceGet");
            check(cu_.cuDevicePrimaryCtxRetain_(&context, dev), "cuDevicePrimaryCtxRetain");
            check(cu_.cuCtxSetCurrent_(context), "cuCtxSetCurrent");
        }
        CUdevice dev = 0;
        check(cu_.cuCtxGetDevice_(&dev), "cuCtxGetDevice");
        return static_cast<int>(dev);
    }

    int device_count() override {
        int count = 0;
        check(cu_.cuDeviceGetCount_(&count), "cuDeviceGetCount");
        return count;
    }

    std::string target(int device) override {
        return fmt::format("sm_{}{}", attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                           attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    }

    std::string name(int device) override {
        char text[256] = {};
        check(cu_.cuDeviceGetName_(text, sizeof(text), device_handle(device)), "cuDeviceGetName");
        return text;
    }

    int multiprocessor_count(int device) override {
        return attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    }
    double memory_bandwidth_gbps(int device) override {
        // Asked once a device: answering these two took the driver about 0.35 ms on an
        // H200, where a launch takes a few microseconds. kHz x bits, two transfers a clock.
        if (device < 0 || device >= static_cast<int>(memory_gbps_.size())) return 0.0;
        std::lock_guard<std::mutex> lock(mutex_);
        double& gbps = memory_gbps_[static_cast<std::size_t>(device)];
        if (gbps < 0)
            gbps = 2.0 * attribute(device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) *
                   attribute(device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) / 8.0 / 1e6;
        return gbps;
    }

    void check_stream(void* stream, int device) override {
        if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return;
        CUcontext stream_context = nullptr, current = nullptr;
        check(cu_.cuStreamGetCtx_(static_cast<CUstream>(stream), &stream_context), "cuStreamGetCtx");
        check(cu_.cuCtxGetCurrent_(&current), "cuCtxGetCurrent");
        if (stream_context != current)
            fail(ErrorCode::invalid_argument,
                 "stream: belongs to another device or context than the current device {} (make the stream's device current)",
                 device);
    }

    void* load_module(const std::string& code_object) override {
        CUmodule module = nullptr;
        check(cu_.cuModuleLoadData_(&module, code_object.data()), "cuModuleLoadData");
        return module;
    }
    void unload_module(void* module) noexcept override {
        if (module) cu_.cuModuleUnload_(static_cast<CUmodule>(module));
    }
    void* get_function(void* module, const std::string& name) override {
        CUfunction function = nullptr;
        check(cu_.cuModuleGetFunction_(&function, static_cast<CUmodule>(module), name.c_str()),
              "cuModuleGetFunction(" + name + ")");
        return function;
    }

    void launch(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream, const void* params,
                std::size_t /*params_size*/) override {
        void* args[] = {const_cast<void*>(params)};
        check(cu_.cuLaunchKernel_(static_cast<CUfunction>(function), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                  shared_bytes, static_cast<CUstream>(stream), args, nullptr),
              "cuLaunchKernel");
    }

    int resident_blocks(void* function, int block_threads, unsigned shared_bytes) override {
        if (cu_.cuOccupancyMaxActiveBlocksPerMultiprocessor_ == nullptr) return 0;
        // Only a plan reads it: a failed query is "cannot say", and a broken context shows
        // at the launch, which is checked.
        int blocks = 0;
        if (cu_.cuOccupancyMaxActiveBlocksPerMultiprocessor_(&blocks, static_cast<CUfunction>(function), block_threads,
                                                             shared_bytes) != CUDA_SUCCESS)
            return 0;
        return blocks;
    }

    bool overlapped_launches(int device) override {
        return device >= 0 && static_cast<std::size_t>(device) < overlapped_.size() &&
               overlapped_[static_cast<std::size_t>(device)];
    }
    void launch_overlapped(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream,
                           const void* params, std::size_t params_size) override {
#if CC1D_HAVE_LAUNCH_EX
        if (cu_.cuLaunchKernelEx_ != nullptr) {
            launch_ex(function, grid, block, shared_bytes, stream, params, true, 1);
            return;
        }
#endif
        launch(function, grid, block, shared_bytes, stream, params, params_size);
    }

    int resident_clusters(void* function, int block_threads, unsigned shared_bytes, unsigned cluster_y) override {
#if CC1D_HAVE_LAUNCH_EX
        if (cu_.cuOccupancyMaxActiveClusters_ == nullptr) return 0;
        CUlaunchAttribute cluster[kClusterAttributes] = {};
        const unsigned count = cluster_attributes(cluster, cluster_y);
        Dim3 grid, block;
        grid.y = cluster_y;
        block.x = static_cast<unsigned>(block_threads);
        const CUlaunchConfig config = launch_config(grid, block, shared_bytes, nullptr, cluster, count);
        // (As resident_blocks: a failed query is "cannot say".)
        int clusters = 0;
        if (cu_.cuOccupancyMaxActiveClusters_(&clusters, static_cast<CUfunction>(function), &config) != CUDA_SUCCESS)
            return 0;
        return clusters;
#else
        (void)function, (void)block_threads, (void)shared_bytes, (void)cluster_y;
        return 0;
#endif
    }

    bool cluster_launches(int device) override {
        return device >= 0 && static_cast<std::size_t>(device) < clusters_.size() &&
               clusters_[static_cast<std::size_t>(device)];
    }
    void launch_in_clusters(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream,
                            const void* params, std::size_t /*params_size*/, unsigned cluster_y,
                            bool overlapped) override {
#if CC1D_HAVE_LAUNCH_EX
        if (cu_.cuLaunchKernelEx_ != nullptr) {
            launch_ex(function, grid, block, shared_bytes, stream, params, overlapped, cluster_y);
            return;
        }
#endif
        (void)function, (void)grid, (void)block, (void)shared_bytes, (void)stream, (void)params, (void)cluster_y,
            (void)overlapped;
        fail(ErrorCode::unsupported, "thread-block clusters need cuLaunchKernelEx (CUDA 12.0 or later)");
    }

    void* allocate(std::size_t bytes) override {
        CUdeviceptr pointer = 0;
        check(cu_.cuMemAlloc_(&pointer, bytes == 0 ? 1 : bytes), fmt::format("cuMemAlloc({} bytes)", bytes));
        return reinterpret_cast<void*>(pointer);
    }
    void release(void* pointer) noexcept override {
        if (pointer) cu_.cuMemFree_(reinterpret_cast<CUdeviceptr>(pointer));
    }
    void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
        check(cu_.cuMemcpyHtoD_(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
    }
    void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
        check(cu_.cuMemcpyDtoH_(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
    }
    void copy_device_to_device_async(void* dst, const void* src, std::size_t bytes, void* stream) override {
        check(cu_.cuMemcpyDtoDAsync_(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes,
                                     static_cast<CUstream>(stream)),
              "cuMemcpyDtoDAsync");
    }
    void fill_bytes(void* dst, unsigned char value, std::size_t bytes) override {
        check(cu_.cuMemsetD8_(reinterpret_cast<CUdeviceptr>(dst), value, bytes), "cuMemsetD8");
        synchronize();
    }
    void synchronize() override { check(cu_.cuCtxSynchronize_(), "cuCtxSynchronize"); }

    void* create_event() override {
        CUevent event = nullptr;
        check(cu_.cuEventCreate_(&event, CU_EVENT_DEFAULT), "cuEventCreate");
        return event;
    }
    void destroy_event(void* event) noexcept override {
        if (event) cu_.cuEventDestroy_(static_cast<CUevent>(event));
    }
    void record_event(void* event, void* stream) override {
        check(cu_.cuEventRecord_(static_cast<CUevent>(event), static_cast<CUstream>(stream)), "cuEventRecord");
    }
    float elapsed_ms(void* start, void* stop) override {
        check(cu_.cuEventSynchronize_(static_cast<CUevent>(stop)), "cuEventSynchronize");
        float ms = 0;
        check(cu_.cuEventElapsedTime_(&ms, static_cast<CUevent>(start), static_cast<CUevent>(stop)), "cuEventElapsedTime");
        return ms;
    }

    void* create_stream() override {
        CUstream stream = nullptr;
        check(cu_.cuStreamCreate_(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        return stream;
    }
    void destroy_stream(void* stream) noexcept override {
        if (stream) cu_.cuStreamDestroy_(static_cast<CUstream>(stream));
    }
    void synchronize_stream(void* stream) override {
        check(cu_.cuStreamSynchronize_(static_cast<CUstream>(stream)), "cuStreamSynchronize");
    }
    void begin_capture(void* stream) override {
        check(cu_.cuStreamBeginCapture_(static_cast<CUstream>(stream), CU_STREAM_CAPTURE_MODE_GLOBAL),
              "cuStreamBeginCapture");
    }
    void* end_capture(void* stream) override {
        CUgraph graph = nullptr;
        check(cu_.cuStreamEndCapture_(static_cast<CUstream>(stream), &graph), "cuStreamEndCapture");
        CUgraphExec exec = nullptr;
        CUresult r = cu_.cuGraphInstantiateWithFlags_(&exec, graph, 0);
        cu_.cuGraphDestroy_(graph);
        check(r, "cuGraphInstantiateWithFlags");
        return exec;
    }
    void launch_graph(void* graph_exec, void* stream) override {
        check(cu_.cuGraphLaunch_(static_cast<CUgraphExec>(graph_exec), static_cast<CUstream>(stream)), "cuGraphLaunch");
    }
    void destroy_graph(void* graph_exec) noexcept override {
        if (graph_exec) cu_.cuGraphExecDestroy_(static_cast<CUgraphExec>(graph_exec));
    }

private:
    void check(CUresult result, const std::string& what) const {
        if (result == CUDA_SUCCESS) return;
        const char* name = nullptr;
        const char* text = nullptr;
        cu_.cuGetErrorName_(result, &name);
        cu_.cuGetErrorString_(result, &text);
        throw Error(ErrorCode::device_error,
                    fmt::format("{} failed: {} ({}): {}", what, name ? name : "?", int(result), text ? text : ""),
                    int(result), name ? name : "");
    }
    CUdevice device_handle(int ordinal) const {
        CUdevice dev = 0;
        check(cu_.cuDeviceGet_(&dev, ordinal), "cuDeviceGet");
        return dev;
    }
    int attribute(int device, CUdevice_attribute which) const {
        int value = 0;
        check(cu_.cuDeviceGetAttribute_(&value, which, device_handle(device)), "cuDeviceGetAttribute");
        return value;
    }

#if CC1D_HAVE_LAUNCH_EX
    // Clusters placed to balance the load over the GPCs rather than spread: an H100 then
    // holds 264 clusters of 4 blocks (1,056 blocks, 8 an SM) where the default policy holds
    // 248 (992), and 132 of 8 where it holds 124 (docs/perf.md entry 139).
    static constexpr CUclusterSchedulingPolicy kClusterPolicy = CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING;

    // The attributes of clusters of (1, cluster_y, 1) blocks, placed as above, written to
    // `out` (room for kClusterAttributes); returns how many.
    static constexpr unsigned kClusterAttributes = 2;
    static unsigned cluster_attributes(CUlaunchAttribute* out, unsigned cluster_y) {
        out[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        out[0].value.clusterDim.x = 1;
        out[0].value.clusterDim.y = cluster_y;
        out[0].value.clusterDim.z = 1;
        out[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
        out[1].value.clusterSchedulingPolicyPreference = kClusterPolicy;
        return kClusterAttributes;
    }

    static CUlaunchConfig launch_config(Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream,
                                        CUlaunchAttribute* attributes, unsigned count) {
        CUlaunchConfig config = {};
        config.gridDimX = grid.x;
        config.gridDimY = grid.y;
        config.gridDimZ = grid.z;
        config.blockDimX = block.x;
        config.blockDimY = block.y;
        config.blockDimZ = block.z;
        config.sharedMemBytes = shared_bytes;
        config.hStream = static_cast<CUstream>(stream);
        config.attrs = attributes;
        config.numAttrs = count;
        return config;
    }

    // cuLaunchKernelEx with the attributes asked for: an overlapped launch (programmatic
    // dependent launch) and clusters of (1, cluster_y, 1) blocks (none where cluster_y is 1).
    void launch_ex(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream, const void* params,
                   bool overlapped, unsigned cluster_y) {
        CUlaunchAttribute attributes[1 + kClusterAttributes] = {};
        unsigned count = 0;
        if (overlapped) {
            attributes[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attributes[count++].value.programmaticStreamSerializationAllowed = 1;
        }
        if (cluster_y > 1) count += cluster_attributes(attributes + count, cluster_y);
        CUlaunchConfig config = launch_config(grid, block, shared_bytes, stream, attributes, count);
        void* args[] = {const_cast<void*>(params)};
        check(cu_.cuLaunchKernelEx_(&config, static_cast<CUfunction>(function), args, nullptr),
              fmt::format("cuLaunchKernelEx ({}{})", overlapped ? "overlapped" : "plain",
                          cluster_y > 1 ? fmt::format(", clusters of {} blocks", cluster_y) : ""));
    }
#endif

    // cuLaunchKernelEx present, a CUDA 12.3+ driver (graph capture of overlapped launches),
    // and not turned off with CC1D_DISABLE_OVERLAPPED_LAUNCH.
    bool overlap_supported_by_driver() const {
#if CC1D_HAVE_LAUNCH_EX
        int version = 0;
        if (cu_.cuLaunchKernelEx_ == nullptr || cu_.cuDriverGetVersion_(&version) != CUDA_SUCCESS) return false;
        return version >= 12030 && !env::flag("CC1D_DISABLE_OVERLAPPED_LAUNCH");
#else
        return false;
#endif
    }

    const DriverApi& cu_;
    std::vector<bool> overlapped_;   // per device ordinal, fixed at construction
    std::vector<bool> clusters_;     // (the same)
    std::mutex mutex_;
    std::vector<double> memory_gbps_;   // per device ordinal, -1 until asked
};

}  // namespace

std::unique_ptr<Device> open_cuda() { return std::make_unique<CudaDevice>(); }

#else

std::unique_ptr<Device> open_cuda() {
    fail(ErrorCode::backend_unavailable, "this build of cc1d has no NVIDIA backend (CUDA headers were not found at build time)");
}

#endif

}  // namespace cc1d::device
