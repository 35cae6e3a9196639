#include "config/variant_choices.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace cc1d::config {
namespace {

const std::vector<std::string> op_words{"fwd", "bwd", "update", "varlen_fwd"};
const std::vector<std::string> layout_words{"channel_first", "channel_last"};
const std::vector<std::string> dtype_words{"fp32", "fp16", "bf16"};
const std::vector<std::pair<std::string, std::string>> dtype_aliases{
    {"float32", "fp32"}, {"float16", "fp16"}, {"bfloat16", "bf16"}};

DType dtype_named(const std::string& word) {
    return word == "fp32" ? DType::fp32 : word == "fp16" ? DType::fp16 : DType::bf16;
}

// Readers of one value of each field; FieldReader::choices applies them to lists.
Op read_op(const FieldReader& reader, const Json& value, const std::string& path) {
    const std::string word = reader.word(value, path, op_words, {}, "op");
    return static_cast<Op>(std::find(op_words.begin(), op_words.end(), word) - op_words.begin());
}
Layout read_layout(const FieldReader& reader, const Json& value, const std::string& path) {
    return reader.word(value, path, layout_words, {}, "layout") == "channel_last" ? Layout::channel_last
                                                                                   : Layout::channel_first;
}
int read_width(const FieldReader& reader, const Json& value, const std::string& path) {
    return static_cast<int>(reader.integer(value, path, 1, Variant::max_width));
}
DType read_dtype(const FieldReader& reader, const Json& value, const std::string& path) {
    return dtype_named(reader.word(value, path, dtype_words, dtype_aliases, "dtype"));
}
std::optional<DType> read_weight_dtype(const FieldReader& reader, const Json& value, const std::string& path) {
    static const std::vector<std::string> words{"same", "fp32", "fp16", "bf16"};
    const std::string word = reader.word(value, path, words, dtype_aliases, "weight dtype");
    if (word == "same") return std::nullopt;
    return dtype_named(word);
}
Activation read_activation(const FieldReader& reader, const Json& value, const std::string& path) {
    return reader.word(value, path, {"none", "silu"}, {{"swish", "silu"}}, "activation") == "silu" ? Activation::silu
                                                                                                : Activation::none;
}
bool read_flag(const FieldReader& reader, const Json& value, const std::string& path) {
    return reader.boolean(value, path);
}

template <typename T>
using ReadOne = T (*)(const FieldReader&, const Json&, const std::string&);

// The choices of `key` (one value or a list), or just `fallback` when it is absent.
template <typename T>
std::vector<T> field(const FieldReader& reader, const Json& object, const std::string& path, const char* key,
                     T fallback, ReadOne<T> one) {
    if (!object.contains(key)) return {fallback};
    return reader.choices<T>(object.at(key), child_path(path, key),
                             [&](const Json& value, const std::string& item) { return one(reader, value, item); });
}

// A flag that only some ops read: `true` among its choices needs one of those ops listed.
void check_flag_applies(const FieldReader& reader, const std::string& path, const char* key,
                        const std::vector<bool>& choices, bool meaningful_value, const std::vector<Op>& ops,
                        const std::vector<Op>& reading_ops) {
    if (std::find(choices.begin(), choices.end(), meaningful_value) == choices.end()) return;
    for (Op op : ops)
        if (std::find(reading_ops.begin(), reading_ops.end(), op) != reading_ops.end()) return;
    std::vector<std::string> names;
    for (Op op : reading_ops) names.push_back(to_string(op));
    reader.fail(child_path(path, key),
                fmt::format("{} {} applies to op {} only, and this entry's op lists none of them", key,
                            meaningful_value ? "true" : "false", fmt::join(names, ", ")));
}

}  // namespace

const std::vector<std::string>& variant_field_names() {
    static const std::vector<std::string> names{
        "op", "layout", "width", "x_dtype", "weight_dtype", "activation", "bias",
        "seq_idx", "initial_states", "final_states", "deterministic", "cache_seqlens", "state_indices", "small_call",
        "shifted_rows", "tiled"};
    return names;
}

VariantChoices read_variant_choices(const FieldReader& reader, const Json& object, const std::string& path) {
    const Variant defaults;
    VariantChoices c;
    c.op = field(reader, object, path, "op", defaults.op, read_op);
    c.layout = field(reader, object, path, "layout", defaults.layout, read_layout);
    c.width = field(reader, object, path, "width", defaults.width, read_width);
    c.x_dtype = field(reader, object, path, "x_dtype", defaults.x_dtype, read_dtype);
    c.weight_dtype = field<std::optional<DType>>(reader, object, path, "weight_dtype", std::nullopt, read_weight_dtype);
    c.activation = field(reader, object, path, "activation", defaults.activation, read_activation);
    c.bias = field(reader, object, path, "bias", defaults.bias, read_flag);
    c.seq_idx = field(reader, object, path, "seq_idx", defaults.seq_idx, read_flag);
    c.initial_states = field(reader, object, path, "initial_states", defaults.initial_states, read_flag);
    c.final_states = field(reader, object, path, "final_states", defaults.final_states, read_flag);
    c.deterministic = field(reader, object, path, "deterministic", defaults.deterministic, read_flag);
    c.cache_seqlens = field(reader, object, path, "cache_seqlens", defaults.cache_seqlens, read_flag);
    c.state_indices = field(reader, object, path, "state_indices", defaults.state_indices, read_flag);
    c.small_call = field(reader, object, path, "small_call", defaults.small_call, read_flag);
    c.shifted_rows = field(reader, object, path, "shifted_rows", defaults.shifted_rows, read_flag);
    c.tiled = field(reader, object, path, "tiled", defaults.tiled, read_flag);

    check_flag_applies(reader, path, "seq_idx", c.seq_idx, true, c.op, {Op::fwd, Op::bwd});
    check_flag_applies(reader, path, "initial_states", c.initial_states, true, c.op, {Op::fwd, Op::bwd, Op::varlen_fwd});
    check_flag_applies(reader, path, "final_states", c.final_states, true, c.op, {Op::fwd, Op::bwd});
    check_flag_applies(reader, path, "deterministic", c.deterministic, false, c.op, {Op::bwd});
    check_flag_applies(reader, path, "cache_seqlens", c.cache_seqlens, true, c.op, {Op::update});
    check_flag_applies(reader, path, "state_indices", c.state_indices, true, c.op, {Op::update});
    check_flag_applies(reader, path, "small_call", c.small_call, true, c.op, {Op::fwd, Op::bwd});
    check_flag_applies(reader, path, "shifted_rows", c.shifted_rows, true, c.op, {Op::fwd, Op::bwd});
    check_flag_applies(reader, path, "tiled", c.tiled, true, c.op, {Op::bwd});
    return c;
}

}  // namespace cc1d::config
