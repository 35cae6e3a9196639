// Kernel parameter blocks: the one definition shared by the host launcher (C++) and
// every kernel template (NVRTC / HIPRTC). Each kernel takes its block by value as its
// only argument. Plain C types only, so both compilers and the host lay them out the
// same way; all sizes, offsets and strides are 64-bit and counted in elements.
#ifndef CC1D_PARAMS_H
#define CC1D_PARAMS_H

// Block sizes the host launcher and the kernels agree on.
#define CC1D_FWD_CF_THREADS 128   // channel-first forward: threads along time
// 16-byte vectors per thread per tile, by element size: a 16-bit thread computes 8
// outputs per vector, so 4 vectors share its fixed costs (indices, weights, halo) over
// 32 outputs; fp32 threads do 2 vectors (8 outputs), more would only lengthen rows' tails.
#define CC1D_FWD_CF_ILP(elem_bytes) ((elem_bytes) == 4 ? 2 : 4)
// Channels of one batch row a channel-first forward block with seq_idx computes side by
// side (a power of two up to 8; 16-bit x only): the tile's ids, loaded once, serve them
// all (fwd_channel_first.cu).
#define CC1D_FWD_CF_SEQ_ROWS(elem_bytes) ((elem_bytes) == 2 ? 4 : 1)
#define CC1D_FWD_CL_THREADS 128   // channel-last forward: threads per block, which computes a
#define CC1D_FWD_CL_CHANNELS 64   // tile of this many channels x CHUNK time steps (16-bit x;
#define CC1D_FWD_CL_CHUNK 64      // fp32 x: CHUNK / 2 steps, so a tile is 8 KiB of x; 16 for the wide
                                  // kernels of CC1D_FWD_CL_TILE_ROWS)
// Time steps of a channel-last tile (forward and packed prefill): twice the above past
// width 8 where the K halo rows a tile re-reads and walks into its windows are a fifth of
// its rows or more (fp32 from width 9, 16-bit from width 14), so they weigh half as much.
// H200 (docs/perf.md, entry 69): width 16 4x5376x4096 bf16 275 -> 195 us, fp32 294 -> 244
// us, fp32 width 9 211 -> 195 us; but 16-bit width 9 (8 halo rows on 64) 127 -> 138 us,
// and width 4 1-9% slower.
#define CC1D_FWD_CL_TILE_ROWS(width, x_bytes) \
    (((width) > 8 && 5 * ((width) - 1) >= CC1D_FWD_CL_CHUNK * 2 / (x_bytes) ? 2 : 1) * CC1D_FWD_CL_CHUNK * 2 / (x_bytes))
#define CC1D_BWD_CF_THREADS 128   // channel-first backward: most threads along time per block
// ... and at most this many 16-byte vectors per thread per tile: 4 for 16-bit tiles
// staged by cp.async (NVIDIA sm_80+; no registers per vector, so more vectors share a
// thread's per-tile work), CC1D_BWD_CF_REG_ILP for tiles staged through registers
// (cc1d_bwd_params.stage_async says which; backward_channel_first.cpp chooses).
#define CC1D_BWD_CF_ILP(elem_bytes) ((elem_bytes) == 2 ? 4 : 2)
#define CC1D_BWD_CF_REG_ILP 2
// The 16-bit module of rows off 16-byte boundaries (bwd_channel_first.cu, BF_OWN_BOUNDARIES)
// takes 5 where that saves a row a tile: its tiles start up to 7 positions before a row, so
// a row of 4095 needs 4102 positions (docs/perf.md, entry 124).
#define CC1D_BWD_CF_OWN_ILP(elem_bytes) ((elem_bytes) == 2 ? 5 : CC1D_BWD_CF_ILP(elem_bytes))
#define CC1D_BWD_CL_THREADS 128   // channel-last backward: threads per block ...
#define CC1D_BWD_CL_THREADS_X 32  // ... of which this many along channels (the rest split time)
#define CC1D_BWD_CL_MIN_CHUNK 32  // shortest time chunk a channel-last thread walks
#define CC1D_BWD_CL_WINDOW(elem_bytes) ((elem_bytes) == 4 ? 8 : 16)  // channels x width a
                                  // channel-last thread keeps per window (16-bit: twice, so a thread owns 4
                                  // channels at width 4 and its per-step work covers twice the bytes) ...
