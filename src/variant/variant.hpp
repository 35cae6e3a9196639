// Variant: every compile-time choice of one kernel. Two equal Variants render the
// same source; the canonical text is what configs, tools, logs and cache sidecars show.
#pragma once

#include <string>

#include "cc1d/cc1d.hpp"

namespace cc1d {

enum class Op : std::uint8_t { fwd, bwd, update, varlen_fwd };
const char* to_string(Op op);

struct Variant {
    Op op = Op::fwd;
    Layout layout = Layout::channel_first;
    int width = 4;                       // 1..16
    DType x_dtype = DType::fp32;
    DType weight_dtype = DType::fp32;
    Activation activation = Activation::none;
    bool bias = false;
    bool seq_idx = false;                // fwd, bwd
    bool initial_states = false;         // fwd, bwd; varlen_fwd: has conv_states
    bool final_states = false;           // fwd: writes them; bwd: dfinal_states given
    bool deterministic = true;           // bwd
    bool small_call = false;             // fwd, bwd: the kernel for small calls (fwd_small.cu,
                                         // bwd_small.cu), a module of its own (bwd: deterministic
                                         // in either mode)
    bool shifted_rows = false;           // the module for rows that do not start at 16-byte
                                         // boundaries (CC1D_SHIFTED_ROWS), a module of its own:
                                         // channel-first bwd with 16-bit x and fwd without seq_idx
                                         // (bwd_channel_first.cu, fwd_channel_first.cu); channel-last
                                         // fwd (fwd_channel_last.cu) and, with tiled, bwd with 16-bit
                                         // x (bwd_channel_last_tile.cu)
    bool tiled = false;                  // channel-last bwd up to width 4 without states:
                                         // the module of the tile kernel (bwd_channel_last_tile.cu),
                                         // which a call takes by its size and rows; a module of its own
    bool cache_seqlens = false;          // update
    bool state_indices = false;          // update

    static constexpr int max_width = 16;

    // Fields that do not apply to the op are reset, so equal kernels compare equal.
    Variant normalized() const;
    // "op=fwd,layout=channel_first,width=4,x=bf16,weight=bf16,act=silu,bias=1,..."
    std::string canonical() const;
    // The extern "C" kernel name, a valid identifier unique per canonical text.
    std::string entry_name() const;
    // Parses canonical text (fields in any order, omitted ones default); throws
    // invalid_argument naming the bad field.
    static Variant parse(const std::string& text);

    // A compact unique number of the normalized variant, for in-memory lookups on the
    // launch path (no string is built per call).
    std::uint32_t packed() const;

    bool operator==(const Variant& other) const { return packed() == other.packed(); }
};

// Throws invalid_argument when a field is out of its range (width, dtypes).
void check_variant(const Variant& variant);

}  // namespace cc1d
