// ---- 16-byte vectors of x_t: loads, stores and packing ------------------------------
// Load VEC consecutive elements starting at element `pos` of a row (0 outside [0, len)).
// `vector_ok` promises that row + pos is 16-byte aligned whenever pos % VEC == 0.
CC1D_DEVICE void cc1d_load_vec(const x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len,
                               bool vector_ok, float (&out)[16 / sizeof(x_t)]) {
    const int n = CC1D_VEC;
    if (vector_ok && pos >= 0 && pos + n <= len) {
        cc1d_vec16 v = *reinterpret_cast<const cc1d_vec16*>(row + pos);
        const x_t* e = reinterpret_cast<const x_t*>(&v);
#pragma unroll
        for (int i = 0; i < n; ++i) out[i] = cc1d_to_float(e[i]);
    } else {
#pragma unroll
        for (int i = 0; i < n; ++i) {
            cc1d_i64 p = pos + i;
            out[i] = (p >= 0 && p < len) ? cc1d_to_float(row[p * stride]) : 0.0f;
        }
    }
}

// Store VEC consecutive elements starting at `pos`, dropping those at or past len.
CC1D_DEVICE void cc1d_store_vec(x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len,
                                bool vector_ok, const float (&in)[16 / sizeof(x_t)]) {
    const int n = CC1D_VEC;
    if (vector_ok && pos >= 0 && pos + n <= len) {
        cc1d_vec16 v;
        x_t* e = reinterpret_cast<x_t*>(&v);
#pragma unroll
        for (int i = 0; i < n; ++i) e[i] = cc1d_from_float<x_t>(in[i]);
        *reinterpret_cast<cc1d_vec16*>(row + pos) = v;
    } else {
#pragma unroll
        for (int i = 0; i < n; ++i) {
            cc1d_i64 p = pos + i;
            if (p >= 0 && p < len) row[p * stride] = cc1d_from_float<x_t>(in[i]);
        }
    }
}

template <typename T> CC1D_DEVICE float cc1d_load_float(const void* base, cc1d_i64 offset) {
    return cc1d_to_float(reinterpret_cast<const T*>(base)[offset]);
}

// ---- Raw 16-byte vectors of x_t ------------------------------------------------------
// Element access with indices that unrolled loops make compile-time constants, so a
// vector stays in four registers (no local memory). "raw" means the stored bits, which
// is what state copies need (bit-identical) and what shared memory holds.
CC1D_DEVICE unsigned int cc1d_bits_of(float v) { return (unsigned int)__float_as_int(v); }
CC1D_DEVICE unsigned int cc1d_bits_of(cc1d_half v) { return v.bits; }
CC1D_DEVICE unsigned int cc1d_bits_of(cc1d_bf16 v) { return v.bits; }
template <typename T> CC1D_DEVICE T cc1d_of_bits(unsigned int bits);
template <> CC1D_DEVICE float cc1d_of_bits<float>(unsigned int bits) { return __int_as_float((int)bits); }
template <> CC1D_DEVICE cc1d_half cc1d_of_bits<cc1d_half>(unsigned int bits) {
    cc1d_half h; h.bits = (unsigned short)bits; return h;
}
template <> CC1D_DEVICE cc1d_bf16 cc1d_of_bits<cc1d_bf16>(unsigned int bits) {
    cc1d_bf16 b; b.bits = (unsigned short)bits; return b;
}

CC1D_DEVICE cc1d_vec16 cc1d_v16_zero() {
    cc1d_vec16 v;
    v.w[0] = v.w[1] = v.w[2] = v.w[3] = 0u;
    return v;
}
// Element e (0 <= e < CC1D_VEC) of a vector of x_t.
CC1D_DEVICE x_t cc1d_v16_raw(const cc1d_vec16& v, int e) {
    if (sizeof(x_t) == 4) return cc1d_of_bits<x_t>(v.w[e & 3]);
    return cc1d_of_bits<x_t>((v.w[(e >> 1) & 3] >> ((e & 1) * 16)) & 0xffffu);
}
CC1D_DEVICE float cc1d_v16_float(const cc1d_vec16& v, int e) { return cc1d_to_float(cc1d_v16_raw(v, e)); }
CC1D_DEVICE void cc1d_v16_set(cc1d_vec16& v, int e, x_t value) {
    const unsigned int bits = cc1d_bits_of(value);
    if (sizeof(x_t) == 4) {
        v.w[e & 3] = bits;
    } else {
        const int shift = (e & 1) * 16;
        unsigned int& word = v.w[(e >> 1) & 3];
        word = (word & ~(0xffffu << shift)) | (bits << shift);
    }
}

