// Host side of update.cu: one thread per (row, channel), CC1D_UPDATE_THREADS channels per
// block (fewer when D is small, so a B = 1 decode step launches no idle warps).
#include <algorithm>

#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"
#include "params.h"

namespace cc1d::launch {

void update(Launcher& launcher, const Variant& /*variant*/, const UpdateArgs& args) {
    cc1d_update_params p{};
    p.x = args.x.data;
    p.conv_state = args.conv_state.mutable_data();
    p.weight = args.weight.data;
    p.bias = args.bias.present() ? args.bias.data : nullptr;
    p.out = args.out.mutable_data();
    p.cache_seqlens = args.cache_seqlens.present() ? static_cast<const int*>(args.cache_seqlens.data) : nullptr;
    p.conv_state_indices =
        args.conv_state_indices.present() ? static_cast<const int*>(args.conv_state_indices.data) : nullptr;
    p.batch = args.x.shape[0];
    p.dim = args.x.shape[1];
    p.seqlen = args.x.shape[2];
    p.state_len = args.conv_state.shape[2];
    p.x_stride_b = args.x.strides[0];
    p.x_stride_d = args.x.strides[1];
    p.x_stride_l = args.x.strides[2];
    p.out_stride_b = args.out.strides[0];
    p.out_stride_d = args.out.strides[1];
    p.out_stride_l = args.out.strides[2];
    p.state_stride_b = args.conv_state.strides[0];
    p.state_stride_d = args.conv_state.strides[1];
    p.state_stride_l = args.conv_state.strides[2];
    p.w_stride_d = args.weight.strides[0];
    p.w_stride_k = args.weight.strides[1];
    if (args.bias.present()) p.bias_stride = args.bias.strides[0];
    if (args.cache_seqlens.present()) p.seqlens_stride = args.cache_seqlens.strides[0];
    if (args.conv_state_indices.present()) p.indices_stride = args.conv_state_indices.strides[0];
    p.pad_slot_id = args.pad_slot_id;

    const std::int64_t threads = std::min<std::int64_t>(CC1D_UPDATE_THREADS, util::ceil_div(p.dim, 32) * 32);
    device::Dim3 block;
    block.x = static_cast<unsigned>(threads);
    launcher.launch(Kernel::main, util::flat_grid(p.batch * util::ceil_div(p.dim, threads)), block, 0, &p, sizeof(p));
}

}  // namespace cc1d::launch
