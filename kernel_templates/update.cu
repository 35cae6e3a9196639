// Causal conv1d decoding update: x (B, D, T) new tokens against conv_state (B_cache, D, S).
//
// A block handles p.chunk channels of one row b. Per channel:
//  1. the K history values (plain: the last K of the S entries; circular buffer:
//     (c - K + j) mod S) go to fp32 registers,
//  2. the new state entries are written as raw copies (bit-identical) — plain shift in
//     place: new[i] = old[i + T] (or x[i + T - S]) for ascending i reads only entries at
//     or after i + T > i, which no earlier step has overwritten,
//  3. the T outputs are computed with that window (compile-time indices).
// Staged path (p.path == CC1D_UPD_STAGED, contiguous layouts): the block's slice of x, out and
// the state are each one contiguous, 16-byte aligned run of memory, so they move between
// global and shared memory as 16-byte vectors, several in flight per thread, and the
// per-channel work reads shared memory. Decoding is a few bytes per channel: with a
// thread per channel and 2-byte accesses the instruction count, not the memory, would
// set the time. Otherwise a thread per channel works on global memory directly.
// Registers path (kernel CC1D_ENTRY_REGISTERS, p.path == CC1D_UPD_REGISTERS: one token, state_len == K, plain state,
// contiguous aligned rows; the usual decoding step): a thread owns the VEC channels of
// one x vector. It issues every load of its work at once (x, its K·VEC state entries
// and, when the weight rows are contiguous, the VEC·W weights, all as 16-byte vectors),
// computes in registers and stores out and the shifted state as 16-byte vectors: one
// memory round trip per thread, no barrier, no shared memory.
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
    const float bias = cc1d_load_channel_taps(p, d, w);

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


// ---- registers path ----------------------------------------------------------------------
constexpr int kUpdRegStateVecs = CC1D_K;   // VEC channels x K entries = K vectors
constexpr int kUpdStateDivisor = CC1D_K > 0 ? CC1D_K : 1;   // K, and 1 for width 1 (no state)
constexpr int kUpdRegWeightBytes = CC1D_VEC * CC1D_WIDTH * (int)sizeof(w_t);
constexpr int kUpdRegWeightVecs = kUpdRegWeightBytes % 16 == 0 ? kUpdRegWeightBytes / 16 : 1;
constexpr bool kUpdRegWeightVectors = kUpdRegWeightBytes % 16 == 0;

// Element i of an array of raw w_t packed into 16-byte vectors (i a compile-time constant
// after unrolling).
CC1D_DEVICE float upd_w_element(const cc1d_vec16 (&v)[kUpdRegWeightVecs], int i) {
    const int per_vec = 16 / (int)sizeof(w_t);
    const cc1d_vec16& vec = v[(i / per_vec) % kUpdRegWeightVecs];   // (the modulo only matters in dead code)
    const int e = i % per_vec;
    if (sizeof(w_t) == 4) return cc1d_to_float(cc1d_of_bits<float>(vec.w[e & 3]));
    return cc1d_to_float(cc1d_of_bits<w_t>((vec.w[(e >> 1) & 3] >> ((e & 1) * 16)) & 0xffffu));
}