// One 16-byte access at a 16-byte aligned address (global or shared). Goes through the
// compilers' built-in uint4 so the access stays one instruction: a struct copy may be
// split into four 4-byte stores once the struct's fields were promoted to registers.
CC1D_DEVICE cc1d_vec16 cc1d_v16_load_aligned(const void* address) {
    const uint4 u = *reinterpret_cast<const uint4*>(address);
    cc1d_vec16 v;
    v.w[0] = u.x; v.w[1] = u.y; v.w[2] = u.z; v.w[3] = u.w;
    return v;
}
CC1D_DEVICE void cc1d_v16_store_aligned(void* address, const cc1d_vec16& v) {
    uint4 u;
    u.x = v.w[0]; u.y = v.w[1]; u.z = v.w[2]; u.w = v.w[3];
    *reinterpret_cast<uint4*>(address) = u;
}
// A 16-byte store to global memory. NVVM splits even the uint4 store into four 4-byte
// stores when the address is computed from a 2-byte element pointer, so CUDA says it
// in PTX (the memory clobber keeps it ordered with this thread's other accesses).
CC1D_DEVICE void cc1d_v16_store_global(void* address, const cc1d_vec16& v) {
#if defined(CC1D_BACKEND_CUDA)
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(address), "r"(v.w[0]), "r"(v.w[1]),
                 "r"(v.w[2]), "r"(v.w[3])
                 : "memory");
#else
    cc1d_v16_store_aligned(address, v);
#endif
}

// 16 bytes from `at`, an element address that need not be 16-byte aligned, as two aligned
// 16-byte loads and a shift: for rows of unit stride whose start is not aligned (a
// channel-first L, or a view's offset, that is not a multiple of a vector), where the
// forward's element-by-element loads ran 2-4 times slower than aligned rows on an H200
// (docs/perf.md, entry 94). The caller promises that every byte of the 32 the two loads
// cover is readable: a vector before and one after `at` lie in the same row
// (cc1d_v16_shifted_ok).
CC1D_DEVICE bool cc1d_v16_shifted_ok(cc1d_i64 pos, cc1d_i64 len) { return pos >= CC1D_VEC && pos + 2 * CC1D_VEC <= len; }
CC1D_DEVICE cc1d_vec16 cc1d_v16_load_shifted(const x_t* at) {
    const unsigned long long address = reinterpret_cast<unsigned long long>(at);
    const unsigned int offset = (unsigned int)(address & 15u);
    const cc1d_vec16* block = reinterpret_cast<const cc1d_vec16*>(address - offset);
    const cc1d_vec16 lo = cc1d_v16_load_aligned(block), hi = cc1d_v16_load_aligned(block + 1);
    const unsigned int w[8] = {lo.w[0], lo.w[1], lo.w[2], lo.w[3], hi.w[0], hi.w[1], hi.w[2], hi.w[3]};
    // Whole words first (the same for a row's every vector, so no divergence), then bytes.
    // Selects rather than w[i + words]: a run-time index would put w in local memory.
    const unsigned int words = offset >> 2, bits = (offset & 3u) * 8u;
    unsigned int u[5];
#pragma unroll
    for (int i = 0; i < 5; ++i)
        u[i] = words == 0 ? w[i] : (words == 1 ? w[i + 1] : (words == 2 ? w[i + 2] : w[i + 3]));
    cc1d_vec16 v;
#pragma unroll
    for (int i = 0; i < 4; ++i) v.w[i] = bits == 0 ? u[i] : (u[i] >> bits) | (u[i + 1] << (32u - bits));
    return v;
}

