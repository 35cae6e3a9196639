// Real processes sharing one cold cache folder: 8 forked children store and load the
// same entries at once. No process ever sees a bad entry, every load after the stores
// returns the exact payload, every entry verifies and no temp file is left.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "cache/cache_scan.hpp"
#include "cache/disk_cache.hpp"
#include "unit/cache_test_support.hpp"

using namespace cc1d::cache;
using namespace cc1d::cache::test;

namespace {

constexpr int process_count = 8;
constexpr int shared_keys = 24;     // every process stores all of these
constexpr int own_keys = 4;         // and a few of its own
constexpr std::size_t payload_size = 256 * 1024;

std::string shared_name(int i) { return "op=fwd,width=" + std::to_string(i); }
std::string own_name(int process, int i) { return "op=bwd,width=" + std::to_string(process * 100 + i); }

// The child's work; returns the number of wrong results (a load that returned
// something other than nothing or the exact payload, a failed store).
int child(const std::string& root, int index) {
    DiskCache cache(config_at(root));
    int wrong = 0;
    auto store_and_check = [&](const std::string& name) {
        CacheKey key = make_key(sample_inputs(name));
        std::string payload = sample_payload(name, payload_size);
        auto before = cache.load(key, sample_location());
        if (before && *before != payload) ++wrong;
        if (!cache.store(key, sample_location(), payload, sample_info(name))) ++wrong;
    };
    // Each process starts at a different key, so stores of one key overlap in time.
    for (int i = 0; i < shared_keys; ++i) store_and_check(shared_name((i + index * 3) % shared_keys));
    for (int i = 0; i < own_keys; ++i) store_and_check(own_name(index, i));
    for (int i = 0; i < shared_keys; ++i) {
        std::string name = shared_name(i);
        if (cache.load(make_key(sample_inputs(name)), sample_location()) != sample_payload(name, payload_size)) ++wrong;
    }
    for (int i = 0; i < own_keys; ++i) {
        std::string name = own_name(index, i);
        if (cache.load(make_key(sample_inputs(name)), sample_location()) != sample_payload(name, payload_size)) ++wrong;
    }
    if (!cache.enabled()) ++wrong;
    return wrong;
}

std::string child_log(const TempDir& dir, int index) { return dir.sub("child-" + std::to_string(index) + ".log"); }

}  // namespace

TEST_CASE("8 processes fill one cold cache folder at once") {
    CleanCacheEnv env;
    TempDir dir;
    const std::string root = dir.sub("cold/cache");   // not there yet: the children create it

    int start[2];
    REQUIRE(::pipe(start) == 0);
    std::vector<pid_t> children;
    for (int index = 0; index < process_count; ++index) {
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::close(start[1]);
            char byte;
            while (::read(start[0], &byte, 1) < 0) {
            }   // returns 0 when the parent closes its end: all start together
            // Each child's log goes to its own file: any warning means some process saw a
            // bad entry (a half-written file, say) or lost the folder.
            int log = ::open(child_log(dir, index).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(log, 2);
            int wrong = 0;
            try {
                wrong = child(root, index);
            } catch (...) {
                wrong = 99;
            }
            ::_exit(wrong > 99 ? 99 : wrong);   // never back into the test runner
        }
        children.push_back(pid);
    }
    ::close(start[0]);
    ::close(start[1]);

    for (pid_t pid : children) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    for (int index = 0; index < process_count; ++index) {
        CAPTURE(index);
        CHECK(read_bytes(child_log(dir, index)) == "");
    }

    CacheScan scan = scan_cache(root);
    CHECK(scan.entries.size() == static_cast<std::size_t>(shared_keys + process_count * own_keys));
    for (const auto& entry : scan.entries) {
        auto key = CacheKey::from_hex(entry.key_hex);
        REQUIRE(key);
        std::string why;
        auto payload = decode_entry(read_bytes(entry.path), *key, &why);
        CHECK_MESSAGE(payload.has_value(), entry.path << ": " << why);
        REQUIRE(entry.sidecar.has_value());
        CHECK(entry.sidecar->key == entry.key_hex);
        CHECK(make_key(sample_inputs(entry.sidecar->variant)) == *key);
        if (payload) CHECK(*payload == sample_payload(entry.sidecar->variant, payload_size));
    }
    CHECK(scan.temp_files.empty());
    CHECK(scan.orphan_sidecars.empty());
    CHECK(scan.strays.empty());
    CHECK(temp_files_under(root).empty());
}
