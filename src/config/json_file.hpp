// Reading a config file as JSON. Malformed JSON becomes a ConfigError with the line and
// column of the problem (nlohmann reports a byte offset; people count lines).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace cc1d::config {

struct TextPosition {
    std::size_t line = 1, column = 1;   // both 1-based
};
// Position of the character at 0-based `index` of `text` (index may be text.size()).
TextPosition position_of(const std::string& text, std::size_t index);

// Parses `text`; `file` only names the source in errors.
nlohmann::json parse_json_text(const std::string& text, const std::string& file);
// Reads and parses a file; a missing or unreadable file is a ConfigError too.
nlohmann::json read_json_file(const std::string& file);

}  // namespace cc1d::config
