// Host side of bwd_channel_last.cu: blocks of CC1D_BWD_CL_THREADS_X channel threads by
// a few time threads; each thread walks one (batch, chunk) unit backward in time. Calls
// of up to 2^27 elements (fp32: 2^25) of the variants that have a tile kernel run that
// instead (takes_tile; bwd_channel_last_tile.cu, a module of its own: Variant::tiled).
#include <algorithm>

#include "api/launch/backward_plan.hpp"
#include "api/launch/launch_util.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"

namespace cc1d::launch {
namespace backward {
namespace {

// Channels per thread, as bl_channels_per_thread() in the kernel: a 16-byte vector,
// at most CC1D_BWD_CL_MAX_CHANNELS, halved while the windows (channels x width registers
// each) exceed CC1D_BWD_CL_WINDOW.
int channels_per_thread(const Variant& v) {
    int c = std::min<int>(util::vector_elems(v.x_dtype), CC1D_BWD_CL_MAX_CHANNELS);
    while (c > 1 && c * v.width > CC1D_BWD_CL_WINDOW(static_cast<int>(dtype_size(v.x_dtype)))) c /= 2;
    return c;
}

// Blocks of 128 threads an SM holds: up to width 4 the kernel asks for
// CC1D_BWD_CL_BLOCKS_PER_SM (launch bounds) and its shared memory (<= 40 KiB of staged
// batches) allows 5. Wider variants ask for fewer (3 up to width 8, 1 beyond) but plan
// with 4, as they always have: no other plan was measured for them.
std::int64_t blocks_per_sm(const Variant& v) {
    return v.width <= 4 ? CC1D_BWD_CL_BLOCKS_PER_SM(static_cast<int>(dtype_size(v.x_dtype))) : 4;
}
// The shortest time chunk a small call is split into (see plan_channel_last).
constexpr std::int64_t kShortestChunk = 4;
// Walks shorter than kShortWalk only while a channel group keeps at most kShortWalkRows
// partial rows (docs/perf.md entries 40-41).
constexpr std::int64_t kShortWalk = 8;
constexpr std::int64_t kShortWalkRows = 64;
// Wave-fitting chunks shorter than kLongWalk steps become kLongWalk long while that grid
// keeps at least kLongWalkBlocksPerSm blocks per multiprocessor (docs/perf.md entry 47).
constexpr std::int64_t kLongWalk = 128;
constexpr double kLongWalkBlocksPerSm = 1.5;
// fp32 walks of kDrainChannelSteps / (channels a thread) steps where a wave-fitting walk
// is at least kDrainWaves times as long, so the grid runs about that many waves or more
// (see plan_channel_last).
constexpr std::int64_t kDrainChannelSteps = 256;
constexpr std::int64_t kDrainWaves = 4;

// Chunk lengths the wave-fitting rules choose are multiples of this many steps.
constexpr std::int64_t kChunkGranule = 8;

// Powers of two leave a wave up to half empty (4x5376x4096 in 16-bit: 336 of 528
// blocks, 16% occupancy). Given a chunk whose grid fits the wave, this is the shortest
// chunk (a multiple of kChunkGranule, never longer, never below CC1D_BWD_CL_MIN_CHUNK)
// whose grid still fits: as many tiles per row as the wave holds (504 blocks there).
// More multiprocessors never give a longer chunk, so parts stay monotonic in sm_count
// (backward_workspace_bytes relies on that).
std::int64_t fill_wave(std::int64_t chunk, std::int64_t seqlen, std::int64_t batch, std::int64_t wave,
                       std::int64_t channel_groups, std::int64_t units_per_part) {
    const std::int64_t parts = wave / std::max<std::int64_t>(channel_groups, 1);
    const std::int64_t tiles = parts * units_per_part / std::max<std::int64_t>(batch, 1);   // units <= parts * per part
    if (chunk >= seqlen || tiles < 1) return chunk;
    const std::int64_t shorter = util::ceil_div(util::ceil_div(seqlen, tiles), kChunkGranule) * kChunkGranule;
    // Never below CC1D_BWD_CL_MIN_CHUNK (a chunk already shorter stays as it is).
    return std::min(chunk, std::max<std::int64_t>(shorter, CC1D_BWD_CL_MIN_CHUNK));
}

// Calls of up to these many elements (B·L·D) run the tile kernel where the module has one.
// On an H200 (docs/perf.md, entry 104), against the register walk, 16-bit: 4x4096x512
// (2^23) 6-13% faster, 4x256x4096 9-14%, 4x256x512 19-24%, 3x1001x777 23%; 4x5376x4096
// (2^26.4) 2-7% slower, on the tile plans of that time. fp32: 4x256x512 16-17% faster,
// 4x256x4096 8-12%, 4x4096x512 6-7%, 2x2048x2048 5-13%. On an H100 since the 16-bit plans
// of 2 blocks an SM (entries 143, 146) and fp32's short parts (entry 144): 16-bit at 2^24
// and 2^25 4.1-8.8% faster at every width, with and without SiLU (entry 148), at 2^26
// (8x4096x2048, 2x2048x16384) 4.4-7.3% and at 4x5376x4096 2.5-5.3% (entry 149); fp32 at
// 2^25 (8x2048x2048, 8x4096x1024) 2.3-5.6% (entry 149; 3% slower in entry 141, before
// entry 144). Past these limits not measured on these plans, nor on an H200.
constexpr std::int64_t kTileMaxElements16Bit = std::int64_t(1) << 27;
constexpr std::int64_t kTileMaxElementsFp32 = std::int64_t(1) << 25;

}  // namespace

// Up to the limits above, for the variants that have the kernel; fp32 only with rows of
// whole 16-byte vectors (element-staged, 3x1001x777 fp32 ran 64% slower than the register
// walk, whose fp32 lanes load their channel's 4 bytes a step). Calls with seq_idx by the
// same limits (entries 158-159, H100, against the register walk): 8x2048x1024 widths 1-3
// 0.3-5.0% faster, fp32 SiLU 5.9%, 4x5376x4096 without SiLU 4.7-4.9%, fp16 SiLU widths 2-3
// 4.7-5.4%; 16-bit SiLU at width 4 since entry 159's id masks (and its plan below)
// 4x5376x4096 2.5% faster, 8x4096x1024 5.9%, 8x2048x1024 even, 4x4096x512 9.8%,
// 4x256x4096 10%.
// CC1D_DISABLE_BACKWARD_TILE=1 sends every call to the register walk (the GPU tests run
// their calls both ways).
bool tile_fits(const Variant& variant, const BackwardArgs& args) {
    if (!util::has_module(variant, &Variant::tiled)) return false;
    const bool fp32 = dtype_size(variant.x_dtype) == 4;
    if (args.x.numel() > (fp32 ? kTileMaxElementsFp32 : kTileMaxElements16Bit)) return false;
    return !fp32 || vector_rows(variant, args);
}

bool takes_tile(const Variant& variant, const BackwardArgs& args) {
    return tile_fits(variant, args) && !env::flag("CC1D_DISABLE_BACKWARD_TILE");
}

namespace {

// Blocks an SM the tile plan fills, where the kernel holds CC1D_BWD_CL_TILE_BLOCKS_PER_SM:
// in 16-bit a third of the wave, in longer walks. On an H100 (docs/perf.md, entries 143
// and 146), against the full wave: 4x4096x512 4-6% faster (4 parts of 8 units a channel
// group, was 11 of 3), 2x2048x2048 6-7%, 8x2048x1024 0.6-4.3% (8 of 16, was 22 of 6);
// 4x256x4096 (64 parts of 4, was 128 of 2) 1.5-3.7% faster in entry 146's runs, 1-2%
// slower in entry 143's sweep. The medium shape plans the same either way.
constexpr std::int64_t kTile16BitBlocksPerSm = 2;
// With seq_idx, tiles whose segments compare ids (sequence boundaries, padding) walk ~25%
// more instructions there, and at 2 blocks an SM (8 warps) each tile's barrier makes its
// other warps wait for them. At SiLU width 4, the costliest such walk, calls of up to 2^25
// elements fill 4 blocks an SM instead. On an H100 (docs/perf.md, entry 159; the bench's
// sequences, 1 to L/3 long), bf16 against 2 blocks: 4x4096x512 -11%, 8x2048x1024 -8% (fp16
// -5%), 8x4096x1024 -11%; 4x5376x4096 +3% (fewer, longer sequences there), so larger calls
// keep 2; 6 blocks gained less. Widths 2-3 and calls without SiLU (8x2048x1024) ran 0-3%
// slower at 4, and keep 2.
constexpr std::int64_t kTile16BitSeqIdxBlocksPerSm = 4;
constexpr std::int64_t kTile16BitSeqIdxFullerMaxElements = std::int64_t(1) << 25;
// 16-bit rows off 16-byte boundaries (the module of such rows) stage each tile through
// registers and wait for its loads there, so they fill the whole wave instead: on an H100
// (docs/perf.md, entry 160) 4x2051x1024 bf16 width 4 44-48% faster than on 2 blocks,
// 4x5377x4096 57%, 3x1001x777 width 3 49%.
constexpr std::int64_t kTileShiftedRowsBlocksPerSm = CC1D_BWD_CL_TILE_BLOCKS_PER_SM;

// fp32 goes the other way: its parts walk at most 3 units, in several waves where a wave
// would give them more. On an H100 (docs/perf.md, entry 144), against the wave's walks:
// 8x2048x1024 2.4-3.5% faster (43 parts of 3 units, 2,752 blocks, was 12 of 11),
// 2x2048x2048 0.8% (22 of 3, was 11 of 6), 4x4096x512 even (11 of 3, was 6 of 6); walks
// of 2 units lost up to 4.6% on 4x256x4096, of 4 up to 5.9% on 2x2048x2048.
constexpr std::int64_t kTileFp32MaxUnitsPerPart = 3;

}  // namespace

// The tile kernel (bwd_channel_last_tile.cu): blocks of CC1D_BWD_CL_TILE_CHANNELS
// channels (64 of 16-bit x, 32 of fp32) each walk units_per_part (batch row, tile) units
// in order. As many parts as the blocks above make, every part the same number of units:
// the blocks end together, and each emits one partial row however many tiles it walked.
Plan plan_channel_last_tile(const Variant& variant, const BackwardArgs& args, int sm_count) {
    const std::int64_t batch = args.x.shape[0], dim = args.x.shape[1], seqlen = args.x.shape[2];
    // Segments along time: the threads a tile has past its 32 lanes (one 4-byte word of a row each).
    constexpr std::int64_t kTileRows = CC1D_BWD_CL_TILE_STEPS * (CC1D_BWD_CL_THREADS / 32);
    const int elem_bytes = static_cast<int>(dtype_size(variant.x_dtype));
    const std::int64_t channels = CC1D_BWD_CL_TILE_CHANNELS(elem_bytes);
    Plan plan;
    plan.tile = true;
    plan.block.x = CC1D_BWD_CL_THREADS;
    plan.channel_groups = util::ceil_div(dim, channels);
    plan.tile_len = kTileRows;
    plan.tiles = std::max<std::int64_t>(1, util::ceil_div(seqlen, kTileRows));
    const std::int64_t units = std::max<std::int64_t>(1, batch * plan.tiles);
    const bool fuller = variant.seq_idx && variant.activation == Activation::silu && variant.width == 4 &&
                        args.x.numel() <= kTile16BitSeqIdxFullerMaxElements;
    const std::int64_t blocks_per_sm = elem_bytes == 4                ? CC1D_BWD_CL_TILE_BLOCKS_PER_SM
                                       : !vector_rows(variant, args) ? kTileShiftedRowsBlocksPerSm
                                       : fuller                      ? kTile16BitSeqIdxBlocksPerSm
                                                                     : kTile16BitBlocksPerSm;
    const std::int64_t blocks = std::int64_t(std::max(sm_count, 1)) * blocks_per_sm;
    const std::int64_t parts = std::clamp<std::int64_t>(blocks / std::max<std::int64_t>(plan.channel_groups, 1), 1, units);
    plan.units_per_part = util::ceil_div(units, parts);
    if (elem_bytes == 4) plan.units_per_part = std::min(plan.units_per_part, kTileFp32MaxUnitsPerPart);
    plan.parts = util::ceil_div(units, plan.units_per_part);
    return plan;
}

namespace {

// A tail for grids of long walks in one wave. Such walks start together but end apart,
// and each slot then idles to the end. So each row's last 1/kTailShare goes to walks of
// kTailLen steps whose blocks come after all the long walks' (bl_unit_of): the hardware
// hands them to the slots the long walks leave, as they leave them. On an H200
// (docs/perf.md, entry 111), 4x5376x4096 with SiLU and seq_idx: fp32 85.7% -> 90.9% of
// copy bandwidth (walks of 688 -> 600 steps), without SiLU 81.8% -> 91.4%, with both
// states 85.2% -> 90.1%, width 2 -1.7%; 2x4096x8192 fp32 -4.9%; fp32 width 8 -2.3%;
// 16-bit width 8 -3.3%, with seq_idx -8.9%; fp32 without seq_idx up to width 4, which the
// drain rule below walks in ~5 waves otherwise, 1.3-1.7% (H100 0.9-1.5%). Not 16-bit up
// to width 4, whose walks gained nothing with SiLU (+0.6%, seq_idx -0.9%) and lost 8%
// without it, nor past width 8 (width 16 +3%), nor kernels that hold more blocks an SM
// than the wave plans (add_tail). A tail of a quarter of a row gained the same or less;
// 128-step tail walks less.
constexpr std::int64_t kTailMinWalk = 256;
constexpr std::int64_t kTailLen = 64;
constexpr std::int64_t kTailShare = 8;

// Whether a variant's long walks get a tail (the measured ones above).
bool takes_tail(const Variant& v) {
    return (dtype_size(v.x_dtype) == 4 || v.width > 4) && v.width <= 8;
}

// Tail chunks a row of `seqlen` steps gets (0: none).
std::int64_t tail_tiles_for(const Variant& v, std::int64_t seqlen) {
    return takes_tail(v) ? seqlen / (kTailShare * kTailLen) : 0;
}

// Gives `plan` (one wave of walks of plan.tile_len steps, `threads_y` units a part) its
// tail where the rule above calls for one: walks at least kTailMinWalk long in a wave too
// full for another part, of a kernel that holds no more blocks an SM than the wave plans
// (`resident_blocks`, asked last).
void add_tail(Plan& plan, const Variant& v, std::int64_t batch, std::int64_t seqlen, std::int64_t wave, int threads_y,
              const ResidentBlocks& resident_blocks) {
    const std::int64_t tail_tiles = tail_tiles_for(v, seqlen);
    const std::int64_t long_parts = util::ceil_div(batch * plan.tiles, std::int64_t(threads_y));
    const bool full_wave = plan.channel_groups * (long_parts + 1) > wave;
    if (tail_tiles == 0 || plan.tile_len < kTailMinWalk || !full_wave) return;
    // A kernel that fits more blocks an SM than the wave plans takes the tail's first
    // blocks beside the long walks from the start, which then end later: on an H200,
    // 4x5376x4096 16-bit without SiLU (4 blocks, 3 planned) 8% slower with a tail, fp32
    // width 3 with SiLU and width 4 without it (5 blocks, 4 planned) 7% and 5% slower than
    // the drain rule, where fp32 width 4 with SiLU (4 blocks) ran 1.7% faster (entry 111).
    if (env::flag("CC1D_DISABLE_BACKWARD_TAIL")) return;   // (read only where a tail would come)
    if (resident_blocks(plan.block, plan.shared_bytes) > blocks_per_sm(v)) return;
    plan.tail_len = kTailLen;
    plan.tail_tiles = tail_tiles;
    plan.tail_start = seqlen - tail_tiles * kTailLen;
    // The long walks keep their count, each shorter by its share of the tail.
    plan.tile_len = util::ceil_div(util::ceil_div(plan.tail_start, plan.tiles), kChunkGranule) * kChunkGranule;
    plan.tiles = util::ceil_div(plan.tail_start, plan.tile_len);   // (no empty chunk)
}

// The answer `resident_blocks` for every block shape (the plans' forms that are given it).
ResidentBlocks same_residency(int resident_blocks) {
    return [resident_blocks](device::Dim3, unsigned) { return resident_blocks; };
}

}  // namespace

std::int64_t channel_last_tail_parts(const Variant& variant, const BackwardArgs& args) {
    const int threads_y = CC1D_BWD_CL_THREADS / CC1D_BWD_CL_THREADS_X;
    // (+1: a part may hold the last long units and the first tail units)
    return util::ceil_div(args.x.shape[0] * tail_tiles_for(variant, args.x.shape[2]), std::int64_t(threads_y)) + 1;
}

Plan plan_channel_last(const Variant& variant, const BackwardArgs& args, int sm_count, int resident_blocks) {
    return plan_channel_last(variant, args, sm_count, same_residency(resident_blocks));
}

Plan plan_channel_last(const Variant& variant, const BackwardArgs& args, int sm_count,
                       const ResidentBlocks& resident_blocks) {
    if (takes_tile(variant, args)) return plan_channel_last_tile(variant, args, sm_count);
    return plan_channel_last_walk(variant, args, sm_count, resident_blocks);
}

Plan plan_channel_last_walk(const Variant& variant, const BackwardArgs& args, int sm_count, int resident_blocks) {
    return plan_channel_last_walk(variant, args, sm_count, same_residency(resident_blocks));
}

Plan plan_channel_last_walk(const Variant& variant, const BackwardArgs& args, int sm_count,
                            const ResidentBlocks& resident_blocks) {
    const std::int64_t batch = args.x.shape[0], dim = args.x.shape[1], seqlen = args.x.shape[2];
    const int threads_x = CC1D_BWD_CL_THREADS_X;
    const int threads_y = CC1D_BWD_CL_THREADS / CC1D_BWD_CL_THREADS_X;
    Plan plan;
    plan.block.x = static_cast<unsigned>(threads_x);
    plan.block.y = static_cast<unsigned>(threads_y);
    const int channels = channels_per_thread(variant);
    plan.channel_groups = util::ceil_div(dim, std::int64_t(threads_x) * channels);
    plan.units_per_part = threads_y;   // one unit per thread; the block sums its threads_y

    // A thread walks its chunk start to end, so a block lives as long as the whole call:
    // a grid just over one wave would leave a long tail with one block per SM. Take the
    // shortest chunk whose grid fits one wave (each thread keeps a deep batch in flight,
    // so a partly filled wave still saturates memory); longer chunks also mean less
    // halo re-read and fewer partial rows.
    const std::int64_t wave = std::int64_t(std::max(sm_count, 1)) * blocks_per_sm(variant);
    auto parts_for = [&](std::int64_t chunk) {
        return util::ceil_div(batch * std::max<std::int64_t>(1, util::ceil_div(seqlen, chunk)), threads_y);
    };
    std::int64_t chunk = CC1D_BWD_CL_MIN_CHUNK;
    while (chunk < seqlen && plan.channel_groups * parts_for(chunk) > wave) chunk *= 2;
    // No preference for a single part on small calls: walking up to 128 steps in one
    // block made 2x64x256 take 32 us; more, shorter chunks plus the reduce launch win.
    // Calls that do not fill a wave at CC1D_BWD_CL_MIN_CHUNK (a thread walks its steps one
    // after another) halve the chunk, down to kShortestChunk, while the grid still fits
    // one wave: more blocks, each with a shorter walk.
    // Only calls that fill at most a quarter of a wave do: a walk has fixed costs (halo
    // steps, setup, the block's sums) that fewer steps amortize worse, which pays only
    // where the call is too small to be anything but latency-bound (4x256x4096 in 16-bit
    // went from 29 to 37 us when its 256 blocks of 32 steps became 512 of 16).
    // Below 8 steps a walk saves less than the extra partial rows cost on all but the
    // smallest calls: 2x64x128 went 6-10% faster at 4 steps (16 rows); 4x256x512 (128 rows)
    // 1-9% slower with the reduce's runs two batches long, and still mixed (fp32 SiLU +4-5%,
    // 16-bit -1 to -4%) with twice the runs of one batch each.
    auto shorter_fits = [&](std::int64_t half) {
        return half < seqlen && plan.channel_groups * parts_for(half) <= wave &&
               (half >= kShortWalk || parts_for(half) <= kShortWalkRows);
    };
    if (plan.channel_groups * parts_for(chunk) * 4 <= wave)
        while (chunk > kShortestChunk && shorter_fits(chunk / 2)) chunk /= 2;
    chunk = fill_wave(chunk, seqlen, batch, wave, plan.channel_groups, threads_y);
    // A walk's first batch waits for its loads with nothing to overlap them, and each
    // chunk re-reads its halo steps: a walk of 64 steps pays both twice as often as one of
    // 128. On 8x2048x1024 16-bit (64-step chunks, 512 blocks) 128-step chunks in 256 blocks
    // ran 3-6% faster on an H100; 256-step chunks (128 blocks) 3% slower. More
    // multiprocessors never lengthen the chunk (the parts stay monotonic).
    if (chunk < kLongWalk && kLongWalk < seqlen &&
        double(plan.channel_groups * parts_for(kLongWalk)) >= kLongWalkBlocksPerSm * std::max(sm_count, 1))
        chunk = kLongWalk;
    // fp32 without seq_idx, up to width 4: a grid of long walks in one wave ends as its
    // last walks finish, each holding its multiprocessor slot while ever fewer blocks
    // load; walks of 256 channel-steps (128 steps at 2 channels a thread, 64 at 4) in
    // about 4 waves or more shorten that drain for a few halo steps and partial rows
    // each. On an H200 (docs/perf.md entry 102), 4x5376x4096: width 4 (688 -> 128 steps)
    // 0.4% faster without SiLU, 2.5% with it, 2.9% with both states, width 3 1.3%, width 2
    // (344 -> 64) 1.7%; 2x4096x8192 and 8x4096x2048 (512 -> 128) 1.3% and 1.6%; on an
    // H100 all within -0.6 to +0.4%. Fewer waves lost: width 2 in 2.5 waves (128 steps)
    // 0.4%, in 1.3 (256) 7.6%. 16-bit walks, twice the work a byte, lost up to 9% at 128
    // and 256 steps; seq_idx 3-6%. The rule can give a GPU of fewer multiprocessors more
    // parts (backward_workspace_bytes bounds both ends).
    // Where a tail of short walks (add_tail) drains the wave instead, it does; it measured
    // faster where it comes (docs/perf.md, entry 111).
    plan.tile_len = chunk;
    plan.tiles = std::max<std::int64_t>(1, util::ceil_div(seqlen, chunk));
    add_tail(plan, variant, batch, seqlen, wave, threads_y, resident_blocks);
    const std::int64_t drain_walk = kDrainChannelSteps / channels;
    if (plan.tail_tiles == 0 && dtype_size(variant.x_dtype) == 4 && !variant.seq_idx && variant.width <= 4 &&
        chunk >= kDrainWaves * drain_walk) {
        plan.tile_len = drain_walk;
        plan.tiles = std::max<std::int64_t>(1, util::ceil_div(seqlen, drain_walk));
    }
    plan.parts = std::max<std::int64_t>(1, util::ceil_div(batch * (plan.tiles + plan.tail_tiles), threads_y));
    return plan;
}

}  // namespace backward

void backward_channel_last(Launcher& launcher, const Variant& variant, const BackwardArgs& args) {
    const backward::Plan plan = backward::plan_channel_last(
        variant, args, launcher.multiprocessor_count(),
        [&launcher](device::Dim3 block, unsigned shared) { return launcher.resident_blocks(Kernel::main, block, shared); });
    // The Runtime picks the module by the plan's rule (Variant::tiled from takes_tile), so
    // the module's main kernel is the one the plan is for.
    if (plan.tile != variant.normalized().tiled)
        fail(ErrorCode::unsupported, "backward: the {} module was loaded for a call that takes the {} (an internal error)",
             plan.tile ? "register walk's" : "tile kernel's", plan.tile ? "tile kernel" : "register walk");
    backward::run(launcher, variant, args, plan, backward::make_params(variant, args));
}

}  // namespace cc1d::launch
