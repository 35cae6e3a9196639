// Causal conv1d forward over packed variable-length sequences (prefill): x and out are
// logically (D, total), stored channel-first (tokens contiguous) or channel-last
// (channels contiguous); cu_seqlens (N + 1 offsets) cuts the token axis into sequences.
//
// The host cannot read cu_seqlens, so the grid tiles the packed token axis exactly as
// the forward kernels tile time (fwd_channel_first.cu / fwd_channel_last.cu describe the
// tiles, the shared memory and the loads): a tile may hold several sequences. Each
// output only differs from the plain convolution within K tokens after a sequence
// start, where the K inputs before the start come from the sequence's history instead
// of x: its conv_states slot (the last K of the slot's S entries) when has_initial_state
// says so, else zeros. Tokens outside every sequence (before cu[0], from cu[N] on) get 0.
//
// The tiles (phase 0, the main kernel) take every history as zeros: they never touch
// conv_states, so the variant with slots runs the same main kernel as the one without.
// A second kernel (phase 1, CC1D_ENTRY_FINISH, one thread per (sequence, channel)) then
// finishes each sequence: where it reads a history, it rewrites the sequence's first
// min(length, K) outputs with it, and it writes the slot back (one thread reads the old
// entries and writes the new ones, so no slot is overwritten before it is read). Looking
// the slot up in every tile that holds a start (nearly all of them in a usual prefill)
// made those blocks wait on two more load latencies and took registers from the main
// pass (docs/perf.md, entries 75-76). Phase 1's stores must follow phase 0's zero-history
// outputs: where the device has overlapped launches it starts while phase 0's last blocks
// run, loads and computes what it writes, and waits for phase 0 to finish before its
// stores. As in the reference, the slot's entries S-K .. S-1 become the last K values of
// concat(history, sequence) and entries 0 .. S-K-1 are left alone.
// A sequence whose cache index equals pad_slot_id computes with zero history and its
// slot is neither read nor written.

// ---- sequences (both layouts, both phases) ----

CC1D_DEVICE cc1d_i64 vl_offset(const cc1d_varlen_params& p, cc1d_i64 i) { return p.cu_seqlens[i * p.cu_stride]; }

// The sequence holding token t (empty sequences hold none), or -1 outside all of them.
CC1D_DEVICE cc1d_i64 vl_sequence_of(const cc1d_varlen_params& p, cc1d_i64 t) {
    if (p.num_seqs <= 0 || t < vl_offset(p, 0) || t >= vl_offset(p, p.num_seqs)) return -1;
    cc1d_i64 lo = 0, hi = p.num_seqs;   // offset(lo) <= t < offset(hi)
    while (hi - lo > 1) {
        const cc1d_i64 mid = (lo + hi) >> 1;
        if (vl_offset(p, mid) <= t) lo = mid; else hi = mid;
    }
    return lo;
}

// Where token t stands: its sequence s (-1 outside all), that sequence's first token,
// and the token from which on the answer changes (the next sequence start, cu[0] for a
// token before the first sequence, total after the last one).
struct VlPlace {
    cc1d_i64 s, start, next;
};
CC1D_DEVICE VlPlace vl_locate(const cc1d_varlen_params& p, cc1d_i64 t) {
    VlPlace place;
    place.s = vl_sequence_of(p, t);
    place.start = place.s >= 0 ? vl_offset(p, place.s) : 0;
    if (place.s >= 0)
        place.next = vl_offset(p, place.s + 1);
    else
        place.next = p.num_seqs > 0 && t < vl_offset(p, 0) ? vl_offset(p, 0) : p.total;
    return place;
}

// ---- phase 1: each sequence's history outputs and its slot ----

#if CC1D_HAS_INITIAL_STATES
constexpr int kVlHistory = CC1D_K > 0 ? CC1D_K : 1;   // (phase 1 runs from width 2)

