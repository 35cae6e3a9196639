// The cache key: every input changes it, fields cannot bleed into each other, and its
// text form round-trips.
#include <doctest/doctest.h>

#include <set>

#include "cache/cache_key.hpp"
#include "unit/cache_test_support.hpp"

using namespace cc1d::cache;
using cc1d::cache::test::sample_inputs;

TEST_CASE("every key input changes the key") {
    const KeyInputs base = sample_inputs();
    const CacheKey base_key = make_key(base);
    CHECK(make_key(base) == base_key);   // deterministic

    // One mutation per field; adding a field to KeyInputs without hashing it fails here
    // only if a line is added below, so keep this list complete.
    std::vector<std::pair<const char*, void (*)(KeyInputs&)>> mutations = {
        {"variant", [](KeyInputs& k) { k.variant += ",bias=1"; }},
        {"source", [](KeyInputs& k) { k.source += " "; }},
        {"options", [](KeyInputs& k) { k.options += " -G"; }},
        {"compiler", [](KeyInputs& k) { k.compiler = "nvrtc-12.8"; }},
        {"target", [](KeyInputs& k) { k.target = "sm_80"; }},
        {"library_version", [](KeyInputs& k) { k.library_version = "0.1.1"; }},
        {"format_version", [](KeyInputs& k) { k.format_version += 1; }},
    };
    std::set<std::string> seen = {base_key.hex()};
    for (auto& [field, mutate] : mutations) {
        KeyInputs changed = base;
        mutate(changed);
        CacheKey key = make_key(changed);
        INFO("field: " << field);
        CHECK(key != base_key);
        CHECK(seen.insert(key.hex()).second);
    }
}

TEST_CASE("one changed bit anywhere in the source changes the key") {
    KeyInputs in = sample_inputs();
    const CacheKey base = make_key(in);
    for (std::size_t i = 0; i < in.source.size(); ++i) {
        KeyInputs flipped = in;
        flipped.source[i] = static_cast<char>(flipped.source[i] ^ 0x01);
        CHECK(make_key(flipped) != base);
    }
}

TEST_CASE("fields are framed: moving text across a field boundary changes the key") {
    KeyInputs a = sample_inputs(), b = sample_inputs();
    a.variant = "ab";
    a.source = "c";
    b.variant = "a";
    b.source = "bc";
    CHECK(make_key(a) != make_key(b));

    // Empty fields count too: ("", "x") is not ("x", "").
    KeyInputs c = sample_inputs(), d = sample_inputs();
    c.options = "";
    c.compiler = "x";
    d.options = "x";
    d.compiler = "";
    CHECK(make_key(c) != make_key(d));

    // A length prefix written as text inside a field must not fake the framing.
    KeyInputs e = sample_inputs(), f = sample_inputs();
    e.target = std::string("sm_90") + std::string(8, '\0');
    f.target = "sm_90";
    CHECK(make_key(e) != make_key(f));
}

TEST_CASE("the key of fixed inputs never changes by accident") {
    // Changing this value invalidates every user's cache: do it only on purpose (and then
    // bump cache_format_version as well).
    KeyInputs in;
    in.variant = "op=fwd";
    in.source = "src";
    in.options = "-O3";
    in.compiler = "nvrtc-13.0";
    in.target = "sm_90";
    in.library_version = "0.1.0";
    in.format_version = 1;
    CHECK(make_key(in).hex() == "b323420c3ab9acf4ee63e0da97ac7936");
}

TEST_CASE("hex text round-trips and rejects anything else") {
    CacheKey key{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
    CHECK(key.hex() == "0123456789abcdeffedcba9876543210");
    auto back = CacheKey::from_hex(key.hex());
    REQUIRE(back.has_value());
    CHECK(*back == key);
    CHECK(CacheKey{0, 1}.hex() == "00000000000000000000000000000001");

    CHECK_FALSE(CacheKey::from_hex(""));
    CHECK_FALSE(CacheKey::from_hex(key.hex().substr(1)));                    // 31 digits
    CHECK_FALSE(CacheKey::from_hex(key.hex() + "0"));                         // 33 digits
    CHECK_FALSE(CacheKey::from_hex("0123456789ABCDEFFEDCBA9876543210"));      // one spelling only
    CHECK_FALSE(CacheKey::from_hex("0123456789abcdeffedcba987654321g"));
    CHECK_FALSE(CacheKey::from_hex("../3456789abcdeffedcba9876543210"));
}
