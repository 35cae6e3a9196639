// SingleFlight: an in-memory map from key to a value that is made at most once per key,
// however many threads ask at once (the others wait for that result). A failed make()
// is reported to every waiter and forgotten, so a later call tries again. Hits take a
// shared lock only.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace cc1d::cache {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class SingleFlight {
public:
    // `hit` (optional) is set to true when the value already existed.
    std::shared_ptr<const Value> get(const Key& key, const std::function<Value()>& make, bool* hit = nullptr);
    std::size_t size() const;
    void clear();
    // (implementation in this header; see single_flight.hpp's definition below)
};

}  // namespace cc1d::cache
