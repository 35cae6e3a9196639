// Host side of fwd_channel_first.cu: one block per (row, tile along L).
#include <algorithm>

#include "api/launch/launch.hpp"
#include "api/launch/launch_util.hpp"
#include "common/fail.hpp"
#include "params.h"

namespace cc1d::launch {

namespace {

// Threads a channel: enough for the row, so short rows (L = 128) leave few threads idle;
// a power of two that gives the block (`rows` channels) from a warp up to
// CC1D_FWD_CF_THREADS threads (the kernel reads blockDim.x).
int threads_for_row(std::int64_t seqlen, int elems_per_thread, int rows) {
    int threads = 32 / rows;
    while (threads * rows < CC1D_FWD_CF_THREADS && std::int64_t(threads) * elems_per_thread < seqlen) threads *= 2;
    return threads;
}

// The staged kernel of the module of rows off 16-byte boundaries: tiles of up to ilp + 1
// vectors a thread (fwd_channel_first.cu, kCfIlp), never fewer than ilp (the kernel's
// first ilp rounds are whole). The threads of the main module's rule (a power of two from
// a warp up to CC1D_FWD_CF_THREADS that covers the row at ilp vectors each), then one
// round more where that leaves a tile of one warp instead of two, and a row's fewest tiles
// of at most ilp + 1 vectors a thread, split evenly, where each keeps at least ilp. On an
// H200 (bf16 SiLU; docs/perf.md entry 126): 4x2048x1031 (130 vectors with the lead) 16%
// faster in a warp's tile than in 64 threads, 4x2048x1100 13%; 4x5376x4099 8% faster in
// one tile a row than with a second of two vectors, fp32 there 2% in three tiles than in
// five; 4x2048x2055 6% slower at 64 threads than at 128 (not taken), 2x1024x8199 2% slower
// in two tiles of 513 vectors than in three of 512, 512 and 2 (taken all the same).
struct OwnTile {
    int threads;
    std::int64_t vecs, tiles;
};
OwnTile own_boundary_tile(std::int64_t row_vectors, int ilp) {
    const int threads = threads_for_row(row_vectors, ilp, 1);   // (counted in vectors)
    if (threads == 64 && 32 * (ilp + 1) >= row_vectors) return {32, row_vectors, 1};
    const std::int64_t slots = std::int64_t(threads) * ilp;
    const std::int64_t tiles = std::max<std::int64_t>(1, util::ceil_div(row_vectors, std::int64_t(threads) * (ilp + 1)));
    const std::int64_t vecs = util::ceil_div(row_vectors, tiles);
    if (vecs >= slots) return {threads, vecs, tiles};
    return {threads, slots, std::max<std::int64_t>(1, util::ceil_div(row_vectors, slots))};
}

// Channels a block computes: with seq_idx CC1D_FWD_CF_SEQ_ROWS (a power of two, so a
// warp's worth of threads splits evenly), which share the tile's ids; otherwise one.
int rows_per_block(const Variant& variant) {
    return variant.seq_idx ? CC1D_FWD_CF_SEQ_ROWS(static_cast<int>(dtype_size(variant.x_dtype))) : 1;
}

// The cp.async-staged kernel (fwd_channel_first.cu): with seq_idx on every device, without
// it where DRAM is fast. Without seq_idx, on an H200, with its tile at a 128-byte
// boundary, it ran every anchor shape but 4x5376x4096 2-7% faster in every dtype,
// 4x5376x4096 within +-0.7% (docs/perf.md, entry 86); devices of slower DRAM keep the
// first kernel: on an H100 the staged one, before that alignment, ran fp32 SiLU 3% slower
// (entry 65). With seq_idx (entry 110) it frees the registers that held the tile, and a
// multiprocessor holds more blocks: 4x5376x4096 bf16 SiLU 9.5% faster on an H200, 10.3%
// on an H100, every anchor shape faster on both but 4x256x4096 (+1.2% on the H200).
bool takes_staged_kernel(Launcher& launcher, const Variant& variant, const cc1d_fwd_params& p) {
    // The variant and the rows first: only calls that could take it ask for the bandwidth.
    return p.vector_ok != 0 && (variant.seq_idx || util::fast_memory(launcher));
}

// Rows that x's and out's vectors can follow from each row's own 16-byte boundary (some
// of them off it or not).
bool rows_of_own_boundaries(const ForwardArgs& args) {
    return util::unit_stride(args.x, 2) && util::unit_stride(args.out, 2) && util::element_aligned(args.x) &&
           util::element_aligned(args.out);
}

bool aligned_rows(const ForwardArgs& args) {
    return util::rows_vectorizable(args.x, 2) && util::rows_vectorizable(args.out, 2);
}

}  // namespace

bool forward_channel_first_shifted_rows(const ForwardArgs& args) {
    return !aligned_rows(args) && rows_of_own_boundaries(args);
}

void forward_channel_first(Launcher& launcher, const Variant& variant, const ForwardArgs& args) {
    cc1d_fwd_params p = util::forward_params(args);
    const int vec = util::vector_elems(variant.x_dtype);
    const int ilp = CC1D_FWD_CF_ILP(dtype_size(variant.x_dtype));
    const int rows = rows_per_block(variant);
    // Rows on 16-byte boundaries load and store 16-byte vectors. So do rows of unit stride
    // anywhere in the module of rows off such boundaries: their tiles follow x's row's own
    // boundaries, starting up to vec - 1 elements before position 0 (one more tile may be
    // needed), and out's row stores aligned vectors where it sits at the same offset
    // (fwd_channel_first.cu).
    const bool own_boundaries = variant.normalized().shifted_rows;
    // (The module's stores take out's rows as of unit stride: forward_takes_shifted_rows
    // gives it no other call.)
    if (own_boundaries && !rows_of_own_boundaries(args))
        fail(ErrorCode::unsupported, "forward: the module of rows off 16-byte boundaries needs x and out of unit stride "
                                     "along L at whole-element addresses (an internal error: it was picked for other rows)");
    p.vector_ok = aligned_rows(args) || own_boundaries;
    const bool staged = takes_staged_kernel(launcher, variant, p);
    const std::int64_t lead_room = own_boundaries ? util::lead_room(args.x) : 0;
    int threads = 0;
    std::int64_t tile_vecs = 0;
    if (own_boundaries && staged) {
        const OwnTile tile = own_boundary_tile(util::ceil_div(p.seqlen + lead_room, vec), ilp);
        threads = tile.threads;
        tile_vecs = tile.vecs;
        p.tiles = tile.tiles;
    } else {   // (the first kernel's tile: its threads' ilp vectors each)
        threads = threads_for_row(p.seqlen + lead_room, ilp * vec, rows);   // a row's
        tile_vecs = std::int64_t(threads) * ilp;
        // At least one tile: with L == 0 the block still writes final_states (from the halo).
        p.tiles = std::max<std::int64_t>(1, util::ceil_div(p.seqlen + lead_room, tile_vecs * vec));
    }
    p.chunk_len = tile_vecs * vec;   // (read by the module of rows off 16-byte boundaries)

    // Shared memory as the kernel lays it out: [halo + tile] vectors a channel, then with
    // seq_idx one int per element of that span.
    const int halo = (variant.width - 1 + vec - 1) / vec;
    const std::int64_t span_vecs = halo + tile_vecs;
    std::int64_t shared = rows * span_vecs * 16;
    if (variant.seq_idx) shared += span_vecs * vec * 4;

    const std::int64_t blocks = p.batch * util::ceil_div(p.dim, std::int64_t(rows)) * p.tiles;
    // The staged kernel's tiles start at 128-byte boundaries: each channel's halo is padded
    // to 8 vectors, and with seq_idx the halo's ids to 32.
    if (staged) {
        shared += rows * ((halo + 7) / 8 * 8 - halo) * 16;
        if (variant.seq_idx) shared += ((halo * vec + 31) / 32 * 32 - halo * vec) * 4;
    }
    device::Dim3 block;
    block.x = static_cast<unsigned>(threads * rows);
    launcher.launch(staged ? Kernel::staged : Kernel::main, util::flat_grid(blocks), block,
                    static_cast<unsigned>(shared), &p, sizeof(p));
}

}  // namespace cc1d::launch
