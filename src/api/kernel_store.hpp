// KernelStore: Variant -> loaded kernel functions on a device, through the three tiers
// of DESIGN.md (memory, disk, compile). One compile per key per process however many
// threads ask at once; a disk or driver problem with a cached entry falls back to
// compiling; only a compiler error or a driver failure on fresh code reaches the caller.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/disk_cache.hpp"
#include "cache/single_flight.hpp"
#include "cc1d/cc1d.hpp"
#include "device/device.hpp"
#include "rtc/compiler.hpp"
#include "variant/variant.hpp"

namespace cc1d {

struct LoadedKernel {
    void* module = nullptr;
    void* main = nullptr;
    void* second = nullptr;   // codegen::second_kernel of the variant, if it has one
    void* third = nullptr;    // codegen::third_kernel of the variant, if it has one
};

struct StoreCounters {
    std::atomic<std::uint64_t> memory_hits{0}, disk_hits{0}, compiles{0}, compile_failures{0}, launches{0};
    std::atomic<std::uint64_t> compile_ns{0}, disk_load_ns{0};
};

class KernelStore {
public:
    KernelStore(cache::DiskCache& disk, StoreCounters& counters);
    ~KernelStore();

    // The kernel for `variant` on device `ordinal` of `device` (loaded into its context).
    const LoadedKernel& get(device::Device& device, int ordinal, const Variant& variant);

    // Compiles `variant` for `target` into the disk cache; false when already there.
    bool precompile(const Variant& variant, const std::string& target);

private:
    struct CodeObject {
        std::string bytes;
        cache::CacheKey key;
        cache::EntryLocation where;
        bool from_disk = false;
    };
    rtc::Compiler& compiler_for(const std::string& backend_or_target, bool by_target);
    const std::string& device_target(device::Device& device, int ordinal);
    CodeObject code_object(const Variant& variant, rtc::Compiler& compiler, const std::string& target, bool use_disk);
    LoadedKernel load(device::Device& device, int ordinal, const Variant& variant);

    cache::DiskCache& disk_;
    StoreCounters& counters_;
    std::mutex mutex_;   // guards compilers_ and targets_
    std::unordered_map<std::string, std::unique_ptr<rtc::Compiler>> compilers_;
    std::unordered_map<int, std::string> targets_;
    cache::SingleFlight<std::uint64_t, LoadedKernel> kernels_;
    // Every module loaded, to unload them with the store (guarded by mutex_).
    std::vector<std::pair<device::Device*, void*>> modules_;
};

}  // namespace cc1d
