// DiskCache: layout, entry verification, bad entries, publishing, failing folders, the
// system cache, switches, and threads sharing one folder.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <set>
#include <thread>

#include "cache/disk_cache.hpp"
#include "unit/cache_test_support.hpp"

using namespace cc1d::cache;
using namespace cc1d::cache::test;

namespace {

struct Sample {
    CacheKey key;
    std::string payload;
};

Sample sample(const std::string& name, std::size_t size = 100000) {
    return {make_key(sample_inputs(name)), sample_payload(name, size)};
}

std::string sidecar_of(const std::string& entry_path) {
    return entry_path.substr(0, entry_path.size() - 4) + ".json";
}

// Ways to damage a stored entry, as found in real caches.
enum class Damage { truncated, empty, bit_flip, wrong_key, old_format };

void damage(const std::string& path, Damage how, const std::string& other_entry_path) {
    std::string bytes = read_bytes(path);
    switch (how) {
        case Damage::truncated: bytes.resize(bytes.size() / 2); break;
        case Damage::empty: bytes.clear(); break;
        case Damage::bit_flip: bytes[bytes.size() - 1000] ^= 0x10; break;
        case Damage::wrong_key: bytes = read_bytes(other_entry_path); break;
        case Damage::old_format: bytes[8] = static_cast<char>(cc1d::cache_format_version - 1); break;
    }
    write_bytes(path, bytes);
}

}  // namespace

TEST_CASE("an entry lives at <root>/v<format>/<backend>-<compiler>/<target>/<2 hex>/<key>.bin beside a sidecar") {
    CleanCacheEnv env;
    TempDir dir;
    DiskCache cache(config_at(dir.path() + "/"));   // a trailing slash changes nothing
    Sample a = sample("a");
    REQUIRE(cache.store(a.key, sample_location(), a.payload, sample_info("a")));

    std::string hex = a.key.hex();
    std::string expected = dir.path() + "/v" + std::to_string(cc1d::cache_format_version) + "/cuda-nvrtc-13.0/sm_90/" +
                           hex.substr(0, 2) + "/" + hex + ".bin";
    CHECK(cache.entry_path(a.key, sample_location()) == expected);
    CHECK(cache.root() == dir.path());
    CHECK(read_bytes(expected) == encode_entry(a.key, a.payload));
    CHECK(cache.load(a.key, sample_location()) == a.payload);

    auto json = nlohmann::json::parse(read_bytes(sidecar_of(expected)));
    CHECK(json["key"] == hex);
    CHECK(json["variant"] == "a");
    CHECK(json["options"] == "--std=c++17 -arch=sm_90");
    CHECK(json["source_name"] == "k.cu");
    CHECK(json["library_version"] == CC1D_VERSION_STRING);
    CHECK(json["target"] == "sm_90");
    CHECK(json["compiler"] == "nvrtc-13.0");
    CHECK(json["backend"] == "cuda");
    CHECK(json["payload_size"] == a.payload.size());
    CHECK(json["format_version"] == cc1d::cache_format_version);
    std::string created = json["created"];
    CHECK(created.size() == 20);
    CHECK(created.back() == 'Z');
    CHECK(temp_files_under(dir.path()).empty());
}

TEST_CASE("publishing writes a unique temp file in the entry's folder, then renames it into place") {
    CleanCacheEnv env;
    TempDir dir;
    auto fs = std::make_shared<FaultyFileSystem>();
    DiskCache cache(config_at(dir.path(), fs));
    Sample a = sample("a");
    REQUIRE(cache.store(a.key, sample_location(), a.payload, sample_info()));
    REQUIRE(cache.store(a.key, sample_location(), a.payload, sample_info()));
    std::string entry = cache.entry_path(a.key, sample_location());
    std::vector<std::string> finals = {entry, sidecar_of(entry), entry, sidecar_of(entry)};

    REQUIRE(fs->written.size() == 4);
    REQUIRE(fs->renamed.size() == 4);
    std::set<std::string> temp_names;
    for (std::size_t i = 0; i < 4; ++i) {
        CAPTURE(fs->written[i]);
        CHECK(fs->written[i].rfind(finals[i] + ".tmp.", 0) == 0);   // same folder, never the final name
        CHECK(fs->renamed[i] == std::make_pair(fs->written[i], finals[i]));
        CHECK(temp_names.insert(fs->written[i]).second);
    }
    CHECK(temp_files_under(dir.path()).empty());
}

