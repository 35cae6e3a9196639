// The backward variant the host tests of launch plans vary from: width 4, SiLU, a bias.
#pragma once

#include "variant/variant.hpp"

namespace cc1d::test {

inline Variant silu_backward(DType dtype, Layout layout = Layout::channel_last) {
    Variant v;
    v.op = Op::bwd;
    v.layout = layout;
    v.width = 4;
    v.x_dtype = v.weight_dtype = dtype;
    v.activation = Activation::silu;
    v.bias = true;
    return v;
}

}  // namespace cc1d::test
