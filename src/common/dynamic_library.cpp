#include "common/dynamic_library.hpp"

#include <dlfcn.h>

#include <utility>

namespace cc1d {

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates, std::string* error) {
    DynamicLibrary library;
    std::string tried;
    for (const auto& name : candidates) {
        // RTLD_LOCAL: the vendor's symbols stay out of the global namespace, so two
        // versions in one process (ours and PyTorch's, say) do not collide.
        if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            library.handle_ = handle;
            library.path_ = name;
            return library;
        }
        const char* why = dlerror();
        tried += (tried.empty() ? "" : "; ") + name + (why ? std::string(" (") + why + ")" : "");
    }
    if (error) *error = "tried " + tried;
    return library;
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
    std::swap(handle_, other.handle_);
    std::swap(path_, other.path_);
    return *this;
}

// Vendor libraries stay loaded for the life of the process: their own teardown at exit
// can run after ours, and unloading them early breaks that.
DynamicLibrary::~DynamicLibrary() = default;

void* DynamicLibrary::symbol(const char* name) const {
    return handle_ ? dlsym(handle_, name) : nullptr;
}

}  // namespace cc1d
