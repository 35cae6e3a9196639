// Host element access: fp16/bf16 conversions (round to nearest even, subnormals,
// overflow, NaN), load/store of every dtype, and strided indexing.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/host_dtype.hpp"

using namespace cc1d;

namespace {

bool half_is_nan(std::uint16_t bits) { return (bits & 0x7C00u) == 0x7C00u && (bits & 0x3FFu) != 0; }
bool bf16_is_nan(std::uint16_t bits) { return (bits & 0x7F80u) == 0x7F80u && (bits & 0x7Fu) != 0; }

std::uint16_t half_of_double(double v) {
    std::uint16_t bits = 0;
    host::store(&bits, DType::fp16, 0, v);
    return bits;
}
std::uint16_t bf16_of_double(double v) {
    std::uint16_t bits = 0;
    host::store(&bits, DType::bf16, 0, v);
    return bits;
}

}  // namespace

TEST_CASE("fp16: exact values and their bit patterns") {
    CHECK(host::float_to_half_bits(1.0f) == 0x3C00);
    CHECK(host::float_to_half_bits(-2.0f) == 0xC000);
    CHECK(host::float_to_half_bits(0.5f) == 0x3800);
    CHECK(host::float_to_half_bits(65504.0f) == 0x7BFF);          // largest finite
    CHECK(host::float_to_half_bits(std::ldexp(1.0f, -14)) == 0x0400);   // smallest normal
    CHECK(host::float_to_half_bits(std::ldexp(1.0f, -24)) == 0x0001);   // smallest subnormal
    CHECK(host::float_to_half_bits(0.0f) == 0x0000);
    CHECK(host::float_to_half_bits(-0.0f) == 0x8000);
    CHECK(host::half_bits_to_float(0x3C00) == 1.0f);
    CHECK(host::half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));
    CHECK(host::half_bits_to_float(0x03FF) == std::ldexp(1023.0f, -24));
    CHECK(host::half_bits_to_float(0x7C00) == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(host::half_bits_to_float(0x7E00)));
}