// For sequence s at channel d: out at its first min(length, K) tokens from its history,
// when it reads one (its has_initial_state flag; phase 0 wrote them with zeros); then,
// unless its cache index is the pad slot, slot entries S-K .. S-1 <- the last K of
// concat(history, sequence), raw. Everything is loaded and computed before the wait:
// phase 0 writes none of what this reads, so only the stores wait for it.
CC1D_DEVICE void vl_finish_sequence(const cc1d_varlen_params& p) {
    const unsigned int channel_blocks = ((unsigned int)p.dim + blockDim.x - 1) / blockDim.x;
    const unsigned int block = cc1d_flat_block();
    const unsigned int s = block / channel_blocks;
    const cc1d_i64 d = (cc1d_i64)(block - s * channel_blocks) * blockDim.x + threadIdx.x;
    if (s >= p.num_seqs || d >= p.dim) return;
    // The cache index and the flag load side by side (both exist for every sequence).
    const int index = p.cache_indices != nullptr ? p.cache_indices[s * p.indices_stride] : 0;
    const bool flagged = p.has_initial_state != nullptr && p.has_initial_state[s * p.has_init_stride] != 0;
    const cc1d_i64 slot = p.cache_indices != nullptr ? (cc1d_i64)index : (cc1d_i64)s;
    if (p.cache_indices != nullptr && slot == p.pad_slot_id) return;
    const cc1d_i64 start = vl_offset(p, s), length = vl_offset(p, s + 1) - start;
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + d * p.x_stride_d;
    x_t* state = reinterpret_cast<x_t*>(p.conv_states) + slot * p.state_stride_b + d * p.state_stride_d;
    const x_t* history = state + (p.state_len - CC1D_K) * p.state_stride_l;   // entry j at history[j * stride_l]
    // concat(history, sequence) at m: history entry m for m < K (zeros without a
    // history), else token start + m - K.
    const auto joined = [&](cc1d_i64 m) -> x_t {
        if (m >= CC1D_K) return x[(start + m - CC1D_K) * p.x_stride_l];
        return flagged ? history[m * p.state_stride_l] : cc1d_of_bits<x_t>(0u);
    };
    x_t values[kVlHistory];
#pragma unroll
    for (int j = 0; j < CC1D_K; ++j) values[j] = joined(length + j);
    const int rewritten = flagged ? (int)(length < CC1D_K ? length : CC1D_K) : 0;
    float ys[kVlHistory];
    if (rewritten > 0) {
        x_t window[2 * kVlHistory];   // joined(0 .. 2K - 1): the history, then the first K tokens
#pragma unroll
        for (int m = 0; m < 2 * CC1D_K; ++m) window[m] = m < CC1D_K + rewritten ? joined(m) : cc1d_of_bits<x_t>(0u);
        float w[CC1D_WIDTH];
        const float bias = cc1d_load_channel_taps(p, d, w);
#pragma unroll
        for (int j = 0; j < CC1D_K; ++j) {   // token start + j reads joined(j .. j + K)
            float z = bias;
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k) z = fmaf(w[k], cc1d_to_float(window[j + k]), z);
            ys[j] = cc1d_activate_fast(z);
        }
    }
    cc1d_wait_prior_grid();   // every block of phase 0 has written its outputs
    x_t* out = reinterpret_cast<x_t*>(p.out) + d * p.out_stride_d;
#pragma unroll
    for (int j = 0; j < CC1D_K; ++j)
        if (j < rewritten) out[(start + j) * p.out_stride_l] = cc1d_to_x(ys[j]);
#pragma unroll
    for (int j = 0; j < CC1D_K; ++j) state[(p.state_len - CC1D_K + j) * p.state_stride_l] = values[j];
}
#endif

// ---- phase 0, both layouts ----

// Output at token t (channel d) of the sequence starting at `start`, for a token within K
// of the start, with a zero history (phase 1 rewrites it where the sequence has one):
// terms before the start are 0, the others read tile_x[q - tile_start] (shared memory).
CC1D_DEVICE float vl_output_near_start(const float (&w)[CC1D_WIDTH], float bias, cc1d_i64 start, cc1d_i64 t,
                                       const x_t* tile_x, cc1d_i64 tile_start) {
    float z = bias;
#pragma unroll
    for (int k = 0; k <= CC1D_K; ++k) {
        const cc1d_i64 q = t - CC1D_K + k;
        if (q >= start) z = fmaf(w[k], cc1d_to_float(tile_x[q - tile_start]), z);
    }
    return cc1d_activate_fast(z);
}

// ---- a block's sequence boundaries (phase 0, both layouts) ----
//
// Every thread of a block calls vl_block_cuts: it holds barriers. A round issues one load
// of cu_seqlens per thread, all at once, and counts the answers with one barrier, so a
// lookup costs two or three load latencies for up to blockDim.x sequences (one more
// round per factor of blockDim.x), where one thread's binary search costs a dependent
// load per halving, with the whole block waiting on it. The channel-last kernel takes
// vl_block_offsets: with fewer than blockDim.x - 1 sequences (a
// usual prefill batch) one round loads every offset, a single load latency. These loads
// stand between the tile's loads and its first use of them, so every latency they add
// lengthens the life of every block (docs/perf.md, entry 65). The channel-first kernel
// keeps vl_block_cuts: the one-round listing took it to 32 registers with a spill there,
// 2% faster on an H200 and 2% slower on an H100.

