// The library's version, and the cache entry format version. Both enter every cache
// key, so an upgrade never loads an entry written by another version.
#pragma once

#define CC1D_VERSION_STRING "0.1.0"

namespace cc1d {
inline constexpr unsigned cache_format_version = 1;
}
