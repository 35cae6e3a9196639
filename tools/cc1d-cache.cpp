// cc1d-cache [--cache-dir DIR] list | stats | verify [--fix] | purge [--old]
//
// Looks after one disk cache folder (default: the library's, see docs/cache.md).
// Exit status: 0 done; 1 verify found bad files (and --fix was not given) or a purge
// could not remove something; 2 bad usage, with a message naming the argument.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include "cache/cache_layout.hpp"
#include "cache/cache_scan.hpp"
#include "cache/disk_cache.hpp"
#include "cc1d/cc1d.hpp"
#include "common/version.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cc1d::cache;

constexpr const char* usage_text =
    "usage: cc1d-cache [--cache-dir DIR] list | stats | verify [--fix] | purge [--old]\n"
    "  list          one line per entry: target, payload bytes, compiler, key, variant\n"
    "  stats         totals: entries, bytes, per target\n"
    "  verify        check every entry; exit 1 when one is bad\n"
    "  verify --fix  remove the bad ones (and leftover temp files) and exit 0\n"
    "  purge         remove every cached entry\n"
    "  purge --old   remove only entries of other format or library versions\n"
    "  --cache-dir   the cache folder (default: CC1D_CACHE_DIR, $XDG_CACHE_HOME/cc1d, ~/.cache/cc1d)\n";

// A temp file this old belongs to a writer that died; younger ones may still be written.
constexpr double stale_temp_seconds = 3600;

struct Options {
    std::string root;
    std::string command;
    bool fix = false;
    bool old = false;
};

struct UsageError {
    std::string message;
};

Options parse(int argc, char** argv) {
    Options options;
    bool root_given = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            options.command = "help";
            return options;
        }
        if (arg == "--cache-dir" || arg.rfind("--cache-dir=", 0) == 0) {
            if (arg == "--cache-dir") {
                if (i + 1 >= argc) throw UsageError{"'--cache-dir' needs a folder"};
                options.root = argv[++i];
            } else {
                options.root = arg.substr(std::string("--cache-dir=").size());
            }
            if (options.root.empty()) throw UsageError{"'--cache-dir' needs a folder, got an empty one"};
            root_given = true;
        } else if (arg == "--fix") {
            options.fix = true;
        } else if (arg == "--old") {
            options.old = true;
        } else if (arg == "list" || arg == "stats" || arg == "verify" || arg == "purge") {
            if (!options.command.empty())
                throw UsageError{fmt::format("'{}': only one command at a time (already '{}')", arg, options.command)};
            options.command = arg;
        } else {
            throw UsageError{fmt::format("unknown argument '{}'", arg)};
        }
    }
    if (options.command.empty()) throw UsageError{"missing command (list, stats, verify or purge)"};
    if (options.fix && options.command != "verify") throw UsageError{"'--fix' only goes with verify"};
    if (options.old && options.command != "purge") throw UsageError{"'--old' only goes with purge"};
    if (!root_given) {
        options.root = default_root();
        if (options.root.empty()) throw UsageError{"no cache folder: give '--cache-dir' or set CC1D_CACHE_DIR or HOME"};
    }
    return options;
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Removes a file or a folder tree; false (with a message) when it could not.
bool remove_path(const std::string& path) {
    std::error_code error;
    fs::remove_all(path, error);
    if (error) std::fprintf(stderr, "cc1d-cache: cannot remove %s: %s\n", path.c_str(), error.message().c_str());
    return !error;
}