constexpr int kVlListed = 30;   // boundaries a block keeps (more: its tokens search one by one);
                                // kVlListed + 2 <= 32, the smallest block, so a round lists them all

// How many of the offsets cu[0..N] are <= t (block-wide; the offsets ascend). 32-bit
// indices (N + 1 int32 offsets fit) and no division in the usual one-round case: this
// runs in every block, and a 64-bit division alone costs about as many instructions as
// a thread's share of the convolution.
CC1D_DEVICE cc1d_i64 vl_block_count_upto(const cc1d_varlen_params& p, cc1d_i64 t) {
    const unsigned int nthreads = blockDim.x;
    unsigned int lo = 0, hi = (unsigned int)p.num_seqs + 1u;   // the answer lies in [lo, hi]
    while (lo < hi) {                                           // (the same values in every thread)
        const unsigned int n = hi - lo, step = n <= nthreads ? 1u : (n + nthreads - 1u) / nthreads;
        const unsigned int i = lo + threadIdx.x * step;
        // Samples lo, lo + step, ... below hi: the first `upto` of them are <= t.
        const unsigned int upto = (unsigned int)__syncthreads_count(i < hi && vl_offset(p, i) <= t);
        if (upto == 0) {
            hi = lo;
        } else {
            const unsigned int last = lo + (upto - 1u) * step;
            if (last + step < hi) hi = last + step;
            lo = last + 1u;
        }
    }
    return lo;
}

// The offsets around the tokens (from, to): first = how many offsets are <= from, and
// cuts[j] = cu[first - 1 + j] for j = 0 .. kVlListed + 1 (p.total for indices past N;
// cuts[0] is meaningless when first == 0). Returns n, how many offsets lie in (from, to):
// cuts[1 .. n] when n <= kVlListed, cuts[n + 1] is then the first one at or after `to`.
// Listed start j (cuts[j], 1 <= j <= n) begins sequence first - 1 + j (none for cu[N]).
// Every thread sees cuts on return (the last count is a barrier after the stores).
struct VlCuts {
    cc1d_i64 first;
    int n;
};
CC1D_DEVICE VlCuts vl_block_cuts(const cc1d_varlen_params& p, cc1d_i64 from, cc1d_i64 to, cc1d_i64* cuts) {
    VlCuts c;
    c.first = vl_block_count_upto(p, from);
    const int j = threadIdx.x;
    const cc1d_i64 i = c.first - 1 + j;
    const cc1d_i64 offset = i >= 0 && i <= p.num_seqs ? vl_offset(p, i) : p.total;
    const bool inside = j >= 1 && i <= p.num_seqs && offset < to;
    if (j <= kVlListed + 1) cuts[j] = offset;
    c.n = __syncthreads_count(inside);
    return c;
}

// vl_block_cuts without slots, in one round when the block has a thread for every offset
// and one more: thread j holds offset j (p.total past N, so cuts[n + 1] always exists),
// list entry k is thread first - 1 + k.
CC1D_DEVICE VlCuts vl_block_offsets(const cc1d_varlen_params& p, cc1d_i64 from, cc1d_i64 to, cc1d_i64* cuts) {
    if (p.num_seqs + 2 > (cc1d_i64)blockDim.x) return vl_block_cuts(p, from, to, cuts);
    const int j = threadIdx.x;
    const bool offset_j = j <= p.num_seqs;
    const cc1d_i64 offset = offset_j ? vl_offset(p, j) : p.total;
    VlCuts c;
    c.first = __syncthreads_count(offset_j && offset <= from);
    const int k = j + 1 - (int)c.first;
    const bool inside = k >= 1 && offset_j && offset < to;
    if (k >= 0 && k <= kVlListed + 1) cuts[k] = offset;
    c.n = __syncthreads_count(inside);
    return c;
}

// vl_locate for a token t in [from + 1, to) of a vl_block_cuts listing, from the list
// (a binary search of cu_seqlens when the list overflowed).
CC1D_DEVICE VlPlace vl_locate_in_cuts(const cc1d_varlen_params& p, const VlCuts& c, const cc1d_i64* cuts, cc1d_i64 t) {
    if (c.n > kVlListed) return vl_locate(p, t);
    int j = 0;   // listed offsets <= t
    while (j < c.n && cuts[j + 1] <= t) ++j;
    const cc1d_i64 upto = c.first + j;   // all offsets <= t
    VlPlace place;
    place.s = upto >= 1 && upto <= p.num_seqs ? upto - 1 : -1;
    place.start = place.s >= 0 ? cuts[j] : 0;
    place.next = cuts[j + 1];
    return place;
}

#if !CC1D_CHANNEL_LAST
// ---- phase 0, channel-first: block = (channel d, tile of tokens) ----

