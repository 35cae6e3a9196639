// The file operations the disk cache uses, behind an interface, so tests can make any
// one of them fail (tests run as root, where permissions do not stop writes).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cc1d::cache {

class FileSystem {
public:
    virtual ~FileSystem() = default;
    virtual bool create_directories(const std::string& path, std::string* error) = 0;
    virtual std::optional<std::string> read_file(const std::string& path) = 0;
    // Writes `bytes` to a new file at `path` and flushes it; false (with error) on failure.
    virtual bool write_new_file(const std::string& path, const std::string& bytes, std::string* error) = 0;
    virtual bool rename(const std::string& from, const std::string& to, std::string* error) = 0;
    virtual bool remove(const std::string& path) = 0;
    virtual bool exists(const std::string& path) = 0;
};

std::shared_ptr<FileSystem> real_file_system();

}  // namespace cc1d::cache
