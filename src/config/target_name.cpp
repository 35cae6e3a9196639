#include "config/target_name.hpp"

#include <regex>

namespace cc1d::config {

bool is_target_name(const std::string& target) {
    static const std::regex nvidia(R"(sm_[0-9]{2,3}[a-z]?)");
    static const std::regex amd(R"(gfx[0-9a-f]{3,4}(:[a-z_]+[+-])*)");
    return std::regex_match(target, nvidia) || std::regex_match(target, amd);
}

const char* target_name_expectation() {
    return "expected an NVIDIA target such as sm_80 or sm_90a, or an AMD target such as gfx90a or "
           "gfx942:sramecc+:xnack-";
}

}  // namespace cc1d::config
