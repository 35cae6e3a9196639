#include "common/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace cc1d::log {
namespace {

Level level_from_env() {
    const char* env = std::getenv("CC1D_LOG");
    return env ? parse_level(env, Level::warn) : Level::warn;
}

std::atomic<int>& current() {
    static std::atomic<int> level{static_cast<int>(level_from_env())};
    return level;
}

const char* name(Level level) {
    switch (level) {
        case Level::debug: return "debug";
        case Level::info: return "info";
        case Level::warn: return "warning";
        case Level::error: return "error";
        default: return "";
    }
}

}  // namespace

Level threshold() { return static_cast<Level>(current().load(std::memory_order_relaxed)); }
void set_threshold(Level level) { current().store(static_cast<int>(level)); }

Level parse_level(const std::string& text, Level fallback) {
    if (text == "debug") return Level::debug;
    if (text == "info") return Level::info;
    if (text == "warn" || text == "warning") return Level::warn;
    if (text == "error") return Level::error;
    if (text == "off" || text == "none") return Level::off;
    return fallback;
}

void write(Level level, const std::string& message) {
    if (level < threshold()) return;
    // One fprintf per line so lines from several threads do not interleave.
    std::fprintf(stderr, "cc1d %s: %s\n", name(level), message.c_str());
}

bool warn_once(const std::string& topic, const std::string& message) {
    static std::mutex mutex;
    static std::set<std::string> seen;
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (!seen.insert(topic).second) return false;
    }
    write(Level::warn, message);
    return true;
}

}  // namespace cc1d::log
