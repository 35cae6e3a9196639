// The options NVRTC compiles with, as a function of the target and of the NVRTC version
// alone, so the choice is the same in every process (it enters the cache key) and unit
// tests can check it without the library.
#pragma once

#include <string>
#include <vector>

namespace cc1d::rtc {

struct NvrtcVersion {
    int major = 0, minor = 0;
};

// -minimal leaves texture, surface, device-runtime and driver-API declarations out of
// NVRTC's built-in header. The generated sources use none of them, so only the front
// end gets shorter (about 6 ms of its 20-30 ms); the CUBIN stays byte-identical (NVRTC
// 13.0, every variant of configs/precompile/mamba.json, sm_80 and sm_90). NVRTC 12.4
// added the option, and older versions fail a compile given an option they do not know.
inline bool nvrtc_accepts_minimal(NvrtcVersion version) {
    return version.major > 12 || (version.major == 12 && version.minor >= 4);
}

// --split-compile=N lets NVRTC's optimizer (most of a cold compile, docs/perf.md entry
// 29) work on a module's kernels on up to N threads. It stays out of nvrtc_options, and so
// out of the cache key: for the modules that ask for it (codegen's RenderedSource::
// split_compile) every kernel's machine code is the same with and without it (NVRTC 13.0,
// every variant of configs/precompile/mamba.json, sm_80 and sm_90; entry 122). Given only
// to NVRTC 12.4 and later (the floor -minimal has: older releases were not tried); the
// compiler retries without it if refused.
inline bool nvrtc_accepts_split_compile(NvrtcVersion version) { return nvrtc_accepts_minimal(version); }
inline std::string nvrtc_split_compile_option(NvrtcVersion version, unsigned threads) {
    if (threads <= 1 || !nvrtc_accepts_split_compile(version)) return {};
    return "--split-compile=" + std::to_string(threads);
}

// `arch_option` is "-arch=sm_XY" or "-arch=compute_XY". Fast math stays off so results
// follow SEMANTICS.md's tolerances; the approximate instructions SiLU uses (tanh.approx,
// ex2.approx) are chosen explicitly in the prelude and activation.h.
inline std::vector<std::string> nvrtc_options(const std::string& arch_option, NvrtcVersion version) {
    std::vector<std::string> options = {arch_option, "--std=c++17"};
    if (nvrtc_accepts_minimal(version)) options.emplace_back("-minimal");
    return options;
}

}  // namespace cc1d::rtc
