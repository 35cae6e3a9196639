// The file operations the disk cache uses, behind an interface, so tests can make any
// one of them fail (tests run as root, where permissions do not stop writes).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cc1d::cache {

class FileSystem {
public:
    virtual ~FileSystem() = default;
    // mkdir -p; true when `path` is a directory afterwards.
    virtual bool create_directories(const std::string& path, std::string* error) = 0;
    // The whole file, or nullopt when it is missing or unreadable (never locks).
    virtual std::optional<std::string> read_file(const std::string& path) = 0;
    // Creates `path` (which must not exist), writes `bytes` and flushes them to disk;
    // false (with error) on failure, leaving no file behind.
    virtual bool write_new_file(const std::string& path, const std::string& bytes, std::string* error) = 0;
    // Atomically replaces `to` (POSIX rename), then flushes the folder.
    virtual bool rename(const std::string& from, const std::string& to, std::string* error) = 0;
    // True when the file was removed.
    virtual bool remove(const std::string& path) = 0;
    virtual bool exists(const std::string& path) = 0;
};

std::shared_ptr<FileSystem> real_file_system();

}  // namespace cc1d::cache
