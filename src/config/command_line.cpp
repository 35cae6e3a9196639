#include "config/command_line.hpp"

#include <fmt/format.h>

namespace cc1d::config {

CommandLine CommandLine::parse(const std::vector<std::string>& arguments, const CommandLineSpec& spec) {
    CommandLine line;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string& argument = arguments[i];
        if (argument.rfind("--", 0) != 0 || argument.size() == 2)
            throw UsageError(fmt::format("unexpected argument '{}' (options start with --; see --help)", argument));
        std::string name = argument.substr(2);
        std::optional<std::string> inline_value;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (spec.switches.count(name)) {
            if (inline_value) throw UsageError(fmt::format("--{} takes no value", name));
            line.switches_.insert(name);
            continue;
        }
        const bool repeatable = spec.repeatable.count(name) > 0;
        if (!repeatable && !spec.single.count(name))
            throw UsageError(fmt::format("unknown option --{} (see --help)", name));
        if (!inline_value) {
            if (i + 1 >= arguments.size()) throw UsageError(fmt::format("--{} needs a value", name));
            inline_value = arguments[++i];
        }
        if (inline_value->empty()) throw UsageError(fmt::format("--{} needs a non-empty value", name));
        auto& slot = line.values_[name];
        if (!repeatable && !slot.empty()) throw UsageError(fmt::format("--{} given more than once", name));
        slot.push_back(*inline_value);
    }
    return line;
}

CommandLine CommandLine::parse(int argc, const char* const* argv, const CommandLineSpec& spec) {
    std::vector<std::string> arguments;
    for (int i = 1; i < argc; ++i) arguments.emplace_back(argv[i]);
    return parse(arguments, spec);
}

bool CommandLine::has(const std::string& name) const {
    return switches_.count(name) > 0 || values_.count(name) > 0;
}

const std::vector<std::string>& CommandLine::values(const std::string& name) const {
    static const std::vector<std::string> none;
    const auto found = values_.find(name);
    return found == values_.end() ? none : found->second;
}

std::optional<std::string> CommandLine::value(const std::string& name) const {
    const auto& all = values(name);
    if (all.empty()) return std::nullopt;
    return all.back();
}

std::string CommandLine::required(const std::string& name) const {
    auto found = value(name);
    if (!found) throw UsageError(fmt::format("--{} is required (see --help)", name));
    return *found;
}

std::optional<std::int64_t> CommandLine::integer(const std::string& name, std::int64_t min, std::int64_t max) const {
    const auto text = value(name);
    if (!text) return std::nullopt;
    std::int64_t number = 0;
    std::size_t used = 0;
    try {
        number = std::stoll(*text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text->size() || number < min || number > max)
        throw UsageError(fmt::format("--{} '{}': expected a whole number from {} to {}", name, *text, min, max));
    return number;
}

}  // namespace cc1d::config
