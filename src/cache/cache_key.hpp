// The disk-cache key: a 128-bit XXH3 hash over everything that decides the bytes of a
// code object. Compiler output is never hashed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cc1d::cache {

struct CacheKey {
    std::uint64_t high = 0, low = 0;
    std::string hex() const;                                   // 32 lowercase hex digits
    static std::optional<CacheKey> from_hex(const std::string& text);
    bool operator==(const CacheKey& o) const { return high == o.high && low == o.low; }
    bool operator!=(const CacheKey& o) const { return !(*this == o); }
};

struct KeyInputs {
    std::string variant;           // canonical variant text
    std::string source;            // the full generated source
    std::string options;           // normalized compile options, space separated
    std::string compiler;          // compiler identity and version, e.g. "nvrtc-13.0"
    std::string target;            // full target, e.g. "sm_90", "gfx942:sramecc+:xnack-"
    std::string library_version;   // cc1d::version()
    unsigned format_version = 0;   // cache_format_version
};

CacheKey make_key(const KeyInputs& inputs);

}  // namespace cc1d::cache
