// Backend prelude for NVRTC. Defines the few things that differ between compilers;
// everything else lives in the shared headers (types.h on). No toolkit header is included: NVRTC provides
// the built-in variables (threadIdx, ...) and intrinsics itself.
#define CC1D_BACKEND_CUDA 1
#define CC1D_WARP_SIZE 32
#define CC1D_DEVICE __device__ __forceinline__

CC1D_DEVICE float cc1d_half_bits_to_float(unsigned short bits) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
}
CC1D_DEVICE unsigned short cc1d_float_to_half_bits(float f) {
    unsigned short bits;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
    return bits;
}
CC1D_DEVICE float cc1d_shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
CC1D_DEVICE float cc1d_shfl_up(float v, int delta) { return __shfl_up_sync(0xffffffffu, v, delta); }
CC1D_DEVICE float cc1d_shfl_down(float v, int delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
// v of lane `from` of the warp (all lanes must take part).
CC1D_DEVICE float cc1d_shfl(float v, int from) { return __shfl_sync(0xffffffffu, v, from); }
// v of lane `from` of this thread's aligned group of 32 lanes (all 32 must take part).
CC1D_DEVICE int cc1d_shfl_group32(int v, int from) { return __shfl_sync(0xffffffffu, v, from, 32); }
// Bit l: p on lane l of this lane's group of 32.
CC1D_DEVICE unsigned int cc1d_ballot_group32(bool p) { return __ballot_sync(0xffffffffu, p); }
// Whether p holds on every lane of the warp (all 32 must take part).
CC1D_DEVICE bool cc1d_warp_all(bool p) { return __all_sync(0xffffffffu, p) != 0; }
// 2^x, flushing results below the normal range to 0 (one special-function instruction;
// __expf adds range fix-ups around the same instruction).
CC1D_DEVICE float cc1d_exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
// Hardware tanh (sm_75+), maximum absolute error about 5e-4 (activation.h says where it is used).
#define CC1D_TANH_APPROX 1
CC1D_DEVICE float cc1d_tanh_approx(float x) {
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
#endif

// Overlapped launches (programmatic dependent launch, sm_90+). A kernel the launcher
// starts while the previous kernel of the same call still runs calls
// cc1d_wait_prior_grid before it touches memory that kernel writes: it returns once that
// kernel has finished and its writes are visible (at once for a plain launch).
// cc1d_allow_dependent_launch lets the next such kernel be scheduled before this one ends.
CC1D_DEVICE void cc1d_wait_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
CC1D_DEVICE void cc1d_allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// Thread-block clusters (sm_90+): the blocks of a cluster run at once on one GPC and can
// read each other's shared memory. cc1d_cluster_sync is a barrier of every thread of the
// cluster (each must reach it, outside divergent code) that also orders their shared
// memory writes before it with the reads after it; cc1d_cluster_read returns the float at
// `own` (an address in this block's shared memory) in the block of cluster rank `rank`;
// cc1d_cluster_rank is this block's rank.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CC1D_HAS_CLUSTERS 1
CC1D_DEVICE unsigned int cc1d_cluster_rank() {
    unsigned int rank;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}
CC1D_DEVICE void cc1d_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
CC1D_DEVICE float cc1d_cluster_read(const float* own, unsigned int rank) {
    const unsigned int local = (unsigned int)__cvta_generic_to_shared(own);
    unsigned int remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
}
#else
#define CC1D_HAS_CLUSTERS 0
#endif

// Asynchronous global-to-shared copies (cp.async, sm_80+): a tile staged this way keeps
// its loads in flight without holding them in registers, so the registers (and with them
// the blocks per SM, hence the bytes in flight) stay those of the compute. A thread's
// copies are complete after cc1d_wait_async_copies; a barrier after that shows every
// thread's copies to the whole block.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define CC1D_HAS_ASYNC_COPY 1
// 16 bytes, both addresses 16-byte aligned. .cg: staged data is read from shared memory,
// not again from L1.
CC1D_DEVICE void cc1d_copy16_async(void* shared_slot, const void* from) {
    const unsigned int to = (unsigned int)__cvta_generic_to_shared(shared_slot);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(from) : "memory");
}
// BYTES (4, 8 or 16; .ca, the only kind cp.async has for fewer than 16), both addresses
// BYTES-aligned.
template <int BYTES> CC1D_DEVICE void cc1d_copy_async_ca(void* shared_slot, const void* from) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async moves 4, 8 or 16 bytes");
    const unsigned int to = (unsigned int)__cvta_generic_to_shared(shared_slot);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(to), "l"(from), "n"(BYTES) : "memory");
}
CC1D_DEVICE void cc1d_wait_async_copies() { asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory"); }
#else
#define CC1D_HAS_ASYNC_COPY 0
#endif
