// ---- Grid and tile addressing, channel-last tiles' input rows ------------------------
// Linear index of this block in a flattened grid (x fastest, then y). Launchers keep a
// grid under 2^32 blocks, so kernels split it with 32-bit divisions: a 64-bit division
// is a called subroutine whose register saves show up as spills.
CC1D_DEVICE unsigned int cc1d_flat_block() { return blockIdx.y * gridDim.x + blockIdx.x; }

#if CC1D_HAS_ASYNC_COPY
// A channel-last tile's input rows as cp.async copies (prelude_cuda.h): vector i of the
// tile (ROW_VECS 16-byte vectors a row, VECS in all) is row i / ROW_VECS, token
// first_token + that row, from `row0` (the tile's first channel at token 0) with stride
// stride_l; zeros for tokens outside [0, len). Thread tid takes vectors tid, tid + THREADS,
// ... (LOADS of them); complete after cc1d_wait_async_copies.
// HOISTED (16-bit x, and the channel-last backward's tiles in fp32 too): THREADS is a
// multiple of ROW_VECS, so a thread's vectors share one column and lie THREADS / ROW_VECS
// rows apart: the 64-bit address and the token range are worked out once, each copy then
// costs a pointer step and two 32-bit compares instead of ~30 instructions of 64-bit
// products and compares (a third of the 16-bit channel-last forward tile kernel's
// instructions). The fp32 forward keeps the per-copy form: with this one it ran 1-6%
// slower on an H200, for no reason found (docs/perf.md, entry 87); the fp32 backward tile
// takes it (entry 152: on an H100 0.8-1.1% faster on calls of 2^22-2^23 elements, even on
// larger ones).
template <int LOADS, int THREADS, int ROW_VECS, int VECS, bool HOISTED = (sizeof(x_t) == 2)>
CC1D_DEVICE void cc1d_copy_tile_rows_async(cc1d_vec16* tile, const x_t* row0, cc1d_i64 stride_l, cc1d_i64 first_token,
                                           cc1d_i64 len) {
    if constexpr (HOISTED) {
        static_assert(THREADS % ROW_VECS == 0, "a thread's vectors share one column");
        constexpr int kRowsApart = THREADS / ROW_VECS;
        constexpr int kSpan = LOADS * kRowsApart;   // rows from the thread's first to past its last
        const unsigned int tid = threadIdx.x;
        const int row = (int)(tid / ROW_VECS), col = (int)(tid % ROW_VECS);
        const cc1d_i64 token = first_token + row;
        // Rows m * kRowsApart (m < LOADS) hold tokens in [0, len) for rows in [lo, hi),
        // clamped to [0, kSpan] so they fit in 32 bits.
        const int lo = token >= 0 ? 0 : (-token > kSpan ? kSpan : (int)(-token));
        const int hi = len - token <= 0 ? 0 : (len - token > kSpan ? kSpan : (int)(len - token));
        const x_t* from = row0 + token * stride_l + col * CC1D_VEC;
        const cc1d_i64 step = kRowsApart * stride_l;
#pragma unroll
        for (int m = 0; m < LOADS; ++m) {
            const int i = (int)tid + m * THREADS;
            const int r = m * kRowsApart;
            if (i < VECS) {
                if (r >= lo && r < hi)
                    cc1d_copy16_async(&tile[i], from);
                else
                    cc1d_v16_store_aligned(&tile[i], cc1d_v16_zero());
            }
            from += step;
        }
    } else {
#pragma unroll
        for (int m = 0; m < LOADS; ++m) {
            const int i = threadIdx.x + m * THREADS;
            const int row = i / ROW_VECS, col = i - row * ROW_VECS;
            const cc1d_i64 t = first_token + row;
            if (i < VECS && t >= 0 && t < len)
                cc1d_copy16_async(&tile[i], row0 + t * stride_l + col * CC1D_VEC);
            else if (i < VECS)
                cc1d_v16_store_aligned(&tile[i], cc1d_v16_zero());
        }
    }
}
#endif

// A channel-last tile's input rows through registers where they cannot be copied as
// aligned 16-byte vectors: rows off 16-byte boundaries (a D or a view's offset that is not
// a multiple of a vector: `aligned` false) or a tile reaching past D. The tile is laid out
// as cc1d_copy_tile_rows_async lays it (vector i: row i / ROW_VECS, token first_token +
// row, channels c0 + (i % ROW_VECS) * VEC on; `row0` is channel 0 at token 0, stride_d
// between channels); zeros for tokens outside [0, len) and channels past dim. A vector that
// lies whole in its row is one aligned load, or in a row of unit stride away from its ends
// two aligned loads and a shift (cc1d_v16_load_shifted), every load of the tile issued
// before the first store; the few at a row's ends (or all, where channels are not
// adjacent) then go element by element, in a loop of their own so their code stays out of
// the unrolled one. Element by element throughout, each load waited for the one before
// it: the channel-last backward's tile kernel ran 3x1001x777 bf16 at 8% of copy bandwidth
// (docs/perf.md, entry 160). Complete when it returns (no copies in flight).
template <int LOADS, int THREADS, int ROW_VECS, int VECS, int BATCH = LOADS>
CC1D_DEVICE void cc1d_load_tile_rows_any(cc1d_vec16* tile, const x_t* row0, cc1d_i64 stride_l, cc1d_i64 stride_d,
                                         cc1d_i64 c0, cc1d_i64 first_token, cc1d_i64 len, cc1d_i64 dim, bool aligned) {
    // Whether the vector from channel pos goes whole (the same for all of a tile's vectors
    // but at the row's ends).
    auto whole = [&](cc1d_i64 pos) {
        return aligned ? pos + CC1D_VEC <= dim : stride_d == 1 && cc1d_v16_shifted_ok(pos, dim);
    };
    // Vector i's token and first channel.
    auto token_of = [&](int i) { return first_token + i / ROW_VECS; };
    auto channel_of = [&](int i) { return c0 + (i - i / ROW_VECS * ROW_VECS) * CC1D_VEC; };
#pragma unroll
    for (int m0 = 0; m0 < LOADS; m0 += BATCH) {
        cc1d_vec16 v[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            const int i = threadIdx.x + (m0 + j) * THREADS;
            const cc1d_i64 t = token_of(i), pos = channel_of(i);
            const x_t* at = row0 + t * stride_l + pos;
            v[j] = cc1d_v16_zero();
            if (m0 + j < LOADS && i < VECS && t >= 0 && t < len && whole(pos))
                v[j] = aligned ? cc1d_v16_load_aligned(at) : cc1d_v16_load_shifted(at);
        }
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            const int i = threadIdx.x + (m0 + j) * THREADS;
            if (m0 + j < LOADS && i < VECS) cc1d_v16_store_aligned(&tile[i], v[j]);
        }
    }
    // The vectors at a row's ends, by the thread that stored their zeros above.
    if (stride_d == 1 && c0 >= CC1D_VEC && c0 + ROW_VECS * CC1D_VEC + CC1D_VEC <= dim) return;   // none here
#pragma unroll 1
    for (int m = 0; m < LOADS; ++m) {
        const int i = threadIdx.x + m * THREADS;
        const cc1d_i64 t = token_of(i), pos = channel_of(i);
        if (i < VECS && t >= 0 && t < len && !whole(pos) && pos < dim)
            cc1d_v16_store_aligned(&tile[i], cc1d_v16_load(row0 + t * stride_l, stride_d, pos, dim, false));
    }
}
