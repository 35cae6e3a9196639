// A vendor library opened with dlopen, never linked: one build serves NVIDIA hosts,
// AMD hosts and hosts with no GPU at all.
#pragma once

#include <string>
#include <vector>

namespace cc1d {

class DynamicLibrary {
public:
    // Tries each candidate name/path in order; `error` lists what was tried when none opens.
    static DynamicLibrary open_first(const std::vector<std::string>& candidates, std::string* error);
    DynamicLibrary() = default;
    DynamicLibrary(DynamicLibrary&& other) noexcept;
    DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
    DynamicLibrary(const DynamicLibrary&) = delete;
    DynamicLibrary& operator=(const DynamicLibrary&) = delete;
    ~DynamicLibrary();

    bool loaded() const { return handle_ != nullptr; }
    const std::string& path() const { return path_; }
    void* symbol(const char* name) const;   // null when absent

    // Resolves `name` into `fn`; false when absent.
    template <typename Fn>
    bool resolve(Fn& fn, const char* name) const {
        fn = reinterpret_cast<Fn>(symbol(name));
        return fn != nullptr;
    }

private:
    void* handle_ = nullptr;
    std::string path_;
};

}  // namespace cc1d
