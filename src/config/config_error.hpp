// A problem in a config file: which file, where in it (a JSON path such as
// `variants[0].width[2]`, or "line 3, column 15" for malformed JSON) and what was
// expected. The tools print what() as their single error line and exit with status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace cc1d::config {

class ConfigError : public std::runtime_error {
public:
    ConfigError(std::string file, std::string location, std::string problem);

    const std::string& file() const { return file_; }
    const std::string& location() const { return location_; }
    const std::string& problem() const { return problem_; }

private:
    std::string file_, location_, problem_;
};

}  // namespace cc1d::config
