// fp64 CPU reference of every op, exactly as SEMANTICS.md states it. Used by the tests,
// the bench's checks and users' own checks. Inputs are the same argument structs as the
// device API, with every Tensor pointing at HOST memory (same dtype/shape/stride rules).
// Results are fp64, in the logical row-major order of each output's logical shape.
#pragma once

#include <vector>

#include "cc1d/cc1d.hpp"

namespace cc1d::reference {

struct ForwardResult {
    std::vector<double> out;            // (B, D, L)
    std::vector<double> final_states;   // (B, D, W-1) when args.final_states is present
};
ForwardResult forward(const ForwardArgs& args);

struct BackwardResult {
    std::vector<double> dx;               // (B, D, L)
    std::vector<double> dweight;          // (D, W)
    std::vector<double> dbias;            // (D) when bias is present
    std::vector<double> dinitial_states;  // (B, D, W-1) when args.dinitial_states is present
};
// dweight/dbias are the gradients alone (the `accumulate` flag is not applied).
BackwardResult backward(const BackwardArgs& args);

struct UpdateResult {
    std::vector<double> out;          // (B, D, T)
    std::vector<double> conv_state;   // (B_cache, D, S): the whole state after the call
};
UpdateResult update(const UpdateArgs& args);

struct VarlenResult {
    std::vector<double> out;           // logical (D, total)
    std::vector<double> conv_states;   // (slots, D, S) after the call, when conv_states present
};
VarlenResult varlen_forward(const VarlenForwardArgs& args);

}  // namespace cc1d::reference
