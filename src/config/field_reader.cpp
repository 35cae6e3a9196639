#include "config/field_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cc1d::config {
namespace {

std::string join_words(const std::vector<std::string>& words) {
    std::string text;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (i > 0) text += i + 1 == words.size() ? (words.size() > 2 ? ", or " : " or ") : ", ";
        text += words[i];
    }
    return text;
}

}  // namespace

std::string child_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

std::string element_path(const std::string& path, std::size_t index) {
    return fmt::format("{}[{}]", path, index);
}

std::string describe_value(const Json& value) {
    switch (value.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::object: return "an object";
        case Json::value_t::array: return "a list";
        case Json::value_t::string: {
            std::string text = value.get<std::string>();
            if (text.size() > 40) text = text.substr(0, 37) + "...";
            return "the string " + Json(text).dump();
        }
        case Json::value_t::boolean: return value.get<bool>() ? "true" : "false";
        default: return "the number " + value.dump();
    }
}

void FieldReader::fail(const std::string& path, const std::string& problem) const {
    throw ConfigError(file_, path.empty() ? "top level" : path, problem);
}

void FieldReader::check_object(const Json& value, const std::string& path,
                               const std::vector<std::string>& known) const {
    if (!value.is_object()) fail(path, "expected an object { ... }, got " + describe_value(value));
    for (const auto& item : value.items()) {
        if (std::find(known.begin(), known.end(), item.key()) == known.end())
            fail(child_path(path, item.key()), "unknown field (expected one of " + join_words(known) + ")");
    }
}

const Json& FieldReader::list(const Json& value, const std::string& path, bool allow_empty) const {
    if (!value.is_array()) fail(path, "expected a list [ ... ], got " + describe_value(value));
    if (!allow_empty && value.empty()) fail(path, "expected a non-empty list, got an empty list");
    return value;
}

std::int64_t FieldReader::integer(const Json& value, const std::string& path, std::int64_t min,
                                  std::int64_t max) const {
    const std::string expected = fmt::format("an integer from {} to {}", min, max);
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
        fail(path, fmt::format("{} is outside {} to {}", value.dump(), min, max));
    if (!value.is_number_integer()) fail(path, fmt::format("expected {}, got {}", expected, describe_value(value)));
    const auto number = value.get<std::int64_t>();
    if (number < min || number > max) fail(path, fmt::format("{} is outside {} to {}", number, min, max));
    return number;
}

bool FieldReader::boolean(const Json& value, const std::string& path) const {
    if (!value.is_boolean()) fail(path, "expected true or false, got " + describe_value(value));
    return value.get<bool>();
}

std::string FieldReader::string(const Json& value, const std::string& path) const {
    if (!value.is_string()) fail(path, "expected a string, got " + describe_value(value));
    return value.get<std::string>();
}

std::string FieldReader::word(const Json& value, const std::string& path, const std::vector<std::string>& allowed,
                              const std::vector<std::pair<std::string, std::string>>& aliases,
                              const std::string& what) const {
    const std::string expected = join_words(allowed);
    if (!value.is_string()) fail(path, fmt::format("expected {} ({}), got {}", what, expected, describe_value(value)));
    const std::string text = value.get<std::string>();
    if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) return text;
    for (const auto& [spelling, meaning] : aliases)
        if (spelling == text) return meaning;
    fail(path, fmt::format("unknown {} {} (expected {})", what, Json(text).dump(), expected));
}

std::vector<std::int64_t> FieldReader::integer_choices(const Json& value, const std::string& path,
                                                       std::int64_t min, std::int64_t max) const {
    return choices<std::int64_t>(
        value, path, [&](const Json& v, const std::string& p) { return integer(v, p, min, max); });
}

std::vector<bool> FieldReader::boolean_choices(const Json& value, const std::string& path) const {
    return choices<bool>(value, path, [&](const Json& v, const std::string& p) { return boolean(v, p); });
}

}  // namespace cc1d::config
