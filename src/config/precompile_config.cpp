#include "config/precompile_config.hpp"

#include <algorithm>
#include <set>

#include "config/json_file.hpp"
#include "config/variant_choices.hpp"
#include "rtc/target_name.hpp"

namespace cc1d::config {
namespace {

// Keeps the first of each canonical text, in order.
void append_unique(std::vector<Variant>& into, std::set<std::string>& seen, const std::vector<Variant>& items) {
    for (const Variant& v : items)
        if (seen.insert(v.canonical()).second) into.push_back(v.normalized());
}

}  // namespace

std::string target_problem(const std::string& target) {
    if (rtc::parse_sm_target(target) > 0 || rtc::is_gfx_target(target)) return "";
    return "unknown target " + Json(target).dump() +
           " (expected an NVIDIA target such as sm_80 or sm_90a, or an AMD target such as gfx90a or "
           "gfx942:sramecc+:xnack-)";
}

std::vector<Variant> expand_variant_set(const FieldReader& reader, const Json& object, const std::string& path) {
    reader.check_object(object, path, variant_field_names());
    VariantChoices choices = read_variant_choices(reader, object, path);
    // A forward or backward call picks its module by its size (the small-call kernel or
    // the main ones), so a set that does not say which fills both: every call of a listed
    // variant then finds its code object in the cache. ("small_call": false keeps only the
    // main module; update and varlen_fwd have one module.) Likewise a channel-last backward
    // call up to width 4 without states picks the tile kernel's module or the register
    // walk's by its size and rows: a set that does not name "tiled" fills both (normalized()
    // drops the flag from every other variant, and the copies go).
    if (!object.contains("small_call")) choices.small_call = {false, true};
    if (!object.contains("tiled")) choices.tiled = {false, true};
    Expansion<Variant> expansion;
    add_variant_axes(expansion, choices, [](Variant& v) -> Variant& { return v; });
    std::vector<Variant> unique;
    std::set<std::string> seen;
    append_unique(unique, seen, expansion.expand(Variant{}));
    return unique;
}

PrecompileConfig parse_precompile_config(const Json& root, const std::string& file) {
    const FieldReader reader(file);
    reader.check_object(root, "", {"description", "targets", "variants"});
    PrecompileConfig config;
    config.file = file;
    if (root.contains("targets")) {
        config.targets = reader.choices<std::string>(
            root.at("targets"), "targets", [&](const Json& value, const std::string& path) {
                std::string target = reader.string(value, path);
                if (const std::string problem = target_problem(target); !problem.empty()) reader.fail(path, problem);
                return target;
            });
        // A target named twice would only be compiled twice.
        std::vector<std::string> unique;
        for (const auto& target : config.targets)
            if (std::find(unique.begin(), unique.end(), target) == unique.end()) unique.push_back(target);
        config.targets = unique;
    }
    if (!root.contains("variants")) reader.fail("variants", "missing: expected a list of variant sets");
    const Json& sets = reader.list(root.at("variants"), "variants", false);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < sets.size(); ++i)
        append_unique(config.variants, seen, expand_variant_set(reader, sets[i], element_path("variants", i)));
    return config;
}

PrecompileConfig load_precompile_config(const std::string& file) {
    return parse_precompile_config(read_json_file(file), file);
}

}  // namespace cc1d::config
