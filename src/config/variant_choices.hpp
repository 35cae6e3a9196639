// The variant fields of a config entry (a precompile variant set or a bench case):
// op, layout, width, x_dtype, weight_dtype, activation and the feature flags. Each
// holds one value or a list; omitted fields take the defaults of cc1d::Variant, and
// weight_dtype defaults to "same" (the x dtype of each combination).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/expansion.hpp"
#include "config/field_reader.hpp"
#include "variant/variant.hpp"

namespace cc1d::config {

// The JSON keys of the variant fields, in the order they expand.
const std::vector<std::string>& variant_field_names();

struct VariantChoices {
    std::vector<Op> op;
    std::vector<Layout> layout;
    std::vector<int> width;
    std::vector<DType> x_dtype;
    std::vector<std::optional<DType>> weight_dtype;   // nullopt: "same" as x_dtype
    std::vector<Activation> activation;
    std::vector<bool> bias, seq_idx, initial_states, final_states, deterministic, cache_seqlens, state_indices;
    std::vector<bool> small_call;   // fwd, bwd: the small-call module (precompile configs; a call picks it by its size)
    std::vector<bool> shifted_rows;   // fwd, bwd: the module of rows off 16-byte boundaries
                                      // (precompile configs; a call picks it by its rows)
    std::vector<bool> tiled;   // bwd: the channel-last tile kernel's module (precompile configs; a call
                               // picks it by its size and rows)
};

// Reads the variant fields of `object` (other keys are the caller's to check). A flag
// set to true that applies to none of the listed ops is an error, not a silent no-op.
VariantChoices read_variant_choices(const FieldReader& reader, const Json& object, const std::string& path);

// Adds one axis per variant field to `expansion`; `variant_of(item)` is the Variant to fill.
template <typename Item, typename VariantOf>
void add_variant_axes(Expansion<Item>& expansion, const VariantChoices& c, VariantOf variant_of) {
    auto set = [variant_of](auto field) {
        return [variant_of, field](Item& item, const auto& choice) { variant_of(item).*field = choice; };
    };
    expansion.add_axis(c.op, set(&Variant::op));
    expansion.add_axis(c.layout, set(&Variant::layout));
    expansion.add_axis(c.width, set(&Variant::width));
    expansion.add_axis(c.x_dtype, set(&Variant::x_dtype));
    expansion.add_axis(c.weight_dtype, [variant_of](Item& item, const std::optional<DType>& choice) {
        Variant& v = variant_of(item);
        v.weight_dtype = choice.value_or(v.x_dtype);
    });
    expansion.add_axis(c.activation, set(&Variant::activation));
    expansion.add_axis(c.bias, set(&Variant::bias));
    expansion.add_axis(c.seq_idx, set(&Variant::seq_idx));
    expansion.add_axis(c.initial_states, set(&Variant::initial_states));
    expansion.add_axis(c.final_states, set(&Variant::final_states));
    expansion.add_axis(c.deterministic, set(&Variant::deterministic));
    expansion.add_axis(c.cache_seqlens, set(&Variant::cache_seqlens));
    expansion.add_axis(c.state_indices, set(&Variant::state_indices));
    expansion.add_axis(c.small_call, set(&Variant::small_call));
    expansion.add_axis(c.shifted_rows, set(&Variant::shifted_rows));
    expansion.add_axis(c.tiled, set(&Variant::tiled));
}

}  // namespace cc1d::config
