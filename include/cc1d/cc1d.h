/* cc1d: runtime-compiled causal conv1d kernels. The C ABI.
 *
 * A thin layer over the C++ Runtime (cc1d.hpp) for callers that cannot use C++
 * across a library boundary: Python (ctypes), Rust, Go, other compilers.
 *
 * Rules of this ABI:
 * - Every function returns a cc1d_status; exceptions never cross it. After a failed
 *   call, cc1d_last_error() describes the failure (per thread).
 * - Tensors are plain structs: a device pointer, a dtype, a rank and up to three
 *   sizes and strides, strides counted in elements (not bytes). A tensor with
 *   data == NULL and rank == 0 is "absent" (every optional argument starts that way).
 * - Argument structs start with `struct_size`, the sizeof the caller compiled against.
 *   Later versions only append fields; the library reads what the caller's size covers
 *   and gives the rest their defaults, so an old caller keeps working. A caller built
 *   against a newer header may pass a larger struct to an older library as long as the
 *   fields that library does not know are left zero (new fields are defined so that zero
 *   keeps the old behaviour). Use the *_init() helpers below: they set struct_size and
 *   the defaults.
 * - Streams are `void*` (a CUstream or a hipStream_t); NULL is the default stream.
 */
#ifndef CC1D_CC1D_H
#define CC1D_CC1D_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#define CC1D_API __declspec(dllexport)
#elif defined(__GNUC__)
#define CC1D_API __attribute__((visibility("default")))
#else
#define CC1D_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct gains fields or a function is added; never for a rename. */
#define CC1D_ABI_VERSION 1

/* Mirrors cc1d::ErrorCode, plus ok and the failures C++ reports without a code. */
typedef enum cc1d_status {
    CC1D_STATUS_OK = 0,
    CC1D_STATUS_INVALID_ARGUMENT = 1,
    CC1D_STATUS_UNSUPPORTED = 2,
    CC1D_STATUS_COMPILE_FAILED = 3,
    CC1D_STATUS_DEVICE_ERROR = 4,
    CC1D_STATUS_BACKEND_UNAVAILABLE = 5,
    CC1D_STATUS_OUT_OF_MEMORY = 6,     /* host memory (std::bad_alloc) */
    CC1D_STATUS_INTERNAL_ERROR = 7     /* any other unexpected failure */
} cc1d_status;

/* Same numbering as cc1d::DType, cc1d::Activation. */
typedef enum cc1d_dtype {
    CC1D_DTYPE_FP32 = 0,
    CC1D_DTYPE_FP16 = 1,
    CC1D_DTYPE_BF16 = 2,
    CC1D_DTYPE_INT32 = 3
} cc1d_dtype;

typedef enum cc1d_activation {
    CC1D_ACTIVATION_NONE = 0,
    CC1D_ACTIVATION_SILU = 1
} cc1d_activation;

#define CC1D_MAX_RANK 3

/* Enum-typed fields are stored as int32_t so the layout never depends on the
 * compiler's choice of enum size. An empty tensor (a zero in its shape) may have NULL
 * data. A tensor a call writes must have distinct elements (no zero or interleaving
 * strides) and share no memory with any other tensor of that call; update's conv_state
 * and varlen_fwd's conv_states are the ones read and written in place. */
typedef struct cc1d_tensor {
    const void* data;                 /* device pointer, aligned to the element size; NULL (with rank 0) = absent */
    int32_t dtype;                    /* cc1d_dtype */
    int32_t rank;                     /* 0..3 */
    int64_t shape[CC1D_MAX_RANK];
    int64_t strides[CC1D_MAX_RANK];   /* in elements */
} cc1d_tensor;

/* Forward: x (B, D, L); weight (D, W); bias (D) or absent; out (B, D, L).
 * Layout is read from the strides (channel-first: stride(L) == 1, channel-last:
 * stride(D) == 1). See SEMANTICS.md for seq_idx and states. */
