// Typed reading of config values. Every field may hold one value or a non-empty list
// of values (a list expands to every combination); every mismatch becomes a
// ConfigError naming the file, the JSON path of the bad value and what was expected.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/config_error.hpp"

namespace cc1d::config {

using Json = nlohmann::json;

// JSON paths as the error messages show them: `variants[0].width[2]`.
std::string child_path(const std::string& path, const std::string& key);
std::string element_path(const std::string& path, std::size_t index);

// "a string \"fwdd\"", "a number 17", "a list", ... for "got ..." in messages.
std::string describe_value(const Json& value);

class FieldReader {
public:
    explicit FieldReader(std::string file) : file_(std::move(file)) {}
    const std::string& file() const { return file_; }

    [[noreturn]] void fail(const std::string& path, const std::string& problem) const;

    // `value` must be an object whose keys are all in `known` (catches misspelt fields).
    void check_object(const Json& value, const std::string& path, const std::vector<std::string>& known) const;
    // `value` must be a list; `allow_empty` false rejects [].
    const Json& list(const Json& value, const std::string& path, bool allow_empty) const;

    std::int64_t integer(const Json& value, const std::string& path, std::int64_t min, std::int64_t max) const;
    bool boolean(const Json& value, const std::string& path) const;
    std::string string(const Json& value, const std::string& path) const;
    // One of `allowed` (plus `aliases`: spelling -> allowed word); returns the allowed word.
    std::string word(const Json& value, const std::string& path, const std::vector<std::string>& allowed,
                     const std::vector<std::pair<std::string, std::string>>& aliases, const std::string& what) const;

    // A single value or a non-empty list of them, each read by `one` with its own path.
    template <typename T>
    std::vector<T> choices(const Json& value, const std::string& path,
                           const std::function<T(const Json&, const std::string&)>& one) const {
        if (!value.is_array()) return {one(value, path)};
        if (value.empty()) fail(path, "expected a value or a non-empty list of values, got an empty list");
        std::vector<T> result;
        for (std::size_t i = 0; i < value.size(); ++i) {
            const std::string item_path = element_path(path, i);
            if (value[i].is_array()) fail(item_path, "expected a single value here, got a nested list");
            result.push_back(one(value[i], item_path));
        }
        return result;
    }

    std::vector<std::int64_t> integer_choices(const Json& value, const std::string& path, std::int64_t min,
                                              std::int64_t max) const;
    std::vector<bool> boolean_choices(const Json& value, const std::string& path) const;

private:
    std::string file_;
};

}  // namespace cc1d::config
