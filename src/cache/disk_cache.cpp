#include "cache/disk_cache.hpp"

#include <pwd.h>
#include <unistd.h>

#include <atomic>

#include "cache/cache_layout.hpp"
#include "cache/entry_format.hpp"
#include "cache/sidecar.hpp"
#include "cc1d/cc1d.hpp"
#include "common/env.hpp"
#include "common/log.hpp"
#include "common/version.hpp"

namespace cc1d::cache {
namespace {

std::string without_trailing_slashes(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

std::string home_folder() {
    if (auto home = env::get("HOME")) return *home;
    struct passwd entry;
    struct passwd* found = nullptr;
    char buffer[4096];
    if (getpwuid_r(getuid(), &entry, buffer, sizeof buffer, &found) == 0 && found && found->pw_dir)
        return found->pw_dir;
    return "";
}

std::string sidecar_path_of(const std::string& entry_path) {
    return entry_path.substr(0, entry_path.size() - std::string(entry_extension).size()) + sidecar_extension;
}

}  // namespace

std::string default_root() {
    if (auto dir = env::get("CC1D_CACHE_DIR")) return *dir;
    // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
    if (auto xdg = env::get("XDG_CACHE_HOME"); xdg && xdg->front() == '/') return *xdg + "/cc1d";
    std::string home = home_folder();
    return home.empty() ? std::string() : home + "/.cache/cc1d";
}

struct DiskCache::State {
    std::shared_ptr<FileSystem> fs;
    std::string root;             // the user cache, read and written
    std::string system_root;      // read only; "" when none
    bool switched_on = true;      // config.enabled and not CC1D_DISABLE_DISK_CACHE
    bool always_compile = false;  // CC1D_ALWAYS_COMPILE: loads miss, stores still replace
    std::atomic<bool> user_root_usable{true};

    std::string path_below(const std::string& base, const CacheKey& key, const EntryLocation& where) const {
        return entry_folder(base, where, key) + "/" + key.hex() + entry_extension;
    }

    // The first failure of the user folder: one warning, then memory-only operation.
    void give_up_user_root(const std::string& reason) {
        if (!user_root_usable.exchange(false)) return;
        log::warn_once("cache-unusable:" + root,
                       fmt::format("disk cache {} is not usable ({}); going on without it: kernels are "
                                   "compiled in memory only for the rest of this process",
                                   root, reason));
    }

    // One warning per kind of damage per cache folder; further ones go to the debug log,
    // so a folder full of broken entries does not flood the output.
    static void report_bad_entry(const std::string& base, const std::string& path, EntryProblem problem,
                                 bool removed) {
        std::string message = fmt::format("disk cache entry {} is bad ({}); {}", path, to_string(problem),
                                          removed ? "removed it, the kernel will be compiled again"
                                                  : "skipped it (read-only system cache)");
        std::string topic = fmt::format("cache-bad-entry:{}:{}", base, to_string(problem));
        if (!log::warn_once(topic, message + "; further entries with this problem are reported at debug level"))
            log::debug("{}", message);
    }

    std::optional<std::string> load_user(const CacheKey& key, const EntryLocation& where) {
        std::string path = path_below(root, key, where);
        auto bytes = fs->read_file(path);
        if (!bytes) return std::nullopt;
        EntryProblem problem = EntryProblem::none;
        if (auto payload = decode_entry_checked(*bytes, key, &problem)) {
            log::debug("disk cache hit: {}", path);
            return payload;
        }
        // Another process may have just replaced the bad file with a good one (a rename
        // is atomic): read once more before removing anything.
        if (auto again = fs->read_file(path)) {
            if (auto payload = decode_entry_checked(*again, key, nullptr)) return payload;
        }
        fs->remove(path);
        fs->remove(sidecar_path_of(path));
        report_bad_entry(root, path, problem, /*removed=*/true);
        return std::nullopt;
    }

    std::optional<std::string> load_system(const CacheKey& key, const EntryLocation& where) const {
        std::string path = path_below(system_root, key, where);
        auto bytes = fs->read_file(path);
        if (!bytes) return std::nullopt;
        EntryProblem problem = EntryProblem::none;
        auto payload = decode_entry_checked(*bytes, key, &problem);
        if (payload) log::debug("disk cache hit (system cache): {}", path);
        else report_bad_entry(system_root, path, problem, /*removed=*/false);
        return payload;
    }

    // Unique temp file in the final folder, written and flushed, then renamed over the
    // final name: readers see the old file or the whole new one, never a part.
    bool publish(const std::string& final_path, const std::string& bytes, std::string* error,
                 bool* rename_failed) {
        std::string temp = temp_path_for(final_path);
        if (!fs->write_new_file(temp, bytes, error)) {
            fs->remove(temp);   // the real file system leaves nothing; a test double may
            return false;
        }
        if (!fs->rename(temp, final_path, error)) {
            fs->remove(temp);
            *rename_failed = true;
            return false;
        }
        return true;
    }

