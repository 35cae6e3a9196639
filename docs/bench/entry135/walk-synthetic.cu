// Synthetic channel-last backward walk (docs/perf.md entry 135): blocks of 32 channel lanes x
// TY time warps, each warp walking one chunk of a row (backward in time unless dir > 0),
// STEPS steps a batch staged by cp.async in NBUF buffers; 8 bytes (4 bf16 channels) a lane
// a step; in place of the walk's arithmetic nothing (NF 0) or NF fused multiply-adds and a
// tanh an element. WIDE: bit 1 copies x and dout 16 bytes a copy by lane pairs, bit 2
// stores dx 16 bytes a store through the consumed dout slots.
//   nvcc -O3 -arch=sm_90 -std=c++17 -o walk-synthetic walk-synthetic.cu
//   ./walk-synthetic          the sweep of walk shapes (run4-sweep-h100.txt)
//   ./walk-synthetic wide     the 16-byte copies and stores (run2-wide-copies-h100.txt)
#include <cstdio>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
constexpr int TX = 32;
struct alignas(8) raw { unsigned w[2]; };
__device__ __forceinline__ void cp8(void* s, const void* g) {
    unsigned a = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(a), "l"(g) : "memory");
}
__device__ __forceinline__ void cp16(void* s, const void* g) {
    unsigned a = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(g) : "memory");
}
__device__ __forceinline__ float lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi(unsigned w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ float tanh_a(float v) { float r; asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(v)); return r; }
template <int NF, int STEPS, int NBUF, int WIDE>
__global__ void __launch_bounds__(256) walk(const __nv_bfloat16* x, const __nv_bfloat16* d, __nv_bfloat16* dx, float* sink,
                                            int L, int D, int chunk, int chunks_per_row, int groups, int order, int dir, int batch) {
    extern __shared__ raw sm[];
    const int TY = blockDim.y, NT = TX * TY;
    raw* sx = sm;
    raw* sd = sm + NBUF * STEPS * NT;
    const int tid = threadIdx.y * TX + threadIdx.x;
    const int blocks_t = gridDim.x / groups;
    const int g = order == 0 ? blockIdx.x % groups : blockIdx.x / blocks_t;
    const int bt_ = order == 0 ? blockIdx.x / groups : blockIdx.x % blocks_t;
    const int c0 = (g * TX + threadIdx.x) * 4;
    const int unit = bt_ * TY + threadIdx.y;
    const int b = unit / chunks_per_row, ci = unit % chunks_per_row;
    if (b >= batch) return;   // a warp past the call's last unit (its batch row does not exist)
    const long long row = (long long)b * L;
    const int t0 = ci * chunk, n = min(chunk, L - t0);
    if (n <= 0) return;
    const int batches = n / STEPS;
    float w[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) w[k] = 0.1f * k + 0.01f * threadIdx.x;
    float acc[4] = {0, 0, 0, 0};
    auto pos = [&](int i) { return dir > 0 ? t0 + i : t0 + n - 1 - i; };
    // WIDE: a lane's 16-byte piece of its warp's 256 bytes a step, half = which of two steps
    const int half = threadIdx.x >> 4, l16 = threadIdx.x & 15, cw = (g * TX + 2 * l16) * 4;
    auto stage = [&](int bt, int buf) {
        if (bt < batches && (WIDE & 1)) {
            // lane pairs: 16 bytes a copy, two steps a warp instruction
#pragma unroll 2
            for (int s = half; s < STEPS; s += 2) {
                const long long off = (row + pos(bt * STEPS + s)) * D + cw;
                const int slot = (buf * STEPS + s) * NT + threadIdx.y * TX + 2 * l16;
                cp16(sx + slot, x + off);
                cp16(sd + slot, d + off);
            }
        } else if (bt < batches) {
#pragma unroll 2
            for (int s = 0; s < STEPS; ++s) {
                const long long off = (row + pos(bt * STEPS + s)) * D + c0;
                cp8(sx + (buf * STEPS + s) * NT + tid, x + off);
                cp8(sd + (buf * STEPS + s) * NT + tid, d + off);
            }
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    };
#pragma unroll
    for (int i = 0; i < NBUF - 1; ++i) stage(i, i);
    for (int bt = 0; bt < batches; ++bt) {
        const int buf = bt % NBUF;
        stage(bt + NBUF - 1, (bt + NBUF - 1) % NBUF);
        asm volatile("cp.async.wait_group %0;" ::"n"(NBUF - 1) : "memory");
        if (WIDE & 1) __syncwarp();   // the pair's copies of this batch, landed
#pragma unroll 4
        for (int s = 0; s < STEPS; ++s) {
            const raw rx = sx[(buf * STEPS + s) * NT + tid], rd = sd[(buf * STEPS + s) * NT + tid];
            float o[4];
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const float a = (c & 1) ? hi(rx.w[c >> 1]) : lo(rx.w[c >> 1]);
                const float gg = (c & 1) ? hi(rd.w[c >> 1]) : lo(rd.w[c >> 1]);
                float v = gg;
#pragma unroll
                for (int k = 0; k < NF; ++k) v = fmaf(w[k & 7], a, v);
                if (NF > 0) v = fmaf(v, tanh_a(v), gg);
                acc[c] = fmaf(a, v, acc[c]);
                o[c] = v;
            }
            raw ro;
            __nv_bfloat162 p0 = __floats2bfloat162_rn(o[0], o[1]), p1 = __floats2bfloat162_rn(o[2], o[3]);
            ro.w[0] = *reinterpret_cast<unsigned*>(&p0);
            ro.w[1] = *reinterpret_cast<unsigned*>(&p1);
            if (WIDE & 2) sd[(buf * STEPS + s) * NT + tid] = ro;   // dx over the consumed dout slot
            else *reinterpret_cast<raw*>(dx + (row + pos(bt * STEPS + s)) * D + c0) = ro;
        }
        if (WIDE & 2) {
            __syncwarp();
#pragma unroll
            for (int s = half; s < STEPS; s += 2) {
                const int slot = (buf * STEPS + s) * NT + threadIdx.y * TX + 2 * l16;
                *reinterpret_cast<uint4*>(dx + (row + pos(bt * STEPS + s)) * D + cw) = *reinterpret_cast<const uint4*>(sd + slot);
            }
            __syncwarp();
        }
    }
    if (acc[0] + acc[1] + acc[2] + acc[3] == 123.456f) sink[0] = 1.f;
}
struct Ctx { const __nv_bfloat16 *x, *d; __nv_bfloat16* dx; float* sink; char* flush; size_t fb; cudaEvent_t e0, e1; double ideal; int B, L, D; };
static float median(float* t, int n) { for (int i = 0; i < n; ++i) for (int j = i + 1; j < n; ++j) if (t[j] < t[i]) { float v = t[i]; t[i] = t[j]; t[j] = v; } return t[n / 2]; }
template <int NF, int STEPS, int NBUF, int WIDE = 0>
void run(const Ctx& c, const char* name, int ty, int parts, int smem_kib, int order, int dir) {
    const int units = c.B * parts;   // parts chunks a row
    int chunk = ((c.L + parts - 1) / parts + STEPS - 1) / STEPS * STEPS;
    const int groups = c.D / (TX * 4);
    const int blocks_t = (units + ty - 1) / ty;
    const int need = 2 * NBUF * STEPS * TX * ty * 8;
    const int smem = smem_kib * 1024 > need ? smem_kib * 1024 : need;
    cudaFuncSetAttribute(walk<NF, STEPS, NBUF, WIDE>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int occ = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, walk<NF, STEPS, NBUF, WIDE>, TX * ty, smem);
    float t[25];
    for (int r = 0; r < 25; ++r) {
        cudaMemsetAsync(c.flush, r, c.fb);
        cudaEventRecord(c.e0);
        walk<NF, STEPS, NBUF, WIDE><<<groups * blocks_t, dim3(TX, ty), smem>>>(c.x, c.d, c.dx, c.sink, c.L, c.D, chunk, parts, groups, order, dir, c.B);
        cudaEventRecord(c.e1);
        cudaEventSynchronize(c.e1);
        cudaEventElapsedTime(&t[r], c.e0, c.e1);
    }
    cudaError_t e = cudaGetLastError();
    const float us = median(t, 25) * 1000.f;
    const char* wide_names[4] = {"", " ld16", " st16", " ld16+st16"};
    printf("%-8s ty %d parts %2d steps %2d bufs %d smem %3d KiB (%d blocks/SM, %4d blocks) order %d dir %+d%s: %7.1f us %5.1f%% of memcpy%s\n",
           name, ty, parts, STEPS, NBUF, smem / 1024, occ, groups * blocks_t, order, dir, wide_names[WIDE], us, 100.0 * c.ideal / us,
           e == cudaSuccess ? "" : cudaGetErrorString(e));
}
int main(int argc, char** argv) {
    const bool wide = argc > 1 && argv[1][0] == 'w';
    Ctx c; c.B = 4; c.L = 4096; c.D = 5376;   // the anchor 4x5376x4096 (D = 5376)
    const size_t n = (size_t)c.B * c.L * c.D, bytes = n * 2;
    __nv_bfloat16 *x, *d, *dx, *cpy; c.fb = 256u << 20;
    CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&d, bytes)); CK(cudaMalloc(&dx, bytes)); CK(cudaMalloc(&cpy, bytes));
    CK(cudaMalloc(&c.sink, 4)); CK(cudaMalloc(&c.flush, c.fb));
    CK(cudaMemset(x, 0x3c, bytes)); CK(cudaMemset(d, 0x3c, bytes));
    c.x = x; c.d = d; c.dx = dx;
    cudaEventCreate(&c.e0); cudaEventCreate(&c.e1);
    float tc[21];
    for (int r = 0; r < 21; ++r) { cudaMemsetAsync(c.flush, r, c.fb); cudaEventRecord(c.e0); cudaMemcpyAsync(cpy, x, bytes, cudaMemcpyDeviceToDevice); cudaEventRecord(c.e1); cudaEventSynchronize(c.e1); cudaEventElapsedTime(&tc[r], c.e0, c.e1); }
    const double copy_gbs = 2.0 * bytes / (median(tc, 21) * 1e-3) / 1e9;
    cudaDeviceProp pr; cudaGetDeviceProperties(&pr, 0);
    printf("%s, %d SMs: memcpy %.0f GB/s; %% below: 3 * %zu MB at that rate over the time\n", pr.name, pr.multiProcessorCount, copy_gbs, bytes >> 20);
    c.ideal = 3.0 * bytes / copy_gbs / 1e3;
    for (int round = 0; wide && round < 2; ++round) {   // the walk's shape, 16-byte copies and stores
        run<0, 8, 2, 0>(c, "move", 4, 9, 64, 0, -1);
        run<0, 8, 2, 1>(c, "move", 4, 9, 64, 0, -1);
        run<0, 8, 2, 2>(c, "move", 4, 9, 64, 0, -1);
        run<0, 8, 2, 3>(c, "move", 4, 9, 64, 0, -1);
        run<16, 8, 2, 0>(c, "fma16+t", 4, 9, 64, 0, -1);
        run<16, 8, 2, 1>(c, "fma16+t", 4, 9, 64, 0, -1);
        run<16, 8, 2, 2>(c, "fma16+t", 4, 9, 64, 0, -1);
        run<16, 8, 2, 3>(c, "fma16+t", 4, 9, 64, 0, -1);
    }
    for (int round = 0; !wide && round < 2; ++round) {
        run<0, 8, 2>(c, "move", 4, 9, 64, 0, -1);          // the walk's shape today
        run<0, 8, 2>(c, "move", 4, 9, 64, 1, -1);          // launch order: time parts of a group together
        run<0, 8, 2>(c, "move", 4, 9, 64, 0, +1);
        run<0, 8, 2>(c, "move", 4, 9, 40, 0, -1);          // 5 blocks an SM
        run<0, 8, 2>(c, "move", 4, 6, 64, 0, -1);          // fewer, longer walks (2 blocks an SM of work)
        run<0, 8, 2>(c, "move", 8, 9, 100, 0, -1);         // 8 time warps a block (2 an SM)
        run<0, 8, 2>(c, "move", 2, 9, 32, 0, -1);          // 2 time warps
        run<0, 16, 2>(c, "move", 4, 9, 64, 0, -1);         // deeper batches
        run<0, 8, 3>(c, "move", 4, 9, 64, 0, -1);          // two batches in flight
        run<0, 4, 4>(c, "move", 4, 9, 64, 0, -1);          // 4 buffers of 4 steps
        run<0, 8, 2>(c, "move", 4, 36, 64, 0, -1);         // many short walks (4 waves)
        run<16, 8, 2>(c, "fma16+t", 4, 9, 64, 0, -1);
        run<16, 8, 2>(c, "fma16+t", 4, 9, 64, 1, -1);
        run<16, 8, 3>(c, "fma16+t", 4, 9, 64, 0, -1);
        run<16, 8, 2>(c, "fma16+t", 4, 9, 40, 0, -1);
        run<16, 8, 2>(c, "fma16+t", 8, 9, 100, 0, -1);
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
