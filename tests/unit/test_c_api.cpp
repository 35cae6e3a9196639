// The C ABI without a GPU: identity, status codes and messages for every kind of bad
// argument, NULL handles, versioned struct sizes, the thread-local last error, and the
// header itself compiled by a C compiler with its layout checked against C++'s.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "cc1d/cc1d.h"
#include "cc1d/cc1d.hpp"

namespace {

std::string last_error() { return cc1d_last_error(); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A runtime with the disk cache off, so unit tests never touch the user's cache.
struct ScopedRuntime {
    ScopedRuntime() {
        cc1d_runtime_options options;
        cc1d_runtime_options_init(&options);
        options.disk_cache = 0;
        REQUIRE(cc1d_runtime_create(&options, &handle) == CC1D_STATUS_OK);
        REQUIRE(handle != nullptr);
    }
    ~ScopedRuntime() { cc1d_runtime_destroy(handle); }
    cc1d_runtime* handle = nullptr;
};

// Shapes that pass validation; the pointers are never dereferenced because every test
// using them stops before a launch (no GPU, or an error found first).
cc1d_tensor fake_tensor(std::uintptr_t address, cc1d_dtype dtype, std::vector<std::int64_t> shape) {
    cc1d_tensor t{};
    t.data = reinterpret_cast<const void*>(address);
    t.dtype = dtype;
    t.rank = static_cast<std::int32_t>(shape.size());
    std::int64_t stride = 1;
    for (int d = t.rank - 1; d >= 0; --d) {
        t.shape[d] = shape[d];
        t.strides[d] = stride;
        stride *= shape[d];
    }
    return t;
}

cc1d_forward_args valid_forward_args() {
    cc1d_forward_args args;
    cc1d_forward_args_init(&args);
    args.x = fake_tensor(0x100000, CC1D_DTYPE_FP32, {2, 8, 16});
    args.weight = fake_tensor(0x200000, CC1D_DTYPE_FP32, {8, 4});
    args.out = fake_tensor(0x300000, CC1D_DTYPE_FP32, {2, 8, 16});
    return args;
}

bool gpu_present(cc1d_runtime* runtime) {
    return cc1d_device_target(runtime, nullptr, 0, nullptr) == CC1D_STATUS_OK;
}

}  // namespace

TEST_CASE("identity: ABI version, library version, status names") {
    CHECK(cc1d_abi_version() == CC1D_ABI_VERSION);
    CHECK(std::string(cc1d_version()) == cc1d::version());
    CHECK(std::string(cc1d_status_string(CC1D_STATUS_OK)) == "ok");
    CHECK(std::string(cc1d_status_string(CC1D_STATUS_INVALID_ARGUMENT)) == "invalid_argument");
    CHECK(std::string(cc1d_status_string(CC1D_STATUS_BACKEND_UNAVAILABLE)) == "backend_unavailable");
    CHECK(std::string(cc1d_status_string(static_cast<cc1d_status>(99))) == "unknown_status");
    // The C names of the statuses that mirror cc1d::ErrorCode are the C++ names.
    for (auto code : {cc1d::ErrorCode::invalid_argument, cc1d::ErrorCode::unsupported, cc1d::ErrorCode::compile_failed,
                      cc1d::ErrorCode::device_error, cc1d::ErrorCode::backend_unavailable})
        CHECK(std::string(cc1d_status_string(static_cast<cc1d_status>(static_cast<int>(code) + 1))) ==
              cc1d::to_string(code));
}

TEST_CASE("layout of the ABI structs is pinned") {
    CHECK(sizeof(cc1d_tensor) == 64);
    CHECK(offsetof(cc1d_tensor, dtype) == 8);
    CHECK(offsetof(cc1d_tensor, shape) == 16);
    CHECK(offsetof(cc1d_tensor, strides) == 40);
    CHECK(sizeof(cc1d_forward_args) == 464);
    CHECK(sizeof(cc1d_backward_args) == 744);
    CHECK(sizeof(cc1d_update_args) == 464);
    CHECK(sizeof(cc1d_varlen_forward_args) == 528);
    CHECK(sizeof(cc1d_runtime_options) == 32);
    CHECK(sizeof(cc1d_stats) == 64);
}

TEST_CASE("runtime create and destroy") {
    SUBCASE("default options (NULL)") {
        cc1d_runtime* runtime = nullptr;
        CHECK(cc1d_runtime_create(nullptr, &runtime) == CC1D_STATUS_OK);
        CHECK(runtime != nullptr);
        CHECK(last_error().empty());
        cc1d_runtime_destroy(runtime);
    }
    SUBCASE("NULL output pointer") {
        CHECK(cc1d_runtime_create(nullptr, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "output pointer is NULL"));
    }
    SUBCASE("uninitialized options struct") {
        cc1d_runtime_options options{};
        cc1d_runtime* runtime = reinterpret_cast<cc1d_runtime*>(0x1);
        CHECK(cc1d_runtime_create(&options, &runtime) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(runtime == nullptr);
        CHECK(contains(last_error(), "struct_size"));
    }
    SUBCASE("destroy NULL is a no-op") { cc1d_runtime_destroy(nullptr); }
}

TEST_CASE("NULL handles and NULL argument structs are errors, not crashes") {
    cc1d_forward_args forward = valid_forward_args();
    CHECK(cc1d_forward(nullptr, &forward, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "runtime handle is NULL"));

    ScopedRuntime rt;
    CHECK(cc1d_forward(rt.handle, nullptr, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "cc1d_forward"));
    CHECK(cc1d_backward(rt.handle, nullptr, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(cc1d_update(rt.handle, nullptr, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(cc1d_varlen_forward(rt.handle, nullptr, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(cc1d_precompile(rt.handle, nullptr, "sm_90", nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(cc1d_precompile(rt.handle, "op=fwd", nullptr, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(cc1d_runtime_stats(rt.handle, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    std::size_t bytes = 7;
    CHECK(cc1d_backward_workspace_size(rt.handle, nullptr, &bytes) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(bytes == 0);
    CHECK(cc1d_runtime_stats(nullptr, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(cc1d_device_target(nullptr, nullptr, 0, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK(cc1d_cache_dir(nullptr, nullptr, 0, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("bad fields are caught by the ABI layer with a message naming them") {
    ScopedRuntime rt;
    cc1d_forward_args args = valid_forward_args();

    SUBCASE("struct_size zero") {
        args.struct_size = 0;
        CHECK(cc1d_forward(rt.handle, &args, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "struct_size is 0"));
    }
    SUBCASE("struct_size garbage") {
        args.struct_size = static_cast<std::size_t>(-1);
        CHECK(cc1d_forward(rt.handle, &args, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "_init()"));
    }
    SUBCASE("dtype out of range") {
        args.x.dtype = 9;
        CHECK(cc1d_forward(rt.handle, &args, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "x: dtype 9"));
    }
    SUBCASE("rank out of range") {
        args.weight.rank = 4;
        CHECK(cc1d_forward(rt.handle, &args, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "weight: rank is 4"));
    }
    SUBCASE("activation out of range") {
        args.activation = 5;
        CHECK(cc1d_forward(rt.handle, &args, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "activation 5"));
    }
    SUBCASE("reserved field set") {
        args.reserved0 = 1;
        CHECK(cc1d_forward(rt.handle, &args, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "reserved0"));
    }
    SUBCASE("shape errors reach the Runtime's validation, message and all") {
        args.x = cc1d_tensor{};   // absent
        CHECK(cc1d_forward(rt.handle, &args, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "x"));
    }
}

TEST_CASE("a struct from a newer ABI: zero tail accepted, set tail refused") {
    ScopedRuntime rt;
    struct Newer {
        cc1d_forward_args known;
        std::int64_t future_field;
    } newer{};
    newer.known = valid_forward_args();
    newer.known.struct_size = sizeof(Newer);
    newer.known.x = cc1d_tensor{};   // stop in validation whether or not a GPU is present

    newer.future_field = 0;
    CHECK(cc1d_forward(rt.handle, &newer.known, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    CHECK_FALSE(contains(last_error(), "newer cc1d ABI"));

    newer.future_field = 42;
    CHECK(cc1d_forward(rt.handle, &newer.known, nullptr) == CC1D_STATUS_UNSUPPORTED);
    CHECK(contains(last_error(), "newer cc1d ABI"));
}

TEST_CASE("without a GPU the calls report backend_unavailable") {
    ScopedRuntime rt;
    if (gpu_present(rt.handle)) {
        MESSAGE("a GPU is present: the backend_unavailable path is not reachable here");
        return;
    }
    CHECK(cc1d_device_target(rt.handle, nullptr, 0, nullptr) == CC1D_STATUS_BACKEND_UNAVAILABLE);
    CHECK_FALSE(last_error().empty());
    cc1d_forward_args args = valid_forward_args();
    CHECK(cc1d_forward(rt.handle, &args, nullptr) == CC1D_STATUS_BACKEND_UNAVAILABLE);
    CHECK_FALSE(last_error().empty());
}

TEST_CASE("the last error is per thread and cleared by a success") {
    ScopedRuntime rt;
    CHECK(cc1d_forward(rt.handle, nullptr, nullptr) == CC1D_STATUS_INVALID_ARGUMENT);
    const std::string mine = last_error();
    CHECK_FALSE(mine.empty());

    std::string seen_by_other = "unset";
    std::thread([&] { seen_by_other = cc1d_last_error(); }).join();
    CHECK(seen_by_other.empty());
    CHECK(last_error() == mine);

    cc1d_stats stats;
    cc1d_stats_init(&stats);
    CHECK(cc1d_runtime_stats(rt.handle, &stats) == CC1D_STATUS_OK);
    CHECK(last_error().empty());
}

TEST_CASE("stats fill only what the caller's struct holds") {
    ScopedRuntime rt;
    cc1d_stats stats;
    cc1d_stats_init(&stats);
    CHECK(cc1d_runtime_stats(rt.handle, &stats) == CC1D_STATUS_OK);
    CHECK(stats.struct_size == sizeof(cc1d_stats));
    CHECK(stats.launches == 0);
    CHECK(stats.compiles == 0);

    // An older caller whose struct ended after memory_hits.
    cc1d_stats older;
    std::memset(&older, 0xAB, sizeof older);
    older.struct_size = offsetof(cc1d_stats, disk_hits);
    CHECK(cc1d_runtime_stats(rt.handle, &older) == CC1D_STATUS_OK);
    CHECK(older.memory_hits == 0);
    CHECK(older.struct_size == offsetof(cc1d_stats, disk_hits));
    std::uint64_t untouched;
    std::memset(&untouched, 0xAB, sizeof untouched);
    CHECK(older.disk_hits == untouched);
    CHECK(older.launches == untouched);
}

TEST_CASE("text results: query the length, too small a buffer, a copy") {
    const auto dir = std::filesystem::temp_directory_path() / "cc1d-test-c-api-cache";
    const std::string dir_text = dir.string();
    cc1d_runtime_options options;
    cc1d_runtime_options_init(&options);
    options.cache_dir = dir_text.c_str();
    cc1d_runtime* runtime = nullptr;
    REQUIRE(cc1d_runtime_create(&options, &runtime) == CC1D_STATUS_OK);

    std::size_t length = 0;
    REQUIRE(cc1d_cache_dir(runtime, nullptr, 0, &length) == CC1D_STATUS_OK);
    if (length == 0) {
        MESSAGE("the disk cache is off in this environment (CC1D_DISABLE_DISK_CACHE)");
    } else {
        std::vector<char> small(length);   // one byte short: no room for the NUL
        CHECK(cc1d_cache_dir(runtime, small.data(), small.size(), &length) == CC1D_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "too small"));
        std::vector<char> buffer(length + 1, 'x');
        CHECK(cc1d_cache_dir(runtime, buffer.data(), buffer.size(), &length) == CC1D_STATUS_OK);
        CHECK(std::strlen(buffer.data()) == length);
        CHECK(contains(buffer.data(), "cc1d-test-c-api-cache"));
    }
    CHECK(cc1d_cache_dir(runtime, nullptr, 5, &length) == CC1D_STATUS_INVALID_ARGUMENT);
    cc1d_runtime_destroy(runtime);
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
}

TEST_CASE("precompile of a malformed variant is a status, not an exception") {
    ScopedRuntime rt;
    std::int32_t compiled = 7;
    CHECK(cc1d_precompile(rt.handle, "op=no_such_op", "sm_90", &compiled) != CC1D_STATUS_OK);
    CHECK(compiled == 0);
    CHECK_FALSE(last_error().empty());
}

// ---- the header as C -----------------------------------------------------------------

namespace {

struct Field {
    const char* type;
    const char* name;
    std::size_t offset;
};
#define CC1D_FIELD(T, f) Field{#T, #f, offsetof(T, f)}

std::vector<Field> abi_fields() {
    return {
        CC1D_FIELD(cc1d_tensor, data), CC1D_FIELD(cc1d_tensor, dtype), CC1D_FIELD(cc1d_tensor, rank),
        CC1D_FIELD(cc1d_tensor, shape), CC1D_FIELD(cc1d_tensor, strides),
        CC1D_FIELD(cc1d_forward_args, x), CC1D_FIELD(cc1d_forward_args, out),
        CC1D_FIELD(cc1d_forward_args, activation), CC1D_FIELD(cc1d_forward_args, seq_idx),
        CC1D_FIELD(cc1d_forward_args, final_states),
        CC1D_FIELD(cc1d_backward_args, dx), CC1D_FIELD(cc1d_backward_args, activation),
        CC1D_FIELD(cc1d_backward_args, deterministic), CC1D_FIELD(cc1d_backward_args, seq_idx),
        CC1D_FIELD(cc1d_backward_args, dfinal_states), CC1D_FIELD(cc1d_backward_args, workspace),
        CC1D_FIELD(cc1d_backward_args, workspace_bytes),
        CC1D_FIELD(cc1d_update_args, conv_state), CC1D_FIELD(cc1d_update_args, activation),
        CC1D_FIELD(cc1d_update_args, pad_slot_id), CC1D_FIELD(cc1d_update_args, conv_state_indices),
        CC1D_FIELD(cc1d_varlen_forward_args, out), CC1D_FIELD(cc1d_varlen_forward_args, pad_slot_id),
        CC1D_FIELD(cc1d_varlen_forward_args, has_initial_state),
        CC1D_FIELD(cc1d_runtime_options, cache_dir), CC1D_FIELD(cc1d_runtime_options, disk_cache),
        CC1D_FIELD(cc1d_runtime_options, log_level),
        CC1D_FIELD(cc1d_stats, memory_hits), CC1D_FIELD(cc1d_stats, compile_seconds),
        CC1D_FIELD(cc1d_stats, launches),
    };
}

std::string include_dir() {
    if (const char* source = std::getenv("CC1D_TEST_SOURCE_DIR")) return std::string(source) + "/include";
    return (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "include").string();
}

// The C compiler: $CC, else `cc`. Empty when none answers.
std::string c_compiler() {
    const char* env = std::getenv("CC");
    const std::string cc = env != nullptr && *env != '\0' ? env : "cc";
    if (std::system((cc + " --version > /dev/null 2>&1").c_str()) != 0) return {};
    return cc;
}

}  // namespace

TEST_CASE("cc1d.h compiles as strict C and lays out its structs as C++ does") {
    const std::string cc = c_compiler();
    if (cc.empty()) {
        MESSAGE("no C compiler found ($CC or cc): the C compile check is not run");
        return;
    }
    const auto dir = std::filesystem::temp_directory_path() / ("cc1d-test-c-header-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto source = dir / "uses_header.c";
    {
        std::ofstream out(source);
        out << "#include <stddef.h>\n#include \"cc1d/cc1d.h\"\n";
        const char* types[] = {"cc1d_tensor", "cc1d_forward_args", "cc1d_backward_args", "cc1d_update_args",
                               "cc1d_varlen_forward_args", "cc1d_runtime_options", "cc1d_stats"};
        const std::size_t sizes[] = {sizeof(cc1d_tensor), sizeof(cc1d_forward_args), sizeof(cc1d_backward_args),
                                     sizeof(cc1d_update_args), sizeof(cc1d_varlen_forward_args),
                                     sizeof(cc1d_runtime_options), sizeof(cc1d_stats)};
        for (std::size_t i = 0; i < std::size(types); ++i)
            out << "_Static_assert(sizeof(" << types[i] << ") == " << sizes[i] << ", \"sizeof " << types[i] << "\");\n";
        for (const Field& f : abi_fields())
            out << "_Static_assert(offsetof(" << f.type << ", " << f.name << ") == " << f.offset << ", \"" << f.type
                << "." << f.name << "\");\n";
        out << "int uses_header(cc1d_runtime* rt) {\n"
               "    cc1d_forward_args args;\n"
               "    cc1d_forward_args_init(&args);\n"
               "    return cc1d_forward(rt, &args, NULL) == CC1D_STATUS_OK ? 0 : (int)cc1d_abi_version();\n"
               "}\n";
    }
    const std::string flags = " -Wall -Wextra -pedantic -Werror -I\"" + include_dir() + "\" -c \"" + source.string() +
                              "\" -o \"" + (dir / "uses_header.o").string() + "\" 2>&1";
    for (const char* standard : {"-std=c11", "-std=c17"}) {
        const std::string command = cc + " " + standard + flags;
        INFO(command);
        CHECK(std::system(command.c_str()) == 0);
    }
    // C99 has no _Static_assert: compile only the header and the init helpers there.
    const auto c99 = dir / "c99.c";
    std::ofstream(c99) << "#include \"cc1d/cc1d.h\"\n"
                          "size_t c99(void) { cc1d_backward_args a; cc1d_backward_args_init(&a); return a.struct_size; }\n";
    const std::string command = cc + " -std=c99 -Wall -Wextra -pedantic -Werror -I\"" + include_dir() + "\" -c \"" +
                                c99.string() + "\" -o \"" + (dir / "c99.o").string() + "\" 2>&1";
    INFO(command);
    CHECK(std::system(command.c_str()) == 0);
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
}
