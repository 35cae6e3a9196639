// Small backward calls in one launch: the module of a small-call variant
// (Variant::small_call, compiled only when such a call comes), a block holding every
// position of its channels, so neither a walk nor a reduce kernel runs: bwd_small.cu
// element by element, or for channel-first rows of whole 16-byte vectors its vector kernel
// (bwd_channel_first_vectors.cu). The Runtime asks plan_small first and picks the variant
// and launcher from its answer.
#pragma once

#include <cstdint>
#include <optional>

#include "api/launch/launch.hpp"

namespace cc1d::launch::backward {

struct SmallPlan {
    int channel_shift = 0;      // a block owns 2^channel_shift channels ...
    int slots = 0;              // ... and this many threads (position slots) per channel
    std::int64_t blocks = 0;
    unsigned shared_bytes = 0;  // the staged rows of x̃ (or the lane groups' sums), g, the ids
    bool vectors = false;       // the vector kernel (bwd_channel_first_vectors.cu): a slot takes whole
                                // 16-byte vectors of a row, no dynamic shared memory ...
    bool one_vector = false;    // ... one a slot (its one-vector form, fewer registers)
};

// The plan when the call fits the small kernel: at least one position, at most
// CC1D_BWD_SMALL_POSITIONS a thread, few elements in all (beyond that the main kernels'
// vector loads win; channel-first calls of rows of at most 64 positions, or of 128 at two
// or more positions a thread, take up to 16 positions a thread and 2^21 elements in
// 16-bit, 8 and 2^19 in fp32, where the main kernel's row-sized tiles leave most threads
// idle; channel-last calls at widths up to 4 of at most 128 positions up to 2^19
// elements, of at most 256 up to 2^18, a block holding several channels), views within
// 2^31 elements (32-bit offsets) and its shared memory within what a block gets without
// opting in. nullopt otherwise, or when CC1D_DISABLE_SMALL_BACKWARD is
// set (read per call, so tests can run a call both ways). Channel-first calls at widths
// up to 4 without seq_idx or states whose rows are whole 16-byte vectors in x, dout and
// dx take the vector kernel instead (plan.vectors), at any D, up to two vectors a thread
// (with SiLU two only up to 2^21 elements in fp32, 2^24 in 16-bit; its one-vector form,
// plan.one_vector, where no thread has two), unless CC1D_DISABLE_SMALL_VECTORS is set.
std::optional<SmallPlan> plan_small(const Variant& variant, const BackwardArgs& args);

// Launches the small-call kernel (the main kernel of `variant`'s module, a small-call
// variant, or its vector kernel) with `plan`; dweight/dbias are written (or added to)
// directly.
void run_small(Launcher& launcher, const Variant& variant, const BackwardArgs& args, const SmallPlan& plan);

}  // namespace cc1d::launch::backward