CC1D_DEVICE void upd_registers(const cc1d_update_params& p) {
    const unsigned int vecs_per_row = (unsigned int)p.dim / CC1D_VEC;   // the launcher made dim % VEC == 0
    const unsigned int g = cc1d_flat_block() * blockDim.x + threadIdx.x;
    const unsigned int b = g / vecs_per_row;
    if (b >= p.batch) return;
    const cc1d_i64 c0 = (cc1d_i64)(g - b * vecs_per_row) * CC1D_VEC;
    const x_t* x = reinterpret_cast<const x_t*>(p.x) + b * p.x_stride_b + c0;
    x_t* out = reinterpret_cast<x_t*>(p.out) + b * p.out_stride_b + c0;
    cc1d_i64 slot = b;
#if CC1D_HAS_STATE_INDICES
    slot = p.conv_state_indices[b * p.indices_stride];
    if (slot == p.pad_slot_id) {
        cc1d_v16_store_global(out, cc1d_v16_zero());
        return;
    }
#endif
    // The channels' K entries each, adjacent: entry j of channel c at element c * K + j.
    x_t* state = reinterpret_cast<x_t*>(p.conv_state) + slot * p.state_stride_b + c0 * CC1D_K;

    // ---- every load first ----
    const cc1d_vec16 xv = cc1d_v16_load_aligned(x);
    cc1d_vec16 sv[kUpdRegStateVecs > 0 ? kUpdRegStateVecs : 1];
#pragma unroll
    for (int i = 0; i < kUpdRegStateVecs; ++i) sv[i] = cc1d_v16_load_aligned(state + i * CC1D_VEC);
    float w[CC1D_VEC][CC1D_WIDTH];
    if (kUpdRegWeightVectors && p.weight_vectors) {
        cc1d_vec16 wv[kUpdRegWeightVecs];
        const char* wrow = reinterpret_cast<const char*>(p.weight) + c0 * CC1D_WIDTH * (cc1d_i64)sizeof(w_t);
#pragma unroll
        for (int i = 0; i < kUpdRegWeightVecs; ++i) wv[i] = cc1d_v16_load_aligned(wrow + 16 * i);
#pragma unroll
        for (int c = 0; c < CC1D_VEC; ++c)
#pragma unroll
            for (int k = 0; k < CC1D_WIDTH; ++k) w[c][k] = upd_w_element(wv, c * CC1D_WIDTH + k);
    } else {
#pragma unroll
        for (int c = 0; c < CC1D_VEC; ++c)
#pragma unroll
            for (int k = 0; k < CC1D_WIDTH; ++k)
                w[c][k] = cc1d_load_float<w_t>(p.weight, (c0 + c) * p.w_stride_d + k * p.w_stride_k);
    }
    float bias[CC1D_VEC];
#pragma unroll
    for (int c = 0; c < CC1D_VEC; ++c) {
#if CC1D_HAS_BIAS
        bias[c] = cc1d_load_float<w_t>(p.bias, (c0 + c) * p.bias_stride);
#else
        bias[c] = 0.0f;
#endif
    }

    // ---- outputs, then the state shifted by one token (raw bits: bit-exact) ----
    float ys[CC1D_VEC];
#pragma unroll
    for (int c = 0; c < CC1D_VEC; ++c) {
        float z = bias[c];
#pragma unroll
        for (int k = 0; k < CC1D_K; ++k) {
            const int e = c * CC1D_K + k;
            z = fmaf(w[c][k], cc1d_v16_float(sv[e / CC1D_VEC], e % CC1D_VEC), z);
        }
        z = fmaf(w[c][CC1D_K], cc1d_v16_float(xv, c), z);
        ys[c] = cc1d_activate_fast(z);
    }
    cc1d_v16_store_global(out, cc1d_v16_from_floats(ys));
    if (kUpdRegStateVecs > 0) {
        cc1d_vec16 nv[kUpdRegStateVecs > 0 ? kUpdRegStateVecs : 1];
#pragma unroll
        for (int e = 0; e < CC1D_K * CC1D_VEC; ++e) {
            // (width 1 has no state and never gets here; kUpdStateDivisor keeps its front end
            // from warning about a division by zero)
            const int c = e / kUpdStateDivisor, j = e % kUpdStateDivisor;   // new entry j = old entry j + 1, the last = x
            const int from = e + 1;
            const x_t value = j + 1 < CC1D_K ? cc1d_v16_raw(sv[from / CC1D_VEC], from % CC1D_VEC) : cc1d_v16_raw(xv, c);
            cc1d_v16_set(nv[e / CC1D_VEC], e % CC1D_VEC, value);
        }
#pragma unroll
        for (int i = 0; i < kUpdRegStateVecs; ++i) cc1d_v16_store_global(state + i * CC1D_VEC, nv[i]);
    }
}

// The registers path is a kernel of its own: its register count (which grows with the
// width) must not lower the occupancy of the staged and per-channel paths.
extern "C" __global__ void __launch_bounds__(CC1D_UPDATE_THREADS) CC1D_ENTRY_REGISTERS(cc1d_update_params p) {
#if !CC1D_HAS_CACHE_SEQLENS
    upd_registers(p);
#else
    (void)p;   // circular state: never launched (update.cpp)
#endif
}

extern "C" __global__ void __launch_bounds__(CC1D_UPDATE_THREADS) CC1D_ENTRY(cc1d_update_params p) {
    extern __shared__ __attribute__((aligned(128))) cc1d_vec16 upd_smem[];
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
        if (p.path == CC1D_UPD_STAGED) {
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

    if (p.path == CC1D_UPD_PER_CHANNEL) {
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