TEST_CASE("fp16: round to nearest, ties to even") {
    // 1 + 2^-11 is halfway between 1 (even mantissa) and 1 + 2^-10: goes to 1.
    CHECK(host::float_to_half_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
    // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2·2^-10 (even): goes up.
    CHECK(host::float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
    // Just above the first tie goes up.
    CHECK(host::float_to_half_bits(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 0x3C01);
    // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0; 3·2^-25 -> 2·2^-24.
    CHECK(host::float_to_half_bits(std::ldexp(1.0f, -25)) == 0x0000);
    CHECK(host::float_to_half_bits(3 * std::ldexp(1.0f, -25)) == 0x0002);
    // The largest subnormal rounds up into the smallest normal.
    CHECK(host::float_to_half_bits(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)) == 0x0400);
}

TEST_CASE("fp16: overflow and NaN") {
    CHECK(host::float_to_half_bits(65519.0f) == 0x7BFF);     // below the halfway point to 2^16
    CHECK(host::float_to_half_bits(65520.0f) == 0x7C00);     // the tie rounds to even: infinity
    CHECK(host::float_to_half_bits(1e10f) == 0x7C00);
    CHECK(host::float_to_half_bits(-1e10f) == 0xFC00);
    CHECK(host::float_to_half_bits(std::numeric_limits<float>::infinity()) == 0x7C00);
    CHECK(half_is_nan(host::float_to_half_bits(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("fp16: every finite pattern survives a round trip through float") {
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const auto b = static_cast<std::uint16_t>(bits);
        const float f = host::half_bits_to_float(b);
        if (half_is_nan(b)) {
            REQUIRE(std::isnan(f));
            continue;
        }
        REQUIRE(host::float_to_half_bits(f) == b);
    }
}

TEST_CASE("bf16: exact values, ties to even, overflow, NaN") {
    CHECK(host::float_to_bf16_bits(1.0f) == 0x3F80);
    CHECK(host::float_to_bf16_bits(-2.0f) == 0xC000);
    CHECK(host::bf16_bits_to_float(0x3F80) == 1.0f);
    // 1 + 2^-8 is a tie between 1 (even) and 1 + 2^-7: goes to 1; 1 + 3·2^-8 goes up to 1 + 2^-6.
    CHECK(host::float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
    CHECK(host::float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);
    // FLT_MAX lies beyond the halfway point above bf16's largest finite value.
    CHECK(host::float_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7F80);
    CHECK(host::float_to_bf16_bits(-std::numeric_limits<float>::max()) == 0xFF80);
    // Subnormal floats keep their top bits.
    CHECK(host::float_to_bf16_bits(std::ldexp(1.0f, -133)) == 0x0001);
    CHECK(bf16_is_nan(host::float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN())));
    // A NaN whose payload sits only in the low 16 bits must not turn into infinity.
    std::uint32_t low_payload_nan_bits = 0x7F800001u;
    float low_payload_nan;
    std::memcpy(&low_payload_nan, &low_payload_nan_bits, sizeof low_payload_nan);
    CHECK(bf16_is_nan(host::float_to_bf16_bits(low_payload_nan)));
}

TEST_CASE("bf16: every finite pattern survives a round trip through float") {
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const auto b = static_cast<std::uint16_t>(bits);
        const float f = host::bf16_bits_to_float(b);
        if (bf16_is_nan(b)) {
            REQUIRE(std::isnan(f));
            continue;
        }
        REQUIRE(host::float_to_bf16_bits(f) == b);
    }
}

TEST_CASE("store rounds a double once, never through float first") {
    // 1 + 2^-8 + 2^-40: via float it would become the tie 1 + 2^-8 and then round to 1;
    // rounded directly it is above the tie and goes to 1 + 2^-7.
    CHECK(bf16_of_double(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)) == 0x3F81);
    // The same for fp16 with 1 + 2^-11 + 2^-40.
    CHECK(half_of_double(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)) == 0x3C01);
    CHECK(half_of_double(std::ldexp(1.0, -30)) == 0x0000);   // far below the smallest subnormal
    CHECK(half_of_double(-65536.0) == 0xFC00);
}

TEST_CASE("load and store of every dtype") {
    float f32[2] = {};
    host::store(f32, DType::fp32, 1, 0.1);
    CHECK(f32[1] == 0.1f);
    CHECK(host::load(f32, DType::fp32, 1) == static_cast<double>(0.1f));

    std::uint16_t h[2] = {};
    host::store(h, DType::fp16, 1, -1.5);
    CHECK(h[1] == 0xBE00);
    CHECK(host::load(h, DType::fp16, 1) == -1.5);

    std::uint16_t bf[2] = {};
    host::store(bf, DType::bf16, 0, 3.0);
    CHECK(bf[0] == 0x4040);
    CHECK(host::load(bf, DType::bf16, 0) == 3.0);

    std::int32_t i[3] = {};
    host::store(i, DType::int32, 2, -7.0);
    CHECK(i[2] == -7);
    CHECK(host::load(i, DType::int32, 2) == -7.0);
}

TEST_CASE("at() follows the strides of the view") {
    // Memory 0..11 as floats; view it as a (2, 3) transpose of a (3, 4) block with a
    // padded row: element (i, j) sits at i*1 + j*4.
    std::vector<float> memory(12);
    for (int k = 0; k < 12; ++k) memory[static_cast<std::size_t>(k)] = static_cast<float>(k);
    Tensor t(memory.data(), DType::fp32, {2, 3}, {1, 4});
    CHECK(host::at(t, 0, 0) == 0.0);
    CHECK(host::at(t, 1, 0) == 1.0);
    CHECK(host::at(t, 1, 2) == 9.0);
    // Rank 3 with a batch stride larger than the data it skips.
    Tensor u(memory.data(), DType::fp32, {2, 2, 2}, {6, 1, 2});
    CHECK(host::at(u, 1, 1, 1) == 6 + 1 + 2);
    // Rank 1 with a stride.
    Tensor v(memory.data(), DType::fp32, {3}, {5});
    CHECK(host::at(v, 2) == 10.0);
}
