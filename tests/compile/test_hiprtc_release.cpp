// The real HIPRTC's release and the targets it refuses, no GPU needed. Skipped where HIPRTC
// cannot be opened (required in CI, as for the compile matrix).
#include <doctest/doctest.h>

#include <cstdio>
#include <iostream>

#include "cc1d/cc1d.hpp"
#include "common/env.hpp"
#include "rtc/compiler.hpp"

using namespace cc1d;

TEST_CASE("HIPRTC: the ROCm release from the runtime beside it, gfx94x refused before 5.7 with an error, not a crash") {
    std::unique_ptr<rtc::Compiler> hiprtc;
    try {
        hiprtc = rtc::open_hiprtc();
    } catch (const std::exception& e) {
        if (env::flag("CI")) FAIL("HIPRTC is required in CI: " << e.what());
        std::cout << "SKIPPED: HIPRTC release: " << e.what() << "\n";
        return;
    }
    // hiprtcVersion alone says "9.0" for every ROCm up to 6.0; the cache keys and the
    // gfx94x check need the release ("hiprtc-5.2.21153" with Debian's packages).
    const std::string identity = hiprtc->identity();
    CAPTURE(identity);
    int major = 0, minor = 0, patch = 0;
    if (std::sscanf(identity.c_str(), "hiprtc-%d.%d.%d", &major, &minor, &patch) != 3) {
        if (env::flag("CI")) FAIL("CI's HIPRTC (Debian's ROCm 5) has the runtime beside it: its release must be known");
        std::cout << "SKIPPED: HIPRTC release unknown (a separate libhiprtc): " << identity << "\n";
        return;
    }
    CHECK(major >= 5);
    CHECK_FALSE(hiprtc->options("gfx90a").empty());
    if (major > 5 || (major == 5 && minor >= 7)) {
        CHECK_FALSE(hiprtc->options("gfx942").empty());
        return;
    }
    // Before 5.7, compiling for gfx94x aborts the process inside HIPRTC; cc1d refuses first.
    try {
        hiprtc->options("gfx942:sramecc+:xnack-");
        FAIL("gfx942 accepted by HIPRTC " << identity);
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::unsupported);
        CHECK(std::string(e.what()).find("ROCm 5.7 or newer") != std::string::npos);
    }
}
