// NVRTC: CUDA C++ -> CUBIN for the device's sm_XY, or PTX when this NVRTC does not
// know the architecture yet (the driver then finishes the job).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <tuple>
#include <utility>

#include "common/dynamic_library.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"
#include "rtc/compiler.hpp"
#include "rtc/library_api.hpp"
#include "rtc/nvrtc_options.hpp"
#include "rtc/option_text.hpp"
#include "rtc/target_name.hpp"

#if CC1D_HAVE_CUDA
#include <nvrtc.h>
#endif

namespace cc1d::rtc {

#if CC1D_HAVE_CUDA
namespace {

struct NvrtcApi {
    DynamicLibrary library;
    decltype(&nvrtcVersion) version = nullptr;
    decltype(&nvrtcGetErrorString) error_string = nullptr;
    decltype(&nvrtcCreateProgram) create = nullptr;
    decltype(&nvrtcDestroyProgram) destroy = nullptr;
    decltype(&nvrtcCompileProgram) compile = nullptr;
    decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
    decltype(&nvrtcGetProgramLog) log = nullptr;
    decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
    decltype(&nvrtcGetCUBIN) cubin = nullptr;
    decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
    decltype(&nvrtcGetPTX) ptx = nullptr;
    decltype(&nvrtcGetNumSupportedArchs) num_archs = nullptr;
    decltype(&nvrtcGetSupportedArchs) archs = nullptr;
    int major = 0, minor = 0;
    std::vector<int> supported;   // e.g. 75, 80, ..., 120
};

std::vector<std::string> library_candidates() {
    std::vector<std::string> names;
    if (auto path = env::get("CC1D_NVRTC_LIBRARY")) names.push_back(*path);
    for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) names.emplace_back(n);
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (auto home = env::get(var)) names.push_back(*home + "/lib64/libnvrtc.so");
    names.emplace_back("/usr/local/cuda/lib64/libnvrtc.so");
    return names;
}

const NvrtcApi& api() {
    return load_library_api<NvrtcApi>(
        "NVRTC", library_candidates(),
        [](NvrtcApi& api) {
            const auto& lib = api.library;
            return lib.resolve(api.version, "nvrtcVersion") && lib.resolve(api.error_string, "nvrtcGetErrorString") &&
                   lib.resolve(api.create, "nvrtcCreateProgram") && lib.resolve(api.destroy, "nvrtcDestroyProgram") &&
                   lib.resolve(api.compile, "nvrtcCompileProgram") && lib.resolve(api.log_size, "nvrtcGetProgramLogSize") &&
                   lib.resolve(api.log, "nvrtcGetProgramLog") && lib.resolve(api.cubin_size, "nvrtcGetCUBINSize") &&
                   lib.resolve(api.cubin, "nvrtcGetCUBIN") && lib.resolve(api.ptx_size, "nvrtcGetPTXSize") &&
                   lib.resolve(api.ptx, "nvrtcGetPTX") && lib.resolve(api.num_archs, "nvrtcGetNumSupportedArchs") &&
                   lib.resolve(api.archs, "nvrtcGetSupportedArchs");
        },
        [](NvrtcApi& api) {
            api.version(&api.major, &api.minor);
            int count = 0;
            if (api.num_archs(&count) == NVRTC_SUCCESS && count > 0) {
                api.supported.resize(count);
                api.archs(api.supported.data());
            }
        });
}

// What to ask NVRTC for: CUBIN for a known sm_XY, else PTX for the newest it knows.
struct ArchChoice {
    std::string arch_option;
    bool cubin = true;
};

ArchChoice choose_arch(const NvrtcApi& nvrtc, int sm) {
    const auto& s = nvrtc.supported;
    if (s.empty() || std::find(s.begin(), s.end(), sm) != s.end()) return {fmt::format("-arch=sm_{}", sm), true};
    if (sm > s.back()) return {fmt::format("-arch=compute_{}", s.back()), false};
    fail(ErrorCode::unsupported, "target sm_{}: this NVRTC ({}.{}) supports sm_{} to sm_{}", sm, nvrtc.major,
         nvrtc.minor, s.front(), s.back());
}

// CC1D_NVRTC_TIME=FILE: NVRTC appends each compile's phase times (front end, NVVM
// optimizer, ptxas as "PTX Translation") to FILE, CSV rows named by the source name. It
// measures and changes no code, so it stays out of options() and so out of the cache key.
std::vector<std::string> with_phase_timing(std::vector<std::string> options) {
    if (auto file = env::get("CC1D_NVRTC_TIME")) options.push_back("--time=" + *file);
    return options;
}

class NvrtcCompiler final : public Compiler {
public:
    NvrtcCompiler() : nvrtc_(api()) {}

