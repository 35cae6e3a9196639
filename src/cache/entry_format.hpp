// The bytes of one cache entry (all integers little-endian):
//   offset  0  magic "CC1DCODE"                      8 bytes
//   offset  8  entry format version                  4 bytes
//   offset 12  reserved, zero                        4 bytes
//   offset 16  key: high, low                       16 bytes
//   offset 32  payload size                          8 bytes
//   offset 40  payload checksum (XXH3-64)            8 bytes
//   offset 48  payload
// encode_entry / decode_entry (disk_cache.hpp) are the public face; this names the
// ways an entry can be bad, so each kind is reported once.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "cache/cache_key.hpp"

namespace cc1d::cache {

inline constexpr std::size_t entry_header_size = 48;

enum class EntryProblem {
    none,
    empty,               // zero bytes
    truncated,           // shorter than its header or than the payload size it records
    bad_magic,           // not a cc1d entry at all
    other_format,        // written by another entry format version
    wrong_key,           // a valid entry, but for another key (copied or misplaced)
    trailing_bytes,      // longer than header + payload
    checksum_mismatch,   // payload damaged (bit flip, partial overwrite)
};

const char* to_string(EntryProblem problem);

// The payload, or nullopt with the problem set.
std::optional<std::string> decode_entry_checked(const std::string& bytes, const CacheKey& key,
                                                EntryProblem* problem);

}  // namespace cc1d::cache
