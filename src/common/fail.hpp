// Builds an Error with fmt-formatted text, so call sites stay one line.
#pragma once

#include <fmt/format.h>

#include "cc1d/cc1d.hpp"

namespace cc1d {

template <typename... Args>
[[noreturn]] void fail(ErrorCode code, fmt::format_string<Args...> f, Args&&... args) {
    throw Error(code, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace cc1d
