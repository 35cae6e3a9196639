// The device interface: load code objects, launch kernels, and the few memory
// operations the library, its tests and its bench need. One implementation per vendor
// (cuda_driver.cpp, hip_runtime.cpp), each opening its library with dlopen.
// Every failing driver call throws Error(device_error) with the driver's code and name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cc1d::device {

struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
};

class Device {
public:
    virtual ~Device() = default;
    virtual std::string backend() const = 0;   // "cuda" or "hip"

    // The caller's current device (ordinal). Makes sure a context is current: on CUDA
    // the device's primary context, the one the runtime API and PyTorch use.
    virtual int current_device() = 0;
    virtual int device_count() = 0;
    // Compile target of a device: "sm_90" or the full gfx target id.
    virtual std::string target(int device) = 0;
    virtual std::string name(int device) = 0;
    virtual int multiprocessor_count(int device) = 0;
    // Peak DRAM bandwidth in GB/s from the driver's memory clock and bus width (0 when it
    // reports neither, or for an unknown ordinal): launch plans tuned per device class read it.
    virtual double memory_bandwidth_gbps(int device) = 0;

    // Throws invalid_argument when `stream` belongs to a device other than `device`.
    virtual void check_stream(void* stream, int device) = 0;

    // Modules are loaded into the current device's context.
    virtual void* load_module(const std::string& code_object) = 0;
    virtual void unload_module(void* module) noexcept = 0;
    virtual void* get_function(void* module, const std::string& name) = 0;
    // `params` points at the kernel's single by-value parameter block of `params_size` bytes.
    virtual void launch(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream,
                        const void* params, std::size_t params_size) = 0;
    // Whether `device` can start a kernel while the previous kernel of its stream still runs
    // (CUDA's programmatic dependent launch: compute capability 9.0 and a driver of CUDA
    // 12.3 or later, which also captures such launches into graphs).
    virtual bool overlapped_launches(int device) = 0;
    // Like launch, but the kernel may start before the previous kernel in `stream` has
    // finished: it must wait for it (cc1d_wait_prior_grid in the kernel templates) before
    // touching memory that kernel writes, and may read only what was complete before that
    // kernel started. For devices where overlapped_launches is true (the caller checks);
    // a build or driver without the launch call makes it a plain launch.
    virtual void launch_overlapped(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream,
                                   const void* params, std::size_t params_size) = 0;
    // Whether `device` launches thread-block clusters (CUDA compute capability 9.0 and
    // cuLaunchKernelEx; never on HIP).
    virtual bool cluster_launches(int device) = 0;
    // launch, or launch_overlapped where `overlapped` (the caller checks
    // overlapped_launches), with the grid's blocks in clusters of (1, cluster_y, 1): grid.y a
    // multiple of cluster_y, which is at most 8 (what every such device schedules), placed
    // to balance the load over the GPCs. For devices where cluster_launches is true.
    virtual void launch_in_clusters(void* function, Dim3 grid, Dim3 block, unsigned shared_bytes, void* stream,
                                    const void* params, std::size_t params_size, unsigned cluster_y,
                                    bool overlapped) = 0;
    // Clusters of (1, cluster_y, 1) blocks of `block_threads` threads and `shared_bytes` of
    // dynamic shared memory that the whole device holds at once for `function`, placed as
    // launch_in_clusters places them; 0 where the driver cannot say. (On an H100 a
    // cluster's blocks count at most 8 an SM, and a cluster must fit one GPC: fewer
    // blocks than resident_blocks gives without clusters.)
    virtual int resident_clusters(void* function, int block_threads, unsigned shared_bytes, unsigned cluster_y) {
        (void)function, (void)block_threads, (void)shared_bytes, (void)cluster_y;
        return 0;
    }
    // Blocks of `block_threads` threads and `shared_bytes` of dynamic shared memory that one
    // multiprocessor holds at once for `function` (its registers and static shared memory
    // count); 0 where the driver cannot say.
    virtual int resident_blocks(void* function, int block_threads, unsigned shared_bytes) {
        (void)function, (void)block_threads, (void)shared_bytes;
        return 0;
    }

    virtual void* allocate(std::size_t bytes) = 0;
    virtual void release(void* pointer) noexcept = 0;
    virtual void copy_to_device(void* dst, const void* src, std::size_t bytes) = 0;
    virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
    virtual void copy_device_to_device_async(void* dst, const void* src, std::size_t bytes, void* stream) = 0;
    virtual void fill_bytes(void* dst, unsigned char value, std::size_t bytes) = 0;  // synchronous
    virtual void synchronize() = 0;

    // Events for timing (bench): record/elapsed in milliseconds.
    virtual void* create_event() = 0;
    virtual void destroy_event(void* event) noexcept = 0;
    virtual void record_event(void* event, void* stream) = 0;
    virtual float elapsed_ms(void* start, void* stop) = 0;   // synchronizes on stop

    // Streams and graphs (graph-capture tests and benches).
    virtual void* create_stream() = 0;
    virtual void destroy_stream(void* stream) noexcept = 0;
    virtual void synchronize_stream(void* stream) = 0;
    virtual void begin_capture(void* stream) = 0;
    virtual void* end_capture(void* stream) = 0;          // returns an executable graph
    virtual void launch_graph(void* graph_exec, void* stream) = 0;
    virtual void destroy_graph(void* graph_exec) noexcept = 0;
};

// Opens the vendor library; throws Error(backend_unavailable) with the reason when it
// is missing or no device is present.
std::unique_ptr<Device> open_cuda();
std::unique_ptr<Device> open_hip();
// CUDA first, then HIP; throws backend_unavailable naming both reasons.
std::unique_ptr<Device> open_any();

}  // namespace cc1d::device
