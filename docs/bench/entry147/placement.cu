// Where a grid's blocks land in thread-block clusters: 128-thread blocks with 34 KiB of
// static shared memory (as the channel-last tile kernel), grid (groups, parts) in
// clusters of (1, parts), each policy; prints how many SMs hold 0, 1, 2, ... blocks.
// nvcc -arch=sm_90 -o placement placement.cu -lcuda && ./placement
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>

__global__ void where(unsigned* sm) {
    __shared__ float pad[34 * 256];
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    pad[threadIdx.x] = (float)id;
    __syncthreads();
    // hold the SM a while so every block is resident together
    long long t0 = clock64();
    while (clock64() - t0 < 2000000) {}
    if (threadIdx.x == 0) sm[blockIdx.y * gridDim.x + blockIdx.x] = id + (pad[1] < 0 ? 1 : 0);
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    struct Shape { unsigned groups, parts; } shapes[] = {{32, 8}, {64, 4}, {16, 8}, {40, 6}};
    for (auto s : shapes)
        for (int policy = 0; policy < 3; ++policy) {
            unsigned* d;
            const unsigned n = s.groups * s.parts;
            cudaMalloc(&d, n * sizeof(unsigned));
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(s.groups, s.parts, 1);
            cfg.blockDim = dim3(128, 1, 1);
            cudaLaunchAttribute attr[2];
            int count = 0;
            if (policy > 0) {
                attr[0].id = cudaLaunchAttributeClusterDimension;
                attr[0].val.clusterDim.x = 1, attr[0].val.clusterDim.y = s.parts, attr[0].val.clusterDim.z = 1;
                attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
                attr[1].val.clusterSchedulingPolicyPreference =
                    policy == 1 ? cudaClusterSchedulingPolicySpread : cudaClusterSchedulingPolicyLoadBalancing;
                count = 2;
            }
            cfg.attrs = attr;
            cfg.numAttrs = count;
            cudaError_t e = cudaLaunchKernelEx(&cfg, where, d);
            cudaDeviceSynchronize();
            std::vector<unsigned> h(n);
            cudaMemcpy(h.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
            std::vector<int> per(sms, 0);
            for (unsigned v : h) if (v < (unsigned)sms) per[v]++;
            std::vector<int> hist(16, 0);
            for (int c : per) hist[c < 15 ? c : 15]++;
            printf("groups %u parts %u %-13s %s: SMs holding 0..6 blocks:", s.groups, s.parts,
                   policy == 0 ? "no clusters" : policy == 1 ? "spread" : "load-balance", cudaGetErrorString(e));
            for (int i = 0; i <= 6; ++i) printf(" %d", hist[i]);
            printf("\n");
            cudaFree(d);
        }
    return 0;
}
