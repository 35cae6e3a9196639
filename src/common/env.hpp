// Environment knobs, read in one place so their names are written once.
#pragma once

#include <optional>
#include <string>

namespace cc1d::env {

std::optional<std::string> get(const char* name);   // unset or empty: nullopt
bool flag(const char* name);                        // "1", "true", "yes", "on"

}  // namespace cc1d::env