constexpr int kVlHalo = (CC1D_K + CC1D_VEC - 1) / CC1D_VEC;
constexpr int kVlHaloElems = kVlHalo * CC1D_VEC;

// Once every vector of the tile holds the plain convolution (after a barrier): rewrites
// the tokens within K after each listed start, whose windows reach back before the
// sequence (zeros here; phase 1 rewrites them where the sequence has a history). Work
// item r of the block is token r % K after start r / K, so the few rewrites run side by
// side, one per thread, instead of one thread's serial loop holding up its warp. Between
// two starts, tokens K or more after the first see only their own sequence, as the plain
// convolution assumed.
CC1D_DEVICE void vl_fix_after_starts(const cc1d_varlen_params& p, const float (&w)[CC1D_WIDTH], float bias,
                                     cc1d_i64 seq_end, const cc1d_i64* starts, int listed, const x_t* tile_x,
                                     cc1d_i64 tile_start, cc1d_i64 tile_end, x_t* orow) {
    constexpr int kPerStart = CC1D_K > 0 ? CC1D_K : 1;
    for (int r = threadIdx.x; r < listed * CC1D_K; r += blockDim.x) {
        const int k = r / kPerStart;
        const cc1d_i64 start = starts[k], t = start + (r - k * kPerStart);
        // Outside this tile, past every sequence (cu[N] is listed too), or in a later
        // sequence (the one before was shorter than K): not this item's token.
        if (t < tile_start || t >= tile_end || t >= seq_end || (k + 1 < listed && t >= starts[k + 1])) continue;
        const float y = vl_output_near_start(w, bias, start, t, tile_x, tile_start);
        orow[t * p.out_stride_l] = cc1d_to_x(y);
    }
}

// The same for a tile with more starts than it lists: every token of the vector finds
// its sequence in cu_seqlens.
CC1D_DEVICE void vl_search_each_token(const cc1d_varlen_params& p, const float (&w)[CC1D_WIDTH], float bias,
                                      cc1d_i64 pos, const x_t* tile_x, cc1d_i64 tile_start, x_t* orow) {
#pragma unroll 1
    for (int e = 0; e < CC1D_VEC; ++e) {
        const cc1d_i64 t = pos + e;
        if (t >= p.total) break;
        if (t < 0) continue;   // before the row (the first vector of a leading tile)
        const cc1d_i64 s = vl_sequence_of(p, t);
        const float y = s < 0 ? 0.0f : vl_output_near_start(w, bias, vl_offset(p, s), t, tile_x, tile_start);
        orow[t * p.out_stride_l] = cc1d_to_x(y);
    }
}

