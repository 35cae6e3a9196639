// SingleFlight: one make() per key however many threads ask, failures reach every
// waiter and are retried, keys do not wait for each other, and hits allocate nothing.
// This file replaces operator new/delete with malloc/free; GCC cannot see that the pair
// matches where the library's allocations are inlined.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cache/single_flight.hpp"

// Counts this thread's allocations, to prove the hit path makes none.
namespace {
thread_local long allocations = 0;
}
void* operator new(std::size_t size) {
    ++allocations;
    if (void* p = std::malloc(size ? size : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using cc1d::cache::SingleFlight;
using namespace std::chrono_literals;

namespace {

// Starts `count` threads running `body(index)` at (nearly) the same moment.
template <typename Body>
void run_together(int count, Body body) {
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) {
        threads.emplace_back([&, i] {
            ready.fetch_add(1);
            while (ready.load() < count) std::this_thread::yield();
            body(i);
        });
    }
    for (auto& thread : threads) thread.join();
}

// Waits up to a few seconds for `flag`; a test that would hang fails instead.
bool wait_for(const std::atomic<bool>& flag) {
    for (int i = 0; i < 5000 && !flag.load(); ++i) std::this_thread::sleep_for(1ms);
    return flag.load();
}

}  // namespace

TEST_CASE("make runs once per key however many threads ask at once") {
    SingleFlight<std::string, int> flight;
    std::atomic<int> calls{0}, made_here{0};
    std::vector<std::shared_ptr<const int>> results(16);
    run_together(16, [&](int i) {
        bool hit = true;
        results[i] = flight.get("kernel", [&] {
            calls.fetch_add(1);
            std::this_thread::sleep_for(100ms);
            return 42;
        }, &hit);
        if (!hit) made_here.fetch_add(1);
    });
    CHECK(calls == 1);
    CHECK(made_here == 1);
    for (const auto& result : results) {
        REQUIRE((result != nullptr));
        CHECK((result.get() == results[0].get()));   // one shared value
        CHECK(*result == 42);
    }
    CHECK(flight.size() == 1);
}

TEST_CASE("a make that throws rethrows in every waiter and is retried by the next call") {
    SingleFlight<std::string, int> flight;
    std::atomic<int> calls{0}, caught{0};
    run_together(16, [&](int) {
        try {
            flight.get("kernel", [&]() -> int {
                calls.fetch_add(1);
                std::this_thread::sleep_for(100ms);
                throw std::runtime_error("compile failed");
            });
        } catch (const std::runtime_error& error) {
            if (std::string(error.what()) == "compile failed") caught.fetch_add(1);
        }
    });
    CHECK(calls == 1);
    CHECK(caught == 16);
    CHECK(flight.size() == 0);
    CHECK((flight.find("kernel") == nullptr));

    bool hit = true;
    auto value = flight.get("kernel", [&] { calls.fetch_add(1); return 7; }, &hit);
    CHECK(calls == 2);
    CHECK_FALSE(hit);
    CHECK(*value == 7);
    CHECK(*flight.get("kernel", [&] { calls.fetch_add(1); return 8; }, &hit) == 7);
    CHECK(hit);
    CHECK(calls == 2);
}

TEST_CASE("different keys are made at the same time, and hits go on while a make runs") {
    SingleFlight<int, int> flight;
    flight.get(0, [] { return 100; });
    std::atomic<bool> b_started{false}, a_saw_b{false}, hit_during_make{false};
    std::thread a([&] {
        flight.get(1, [&] {
            a_saw_b = wait_for(b_started);   // would time out if keys were made one at a time
            return 1;
        });
    });
    std::thread b([&] {
        flight.get(2, [&] {
            b_started = true;
            hit_during_make = *flight.get(0, [] { return -1; }) == 100;
            return 2;
        });
    });
    a.join();
    b.join();
    CHECK(a_saw_b);
    CHECK(hit_during_make);
    CHECK(flight.size() == 3);
}

TEST_CASE("a hit allocates nothing, even with a capturing make and a long key") {
    SingleFlight<std::string, std::vector<int>> flight;
    const std::string key(200, 'k');   // far beyond the small-string buffer
    std::string a = "x", b = "y", c = "z";
    auto make = [&a, &b, &c, &key] { return std::vector<int>(a.size() + b.size() + c.size() + key.size(), 1); };
    bool hit = false;
    flight.get(key, make, &hit);
    REQUIRE_FALSE(hit);

    long before = allocations;
    std::size_t total = 0;
    for (int i = 0; i < 1000; ++i) {
        total += flight.get(key, [&a, &b, &c, &key] { return std::vector<int>(a.size() + b.size() + c.size() + key.size()); }, &hit)->size();
    }
    long during = allocations - before;
    CHECK(during == 0);
    CHECK(hit);
    CHECK(total == 1000 * 203);
}

TEST_CASE("find, size and clear") {
    SingleFlight<int, std::string> flight;
    CHECK((flight.find(1) == nullptr));
    auto one = flight.get(1, [] { return std::string("one"); });
    flight.get(2, [] { return std::string("two"); });
    CHECK(flight.size() == 2);
    CHECK(*flight.find(1) == "one");
    flight.clear();
    CHECK(flight.size() == 0);
    CHECK(*one == "one");   // holders keep their value
    int calls = 0;
    CHECK(*flight.get(1, [&] { ++calls; return std::string("again"); }) == "again");
    CHECK(calls == 1);
}
