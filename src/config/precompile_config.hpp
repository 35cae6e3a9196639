// configs/precompile/*.json: the variant sets to compile ahead of time, and for which
// targets.
//   { "targets": ["sm_80", "gfx942"],
//     "variants": [ { "op": ["fwd", "bwd"], "width": [2, 3, 4], "x_dtype": "bf16", ... } ] }
// "targets" may be left out when the command line gives --target; "description" is a
// free-form note for people.
#pragma once

#include <string>
#include <vector>

#include "config/field_reader.hpp"
#include "variant/variant.hpp"

namespace cc1d::config {

struct PrecompileConfig {
    std::string file;
    std::vector<std::string> targets;
    std::vector<Variant> variants;   // every combination of every set, duplicates removed
};

PrecompileConfig parse_precompile_config(const Json& root, const std::string& file);
PrecompileConfig load_precompile_config(const std::string& file);

// Why `target` is not a compile target name ("" when it is one): NVIDIA "sm_90",
// "sm_90a"; AMD "gfx90a", "gfx942:sramecc+:xnack-". Checked up front, so a typo is a
// config error, not hundreds of failed compiles.
std::string target_problem(const std::string& target);

// The variants of one variant-set object, duplicates (equal canonical text) removed.
std::vector<Variant> expand_variant_set(const FieldReader& reader, const Json& object, const std::string& path);

}  // namespace cc1d::config