TEST_CASE("folder names stay below the root whatever the target says") {
    CleanCacheEnv env;
    TempDir dir;
    DiskCache cache(config_at(dir.sub("root")));
    Sample a = sample("a");
    EntryLocation amd{"hip", "hiprtc-5.2", "gfx942:sramecc+:xnack-"};
    CHECK(cache.entry_path(a.key, amd).find("/hip-hiprtc-5.2/gfx942:sramecc+:xnack-/") != std::string::npos);
    EntryLocation hostile{"cuda", "../..", "../../etc"};
    std::string path = cache.entry_path(a.key, hostile);
    CHECK(path.find("/../") == std::string::npos);
    REQUIRE(cache.store(a.key, hostile, a.payload, sample_info()));
    CHECK(files_under(dir.sub("root")) == 2);
    CHECK(files_under(dir.path()) == 2);
}

TEST_CASE("default root: CC1D_CACHE_DIR, else $XDG_CACHE_HOME/cc1d, else $HOME/.cache/cc1d") {
    ScopedEnv home("HOME", "/home/someone");
    {
        ScopedEnv dir("CC1D_CACHE_DIR", "/cache/here");
        ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
        CHECK(default_root() == "/cache/here");
    }
    {
        ScopedEnv dir("CC1D_CACHE_DIR", nullptr);
        ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
        CHECK(default_root() == "/xdg/cc1d");
    }
    {
        ScopedEnv dir("CC1D_CACHE_DIR", nullptr);
        ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
        CHECK(default_root() == "/home/someone/.cache/cc1d");
        ScopedEnv relative("XDG_CACHE_HOME", "relative/path");   // invalid by the XDG spec: ignored
        CHECK(default_root() == "/home/someone/.cache/cc1d");
    }
    CleanCacheEnv clean;
    TempDir dir;
    ScopedEnv root("CC1D_CACHE_DIR", dir.path().c_str());
    DiskCache cache(DiskCacheConfig{});
    CHECK(cache.root() == dir.path());
}

TEST_CASE("decoding checks the magic, format, key, size and checksum") {
    Sample a = sample("a"), b = sample("b");
    std::string entry = encode_entry(a.key, a.payload);
    std::string why;
    CHECK(decode_entry(entry, a.key, &why) == a.payload);
    CHECK(decode_entry(encode_entry(a.key, ""), a.key, &why) == std::string());

    CHECK_FALSE(decode_entry(entry, b.key, &why));
    CHECK(why.find("another key") != std::string::npos);
    CHECK_FALSE(decode_entry("", a.key, &why));
    CHECK(why.find("empty") != std::string::npos);
    CHECK_FALSE(decode_entry(entry + "x", a.key, &why));

    // Every single-bit flip in the header, and a spread of them in the payload.
    for (std::size_t byte = 0; byte < entry.size(); byte += byte < 64 ? 1 : 997) {
        for (int bit = 0; bit < 8; ++bit) {
            std::string flipped = entry;
            flipped[byte] = static_cast<char>(flipped[byte] ^ (1 << bit));
            INFO("byte " << byte << " bit " << bit);
            CHECK_FALSE(decode_entry(flipped, a.key, &why));
        }
    }
    // Every truncation of a small entry.
    std::string small = encode_entry(a.key, "payload");
    for (std::size_t size = 0; size < small.size(); ++size) {
        INFO("size " << size);
        CHECK_FALSE(decode_entry(small.substr(0, size), a.key, &why));
    }
}

TEST_CASE("a bad entry is reported once, removed, reported as a miss, and replaced by the next store") {
    const std::pair<Damage, const char*> kinds[] = {
        {Damage::truncated, "truncated"},          {Damage::empty, "empty"},
        {Damage::bit_flip, "checksum mismatch"},   {Damage::wrong_key, "another key"},
        {Damage::old_format, "another entry format"},
    };
    for (auto [how, words] : kinds) {
        CAPTURE(words);
        CleanCacheEnv env;
        TempDir dir;
        DiskCache cache(config_at(dir.path()));
        Sample a = sample("a"), b = sample("b"), c = sample("c");
        for (auto* s : {&a, &b, &c}) REQUIRE(cache.store(s->key, sample_location(), s->payload, sample_info()));
        std::string path_a = cache.entry_path(a.key, sample_location());
        std::string path_b = cache.entry_path(b.key, sample_location());
        std::string path_c = cache.entry_path(c.key, sample_location());
        damage(path_a, how, path_c);
        damage(path_b, how, path_c);

        StderrCapture capture;
        CHECK_FALSE(cache.load(a.key, sample_location()));
        CHECK_FALSE(cache.load(a.key, sample_location()));   // now simply missing
        CHECK_FALSE(cache.load(b.key, sample_location()));   // same problem again: not reported again
        std::string log = capture.text();
        CHECK(count_of(log, "warning") == 1);
        CHECK(count_of(log, path_a) == 1);
        CHECK(log.find(words) != std::string::npos);
        for (const auto& path : {path_a, path_b}) {
            CHECK_FALSE(std::filesystem::exists(path));
            CHECK_FALSE(std::filesystem::exists(sidecar_of(path)));
        }

        CHECK(cache.enabled());
        CHECK(cache.load(c.key, sample_location()) == c.payload);
        REQUIRE(cache.store(a.key, sample_location(), a.payload, sample_info()));
        CHECK(cache.load(a.key, sample_location()) == a.payload);
    }
}

