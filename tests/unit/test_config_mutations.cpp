// The shipped configs with random mutations: values replaced by JSON of any type (null,
// booleans, negative, huge and fractional numbers, strings, lists, objects), members
// removed or added, lists emptied. Each mutant must load or be refused with a
// ConfigError (which the tools print as their one error line, exit status 2): a type
// error escaping from the JSON library, a crash or a hang would end a tool run with an
// unreadable message, or none. The configs are shipped ones, so every field the parsers
// know is reached.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "config/bench_config.hpp"
#include "config/config_error.hpp"
#include "config/json_file.hpp"
#include "config/precompile_config.hpp"

using namespace cc1d::config;
using Json = nlohmann::json;

namespace {

using Rng = std::mt19937_64;

std::filesystem::path source_dir() {
    if (const char* dir = std::getenv("CC1D_TEST_SOURCE_DIR")) return dir;
    return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

bool coin(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

Json random_value(Rng& rng, int depth = 0) {
    switch (std::uniform_int_distribution<int>(0, depth > 1 ? 6 : 8)(rng)) {
        case 0: return nullptr;
        case 1: return coin(rng, 0.5);
        case 2: return std::int64_t(std::uniform_int_distribution<int>(-3, 5000)(rng));
        case 3: return coin(rng, 0.5) ? Json(std::int64_t(1) << 62) : Json(-(std::int64_t(1) << 40));
        case 4: return coin(rng, 0.5) ? 2.5 : 1e300;
        case 5: {
            const char* words[] = {"", "fwd", "bwd", "bf16", "silu", "channel_last", "sm_90", "gfx942", "x", "none", "same"};
            return words[std::uniform_int_distribution<int>(0, 10)(rng)];
        }
        case 6: return std::uint64_t(18446744073709551615ull);
        case 7: {
            Json list = Json::array();
            for (int i = std::uniform_int_distribution<int>(0, 3)(rng); i > 0; --i) list.push_back(random_value(rng, depth + 1));
            return list;
        }
        default: {
            Json object = Json::object();
            object["op"] = random_value(rng, depth + 1);
            if (coin(rng, 0.5)) object["width"] = random_value(rng, depth + 1);
            return object;
        }
    }
}

// Every value in the document (objects' members and lists' items, depth first).
void collect(Json& node, std::vector<Json*>& out) {
    out.push_back(&node);
    if (node.is_object())
        for (auto& item : node.items()) collect(item.value(), out);
    else if (node.is_array())
        for (auto& item : node) collect(item, out);
}

// One to four mutations of a copy of `original`.
Json mutate(const Json& original, Rng& rng) {
    Json doc = original;
    for (int m = std::uniform_int_distribution<int>(1, 4)(rng); m > 0; --m) {
        std::vector<Json*> nodes;
        collect(doc, nodes);
        Json* node = nodes[std::uniform_int_distribution<std::size_t>(0, nodes.size() - 1)(rng)];
        const int kind = std::uniform_int_distribution<int>(0, 3)(rng);
        if (kind == 0 || node == &doc) {
            if (node != &doc) *node = random_value(rng);
        } else if (kind == 1 && node->is_object() && !node->empty()) {
            auto it = node->begin();
            std::advance(it, std::uniform_int_distribution<std::size_t>(0, node->size() - 1)(rng));
            node->erase(it.key());
        } else if (kind == 2 && node->is_object()) {
            const char* keys[] = {"width", "seq_idx", "batch", "dim", "seqlen", "tokens", "unknown", "targets", "small_call"};
            (*node)[keys[std::uniform_int_distribution<int>(0, 8)(rng)]] = random_value(rng);
        } else if (node->is_array()) {
            *node = Json::array();
        } else {
            *node = random_value(rng);
        }
    }
    return doc;
}

template <typename Parse>
void mutants_of(const std::filesystem::path& path, Parse parse, Rng& rng, int count, int& loaded, int& refused) {
    const Json original = read_json_file(path.string());
    for (int i = 0; i < count; ++i) {
        const Json doc = mutate(original, rng);
        try {
            parse(doc, path.filename().string());
            ++loaded;
        } catch (const ConfigError&) {
            ++refused;
        } catch (const std::exception& e) {
            FAIL_CHECK("not a ConfigError: " << e.what() << "\n  in " << path.filename().string() << ": "
                                               << doc.dump().substr(0, 600));
        }
    }
}

}  // namespace

TEST_CASE("mutated precompile and bench configs load or give a ConfigError, nothing else") {
    Rng rng(3);
    int loaded = 0, refused = 0;
    const auto root = source_dir() / "configs";
    mutants_of(root / "precompile" / "mamba.json", parse_precompile_config, rng, 3000, loaded, refused);
    for (const char* bench : {"anchors.json", "decode.json", "quick.json", "small-backward.json", "unaligned.json"})
        mutants_of(root / "bench" / bench, parse_bench_config, rng, 1500, loaded, refused);
    CHECK(loaded > 100);
    CHECK(refused > 1000);
    MESSAGE(loaded << " mutants loaded, " << refused << " refused with a ConfigError");
}
