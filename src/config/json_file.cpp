#include "config/json_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config_error.hpp"

namespace cc1d::config {
namespace {

// nlohmann's message is "[json.exception.parse_error.101] parse error at line 3,
// column 5: syntax error ..."; keep what follows the position, which says what was wrong.
std::string parse_error_detail(const std::string& what) {
    const auto at = what.find("parse error");
    const auto colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
    return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

TextPosition position_of(const std::string& text, std::size_t index) {
    index = std::min(index, text.size());
    TextPosition position;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < index; ++i) {
        if (text[i] == '\n') {
            ++position.line;
            line_start = i + 1;
        }
    }
    position.column = index - line_start + 1;
    return position;
}

nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& error) {
        // error.byte is 1-based: the index of the last character read, where parsing stopped.
        const std::size_t index = error.byte == 0 ? 0 : error.byte - 1;
        const TextPosition position = position_of(text, index);
        throw ConfigError(file, fmt::format("line {}, column {}", position.line, position.column),
                          "malformed JSON: " + parse_error_detail(error.what()));
    }
}

nlohmann::json read_json_file(const std::string& file) {
    std::error_code ignored;
    if (std::filesystem::is_directory(file, ignored))
        throw ConfigError(file, "", "is a folder; expected a JSON config file");
    std::ifstream stream(file, std::ios::binary);
    if (!stream) throw ConfigError(file, "", fmt::format("cannot open the config file ({})", std::strerror(errno)));
    std::ostringstream text;
    text << stream.rdbuf();
    if (stream.bad()) throw ConfigError(file, "", "cannot read the config file");
    return parse_json_text(text.str(), file);
}

}  // namespace cc1d::config
