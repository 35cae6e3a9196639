// The real NVRTC's option list and its phase-timing knob, no GPU needed. Skipped where
// NVRTC cannot be opened (required in CI, as for the compile matrix).
#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "codegen/render.hpp"
#include "common/env.hpp"
#include "rtc/compiler.hpp"
#include "rtc/nvrtc_options.hpp"
#include "variant/variant.hpp"

using namespace cc1d;

namespace {

std::unique_ptr<rtc::Compiler> open_nvrtc_or_skip() {
    try {
        return rtc::open_nvrtc();
    } catch (const std::exception& e) {
        if (env::flag("CI")) FAIL("NVRTC is required in CI: " << e.what());
        std::cout << "SKIPPED: NVRTC options: " << e.what() << "\n";
        return nullptr;
    }
}

// "nvrtc-13.0" -> {13, 0}.
rtc::NvrtcVersion version_of(const std::string& identity) {
    rtc::NvrtcVersion version;
    REQUIRE(std::sscanf(identity.c_str(), "nvrtc-%d.%d", &version.major, &version.minor) == 2);
    return version;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

TEST_CASE("NVRTC compiles with the option list of its version") {
    auto compiler = open_nvrtc_or_skip();
    if (!compiler) return;
    const auto version = version_of(compiler->identity());
    CHECK(compiler->options("sm_90") == rtc::nvrtc_options("-arch=sm_90", version));
}

TEST_CASE("CC1D_NVRTC_TIME: NVRTC writes phase times, and the options (the cache key) stay the same") {
    auto compiler = open_nvrtc_or_skip();
    if (!compiler) return;
    const Variant variant = Variant::parse("op=update,width=4,x=fp32,weight=fp32");
    const auto source = codegen::render_source(variant, "cuda");
    const std::string file = "/tmp/cc1d-nvrtc-time-" + std::to_string(getpid()) + ".csv";
    std::remove(file.c_str());

    setenv("CC1D_NVRTC_TIME", file.c_str(), 1);
    const auto timed = compiler->compile({source.text, source.name, "sm_90"});
    unsetenv("CC1D_NVRTC_TIME");
    const auto plain = compiler->compile({source.text, source.name, "sm_90"});

    REQUIRE(timed.ok);
    REQUIRE(plain.ok);
    CHECK(timed.options == plain.options);
    CHECK(timed.code_object == plain.code_object);
    const std::string table = read_file(file);
    CHECK(table.find(source.name) != std::string::npos);
    CHECK(table.find("Frontend") != std::string::npos);
    std::remove(file.c_str());
}
