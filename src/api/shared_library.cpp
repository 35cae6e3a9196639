// The one source of the shared library target `cc1d` (libcc1d.so). Everything the
// library exports, the C++ API (cc1d.hpp) and the C ABI (cc1d.h, src/api/c_api.cpp),
// comes from the static core, which CMake links in whole.
//
// This file is also picked up by the core's source glob, so it must define no symbol:
// a definition here would exist twice in the shared library. It only checks, at
// compile time, that both public headers stand on their own and agree.
#include "cc1d/cc1d.h"
#include "cc1d/cc1d.hpp"

static_assert(CC1D_MAX_RANK == cc1d::Tensor::max_rank, "the C and C++ tensors hold the same rank");
static_assert(sizeof(cc1d_tensor) == 64, "cc1d_tensor is part of the ABI: its size never changes");
