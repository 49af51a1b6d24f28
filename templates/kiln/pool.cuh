// kiln/pool.cuh — the pooling template: max_pool / avg_pool over the last 1-3 axes.
//
// Contract: `kC` is the planner's PoolConfig (kiln/config/pool.h), a constexpr object of the unit;
// C the compute type (float for f32/f16/bf16, double for f64). The generated functors are
//     struct Load  { __device__ C operator()(T elem, Index flat) const; };    // the operand at input flat index
//     struct Store { __device__ Out operator()(C result, Index flat) const; };  // the fused epilogue at output flat
// `in` is the stored tensor the operand streams (T its element); Load returns the operand's value
// at `flat` (elem is in[flat]). Each thread step computes one output element: max keeps the
// first NaN it meets (PyTorch's `val > max || isnan(val)`), -inf where the window holds no input
// position; avg sums in C the in-bounds positions of the window and divides by divisor_override,
// else the window clipped to the padded input (include_pad), else the in-bounds count; a window
// with no in-bounds position is 0. PyTorch's avg_pool kernels, the same arithmetic.
// Launch: any 1-D grid of 1-D blocks (grid-stride); the planner's rule: pool_geometry.
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/pool.h"

namespace kiln {

template <const PoolConfig& kC, class C, class Index, class T, class Out, class Load, class Store>
__device__ __forceinline__ void pool(const T* __restrict__ in, Out* __restrict__ out, const Load& load,
                                     const Store& store) {
  constexpr Index kPlaneIn = Index(kC.in_d * kC.in_h * kC.in_w);
  const Index total = Index(pool_outputs(kC));
  const Index step = Index(gridDim.x) * Index(blockDim.x);
  for (Index e = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x); e < total; e += step) {
    Index r = e;
    const Index ow = r % Index(kC.out_w);
    r /= Index(kC.out_w);
    const Index oh = r % Index(kC.out_h);
    r /= Index(kC.out_h);
    const Index od = r % Index(kC.out_d);
    const Index plane = r / Index(kC.out_d);
    const Index base = plane * kPlaneIn;
    const Index d0 = od * kC.stride_d - kC.padding_d, h0 = oh * kC.stride_h - kC.padding_h,
                w0 = ow * kC.stride_w - kC.padding_w;
    C acc;
    if constexpr (kC.max) {
      acc = Limits<C>::lowest();
#pragma unroll
      for (int jd = 0; jd < kC.kernel_d; ++jd) {
        const Index id = d0 + Index(jd) * kC.dilation_d;
        if (id < 0 || id >= Index(kC.in_d)) continue;
#pragma unroll
        for (int jh = 0; jh < kC.kernel_h; ++jh) {
          const Index ih = h0 + Index(jh) * kC.dilation_h;
          if (ih < 0 || ih >= Index(kC.in_h)) continue;
#pragma unroll
          for (int jw = 0; jw < kC.kernel_w; ++jw) {
            const Index iw = w0 + Index(jw) * kC.dilation_w;
            if (iw < 0 || iw >= Index(kC.in_w)) continue;
            const Index f = base + (id * Index(kC.in_h) + ih) * Index(kC.in_w) + iw;
            const C v = load(ldg(in + f), f);
            if (v > acc || is_nan(v)) acc = v;
          }
        }
      }
    } else {
      // The window clipped to the padded input (its size is include_pad's divisor), then to the input.
      const Index d1 = min(d0 + kC.kernel_d, Index(kC.in_d + kC.padding_d));
      const Index h1 = min(h0 + kC.kernel_h, Index(kC.in_h + kC.padding_h));
      const Index w1 = min(w0 + kC.kernel_w, Index(kC.in_w + kC.padding_w));
      const Index padded = (d1 - d0) * (h1 - h0) * (w1 - w0);
      const Index ds = max(d0, Index(0)), hs = max(h0, Index(0)), ws = max(w0, Index(0));
      const Index de = min(d1, Index(kC.in_d)), he = min(h1, Index(kC.in_h)), we = min(w1, Index(kC.in_w));
      acc = C(0);
      if (ds < de && hs < he && ws < we) {
        for (Index id = ds; id < de; ++id)
          for (Index ih = hs; ih < he; ++ih)
            for (Index iw = ws; iw < we; ++iw) {
              const Index f = base + (id * Index(kC.in_h) + ih) * Index(kC.in_w) + iw;
              acc += load(ldg(in + f), f);
            }
        const Index inside = (de - ds) * (he - hs) * (we - ws);
        acc /= C(kC.divisor != 0 ? Index(kC.divisor) : kC.include_pad ? padded : inside);
      }
    }
    out[e] = store(acc, e);
  }
}

}  // namespace kiln
