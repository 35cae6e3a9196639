// The real NVRTC's option list and its phase-timing knob, no GPU needed. Skipped where
// NVRTC cannot be opened (required in CI, as for the compile matrix).
#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "codegen/render.hpp"
#include "common/env.hpp"
#include "rtc/compiler.hpp"
#include "rtc/nvrtc_options.hpp"
#include "variant/variant.hpp"

using namespace cc1d;

namespace {

std::unique_ptr<rtc::Compiler> open_nvrtc_or_skip() {
    try {
        return rtc::open_nvrtc();
    } catch (const std::exception& e) {
        if (env::flag("CI")) FAIL("NVRTC is required in CI: " << e.what());
        std::cout << "SKIPPED: NVRTC options: " << e.what() << "\n";
        return nullptr;
    }
}

// "nvrtc-13.0" -> {13, 0}.
rtc::NvrtcVersion version_of(const std::string& identity) {
    rtc::NvrtcVersion version;
    REQUIRE(std::sscanf(identity.c_str(), "nvrtc-%d.%d", &version.major, &version.minor) == 2);
    return version;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The machine code of each kernel in a CUBIN (an ELF64 file): its ".text.<kernel>"
// section's bytes by name.
std::map<std::string, std::string> kernel_code(const std::string& elf) {
    auto read = [&](std::size_t at, std::size_t bytes) {
        REQUIRE(at + bytes <= elf.size());
        std::uint64_t v = 0;
        std::memcpy(&v, elf.data() + at, bytes);   // little-endian host and file
        return static_cast<std::size_t>(v);
    };
    REQUIRE(elf.compare(0, 4, "\x7f" "ELF") == 0);
    const std::size_t section_table = read(0x28, 8), entry_size = read(0x3A, 2), sections = read(0x3C, 2);
    const std::size_t names = read(section_table + read(0x3E, 2) * entry_size + 0x18, 8);
    std::map<std::string, std::string> code;
    for (std::size_t i = 0; i < sections; ++i) {
        const std::size_t header = section_table + i * entry_size;
        const std::string name = elf.c_str() + names + read(header, 4);
        if (name.rfind(".text.", 0) != 0) continue;
        const std::size_t offset = read(header + 0x18, 8), size = read(header + 0x20, 8);
        REQUIRE(offset + size <= elf.size());
        code[name] = elf.substr(offset, size);
    }
    return code;
}

}  // namespace

TEST_CASE("NVRTC compiles with the option list of its version") {
    auto compiler = open_nvrtc_or_skip();
    if (!compiler) return;
    const auto version = version_of(compiler->identity());
    CHECK(compiler->options("sm_90") == rtc::nvrtc_options("-arch=sm_90", version));
}

TEST_CASE("CC1D_NVRTC_TIME: NVRTC writes phase times, and the options (the cache key) stay the same") {
    auto compiler = open_nvrtc_or_skip();
    if (!compiler) return;
    const Variant variant = Variant::parse("op=update,width=4,x=fp32,weight=fp32");
    const auto source = codegen::render_source(variant, "cuda");
    const std::string file = "/tmp/cc1d-nvrtc-time-" + std::to_string(getpid()) + ".csv";
    std::remove(file.c_str());

    setenv("CC1D_NVRTC_TIME", file.c_str(), 1);
    const auto timed = compiler->compile({source.text, source.name, "sm_90"});
    unsetenv("CC1D_NVRTC_TIME");
    const auto plain = compiler->compile({source.text, source.name, "sm_90"});

    REQUIRE(timed.ok);
    REQUIRE(plain.ok);
    CHECK(timed.options == plain.options);
    CHECK(timed.code_object == plain.code_object);
    const std::string table = read_file(file);
    CHECK(table.find(source.name) != std::string::npos);
    CHECK(table.find("Frontend") != std::string::npos);
    std::remove(file.c_str());
}

TEST_CASE("A module that splits its compile: on two threads, the same options (cache key) and machine code") {
    auto compiler = open_nvrtc_or_skip();
    if (!compiler) return;
    // The channel-first forward holds the main and the staged kernel (codegen::splits_compile).
    const Variant variant = Variant::parse("op=fwd,layout=channel_first,width=4,x=bf16,weight=bf16,act=silu,bias=1");
    const auto source = codegen::render_source(variant, "cuda");
    REQUIRE(source.split_compile);
    const auto one = compiler->compile({source.text, source.name, "sm_90", 1});
    const auto two = compiler->compile({source.text, source.name, "sm_90", 2});
    REQUIRE(one.ok);
    REQUIRE(two.ok);
    CHECK(one.options == two.options);
    CHECK(one.options.find("split") == std::string::npos);
    // The CUBINs differ in their layout; the machine code of each kernel may not.
    const auto kernels = kernel_code(one.code_object);
    CHECK(kernels.size() == 2);
    CHECK(kernels == kernel_code(two.code_object));
}
