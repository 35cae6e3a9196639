// The floor under small shapes: an empty kernel, compiled with the same runtime
// compiler for this device and timed exactly as the cases are (events, cache flushed).
// ANCHORS.md asks small shapes to land within 1.5 µs of it.
#pragma once

#include <optional>
#include <string>

#include "timing.hpp"

namespace cc1d::bench {

// nullopt (with the reason in `why_not`) when the kernel cannot be built or loaded.
std::optional<TimingStats> time_empty_kernel(device::Device& device, void* stream, CacheFlusher& flusher, int warmup,
                                             int reps, std::string& why_not);

}  // namespace cc1d::bench