#define CC1D_BWD_CL_MAX_CHANNELS 4  // ... and at most this many channels (8 spill at width 2)
#define CC1D_BWD_CL_BATCH_BYTES 64  // bytes of x (and of dout) a thread loads per batch of steps ...
#define CC1D_BWD_CL_ASYNC_BATCH_BYTES 256  // ... or stages with cp.async (NVIDIA sm_80+)
// Blocks a multiprocessor holds of a channel-last backward kernel up to width 4 (launch
// bounds; the host plan fills waves of this many): 3 for 16-bit x (<= 168 registers:
// 4-channel windows, with silu two of them, with seq_idx the ids too), 4 for fp32
// (<= 128). At 4 blocks the 16-bit SiLU walk was squeezed into 128 registers and
// 4x5376x4096 ran 3.4% slower on an H200 (docs/perf.md entry 100).
#define CC1D_BWD_CL_BLOCKS_PER_SM(elem_bytes) ((elem_bytes) == 2 ? 3 : 4)
// Channel-last backward variants that have a module of the tile kernel of
// bwd_channel_last_tile.cu (Variant::tiled; calls of up to 2^27 elements, fp32 2^25): up
// to width 4 without states (with seq_idx since docs/perf.md entry 158). A thread there
// walks CC1D_BWD_CL_TILE_STEPS steps of one 4-byte word of a row a tile (2 channels of
// 16-bit x, 1 of fp32; 4 segments: tiles of CC1D_BWD_CL_TILE_CHANNELS channels x 64
// steps), and a multiprocessor holds CC1D_BWD_CL_TILE_BLOCKS_PER_SM blocks (launch
// bounds; the fp32 plan fills waves of them).
#define CC1D_BWD_CL_TILE_KERNEL(width, states) ((width) <= 4 && !(states))
#define CC1D_BWD_CL_TILE_STEPS 16
#define CC1D_BWD_CL_TILE_CHANNELS(x_bytes) (32 * 4 / (x_bytes))
#define CC1D_BWD_CL_TILE_BLOCKS_PER_SM 6
// Forward calls of a few thousand outputs run fwd_small.cu, one output a thread, in blocks
// of this many threads.
#define CC1D_FWD_SMALL_THREADS 128
// Backward calls small enough for one block to hold every position of its channels run
// bwd_small.cu, one launch: blocks of this many threads, each at most this many positions.
#define CC1D_BWD_SMALL_THREADS 256
#define CC1D_BWD_SMALL_POSITIONS 4
// Small calls at widths up to 4 walk their positions in registers: channel-last ones
// runs of CC1D_BWD_SMALL_CL_RUN(silu) consecutive positions of a row a thread (a power of
// two; the host gives a channel a slot a run), channel-first ones a position a thread.
// With SiLU a run recomputes the K activations past its end, so its runs are shorter
// (docs/perf.md entry 137).
#define CC1D_BWD_SMALL_IN_REGISTERS(width) ((width) <= 4)
#define CC1D_BWD_SMALL_CL_RUN(silu) ((silu) ? 4 : 8)
// Channel-first small-call backward modules up to width 4 without seq_idx or states also
// carry the vector kernel of bwd_channel_first_vectors.cu, for calls whose rows lie on
// 16-byte vectors: blocks of CC1D_BWD_SMALL_THREADS threads, each taking up to this many
// vectors of a row, so a block holds up to 2 * 256 * 8 = 4096 positions of a channel in
// 16-bit, 2048 in fp32.
#define CC1D_BWD_CF_VECTORS_KERNEL(width, seq_idx, states) ((width) <= 4 && !(seq_idx) && !(states))
#define CC1D_BWD_CF_VECTOR_CHUNKS 2
// The channel-first backward keeps g in registers (bwd_channel_first.cu's
// BF_G_IN_REGISTERS) with SiLU, without seq_idx, on rows at 16-byte boundaries and with
// the K = width - 1 positions after a vector within the next one (8 in 16-bit, 4 in fp32:
// fp32 since docs/perf.md entry 153); the host sizes the block's shared memory by the same
// rule.
#define CC1D_BWD_CF_G_IN_REGISTERS(sixteen_bit, silu, seq_idx, shifted_rows, k) \
    ((silu) && !(seq_idx) && !(shifted_rows) && (k) <= ((sixteen_bit) ? 8 : 4))
#define CC1D_REDUCE_THREADS 256
#define CC1D_REDUCE_BATCH 8       // backward reduce: rows a thread has in flight at once
#define CC1D_REDUCE_MAX_SLICES 16 // ... and the most runs a block splits the rows into

