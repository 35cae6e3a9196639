// The NVRTC option list: what every version gets, and -minimal only where NVRTC knows it
// (12.4 on), since an older NVRTC fails a compile given an option it does not know.
#include <doctest/doctest.h>

#include <algorithm>

#include "rtc/nvrtc_options.hpp"

using namespace cc1d::rtc;

namespace {

bool has_minimal(const std::vector<std::string>& options) {
    return std::find(options.begin(), options.end(), "-minimal") != options.end();
}

}  // namespace

TEST_CASE("NVRTC options: target and dialect first, for every version") {
    for (NvrtcVersion version : {NvrtcVersion{11, 8}, NvrtcVersion{12, 3}, NvrtcVersion{12, 4}, NvrtcVersion{13, 0}}) {
        const auto options = nvrtc_options("-arch=sm_90", version);
        REQUIRE(options.size() >= 2);
        CHECK(options[0] == "-arch=sm_90");
        CHECK(options[1] == "--std=c++17");
    }
    CHECK(nvrtc_options("-arch=compute_120", {13, 0})[0] == "-arch=compute_120");
}

TEST_CASE("NVRTC options: -minimal from 12.4 on, never before") {
    CHECK_FALSE(has_minimal(nvrtc_options("-arch=sm_80", {11, 8})));
    CHECK_FALSE(has_minimal(nvrtc_options("-arch=sm_80", {12, 0})));
    CHECK_FALSE(has_minimal(nvrtc_options("-arch=sm_80", {12, 3})));
    CHECK(has_minimal(nvrtc_options("-arch=sm_80", {12, 4})));
    CHECK(has_minimal(nvrtc_options("-arch=sm_80", {12, 9})));
    CHECK(has_minimal(nvrtc_options("-arch=sm_80", {13, 0})));
    CHECK(has_minimal(nvrtc_options("-arch=sm_80", {14, 0})));
}

TEST_CASE("NVRTC options: the same version always gets the same list (it is part of the cache key)") {
    CHECK(nvrtc_options("-arch=sm_90", {13, 0}) == nvrtc_options("-arch=sm_90", {13, 0}));
    CHECK(nvrtc_options("-arch=sm_90", {12, 3}) != nvrtc_options("-arch=sm_90", {12, 4}));
}

TEST_CASE("NVRTC split compile: from 12.4 on, for more than one thread, never in the option list") {
    CHECK(nvrtc_split_compile_option({13, 0}, 2) == "--split-compile=2");
    CHECK(nvrtc_split_compile_option({12, 4}, 3) == "--split-compile=3");
    CHECK(nvrtc_split_compile_option({13, 0}, 1).empty());
    CHECK(nvrtc_split_compile_option({13, 0}, 0).empty());
    CHECK(nvrtc_split_compile_option({12, 3}, 2).empty());
    CHECK(nvrtc_split_compile_option({11, 8}, 4).empty());
    for (const auto& option : nvrtc_options("-arch=sm_90", {13, 0})) CHECK(option.find("split") == std::string::npos);
}
