// Host-side element access for every DType: reading any element as double, writing a
// double rounded to the element's type (round to nearest even), and fp16/bf16 bit
// conversions. Used by the reference, the tests and the bench.
#pragma once

#include <cstdint>

#include "cc1d/cc1d.hpp"

namespace cc1d::host {

float half_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_half_bits(float value);
float bf16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16_bits(float value);

// base + offset elements of `dtype`.
double load(const void* base, DType dtype, std::int64_t offset);
void store(void* base, DType dtype, std::int64_t offset, double value);

// Value of the element at logical index (i0, i1, i2) of a host tensor.
double at(const Tensor& t, std::int64_t i0, std::int64_t i1 = 0, std::int64_t i2 = 0);

}  // namespace cc1d::host