CC1D_DEVICE void vl_forward(const cc1d_varlen_params& p) {
    extern __shared__ __attribute__((aligned(128))) cc1d_vec16 vl_smem[];   // [halo + tile] vectors of raw x
    const unsigned int block = cc1d_flat_block();
    if (block >= p.dim * p.tiles) return;
    const unsigned int tiles = (unsigned int)p.tiles;
    const unsigned int d = block / tiles, tile = block - d * tiles;
    const int nthreads = blockDim.x, tid = threadIdx.x;
    const int tile_vecs = nthreads * CC1D_FWD_CF_ILP(sizeof(x_t));
    const cc1d_i64 total = p.total;
    const bool vector_ok = p.vector_ok != 0;
    const x_t* xrow = reinterpret_cast<const x_t*>(p.x) + d * p.x_stride_d;
    x_t* orow = reinterpret_cast<x_t*>(p.out) + d * p.out_stride_d;
    // Rows of (D, total) start anywhere when total is odd, so with unit strides the tiles
    // follow the row's own 16-byte boundaries: they start `lead` elements before token 0
    // (the elements of the aligned vector that precede it). Vectors entirely inside
    // [0, total) move as 16-byte accesses, the row's first and last ones element-wise.
    // out's row may sit at another offset within its vector: then it is stored element-wise.
    const int lead = vector_ok ? (int)(((unsigned long long)xrow & 15u) / sizeof(x_t)) : 0;
    const bool out_vectors = vector_ok && (int)(((unsigned long long)orow & 15u) / sizeof(x_t)) == lead;
    const cc1d_i64 tile_start = (cc1d_i64)tile * tile_vecs * CC1D_VEC - lead;
    if (tile_start >= total) return;   // the extra tile the launcher adds for the lead

    // Outputs differ from the plain convolution only within K tokens after a sequence
    // start and outside [cu[0], cu[N]). The block lists the offsets in
    // (tile_start - K, tile_end) while the tile's loads are in flight.
    __shared__ cc1d_i64 s_cuts[kVlListed + 2];
    const cc1d_i64 tile_end = tile_start + tile_vecs * CC1D_VEC < total ? tile_start + tile_vecs * CC1D_VEC : total;
    cc1d_vec16 v[CC1D_FWD_CF_ILP(sizeof(x_t))];
    if (vector_ok) {
#pragma unroll
        for (int i = 0; i < CC1D_FWD_CF_ILP(sizeof(x_t)); ++i) {
            const cc1d_i64 pos = tile_start + (cc1d_i64)(tid + i * nthreads) * CC1D_VEC;
            v[i] = pos < total ? cc1d_v16_load(xrow, 1, pos, total, pos >= 0 && pos + CC1D_VEC <= total) : cc1d_v16_zero();
        }
    }
    float w[CC1D_WIDTH];
    const float bias = cc1d_load_channel_taps(p, d, w);
    const cc1d_i64 seq_begin = p.num_seqs > 0 ? vl_offset(p, 0) : 0, seq_end = p.num_seqs > 0 ? vl_offset(p, p.num_seqs) : 0;
    // Offsets in range (the starts, and cu[N], which the fix-up skips).
    const int listed = vl_block_cuts(p, tile_start - CC1D_K, tile_end, s_cuts).n;
    const cc1d_i64* s_starts = s_cuts + 1;

    if (vector_ok) {
#pragma unroll
        for (int i = 0; i < CC1D_FWD_CF_ILP(sizeof(x_t)); ++i) cc1d_v16_store_aligned(&vl_smem[kVlHalo + tid + i * nthreads], v[i]);
    } else {
        x_t* s_elems = reinterpret_cast<x_t*>(vl_smem) + kVlHaloElems;
#pragma unroll 4
        for (int i = 0; i < CC1D_FWD_CF_ILP(sizeof(x_t)) * CC1D_VEC; ++i) {
            const int e = tid + i * nthreads;
            const cc1d_i64 pos = tile_start + e;
            s_elems[e] = pos < total ? xrow[pos * p.x_stride_l] : cc1d_of_bits<x_t>(0u);
        }
    }
    for (int h = tid; h < kVlHalo; h += nthreads) {
        const cc1d_i64 pos = tile_start - (cc1d_i64)(kVlHalo - h) * CC1D_VEC;   // before the tile: < total
        cc1d_v16_store_aligned(&vl_smem[h], cc1d_v16_load(xrow, p.x_stride_l, pos, total, vector_ok && pos >= 0));
    }
    const x_t* tile_x = reinterpret_cast<const x_t*>(vl_smem) + kVlHaloElems;   // token q at tile_x[q - tile_start]
    __syncthreads();

#pragma unroll
    for (int i = 0; i < CC1D_FWD_CF_ILP(sizeof(x_t)); ++i) {
        const int j = tid + i * nthreads;
        const cc1d_i64 pos = tile_start + (cc1d_i64)j * CC1D_VEC;
        if (pos >= total) break;
        float win[CC1D_K + CC1D_VEC];   // win[m] = x at pos - K + m (0 before token 0)
#pragma unroll
        for (int h = 0; h < kVlHalo; ++h) {
            const cc1d_vec16 hv = cc1d_v16_load_aligned(&vl_smem[j + h]);
#pragma unroll
            for (int e = 0; e < CC1D_VEC; ++e) {
                const int m = h * CC1D_VEC + e - (kVlHaloElems - CC1D_K);
                if (m >= 0) win[m] = cc1d_v16_float(hv, e);
            }
        }
        const cc1d_vec16 own = cc1d_v16_load_aligned(&vl_smem[kVlHalo + j]);
#pragma unroll
        for (int e = 0; e < CC1D_VEC; ++e) win[CC1D_K + e] = cc1d_v16_float(own, e);

        // Every vector gets the plain convolution, with 0 for tokens outside every
        // sequence; the few tokens within K after a start are rewritten afterwards.
        float ys[CC1D_VEC];
#pragma unroll
        for (int e = 0; e < CC1D_VEC; ++e) {
            float z = bias;
#pragma unroll
            for (int k = 0; k <= CC1D_K; ++k) z = fmaf(w[k], win[e + k], z);
            ys[e] = cc1d_activate_fast(z);
        }
        if (pos < seq_begin || pos + CC1D_VEC > seq_end) {
#pragma unroll
            for (int e = 0; e < CC1D_VEC; ++e)
                if (pos + e < seq_begin || pos + e >= seq_end) ys[e] = 0.0f;
        }
        cc1d_v16_store(orow, p.out_stride_l, pos, total, out_vectors && pos >= 0 && pos + CC1D_VEC <= total,
                       cc1d_v16_from_floats(ys));

        if (listed > kVlListed) {
            // Too many starts in the tile to list: each token of a vector near one searches
            // (the same thread, so its stores follow the plain ones).
            bool plain = pos - CC1D_K >= seq_begin && pos + CC1D_VEC <= seq_end;
            if (plain) {
                const cc1d_i64 s_last = vl_sequence_of(p, pos + CC1D_VEC - 1);
                plain = s_last >= 0 && vl_offset(p, s_last) <= pos - CC1D_K;
            }
            if (!plain) vl_search_each_token(p, w, bias, pos, tile_x, tile_start, orow);
        }
    }
    if (listed > 0 && listed <= kVlListed) {   // (the same in every thread)
        __syncthreads();   // other threads' plain stores of the tokens rewritten here come first
        vl_fix_after_starts(p, w, bias, seq_end, s_starts, listed, tile_x, tile_start, tile_end, orow);
    }
}

