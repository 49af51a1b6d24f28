// kiln/elementwise.cuh — the elementwise template.
//
// Contract: `Body` is a generated functor with
//     template <int N> __device__ void apply(Index first) const;
// that computes and stores the N consecutive output elements starting at flat
// index `first` (N == kVec on the vector path, 1 on the tail). When kVec > 1,
// `first` is a multiple of kVec, so 16-byte loads and stores of tensors indexed
// by the flat index (and of rows when the innermost extent is a multiple of
// kVec) are aligned, given 16-byte aligned base pointers.
// Launch: any 1-D grid of 1-D blocks; the loop is grid-stride. The planner's config and launch
// rule: kiln/config/elementwise.h.
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/elementwise.h"

namespace kiln {

template <class Index, int kVec, class Body>
__device__ __forceinline__ void elementwise(const Body& body, Index numel) {
  const Index stride = static_cast<Index>(gridDim.x) * static_cast<Index>(blockDim.x);
  const Index thread = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + threadIdx.x;
  const Index vectors = numel / kVec;
  for (Index v = thread; v < vectors; v = stride_next(v, stride, vectors)) body.template apply<kVec>(v * kVec);
  // The tail: fewer than kVec elements, one per thread.
  for (Index e = vectors * kVec + thread; e < numel; e = stride_next(e, stride, numel)) body.template apply<1>(e);
}

// A kernel planned with `checked` ([Note: row vectors checked at launch] in config/elementwise.h):
// the vector loop where this launch's innermost extent is a multiple of kVec, else one element a
// step. The branch is the same for every thread of the grid. The config is rebuilt here as a
// constant rather than taken by reference to the unit's kConfig, which would odr-use it in device
// code (nvcc refuses; NVRTC would place it in memory).
template <class Index, int kVec, class Body>
__device__ __forceinline__ void elementwise_checked(const Body& body, Index numel, Index inner) {
  constexpr ElementwiseConfig kChecked = [] {
    ElementwiseConfig c;
    c.vec = kVec;
    c.checked = true;
    return c;
  }();
  if (elementwise_step(kChecked, inner) == kVec)
    elementwise<Index, kVec>(body, numel);
  else
    elementwise<Index, 1>(body, numel);
}

}  // namespace kiln
