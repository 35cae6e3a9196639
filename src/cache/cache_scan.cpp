#include "cache/cache_scan.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <system_error>

#include "cache/cache_key.hpp"
#include "cache/cache_layout.hpp"
#include "common/version.hpp"

namespace cc1d::cache {
namespace {

namespace fs = std::filesystem;

bool has_suffix(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_format_folder_name(const std::string& name) {
    if (name.size() < 2 || name[0] != 'v') return false;
    for (std::size_t i = 1; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return false;
    return true;
}

ScannedFile describe(const fs::path& path) {
    std::error_code error;
    ScannedFile file;
    file.path = path.string();
    auto size = fs::file_size(path, error);
    file.bytes = error ? 0 : size;
    auto written = fs::last_write_time(path, error);
    if (!error) file.age_seconds = std::chrono::duration<double>(fs::file_time_type::clock::now() - written).count();
    return file;
}

std::optional<Sidecar> read_sidecar(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return parse_sidecar(text);
}

std::uint64_t folder_bytes(const fs::path& folder) {
    std::uint64_t total = 0;
    std::error_code error;
    for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, error), end;
         !error && it != end; it.increment(error)) {
        std::error_code size_error;
        if (it->is_regular_file(size_error)) {
            auto size = it->file_size(size_error);
            if (!size_error) total += size;
        }
    }
    return total;
}

// One file below <root>/v<current>: <location>/<target>/<2 hex>/<name>.
void classify(const fs::path& format_folder, const fs::path& path, CacheScan& scan,
              std::map<std::string, fs::path>& sidecars) {
    std::string name = path.filename().string();
    if (is_temp_name(name)) {
        scan.temp_files.push_back(describe(path));
        return;
    }
    auto relative = path.lexically_relative(format_folder);
    std::vector<std::string> parts(relative.begin(), relative.end());
    if (parts.size() != 4) {
        scan.strays.push_back(describe(path));
        return;
    }
    if (has_suffix(name, sidecar_extension)) {
        sidecars[path.parent_path().string() + "/" + path.stem().string()] = path;
        return;
    }
    std::string stem = path.stem().string();
    if (!has_suffix(name, entry_extension) || !CacheKey::from_hex(stem)) {
        scan.strays.push_back(describe(path));
        return;
    }
    ScannedEntry entry;
    entry.path = path.string();
    entry.key_hex = stem;
    entry.location = parts[0];
    entry.target = parts[1];
    entry.file_bytes = describe(path).bytes;
    entry.misplaced = parts[2] != stem.substr(0, 2);
    entry.sidecar_path = (path.parent_path() / (stem + sidecar_extension)).string();
    scan.entries.push_back(std::move(entry));
}

}  // namespace

CacheScan scan_cache(const std::string& root) {
    CacheScan scan;
    std::error_code error;
    if (!fs::is_directory(root, error)) return scan;
    scan.root_exists = true;

    const std::string current = format_folder_name(cache_format_version);
    for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
        std::string name = it->path().filename().string();
        if (name != current && is_format_folder_name(name) && it->is_directory(error)) {
            scan.other_format_folders.push_back(it->path().string());
            scan.other_format_bytes += folder_bytes(it->path());
        }
    }

    fs::path format_folder = fs::path(root) / current;
    std::map<std::string, fs::path> sidecars;   // "<folder>/<key>" -> its .json
    for (fs::recursive_directory_iterator it(format_folder, fs::directory_options::skip_permission_denied, error),
         end;
         !error && it != end; it.increment(error)) {
        std::error_code type_error;
        if (!it->is_directory(type_error)) classify(format_folder, it->path(), scan, sidecars);
    }

    for (auto& entry : scan.entries) {
        auto key = fs::path(entry.path).parent_path().string() + "/" + entry.key_hex;
        auto found = sidecars.find(key);
        if (found == sidecars.end()) continue;
        entry.sidecar = read_sidecar(found->second);
        sidecars.erase(found);
    }
    for (auto& [key, path] : sidecars) scan.orphan_sidecars.push_back(describe(path));
    // Directory order is arbitrary; listings should not be.
    std::sort(scan.entries.begin(), scan.entries.end(),
              [](const ScannedEntry& a, const ScannedEntry& b) { return a.path < b.path; });
    return scan;
}

}  // namespace cc1d::cache
