// The host launch shim: compiles the CUDA kernels (kernels.cu) for the CPU,
// one copy per mapper, with grid and block as loops, so the tests run the
// kernels' own code on a machine without a GPU.
#pragma once

#include <cstdint>

#include "carts.hpp"
#include "games/registry.hpp"
#include "vector.hpp"

namespace cule::shim {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local Dim3 blockIdx, threadIdx, blockDim, gridDim;

// kernel<<<grid, block>>>(args...), one block after another.
template <class Kernel, class... Args>
void launch(unsigned grid, unsigned block, Kernel kernel, Args... args) {
  blockDim = Dim3{block, 1, 1};
  gridDim = Dim3{grid, 1, 1};
  for (unsigned b = 0; b < grid; ++b)
    for (unsigned t = 0; t < block; ++t) {
      blockIdx = Dim3{b, 1, 1};
      threadIdx = Dim3{t, 1, 1};
      kernel(args...);
    }
}

#define CULE_KERNEL static inline void
// One namespace per mapper, each with its own copy of the kernels.
#define CULE_CART CartType_
namespace k2K { using CartType_ = cule::Cart2K;
#include "kernels.cu"
}
namespace k4K { using CartType_ = cule::Cart4K;
#include "kernels.cu"
}
namespace kF8 { using CartType_ = cule::CartF8;
#include "kernels.cu"
}
namespace kF6 { using CartType_ = cule::CartF6;
#include "kernels.cu"
}
namespace kF8SC { using CartType_ = cule::CartF8SC;
#include "kernels.cu"
}
namespace kF6SC { using CartType_ = cule::CartF6SC;
#include "kernels.cu"
}
namespace kE0 { using CartType_ = cule::CartE0;
#include "kernels.cu"
}
namespace kFE { using CartType_ = cule::CartFE;
#include "kernels.cu"
}
namespace kDPC { using CartType_ = cule::CartDPC;
#include "kernels.cu"
}
#undef CULE_CART
#undef CULE_KERNEL

// Calls f(kernels) with the mapper's copy of the four kernels.
template <class Run, class Render, class Reset, class Gather>
struct Kernels {
  Run run;
  Render render;
  Reset reset;
  Gather gather;
};
template <class Run, class Render, class Reset, class Gather>
Kernels<Run, Render, Reset, Gather> kernels_of(Run run, Render render, Reset reset, Gather gather) {
  return {run, render, reset, gather};
}
#define CULE_SHIM_KERNELS(ns) kernels_of(&ns::cule_run, &ns::cule_render, &ns::cule_reset, &ns::cule_gather)

template <class F>
void with_kernels(CartType type, F&& f) {
  switch (type) {
    case CartType::k2K: return f(CULE_SHIM_KERNELS(k2K));
    case CartType::k4K: return f(CULE_SHIM_KERNELS(k4K));
    case CartType::kF8: return f(CULE_SHIM_KERNELS(kF8));
    case CartType::kF6: return f(CULE_SHIM_KERNELS(kF6));
    case CartType::kF8SC: return f(CULE_SHIM_KERNELS(kF8SC));
    case CartType::kF6SC: return f(CULE_SHIM_KERNELS(kF6SC));
    case CartType::kE0: return f(CULE_SHIM_KERNELS(kE0));
    case CartType::kFE: return f(CULE_SHIM_KERNELS(kFE));
    case CartType::kDPC: return f(CULE_SHIM_KERNELS(kDPC));
  }
}
#undef CULE_SHIM_KERNELS

}  // namespace cule::shim
