#include "cache/cache_key.hpp"

#include <xxhash.h>

#include <cstdio>

namespace cc1d::cache {
namespace {

// Each field enters the hash as <8-byte little-endian length><bytes>, so no two
// different field lists produce the same byte stream ("ab"+"c" vs "a"+"bc").
void add_length(XXH3_state_t* state, std::uint64_t length) {
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(length >> (8 * i));
    XXH3_128bits_update(state, bytes, sizeof bytes);
}

void add_field(XXH3_state_t* state, const std::string& field) {
    add_length(state, field.size());
    XXH3_128bits_update(state, field.data(), field.size());
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;   // upper case is refused: file names are lower case, one spelling per key
}

}  // namespace

std::string CacheKey::hex() const {
    char text[33];
    std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(high),
                  static_cast<unsigned long long>(low));
    return std::string(text, 32);
}

std::optional<CacheKey> CacheKey::from_hex(const std::string& text) {
    if (text.size() != 32) return std::nullopt;
    CacheKey key;
    for (std::size_t i = 0; i < 32; ++i) {
        int digit = hex_value(text[i]);
        if (digit < 0) return std::nullopt;
        std::uint64_t& half = i < 16 ? key.high : key.low;
        half = (half << 4) | static_cast<std::uint64_t>(digit);
    }
    return key;
}

CacheKey make_key(const KeyInputs& inputs) {
    XXH3_state_t state;
#ifdef XXH3_INITSTATE
    XXH3_INITSTATE(&state);
#endif
    XXH3_128bits_reset(&state);
    // A tag first, so a future change of the framing can change it deliberately.
    add_field(&state, "cc1d-cache-key");
    add_length(&state, inputs.format_version);
    add_field(&state, inputs.library_version);
    add_field(&state, inputs.compiler);
    add_field(&state, inputs.target);
    add_field(&state, inputs.options);
    add_field(&state, inputs.variant);
    add_field(&state, inputs.source);
    XXH128_hash_t hash = XXH3_128bits_digest(&state);
    return CacheKey{hash.high64, hash.low64};
}

}  // namespace cc1d::cache