TEST_CASE("losing the rename race to a valid entry of the same key is success") {
    CleanCacheEnv env;
    TempDir dir;
    auto fs = std::make_shared<FaultyFileSystem>();
    DiskCache cache(config_at(dir.path(), fs));
    DiskCache rival(config_at(dir.path()));
    Sample a = sample("a");
    // The entry's rename loses: the rival publishes first and ours fails.
    fs->before_rename = [&](const std::string& to) {
        bool entry = to.size() > 4 && to.compare(to.size() - 4, 4, ".bin") == 0;
        if (entry) REQUIRE(rival.store(a.key, sample_location(), a.payload, sample_info()));
        fs->fail_rename = entry;
    };

    StderrCapture capture;
    CHECK(cache.store(a.key, sample_location(), a.payload, sample_info()));
    CHECK(capture.text().empty());
    CHECK(cache.enabled());
    fs->before_rename = nullptr;
    fs->fail_rename = false;
    CHECK(cache.load(a.key, sample_location()) == a.payload);
    CHECK(temp_files_under(dir.path()).empty());
}

TEST_CASE("a failing folder means one warning, then memory-only operation; nothing throws") {
    enum class Failure { cannot_create, disk_full, rename_fails, root_is_a_file };
    for (Failure failure : {Failure::cannot_create, Failure::disk_full, Failure::rename_fails, Failure::root_is_a_file}) {
        CAPTURE(static_cast<int>(failure));
        CleanCacheEnv env;
        TempDir dir;
        std::string root = dir.sub("cache");
        Sample present = sample("present"), a = sample("a"), b = sample("b");
        auto fs = std::make_shared<FaultyFileSystem>();
        if (failure == Failure::root_is_a_file) write_bytes(root, "not a folder");
        else REQUIRE(DiskCache(config_at(root)).store(present.key, sample_location(), present.payload, sample_info()));
        fs->fail_create_directories = failure == Failure::cannot_create;
        fs->fail_write = failure == Failure::disk_full;
        fs->fail_rename = failure == Failure::rename_fails;
        DiskCache cache(config_at(root, fs));

        StderrCapture capture;
        bool stored = true, stored_again = true;
        std::optional<std::string> loaded;
        CHECK_NOTHROW(stored = cache.store(a.key, sample_location(), a.payload, sample_info()));
        CHECK_NOTHROW(loaded = cache.load(present.key, sample_location()));
        CHECK_NOTHROW(stored_again = cache.store(b.key, sample_location(), b.payload, sample_info()));
        CHECK_NOTHROW(cache.remove(present.key, sample_location()));
        std::string log = capture.text();

        CHECK_FALSE(stored);
        CHECK_FALSE(stored_again);
        CHECK_FALSE(loaded);             // memory only: the folder is not read either
        CHECK_FALSE(cache.enabled());
        CHECK(cache.root().empty());
        CHECK(count_of(log, "warning") == 1);
        CHECK(log.find(root) != std::string::npos);
        CHECK(log.find("memory only") != std::string::npos);
        if (failure != Failure::root_is_a_file) {
            CHECK(temp_files_under(root).empty());
            CHECK(DiskCache(config_at(root)).load(present.key, sample_location()) == present.payload);
        }
    }
}

