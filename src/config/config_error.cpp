#include "config/config_error.hpp"

namespace cc1d::config {
namespace {

std::string join_message(const std::string& file, const std::string& location, const std::string& problem) {
    std::string text = file;
    if (!location.empty()) text += (text.empty() ? "" : ": ") + location;
    return text + (text.empty() ? "" : ": ") + problem;
}

}  // namespace

ConfigError::ConfigError(std::string file, std::string location, std::string problem)
    : std::runtime_error(join_message(file, location, problem)),
      file_(std::move(file)),
      location_(std::move(location)),
      problem_(std::move(problem)) {}

}  // namespace cc1d::config
