// Causal conv1d decoding update: x (B, D, T) new tokens against conv_state (B_cache, D, S).
//
// A block handles p.chunk channels of one row b. Per channel:
//  1. the K history values (plain: the last K of the S entries; circular buffer:
//     (c - K + j) mod S) go to fp32 registers,
//  2. the new state entries are written as raw copies (bit-identical) — plain shift in
//     place: new[i] = old[i + T] (or x[i + T - S]) for ascending i reads only entries at
//     or after i + T > i, which no earlier step has overwritten,
//  3. the T outputs are computed with that window (compile-time indices).
// Staged path (p.staged, the usual contiguous layouts): the block's slice of x, out and
// the state are each one contiguous, 16-byte aligned run of memory, so they move between
// global and shared memory as 16-byte vectors, several in flight per thread, and the
// per-channel work reads shared memory. Decoding is a few bytes per channel: with a
// thread per channel and 2-byte accesses the instruction count, not the memory, would
// set the time. Otherwise a thread per channel works on global memory directly.
// A row whose conv_state_indices entry equals pad_slot_id gets zeros in out, state
// untouched.

constexpr int kUpdLoads = 4;   // 16-byte vectors per thread in flight while staging

// Where the window and the writes start in a row's S entries.
struct UpdCursor {
    int first_history;   // entry of history value 0 (then +1 mod S)
    int first_write;     // entry of new token 0 (then +1 mod S); plain: unused
};

CC1D_DEVICE int upd_next(int entry, int S) { return entry + 1 == S ? 0 : entry + 1; }

// Steps 1-3 for one channel. `state` entry j at state[j * ss], token t at x[t * xs], its
// output at out[t * os] (out may alias x: every x[t] is read before out[t] is written).
CC1D_DEVICE void upd_channel(const cc1d_update_params& p, cc1d_i64 d, const UpdCursor& cur, x_t* state, cc1d_i64 ss,
                             const x_t* x, cc1d_i64 xs, x_t* out, cc1d_i64 os) {
    const int S = (int)p.state_len, T = (int)p.seqlen;
    float w[CC1D_WIDTH];
#pragma unroll
    for (int k = 0; k < CC1D_WIDTH; ++k) w[k] = cc1d_load_float<w_t>(p.weight, d * p.w_stride_d + k * p.w_stride_k);
    float bias = 0.0f;
#if CC1D_HAS_BIAS
    bias = cc1d_load_float<w_t>(p.bias, d * p.bias_stride);
#endif

    // 1. history: window[k] = the input K - k steps before the first new token.
    float window[CC1D_K + 1];
    int entry = cur.first_history;
#pragma unroll
    for (int k = 0; k < CC1D_K; ++k) {
        window[k] = cc1d_to_float(state[entry * ss]);
        entry = upd_next(entry, S);
    }

    // 2. the new state.
#if CC1D_HAS_CACHE_SEQLENS
    // Token t goes to (c + t) mod S; with T > S only the last S tokens survive, so the
    // earlier ones are skipped (the result equals writing all of them in order).
    if (S > 0) {
        const int skip = T > S ? T - S : 0;
        entry = cur.first_write;
        for (int i = 0; i < skip % S; ++i) entry = upd_next(entry, S);
        for (int t = skip; t < T; ++t) {
            state[entry * ss] = x[t * xs];
            entry = upd_next(entry, S);
        }
    }
#else
    for (int i = 0; i < S; ++i) {
        const int from = i + T;   // index into concat(old state, x)
        state[i * ss] = from < S ? state[from * ss] : x[(from - S) * xs];
    }
#endif

    // 3. outputs.
#pragma unroll 1
    for (int t = 0; t < T; ++t) {
        const float xt = cc1d_to_float(x[t * xs]);
        float z = bias;
#pragma unroll
        for (int k = 0; k < CC1D_K; ++k) z = fmaf(w[k], window[k], z);
        z = fmaf(w[CC1D_K], xt, z);
        out[t * os] = cc1d_to_x(cc1d_activate_fast(z));
#pragma unroll
        for (int k = 0; k + 1 < CC1D_K; ++k) window[k] = window[k + 1];
        if (CC1D_K > 0) window[CC1D_K > 0 ? CC1D_K - 1 : 0] = xt;
    }
}