typedef struct cc1d_forward_args {
    size_t struct_size;
    cc1d_tensor x, weight, bias, out;
    int32_t activation;               /* cc1d_activation */
    int32_t reserved0;                /* must be 0 */
    cc1d_tensor seq_idx;              /* int32 (B, L), optional */
    cc1d_tensor initial_states;       /* (B, D, W-1) in x's dtype, optional */
    cc1d_tensor final_states;         /* (B, D, W-1), written when present */
} cc1d_forward_args;

/* Backward of the forward above. dweight/dbias: fp32 or the weight's dtype. */
typedef struct cc1d_backward_args {
    size_t struct_size;
    cc1d_tensor x, weight, bias, dout;
    cc1d_tensor dx, dweight, dbias;   /* dbias only when bias is present */
    int32_t activation;               /* cc1d_activation */
    int32_t accumulate;               /* nonzero: add into dweight/dbias (default 0) */
    int32_t deterministic;            /* nonzero: fixed-order reduction (default 1) */
    int32_t reserved0;                /* must be 0 */
    cc1d_tensor seq_idx;
    cc1d_tensor initial_states;
    cc1d_tensor dinitial_states;      /* written when present */
    cc1d_tensor dfinal_states;        /* gradient flowing into final_states, optional */
    void* workspace;                  /* optional caller-owned device workspace ... */
    size_t workspace_bytes;           /* ... of cc1d_backward_workspace_size() bytes */
} cc1d_backward_args;

/* One decoding step: x (B, D, T), conv_state (B_cache, D, S) with S >= W-1, updated in place. */
typedef struct cc1d_update_args {
    size_t struct_size;
    cc1d_tensor x, conv_state, weight, bias, out;
    int32_t activation;               /* cc1d_activation */
    int32_t pad_slot_id;              /* default -1 */
    cc1d_tensor cache_seqlens;        /* int32 (B): circular buffer positions, optional */
    cc1d_tensor conv_state_indices;   /* int32 (B): cache slot of each row, optional */
} cc1d_update_args;

/* Packed variable-length prefill: x (D, total) or (total, D), rank 2. */
typedef struct cc1d_varlen_forward_args {
    size_t struct_size;
    cc1d_tensor x, weight, bias, out;
    int32_t activation;               /* cc1d_activation */
    int32_t pad_slot_id;              /* default -1 */
    cc1d_tensor cu_seqlens;           /* int32 (N+1) */
    cc1d_tensor conv_states;          /* (slots, D, >= W-1), optional */
    cc1d_tensor cache_indices;        /* int32 (N), optional */
    cc1d_tensor has_initial_state;    /* int32 (N), optional */
} cc1d_varlen_forward_args;

typedef struct cc1d_runtime_options {
    size_t struct_size;
    const char* cache_dir;            /* NULL or "": CC1D_CACHE_DIR, XDG_CACHE_HOME/cc1d, ~/.cache/cc1d */
    int32_t disk_cache;               /* nonzero: on (default 1); CC1D_DISABLE_DISK_CACHE=1 also turns it off */
    int32_t reserved0;                /* must be 0 */
    const char* log_level;            /* NULL or "": CC1D_LOG, else "warn" */
} cc1d_runtime_options;

/* Filled by cc1d_runtime_stats() up to the caller's struct_size. */
typedef struct cc1d_stats {
    size_t struct_size;
    uint64_t memory_hits;             /* kernel found loaded in this process */
    uint64_t disk_hits;               /* code object read from the disk cache */
    uint64_t compiles;                /* code objects produced by the runtime compiler */
    uint64_t compile_failures;
    double compile_seconds;           /* total wall time inside the compiler */
    double disk_load_seconds;         /* total time from disk lookup to loaded kernel */
    uint64_t launches;
} cc1d_stats;

/* Opaque handle over one cc1d::Runtime; thread-safe like the Runtime itself. */
typedef struct cc1d_runtime cc1d_runtime;

/* ---- library identity and errors ---------------------------------------------- */

