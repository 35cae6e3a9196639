// Host side of the channel-last forward (fwd_channel_last.cu): one block of
// CC1D_FWD_CL_THREADS per tile of CC1D_FWD_CL_CHANNELS channels x CC1D_FWD_CL_TILE_ROWS
// time steps (8 KiB of x, 16 KiB for wide kernels), every dtype, width and feature.
#include <algorithm>

#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"
#include "params.h"

namespace cc1d::launch {

bool forward_channel_last_vector_rows(const ForwardArgs& args) {
    return util::rows_vectorizable(args.x, 1) && util::rows_vectorizable(args.out, 1);
}

void forward_channel_last(Launcher& launcher, const Variant& variant, const ForwardArgs& args) {
    cc1d_fwd_params p = util::forward_params(args);
    const int x_bytes = static_cast<int>(dtype_size(variant.x_dtype));
    // The kernel's tile height: CHUNK steps for 16-bit x, CHUNK / 2 for fp32 (twice that
    // from width 9 on).
    const std::int64_t rows = CC1D_FWD_CL_TILE_ROWS(variant.width, x_bytes);
    // At least one tile: with L == 0 the block still writes final_states (from the halo).
    p.tiles = std::max<std::int64_t>(1, util::ceil_div(p.seqlen, rows));
    p.chunk_len = rows;
    p.vector_ok = forward_channel_last_vector_rows(args);

    const std::int64_t groups = util::ceil_div(p.dim, CC1D_FWD_CL_CHANNELS);
    device::Dim3 block;
    block.x = CC1D_FWD_CL_THREADS;
    launcher.launch(Kernel::main, util::flat_grid(groups * p.tiles * p.batch), block, 0, &p, sizeof(p));
}

}  // namespace cc1d::launch
