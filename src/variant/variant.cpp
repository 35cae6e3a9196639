#include "variant/variant.hpp"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "common/fail.hpp"
#include "params.h"

namespace cc1d {
namespace {

const char* short_name(DType d) { return to_string(d); }

DType parse_dtype(const std::string& field, const std::string& value) {
    if (value == "fp32" || value == "float32") return DType::fp32;
    if (value == "fp16" || value == "float16") return DType::fp16;
    if (value == "bf16" || value == "bfloat16") return DType::bf16;
    fail(ErrorCode::invalid_argument, "variant field '{}': unknown dtype '{}' (expected fp32, fp16 or bf16)",
         field, value);
}

bool parse_bool(const std::string& field, const std::string& value) {
    if (value == "1" || value == "true") return true;
    if (value == "0" || value == "false") return false;
    fail(ErrorCode::invalid_argument, "variant field '{}': expected 0 or 1, got '{}'", field, value);
}

}  // namespace

const char* to_string(Op op) {
    switch (op) {
        case Op::fwd: return "fwd";
        case Op::bwd: return "bwd";
        case Op::update: return "update";
        case Op::varlen_fwd: return "varlen_fwd";
    }
    return "?";
}

Variant Variant::normalized() const {
    Variant v = *this;
    if (v.op != Op::fwd && v.op != Op::bwd) v.seq_idx = false;
    if (v.op == Op::update) v.initial_states = false;
    if (v.op != Op::fwd && v.op != Op::bwd) v.final_states = false;
    if (v.op != Op::bwd) v.deterministic = true;
    if (v.op != Op::fwd && v.op != Op::bwd) v.small_call = false;
    // The small-call kernel sums dweight/dbias in a fixed order whatever the mode asks:
    // one module serves both.
    if (v.small_call) v.deterministic = true;
    // The tile kernel's module: the channel-last backward's main kernels of these widths and features.
    const bool tile_kernel = CC1D_BWD_CL_TILE_KERNEL(v.width, v.initial_states || v.final_states);
    if (v.op != Op::bwd || v.layout != Layout::channel_last || v.small_call || !tile_kernel) v.tiled = false;
    // Modules of rows off 16-byte boundaries: channel-first, the backward's main kernels in
    // 16-bit and the forward's main kernels without seq_idx; channel-last, the forward's
    // main kernel and the backward's tile kernel in 16-bit (fp32 calls of such rows take the
    // register walk).
    const bool first = v.layout == Layout::channel_first;
    const bool shifted_backward = v.op == Op::bwd && v.x_dtype != DType::fp32 && (first || v.tiled);
    const bool shifted_forward = v.op == Op::fwd && (!first || !v.seq_idx);
    if (v.small_call || !(shifted_backward || shifted_forward)) v.shifted_rows = false;
    if (v.op != Op::update) v.cache_seqlens = v.state_indices = false;
    // Update kernels read (B, D, T) with any unit stride; they have no layout of their own.
    if (v.op == Op::update) v.layout = Layout::channel_first;
    return v;
}

std::uint32_t Variant::packed() const {
    const Variant v = normalized();
    std::uint32_t bits = 0;
    auto put = [&bits](std::uint32_t value, int width) { bits = (bits << width) | value; };
    put(static_cast<std::uint32_t>(v.op), 2);
    put(static_cast<std::uint32_t>(v.layout), 1);
    put(static_cast<std::uint32_t>(v.width), 5);
    put(static_cast<std::uint32_t>(v.x_dtype), 2);
    put(static_cast<std::uint32_t>(v.weight_dtype), 2);
    put(static_cast<std::uint32_t>(v.activation), 1);
    for (bool flag : {v.bias, v.seq_idx, v.initial_states, v.final_states, v.deterministic, v.cache_seqlens,
                      v.state_indices, v.small_call, v.shifted_rows, v.tiled})
        put(flag ? 1u : 0u, 1);
    return bits;
}

std::string Variant::canonical() const {
    const Variant v = normalized();
    std::string text = fmt::format("op={},layout={},width={},x={},weight={},act={},bias={}", to_string(v.op),
                                   to_string(v.layout), v.width, short_name(v.x_dtype),
                                   short_name(v.weight_dtype), to_string(v.activation), int(v.bias));
    if (v.op == Op::fwd || v.op == Op::bwd)
        text += fmt::format(",seq_idx={},initial_states={},final_states={}", int(v.seq_idx),
                            int(v.initial_states), int(v.final_states));
    if (v.op == Op::bwd) text += fmt::format(",deterministic={}", int(v.deterministic));
    if (v.small_call) text += ",small_call=1";   // (only when set: the other texts stay as they were)
    if (v.shifted_rows) text += ",shifted_rows=1";   // (likewise)
    if (v.tiled) text += ",tiled=1";                 // (likewise)
    if (v.op == Op::update)
        text += fmt::format(",cache_seqlens={},state_indices={}", int(v.cache_seqlens), int(v.state_indices));
    if (v.op == Op::varlen_fwd) text += fmt::format(",states={}", int(v.initial_states));
    return text;
}

std::string Variant::entry_name() const {
    const Variant v = normalized();
    std::string name = fmt::format("cc1d_{}_{}_w{}_{}_{}_{}{}", to_string(v.op),
                                   v.layout == Layout::channel_last ? "cl" : "cf", v.width,
                                   short_name(v.x_dtype), short_name(v.weight_dtype),
                                   to_string(v.activation), v.bias ? "_bias" : "");
    if (v.seq_idx) name += "_seqidx";
    if (v.initial_states) name += "_init";
    if (v.final_states) name += "_final";
    if (!v.deterministic) name += "_atomic";
    if (v.cache_seqlens) name += "_circular";
    if (v.state_indices) name += "_indexed";
    if (v.small_call) name += "_small";
    if (v.shifted_rows) name += "_shifted";
    if (v.tiled) name += "_tiled";
    return name;
}

Variant Variant::parse(const std::string& text) {
    Variant v;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        if (item.empty()) continue;
        auto eq = item.find('=');
        if (eq == std::string::npos)
            fail(ErrorCode::invalid_argument, "variant text '{}': item '{}' is not field=value", text, item);
        std::string field = item.substr(0, eq), value = item.substr(eq + 1);
        if (field == "op") {
            if (value == "fwd") v.op = Op::fwd;
            else if (value == "bwd") v.op = Op::bwd;
            else if (value == "update") v.op = Op::update;
            else if (value == "varlen_fwd") v.op = Op::varlen_fwd;
            else fail(ErrorCode::invalid_argument, "variant field 'op': unknown op '{}' (expected fwd, bwd, update or varlen_fwd)", value);
        } else if (field == "layout") {
            if (value == "channel_first") v.layout = Layout::channel_first;
            else if (value == "channel_last") v.layout = Layout::channel_last;
            else fail(ErrorCode::invalid_argument, "variant field 'layout': unknown layout '{}' (expected channel_first or channel_last)", value);
        } else if (field == "width") {
            try {
                std::size_t used = 0;
                v.width = std::stoi(value, &used);
                if (used != value.size()) throw std::invalid_argument(value);
            } catch (const std::exception&) {
                fail(ErrorCode::invalid_argument, "variant field 'width': expected an integer, got '{}'", value);
            }
        } else if (field == "x") {
            v.x_dtype = parse_dtype(field, value);
        } else if (field == "weight") {
            v.weight_dtype = parse_dtype(field, value);
        } else if (field == "act") {
            if (value == "none") v.activation = Activation::none;
            else if (value == "silu" || value == "swish") v.activation = Activation::silu;
            else fail(ErrorCode::invalid_argument, "variant field 'act': unknown activation '{}' (expected none or silu)", value);
        } else if (field == "bias") {
            v.bias = parse_bool(field, value);
        } else if (field == "seq_idx") {
            v.seq_idx = parse_bool(field, value);
        } else if (field == "initial_states" || field == "states") {
            v.initial_states = parse_bool(field, value);
        } else if (field == "final_states") {
            v.final_states = parse_bool(field, value);
        } else if (field == "deterministic") {
            v.deterministic = parse_bool(field, value);
        } else if (field == "cache_seqlens") {
            v.cache_seqlens = parse_bool(field, value);
        } else if (field == "state_indices") {
            v.state_indices = parse_bool(field, value);
        } else if (field == "small_call") {
            v.small_call = parse_bool(field, value);
        } else if (field == "shifted_rows") {
            v.shifted_rows = parse_bool(field, value);
        } else if (field == "tiled") {
            v.tiled = parse_bool(field, value);
        } else {
            fail(ErrorCode::invalid_argument, "variant text '{}': unknown field '{}'", text, field);
        }
    }
    check_variant(v);
    return v.normalized();
}

void check_variant(const Variant& v) {
    if (v.width < 1 || v.width > Variant::max_width)
        fail(ErrorCode::invalid_argument, "variant width {}: expected 1 to {}", v.width, Variant::max_width);
    if (v.x_dtype == DType::int32)
        fail(ErrorCode::invalid_argument, "variant x dtype int32: expected fp32, fp16 or bf16");
    if (v.weight_dtype == DType::int32)
        fail(ErrorCode::invalid_argument, "variant weight dtype int32: expected fp32, fp16 or bf16");
}

}  // namespace cc1d
