#include "api/kernel_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "codegen/render.hpp"
#include "common/env.hpp"
#include "common/fail.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "rtc/option_text.hpp"

namespace cc1d {
namespace {

std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

// Threads a module whose compile splits (codegen::splits_compile) may take: two, for its
// two large kernels (one on a one-core host), or CC1D_COMPILE_THREADS when that is a
// positive number (1: never split).
unsigned compile_threads() {
    if (const auto text = env::get("CC1D_COMPILE_THREADS")) {
        char* end = nullptr;
        const long threads = std::strtol(text->c_str(), &end, 10);
        if (end != text->c_str() && *end == 0 && threads >= 1 && threads <= 1024) return static_cast<unsigned>(threads);
        log::warn("CC1D_COMPILE_THREADS='{}' ignored (expected a whole number from 1 to 1024)", *text);
    }
    return std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
}

// CC1D_DUMP_SOURCE_ON_ERROR=1: keep the failing source where a person can open it.
std::string dump_source(const codegen::RenderedSource& source) {
    if (!env::flag("CC1D_DUMP_SOURCE_ON_ERROR")) return "";
    const std::string path = fmt::format("/tmp/cc1d-{}-{}", ::getpid(), source.name);
    std::ofstream file(path, std::ios::binary);
    file << source.text;
    return file ? fmt::format(" (source written to {})", path) : "";
}

}  // namespace

KernelStore::KernelStore(cache::DiskCache& disk, StoreCounters& counters) : disk_(disk), counters_(counters) {}
KernelStore::~KernelStore() {
    // Modules go with the store; a driver already shut down at process exit makes these
    // calls fail harmlessly (unload_module ignores errors).
    for (auto& [device, module] : modules_) device->unload_module(module);
}

rtc::Compiler& KernelStore::compiler_for(const std::string& name, bool by_target) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string backend = by_target ? (name.rfind("sm_", 0) == 0 ? "cuda" : "hip") : name;
    auto& slot = compilers_[backend];
    if (!slot) slot = by_target ? rtc::open_compiler_for_target(name) : (backend == "cuda" ? rtc::open_nvrtc() : rtc::open_hiprtc());
    return *slot;
}

const std::string& KernelStore::device_target(device::Device& device, int ordinal) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = targets_.find(ordinal);
    if (it == targets_.end()) it = targets_.emplace(ordinal, device.target(ordinal)).first;
    return it->second;
}

KernelStore::CodeObject KernelStore::code_object(const Variant& variant, rtc::Compiler& compiler,
                                                 const std::string& target, bool use_disk) {
    const auto source = codegen::render_source(variant, compiler.backend());
    CodeObject code;
    const std::string options = rtc::join_options(compiler.options(target));
    code.where = {compiler.backend(), compiler.identity(), target};
    code.key = cache::make_key({variant.canonical(), source.text, options, code.where.compiler, target, version(),
                                cache_format_version});
    if (use_disk && !env::flag("CC1D_ALWAYS_COMPILE")) {
        if (auto bytes = disk_.load(code.key, code.where)) {
            code.bytes = std::move(*bytes);
            code.from_disk = true;
            return code;
        }
    }
    const auto start = std::chrono::steady_clock::now();
    auto result = compiler.compile({source.text, source.name, target, source.split_compile ? compile_threads() : 1u});
    counters_.compile_ns += elapsed_ns(start);
    if (!result.ok) {
        ++counters_.compile_failures;
        throw Error(ErrorCode::compile_failed,
                    fmt::format("compiling {} for {} with {} failed{}:\n{}", source.name, target, code.where.compiler,
                                dump_source(source), result.log),
                    Error::CompileDetails{result.log, result.options, target, source.name});
    }
    ++counters_.compiles;
    log::debug("compiled {} for {} in {:.3f} s", variant.canonical(), target, result.seconds);
    if (!result.log.empty()) log::debug("compiler messages for {} ({}):\n{}", source.name, target, result.log);
    code.bytes = std::move(result.code_object);
    disk_.store(code.key, code.where, code.bytes, {variant.canonical(), options, source.name, version()});
    return code;
}

LoadedKernel KernelStore::load(device::Device& device, int ordinal, const Variant& variant) {
    rtc::Compiler& compiler = compiler_for(device.backend(), false);
    const std::string& target = device_target(device, ordinal);
    const auto start = std::chrono::steady_clock::now();
    CodeObject code = code_object(variant, compiler, target, true);
    const auto entry = variant.entry_name();
    auto resolve = [&](void* module) {
        LoadedKernel k;
        k.module = module;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            modules_.emplace_back(&device, module);
        }
        try {
            k.main = device.get_function(module, entry);
            const char* second = codegen::second_kernel(variant).suffix;
            if (*second != 0) k.second = device.get_function(module, entry + second);
            const char* third = codegen::third_kernel(variant).suffix;
            if (*third != 0) k.third = device.get_function(module, entry + third);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            modules_.erase(std::find(modules_.begin(), modules_.end(), std::make_pair(&device, module)));
            device.unload_module(module);
            throw;
        }
        return k;
    };
    if (code.from_disk) {
        try {
            LoadedKernel k = resolve(device.load_module(code.bytes));
            ++counters_.disk_hits;
            counters_.disk_load_ns += elapsed_ns(start);
            return k;
        } catch (const Error& e) {
            // A verified entry the driver still refuses (a driver downgrade, say): drop it
            // and compile afresh, as for any other bad entry.
            log::warn_once("driver-refused:" + code.key.hex(),
                           fmt::format("cached code object for {} was refused by the driver ({}); recompiling",
                                       variant.canonical(), e.what()));
            disk_.remove(code.key, code.where);
            code = code_object(variant, compiler, target, false);
        }
    }
    return resolve(device.load_module(code.bytes));
}

const LoadedKernel& KernelStore::get(device::Device& device, int ordinal, const Variant& variant) {
    const std::uint64_t key = (static_cast<std::uint64_t>(ordinal) << 32) | variant.packed();
    bool hit = false;
    auto kernel = kernels_.get(key, [&] { return load(device, ordinal, variant); }, &hit);
    if (hit) ++counters_.memory_hits;
    // Entries live as long as the store, so the reference stays valid.
    return *kernel;
}

bool KernelStore::precompile(const Variant& variant, const std::string& target) {
    rtc::Compiler& compiler = compiler_for(target, true);
    if (!compiler.accepts_target(target))
        fail(ErrorCode::invalid_argument, "target '{}' is not a {} target", target, compiler.backend());
    return !code_object(variant, compiler, target, true).from_disk;
}

}  // namespace cc1d
