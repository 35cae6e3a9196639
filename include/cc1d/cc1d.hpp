// cc1d: runtime-compiled causal conv1d kernels. The public C++ API.
//
// No vendor header is included here: streams are plain `void*` (a CUstream or a
// hipStream_t; null is the default stream) and tensors are device pointers with
// their dtype, shape and strides (in elements).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>

namespace cc1d {

std::string version();  // "MAJOR.MINOR.PATCH"

enum class DType : std::uint8_t { fp32, fp16, bf16, int32 };
enum class Activation : std::uint8_t { none, silu };
enum class Layout : std::uint8_t { channel_first, channel_last };

const char* to_string(DType);
const char* to_string(Activation);
const char* to_string(Layout);
std::size_t dtype_size(DType);

// A view of device memory: up to 3 dimensions, strides in elements (not bytes).
// A default-constructed Tensor (data == nullptr, rank == 0) means "absent"; an empty
// tensor (a zero in its shape) may have null data. `data` must be aligned to the
// element size (any element of a buffer is; 16 bytes is not required). A tensor a call writes must have
// distinct elements (no zero or interleaving strides) and share no memory with any other
// tensor of that call; update's conv_state and varlen_fwd's conv_states are the ones
// read and written in place.
struct Tensor {
    static constexpr int max_rank = 3;
    const void* data = nullptr;
    DType dtype = DType::fp32;
    int rank = 0;
    std::int64_t shape[max_rank] = {0, 0, 0};
    std::int64_t strides[max_rank] = {0, 0, 0};

    Tensor() = default;
    // Strides omitted (empty list): row-major contiguous.
    Tensor(const void* data, DType dtype, std::initializer_list<std::int64_t> shape,
           std::initializer_list<std::int64_t> strides = {});

    bool present() const { return data != nullptr || rank != 0; }
    std::int64_t numel() const;
    void* mutable_data() const { return const_cast<void*>(data); }
};

enum class ErrorCode : std::uint8_t {
    invalid_argument,
    unsupported,
    compile_failed,
    device_error,
    backend_unavailable,
};
const char* to_string(ErrorCode);

// Every failure the library reports. compile_failed errors also carry the compiler
// log, the options, the target and the generated source's name; device_error carries
// the driver's code and name.
class Error : public std::runtime_error {
public:
    struct CompileDetails {
        std::string log, options, target, source_name;
    };
    Error(ErrorCode code, const std::string& message);
    Error(ErrorCode code, const std::string& message, CompileDetails details);
    Error(ErrorCode code, const std::string& message, int driver_code, std::string driver_name);