// Where a backward block puts its dweight/dbias sums (cc1d_bwd_params.dw_mode).
#define CC1D_DW_PARTIAL_ROWS 0    // its own row of `partials`; the reduce kernel sums the rows in order
#define CC1D_DW_DIRECT 1          // the only block for its channels: writes dweight/dbias itself
#define CC1D_DW_ATOMIC_PARTIAL 2  // atomically into row 0 of `partials` (zeroed first), then reduce
#define CC1D_DW_ATOMIC_DIRECT 3   // atomically into fp32 dweight/dbias (zeroed first unless accumulating)
#define CC1D_DW_CLUSTER 4         // channel-first, NVIDIA sm_90+: a channel's parts are one thread-block
                                  // cluster, whose rank 0 sums them in rank order and writes dweight/dbias
#define CC1D_BWD_MAX_CLUSTER_PARTS 8   // the most blocks a cluster may have on every such device
// What the backward reduce kernel does (cc1d_bwd_params.reduce_mode).
#define CC1D_REDUCE_SUM 0         // sum the partial rows in order into dweight/dbias
#define CC1D_REDUCE_ZERO 1        // zero the atomic target of dw_mode before the main kernel
#define CC1D_REDUCE_SEQ_MASKS 2   // channel-first: seq_idx -> seq_masks before the main kernel
// Bytes of one seq mask (seq_masks.h's cc1d_seq_mask) at a width: bits 0..K, a byte up to
// width 8, two up to 16. The host sizes the workspace and the shared memory with it.
#define CC1D_SEQ_MASK_BYTES(width) ((width) <= 8 ? 1 : 2)
#define CC1D_UPDATE_THREADS 128
#define CC1D_VARLEN_FINISH_THREADS 128   // packed prefill's finishing kernel: most threads (channels) per block
// How an update kernel walks its channels (cc1d_update_params.path).
#define CC1D_UPD_PER_CHANNEL 0    // a thread per channel, straight on global memory (any strides)
#define CC1D_UPD_STAGED 1         // rows through shared memory as 16-byte vectors (contiguous chunks)
#define CC1D_UPD_REGISTERS 2      // one token, state_len = width - 1, plain state: a thread owns a
                                  // 16-byte vector of channels and keeps everything in registers

// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 as (umulhi(n, magic) + n) >> shift, both
// computed on the host for d (launch_util.hpp, divisor_of): a division by a run-time value
// is a chain of ~40 instructions, this is three.
struct cc1d_divisor {
    unsigned int magic;
    unsigned int shift;
};

struct cc1d_fwd_params {
    const void* x;
    const void* weight;
    const void* bias;            // null when the variant has no bias
    void* out;
    const int* seq_idx;          // null unless the variant has seq_idx
    const void* initial_states;  // null unless the variant has initial states
    void* final_states;          // null unless the variant has final states
    long long batch, dim, seqlen;
    long long x_stride_b, x_stride_d, x_stride_l;
    long long out_stride_b, out_stride_d, out_stride_l;
    long long w_stride_d, w_stride_k;
    long long bias_stride;
    long long seq_stride_b, seq_stride_l;
    long long init_stride_b, init_stride_d, init_stride_k;
    long long final_stride_b, final_stride_d, final_stride_k;
    long long tiles;             // tiles (chunks) along time per row, as the launcher split it
    long long chunk_len;         // channel-last: time steps per tile (channel-first: unused)
    int vector_ok;               // 1: every x/out row start is 16-byte aligned and the unit
                                 //    stride allows 16-byte vectors; 0: element-wise path
    int seq_vector_ok;           // 1: seq_idx rows are 16-byte aligned with unit stride
    cc1d_divisor small_by_inner;   // small-call kernel: by the fastest index of its outputs
    cc1d_divisor small_by_middle;  // (L and D channel-first, D and L channel-last)
};

