// SingleFlight: an in-memory map from key to a value that is made at most once per key,
// however many threads ask at once (the others wait for that result). A failed make()
// is reported to every waiter and forgotten, so a later call tries again. Hits take a
// shared lock only and allocate nothing: this sits on the kernel launch path.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

namespace cc1d::cache {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class SingleFlight {
public:
    // The value for `key`, made by `make()` (any callable returning Value) when absent.
    // While one call runs make(), every other call for that key waits for its result;
    // if make() throws, each of them rethrows that exception and the key stays absent.
    // `hit` (optional) is set to true when this call did not run make() (the value
    // existed, or another thread made it meanwhile). make() must not ask for its own key.
    // A template rather than std::function so a capturing lambda costs no allocation.
    template <typename Make>
    std::shared_ptr<const Value> get(const Key& key, Make&& make, bool* hit = nullptr);

    // The value when present; never makes one.
    std::shared_ptr<const Value> find(const Key& key) const;
    std::size_t size() const;
    // Forgets every made value (holders keep theirs). Makes in flight still finish and
    // their values are kept.
    void clear();

private:
    // One make() in progress; its waiters hold it by shared_ptr.
    struct Flight {
        std::mutex mutex;
        std::condition_variable done_signal;
        bool done = false;
        std::shared_ptr<const Value> value;
        std::exception_ptr error;
    };

    std::shared_ptr<const Value> wait_for(Flight& flight);
    void finish(const Key& key, const std::shared_ptr<Flight>& flight, std::shared_ptr<const Value> value,
                std::exception_ptr error) noexcept;

    mutable std::shared_mutex mutex_;
    std::unordered_map<Key, std::shared_ptr<const Value>, Hash> values_;
    std::unordered_map<Key, std::shared_ptr<Flight>, Hash> flights_;
};

template <typename Key, typename Value, typename Hash>
template <typename Make>
std::shared_ptr<const Value> SingleFlight<Key, Value, Hash>::get(const Key& key, Make&& make, bool* hit) {
    if (hit) *hit = true;
    {
        // The hot path: a shared lock, a lookup, a reference count increment.
        std::shared_lock<std::shared_mutex> lock(mutex_);
        auto found = values_.find(key);
        if (found != values_.end()) return found->second;
    }
    std::shared_ptr<Flight> flight;
    bool leader = false;
    {
        std::unique_lock<std::shared_mutex> lock(mutex_);
        auto found = values_.find(key);
        if (found != values_.end()) return found->second;   // made while we took the lock
        auto& slot = flights_[key];
        if (!slot) {
            slot = std::make_shared<Flight>();
            leader = true;
        }
        flight = slot;
    }
    if (!leader) return wait_for(*flight);

    if (hit) *hit = false;
    std::shared_ptr<const Value> value;
    try {
        value = std::make_shared<const Value>(std::forward<Make>(make)());
    } catch (...) {
        finish(key, flight, nullptr, std::current_exception());
        throw;
    }
    finish(key, flight, value, nullptr);
    return value;
}

template <typename Key, typename Value, typename Hash>
std::shared_ptr<const Value> SingleFlight<Key, Value, Hash>::wait_for(Flight& flight) {
    std::unique_lock<std::mutex> lock(flight.mutex);
    flight.done_signal.wait(lock, [&] { return flight.done; });
    if (flight.error) std::rethrow_exception(flight.error);
    return flight.value;
}

template <typename Key, typename Value, typename Hash>
void SingleFlight<Key, Value, Hash>::finish(const Key& key, const std::shared_ptr<Flight>& flight,
                                            std::shared_ptr<const Value> value,
                                            std::exception_ptr error) noexcept {
    {
        // Publish the value (or forget the failure) before waking the waiters, so a
        // waiter that asks again at once finds it.
        // Waiters must be woken whatever happens here: a map that cannot grow only
        // means the value is not kept.
        std::unique_lock<std::shared_mutex> lock(mutex_);
        try {
            if (value) values_[key] = value;
        } catch (...) {
        }
        flights_.erase(key);
    }
    {
        std::lock_guard<std::mutex> lock(flight->mutex);
        flight->value = std::move(value);
        flight->error = std::move(error);
        flight->done = true;
    }
    flight->done_signal.notify_all();
}

template <typename Key, typename Value, typename Hash>
std::shared_ptr<const Value> SingleFlight<Key, Value, Hash>::find(const Key& key) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto found = values_.find(key);
    return found == values_.end() ? nullptr : found->second;
}

template <typename Key, typename Value, typename Hash>
std::size_t SingleFlight<Key, Value, Hash>::size() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return values_.size();
}

template <typename Key, typename Value, typename Hash>
void SingleFlight<Key, Value, Hash>::clear() {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    values_.clear();
}

}  // namespace cc1d::cache
