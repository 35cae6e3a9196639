// Host-side element access. Conversions round to nearest even directly from the wider
// type (double -> fp16/bf16 in one step), so a value is never rounded twice.
#include "common/host_dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/fail.hpp"

namespace cc1d::host {
namespace {

// A binary floating-point format narrower than double: `mantissa_bits` explicit
// fraction bits, smallest normal exponent `min_exponent`, largest `max_exponent`.
struct Format {
    int mantissa_bits, min_exponent, max_exponent;
};
constexpr Format half_format{10, -14, 15};
constexpr Format bf16_format{7, -126, 127};

// `value` rounded to the nearest value of `format` (ties to even), still held in a
// double. Overflow gives infinity; NaN stays NaN.
double round_to_format(double value, Format format) {
    if (std::isnan(value) || std::isinf(value) || value == 0.0) return value;
    // Subnormals share the quantum of the smallest normal binade.
    const int exponent = std::max(std::ilogb(value), format.min_exponent);
    const double quantum = std::ldexp(1.0, exponent - format.mantissa_bits);
    // The scaling by a power of two is exact; nearbyint rounds ties to even under the
    // default rounding mode.
    const double rounded = std::nearbyint(value / quantum) * quantum;
    const double largest = std::ldexp(2.0 - std::ldexp(1.0, -format.mantissa_bits), format.max_exponent);
    if (std::fabs(rounded) > largest) return std::copysign(std::numeric_limits<double>::infinity(), value);
    return rounded;
}

// Bits of an fp16 value already representable exactly (the output of round_to_format).
std::uint16_t encode_half(double exact) {
    const std::uint16_t sign = std::signbit(exact) ? 0x8000u : 0u;
    const double magnitude = std::fabs(exact);
    if (std::isnan(exact)) return static_cast<std::uint16_t>(sign | 0x7E00u);
    if (std::isinf(exact)) return static_cast<std::uint16_t>(sign | 0x7C00u);
    if (magnitude < std::ldexp(1.0, half_format.min_exponent)) {
        // Subnormal (or zero): the value in units of 2^-24.
        const auto units = static_cast<std::uint16_t>(magnitude * std::ldexp(1.0, 24));
        return static_cast<std::uint16_t>(sign | units);
    }
    const int exponent = std::ilogb(magnitude);
    const double fraction = magnitude / std::ldexp(1.0, exponent) - 1.0;   // in [0, 1)
    const auto mantissa = static_cast<std::uint16_t>(fraction * 1024.0);
    return static_cast<std::uint16_t>(sign | ((exponent + 15) << 10) | mantissa);
}

std::uint32_t float_bits(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

float bits_float(std::uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

std::uint16_t double_to_half_bits(double value) { return encode_half(round_to_format(value, half_format)); }

std::uint16_t double_to_bf16_bits(double value) {
    if (std::isnan(value)) {
        // Keep the sign and make sure the truncated pattern is still a (quiet) NaN.
        return static_cast<std::uint16_t>((std::signbit(value) ? 0x8000u : 0u) | 0x7FC0u);
    }
    // A rounded bf16 value is exactly a float whose low 16 bits are zero.
    const float exact = static_cast<float>(round_to_format(value, bf16_format));
    return static_cast<std::uint16_t>(float_bits(exact) >> 16);
}

}  // namespace

float half_bits_to_float(std::uint16_t bits) {
    const bool negative = (bits & 0x8000u) != 0;
    const int exponent = (bits >> 10) & 0x1F;
    const int mantissa = bits & 0x3FF;
    float magnitude;
    if (exponent == 0x1F)
        magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else if (exponent == 0)
        magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    else
        magnitude = std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
    return negative ? -magnitude : magnitude;
}

std::uint16_t float_to_half_bits(float value) { return double_to_half_bits(value); }

float bf16_bits_to_float(std::uint16_t bits) { return bits_float(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t float_to_bf16_bits(float value) { return double_to_bf16_bits(value); }

double load(const void* base, DType dtype, std::int64_t offset) {
    switch (dtype) {
        case DType::fp32: return static_cast<const float*>(base)[offset];
        case DType::fp16: return half_bits_to_float(static_cast<const std::uint16_t*>(base)[offset]);
        case DType::bf16: return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[offset]);
        case DType::int32: return static_cast<const std::int32_t*>(base)[offset];
    }
    fail(ErrorCode::invalid_argument, "host::load: unknown dtype {}", int(dtype));
}

void store(void* base, DType dtype, std::int64_t offset, double value) {
    switch (dtype) {
        case DType::fp32: static_cast<float*>(base)[offset] = static_cast<float>(value); return;
        case DType::fp16: static_cast<std::uint16_t*>(base)[offset] = double_to_half_bits(value); return;
        case DType::bf16: static_cast<std::uint16_t*>(base)[offset] = double_to_bf16_bits(value); return;
        case DType::int32:
            static_cast<std::int32_t*>(base)[offset] = static_cast<std::int32_t>(std::llround(value));
            return;
    }
    fail(ErrorCode::invalid_argument, "host::store: unknown dtype {}", int(dtype));
}

double at(const Tensor& t, std::int64_t i0, std::int64_t i1, std::int64_t i2) {
    const std::int64_t index[Tensor::max_rank] = {i0, i1, i2};
    std::int64_t offset = 0;
    for (int d = 0; d < t.rank; ++d) offset += index[d] * t.strides[d];
    return load(t.data, t.dtype, offset);
}

}  // namespace cc1d::host
