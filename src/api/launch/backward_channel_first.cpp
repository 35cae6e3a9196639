// Host side of bwd_channel_first.cu: a block per (channel, part), walking the part's
// (batch, tile) units in order.
#include <algorithm>

#include "api/launch/backward_plan.hpp"
#include "api/launch/launch_util.hpp"

namespace cc1d::launch {
namespace backward {
namespace {

// Dynamic shared memory as bf_carve in the kernel lays it out for a tile of tile_vecs
// vectors (threads * ilp but in the module of rows off 16-byte boundaries).
unsigned shared_bytes(const Variant& v, int threads, int tile_vecs, int vec) {
    const int k = v.width - 1;
    const int halo = (k + vec - 1) / vec;
    const int gpad = (k + 3) / 4 * 4;
    const bool g_is_dout = v.activation != Activation::silu && v.x_dtype == DType::fp32;   // BF_G_IS_DOUT
    // x̃: history, tile, K after; 16-bit tiles and dout at 128-byte boundaries (kBfXLead, kBfXVecs)
    const bool sixteen_bit = v.x_dtype != DType::fp32;
    const int x_lead = sixteen_bit ? 8 : halo, x_round = sixteen_bit ? 8 : 1;
    int bytes = (x_lead + tile_vecs + halo + x_round - 1) / x_round * x_round * 16;
    bytes += (tile_vecs + halo) * 16 * (g_is_dout ? 2 : 1);   // dout: tile, K after (and the next unit's)
    // g: planes of 16-byte quarters, or where it stays in registers (BF_G_IN_REGISTERS) a slot
    // of its first K a warp and one for the K after the tile
    const bool g_in_registers =
        CC1D_BWD_CF_G_IN_REGISTERS(sixteen_bit, v.activation == Activation::silu, v.seq_idx, v.shifted_rows, k);
    if (g_in_registers) bytes += (threads / 32 + 1) * gpad * 4;
    else if (!g_is_dout) bytes += vec / 4 * (tile_vecs + (gpad + vec - 1) / vec) * 16;
    if (v.seq_idx) bytes += ((tile_vecs + halo) * vec * CC1D_SEQ_MASK_BYTES(v.width) + 15) / 16 * 16;   // seq masks
    if (v.final_states) bytes += gpad * 4;              // dfinal
    bytes += threads / 32 * (v.width + 1) * 4;          // per-warp sums
    return static_cast<unsigned>(bytes);
}

// The dynamic shared memory a block may use without opting in to more (both vendors).
constexpr unsigned kSharedLimit = 48 * 1024;

// Threads (a multiple of 64, so whole warps on both vendors) and vectors per thread for
// one tile: grow until the tile covers the row, so short rows leave few threads idle,
// vectors per thread first (they share a thread's per-tile work), within kSharedLimit.
// fp32 rows without SiLU that two tiles of 64 threads cover stay at 64 threads (two tiles
// a row rather than one of 128): the same number of blocks, each half the size, so twice
// as many fit on an SM at once. On an H200, 8x2048x1024 fp32 (2048 blocks, ~1300
// resident at 128 threads) ran 4-6% faster that way (docs/perf.md, entry 24); rows of
// more tiles lost 7-12%, so longer rows still grow. With SiLU, whose kernel keeps g in
// registers (entry 153), one tile of 128 threads is the faster: 1.2-1.5% at widths 2-4
// on an H100 (entry 154; with g in shared memory two small tiles had won at width 2).
// 16-bit tiles were not measured that way and keep growing.
void size_tile(const Variant& v, std::int64_t row_vectors, int vec, int max_ilp, int& threads, int& ilp) {
    const int elem_bytes = static_cast<int>(dtype_size(v.x_dtype));
    const bool two_small_tiles = elem_bytes == 4 && row_vectors <= 2 * 64 * max_ilp && v.activation != Activation::silu;
    const int max_threads = two_small_tiles ? 64 : CC1D_BWD_CF_THREADS;
    threads = 64;
    ilp = 1;
    while (std::int64_t(threads) * ilp < row_vectors) {
        int more_threads = threads, more_ilp = ilp;
        if (ilp < max_ilp) ++more_ilp;
        else if (threads < max_threads) more_threads *= 2;
        else break;
        if (shared_bytes(v, more_threads, more_threads * more_ilp, vec) > kSharedLimit) break;
        threads = more_threads;
        ilp = more_ilp;
    }
}

}  // namespace

Plan plan_channel_first(const Variant& variant, const BackwardArgs& args, int sm_count, bool fast_memory) {
    return plan_channel_first(variant, args, sm_count, fast_memory, follows_own_boundaries(variant, args));
}

Plan plan_channel_first(const Variant& variant, const BackwardArgs& args, int sm_count, bool fast_memory,
                        bool own_boundaries) {
    const std::int64_t batch = args.x.shape[0], dim = args.x.shape[1], seqlen = args.x.shape[2];
    const int vec = util::vector_elems(variant.x_dtype);
    Plan plan;
    // Tiles that follow x's rows' own boundaries start up to vec - 1 positions before a
    // row (bwd_channel_first.cu, BF_OWN_BOUNDARIES) and cover L positions all the same,
    // the vectors of an aligned row: a row's last tile leaves up to its lead of positions
    // after it, which the kernel takes from the tile's halo (the row's tail, BF_ROW_TAIL).
    // Width 1 has no halo: its tiles cover the lead's room too.
    const std::int64_t lead_room = own_boundaries && variant.width == 1 ? util::lead_room(args.x) : 0;
    const std::int64_t row_vectors = util::ceil_div(seqlen + lead_room, vec);
    const int elem_bytes = static_cast<int>(dtype_size(variant.x_dtype));
    int threads = 0;
    size_tile(variant, row_vectors, vec, CC1D_BWD_CF_ILP(elem_bytes), threads, plan.ilp);
    // There, tiles of up to CC1D_BWD_CF_OWN_ILP vectors a thread where they save a row a
    // tile (4x5376x4100 in 16-bit: one of 513 vectors, not a second of one; with room for
    // the lead, 4x5376x4095 ran 15% faster that way on an H200 with SiLU, 11% without,
    // docs/perf.md entry 124).
    if (own_boundaries) {
        int wide_threads = 0, wide_ilp = 0;
        size_tile(variant, row_vectors, vec, CC1D_BWD_CF_OWN_ILP(elem_bytes), wide_threads, wide_ilp);
        const std::int64_t wide_tiles = util::ceil_div(row_vectors, std::int64_t(wide_threads) * wide_ilp);
        if (wide_tiles < util::ceil_div(row_vectors, std::int64_t(threads) * plan.ilp)) {
            threads = wide_threads;
            plan.ilp = wide_ilp;
        }
    }
    // Enough blocks for ~kBytesInFlightPerSm of loads per multiprocessor (each thread has
    // ilp vectors of x and of dout in flight).
    constexpr std::int64_t kBytesInFlightPerSm = 48 * 1024;
    auto wanted_blocks = [&] {
        const std::int64_t block_bytes = std::int64_t(threads) * plan.ilp * 2 * 16;
        return std::int64_t(std::max(sm_count, 1)) * util::ceil_div(kBytesInFlightPerSm, block_bytes);
    };
    // Where the channels alone fall short of that, tiles of at most 2 vectors a thread:
    // more, shorter units to split over blocks. On an H200, 4x256x4096 in 16-bit ran 6%
    // faster that way with SiLU (docs/perf.md, entry 73) and 5% without (entry 78).
    if (plan.ilp > 2 && dim < wanted_blocks()) size_tile(variant, row_vectors, vec, 2, threads, plan.ilp);
    // 16-bit tiles by cp.async (on devices that have it; bwd_channel_first.cu,
    // BF_CAN_STAGE_ASYNC): with SiLU always; without it where a thread takes more vectors
    // than the kernel holds in registers (CC1D_BWD_CF_REG_ILP), or where DRAM is fast. On
    // an H200 cp.async ran 5-6% faster on 4x5376x4096 and on 8x2048x1024 at width 4; on an
    // H100 as fast on 4x5376x4096, 5-6% slower on 8x2048x1024 (docs/perf.md, entries 78-79).
    plan.stage_async = elem_bytes == 2 &&
                       (variant.activation == Activation::silu || fast_memory || plan.ilp > CC1D_BWD_CF_REG_ILP);
    plan.block.x = static_cast<unsigned>(threads);
    // At least one tile: with L == 0 tile 0 still turns dfinal_states into dinitial_states.
    plan.tiles = std::max<std::int64_t>(1, util::ceil_div(row_vectors, std::int64_t(threads) * plan.ilp));
    // Tiles that follow the rows' own boundaries take the vectors a row needs, split evenly
    // over the row's tiles (the kernel reads the tile's length, not the block's slots:
    // bwd_channel_first.cu): a row that passes the block's slots by a vector or two leaves
    // no shared memory idle for the slots it does not fill (4x5376x4100 in 16-bit: 513
    // vectors, not 640). So (tiles - 1) * tile_vecs < row_vectors <= tiles * tile_vecs:
    // past width 1 every tile starts before the row end, and a row's tail is under a vector.
    const std::int64_t tile_vecs = own_boundaries
                                       ? std::max<std::int64_t>(1, util::ceil_div(row_vectors, plan.tiles))
                                       : std::int64_t(threads) * plan.ilp;
    plan.ilp = static_cast<int>(util::ceil_div(tile_vecs, std::int64_t(threads)));
    plan.shared_bytes = shared_bytes(variant, threads, static_cast<int>(tile_vecs), vec);
    plan.tile_len = tile_vecs * vec;
    plan.channel_groups = dim;
    // seq_idx: a row of masks a batch in the workspace (the masks kernel writes them, the
    // blocks read them a vector at a time, up to the vector holding position L - 1).
    if (variant.seq_idx) plan.seq_mask_stride = util::ceil_div(seqlen, std::int64_t(16)) * 16;

    // The wanted blocks, split along (batch, tile) only as far as the channels alone fall
    // short: every extra part costs a row of partial sums and, past one part, the reduce
    // kernel (one more launch).
    constexpr std::int64_t kFewUnits = 2;
    const std::int64_t units = batch * plan.tiles;
    std::int64_t wanted_parts = util::ceil_div(wanted_blocks(), std::max<std::int64_t>(dim, 1));
    // fp32 calls whose channels alone fill several waves: walks of at most kDrainUnits
    // units. A block holds its multiprocessor slot for its whole walk, so the grid's last
    // wave drains over one walk's time with ever fewer blocks loading; shorter walks
    // shorten that drain for the price of partial rows and the reduce launch. 4x5376x4096
    // fp32 (16 units a channel, 3.4 waves) ran 1.6% / 0.6% faster without SiLU and 4.1% /
    // 4.4% with it in 4 parts on an H200 / H100; 16-bit calls, issue-bound, lost 2-17% in
    // more parts (a block's set-up and sums weigh more there), and calls under a wave lost
    // too (docs/perf.md, entry 81). Fewer multiprocessors never give fewer parts here, more
    // never fewer in the rule above: backward_workspace_bytes plans with both extremes.
    constexpr std::int64_t kDrainUnits = 4;
    constexpr std::int64_t kDrainChannelsPerSm = 24;   // 3 waves of 8 blocks an SM
    if (elem_bytes == 4 && dim >= kDrainChannelsPerSm * std::max(sm_count, 1))
        wanted_parts = std::max(wanted_parts, util::ceil_div(units, kDrainUnits));
    wanted_parts = std::clamp<std::int64_t>(wanted_parts, 1, std::max<std::int64_t>(units, 1));
    // Two units per block cost less than a reduce launch (2x64x128 ran 4-19% slower in two
    // parts on an H100); four do not (4x256x512 4-14% faster in parts, with overlapped
    // launches; 0-5% without them, entry 23). docs/perf.md entry 42.
    plan.units_per_part = units <= kFewUnits ? std::max<std::int64_t>(units, 1)
                                             : std::max<std::int64_t>(1, util::ceil_div(units, wanted_parts));
    plan.parts = std::max<std::int64_t>(1, util::ceil_div(units, plan.units_per_part));
    return plan;
}

}  // namespace backward

void backward_channel_first(Launcher& launcher, const Variant& variant, const BackwardArgs& args) {
    backward::Plan plan =
        backward::plan_channel_first(variant, args, launcher.multiprocessor_count(), util::fast_memory(launcher));
    // (The driver's answer costs ~0.35 us of host time on an H100 host, a tenth of a
    // launch: asked on every such call, not kept.)
    if (backward::may_sum_in_clusters(plan) && launcher.cluster_launches())
        plan.cluster_sums = backward::sums_in_clusters(
            plan, launcher.resident_clusters(Kernel::main, plan.block, plan.shared_bytes, static_cast<unsigned>(plan.parts)));
    backward::run(launcher, variant, args, plan, backward::make_params(variant, args));
}

}  // namespace cc1d::launch