struct cc1d_bwd_params {
    const void* x;
    const void* weight;
    const void* bias;
    const void* dout;
    void* dx;
    const int* seq_idx;
    const void* initial_states;
    void* dinitial_states;       // null when not requested
    const void* dfinal_states;   // null when absent
    float* partials;             // workspace: [parts][dim][width + 1] (dw..., db) in fp32, rows
                                 // partials_row floats apart
    void* dweight;
    void* dbias;                 // null when there is no bias
    long long batch, dim, seqlen;
    long long x_stride_b, x_stride_d, x_stride_l;
    long long dout_stride_b, dout_stride_d, dout_stride_l;
    long long dx_stride_b, dx_stride_d, dx_stride_l;
    long long w_stride_d, w_stride_k;
    long long bias_stride;
    long long seq_stride_b, seq_stride_l;
    long long init_stride_b, init_stride_d, init_stride_k;
    long long dinit_stride_b, dinit_stride_d, dinit_stride_k;
    long long dfinal_stride_b, dfinal_stride_d, dfinal_stride_k;
    long long dw_stride_d, dw_stride_k;
    long long db_stride;
    long long tiles;             // tiles (chunks) along time per row
    long long parts;             // partial rows in `partials` (1 on the atomic path)
    long long partials_row;      // floats from one partial row to the next (>= dim * (width + 1))
    long long tile_len;          // time steps per tile (channel-first) or chunk (channel-last)
    long long units_per_part;    // (batch, tile) units one part walks, in order
    long long groups;            // parts the launcher split the units into (blocks per channel
                                 // group; the grid may be padded past groups * channel groups)
    long long reduce_run_rows;   // reduce kernel: rows per run, ceil(parts / reduce_slices)
    int vector_ok;               // 1: x, dout and dx rows 16-byte aligned with unit stride; in the
                                 // channel-first module of rows off such boundaries without
                                 // seq_idx: x's vectors follow its rows' own boundaries
    int dw_is_fp32;              // 1: dweight/dbias are fp32; 0: the weight's dtype
    int accumulate;              // 1: add into dweight/dbias
    int ilp;                     // channel-first: 16-byte vectors per thread per tile (<= CC1D_BWD_CF_ILP,
                                 // CC1D_BWD_CF_OWN_ILP where vector_ok says x's vectors follow its
                                 // rows' own boundaries; <= CC1D_BWD_CF_REG_ILP unless stage_async)
    int stage_async;             // channel-first 16-bit: 1 stages tiles with cp.async where the device can
    int dw_mode;                 // CC1D_DW_*
    int reduce_mode;             // CC1D_REDUCE_*
    int reduce_slices;           // reduce kernel: runs the rows split into (1, 2, 4, 8 or 16; 1 to zero)
    int reduce_column_shift;     // reduce kernel: log2 of its columns, CC1D_REDUCE_THREADS / reduce_slices
    int small_channel_shift;     // small-call kernel: log2 of the channels a block owns
    void* seq_masks;             // workspace, channel-first with seq_idx: [batch][seq_mask_stride] masks
    long long seq_mask_stride;   // masks a row of seq_masks (>= seqlen, a multiple of 16)
    long long tail_start;        // channel-last walk: where each row's tail chunks begin (the
    long long tail_len;          // `tiles` chunks of tile_len end there), their length and
    long long tail_tiles;        // number a row (0: no tail; the chunks reach seqlen)
};

struct cc1d_update_params {
    const void* x;
    void* conv_state;
    const void* weight;
    const void* bias;
    void* out;
    const int* cache_seqlens;        // null unless the variant has it
    const int* conv_state_indices;   // null unless the variant has it
    long long batch, dim, seqlen;    // seqlen = T new tokens
    long long state_len;             // S
    long long x_stride_b, x_stride_d, x_stride_l;
    long long out_stride_b, out_stride_d, out_stride_l;
    long long state_stride_b, state_stride_d, state_stride_l;
    long long w_stride_d, w_stride_k;
    long long bias_stride;
    long long seqlens_stride, indices_stride;
    long long chunk;                 // channels per block
    int pad_slot_id;
    int path;                        // CC1D_UPD_PER_CHANNEL, CC1D_UPD_STAGED or CC1D_UPD_REGISTERS
    int weight_vectors;              // registers path: weight rows contiguous and 16-byte aligned
    int pad_;
};

struct cc1d_varlen_params {
    const void* x;               // (D, total) or (total, D): see the layout of the variant
    const void* weight;
    const void* bias;
    void* out;
    const int* cu_seqlens;       // N + 1 offsets
    void* conv_states;           // null unless the variant has states
    const int* cache_indices;    // null: sequence i uses slot i
    const int* has_initial_state;  // null: no sequence reads its slot
    long long num_seqs, dim, total;
    long long cu_stride, indices_stride, has_init_stride;   // of the three int32 vectors
    long long x_stride_d, x_stride_l;
    long long out_stride_d, out_stride_l;
    long long state_stride_b, state_stride_d, state_stride_l;
    long long state_len;
    long long w_stride_d, w_stride_k;
    long long bias_stride;
    long long tiles;             // tiles (chunks) along the packed token axis
    long long chunk_len;         // channel-last: tokens per chunk (channel-first: unused)
    int pad_slot_id;
    int vector_ok;
};

#endif
