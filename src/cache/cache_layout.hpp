// Names below a cache root, in one place for the library and cc1d-cache:
//   <root>/v<format>/<backend>-<compiler>/<target>/<2 hex>/<key>.bin  (+ <key>.json)
// Temp files sit beside the final name: "<final name>.tmp.<pid>.<thread>.<counter>.<random>".
#pragma once

#include <string>

#include "cache/cache_key.hpp"

namespace cc1d::cache {

struct EntryLocation;

// "v1": the folder of one entry format version.
std::string format_folder_name(unsigned format_version);
// A name made safe as one path component: '/' and other odd characters become '_',
// "", "." and ".." become "_" (a target like "gfx942:sramecc+:xnack-" stays as it is).
std::string safe_component(const std::string& name);
// <root>/v<format>/<backend>-<compiler>/<target>/<2 hex>
std::string entry_folder(const std::string& root, const EntryLocation& where, const CacheKey& key);

inline constexpr const char* entry_extension = ".bin";
inline constexpr const char* sidecar_extension = ".json";
inline constexpr const char* temp_marker = ".tmp.";

// A fresh temp name for `final_path`, unique across processes and threads.
std::string temp_path_for(const std::string& final_path);
bool is_temp_name(const std::string& file_name);

}  // namespace cc1d::cache
