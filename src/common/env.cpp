#include "common/env.hpp"

#include <cstdlib>

namespace cc1d::env {

std::optional<std::string> get(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

bool flag(const char* name) {
    auto value = get(name);
    return value && (*value == "1" || *value == "true" || *value == "yes" || *value == "on");
}

}  // namespace cc1d::env
