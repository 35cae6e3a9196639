// The C ABI (include/cc1d/cc1d.h) over the C++ Runtime: copies the plain structs into
// the C++ argument types, makes the call, and turns every exception into a status code
// plus a thread-local message. Shapes, strides and dtypes are validated by the Runtime,
// once, for both APIs; this layer checks only what C can get wrong and C++ cannot:
// NULL handles and pointers, struct sizes, enum values out of range, reserved fields.
#include "cc1d/cc1d.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "cc1d/cc1d.hpp"
#include "common/version.hpp"

struct cc1d_runtime {
    explicit cc1d_runtime(cc1d::RuntimeOptions options) : runtime(std::move(options)) {}
    cc1d::Runtime runtime;
};

namespace {

using cc1d::Error;
using cc1d::ErrorCode;

// The C enums are the C++ ones with a fixed numbering: keep them in step.
static_assert(CC1D_DTYPE_FP32 == static_cast<int>(cc1d::DType::fp32));
static_assert(CC1D_DTYPE_FP16 == static_cast<int>(cc1d::DType::fp16));
static_assert(CC1D_DTYPE_BF16 == static_cast<int>(cc1d::DType::bf16));
static_assert(CC1D_DTYPE_INT32 == static_cast<int>(cc1d::DType::int32));
static_assert(CC1D_ACTIVATION_NONE == static_cast<int>(cc1d::Activation::none));
static_assert(CC1D_ACTIVATION_SILU == static_cast<int>(cc1d::Activation::silu));
static_assert(CC1D_MAX_RANK == cc1d::Tensor::max_rank);

// A struct_size above this is an uninitialized field, not a struct from the future.
constexpr std::size_t max_plausible_struct_size = 64 * 1024;

thread_local std::string last_error_message;

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

cc1d_status status_of(ErrorCode code) {
    switch (code) {
        case ErrorCode::invalid_argument: return CC1D_STATUS_INVALID_ARGUMENT;
        case ErrorCode::unsupported: return CC1D_STATUS_UNSUPPORTED;
        case ErrorCode::compile_failed: return CC1D_STATUS_COMPILE_FAILED;
        case ErrorCode::device_error: return CC1D_STATUS_DEVICE_ERROR;
        case ErrorCode::backend_unavailable: return CC1D_STATUS_BACKEND_UNAVAILABLE;
    }
    return CC1D_STATUS_INTERNAL_ERROR;
}

// C callers get one string, so the details C++ callers read from the Error go into it.
std::string describe(const Error& error) {
    std::string text = error.what();
    if (error.code() == ErrorCode::compile_failed) {
        const auto& details = error.compile_details();
        if (!details.target.empty()) text += "\n  target: " + details.target;
        if (!details.options.empty()) text += "\n  options: " + details.options;
        if (!details.source_name.empty()) text += "\n  source: " + details.source_name;
        if (!details.log.empty()) text += "\n  compiler log:\n" + details.log;
    }
    if (error.code() == ErrorCode::device_error && !error.driver_name().empty() &&
        text.find(error.driver_name()) == std::string::npos)
        text += fmt::format(" (driver error {} {})", error.driver_code(), error.driver_name());
    return text;
}

// Records a failure. Building the message may itself throw (out of memory): then the
// status alone has to do, since nothing may escape into C.
template <typename MakeMessage>
cc1d_status record(cc1d_status status, MakeMessage&& make_message) noexcept {
    try {
        last_error_message = make_message();
    } catch (...) {
        last_error_message.clear();
    }
    return status;
}

template <typename Call>
cc1d_status guarded(Call&& call) noexcept {
    try {
        call();
        last_error_message.clear();
        return CC1D_STATUS_OK;
    } catch (const Error& error) {
        return record(status_of(error.code()), [&] { return describe(error); });
    } catch (const std::bad_alloc&) {
        return record(CC1D_STATUS_OUT_OF_MEMORY, [] { return std::string("out of host memory"); });
    } catch (const std::exception& error) {
        return record(CC1D_STATUS_INTERNAL_ERROR,
                      [&] { return std::string("internal error: ") + error.what(); });
    } catch (...) {
        return record(CC1D_STATUS_INTERNAL_ERROR, [] { return std::string("internal error: unknown exception"); });
    }
}

// Reads a versioned struct: the caller's struct_size says how much of it exists.
// `minimum` is the size in the first ABI version that had this struct; fields past the
// caller's size keep the values in `result` (the defaults); bytes past our own size must
// be zero (fields of a newer ABI that this library cannot honour).
template <typename T>
T read_versioned(const T* given, T result, std::size_t minimum, const char* what) {
    if (given == nullptr) invalid(fmt::format("{}: the argument struct is NULL", what));
    const std::size_t size = given->struct_size;
    if (size < minimum || size > max_plausible_struct_size)
        invalid(fmt::format("{}: struct_size is {}, expected {} (initialize the struct with its _init() function)",
                            what, size, sizeof(T)));
    std::memcpy(static_cast<void*>(&result), given, std::min(size, sizeof(T)));
    const auto* bytes = reinterpret_cast<const unsigned char*>(given);
    for (std::size_t i = sizeof(T); i < size; ++i)
        if (bytes[i] != 0)
            throw Error(ErrorCode::unsupported,
                        fmt::format("{}: the struct sets fields of a newer cc1d ABI (byte {} of {}); this library "
                                    "implements ABI {} ({} bytes)", what, i, size, CC1D_ABI_VERSION, sizeof(T)));
    return result;
}

template <typename T>
T read_versioned(const T* given, const char* what) {
    T defaults;
    std::memset(static_cast<void*>(&defaults), 0, sizeof defaults);
    return read_versioned(given, defaults, sizeof(T), what);
}

void check_reserved(std::int32_t value, const char* what) {
    if (value != 0) invalid(fmt::format("{}: reserved0 is {}, must be 0", what, value));
}

cc1d::Tensor to_tensor(const cc1d_tensor& given, const char* op, const char* name) {
    if (given.rank < 0 || given.rank > CC1D_MAX_RANK)
        invalid(fmt::format("{}: {}: rank is {}, expected 0 to {}", op, name, given.rank, CC1D_MAX_RANK));
    if (given.dtype < CC1D_DTYPE_FP32 || given.dtype > CC1D_DTYPE_INT32)
        invalid(fmt::format("{}: {}: dtype {} is not a cc1d_dtype (0 fp32, 1 fp16, 2 bf16, 3 int32)", op, name,
                            given.dtype));
    cc1d::Tensor tensor;
    tensor.data = given.data;
    tensor.dtype = static_cast<cc1d::DType>(given.dtype);
    tensor.rank = given.rank;
    for (int d = 0; d < given.rank; ++d) {
        tensor.shape[d] = given.shape[d];
        tensor.strides[d] = given.strides[d];
    }
    return tensor;
}

cc1d::Activation to_activation(std::int32_t value, const char* op) {
    if (value != CC1D_ACTIVATION_NONE && value != CC1D_ACTIVATION_SILU)
        invalid(fmt::format("{}: activation {} is not a cc1d_activation (0 none, 1 silu)", op, value));
    return static_cast<cc1d::Activation>(value);
}

cc1d::Runtime& runtime_of(cc1d_runtime* handle, const char* op) {
    if (handle == nullptr) invalid(fmt::format("{}: the runtime handle is NULL", op));
    return handle->runtime;
}
const cc1d::Runtime& runtime_of(const cc1d_runtime* handle, const char* op) {
    if (handle == nullptr) invalid(fmt::format("{}: the runtime handle is NULL", op));
    return handle->runtime;
}

cc1d::ForwardArgs to_cpp(const cc1d_forward_args& a) {
    const char* op = "cc1d_forward";
    check_reserved(a.reserved0, op);
    cc1d::ForwardArgs args;
    args.x = to_tensor(a.x, op, "x");
    args.weight = to_tensor(a.weight, op, "weight");
    args.bias = to_tensor(a.bias, op, "bias");
    args.out = to_tensor(a.out, op, "out");
    args.activation = to_activation(a.activation, op);
    args.seq_idx = to_tensor(a.seq_idx, op, "seq_idx");
    args.initial_states = to_tensor(a.initial_states, op, "initial_states");
    args.final_states = to_tensor(a.final_states, op, "final_states");
    return args;
}

cc1d::BackwardArgs to_cpp(const cc1d_backward_args& a) {
    const char* op = "cc1d_backward";
    check_reserved(a.reserved0, op);
    cc1d::BackwardArgs args;
    args.x = to_tensor(a.x, op, "x");
    args.weight = to_tensor(a.weight, op, "weight");
    args.bias = to_tensor(a.bias, op, "bias");
    args.dout = to_tensor(a.dout, op, "dout");
    args.dx = to_tensor(a.dx, op, "dx");
    args.dweight = to_tensor(a.dweight, op, "dweight");
    args.dbias = to_tensor(a.dbias, op, "dbias");
    args.activation = to_activation(a.activation, op);
    args.accumulate = a.accumulate != 0;
    args.deterministic = a.deterministic != 0;
    args.seq_idx = to_tensor(a.seq_idx, op, "seq_idx");
    args.initial_states = to_tensor(a.initial_states, op, "initial_states");
    args.dinitial_states = to_tensor(a.dinitial_states, op, "dinitial_states");
    args.dfinal_states = to_tensor(a.dfinal_states, op, "dfinal_states");
    args.workspace = a.workspace;
    args.workspace_bytes = a.workspace_bytes;
    return args;
}

cc1d::UpdateArgs to_cpp(const cc1d_update_args& a) {
    const char* op = "cc1d_update";
    cc1d::UpdateArgs args;
    args.x = to_tensor(a.x, op, "x");
    args.conv_state = to_tensor(a.conv_state, op, "conv_state");
    args.weight = to_tensor(a.weight, op, "weight");
    args.bias = to_tensor(a.bias, op, "bias");
    args.out = to_tensor(a.out, op, "out");
    args.activation = to_activation(a.activation, op);
    args.cache_seqlens = to_tensor(a.cache_seqlens, op, "cache_seqlens");
    args.conv_state_indices = to_tensor(a.conv_state_indices, op, "conv_state_indices");
    args.pad_slot_id = a.pad_slot_id;
    return args;
}

cc1d::VarlenForwardArgs to_cpp(const cc1d_varlen_forward_args& a) {
    const char* op = "cc1d_varlen_forward";
    cc1d::VarlenForwardArgs args;
    args.x = to_tensor(a.x, op, "x");
    args.weight = to_tensor(a.weight, op, "weight");
    args.bias = to_tensor(a.bias, op, "bias");
    args.out = to_tensor(a.out, op, "out");
    args.activation = to_activation(a.activation, op);
    args.cu_seqlens = to_tensor(a.cu_seqlens, op, "cu_seqlens");
    args.conv_states = to_tensor(a.conv_states, op, "conv_states");
    args.cache_indices = to_tensor(a.cache_indices, op, "cache_indices");
    args.has_initial_state = to_tensor(a.has_initial_state, op, "has_initial_state");
    args.pad_slot_id = a.pad_slot_id;
    return args;
}

// Copies text for C: see cc1d_device_target in the header for the contract.
void copy_text(const std::string& text, char* buffer, std::size_t capacity, std::size_t* length,
               const char* op) {
    if (length != nullptr) *length = text.size();
    if (buffer == nullptr && capacity == 0) return;
    if (buffer == nullptr) invalid(fmt::format("{}: buffer is NULL but capacity is {}", op, capacity));
    if (capacity < text.size() + 1)
        invalid(fmt::format("{}: buffer of {} bytes is too small for {} characters and the NUL", op, capacity,
                            text.size()));
    std::memcpy(buffer, text.data(), text.size());
    buffer[text.size()] = '\0';
}

}  // namespace

