// kiln/iota.cuh — the iota template: out[e] = store(coordinate of e along the axis, e).
//
// Contract: `Store` is a generated functor
//     __device__ T operator()(long long coordinate, Index flat) const;
// that applies the fused epilogue (or none) and returns the value stored at `flat`. The
// coordinate of flat index e along the axis is (e / inner) % len (kiln/config/iota.h).
// Launch: any 1-D grid of 1-D blocks (grid-stride); the planner's rule: iota_geometry.
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/iota.h"

namespace kiln {

template <class Index, class T, class Store>
__device__ __forceinline__ void iota(T* __restrict__ out, Index numel, Index len, Index inner, const Store& store) {
  const Index stride = static_cast<Index>(gridDim.x) * static_cast<Index>(blockDim.x);
  for (Index e = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + threadIdx.x; e < numel;
       e = stride_next(e, stride, numel))
    out[e] = store(static_cast<long long>((e / inner) % len), e);
}

}  // namespace kiln