TEST_CASE("the system cache is searched after the user cache and never written or cleaned") {
    CleanCacheEnv env;
    TempDir dir;
    std::string system = dir.sub("system"), user = dir.sub("user");
    Sample a = sample("a"), b = sample("b"), c = sample("c");
    {
        DiskCache filler(config_at(system));
        for (auto* s : {&a, &c}) REQUIRE(filler.store(s->key, sample_location(), s->payload, sample_info()));
    }
    const std::size_t system_files = files_under(system);
    DiskCacheConfig config = config_at(user);
    config.system_root = system;
    DiskCache cache(config);

    CHECK(cache.load(a.key, sample_location()) == a.payload);            // found in the system cache
    REQUIRE(cache.store(b.key, sample_location(), b.payload, sample_info()));
    CHECK(cache.load(b.key, sample_location()) == b.payload);
    REQUIRE(cache.store(a.key, sample_location(), "user copy", sample_info()));
    CHECK(cache.load(a.key, sample_location()) == "user copy");          // the user cache first
    cache.remove(a.key, sample_location());
    CHECK(cache.load(a.key, sample_location()) == a.payload);            // the system copy stays

    DiskCache system_only(config_at(system));
    std::string system_c = system_only.entry_path(c.key, sample_location());
    damage(system_c, Damage::bit_flip, "");
    const std::string damaged = read_bytes(system_c);
    StderrCapture capture;
    CHECK_FALSE(cache.load(c.key, sample_location()));
    std::string log = capture.text();
    CHECK(count_of(log, "warning") == 1);
    CHECK(log.find("skipped") != std::string::npos);
    CHECK(read_bytes(system_c) == damaged);                               // not removed
    CHECK(files_under(system) == system_files);

    ScopedEnv from_env("CC1D_SYSTEM_CACHE_DIR", system.c_str());
    DiskCache env_configured(config_at(dir.sub("other-user")));
    CHECK(env_configured.load(b.key, sample_location()) == std::nullopt);
    CHECK(env_configured.load(c.key, sample_location()) == std::nullopt);
    CHECK(files_under(system) == system_files);
    DiskCache(config_at(system)).remove(c.key, sample_location());        // a writable copy may clean
    REQUIRE(DiskCache(config_at(system)).store(c.key, sample_location(), c.payload, sample_info()));
    CHECK(env_configured.load(c.key, sample_location()) == c.payload);
}

TEST_CASE("a switched-off cache does nothing at all") {
    Sample a = sample("a");
    for (bool by_env : {false, true}) {
        CAPTURE(by_env);
        CleanCacheEnv env;
        TempDir dir;
        std::string root = dir.sub("cache");
        REQUIRE(DiskCache(config_at(root)).store(a.key, sample_location(), a.payload, sample_info()));
        const std::size_t files = files_under(root);
        ScopedEnv disable("CC1D_DISABLE_DISK_CACHE", by_env ? "1" : nullptr);
        DiskCacheConfig config = config_at(root);
        config.enabled = !by_env ? false : true;
        config.system_root = root;
        StderrCapture capture;
        DiskCache cache(config);
        CHECK_FALSE(cache.enabled());
        CHECK(cache.root().empty());
        CHECK_FALSE(cache.load(a.key, sample_location()));
        CHECK_FALSE(cache.store(sample("b").key, sample_location(), "x", sample_info()));
        cache.remove(a.key, sample_location());
        CHECK(capture.text().empty());
        CHECK(files_under(root) == files);
    }
}

TEST_CASE("CC1D_ALWAYS_COMPILE: loads miss, stores still replace") {
    CleanCacheEnv env;
    TempDir dir;
    Sample a = sample("a");
    REQUIRE(DiskCache(config_at(dir.path())).store(a.key, sample_location(), a.payload, sample_info()));
    ScopedEnv always("CC1D_ALWAYS_COMPILE", "1");
    DiskCache cache(config_at(dir.path()));
    CHECK_FALSE(cache.load(a.key, sample_location()));
    CHECK(cache.store(a.key, sample_location(), "fresh", sample_info()));
    ScopedEnv normal("CC1D_ALWAYS_COMPILE", nullptr);
    CHECK(DiskCache(config_at(dir.path())).load(a.key, sample_location()) == "fresh");
}

TEST_CASE("another library version never loads this version's entries") {
    CleanCacheEnv env;
    TempDir dir;
    DiskCache cache(config_at(dir.path()));
    KeyInputs now = sample_inputs("a");
    KeyInputs next = now;
    next.library_version = "99.0.0";
    REQUIRE(cache.store(make_key(now), sample_location(), "now", sample_info()));
    CHECK_FALSE(cache.load(make_key(next), sample_location()));
    CHECK(cache.entry_path(make_key(now), sample_location()).find("/v" + std::to_string(cc1d::cache_format_version) + "/") !=
          std::string::npos);
}

TEST_CASE("16 threads storing and loading one key") {
    CleanCacheEnv env;
    TempDir dir;
    DiskCache cache(config_at(dir.path()));
    Sample a = sample("shared", 1 << 20);
    std::atomic<int> wrong{0}, failed_stores{0}, hits{0};
    StderrCapture capture;   // a warning would mean a thread saw a half-written entry
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
        threads.emplace_back([&] {
            for (int round = 0; round < 20; ++round) {
                if (auto got = cache.load(a.key, sample_location())) {
                    hits += 1;
                    if (*got != a.payload) wrong += 1;
                }
                if (!cache.store(a.key, sample_location(), a.payload, sample_info())) failed_stores += 1;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    CHECK(capture.text() == "");
    CHECK(wrong == 0);
    CHECK(failed_stores == 0);
    CHECK(hits > 0);
    CHECK(cache.enabled());
    CHECK(cache.load(a.key, sample_location()) == a.payload);
    CHECK(temp_files_under(dir.path()).empty());
    CHECK(files_under(dir.path()) == 2);
}
