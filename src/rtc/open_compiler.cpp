#include "common/fail.hpp"
#include "rtc/compiler.hpp"
#include "rtc/target_name.hpp"

namespace cc1d::rtc {

std::unique_ptr<Compiler> open_compiler_for_target(const std::string& target) {
    if (parse_sm_target(target) > 0) return open_nvrtc();
    if (is_gfx_target(target)) return open_hiprtc();
    fail(ErrorCode::invalid_argument, "target '{}': expected sm_XY (NVIDIA) or gfxNNN[:feature±] (AMD)", target);
}

}  // namespace cc1d::rtc
