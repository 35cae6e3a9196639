// Spellings of compile targets: "sm_90" (NVIDIA) and "gfx90a" / "gfx942:sramecc+:xnack-" (AMD).
#pragma once

#include <string>

namespace cc1d::rtc {

// 90 for "sm_90" (also "sm_90a" -> 90; the suffix is kept by callers), 0 when not sm_XY.
int parse_sm_target(const std::string& target);
// True for "gfx" followed by a processor name and optional ":feature+/-" suffixes.
bool is_gfx_target(const std::string& target);

}  // namespace cc1d::rtc
