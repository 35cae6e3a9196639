// A stand-in for the GPU in host tests: one NVIDIA sm_90 device of 132 multiprocessors
// on which every operation a test does not override fails the test (so a test states
// exactly what it expects of the device). Header-only (uses doctest).
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "device/device.hpp"

namespace cc1d::test {

class FakeDevice : public device::Device {
public:
    std::string backend() const override { return "cuda"; }
    int current_device() override { return 0; }
    int device_count() override { return 1; }
    std::string target(int) override { return "sm_90"; }
    std::string name(int) override { return "fake device"; }
    int multiprocessor_count(int) override { return 132; }
    double memory_bandwidth_gbps(int) override { return 3352.0; }   // an H100 SXM
    void check_stream(void*, int) override {}
    void* load_module(const std::string&) override { return unexpected<void*>("load_module"); }
    void unload_module(void*) noexcept override {}
    void* get_function(void*, const std::string&) override { return unexpected<void*>("get_function"); }
    void launch(void*, device::Dim3, device::Dim3, unsigned, void*, const void*, std::size_t) override {
        unexpected<int>("launch");
    }
    bool overlapped_launches(int) override { return false; }
    void launch_overlapped(void*, device::Dim3, device::Dim3, unsigned, void*, const void*, std::size_t) override {
        unexpected<int>("launch_overlapped");
    }
    bool cluster_launches(int) override { return false; }
    void launch_in_clusters(void*, device::Dim3, device::Dim3, unsigned, void*, const void*, std::size_t, unsigned,
                            bool) override {
        unexpected<int>("launch_in_clusters");
    }
    void* allocate(std::size_t) override { return unexpected<void*>("allocate"); }
    void release(void*) noexcept override {}
    void copy_to_device(void*, const void*, std::size_t) override { unexpected<int>("copy_to_device"); }
    void copy_to_host(void*, const void*, std::size_t) override { unexpected<int>("copy_to_host"); }
    void copy_device_to_device_async(void*, const void*, std::size_t, void*) override { unexpected<int>("copy"); }
    void fill_bytes(void*, unsigned char, std::size_t) override { unexpected<int>("fill_bytes"); }
    void synchronize() override {}
    void* create_event() override { return unexpected<void*>("create_event"); }
    void destroy_event(void*) noexcept override {}
    void record_event(void*, void*) override { unexpected<int>("record_event"); }
    float elapsed_ms(void*, void*) override { return unexpected<float>("elapsed_ms"); }
    void* create_stream() override { return unexpected<void*>("create_stream"); }
    void destroy_stream(void*) noexcept override {}
    void synchronize_stream(void*) override {}
    void begin_capture(void*) override { unexpected<int>("begin_capture"); }
    void* end_capture(void*) override { return unexpected<void*>("end_capture"); }
    void launch_graph(void*, void*) override { unexpected<int>("launch_graph"); }
    void destroy_graph(void*) noexcept override {}

protected:
    template <typename T> static T unexpected(const char* what) {
        FAIL(what << " is not expected of the device here");
        return T{};
    }
};

}  // namespace cc1d::test
