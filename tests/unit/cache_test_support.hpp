// Helpers shared by the cache tests: temporary folders, stderr capture (to count
// warnings), a FileSystem that fails chosen operations, and sample keys.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/disk_cache.hpp"
#include "cache/file_system.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "support/scoped_env.hpp"

namespace cc1d::cache::test {

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it at scope exit.
class TempDir {
public:
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base && *base ? base : "/tmp") + "/cc1d-cache-test-XXXXXX";
        std::vector<char> name(pattern.begin(), pattern.end());
        name.push_back('\0');
        if (!::mkdtemp(name.data())) throw std::runtime_error("mkdtemp failed");
        path_ = name.data();
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string sub(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Redirects this process's stderr into a file until text() is called; the library
// writes each log line with one fprintf to stderr.
class StderrCapture {
public:
    StderrCapture() {
        std::fflush(stderr);
        saved_ = ::dup(2);
        int fd = ::open(file_.sub("stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 2);
        ::close(fd);
        previous_level_ = log::threshold();
        log::set_threshold(log::Level::warn);
    }
    ~StderrCapture() { restore(); }
    std::string text() {
        restore();
        std::ifstream in(file_.sub("stderr"));
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }

private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
        saved_ = -1;
        log::set_threshold(previous_level_);
    }
    TempDir file_;
    int saved_ = -1;
    log::Level previous_level_ = log::Level::warn;
};

inline int count_of(const std::string& text, const std::string& what) {
    int count = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
    return count;
}

// Wraps the real file system; each switch makes one operation fail.
class FaultyFileSystem final : public FileSystem {
public:
    std::atomic<bool> fail_create_directories{false};
    std::atomic<bool> fail_write{false};           // like a full disk: writes half, then fails
    std::atomic<bool> fail_rename{false};
    std::function<void(const std::string& to)> before_rename;   // runs before each rename
    std::atomic<int> writes{0}, renames{0};
    // Every written path and every rename, in order (for single-threaded tests).
    std::vector<std::string> written;
    std::vector<std::pair<std::string, std::string>> renamed;

    bool create_directories(const std::string& path, std::string* error) override {
        if (fail_create_directories) {
            if (error) *error = "cannot create folder " + path + ": Read-only file system";
            return false;
        }
        return real_->create_directories(path, error);
    }
    std::optional<std::string> read_file(const std::string& path) override { return real_->read_file(path); }
    bool write_new_file(const std::string& path, const std::string& bytes, std::string* error) override {
        ++writes;
        written.push_back(path);
        if (fail_write) {
            // Leave a partial file behind, as a crashed write could: the cache must clean it.
            std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
            if (error) *error = "cannot write " + path + ": No space left on device";
            return false;
        }
        return real_->write_new_file(path, bytes, error);
    }
    bool rename(const std::string& from, const std::string& to, std::string* error) override {
        ++renames;
        renamed.emplace_back(from, to);
        if (before_rename) before_rename(to);
        if (fail_rename) {
            if (error) *error = "cannot rename " + from + ": Input/output error";
            return false;
        }
        return real_->rename(from, to, error);
    }
    bool remove(const std::string& path) override { return real_->remove(path); }
    bool exists(const std::string& path) override { return real_->exists(path); }

private:
    std::shared_ptr<FileSystem> real_ = real_file_system();
};

inline KeyInputs sample_inputs(const std::string& variant = "op=fwd,layout=channel_first,width=4") {
    KeyInputs in;
    in.variant = variant;
    in.source = "extern \"C\" __global__ void k() {}  // " + variant;
    in.options = "--std=c++17 -arch=sm_90";
    in.compiler = "nvrtc-13.0";
    in.target = "sm_90";
    in.library_version = CC1D_VERSION_STRING;
    in.format_version = cache_format_version;
    return in;
}

inline EntryLocation sample_location() { return EntryLocation{"cuda", "nvrtc-13.0", "sm_90"}; }

inline EntryInfo sample_info(const std::string& variant = "op=fwd,layout=channel_first,width=4") {
    return EntryInfo{variant, "--std=c++17 -arch=sm_90", "k.cu", CC1D_VERSION_STRING};
}

// A payload that differs per key and is large enough to cross buffer boundaries.
inline std::string sample_payload(const std::string& seed, std::size_t size = 100000) {
    std::string payload(size, '\0');
    std::uint64_t state = std::hash<std::string>{}(seed) | 1;
    for (auto& c : payload) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        c = static_cast<char>(state);
    }
    return payload;
}

inline std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Every file below `root` whose name marks it as a temp file.
inline std::vector<std::string> temp_files_under(const std::string& root) {
    std::vector<std::string> found;
    std::error_code error;
    for (std::filesystem::recursive_directory_iterator it(root, error), end; !error && it != end; it.increment(error))
        if (it->path().filename().string().find(".tmp") != std::string::npos) found.push_back(it->path().string());
    return found;
}

inline std::size_t files_under(const std::string& root) {
    std::size_t count = 0;
    std::error_code error;
    for (std::filesystem::recursive_directory_iterator it(root, error), end; !error && it != end; it.increment(error))
        if (it->is_regular_file()) ++count;
    return count;
}

}  // namespace cc1d::cache::test

namespace cc1d::cache::test {

using cc1d::test::ScopedEnv;

}  // namespace cc1d::cache::test

namespace cc1d::cache::test {

// The cache's knobs unset for one scope, so a developer's environment cannot change
// what a test sees.
struct CleanCacheEnv {
    ScopedEnv disable{"CC1D_DISABLE_DISK_CACHE", nullptr};
    ScopedEnv always{"CC1D_ALWAYS_COMPILE", nullptr};
    ScopedEnv system{"CC1D_SYSTEM_CACHE_DIR", nullptr};
    ScopedEnv dir{"CC1D_CACHE_DIR", nullptr};
};

inline DiskCacheConfig config_at(const std::string& root, std::shared_ptr<FileSystem> fs = nullptr) {
    DiskCacheConfig config;
    config.root = root;
    config.fs = std::move(fs);
    return config;
}

}  // namespace cc1d::cache::test
