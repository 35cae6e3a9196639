#include "cache/entry_format.hpp"

#include <xxhash.h>

#include <cstdint>
#include <cstring>

#include "cache/disk_cache.hpp"
#include "common/version.hpp"

namespace cc1d::cache {
namespace {

constexpr char magic[8] = {'C', 'C', '1', 'D', 'C', 'O', 'D', 'E'};

void put(std::string& out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::uint64_t get(const std::string& in, std::size_t offset, int bytes) {
    std::uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i)
        value = (value << 8) | static_cast<unsigned char>(in[offset + static_cast<std::size_t>(i)]);
    return value;
}

std::uint64_t checksum(const char* data, std::size_t size) { return XXH3_64bits(data, size); }

}  // namespace

const char* to_string(EntryProblem problem) {
    switch (problem) {
        case EntryProblem::none: return "valid";
        case EntryProblem::empty: return "empty file";
        case EntryProblem::truncated: return "truncated";
        case EntryProblem::bad_magic: return "not a cc1d cache entry";
        case EntryProblem::other_format: return "written by another entry format version";
        case EntryProblem::wrong_key: return "holds another key's entry";
        case EntryProblem::trailing_bytes: return "has bytes after its payload";
        case EntryProblem::checksum_mismatch: return "payload checksum mismatch";
    }
    return "unknown problem";
}

std::string encode_entry(const CacheKey& key, const std::string& payload) {
    std::string out;
    out.reserve(entry_header_size + payload.size());
    out.append(magic, sizeof magic);
    put(out, cache_format_version, 4);
    put(out, 0, 4);
    put(out, key.high, 8);
    put(out, key.low, 8);
    put(out, payload.size(), 8);
    put(out, checksum(payload.data(), payload.size()), 8);
    out += payload;
    return out;
}

std::optional<std::string> decode_entry_checked(const std::string& bytes, const CacheKey& key,
                                                EntryProblem* problem) {
    auto bad = [&](EntryProblem kind) -> std::optional<std::string> {
        if (problem) *problem = kind;
        return std::nullopt;
    };
    if (bytes.empty()) return bad(EntryProblem::empty);
    // The magic first, so a short foreign file is not called a truncated entry.
    std::size_t magic_bytes = bytes.size() < sizeof magic ? bytes.size() : sizeof magic;
    if (std::memcmp(bytes.data(), magic, magic_bytes) != 0) return bad(EntryProblem::bad_magic);
    if (bytes.size() < entry_header_size) return bad(EntryProblem::truncated);
    // The reserved word is part of the format: a nonzero one is a format we do not know.
    if (get(bytes, 8, 4) != cache_format_version || get(bytes, 12, 4) != 0) return bad(EntryProblem::other_format);
    if (get(bytes, 16, 8) != key.high || get(bytes, 24, 8) != key.low) return bad(EntryProblem::wrong_key);
    std::uint64_t size = get(bytes, 32, 8);
    std::uint64_t available = bytes.size() - entry_header_size;
    if (size > available) return bad(EntryProblem::truncated);
    if (size < available) return bad(EntryProblem::trailing_bytes);
    const char* payload = bytes.data() + entry_header_size;
    if (checksum(payload, size) != get(bytes, 40, 8)) return bad(EntryProblem::checksum_mismatch);
    if (problem) *problem = EntryProblem::none;
    return std::string(payload, size);
}

std::optional<std::string> decode_entry(const std::string& bytes, const CacheKey& key, std::string* why) {
    EntryProblem problem = EntryProblem::none;
    auto payload = decode_entry_checked(bytes, key, &problem);
    if (!payload && why) *why = to_string(problem);
    return payload;
}

}  // namespace cc1d::cache
