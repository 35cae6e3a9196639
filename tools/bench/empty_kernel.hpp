// The floor under small shapes: an empty kernel, compiled with the same runtime
// compiler for this device and timed exactly as the cases are (events, cache flushed;
// and in a graph replay where the cases are replayed too).
// ANCHORS.md asks small shapes to land within 1.5 µs of it.
#pragma once

#include <optional>
#include <string>

#include "timing.hpp"

namespace cc1d::bench {

struct EmptyKernelTimes {
    TimingStats timing;            // device time per launch, as the cases are timed
    double host_us_per_launch = 0; // host time of back-to-back driver launches: the floor
                                   // under every cc1d call's host time
    std::optional<TimingStats> replay;   // per launch in a graph replay, when asked for
};

// nullopt (with the reason in `why_not`) when the kernel cannot be built or loaded.
std::optional<EmptyKernelTimes> time_empty_kernel(device::Device& device, void* stream, CacheFlusher& flusher,
                                                  int warmup, int reps, int host_calls, std::optional<int> replays,
                                                  std::string& why_not);

}  // namespace cc1d::bench
