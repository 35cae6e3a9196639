#include "config/bench_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "config/json_file.hpp"
#include "config/variant_choices.hpp"

namespace cc1d::config {
namespace {

// Shapes are runtime arguments: any positive size a GPU could hold.
constexpr std::int64_t max_extent = (std::int64_t{1} << 31) - 1;
constexpr double max_elements = 1099511627776.0;   // 2^40

struct ShapeField {
    const char* key;
    std::vector<Op> read_by;       // ops that use the field
    std::vector<Op> required_by;   // ops that cannot run without it
};

const std::vector<ShapeField>& shape_fields() {
    static const std::vector<ShapeField> fields{
        {"batch", {Op::fwd, Op::bwd, Op::update}, {Op::fwd, Op::bwd, Op::update}},
        {"dim", {Op::fwd, Op::bwd, Op::update, Op::varlen_fwd}, {Op::fwd, Op::bwd, Op::update, Op::varlen_fwd}},
        {"seqlen", {Op::fwd, Op::bwd}, {Op::fwd, Op::bwd}},
        {"tokens", {Op::update}, {}},
        {"state_len", {Op::update}, {}},
        {"cache_batch", {Op::update}, {}},
        {"seqlens", {Op::varlen_fwd}, {Op::varlen_fwd}},
    };
    return fields;
}

bool contains(const std::vector<Op>& ops, Op op) { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

std::string op_names(const std::vector<Op>& ops) {
    std::vector<std::string> names;
    for (Op op : ops) names.push_back(to_string(op));
    return fmt::format("{}", fmt::join(names, ", "));
}

// Each shape field present must be read by one of the listed ops; each listed op must
// find the fields it needs.
void check_shape_fields(const FieldReader& reader, const Json& object, const std::string& path,
                        const std::vector<Op>& ops) {
    for (const ShapeField& field : shape_fields()) {
        const bool present = object.contains(field.key);
        bool read = false;
        for (Op op : ops) read = read || contains(field.read_by, op);
        if (present && !read)
            reader.fail(child_path(path, field.key),
                        fmt::format("{} applies to op {} only, and this case's op lists none of them", field.key,
                                    op_names(field.read_by)));
        for (Op op : ops)
            if (!present && contains(field.required_by, op))
                reader.fail(path, fmt::format("missing field \"{}\" (op {} needs it)", field.key, to_string(op)));
    }
}

std::vector<std::int64_t> read_seqlens(const FieldReader& reader, const Json& object, const std::string& path) {
    const std::string list_path = child_path(path, "seqlens");
    const Json& list = reader.list(object.at("seqlens"), list_path, false);
    std::vector<std::int64_t> lengths;
    for (std::size_t i = 0; i < list.size(); ++i)
        lengths.push_back(reader.integer(list[i], element_path(list_path, i), 1, max_extent));
    return lengths;
}

// Fields the op does not read go back to their defaults, so equal cases compare equal
// and reports show only what was run.
BenchCase settled(BenchCase c) {
    const BenchCase defaults;
    c.variant = c.variant.normalized();
    const Op op = c.variant.op;
    if (op == Op::varlen_fwd) c.batch = defaults.batch;
    if (op != Op::fwd && op != Op::bwd) c.seqlen = defaults.seqlen;
    if (op != Op::varlen_fwd) c.seqlens.clear();
    if (op == Op::update) {
        if (c.state_len == 0) c.state_len = c.variant.width - 1;
        if (c.cache_batch == 0) c.cache_batch = c.batch;
    } else {
        c.tokens = defaults.tokens;
        c.state_len = defaults.state_len;
        c.cache_batch = defaults.cache_batch;
    }
    return c;
}

void check_case(const FieldReader& reader, const BenchCase& c, const std::string& path) {
    if (c.variant.op == Op::update) {
        if (c.state_len < c.variant.width - 1)
            reader.fail(child_path(path, "state_len"),
                        fmt::format("state_len {} is shorter than width - 1 = {} (the history a width-{} kernel reads)",
                                    c.state_len, c.variant.width - 1, c.variant.width));
        if (c.cache_batch < c.batch)
            reader.fail(child_path(path, "cache_batch"),
                        fmt::format("cache_batch {} is smaller than batch {} (each row needs its own state slot)",
                                    c.cache_batch, c.batch));
    }
    const double elements = static_cast<double>(c.batch) * static_cast<double>(c.dim) *
                            static_cast<double>(c.variant.op == Op::varlen_fwd ? c.total_tokens() : c.seqlen);
    if (elements > max_elements)
        reader.fail(path, fmt::format("shape {} has {:.3g} elements; expected at most 2^40", c.shape_text(), elements));
}

// A module flag the runtime picks by the call (small_call, shifted_rows, tiled): a bench
// case may not ask for it set, since its calls would not run that module.
void reject_module_flag(const FieldReader& reader, const std::string& path, const char* key,
                        const std::vector<bool>& choices, const char* why) {
    if (std::find(choices.begin(), choices.end(), true) != choices.end())
        reader.fail(child_path(path, key), fmt::format("{}; only precompile configs list {}", why, key));
}

std::vector<BenchCase> expand_case(const FieldReader& reader, const Json& object, const std::string& path,
                                   std::size_t index) {
    std::vector<std::string> known{"name"};
    for (const ShapeField& field : shape_fields()) known.push_back(field.key);
    const auto& variant_names = variant_field_names();
    known.insert(known.end(), variant_names.begin(), variant_names.end());
    reader.check_object(object, path, known);

    BenchCase base;
    base.name = object.contains("name") ? reader.string(object.at("name"), child_path(path, "name"))
                                        : fmt::format("case{}", index);
    if (base.name.empty()) reader.fail(child_path(path, "name"), "expected a non-empty name");
    const VariantChoices variant = read_variant_choices(reader, object, path);
    reject_module_flag(reader, path, "small_call", variant.small_call,
                       "a call takes the small-call kernel by its size (CC1D_DISABLE_SMALL_FORWARD and "
                       "CC1D_DISABLE_SMALL_BACKWARD turn it off)");
    reject_module_flag(reader, path, "shifted_rows", variant.shifted_rows,
                       "a call takes the shifted-rows module by its rows (CC1D_DISABLE_SHIFTED_ROWS turns it off)");
    reject_module_flag(reader, path, "tiled", variant.tiled, "a call takes the tile kernel's module by its size and rows");
    check_shape_fields(reader, object, path, variant.op);
    if (object.contains("seqlens")) base.seqlens = read_seqlens(reader, object, path);

    Expansion<BenchCase> expansion;
    const auto extent_axis = [&](const char* key, std::int64_t BenchCase::*field) {
        if (!object.contains(key)) return;
        expansion.add_axis(reader.integer_choices(object.at(key), child_path(path, key), 1, max_extent),
                           [field](BenchCase& c, std::int64_t value) { c.*field = value; });
    };
    extent_axis("batch", &BenchCase::batch);
    extent_axis("dim", &BenchCase::dim);
    extent_axis("seqlen", &BenchCase::seqlen);
    extent_axis("tokens", &BenchCase::tokens);
    extent_axis("state_len", &BenchCase::state_len);
    extent_axis("cache_batch", &BenchCase::cache_batch);
    add_variant_axes(expansion, variant, [](BenchCase& c) -> Variant& { return c.variant; });

    std::vector<BenchCase> cases;
    for (const BenchCase& item : expansion.expand(base)) {
        BenchCase c = settled(item);
        check_case(reader, c, path);
        cases.push_back(std::move(c));
    }
    return cases;
}

}  // namespace

BenchConfig parse_bench_config(const Json& root, const std::string& file) {
    const FieldReader reader(file);
    reader.check_object(root, "", {"description", "warmup", "reps", "host_calls", "graph_replay", "cases"});
    BenchConfig config;
    config.file = file;
    if (root.contains("warmup")) config.warmup = static_cast<int>(reader.integer(root.at("warmup"), "warmup", 0, 100000));
    if (root.contains("reps")) config.reps = static_cast<int>(reader.integer(root.at("reps"), "reps", 1, 100000));
    if (root.contains("host_calls"))
        config.host_calls = static_cast<int>(reader.integer(root.at("host_calls"), "host_calls", 1, 10000000));
    if (root.contains("graph_replay")) config.graph_replay = reader.boolean(root.at("graph_replay"), "graph_replay");
    if (!root.contains("cases")) reader.fail("cases", "missing: expected a list of cases");
    const Json& cases = reader.list(root.at("cases"), "cases", false);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        for (BenchCase& c : expand_case(reader, cases[i], element_path("cases", i), i)) {
            if (seen.insert(c.label() + " | " + c.shape_text()).second) config.cases.push_back(std::move(c));
        }
    }
    return config;
}

BenchConfig load_bench_config(const std::string& file) { return parse_bench_config(read_json_file(file), file); }

}  // namespace cc1d::config