// 16 bytes to `at`, an element address that need not be 16-byte aligned, as the widest
// aligned stores that write exactly those bytes (2 of 8 bytes, 4 of 4, or 2 + 3 x 4 + 2).
CC1D_DEVICE void cc1d_v16_store_split(x_t* at, const cc1d_vec16& v) {
    const unsigned long long address = reinterpret_cast<unsigned long long>(at);
    if ((address & 7u) == 0) {
        unsigned long long* q = reinterpret_cast<unsigned long long*>(address);
        q[0] = (unsigned long long)v.w[1] << 32 | v.w[0];
        q[1] = (unsigned long long)v.w[3] << 32 | v.w[2];
    } else if ((address & 3u) == 0) {
        unsigned int* q = reinterpret_cast<unsigned int*>(address);
#pragma unroll
        for (int i = 0; i < 4; ++i) q[i] = v.w[i];
    } else {   // 2-byte aligned (16-bit elements)
        unsigned short* first = reinterpret_cast<unsigned short*>(address);
        *first = (unsigned short)(v.w[0] & 0xffffu);
        unsigned int* q = reinterpret_cast<unsigned int*>(address + 2);
#pragma unroll
        for (int i = 0; i < 3; ++i) q[i] = (v.w[i] >> 16) | (v.w[i + 1] << 16);
        unsigned short* last = reinterpret_cast<unsigned short*>(address + 14);
        *last = (unsigned short)(v.w[3] >> 16);
    }
}

// CC1D_VEC elements of a global row from element `pos` on (element i at row[(pos + i) * stride]):
// one 16-byte access when `vectorized` (the caller promises alignment, unit stride and
// that the whole vector lies in [0, len)), else element by element, reading 0 and
// writing nothing outside [0, len).
CC1D_DEVICE cc1d_vec16 cc1d_v16_load(const x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len,
                                     bool vectorized) {
    if (vectorized) return cc1d_v16_load_aligned(row + pos);
    cc1d_vec16 v = cc1d_v16_zero();
#pragma unroll
    for (int i = 0; i < CC1D_VEC; ++i) {
        const cc1d_i64 p = pos + i;
        if (p >= 0 && p < len) cc1d_v16_set(v, i, row[p * stride]);
    }
    return v;
}
CC1D_DEVICE void cc1d_v16_store(x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len, bool vectorized,
                                const cc1d_vec16& v) {
    if (vectorized) {
        cc1d_v16_store_global(row + pos, v);
        return;
    }
#pragma unroll
    for (int i = 0; i < CC1D_VEC; ++i) {
        const cc1d_i64 p = pos + i;
        if (p >= 0 && p < len) row[p * stride] = cc1d_v16_raw(v, i);
    }
}

// Tiles that follow a row's own 16-byte boundaries (the channel-first modules of rows off
// such boundaries, CC1D_SHIFTED_ROWS) start up to VEC - 1 positions before the row, so
// every vector inside it is one aligned access; its first and last vectors, the "edge
// vectors", are staged element by element. Whether the tile vector at `pos` is one: it
// holds positions of the row but does not lie whole in it.
CC1D_DEVICE bool cc1d_row_edge_vector(cc1d_i64 pos, cc1d_i64 len) { return pos < len && (pos < 0 || pos + CC1D_VEC > len); }
// Edge element k (< 2 * VEC: the row's first vector, then the vector of its last position)
// of the tile that starts at row position tile_start (a multiple of VEC from the row's
// first vector) and spans tile_elems positions, as an element of the tile; -1 where this
// tile has no such vector (or the first vector is the last too, staged as the first).
CC1D_DEVICE int cc1d_row_edge_element(cc1d_i64 tile_start, int tile_elems, cc1d_i64 len, int k) {
    const int e = k % CC1D_VEC;
    if (k < CC1D_VEC) return tile_start < 0 ? e : -1;
    const cc1d_i64 last = len - 1 - tile_start;   // the row's last position, from the tile start
    if (last < 0 || last >= tile_elems || (len - tile_start) % CC1D_VEC == 0) return -1;
    const int first = (int)(last / CC1D_VEC) * CC1D_VEC;
    return tile_start < 0 && first == 0 ? -1 : first + e;
}

