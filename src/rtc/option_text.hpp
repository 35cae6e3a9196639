// Small pieces both runtime compilers (and the cache key) share: compile options as one
// space-separated string and as the argv array the vendor APIs take, and a tidy log.
#pragma once

#include <string>
#include <vector>

namespace cc1d::rtc {

// "a b c": the normalized text hashed into cache keys and shown in errors.
inline std::string join_options(const std::vector<std::string>& options) {
    std::string text;
    for (const auto& o : options) text += (text.empty() ? "" : " ") + o;
    return text;
}

// Pointers into `options` (which must outlive the result), for nvrtc/hiprtcCompileProgram.
inline std::vector<const char*> option_pointers(const std::vector<std::string>& options) {
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    return argv;
}

// Compiler logs end in NULs and newlines; drop them so messages read cleanly.
inline void trim_log(std::string& log) {
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
}

}  // namespace cc1d::rtc
