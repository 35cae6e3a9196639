// Library logging: one line per message on stderr, filtered by CC1D_LOG
// (debug|info|warn|error; default warn). warn_once() reports a condition a single time
// per process however often it recurs (a broken cache folder, say).
#pragma once

#include <fmt/format.h>

#include <string>

namespace cc1d::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

Level threshold();
void set_threshold(Level level);
Level parse_level(const std::string& text, Level fallback);
void write(Level level, const std::string& message);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
    if (threshold() <= Level::debug) write(Level::debug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
    if (threshold() <= Level::info) write(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
    if (threshold() <= Level::warn) write(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}

// Warns once per `topic` for the life of the process; returns true the first time.
bool warn_once(const std::string& topic, const std::string& message);

}  // namespace cc1d::log
