// HIPRTC: HIP C++ -> a code object for an explicit --offload-arch (the full target id,
// e.g. gfx942:sramecc+:xnack-). Works without an AMD GPU, which is how every AMD kernel
// is compile-checked on hosts that have none.
#include <fmt/format.h>

#include <chrono>
#include <mutex>

#include "common/dynamic_library.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"
#include "rtc/compiler.hpp"
#include "rtc/library_api.hpp"
#include "rtc/option_text.hpp"
#include "rtc/target_name.hpp"

#if CC1D_HAVE_HIP
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hiprtc.h>
#endif

namespace cc1d::rtc {

#if CC1D_HAVE_HIP
namespace {

struct HiprtcApi {
    DynamicLibrary library;
    decltype(&hiprtcVersion) version = nullptr;
    decltype(&hiprtcGetErrorString) error_string = nullptr;
    decltype(&hiprtcCreateProgram) create = nullptr;
    decltype(&hiprtcDestroyProgram) destroy = nullptr;
    decltype(&hiprtcCompileProgram) compile = nullptr;
    decltype(&hiprtcGetProgramLogSize) log_size = nullptr;
    decltype(&hiprtcGetProgramLog) log = nullptr;
    decltype(&hiprtcGetCodeSize) code_size = nullptr;
    decltype(&hiprtcGetCode) code = nullptr;
    // hipRuntimeGetVersion where the same library has it (ROCm 5's libamdhip64 holds
    // HIPRTC and the runtime; ROCm 6's libhiprtc holds HIPRTC alone).
    int (*runtime_version)(int*) = nullptr;
    int major = 0, minor = 0;   // the ROCm release, where known (release_known)
    std::string release;        // "5.2.21153", or hiprtcVersion's "9.0" where nothing better is known
    bool release_known = false;
};

// ROCm 6 ships libhiprtc separately; ROCm 5 (Debian's packages) keeps it inside libamdhip64.
std::vector<std::string> library_candidates() {
    std::vector<std::string> names;
    if (auto path = env::get("CC1D_HIPRTC_LIBRARY")) names.push_back(*path);
    for (const char* n : {"libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so", "libamdhip64.so.6", "libamdhip64.so.5",
                          "libamdhip64.so"})
        names.emplace_back(n);
    if (auto rocm = env::get("ROCM_PATH")) names.push_back(*rocm + "/lib/libhiprtc.so");
    names.emplace_back("/opt/rocm/lib/libhiprtc.so");
    return names;
}

const HiprtcApi& api() {
    return load_library_api<HiprtcApi>(
        "HIPRTC", library_candidates(),
        [](HiprtcApi& api) {
            const auto& lib = api.library;
            lib.resolve(api.runtime_version, "hipRuntimeGetVersion");   // optional
            return lib.resolve(api.version, "hiprtcVersion") && lib.resolve(api.error_string, "hiprtcGetErrorString") &&
                   lib.resolve(api.create, "hiprtcCreateProgram") && lib.resolve(api.destroy, "hiprtcDestroyProgram") &&
                   lib.resolve(api.compile, "hiprtcCompileProgram") && lib.resolve(api.log_size, "hiprtcGetProgramLogSize") &&
                   lib.resolve(api.log, "hiprtcGetProgramLog") && lib.resolve(api.code_size, "hiprtcGetCodeSize") &&
                   lib.resolve(api.code, "hiprtcGetCode");
        },
        [](HiprtcApi& api) {
            // HIPRTC's own version is no release number: through ROCm 6.0 at least,
            // hiprtcVersion reports a fixed 9.0 (the CUDA version it once mirrored). The
            // runtime beside it knows the release: HIP_VERSION = major * 10^7 + minor *
            // 10^5 + patch (50221153 for Debian's 5.2.3).
            int hiprtc_major = 0, hiprtc_minor = 0;
            api.version(&hiprtc_major, &hiprtc_minor);
            api.release = fmt::format("{}.{}", hiprtc_major, hiprtc_minor);
            int runtime = 0;
            if (api.runtime_version && api.runtime_version(&runtime) == 0 && runtime > 0) {
                api.major = runtime / 10000000;
                api.minor = runtime / 100000 % 100;
                api.release = fmt::format("{}.{}.{}", api.major, api.minor, runtime % 100000);
                api.release_known = true;
            }
        });
}

class HiprtcCompiler final : public Compiler {
public:
    HiprtcCompiler() : hiprtc_(api()) {}

