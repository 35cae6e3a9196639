#include "cache/cache_layout.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "cache/disk_cache.hpp"
#include "common/version.hpp"

namespace cc1d::cache {
namespace {

bool is_safe_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '+' || c == ':';
}

// Per-thread generator, seeded once from the OS (falling back to the clock and the
// thread's address where no random device exists).
std::uint64_t random_bits() {
    thread_local std::mt19937_64 generator = [] {
        std::uint64_t seed = static_cast<std::uint64_t>(
            std::chrono::steady_clock::now().time_since_epoch().count());
        try {
            std::random_device device;
            seed ^= (static_cast<std::uint64_t>(device()) << 32) ^ device();
        } catch (...) {
        }
        int local = 0;
        seed ^= reinterpret_cast<std::uintptr_t>(&local);
        return std::mt19937_64(seed);
    }();
    return generator();
}

}  // namespace

std::string format_folder_name(unsigned format_version) { return fmt::format("v{}", format_version); }

std::string safe_component(const std::string& name) {
    if (name.empty() || name == "." || name == "..") return "_";
    std::string out = name;
    for (char& c : out)
        if (!is_safe_char(c)) c = '_';
    return out;
}

std::string entry_folder(const std::string& root, const EntryLocation& where, const CacheKey& key) {
    return fmt::format("{}/{}/{}/{}/{}", root, format_folder_name(cache_format_version),
                       safe_component(where.backend + "-" + where.compiler), safe_component(where.target),
                       key.hex().substr(0, 2));
}

std::string temp_path_for(const std::string& final_path) {
    static std::atomic<std::uint64_t> counter{0};
    auto thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
    return fmt::format("{}{}{}.{:x}.{}.{:016x}", final_path, temp_marker, static_cast<long>(::getpid()),
                       thread & 0xffffffffu, counter.fetch_add(1), random_bits());
}

bool is_temp_name(const std::string& file_name) { return file_name.find(temp_marker) != std::string::npos; }

}  // namespace cc1d::cache
