#include "rtc/target_name.hpp"

#include <cctype>

namespace cc1d::rtc {

int parse_sm_target(const std::string& target) {
    if (target.rfind("sm_", 0) != 0 || target.size() < 5) return 0;
    int value = 0;
    std::size_t i = 3;
    for (; i < target.size() && std::isdigit(static_cast<unsigned char>(target[i])); ++i) value = value * 10 + (target[i] - '0');
    if (i == 3) return 0;
    if (i < target.size() && !(i + 1 == target.size() && (target[i] == 'a' || target[i] == 'f'))) return 0;
    return value;
}

bool is_gfx_target(const std::string& target) {
    if (target.rfind("gfx", 0) != 0 || target.size() < 6) return false;
    for (char c : target)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '+' || c == '-')) return false;
    return true;
}

}  // namespace cc1d::rtc
