// DiskCache: code objects on disk, shared by every process of every user of one folder.
//   path:  <root>/v<format>/<backend>-<compiler>/<target>/<2 hex>/<key>.bin  (+ <key>.json)
//   entry: magic, format version, key, payload size, payload checksum, payload
// Every load verifies all of them; a bad entry is reported once, removed, and reported
// as a miss so the caller recompiles and stores a good one. Publishing writes a unique
// temp file in the same folder, flushes, closes and renames; losing the rename race to
// an identical entry is success; readers never lock. Any file-system failure means one
// warning and memory-only operation: nothing here throws.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/file_system.hpp"

namespace cc1d::cache {

// Where an entry lives below the root, besides its key.
struct EntryLocation {
    std::string backend;    // "cuda" or "hip"
    std::string compiler;   // compiler identity, e.g. "nvrtc-13.0"
    std::string target;     // e.g. "sm_90"
};

// What the sidecar records, for people and for cc1d-cache.
struct EntryInfo {
    std::string variant, options, source_name, library_version;
};

struct DiskCacheConfig {
    std::string root;          // empty: default_root()
    std::string system_root;   // read-only cache searched after root; empty: CC1D_SYSTEM_CACHE_DIR
    bool enabled = true;       // false (or CC1D_DISABLE_DISK_CACHE=1): every call is a no-op
    std::shared_ptr<FileSystem> fs;   // null: the real file system
};

class DiskCache {
public:
    explicit DiskCache(DiskCacheConfig config);
    ~DiskCache();

    // The verified payload, or nullopt (missing, bad, or disk off).
    std::optional<std::string> load(const CacheKey& key, const EntryLocation& where);
    // Publishes atomically. Returns false (after one warning) when it could not.
    bool store(const CacheKey& key, const EntryLocation& where, const std::string& payload,
               const EntryInfo& info);
    // Removes an entry whose payload the driver refused to load.
    void remove(const CacheKey& key, const EntryLocation& where);

    bool enabled() const;              // false once disabled or after a fatal folder error
    const std::string& root() const;   // the user cache root in use ("" when off)
    std::string entry_path(const CacheKey& key, const EntryLocation& where) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// CC1D_CACHE_DIR, else $XDG_CACHE_HOME/cc1d, else $HOME/.cache/cc1d.
std::string default_root();

// Entry encoding, exposed for the cache tool and tests.
std::string encode_entry(const CacheKey& key, const std::string& payload);
// The payload when `bytes` is a valid entry for `key`; otherwise nullopt and `why`.
std::optional<std::string> decode_entry(const std::string& bytes, const CacheKey& key, std::string* why);

}  // namespace cc1d::cache
