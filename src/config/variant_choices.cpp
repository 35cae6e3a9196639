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

Op op_named(const std::string& word) {
    return static_cast<Op>(std::find(op_words.begin(), op_words.end(), word) - op_words.begin());
}

DType dtype_named(const std::string& word) {
    return word == "fp32" ? DType::fp32 : word == "fp16" ? DType::fp16 : DType::bf16;
}

template <typename T>
std::vector<T> choices_or(const FieldReader& reader, const Json& object, const std::string& path, const char* key,
                          T fallback, const std::function<T(const Json&, const std::string&)>& one) {
    if (!object.contains(key)) return {fallback};
    return reader.choices<T>(object.at(key), child_path(path, key), one);
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
        "op",   "layout",  "width",          "x_dtype",      "weight_dtype",  "activation",    "bias",
        "seq_idx", "initial_states", "final_states", "deterministic", "cache_seqlens", "state_indices"};
    return names;
}

VariantChoices read_variant_choices(const FieldReader& reader, const Json& object, const std::string& path) {
    const Variant defaults;
    VariantChoices c;
    c.op = choices_or<Op>(reader, object, path, "op", defaults.op, [&](const Json& v, const std::string& p) {
        return op_named(reader.word(v, p, op_words, {}, "op"));
    });
    c.layout = choices_or<Layout>(reader, object, path, "layout", defaults.layout,
                                  [&](const Json& v, const std::string& p) {
                                      return reader.word(v, p, layout_words, {}, "layout") == "channel_last"
                                                 ? Layout::channel_last
                                                 : Layout::channel_first;
                                  });
    c.width = choices_or<int>(reader, object, path, "width", defaults.width, [&](const Json& v, const std::string& p) {
        return static_cast<int>(reader.integer(v, p, 1, Variant::max_width));
    });
    c.x_dtype = choices_or<DType>(reader, object, path, "x_dtype", defaults.x_dtype,
                                  [&](const Json& v, const std::string& p) {
                                      return dtype_named(reader.word(v, p, dtype_words, dtype_aliases, "dtype"));
                                  });
    c.weight_dtype = choices_or<std::optional<DType>>(
        reader, object, path, "weight_dtype", std::nullopt,
        [&](const Json& v, const std::string& p) -> std::optional<DType> {
            std::vector<std::string> words{"same"};
            words.insert(words.end(), dtype_words.begin(), dtype_words.end());
            const std::string word = reader.word(v, p, words, dtype_aliases, "weight dtype");
            if (word == "same") return std::nullopt;
            return dtype_named(word);
        });
    c.activation = choices_or<Activation>(reader, object, path, "activation", defaults.activation,
                                          [&](const Json& v, const std::string& p) {
                                              return reader.word(v, p, {"none", "silu"}, {{"swish", "silu"}},
                                                                 "activation") == "silu"
                                                         ? Activation::silu
                                                         : Activation::none;
                                          });
    const auto flag = [&](const char* key, bool fallback) {
        return choices_or<bool>(reader, object, path, key, fallback,
                                [&](const Json& v, const std::string& p) { return reader.boolean(v, p); });
    };
    c.bias = flag("bias", defaults.bias);
    c.seq_idx = flag("seq_idx", defaults.seq_idx);
    c.initial_states = flag("initial_states", defaults.initial_states);
    c.final_states = flag("final_states", defaults.final_states);
    c.deterministic = flag("deterministic", defaults.deterministic);
    c.cache_seqlens = flag("cache_seqlens", defaults.cache_seqlens);
    c.state_indices = flag("state_indices", defaults.state_indices);

    check_flag_applies(reader, path, "seq_idx", c.seq_idx, true, c.op, {Op::fwd, Op::bwd});
    check_flag_applies(reader, path, "initial_states", c.initial_states, true, c.op, {Op::fwd, Op::bwd, Op::varlen_fwd});
    check_flag_applies(reader, path, "final_states", c.final_states, true, c.op, {Op::fwd, Op::bwd});
    check_flag_applies(reader, path, "deterministic", c.deterministic, false, c.op, {Op::bwd});
    check_flag_applies(reader, path, "cache_seqlens", c.cache_seqlens, true, c.op, {Op::update});
    check_flag_applies(reader, path, "state_indices", c.state_indices, true, c.op, {Op::update});
    return c;
}

}  // namespace cc1d::config
