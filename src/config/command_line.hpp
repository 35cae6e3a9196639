// The tools' command lines: `--name VALUE`, `--name=VALUE` and bare switches. Anything
// else (an unknown option, a missing value, a stray word) is a UsageError, which the
// tools print as their single error line and answer with exit status 2.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace cc1d::config {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct CommandLineSpec {
    std::set<std::string> repeatable;   // options that take a value and may be given again (--target)
    std::set<std::string> single;       // options that take a value, at most once (--config)
    std::set<std::string> switches;     // options without a value (--list)
};

class CommandLine {
public:
    static CommandLine parse(const std::vector<std::string>& arguments, const CommandLineSpec& spec);
    static CommandLine parse(int argc, const char* const* argv, const CommandLineSpec& spec);

    bool has(const std::string& name) const;
    const std::vector<std::string>& values(const std::string& name) const;   // empty when absent
    std::optional<std::string> value(const std::string& name) const;
    std::string required(const std::string& name) const;                     // UsageError when absent
    // A whole number in [min, max] (UsageError naming the option otherwise).
    std::optional<std::int64_t> integer(const std::string& name, std::int64_t min, std::int64_t max) const;

private:
    std::map<std::string, std::vector<std::string>> values_;
    std::set<std::string> switches_;
};

}  // namespace cc1d::config
