// A runtime compiler's library (NVRTC, HIPRTC), opened once per process: the first
// caller opens it and resolves its functions; every later caller gets the same table,
// or the same error when that failed (named library, what was tried or what is missing).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "common/dynamic_library.hpp"
#include "common/fail.hpp"

namespace cc1d::rtc {

// Api: a struct with a `DynamicLibrary library` member and the function pointers.
// resolve(Api&) fills the pointers from api.library and returns false when one is
// missing; ready(Api&) runs once they are all there (versions, supported targets).
// One table per Api type: the statics below live in this template's instantiation.
template <typename Api, typename Resolve, typename Ready>
const Api& load_library_api(const char* name, const std::vector<std::string>& candidates, Resolve resolve, Ready ready) {
    static Api loaded;
    static std::string failure;
    static std::once_flag once;
    std::call_once(once, [&] {
        std::string why;
        loaded.library = DynamicLibrary::open_first(candidates, &why);
        if (!loaded.library.loaded()) {
            failure = std::string(name) + " library not found: " + why;
            return;
        }
        if (!resolve(loaded)) {
            failure = std::string(name) + " library " + loaded.library.path() + " lacks a required function";
            loaded.library = DynamicLibrary();
            return;
        }
        ready(loaded);
    });
    if (!loaded.library.loaded()) fail(ErrorCode::backend_unavailable, "{}", failure);
    return loaded;
}

}  // namespace cc1d::rtc
