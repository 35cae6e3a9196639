// Spelling of compile targets as the tools accept them: NVIDIA "sm_80", "sm_90a";
// AMD "gfx90a", "gfx942" or a full target id "gfx942:sramecc+:xnack-". Checked up front
// so a typo is a config error (exit 2), not hundreds of failed compiles.
#pragma once

#include <string>

namespace cc1d::config {

bool is_target_name(const std::string& target);
// What a target must look like, for error messages.
const char* target_name_expectation();

}  // namespace cc1d::config