// The vector at `pos` of a row as cc1d_v16_load reads it, for rows that may start off a
// 16-byte boundary: one aligned load where `aligned` (the caller's promise for the whole
// row: 16-byte aligned, unit stride) and the vector lies in [0, len); else, in a row of
// unit stride away from its first and last vectors, two aligned loads and a shift; else
// element by element.
CC1D_DEVICE cc1d_vec16 cc1d_v16_load_row(const x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len, bool aligned) {
    if (aligned && pos + CC1D_VEC <= len) return cc1d_v16_load_aligned(row + pos);
    if (stride == 1 && cc1d_v16_shifted_ok(pos, len)) return cc1d_v16_load_shifted(row + pos);
    return cc1d_v16_load(row, stride, pos, len, false);
}
// The store of cc1d_v16_load_row: one aligned store, the widest aligned pieces in a row
// of unit stride (cc1d_v16_store_split), or element by element, writing nothing outside
// [0, len).
CC1D_DEVICE void cc1d_v16_store_row(x_t* row, cc1d_i64 stride, cc1d_i64 pos, cc1d_i64 len, bool aligned,
                                    const cc1d_vec16& v) {
    if (aligned && pos + CC1D_VEC <= len) {
        cc1d_v16_store_global(row + pos, v);
    } else if (stride == 1 && pos >= 0 && pos + CC1D_VEC <= len) {
        cc1d_v16_store_split(row + pos, v);
    } else {
        cc1d_v16_store(row, stride, pos, len, false, v);
    }
}

// fp32 -> x_t, round to nearest even, in one instruction where the hardware has one
// (NVIDIA sm_80+: cvt.rn.bf16.f32); elsewhere cc1d_from_float. The software bf16
// rounding costs about eight instructions an element, a large share of a forward
// kernel's issue budget at full memory bandwidth.
CC1D_DEVICE x_t cc1d_to_x(float v) {
#if defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CC1D_X_DTYPE == 2
    unsigned short bits;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(v));
    return cc1d_of_bits<x_t>(bits);
#else
    return cc1d_from_float<x_t>(v);
#endif
}

// CC1D_VEC fp32 values -> one raw vector of x_t; 16-bit pairs in one instruction each on
// NVIDIA sm_80+ (cvt.rn.{bf16x2,f16x2}.f32 packs its first operand into the high half).
CC1D_DEVICE cc1d_vec16 cc1d_v16_from_floats(const float (&v)[16 / sizeof(x_t)]) {
    cc1d_vec16 r = cc1d_v16_zero();
#if defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CC1D_X_DTYPE != 0
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#if CC1D_X_DTYPE == 2
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r.w[i]) : "f"(v[2 * i + 1]), "f"(v[2 * i]));
#else
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r.w[i]) : "f"(v[2 * i + 1]), "f"(v[2 * i]));
#endif
    }
#else
#pragma unroll
    for (int e = 0; e < CC1D_VEC; ++e) cc1d_v16_set(r, e, cc1d_from_float<x_t>(v[e]));
#endif
    return r;
}

// Two fp32 values -> one 32-bit word of two x_t (lo in the low half), rounded to nearest
// even; one instruction on NVIDIA sm_80+ (16-bit x), cc1d_from_float elsewhere.
CC1D_DEVICE unsigned int cc1d_pack_pair(float lo, float hi) {
#if defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CC1D_X_DTYPE == 2
    unsigned int r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#elif defined(CC1D_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && CC1D_X_DTYPE == 1
    unsigned int r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return (cc1d_bits_of(cc1d_from_float<x_t>(lo)) & 0xffffu) | (cc1d_bits_of(cc1d_from_float<x_t>(hi)) << 16);
#endif
}