#else
// ---- phase 0, channel-last: block = (64 channels, tile of tokens), as fwd_channel_last.cu ----

constexpr int kVlChannels = CC1D_FWD_CL_CHANNELS;
constexpr int kVlRowVecs = kVlChannels / CC1D_VEC;
constexpr int kVlRows = CC1D_FWD_CL_TILE_ROWS(CC1D_WIDTH, (int)sizeof(x_t));
constexpr int kVlSegments = CC1D_FWD_CL_THREADS / kVlChannels;
constexpr int kVlSteps = kVlRows / kVlSegments;
constexpr int kVlInVecs = (CC1D_K + kVlRows) * kVlRowVecs;
constexpr int kVlLoads = (kVlInVecs + CC1D_FWD_CL_THREADS - 1) / CC1D_FWD_CL_THREADS;
constexpr int kVlStores = kVlRows * kVlRowVecs / CC1D_FWD_CL_THREADS;

constexpr int kVlInElems = kVlInVecs * CC1D_VEC;

// The tile's input rows t0-K .. t0+rows-1 (zeros outside [0, total) and past D; channels
// adjacent), in two steps so the block can work while the loads are in flight:
// vl_issue_tile_loads starts them and vl_park_tile completes the tile in shared memory.
// A whole vectorizable tile moves as 16-byte vectors: with cp.async (NVIDIA sm_80+)
// straight into shared memory, so the loads hold no registers (55 -> 38-40 registers at
// width 4, 12 blocks per SM instead of 9: on an H200 the bytes in flight are what this
// kernel lacked; docs/perf.md, entry 65), else through v. Other tiles move element by
// element (as fwd_channel_last.cu) in the first step.
CC1D_DEVICE void vl_issue_tile_loads(const cc1d_varlen_params& p, cc1d_i64 t0, cc1d_i64 c0, bool vector_tile,
                                     cc1d_vec16 (&v)[kVlLoads], cc1d_vec16* s_in) {
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + c0;
    if (vector_tile) {
#if CC1D_HAS_ASYNC_COPY
        (void)v;
        cc1d_copy_tile_rows_async<kVlLoads, CC1D_FWD_CL_THREADS, kVlRowVecs, kVlInVecs>(s_in, x, p.x_stride_l, t0 - CC1D_K,
                                                                                      p.total);
#else
#pragma unroll
        for (int m = 0; m < kVlLoads; ++m) {
            const int i = threadIdx.x + m * CC1D_FWD_CL_THREADS;
            const int row = i / kVlRowVecs, col = i - row * kVlRowVecs;
            const cc1d_i64 t = t0 - CC1D_K + row;
            v[m] = i < kVlInVecs && t >= 0 && t < p.total ? cc1d_v16_load_aligned(x + t * p.x_stride_l + col * CC1D_VEC)
                                                          : cc1d_v16_zero();
        }
#endif
    } else {
        x_t* elems = reinterpret_cast<x_t*>(s_in);
#pragma unroll 4
        for (int e = threadIdx.x; e < kVlInElems; e += CC1D_FWD_CL_THREADS) {
            const int row = e / kVlChannels, c = e - row * kVlChannels;
            const cc1d_i64 t = t0 - CC1D_K + row;
            elems[e] = t >= 0 && t < p.total && c0 + c < p.dim ? x[t * p.x_stride_l + c] : cc1d_of_bits<x_t>(0u);
        }
    }
}
// This thread's part of the tile is in shared memory on return (a barrier then shows the
// whole tile to the block).
CC1D_DEVICE void vl_park_tile(bool vector_tile, const cc1d_vec16 (&v)[kVlLoads], cc1d_vec16* s_in) {
    if (!vector_tile) return;
#if CC1D_HAS_ASYNC_COPY
    (void)v; (void)s_in;
    cc1d_wait_async_copies();
#else
#pragma unroll
    for (int m = 0; m < kVlLoads; ++m) {
        const int i = threadIdx.x + m * CC1D_FWD_CL_THREADS;
        if (i < kVlInVecs) cc1d_v16_store_aligned(&s_in[i], v[m]);
    }
#endif
}

