// Backend prelude for HIPRTC. Defines the few things that differ between compilers;
// everything else lives in the shared headers (types.h on). HIPRTC provides the built-in variables and
// intrinsics itself, so nothing is included.
#define CC1D_BACKEND_HIP 1
#ifdef __AMDGCN_WAVEFRONT_SIZE
#define CC1D_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#else
#define CC1D_WARP_SIZE 64
#endif
#define CC1D_DEVICE __device__ inline __attribute__((always_inline))

CC1D_DEVICE float cc1d_half_bits_to_float(unsigned short bits) {
    _Float16 h;
    __builtin_memcpy(&h, &bits, sizeof(h));
    return (float)h;
}
CC1D_DEVICE unsigned short cc1d_float_to_half_bits(float f) {
    _Float16 h = (_Float16)f;
    unsigned short bits;
    __builtin_memcpy(&bits, &h, sizeof(bits));
    return bits;
}
CC1D_DEVICE float cc1d_shfl_xor(float v, int mask) { return __shfl_xor(v, mask); }
CC1D_DEVICE float cc1d_shfl_up(float v, int delta) { return __shfl_up(v, delta); }
CC1D_DEVICE float cc1d_shfl_down(float v, int delta) { return __shfl_down(v, delta); }
// v of lane `from` of the wavefront.
CC1D_DEVICE float cc1d_shfl(float v, int from) { return __shfl(v, from); }
// v of lane `from` of this thread's aligned group of 32 lanes.
CC1D_DEVICE int cc1d_shfl_group32(int v, int from) { return __shfl(v, from, 32); }
// Bit l: p on lane l of this lane's group of 32.
CC1D_DEVICE unsigned int cc1d_ballot_group32(bool p) { return (unsigned int)(__ballot(p) >> (__lane_id() & 32)); }
// Whether p holds on every active lane of the wavefront (64 lanes on gfx9: a caller
// asking about a group of 32 gets a conservative answer).
CC1D_DEVICE bool cc1d_warp_all(bool p) { return __all(p) != 0; }
// 2^x (approximate; __expf is the native exp2 after a multiply by log2(e), which this
// multiply undoes at compile time).
CC1D_DEVICE float cc1d_exp2_approx(float x) { return __expf(x * 0.6931471805599453f); }
// Overlapped launches are a CUDA feature: HIP launches one kernel after the other.
CC1D_DEVICE void cc1d_wait_prior_grid() {}
CC1D_DEVICE void cc1d_allow_dependent_launch() {}
// No asynchronous global-to-shared copies here (prelude_cuda.h): tiles stage through registers.
// No thread-block clusters either: a channel's parts go through the reduce kernel.
#define CC1D_HAS_CLUSTERS 0
#define CC1D_HAS_ASYNC_COPY 0