extern "C" {

uint32_t cc1d_abi_version(void) { return CC1D_ABI_VERSION; }

const char* cc1d_version(void) { return CC1D_VERSION_STRING; }

const char* cc1d_status_string(cc1d_status status) {
    switch (status) {
        case CC1D_STATUS_OK: return "ok";
        case CC1D_STATUS_INVALID_ARGUMENT: return "invalid_argument";
        case CC1D_STATUS_UNSUPPORTED: return "unsupported";
        case CC1D_STATUS_COMPILE_FAILED: return "compile_failed";
        case CC1D_STATUS_DEVICE_ERROR: return "device_error";
        case CC1D_STATUS_BACKEND_UNAVAILABLE: return "backend_unavailable";
        case CC1D_STATUS_OUT_OF_MEMORY: return "out_of_memory";
        case CC1D_STATUS_INTERNAL_ERROR: return "internal_error";
    }
    return "unknown_status";
}

const char* cc1d_last_error(void) { return last_error_message.c_str(); }

cc1d_status cc1d_runtime_create(const cc1d_runtime_options* options, cc1d_runtime** runtime) {
    if (runtime != nullptr) *runtime = nullptr;
    return guarded([&] {
        if (runtime == nullptr) invalid("cc1d_runtime_create: the output pointer is NULL");
        cc1d::RuntimeOptions cpp;
        if (options != nullptr) {
            cc1d_runtime_options defaults;
            cc1d_runtime_options_init(&defaults);
            const auto given = read_versioned(options, defaults, sizeof(cc1d_runtime_options), "cc1d_runtime_create");
            check_reserved(given.reserved0, "cc1d_runtime_create");
            cpp.cache_dir = given.cache_dir != nullptr ? given.cache_dir : "";
            cpp.disk_cache = given.disk_cache != 0;
            cpp.log_level = given.log_level != nullptr ? given.log_level : "";
        }
        *runtime = new cc1d_runtime(std::move(cpp));
    });
}

void cc1d_runtime_destroy(cc1d_runtime* runtime) {
    // The Runtime's destructor releases device modules; it must not take the process down.
    try {
        delete runtime;
    } catch (...) {
    }
}

cc1d_status cc1d_forward(cc1d_runtime* runtime, const cc1d_forward_args* args, void* stream) {
    return guarded([&] {
        auto& rt = runtime_of(runtime, "cc1d_forward");
        rt.forward(to_cpp(read_versioned(args, "cc1d_forward")), stream);
    });
}

cc1d_status cc1d_backward(cc1d_runtime* runtime, const cc1d_backward_args* args, void* stream) {
    return guarded([&] {
        auto& rt = runtime_of(runtime, "cc1d_backward");
        cc1d_backward_args defaults;
        cc1d_backward_args_init(&defaults);
        rt.backward(to_cpp(read_versioned(args, defaults, sizeof(cc1d_backward_args), "cc1d_backward")), stream);
    });
}

cc1d_status cc1d_update(cc1d_runtime* runtime, const cc1d_update_args* args, void* stream) {
    return guarded([&] {
        auto& rt = runtime_of(runtime, "cc1d_update");
        cc1d_update_args defaults;
        cc1d_update_args_init(&defaults);
        rt.update(to_cpp(read_versioned(args, defaults, sizeof(cc1d_update_args), "cc1d_update")), stream);
    });
}

cc1d_status cc1d_varlen_forward(cc1d_runtime* runtime, const cc1d_varlen_forward_args* args, void* stream) {
    return guarded([&] {
        auto& rt = runtime_of(runtime, "cc1d_varlen_forward");
        cc1d_varlen_forward_args defaults;
        cc1d_varlen_forward_args_init(&defaults);
        rt.varlen_forward(
            to_cpp(read_versioned(args, defaults, sizeof(cc1d_varlen_forward_args), "cc1d_varlen_forward")), stream);
    });
}

cc1d_status cc1d_backward_workspace_size(cc1d_runtime* runtime, const cc1d_backward_args* args, size_t* bytes) {
    if (bytes != nullptr) *bytes = 0;
    return guarded([&] {
        const char* op = "cc1d_backward_workspace_size";
        auto& rt = runtime_of(runtime, op);
        if (bytes == nullptr) invalid(fmt::format("{}: the output pointer is NULL", op));
        cc1d_backward_args defaults;
        cc1d_backward_args_init(&defaults);
        *bytes = rt.backward_workspace_size(to_cpp(read_versioned(args, defaults, sizeof(cc1d_backward_args), op)));
    });
}

cc1d_status cc1d_precompile(cc1d_runtime* runtime, const char* variant, const char* target,
                            int32_t* compiled_now) {
    if (compiled_now != nullptr) *compiled_now = 0;
    return guarded([&] {
        auto& rt = runtime_of(runtime, "cc1d_precompile");
        if (variant == nullptr) invalid("cc1d_precompile: variant is NULL");
        if (target == nullptr) invalid("cc1d_precompile: target is NULL");
        const bool compiled = rt.precompile(variant, target);
        if (compiled_now != nullptr) *compiled_now = compiled ? 1 : 0;
    });
}

cc1d_status cc1d_runtime_stats(const cc1d_runtime* runtime, cc1d_stats* stats) {
    return guarded([&] {
        const char* op = "cc1d_runtime_stats";
        const auto& rt = runtime_of(runtime, op);
        if (stats == nullptr) invalid(fmt::format("{}: the output struct is NULL", op));
        const std::size_t size = stats->struct_size;
        if (size < sizeof(std::size_t) || size > max_plausible_struct_size)
            invalid(fmt::format("{}: struct_size is {}, expected {} (initialize with cc1d_stats_init())", op, size,
                                sizeof(cc1d_stats)));
        const cc1d::Stats s = rt.stats();
        cc1d_stats full;
        cc1d_stats_init(&full);
        full.memory_hits = s.memory_hits;
        full.disk_hits = s.disk_hits;
        full.compiles = s.compiles;
        full.compile_failures = s.compile_failures;
        full.compile_seconds = s.compile_seconds;
        full.disk_load_seconds = s.disk_load_seconds;
        full.launches = s.launches;
        // Fill what the caller's struct has room for; keep its struct_size as it was.
        const std::size_t skip = sizeof(full.struct_size);
        std::memcpy(reinterpret_cast<unsigned char*>(stats) + skip, reinterpret_cast<const unsigned char*>(&full) + skip,
                    std::min(size, sizeof(cc1d_stats)) - skip);
    });
}

cc1d_status cc1d_device_target(cc1d_runtime* runtime, char* buffer, size_t capacity, size_t* length) {
    if (length != nullptr) *length = 0;
    return guarded([&] {
        const char* op = "cc1d_device_target";
        copy_text(runtime_of(runtime, op).device_target(), buffer, capacity, length, op);
    });
}

cc1d_status cc1d_cache_dir(const cc1d_runtime* runtime, char* buffer, size_t capacity, size_t* length) {
    if (length != nullptr) *length = 0;
    return guarded([&] {
        const char* op = "cc1d_cache_dir";
        copy_text(runtime_of(runtime, op).cache_dir(), buffer, capacity, length, op);
    });
}

}  // extern "C"
