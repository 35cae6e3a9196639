// Host side of update.cu: picks the registers path (one token, the usual decoding step),
// the staged path (contiguous, aligned rows) or a thread per channel, and the channels
// per block.
#include <algorithm>

#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"
#include "params.h"

namespace cc1d::launch {

void update(Launcher& launcher, const Variant& variant, const UpdateArgs& args) {
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

    const int vec = util::vector_elems(variant.x_dtype);
    const std::int64_t elem = static_cast<std::int64_t>(dtype_size(variant.x_dtype));
    const std::int64_t S = p.state_len, T = p.seqlen;
    // Staged path: a block's channels of x, out and the state must each be one run of
    // memory starting 16-byte aligned. Chunks start at multiples of the chunk size (a
    // multiple of 128 channels), so aligned bases and row strides suffice.
    auto contiguous_rows = [vec](const Tensor& t, std::int64_t per_channel) {
        const bool run = per_channel == 1 ? t.strides[1] == 1 || t.shape[1] == 1
                                          : t.strides[2] == 1 && (t.strides[1] == per_channel || t.shape[1] == 1);
        return run && aligned16(t.data) && (t.shape[0] == 1 || t.strides[0] % vec == 0);
    };
    const bool staged = S + T > 0 && contiguous_rows(args.x, T) && contiguous_rows(args.out, T) &&
                        contiguous_rows(args.conv_state, S);
    // As many channels per thread as fit 32 KiB of shared memory, at most one x vector
    // each (T = 1), so a block moves kilobytes while its setup stays the same.
    constexpr std::int64_t threads = CC1D_UPDATE_THREADS;
    auto shared_bytes = [&](std::int64_t chunk) {
        return (util::ceil_div(chunk * S, vec) + util::ceil_div(chunk * T, vec)) * vec * elem;
    };
    std::int64_t chunk = threads * vec;
    while (chunk > threads && shared_bytes(chunk) > 32 * 1024) chunk -= threads;
    device::Dim3 block;
    unsigned shared = 0;
    // Registers path: a thread per 16-byte vector of channels (update.cu).
    const bool one_token_plain_state =
        T == 1 && S == variant.width - 1 && S > 0 && !variant.cache_seqlens && variant.width <= 8;
    if (staged && one_token_plain_state && p.dim % vec == 0 && p.batch * (p.dim / vec) < (std::int64_t(1) << 31)) {
        p.path = CC1D_UPD_REGISTERS;
        p.weight_vectors = args.weight.strides[1] == 1 && args.weight.strides[0] == variant.width &&
                           aligned16(args.weight.data);
        block.x = static_cast<unsigned>(threads);   // (p.chunk: unused by this kernel)
        launcher.launch(Kernel::registers, util::flat_grid(util::ceil_div(p.batch * (p.dim / vec), threads)), block, 0, &p,
                        sizeof(p));
        return;
    }
    if (staged && shared_bytes(chunk) <= 32 * 1024) {
        p.path = CC1D_UPD_STAGED;
        // Small D: one chunk of D rounded up to whole warps, no idle blocks.
        chunk = std::min(chunk, util::ceil_div(p.dim, vec * 32) * vec * 32);
        block.x = static_cast<unsigned>(std::min(threads, util::ceil_div(chunk, 32) * 32));
        shared = static_cast<unsigned>(shared_bytes(chunk));
    } else {
        // Thread per channel: CC1D_UPDATE_THREADS channels per block (fewer when D is small,
        // so a B = 1 decode step launches no idle warps).
        p.path = CC1D_UPD_PER_CHANNEL;
        chunk = std::min(threads, util::ceil_div(p.dim, 32) * 32);
        block.x = static_cast<unsigned>(chunk);
    }
    p.chunk = chunk;
    launcher.launch(Kernel::main, util::flat_grid(p.batch * util::ceil_div(p.dim, chunk)), block, shared, &p,
                    sizeof(p));
}

}  // namespace cc1d::launch
