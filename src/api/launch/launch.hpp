// Host side of each kernel family: turns validated arguments into parameter blocks and
// launch geometry. The Runtime validates first (nothing reaches these functions that
// could fault), picks the Variant, loads its module, and hands over a Launcher.
#pragma once

#include <cstddef>

#include "cc1d/cc1d.hpp"
#include "device/device.hpp"
#include "variant/variant.hpp"

namespace cc1d::launch {

// Kernel functions of one module: the family's main kernel and its second one
// (codegen::second_kernel): backward's fixed-order reduction of the dweight/dbias
// partials, update's registers path, the channel-first forward's cp.async-staged kernel,
// the packed prefill's sequence-finishing kernel (history outputs and slot write-back),
// the channel-first small-call backward's vector kernel for one vector a thread; and a
// third (codegen::third_kernel): the channel-first small-call backward's vector kernel.
enum class Kernel { main = 0, reduce = 1, registers = 1, staged = 1, finish = 1, vectors_one = 1, vectors = 2 };

class Launcher {
public:
    virtual ~Launcher() = default;
    virtual void launch(Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes,
                        const void* params, std::size_t params_size) = 0;
    // A launch that may start while this call's previous kernel still runs (where the
    // device has overlapped launches): for a kernel that calls cc1d_wait_prior_grid before
    // it touches what that kernel writes. The first kernel of a call is always a plain
    // launch, since the kernel before it is the caller's.
    virtual void launch_overlapped(Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes,
                                   const void* params, std::size_t params_size) = 0;
    // Whether launch_in_clusters can run here (NVIDIA compute capability 9.0+;
    // CC1D_DISABLE_CLUSTERS=1 says no).
    virtual bool cluster_launches() = 0;
    // Clusters of (1, cluster_y, 1) blocks of the module's `kernel` the device holds at once
    // (Device::resident_clusters); 0 where it cannot say.
    virtual int resident_clusters(Kernel kernel, device::Dim3 block, unsigned shared_bytes, unsigned cluster_y) = 0;
    // launch_overlapped with the grid's blocks in thread-block clusters of (1, cluster_y, 1):
    // grid.y a multiple of cluster_y, which is at most CC1D_BWD_MAX_CLUSTER_PARTS.
    virtual void launch_in_clusters(Kernel kernel, device::Dim3 grid, device::Dim3 block, unsigned shared_bytes,
                                    const void* params, std::size_t params_size, unsigned cluster_y) = 0;
    virtual int multiprocessor_count() = 0;
    // Blocks of the module's `kernel` (of `block` threads and `shared_bytes` of dynamic
    // shared memory) one multiprocessor holds at once; 0 where the device cannot say.
    virtual int resident_blocks(Kernel kernel, device::Dim3 block, unsigned shared_bytes) {
        (void)kernel, (void)block, (void)shared_bytes;
        return 0;
    }
    // The device's peak DRAM bandwidth (Device::memory_bandwidth_gbps).
    virtual double memory_bandwidth_gbps() = 0;
    // Device memory of at least `bytes` for this call (reused across calls on the same
    // stream; contents undefined).
    virtual void* workspace(std::size_t bytes) = 0;
};

void forward_channel_first(Launcher& launcher, const Variant& variant, const ForwardArgs& args);
// Whether a forward call runs the module of rows off 16-byte boundaries
// (Variant::shifted_rows), where the variant has one and the call is not empty.
// Channel-first (fwd_channel_first.cu tiles them at each row's own boundaries, no seq_idx):
// where some row of x or out does not start at a 16-byte boundary and both have unit
// stride along L and whole-element addresses. Channel-last (fwd_channel_last.cu loads each
// vector as two aligned loads and a shift): where x's or out's rows along D are not whole
// 16-byte vectors. CC1D_DISABLE_SHIFTED_ROWS=1 keeps such calls on the main module
// (channel-first two aligned loads and a shift a vector, channel-last element by element).
bool forward_takes_shifted_rows(const Variant& variant, const ForwardArgs& args);
// The rows of each layout that forward_takes_shifted_rows sends to such a module (its
// layout's file): channel-first, some row off a 16-byte boundary that the module can
// follow; channel-last, whether x's and out's rows along D are whole 16-byte vectors (the
// main module's cc1d_fwd_params.vector_ok), the module taking those that are not.
bool forward_channel_first_shifted_rows(const ForwardArgs& args);
bool forward_channel_last_vector_rows(const ForwardArgs& args);
void forward_channel_last(Launcher& launcher, const Variant& variant, const ForwardArgs& args);
void backward_channel_first(Launcher& launcher, const Variant& variant, const BackwardArgs& args);
void backward_channel_last(Launcher& launcher, const Variant& variant, const BackwardArgs& args);
void update(Launcher& launcher, const Variant& variant, const UpdateArgs& args);
void varlen_forward(Launcher& launcher, const Variant& variant, const VarlenForwardArgs& args);

// Workspace bytes a backward call needs (0 when none).
std::size_t backward_workspace_bytes(const Variant& variant, const BackwardArgs& args);

// True when `p` is 16-byte aligned.
inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace cc1d::launch