std::string describe_bytes(std::uint64_t bytes) {
    if (bytes < 10 * 1024) return fmt::format("{} B", bytes);
    if (bytes < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
    return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
}

int list(const Options& options) {
    CacheScan scan = scan_cache(options.root);
    for (const auto& entry : scan.entries) {
        const Sidecar* s = entry.sidecar ? &*entry.sidecar : nullptr;
        std::string size = s ? fmt::format("{}", s->payload_size) : "?";
        std::string variant = s && !s->variant.empty() ? s->variant : "(no sidecar)";
        std::string target = s && !s->target.empty() ? s->target : entry.target;
        fmt::print("{:<24} {:>10}  {:<20} {}  {}\n", target, size, entry.location, entry.key_hex, variant);
    }
    if (scan.entries.empty()) std::fprintf(stderr, "cc1d-cache: no entries in %s\n", options.root.c_str());
    return 0;
}

int stats(const Options& options) {
    CacheScan scan = scan_cache(options.root);
    struct Totals {
        std::uint64_t entries = 0, bytes = 0;
    };
    Totals all;
    std::map<std::string, Totals> per_target;
    for (const auto& entry : scan.entries) {
        std::string target = entry.sidecar && !entry.sidecar->target.empty() ? entry.sidecar->target : entry.target;
        for (Totals* t : {&all, &per_target[target]}) {
            t->entries += 1;
            t->bytes += entry.file_bytes;
        }
    }
    fmt::print("cache: {}\n", options.root);
    fmt::print("format: {} (library {})\n", cc1d::cache_format_version, cc1d::version());
    fmt::print("entries: {}\n", all.entries);
    fmt::print("bytes: {} ({})\n", all.bytes, describe_bytes(all.bytes));
    for (const auto& [target, t] : per_target)
        fmt::print("target {}: {} entries, {} bytes\n", target, t.entries, t.bytes);
    if (!scan.temp_files.empty()) fmt::print("temp files: {}\n", scan.temp_files.size());
    if (!scan.other_format_folders.empty())
        fmt::print("other format versions: {} folders, {} bytes (purge --old removes them)\n",
                   scan.other_format_folders.size(), scan.other_format_bytes);
    return 0;
}

// One finding of verify: what is wrong and which files to remove for it.
struct Problem {
    std::string path, why;
    std::vector<std::string> remove;
};

std::vector<Problem> find_problems(const CacheScan& scan) {
    std::vector<Problem> problems;
    for (const auto& entry : scan.entries) {
        auto key = CacheKey::from_hex(entry.key_hex);
        std::string why;
        auto bytes = read_file(entry.path);
        if (!bytes) why = "cannot read it";
        else if (entry.misplaced) why = "in the wrong <2 hex> folder for its key";
        else if (decode_entry(*bytes, *key, &why)) continue;   // verifies every header field
        problems.push_back({entry.path, why, {entry.path, entry.sidecar_path}});
    }
    for (const auto& file : scan.temp_files)
        if (file.age_seconds > stale_temp_seconds)
            problems.push_back({file.path, "temp file left by a writer that stopped", {file.path}});
    for (const auto& file : scan.orphan_sidecars)
        problems.push_back({file.path, "sidecar without an entry", {file.path}});
    for (const auto& file : scan.strays)
        problems.push_back({file.path, "not a cache file (unexpected name or place)", {file.path}});
    return problems;
}

int verify(const Options& options) {
    CacheScan scan = scan_cache(options.root);
    std::vector<Problem> problems = find_problems(scan);
    bool removed_all = true;
    for (const auto& problem : problems) {
        fmt::print("bad {}: {}{}\n", problem.path, problem.why, options.fix ? " (removed)" : "");
        if (!options.fix) continue;
        for (const auto& path : problem.remove) removed_all &= remove_path(path);
    }
    fmt::print("{} entries checked, {} problems{}\n", scan.entries.size(), problems.size(),
               problems.empty() ? "" : options.fix ? ", fixed" : "; run 'cc1d-cache verify --fix' to remove them");
    if (options.fix) return removed_all ? 0 : 1;
    return problems.empty() ? 0 : 1;
}

int purge(const Options& options) {
    CacheScan scan = scan_cache(options.root);
    std::uint64_t entries = 0, bytes = 0;
    bool ok = true;
    for (const auto& folder : scan.other_format_folders) ok &= remove_path(folder);
    bytes += scan.other_format_bytes;
    if (options.old) {
        // Only entries that name another library version: they can never be loaded again
        // (the version is part of the key). Entries without a sidecar are kept.
        for (const auto& entry : scan.entries) {
            if (!entry.sidecar || entry.sidecar->library_version == cc1d::version()) continue;
            ok &= remove_path(entry.path) && remove_path(entry.sidecar_path);
            entries += 1;
            bytes += entry.file_bytes;
        }
    } else {
        for (const auto& entry : scan.entries) bytes += entry.file_bytes;
        entries = scan.entries.size();
        // Only the format folders cc1d made, never the root itself or anything else in it.
        std::string current = (fs::path(options.root) / format_folder_name(cc1d::cache_format_version)).string();
        if (scan.root_exists) ok &= remove_path(current);
    }
    fmt::print("removed {} entries and {} other format folders ({}) from {}\n", entries,
               scan.other_format_folders.size(), describe_bytes(bytes), options.root);
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    try {
        options = parse(argc, argv);
    } catch (const UsageError& error) {
        std::fprintf(stderr, "cc1d-cache: %s\nusage: cc1d-cache [--cache-dir DIR] list | stats | verify [--fix] | "
                             "purge [--old]   (--help for more)\n",
                     error.message.c_str());
        return 2;
    }
    if (options.command == "help") {
        std::fputs(usage_text, stdout);
        return 0;
    }
    try {
        if (options.command == "list") return list(options);
        if (options.command == "stats") return stats(options);
        if (options.command == "verify") return verify(options);
        return purge(options);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "cc1d-cache: %s\n", error.what());
        return 1;
    }
}
