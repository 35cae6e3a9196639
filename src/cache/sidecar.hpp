// The JSON file beside each entry (<key>.json): what the entry is, for people and for
// cc1d-cache. The library never needs it to load an entry; a missing or broken sidecar
// only makes the entry anonymous in listings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cc1d::cache {

struct Sidecar {
    std::string key;               // 32 hex digits, as in the file name
    std::string variant;           // canonical variant text
    std::string options;           // compile options, space separated
    std::string source_name;       // the generated source's name, e.g. "<entry>.cu"
    std::string library_version;   // cc1d version that wrote it
    std::string backend;           // "cuda" or "hip"
    std::string compiler;          // e.g. "nvrtc-13.0"
    std::string target;            // e.g. "sm_90"
    std::uint64_t payload_size = 0;
    unsigned format_version = 0;
    std::string created;           // UTC, ISO 8601: "2026-01-31T12:00:00Z"
};

std::string to_json(const Sidecar& sidecar);
// nullopt when the text is not a JSON object; absent fields keep their defaults.
std::optional<Sidecar> parse_sidecar(const std::string& text);

std::string utc_timestamp_now();

}  // namespace cc1d::cache