// count elements global -> shared: 16-byte vectors (src and dst 16-byte aligned), up to
// kUpdLoads of them in flight per thread, then the tail element by element.
CC1D_DEVICE void upd_stage_in(const x_t* src, int count, x_t* dst) {
    const int nthreads = blockDim.x, tid = threadIdx.x, vecs = count / CC1D_VEC;
    for (int base = 0; base < vecs; base += kUpdLoads * nthreads) {
        cc1d_vec16 v[kUpdLoads];
#pragma unroll
        for (int m = 0; m < kUpdLoads; ++m) {
            const int i = base + tid + m * nthreads;
            v[m] = i < vecs ? cc1d_v16_load_aligned(src + i * CC1D_VEC) : cc1d_v16_zero();
        }
#pragma unroll
        for (int m = 0; m < kUpdLoads; ++m) {
            const int i = base + tid + m * nthreads;
            if (i < vecs) cc1d_v16_store_aligned(dst + i * CC1D_VEC, v[m]);
        }
    }
    for (int e = vecs * CC1D_VEC + tid; e < count; e += nthreads) dst[e] = src[e];
}

// count elements shared -> global (src null: zeros).
CC1D_DEVICE void upd_stage_out(const x_t* src, int count, x_t* dst) {
    const int nthreads = blockDim.x, tid = threadIdx.x, vecs = count / CC1D_VEC;
    for (int i = tid; i < vecs; i += nthreads)
        cc1d_v16_store_global(dst + i * CC1D_VEC,
                              src != nullptr ? cc1d_v16_load_aligned(src + i * CC1D_VEC) : cc1d_v16_zero());
    for (int e = vecs * CC1D_VEC + tid; e < count; e += nthreads)
        dst[e] = src != nullptr ? src[e] : cc1d_of_bits<x_t>(0u);
}

extern "C" __global__ void __launch_bounds__(CC1D_UPDATE_THREADS) CC1D_ENTRY(cc1d_update_params p) {
    extern __shared__ cc1d_vec16 upd_smem[];
    const unsigned int chunk = (unsigned int)p.chunk;
    const unsigned int chunks = ((unsigned int)p.dim + chunk - 1) / chunk;
    const unsigned int block = cc1d_flat_block();
    const unsigned int b = block / chunks;
    if (b >= p.batch) return;
    const cc1d_i64 c0 = (cc1d_i64)(block - b * chunks) * chunk;
    const int channels = p.dim - c0 < chunk ? (int)(p.dim - c0) : (int)chunk;
    const int S = (int)p.state_len, T = (int)p.seqlen;

    const x_t* x = reinterpret_cast<const x_t*>(p.x) + b * p.x_stride_b + c0 * p.x_stride_d;
    x_t* out = reinterpret_cast<x_t*>(p.out) + b * p.out_stride_b + c0 * p.out_stride_d;
    cc1d_i64 slot = b;
#if CC1D_HAS_STATE_INDICES
    slot = p.conv_state_indices[b * p.indices_stride];
    if (slot == p.pad_slot_id) {
        if (p.staged) {
            upd_stage_out(nullptr, channels * T, out);
        } else if ((int)threadIdx.x < channels) {
            for (int t = 0; t < T; ++t) out[threadIdx.x * p.out_stride_d + t * p.out_stride_l] = cc1d_of_bits<x_t>(0u);
        }
        return;
    }
#endif
    x_t* state = reinterpret_cast<x_t*>(p.conv_state) + slot * p.state_stride_b + c0 * p.state_stride_d;

    UpdCursor cur;
#if CC1D_HAS_CACHE_SEQLENS
    if (S > 0) {
        int c = p.cache_seqlens[b * p.seqlens_stride] % S;   // one division per thread
        if (c < 0) c += S;
        cur.first_write = c;
        cur.first_history = c - CC1D_K < 0 ? c - CC1D_K + S : c - CC1D_K;   // K <= S
    } else {
        cur.first_write = cur.first_history = 0;
    }
#else
    cur.first_history = S - CC1D_K;
    cur.first_write = 0;
#endif

    if (!p.staged) {
        const int c = threadIdx.x;   // the launcher makes chunk == blockDim.x here
        if (c < channels)
            upd_channel(p, c0 + c, cur, state + c * p.state_stride_d, p.state_stride_l, x + c * p.x_stride_d,
                        p.x_stride_l, out + c * p.out_stride_d, p.out_stride_l);
        return;
    }

    // Staged: state run of channels * S, then x run of channels * T (outputs replace it).
    x_t* s_state = reinterpret_cast<x_t*>(upd_smem);
    x_t* s_x = s_state + (chunk * S + CC1D_VEC - 1) / CC1D_VEC * CC1D_VEC;
    upd_stage_in(state, channels * S, s_state);
    upd_stage_in(x, channels * T, s_x);
    __syncthreads();
    for (int c = threadIdx.x; c < channels; c += blockDim.x)
        upd_channel(p, c0 + c, cur, s_state + c * S, 1, s_x + c * T, 1, s_x + c * T, 1);
    __syncthreads();
    upd_stage_out(s_state, channels * S, state);
    upd_stage_out(s_x, channels * T, out);
}