CC1D_DEVICE void vl_store_tile(const cc1d_varlen_params& p, cc1d_i64 t0, cc1d_i64 c0, bool vector_tile,
                               const cc1d_vec16* s_out) {
    x_t* out = reinterpret_cast<x_t*>(p.out) + c0;
    if (vector_tile) {
#pragma unroll
        for (int m = 0; m < kVlStores; ++m) {
            const int i = threadIdx.x + m * CC1D_FWD_CL_THREADS;
            const int row = i / kVlRowVecs, col = i - row * kVlRowVecs;
            const cc1d_i64 t = t0 + row;
            if (t < p.total)
                cc1d_v16_store_global(out + t * p.out_stride_l + col * CC1D_VEC, cc1d_v16_load_aligned(&s_out[i]));
        }
    } else {
        const x_t* elems = reinterpret_cast<const x_t*>(s_out);
#pragma unroll 4
        for (int e = threadIdx.x; e < kVlRows * kVlChannels; e += CC1D_FWD_CL_THREADS) {
            const int row = e / kVlChannels, c = e - row * kVlChannels;
            const cc1d_i64 t = t0 + row;
            if (t < p.total && c0 + c < p.dim) out[t * p.out_stride_l + c] = elems[e];
        }
    }
}

// One output of the walk down a shared tile column: step r's input is in[(r + K) * 64],
// its output goes to out[r * 64]; win holds the K inputs before it and slides by one.
// w and bias are held taps (cc1d_hold_taps): this kernel is issue-bound on an H200.
CC1D_DEVICE void vl_step(float (&win)[CC1D_K + 1], const float (&w)[CC1D_WIDTH], float bias, bool in_sequence,
                         const x_t* in, x_t* out, int step) {
    const float cur = cc1d_to_float(in[(step + CC1D_K) * kVlChannels]);
    float z = bias;
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k) z = fmaf(w[k], win[k], z);
    z = fmaf(w[CC1D_K], cur, z);
    out[step * kVlChannels] = cc1d_to_x(in_sequence ? cc1d_activate_held(z) : 0.0f);
#pragma unroll
    for (int k = 0; k + 1 < CC1D_K; ++k) win[k] = win[k + 1];
    if (CC1D_K > 0) win[CC1D_K > 0 ? CC1D_K - 1 : 0] = cur;
}

CC1D_DEVICE void vl_forward(const cc1d_varlen_params& p) {
    __shared__ __attribute__((aligned(128))) cc1d_vec16 s_in[kVlInVecs];
    __shared__ __attribute__((aligned(128))) cc1d_vec16 s_out[kVlRows * kVlRowVecs];
    const int tid = threadIdx.x;
    const unsigned int groups = (unsigned int)((p.dim + kVlChannels - 1) / kVlChannels);
    const unsigned int block = cc1d_flat_block();
    if (block >= (cc1d_i64)groups * p.tiles) return;
    const unsigned int tile = block / groups;
    const cc1d_i64 c0 = (cc1d_i64)(block - tile * groups) * kVlChannels, t0 = (cc1d_i64)tile * kVlRows;

    const bool vector_tile = p.vector_ok && c0 + kVlChannels <= p.dim;
    cc1d_vec16 loads[kVlLoads];
    vl_issue_tile_loads(p, t0, c0, vector_tile, loads, s_in);

    const int lane_channel = tid % kVlChannels, segment = tid / kVlChannels;
    const cc1d_i64 d = c0 + lane_channel;
    const bool has_channel = d < p.dim;
    float w[CC1D_WIDTH];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k)
        w[k] = has_channel ? cc1d_load_float<w_t>(p.weight, d * p.w_stride_d + k * p.w_stride_k) : 0.0f;
    float bias = 0.0f;
#if CC1D_HAS_BIAS
    if (has_channel) bias = cc1d_load_float<w_t>(p.bias, d * p.bias_stride);