    std::string backend() const override { return "cuda"; }
    std::string identity() override { return fmt::format("nvrtc-{}.{}", nvrtc_.major, nvrtc_.minor); }
    bool accepts_target(const std::string& target) const override { return parse_sm_target(target) > 0; }

    std::vector<std::string> options(const std::string& target) override {
        const int sm = parse_sm_target(target);
        if (sm <= 0) fail(ErrorCode::invalid_argument, "target '{}': expected sm_XY for NVRTC", target);
        return nvrtc_options(choose_arch(nvrtc_, sm).arch_option, {nvrtc_.major, nvrtc_.minor});
    }

    CompileResult compile(const CompileRequest& request) override {
        const auto start = std::chrono::steady_clock::now();
        const auto opts = options(request.target);
        const bool cubin = choose_arch(nvrtc_, parse_sm_target(request.target)).cubin;
        auto argv_options = with_phase_timing(opts);
        const std::string split = nvrtc_split_compile_option({nvrtc_.major, nvrtc_.minor}, request.threads);
        if (!split.empty()) argv_options.push_back(split);
        auto [result, status] = compile_once(request, argv_options, cubin);
        // An NVRTC that does not know an option fails the whole compile: once more without it.
        if (status == NVRTC_ERROR_INVALID_OPTION && !split.empty()) {
            argv_options.pop_back();
            std::tie(result, status) = compile_once(request, argv_options, cubin);
        }
        result.options = join_options(opts);
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
    }

private:
    std::pair<CompileResult, nvrtcResult> compile_once(const CompileRequest& request,
                                                       const std::vector<std::string>& argv_options, bool cubin) {
        CompileResult result;
        std::vector<const char*> argv = option_pointers(argv_options);
        nvrtcProgram program = nullptr;
        nvrtcResult status = nvrtc_.create(&program, request.source.c_str(), request.source_name.c_str(), 0, nullptr, nullptr);
        if (status != NVRTC_SUCCESS)
            fail(ErrorCode::compile_failed, "nvrtcCreateProgram failed for {}: {}", request.source_name, nvrtc_.error_string(status));
        status = nvrtc_.compile(program, static_cast<int>(argv.size()), argv.data());
        std::size_t log_size = 0;
        nvrtc_.log_size(program, &log_size);
        result.log.resize(log_size);
        if (log_size > 0) nvrtc_.log(program, result.log.data());
        trim_log(result.log);
        if (status == NVRTC_SUCCESS) {
            std::size_t size = 0;
            nvrtcResult got = cubin ? nvrtc_.cubin_size(program, &size) : nvrtc_.ptx_size(program, &size);
            result.code_object.resize(size);
            if (got == NVRTC_SUCCESS)
                got = cubin ? nvrtc_.cubin(program, result.code_object.data()) : nvrtc_.ptx(program, result.code_object.data());
            result.ok = got == NVRTC_SUCCESS && size > 0;
            if (!result.ok) result.log += fmt::format("\nreading the code object failed: {}", nvrtc_.error_string(got));
        } else if (result.log.empty()) {
            result.log = nvrtc_.error_string(status);
        }
        nvrtc_.destroy(&program);
        return {std::move(result), status};
    }

    const NvrtcApi& nvrtc_;
};

}  // namespace

std::unique_ptr<Compiler> open_nvrtc() { return std::make_unique<NvrtcCompiler>(); }

#else

std::unique_ptr<Compiler> open_nvrtc() {
    fail(ErrorCode::backend_unavailable, "this build of cc1d has no NVIDIA backend (CUDA headers were not found at build time)");
}

#endif

}  // namespace cc1d::rtc
