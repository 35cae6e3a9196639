#include "cache/sidecar.hpp"

#include <nlohmann/json.hpp>

#include <ctime>

namespace cc1d::cache {

std::string to_json(const Sidecar& s) {
    nlohmann::json json = {
        {"key", s.key},
        {"variant", s.variant},
        {"options", s.options},
        {"source_name", s.source_name},
        {"library_version", s.library_version},
        {"backend", s.backend},
        {"compiler", s.compiler},
        {"target", s.target},
        {"payload_size", s.payload_size},
        {"format_version", s.format_version},
        {"created", s.created},
    };
    // Replace invalid UTF-8 rather than throw: a sidecar must never fail a store.
    return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<Sidecar> parse_sidecar(const std::string& text) {
    auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) return std::nullopt;
    Sidecar s;
    auto text_field = [&](const char* name, std::string& out) {
        auto it = json.find(name);
        if (it != json.end() && it->is_string()) out = it->get<std::string>();
    };
    text_field("key", s.key);
    text_field("variant", s.variant);
    text_field("options", s.options);
    text_field("source_name", s.source_name);
    text_field("library_version", s.library_version);
    text_field("backend", s.backend);
    text_field("compiler", s.compiler);
    text_field("target", s.target);
    text_field("created", s.created);
    auto size = json.find("payload_size");
    if (size != json.end() && size->is_number_unsigned()) s.payload_size = size->get<std::uint64_t>();
    auto format = json.find("format_version");
    if (format != json.end() && format->is_number_unsigned()) s.format_version = format->get<unsigned>();
    return s;
}

std::string utc_timestamp_now() {
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace cc1d::cache
