// The runtime-compiler interface: source text in, code object out. One implementation
// per vendor (nvrtc.cpp, hiprtc.cpp), each opening its library with dlopen on first use.
// A failed compile is a value carrying the log; an unusable library is an exception
// (backend_unavailable).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace cc1d::rtc {

struct CompileRequest {
    std::string source;        // complete, self-contained translation unit
    std::string source_name;   // "<entry>.cu", shown in logs and errors
    std::string target;        // "sm_90", "gfx90a", "gfx942:sramecc+:xnack-"
    unsigned threads = 1;      // threads the compiler may optimize the kernels on (NVRTC only); same code
};

struct CompileResult {
    bool ok = false;
    std::string code_object;   // CUBIN / PTX / HSACO bytes
    std::string log;           // compiler log (warnings too)
    std::string options;       // the options used, space separated
    double seconds = 0;
};

class Compiler {
public:
    virtual ~Compiler() = default;
    virtual std::string backend() const = 0;     // "cuda" or "hip"
    // Name and version, e.g. "nvrtc-13.0"; enters cache keys and cache folder names.
    virtual std::string identity() = 0;
    // True when `target` names this backend's kind of target (sm_XY vs gfx...).
    virtual bool accepts_target(const std::string& target) const = 0;
    // The normalized options for a target, as hashed into cache keys.
    virtual std::vector<std::string> options(const std::string& target) = 0;
    virtual CompileResult compile(const CompileRequest& request) = 0;
};

// Throw Error(backend_unavailable) when the library cannot be opened.
std::unique_ptr<Compiler> open_nvrtc();
std::unique_ptr<Compiler> open_hiprtc();

// Picks the backend by the target's spelling: sm_XY -> NVRTC, gfx... -> HIPRTC.
std::unique_ptr<Compiler> open_compiler_for_target(const std::string& target);

}  // namespace cc1d::rtc