#endif
    bias = cc1d_hold_taps(w, bias);
    // The tile's sequence boundaries, listed by the block while its loads are in flight;
    // this thread's steps, and the sequence holding the first of them.
    __shared__ cc1d_i64 s_cuts[kVlListed + 2];
    const VlCuts cuts = vl_block_offsets(p, t0 - 1, t0 + kVlRows, s_cuts);
    const int first = segment * kVlSteps;
    const cc1d_i64 t_first = t0 + first;
    VlPlace place = vl_locate_in_cuts(p, cuts, s_cuts, t_first);
    vl_park_tile(vector_tile, loads, s_in);
    __syncthreads();

    {
        const x_t* in = reinterpret_cast<const x_t*>(s_in) + lane_channel;   // token t0-K+r at in[r * kVlChannels]
        x_t* out = reinterpret_cast<x_t*>(s_out) + lane_channel;
        // win[k] = input K - k tokens before the current one; before the sequence's start
        // zeros (phase 1 rewrites those outputs where the sequence has a history).
        float win[CC1D_K + 1];
        {
            const bool near_start = place.s >= 0 && t_first - CC1D_K < place.start;
#pragma unroll
            for (int k = 0; k < CC1D_K; ++k) {
                const cc1d_i64 q = t_first - CC1D_K + k;
                win[k] = near_start && q < place.start ? 0.0f : cc1d_to_float(in[(first + k) * kVlChannels]);
            }
        }
        if (place.next >= t_first + kVlSteps) {
            // No sequence starts among this thread's tokens (the common case): unrolled,
            // inside a sequence or outside all (zeros) for every step.
            if (place.s >= 0) {
#pragma unroll
                for (int step = 0; step < kVlSteps; ++step) vl_step(win, w, bias, true, in, out, first + step);
            } else {
#pragma unroll
                for (int step = 0; step < kVlSteps; ++step) out[(first + step) * kVlChannels] = cc1d_to_x(0.0f);
            }
        } else {
            // Sequence starts ahead: a rolled loop that restarts the window at each one.
#pragma unroll 1
            for (int step = 0; step < kVlSteps; ++step) {
                const cc1d_i64 t = t_first + step;
                if (t >= place.next && t < p.total) {
                    // Steps are one token apart, so t is the new sequence's first token and
                    // all K inputs before it lie before the sequence: zeros.
                    place = vl_locate_in_cuts(p, cuts, s_cuts, t);
#pragma unroll
                    for (int k = 0; k < CC1D_K; ++k) win[k] = 0.0f;
                }
                vl_step(win, w, bias, place.s >= 0, in, out, first + step);
            }
        }
    }
    __syncthreads();

    vl_store_tile(p, t0, c0, vector_tile, s_out);
}
#endif

// Channel-last up to width 4 (NVIDIA) asks for 12 blocks per SM, which its registers
// (38-40 with cp.async staging) allow without spills; ptxas otherwise chose up to 46 in
// some builds, 10 blocks (H200 prefill bench: 201 -> 196 us; docs/perf.md, entry 65).
// Channel-first 16-bit at widths 4-8 asks for 16 blocks per SM: 32 registers without
// spills, where ptxas otherwise chose 40-48 (12 or 10 blocks; H200 prefill bench, width 4:
// 187 -> 179 us, entry 75); fp32 stays at 32-40 by itself, and the bound would spill it,
// as it would 16-bit at widths 2-3 and past 8.
// HIP reads a second argument differently (bwd_channel_first.cu).
#if CC1D_CHANNEL_LAST && CC1D_WIDTH <= 4 && !defined(CC1D_BACKEND_HIP)
#define VL_LAUNCH_BOUNDS __launch_bounds__(CC1D_FWD_CL_THREADS, 12)
#elif !CC1D_CHANNEL_LAST && CC1D_X_DTYPE != 0 && CC1D_WIDTH >= 4 && CC1D_WIDTH <= 8 && !defined(CC1D_BACKEND_HIP)
#define VL_LAUNCH_BOUNDS __launch_bounds__(CC1D_FWD_CF_THREADS, 16)
#else
#define VL_LAUNCH_BOUNDS \
    __launch_bounds__(CC1D_FWD_CL_THREADS > CC1D_FWD_CF_THREADS ? CC1D_FWD_CL_THREADS : CC1D_FWD_CF_THREADS)
#endif
extern "C" __global__ void VL_LAUNCH_BOUNDS CC1D_ENTRY(cc1d_varlen_params p) {
    cc1d_allow_dependent_launch();   // phase 1 may be scheduled (it waits before it stores)
    vl_forward(p);
}

// Phase 1, a kernel of its own so that its registers (the window of 2K values, K outputs
// and K slot values) never limit the main kernel's blocks per SM.
#if CC1D_HAS_INITIAL_STATES
extern "C" __global__ void __launch_bounds__(CC1D_VARLEN_FINISH_THREADS) CC1D_ENTRY_FINISH(cc1d_varlen_params p) { vl_finish_sequence(p); }
#endif