    std::string backend() const override { return "hip"; }
    std::string identity() override { return "hiprtc-" + hiprtc_.release; }
    bool accepts_target(const std::string& target) const override { return is_gfx_target(target); }

    std::vector<std::string> options(const std::string& target) override {
        if (!is_gfx_target(target))
            fail(ErrorCode::invalid_argument, "target '{}': expected a gfx target id for HIPRTC", target);
        // HIPRTC before ROCm 5.7 aborts the whole process on gfx94x (MI300) instead of
        // reporting an error, so refuse those targets up front. A library without the
        // runtime beside it (release unknown) is a separate libhiprtc, as ROCm 6 ships it.
        const bool before_5_7 = hiprtc_.release_known && (hiprtc_.major < 5 || (hiprtc_.major == 5 && hiprtc_.minor < 7));
        if (before_5_7 && target.rfind("gfx94", 0) == 0)
            fail(ErrorCode::unsupported, "target '{}': this HIPRTC (ROCm {}) cannot compile for gfx94x; ROCm 5.7 or newer is needed",
                 target, hiprtc_.release);
        return {"--offload-arch=" + target, "-O3", "-std=c++17"};
    }

    CompileResult compile(const CompileRequest& request) override {
        const auto start = std::chrono::steady_clock::now();
        CompileResult result;
        const auto opts = options(request.target);
        std::vector<const char*> argv = option_pointers(opts);
        result.options = join_options(opts);
        // Debian's HIPRTC 5.2 crashes inside libamdhip64 when two threads compile at once
        // (cc1d-precompile --jobs 2 for a gfx target), so this process runs one HIPRTC
        // program at a time; NVRTC compiles stay parallel.
        static std::mutex one_program_at_a_time;
        const std::lock_guard<std::mutex> lock(one_program_at_a_time);
        hiprtcProgram program = nullptr;
        hiprtcResult status = hiprtc_.create(&program, request.source.c_str(), request.source_name.c_str(), 0, nullptr, nullptr);
        if (status != HIPRTC_SUCCESS)
            fail(ErrorCode::compile_failed, "hiprtcCreateProgram failed for {}: {}", request.source_name, hiprtc_.error_string(status));
        status = hiprtc_.compile(program, static_cast<int>(argv.size()), argv.data());
        std::size_t log_size = 0;
        hiprtc_.log_size(program, &log_size);
        result.log.resize(log_size);
        if (log_size > 0) hiprtc_.log(program, result.log.data());
        trim_log(result.log);
        if (status == HIPRTC_SUCCESS) {
            std::size_t size = 0;
            hiprtcResult got = hiprtc_.code_size(program, &size);
            result.code_object.resize(size);
            if (got == HIPRTC_SUCCESS) got = hiprtc_.code(program, result.code_object.data());
            result.ok = got == HIPRTC_SUCCESS && size > 0;
            if (!result.ok) result.log += fmt::format("\nreading the code object failed: {}", hiprtc_.error_string(got));
        } else if (result.log.empty()) {
            result.log = hiprtc_.error_string(status);
        }
        hiprtc_.destroy(&program);
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
    }

private:
    const HiprtcApi& hiprtc_;
};

}  // namespace

std::unique_ptr<Compiler> open_hiprtc() { return std::make_unique<HiprtcCompiler>(); }

#else

std::unique_ptr<Compiler> open_hiprtc() {
    fail(ErrorCode::backend_unavailable, "this build of cc1d has no AMD backend (HIP headers were not found at build time)");
}

#endif

}  // namespace cc1d::rtc
