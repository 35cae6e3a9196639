#include "codegen/render.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "codegen/embedded_templates.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"
#include "params.h"

namespace cc1d::codegen {
namespace {

int dtype_code(DType dtype) {
    switch (dtype) {
        case DType::fp32: return 0;
        case DType::fp16: return 1;
        case DType::bf16: return 2;
        default: fail(ErrorCode::unsupported, "dtype {} cannot be a kernel data type", to_string(dtype));
    }
}

std::string variant_macros(const Variant& v, const std::string& entry, const std::string& second_entry,
                           const std::string& third_entry) {
    std::string text = fmt::format("// cc1d variant: {}\n", v.canonical());
    auto define = [&text](const char* name, auto value) { text += fmt::format("#define {} {}\n", name, value); };
    define("CC1D_WIDTH", v.width);
    define("CC1D_X_DTYPE", dtype_code(v.x_dtype));
    define("CC1D_W_DTYPE", dtype_code(v.weight_dtype));
    define("CC1D_SILU", int(v.activation == Activation::silu));
    define("CC1D_HAS_BIAS", int(v.bias));
    define("CC1D_HAS_SEQ_IDX", int(v.seq_idx));
    define("CC1D_HAS_INITIAL_STATES", int(v.initial_states));
    define("CC1D_HAS_FINAL_STATES", int(v.final_states));
    define("CC1D_DETERMINISTIC", int(v.deterministic));
    define("CC1D_HAS_CACHE_SEQLENS", int(v.cache_seqlens));
    define("CC1D_HAS_STATE_INDICES", int(v.state_indices));
    define("CC1D_CHANNEL_LAST", int(v.layout == Layout::channel_last));
    define("CC1D_SHIFTED_ROWS", int(v.shifted_rows));
    define("CC1D_ENTRY", entry);
    if (!second_entry.empty()) define(second_kernel(v).macro, second_entry);
    if (!third_entry.empty()) define(third_kernel(v).macro, third_entry);
    return text;
}

// A channel-first small-call backward module carries the vector kernel, in both its forms
// (bwd_channel_first_vectors.cu): the second kernel and the third.
bool carries_vector_kernel(const Variant& v) {
    return v.op == Op::bwd && v.small_call && v.layout == Layout::channel_first &&
           CC1D_BWD_CF_VECTORS_KERNEL(v.width, v.seq_idx, v.initial_states || v.final_states);
}

}  // namespace

std::string family_template(const Variant& variant) {
    const bool last = variant.layout == Layout::channel_last;
    switch (variant.op) {
        case Op::fwd:
            if (variant.small_call) return "fwd_small.cu";   // either layout
            return last ? "fwd_channel_last.cu" : "fwd_channel_first.cu";
        case Op::bwd:
            if (variant.small_call) return "bwd_small.cu";   // either layout
            if (variant.tiled) return "bwd_channel_last_tile.cu";
            return last ? "bwd_channel_last.cu" : "bwd_channel_first.cu";
        case Op::update: return "update.cu";
        case Op::varlen_fwd: return "varlen_fwd.cu";
    }
    fail(ErrorCode::unsupported, "no kernel family for op {}", to_string(variant.op));
}

const std::vector<const char*>& shared_headers() {
    static const std::vector<const char*> headers = {"types.h", "activation.h", "vectors.h", "seq_masks.h",
                                                     "taps.h",  "tiles.h",      "bwd_sums.h"};
    return headers;
}

std::string template_text(const std::string& file_name) {
    if (auto dir = env::get("CC1D_TEMPLATE_DIR")) {
        const std::string path = *dir + "/" + file_name;
        std::ifstream file(path, std::ios::binary);
        if (!file)
            fail(ErrorCode::invalid_argument, "CC1D_TEMPLATE_DIR: cannot read template '{}' (looked for {})",
                 file_name, path);
        std::ostringstream text;
        text << file.rdbuf();
        return text.str();
    }
    for (const auto& entry : embedded_templates())
        if (file_name == entry.name) return std::string(entry.text);
    fail(ErrorCode::invalid_argument, "no embedded kernel template named '{}'", file_name);
}

ModuleKernel second_kernel(const Variant& variant) {
    switch (variant.op) {
        case Op::bwd:
            if (!variant.small_call) return {"_reduce", "CC1D_ENTRY_REDUCE"};
            // The vector kernel's one-vector form (the third kernel is its two-vector one)
            if (carries_vector_kernel(variant)) return {"_vectors_one", "CC1D_ENTRY_VECTORS_ONE"};
            return {"", ""};
        case Op::update: return {"_registers", "CC1D_ENTRY_REGISTERS"};
        case Op::fwd:
            if (variant.small_call) return {"", ""};
            if (variant.layout == Layout::channel_first) return {"_staged", "CC1D_ENTRY_STAGED"};
            return {"", ""};
        case Op::varlen_fwd:
            if (variant.initial_states) return {"_finish", "CC1D_ENTRY_FINISH"};
            return {"", ""};
        default: return {"", ""};
    }
}

ModuleKernel third_kernel(const Variant& variant) {
    if (carries_vector_kernel(variant)) return {"_vectors", "CC1D_ENTRY_VECTORS"};
    return {"", ""};
}

bool splits_compile(const Variant& raw) {
    const Variant variant = raw.normalized();
    return variant.op == Op::fwd && !variant.small_call && variant.layout == Layout::channel_first;   // the staged kernel
}

RenderedSource render_source(const Variant& raw, const std::string& backend) {
    const Variant variant = raw.normalized();
    check_variant(variant);
    if (backend != "cuda" && backend != "hip")
        fail(ErrorCode::invalid_argument, "render_source: unknown backend '{}' (expected cuda or hip)", backend);
    RenderedSource out;
    out.entry = variant.entry_name();
    if (*second_kernel(variant).suffix != 0) out.second_entry = out.entry + second_kernel(variant).suffix;
    if (*third_kernel(variant).suffix != 0) out.third_entry = out.entry + third_kernel(variant).suffix;
    out.name = out.entry + ".cu";
    out.split_compile = splits_compile(variant);
    out.text = template_text(backend == "cuda" ? "prelude_cuda.h" : "prelude_hip.h");
    out.text += variant_macros(variant, out.entry, out.second_entry, out.third_entry);
    out.text += template_text("params.h");
    for (const char* header : shared_headers()) out.text += template_text(header);
    out.text += template_text(family_template(variant));
    if (!out.third_entry.empty()) out.text += template_text("bwd_channel_first_vectors.cu");
    return out;
}

}  // namespace cc1d::codegen