CC1D_API uint32_t cc1d_abi_version(void);          /* CC1D_ABI_VERSION the library was built with */
CC1D_API const char* cc1d_version(void);           /* "MAJOR.MINOR.PATCH", static storage */
CC1D_API const char* cc1d_status_string(cc1d_status status);  /* "ok", "invalid_argument", ... */
/* The message of this thread's most recent call: empty after a success. Valid until
 * the next cc1d call on this thread. */
CC1D_API const char* cc1d_last_error(void);

/* ---- runtime --------------------------------------------------------------------- */

/* options may be NULL (defaults). On failure *runtime is set to NULL. */
CC1D_API cc1d_status cc1d_runtime_create(const cc1d_runtime_options* options, cc1d_runtime** runtime);
CC1D_API void cc1d_runtime_destroy(cc1d_runtime* runtime);   /* NULL is a no-op */

CC1D_API cc1d_status cc1d_forward(cc1d_runtime* runtime, const cc1d_forward_args* args, void* stream);
CC1D_API cc1d_status cc1d_backward(cc1d_runtime* runtime, const cc1d_backward_args* args, void* stream);
CC1D_API cc1d_status cc1d_update(cc1d_runtime* runtime, const cc1d_update_args* args, void* stream);
CC1D_API cc1d_status cc1d_varlen_forward(cc1d_runtime* runtime, const cc1d_varlen_forward_args* args,
                                         void* stream);

/* Device workspace bytes a backward call with these arguments needs when the caller
 * passes its own (cc1d_backward_args.workspace), on any GPU and under any setting of the
 * CC1D_DISABLE_* switches. */
CC1D_API cc1d_status cc1d_backward_workspace_size(cc1d_runtime* runtime, const cc1d_backward_args* args,
                                                  size_t* bytes);

/* Compile `variant` (canonical text, e.g. "op=fwd,layout=channel_first,width=4,x=bf16,
 * weight=bf16,act=silu,bias=1") for `target` ("sm_90", "gfx90a", ...) into the disk cache;
 * no GPU needed. *compiled_now (may be NULL) is 1 when it compiled, 0 when cached. */
CC1D_API cc1d_status cc1d_precompile(cc1d_runtime* runtime, const char* variant, const char* target,
                                     int32_t* compiled_now);

CC1D_API cc1d_status cc1d_runtime_stats(const cc1d_runtime* runtime, cc1d_stats* stats);

/* Text results are copied into the caller's buffer, NUL-terminated. *length (may be
 * NULL) receives the text's length without the NUL. buffer NULL with capacity 0 only
 * asks for the length; a buffer too small for text and NUL fails with invalid_argument
 * and writes nothing (still setting *length). */
CC1D_API cc1d_status cc1d_device_target(cc1d_runtime* runtime, char* buffer, size_t capacity, size_t* length);
CC1D_API cc1d_status cc1d_cache_dir(const cc1d_runtime* runtime, char* buffer, size_t capacity, size_t* length);

/* ---- initializers: struct_size and defaults, everything else zero / absent ----- */

static inline void cc1d_forward_args_init(cc1d_forward_args* args) {
    memset(args, 0, sizeof *args);
    args->struct_size = sizeof *args;
}
static inline void cc1d_backward_args_init(cc1d_backward_args* args) {
    memset(args, 0, sizeof *args);
    args->struct_size = sizeof *args;
    args->deterministic = 1;
}
static inline void cc1d_update_args_init(cc1d_update_args* args) {
    memset(args, 0, sizeof *args);
    args->struct_size = sizeof *args;
    args->pad_slot_id = -1;
}
static inline void cc1d_varlen_forward_args_init(cc1d_varlen_forward_args* args) {
    memset(args, 0, sizeof *args);
    args->struct_size = sizeof *args;
    args->pad_slot_id = -1;
}
static inline void cc1d_runtime_options_init(cc1d_runtime_options* options) {
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->disk_cache = 1;
}
static inline void cc1d_stats_init(cc1d_stats* stats) {
    memset(stats, 0, sizeof *stats);
    stats->struct_size = sizeof *stats;
}

#ifdef __cplusplus
}
#endif

#endif /* CC1D_CC1D_H */
