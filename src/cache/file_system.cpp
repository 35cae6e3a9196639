// The real file system: plain POSIX calls, so that every step of publishing an entry
// (write, fsync, close, rename) is checked and none of them is buffered away.
#include "cache/file_system.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cc1d::cache {
namespace {

std::string describe(const char* what, const std::string& path, int error_number) {
    return std::string(what) + " " + path + ": " + std::strerror(error_number);
}

void set(std::string* error, std::string text) {
    if (error) *error = std::move(text);
}

bool is_directory(const std::string& path) {
    struct stat info;
    return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool make_one_directory(const std::string& path, std::string* error) {
    if (::mkdir(path.c_str(), 0777) == 0) return true;   // the umask decides sharing
    int saved = errno;
    // Another process may have made it a moment ago; only a directory will do.
    if (saved == EEXIST && is_directory(path)) return true;
    if (saved == EEXIST) set(error, "cannot create folder " + path + ": a file of that name is in the way");
    else set(error, describe("cannot create folder", path, saved));
    return false;
}

bool write_all(int fd, const std::string& bytes) {
    const char* data = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        ssize_t written = ::write(fd, data, left);
        if (written < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += written;
        left -= static_cast<std::size_t>(written);
    }
    return true;
}

// After a rename the new name lives in the folder's data; flushing the folder makes it
// survive a crash. Best effort: the entry is already correct without it.
void sync_parent_folder(const std::string& path) {
    auto slash = path.find_last_of('/');
    std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)::fsync(fd);
    ::close(fd);
}

class RealFileSystem final : public FileSystem {
public:
    bool create_directories(const std::string& path, std::string* error) override {
        if (path.empty()) {
            set(error, "cannot create a folder with an empty name");
            return false;
        }
        if (is_directory(path)) return true;
        // Each prefix ending before a '/', then the whole path.
        for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
            std::string prefix = path.substr(0, slash);
            if (prefix.back() == '/' || is_directory(prefix)) continue;
            if (!make_one_directory(prefix, error)) return false;
        }
        if (path.back() == '/') return is_directory(path) || make_one_directory(path, error);
        return make_one_directory(path, error);
    }

    std::optional<std::string> read_file(const std::string& path) override {
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return std::nullopt;
        std::string bytes;
        struct stat info;
        if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) bytes.reserve(static_cast<std::size_t>(info.st_size));
        char buffer[1 << 16];
        for (;;) {
            ssize_t got = ::read(fd, buffer, sizeof buffer);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) {
                ::close(fd);
                return std::nullopt;
            }
            if (got == 0) break;
            bytes.append(buffer, static_cast<std::size_t>(got));
        }
        ::close(fd);
        return bytes;
    }

    bool write_new_file(const std::string& path, const std::string& bytes, std::string* error) override {
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
            set(error, describe("cannot create", path, errno));
            return false;
        }
        const char* failed = nullptr;
        if (!write_all(fd, bytes)) failed = "cannot write";
        else if (::fsync(fd) != 0) failed = "cannot flush";
        int saved = errno;
        // close() reports delayed write errors on some file systems (NFS).
        if (::close(fd) != 0 && !failed) {
            failed = "cannot close";
            saved = errno;
        }
        if (!failed) return true;
        set(error, describe(failed, path, saved));
        ::unlink(path.c_str());
        return false;
    }

    bool rename(const std::string& from, const std::string& to, std::string* error) override {
        if (::rename(from.c_str(), to.c_str()) != 0) {
            set(error, describe("cannot rename", from, errno) + " (to " + to + ")");
            return false;
        }
        sync_parent_folder(to);
        return true;
    }

    bool remove(const std::string& path) override { return ::unlink(path.c_str()) == 0; }

    bool exists(const std::string& path) override {
        struct stat info;
        return ::stat(path.c_str(), &info) == 0;
    }
};

}  // namespace

std::shared_ptr<FileSystem> real_file_system() {
    static const std::shared_ptr<FileSystem> instance = std::make_shared<RealFileSystem>();
    return instance;
}

}  // namespace cc1d::cache
