// A walk over one cache root, for cc1d-cache and the tests: the entries of the current
// format folder with their sidecars, and everything else found there (temp files left
// by killed writers, sidecars without an entry, stray files, other format versions).
// Never used on the load path, which only opens the one file it needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/sidecar.hpp"

namespace cc1d::cache {

struct ScannedEntry {
    std::string path;              // .../<2 hex>/<key>.bin
    std::string key_hex;           // the file name's key
    std::string location;          // the "<backend>-<compiler>" folder
    std::string target;            // the target folder
    std::uint64_t file_bytes = 0;
    bool misplaced = false;        // its <2 hex> folder does not match its key
    std::optional<Sidecar> sidecar;   // <key>.json, when present and readable
    std::string sidecar_path;         // where the sidecar is (or would be)
};

struct ScannedFile {
    std::string path;
    std::uint64_t bytes = 0;
    double age_seconds = 0;        // since its last write
};

struct CacheScan {
    bool root_exists = false;
    std::vector<ScannedEntry> entries;            // current format version only
    std::vector<ScannedFile> temp_files;          // "*.tmp.*" anywhere below the format folder
    std::vector<ScannedFile> orphan_sidecars;     // <key>.json without <key>.bin
    std::vector<ScannedFile> strays;              // any other file in the format folder
    std::vector<std::string> other_format_folders;   // <root>/v<N>, N != current
    std::uint64_t other_format_bytes = 0;
};

CacheScan scan_cache(const std::string& root);

}  // namespace cc1d::cache