    ErrorCode code() const { return code_; }
    const CompileDetails& compile_details() const { return compile_; }
    int driver_code() const { return driver_code_; }
    const std::string& driver_name() const { return driver_name_; }

private:
    ErrorCode code_;
    CompileDetails compile_;
    int driver_code_ = 0;
    std::string driver_name_;
};

// Causal conv1d forward. x (B, D, L); weight (D, W); bias (D) or absent; out (B, D, L).
// The layout is read from the strides (SEMANTICS.md): channel-first when stride(L) == 1,
// channel-last when stride(D) == 1.
struct ForwardArgs {
    Tensor x, weight, bias, out;
    Activation activation = Activation::none;
    Tensor seq_idx;          // int32 (B, L), optional
    Tensor initial_states;   // (B, D, W-1) in x's dtype, optional
    Tensor final_states;     // (B, D, W-1) in x's dtype, written when present
};

// Backward of the forward above. dweight/dbias may be fp32 or the weight's dtype.
struct BackwardArgs {
    Tensor x, weight, bias, dout;
    Tensor dx, dweight, dbias;     // dbias only when bias is present
    Activation activation = Activation::none;
    Tensor seq_idx;
    Tensor initial_states, dinitial_states;  // dinitial_states written when present
    Tensor dfinal_states;                    // gradient flowing into final_states, optional
    bool accumulate = false;       // add into dweight/dbias instead of overwriting
    bool deterministic = true;     // fixed-order reduction of dweight/dbias
    // Optional caller-owned device workspace of backward_workspace_size() bytes, 4-byte
    // aligned (it holds fp32 partial sums of dweight/dbias and, channel-first with
    // seq_idx, a 1- or 2-byte mask per (batch, position)). When absent the Runtime keeps
    // one per (device, stream) and reuses it.
    void* workspace = nullptr;
    std::size_t workspace_bytes = 0;
};

// One decoding step: x (B, D, T), conv_state (B_cache, D, S) with S >= W-1.
struct UpdateArgs {
    Tensor x, conv_state, weight, bias, out;
    Activation activation = Activation::none;
    Tensor cache_seqlens;        // int32 (B): circular buffer positions, optional
    Tensor conv_state_indices;   // int32 (B): cache slot of each row, optional
    std::int32_t pad_slot_id = -1;
};

// Packed variable-length prefill. x, out: rank 2 with LOGICAL shape (D, total), like the
// forward's (B, D, L) without B; stored channel-first (stride[1] == 1) or channel-last,
// i.e. as (total, D) in memory (stride[0] == 1). conv_states slots are (slots, D, S).
struct VarlenForwardArgs {
    Tensor x, weight, bias, out;
    Activation activation = Activation::none;
    Tensor cu_seqlens;           // int32 (N+1)
    Tensor conv_states;          // (slots, D, W-1 or more), optional
    Tensor cache_indices;        // int32 (N): slot of each sequence, optional
    Tensor has_initial_state;    // int32 (N): nonzero reads the slot's history, optional
    std::int32_t pad_slot_id = -1;
};

struct RuntimeOptions {
    std::string cache_dir;          // empty: CC1D_CACHE_DIR, XDG_CACHE_HOME/cc1d, ~/.cache/cc1d
    bool disk_cache = true;         // CC1D_DISABLE_DISK_CACHE=1 also turns it off
    std::string log_level;          // empty: CC1D_LOG, else "warn"
};

struct Stats {
    std::uint64_t memory_hits = 0;    // kernel found loaded in this process
    std::uint64_t disk_hits = 0;      // code object read from the disk cache
    std::uint64_t compiles = 0;       // code objects produced by the runtime compiler
    std::uint64_t compile_failures = 0;
    double compile_seconds = 0;       // total wall time inside the compiler
    double disk_load_seconds = 0;     // total time from disk lookup to loaded kernel
    std::uint64_t launches = 0;
};

class Runtime {
public:
    explicit Runtime(RuntimeOptions options = {});
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    void forward(const ForwardArgs& args, void* stream = nullptr);
    void backward(const BackwardArgs& args, void* stream = nullptr);
    void update(const UpdateArgs& args, void* stream = nullptr);
    void varlen_forward(const VarlenForwardArgs& args, void* stream = nullptr);

    // Compile a variant for a target ("sm_90", "gfx90a:xnack-", ...) into the disk cache
    // without a GPU. `variant` is the canonical text the tools print, e.g.
    // "op=fwd,layout=channel_first,width=4,x=bf16,weight=bf16,act=silu,bias=1".
    // Returns true when it was compiled now, false when the cache already held it.
    bool precompile(const std::string& variant, const std::string& target);

    // Bytes of device workspace a backward call with these arguments needs when the
    // caller passes its own (BackwardArgs::workspace); 0 when none is needed. The answer
    // holds on any GPU and under any setting of the CC1D_DISABLE_* switches (which are
    // read on every call, so they may change between this query and the call).
    std::size_t backward_workspace_size(const BackwardArgs& args) const;

    // Names the backend this runtime launches on ("cuda", "hip") and the current
    // device's compile target; throws backend_unavailable when there is no GPU.
    std::string device_target();

    Stats stats() const;
    std::string cache_dir() const;   // empty when the disk cache is off

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace cc1d
