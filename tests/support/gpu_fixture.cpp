#include "support/gpu_fixture.hpp"

#include <stdlib.h>   // mkdtemp

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>

#include "common/env.hpp"
#include "common/fail.hpp"

namespace cc1d::test {
namespace {

std::unique_ptr<device::Device> open_or_skip() {
    try {
        auto device = device::open_any();
        device->current_device();   // makes the primary context current, or fails here
        return device;
    } catch (const std::exception& e) {
        // open_any's own message already says "no usable GPU: <why>"; a context failure does not.
        const std::string why = e.what();
        std::printf("SKIPPED: %s%s\n", why.rfind("no usable GPU", 0) == 0 ? "" : "no usable GPU: ", why.c_str());
        std::fflush(stdout);
        std::exit(77);
    }
}

// Folders made by temporary_directory(), removed when the process exits normally.
std::mutex folders_mutex;
std::vector<std::string>& folders_to_remove() {
    static std::vector<std::string> folders;
    return folders;
}
void remove_folders() {
    std::lock_guard<std::mutex> lock(folders_mutex);
    for (const auto& folder : folders_to_remove()) {
        std::error_code ignored;
        std::filesystem::remove_all(folder, ignored);
    }
}

std::string runtime_cache_dir() {
    if (auto shared = env::get("CC1D_TEST_CACHE_DIR")) return *shared;
    return temporary_directory();
}

}  // namespace

device::Device& gpu() {
    static const std::unique_ptr<device::Device> device = open_or_skip();
    return *device;
}

Runtime& runtime() {
    gpu();   // skip before anything else when there is no device
    // The folder's removal is registered before the Runtime is built, so it runs after
    // the Runtime is destroyed.
    static Runtime instance(RuntimeOptions{runtime_cache_dir(), true, ""});
    return instance;
}

std::string temporary_directory() {
    static std::once_flag registered;
    std::call_once(registered, [] {
        folders_to_remove();   // built before the handler is registered, so it outlives the handler
        std::atexit(remove_folders);
    });
    std::string pattern = (std::filesystem::temp_directory_path() / "cc1d-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
        fail(ErrorCode::invalid_argument, "cannot create a temporary folder from {}", pattern);
    std::lock_guard<std::mutex> lock(folders_mutex);
    folders_to_remove().push_back(pattern);
    return pattern;
}

std::uint32_t base_seed() {
    static const std::uint32_t seed = [] {
        std::uint32_t s;
        if (auto text = env::get("CC1D_TEST_SEED"))
            s = static_cast<std::uint32_t>(std::stoul(*text));
        else
            s = std::random_device{}();
        std::printf("random seed %u (set CC1D_TEST_SEED=%u to repeat this run)\n", s, s);
        std::fflush(stdout);
        return s;
    }();
    return seed;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes != 0) data_ = gpu().allocate(bytes);
}

DeviceBuffer::~DeviceBuffer() {
    if (data_ != nullptr) gpu().release(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (data_ != nullptr) gpu().release(data_);
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

}  // namespace cc1d::test
