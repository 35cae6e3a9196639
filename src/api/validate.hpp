// Argument validation: every check that can be made on the host, before anything is
// compiled, launched or written. Each failure names the argument and what was expected.
// On success returns the Variant the call needs (and, for update, the arguments with
// a rank-2 x seen as (B, D, 1)).
#pragma once

#include "cc1d/cc1d.hpp"
#include "variant/variant.hpp"

namespace cc1d::validate {

Variant forward(const ForwardArgs& args);
Variant backward(const BackwardArgs& args);
Variant update(UpdateArgs& args);              // may reshape x/out from (B, D) to (B, D, 1)
Variant varlen_forward(const VarlenForwardArgs& args);

// The layout of a (B, D, L) tensor from its strides, or invalid_argument naming `what`.
Layout layout_of(const Tensor& t, const char* what);

}  // namespace cc1d::validate
