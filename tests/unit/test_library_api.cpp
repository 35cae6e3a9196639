// rtc::load_library_api: a compiler library opened once per process, its failure
// (nothing opens, a function missing) remembered and reported with the library's name.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "cc1d/cc1d.hpp"
#include "rtc/library_api.hpp"

using namespace cc1d;

namespace {

// One Api type per case: each instantiation keeps its own once-per-process table.
struct MissingLibraryApi {
    DynamicLibrary library;
};
struct MissingFunctionApi {
    DynamicLibrary library;
    int (*absent)() = nullptr;
};
struct WorkingApi {
    DynamicLibrary library;
    decltype(&std::strlen) length = nullptr;
    int ready_calls = 0;
};

std::string message_of(void (*call)()) {
    try {
        call();
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::backend_unavailable);
        return e.what();
    }
    FAIL("no error");
    return {};
}

const MissingLibraryApi& missing_library() {
    return rtc::load_library_api<MissingLibraryApi>(
        "FAKERTC", {"/nonexistent/libfakertc.so"}, [](MissingLibraryApi&) { return true; }, [](MissingLibraryApi&) {});
}

const MissingFunctionApi& missing_function() {
    return rtc::load_library_api<MissingFunctionApi>(
        "FAKERTC", {"libc.so.6"},
        [](MissingFunctionApi& api) { return api.library.resolve(api.absent, "cc1d_no_such_function"); },
        [](MissingFunctionApi&) {});
}

const WorkingApi& working() {
    return rtc::load_library_api<WorkingApi>(
        "LIBC", {"/nonexistent/libc.so", "libc.so.6"},
        [](WorkingApi& api) { return api.library.resolve(api.length, "strlen"); },
        [](WorkingApi& api) { ++api.ready_calls; });
}

}  // namespace

TEST_CASE("a library that does not open is reported, by name, on every call") {
    const std::string first = message_of([] { missing_library(); });
    CHECK(first.find("FAKERTC library not found") != std::string::npos);
    CHECK(first.find("/nonexistent/libfakertc.so") != std::string::npos);
    CHECK(message_of([] { missing_library(); }) == first);
}

TEST_CASE("a library without a required function is reported and not used") {
    const std::string message = message_of([] { missing_function(); });
    CHECK(message.find("FAKERTC library") != std::string::npos);
    CHECK(message.find("lacks a required function") != std::string::npos);
    CHECK(message_of([] { missing_function(); }) == message);
}

TEST_CASE("a working library is opened once and its table shared") {
    const WorkingApi& first = working();
    REQUIRE(static_cast<bool>(first.length));
    CHECK(first.length("abc") == 3);
    CHECK(&working() == &first);
    CHECK(first.ready_calls == 1);
}