    bool valid_entry_at(const std::string& path, const CacheKey& key) {
        auto bytes = fs->read_file(path);
        return bytes && decode_entry_checked(*bytes, key, nullptr).has_value();
    }
};

DiskCache::DiskCache(DiskCacheConfig config) : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.fs = config.fs ? config.fs : real_file_system();
    s.switched_on = config.enabled && !env::flag("CC1D_DISABLE_DISK_CACHE");
    s.always_compile = env::flag("CC1D_ALWAYS_COMPILE");
    if (!s.switched_on) {
        log::debug("disk cache switched off");
        s.user_root_usable = false;
        return;
    }
    s.root = without_trailing_slashes(config.root.empty() ? default_root() : config.root);
    std::string system = config.system_root;
    if (system.empty()) system = env::get("CC1D_SYSTEM_CACHE_DIR").value_or("");
    system = without_trailing_slashes(system);
    if (system != s.root) s.system_root = system;
    if (s.root.empty()) {
        s.user_root_usable = false;
        log::warn_once("cache-no-root", "no disk cache folder: set CC1D_CACHE_DIR, XDG_CACHE_HOME or HOME; "
                                        "kernels are compiled in memory only");
    }
}

DiskCache::~DiskCache() = default;

std::optional<std::string> DiskCache::load(const CacheKey& key, const EntryLocation& where) {
    State& s = *state_;
    if (!s.switched_on) return std::nullopt;
    if (s.always_compile) {
        log::debug("disk cache skipped (CC1D_ALWAYS_COMPILE): {}", key.hex());
        return std::nullopt;
    }
    if (s.user_root_usable) {
        if (auto payload = s.load_user(key, where)) return payload;
    }
    if (!s.system_root.empty()) {
        if (auto payload = s.load_system(key, where)) return payload;
    }
    log::debug("disk cache miss: {} ({}-{}, {})", key.hex(), where.backend, where.compiler, where.target);
    return std::nullopt;
}

bool DiskCache::store(const CacheKey& key, const EntryLocation& where, const std::string& payload,
                      const EntryInfo& info) {
    State& s = *state_;
    if (!s.switched_on || !s.user_root_usable) return false;
    std::string folder = entry_folder(s.root, where, key);
    std::string error;
    if (!s.fs->create_directories(folder, &error)) {
        s.give_up_user_root(error);
        return false;
    }
    std::string path = folder + "/" + key.hex() + entry_extension;
    bool rename_failed = false;
    if (!s.publish(path, encode_entry(key, payload), &error, &rename_failed)) {
        // Losing a race to another writer of the same key is success: its entry is as good.
        if (rename_failed && s.valid_entry_at(path, key)) return true;
        s.give_up_user_root(error);
        return false;
    }

    Sidecar sidecar;
    sidecar.key = key.hex();
    sidecar.variant = info.variant;
    sidecar.options = info.options;
    sidecar.source_name = info.source_name;
    sidecar.library_version = info.library_version.empty() ? version() : info.library_version;
    sidecar.backend = where.backend;
    sidecar.compiler = where.compiler;
    sidecar.target = where.target;
    sidecar.payload_size = payload.size();
    sidecar.format_version = cache_format_version;
    sidecar.created = utc_timestamp_now();
    // The sidecar only describes the entry; failing to write it costs a name in listings,
    // not the entry, so it warns without turning the cache off.
    bool ignored = false;
    if (!s.publish(sidecar_path_of(path), to_json(sidecar), &error, &ignored))
        log::warn_once("cache-sidecar:" + s.root, fmt::format("cannot write a disk cache sidecar ({})", error));
    log::debug("disk cache stored: {} ({} bytes)", path, payload.size());
    return true;
}

void DiskCache::remove(const CacheKey& key, const EntryLocation& where) {
    State& s = *state_;
    if (!s.switched_on || !s.user_root_usable) return;
    std::string path = s.path_below(s.root, key, where);
    s.fs->remove(path);
    s.fs->remove(sidecar_path_of(path));
    log::debug("disk cache entry removed: {}", path);
}

bool DiskCache::enabled() const { return state_->switched_on && state_->user_root_usable; }

const std::string& DiskCache::root() const {
    static const std::string none;
    return enabled() ? state_->root : none;
}

std::string DiskCache::entry_path(const CacheKey& key, const EntryLocation& where) const {
    if (state_->root.empty()) return "";
    return state_->path_below(state_->root, key, where);
}

}  // namespace cc1d::cache
