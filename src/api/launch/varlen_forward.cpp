// Host side of varlen_fwd.cu. The host never reads cu_seqlens (device memory), so the
// grid tiles the packed token axis like the forward kernels tile time. With conv_states
// a second, small kernel (one thread per (sequence, channel)) rewrites the first outputs
// of each sequence that reads a history and writes the slots back, after every block of
// the first has run; it may start while the first still runs (an overlapped launch: the
// kernel waits for the first before its stores).
#include <algorithm>

#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"
#include "params.h"

namespace cc1d::launch {

namespace {

cc1d_varlen_params varlen_params(const VarlenForwardArgs& args) {
    cc1d_varlen_params p{};
    p.x = args.x.data;
    p.weight = args.weight.data;
    p.bias = args.bias.present() ? args.bias.data : nullptr;
    p.out = args.out.mutable_data();
    p.cu_seqlens = static_cast<const int*>(args.cu_seqlens.data);
    p.conv_states = args.conv_states.present() ? args.conv_states.mutable_data() : nullptr;
    p.cache_indices = args.cache_indices.present() ? static_cast<const int*>(args.cache_indices.data) : nullptr;
    p.has_initial_state =
        args.has_initial_state.present() ? static_cast<const int*>(args.has_initial_state.data) : nullptr;
    // x and out: logical (D, total) whatever the memory order.
    p.num_seqs = args.cu_seqlens.shape[0] - 1;
    p.dim = args.x.shape[0];
    p.total = args.x.shape[1];
    p.cu_stride = args.cu_seqlens.strides[0];
    if (args.cache_indices.present()) p.indices_stride = args.cache_indices.strides[0];
    if (args.has_initial_state.present()) p.has_init_stride = args.has_initial_state.strides[0];
    p.x_stride_d = args.x.strides[0];
    p.x_stride_l = args.x.strides[1];
    p.out_stride_d = args.out.strides[0];
    p.out_stride_l = args.out.strides[1];
    if (args.conv_states.present()) {
        p.state_stride_b = args.conv_states.strides[0];
        p.state_stride_d = args.conv_states.strides[1];
        p.state_stride_l = args.conv_states.strides[2];
        p.state_len = args.conv_states.shape[2];
    }
    p.w_stride_d = args.weight.strides[0];
    p.w_stride_k = args.weight.strides[1];
    if (args.bias.present()) p.bias_stride = args.bias.strides[0];
    p.pad_slot_id = args.pad_slot_id;
    return p;
}

// Same block size rule as the channel-first forward (forward_channel_first.cpp).
int threads_for_row(std::int64_t length, int elems_per_thread) {
    int threads = 32;
    while (threads < CC1D_FWD_CF_THREADS && std::int64_t(threads) * elems_per_thread < length) threads *= 2;
    return threads;
}

}  // namespace

void varlen_forward(Launcher& launcher, const Variant& variant, const VarlenForwardArgs& args) {
    cc1d_varlen_params p = varlen_params(args);
    // No channels: no output and no slot element to write (and no block size below to
    // divide by).
    if (p.dim == 0) return;
    const int vec = util::vector_elems(variant.x_dtype);
    device::Dim3 block;
    std::int64_t blocks = 0;
    unsigned shared = 0;
    if (variant.layout == Layout::channel_last) {
        const std::int64_t rows =
            CC1D_FWD_CL_TILE_ROWS(variant.width, static_cast<std::int64_t>(dtype_size(variant.x_dtype)));
        p.tiles = util::ceil_div(p.total, rows);
        p.chunk_len = rows;
        p.vector_ok = util::rows_vectorizable(args.x, 0) && util::rows_vectorizable(args.out, 0);
        block.x = CC1D_FWD_CL_THREADS;
        blocks = util::ceil_div(p.dim, CC1D_FWD_CL_CHANNELS) * p.tiles;
    } else {
        const int ilp = CC1D_FWD_CF_ILP(dtype_size(variant.x_dtype));
        const int threads = threads_for_row(p.total, ilp * vec);
        const std::int64_t tile_len = std::int64_t(threads) * ilp * vec;
        p.vector_ok = util::unit_stride(args.x, 1) && util::unit_stride(args.out, 1);
        // With vectors, a row's tiles start up to vec - 1 elements before its first token
        // (at the row's first 16-byte boundary): one more tile may be needed, unless every
        // row starts on a boundary.
        const bool lead_possible = p.vector_ok && !util::rows_vectorizable(args.x, 1);
        p.tiles = util::ceil_div(p.total + (lead_possible ? vec - 1 : 0), tile_len);
        p.chunk_len = tile_len;
        block.x = static_cast<unsigned>(threads);
        blocks = p.dim * p.tiles;
        const int halo = (variant.width - 1 + vec - 1) / vec;
        shared = static_cast<unsigned>((halo + std::int64_t(threads) * ilp) * 16);
    }
    if (blocks > 0) launcher.launch(Kernel::main, util::flat_grid(blocks), block, shared, &p, sizeof(p));

    if (variant.initial_states && p.num_seqs > 0 && variant.width > 1) {
        device::Dim3 states_block;
        states_block.x = static_cast<unsigned>(std::min<std::int64_t>(CC1D_VARLEN_FINISH_THREADS, util::ceil_div(p.dim, 32) * 32));
        // (Plain when it is the call's first kernel: the launcher sees to that.)
        launcher.launch_overlapped(Kernel::finish, util::flat_grid(p.num_seqs * util::ceil_div(p.dim, states_block.x)),
                                   states_block, 0, &p, sizeof(p));
    }
}

}  // namespace cc1d::launch
