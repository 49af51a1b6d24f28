// kiln/pool.cuh — the pooling template: max_pool / avg_pool over the last 1-3 axes.
//
// Contract: `kC` is the planner's PoolConfig (kiln/config/pool.h), a constexpr object of the unit;
// C the compute type (float for f32/f16/bf16, double for f64). The generated functors are
//     struct Load  { __device__ C operator()(T elem, Index flat) const; };    // the operand at input flat index
//     struct Store { __device__ Out operator()(C result, Index flat) const; };  // the fused epilogue at output flat
// `in` is the stored tensor the operand streams (T its element); Load returns the operand's value
// at `flat` (elem is in[flat]). Each output element: max keeps the
// first NaN it meets (PyTorch's `val > max || isnan(val)`), -inf where the window holds no input
// position; avg sums in C the in-bounds positions of the window and divides by divisor_override,
// else the window clipped to the padded input (include_pad), else the in-bounds count; a window
// with no in-bounds position is 0. PyTorch's avg_pool kernels, the same arithmetic.
// Launch: any 1-D grid of 1-D blocks (grid-stride); the planner's rule: pool_geometry.
// `planes`: the leading extents' product where kC.planes is 0 (dyn planes, [Note: dyn pool planes]
// in plan_pool.cpp); a static config's are its own.
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/pool.h"

namespace kiln {
namespace detail {
template <bool kNarrow, class Wide> struct PlaneIndex { using type = Wide; };
template <class Wide> struct PlaneIndex<true, Wide> { using type = int; };
template <class I> __device__ __forceinline__ I least(I a, I b) { return a < b ? a : b; }
template <class I> __device__ __forceinline__ I most(I a, I b) { return a < b ? b : a; }
}  // namespace detail

// Window loops run over the kernel's positions with compile-time trip counts, unrolled whole up
// to kPoolUnrolled positions an axis (every load of a window in flight at once), skipping
// positions outside the input; offsets within a plane are 32-bit where a plane has fewer than
// 2^31 elements (the plane's base stays Index). A thread step computes a run of kC.run adjacent
// outputs along w (pool_run): per (d, h) row of the windows it loads the run's pool_run_span(kC)
// input columns once into registers (padding as the identity: -inf for max, 0 for avg), element
// by element or as aligned 16-byte vectors (kC.vec, pool_vec), and each output folds its own
// kernel_w of them. A max pool whose windows overlap along h computes kC.rows output rows of
// its run (pool_rows), which load each of their input rows once. A row wider than
// kPoolUnrolled is folded as it is loaded, 4 positions a step (run 1).
template <const PoolConfig& kC, class C, class Index, class T, class Out, class Load, class Store>
__device__ __forceinline__ void pool(const T* __restrict__ in, Out* __restrict__ out, const Load& load,
                                     const Store& store, long long planes = 0) {
  constexpr long long kPlaneIn = kC.in_d * kC.in_h * kC.in_w;
  constexpr int kRun = kC.run;
  constexpr int kVec = kC.vec;
  static_assert(kVec == 1 || (kRun == kVec && int(sizeof(T)) * kVec == 16), "a vector run is 16 bytes of outputs");
  constexpr bool kColumns = pool_run_span(kC) <= kPoolUnrolled;   // the row's columns in registers
  constexpr int kSpan = kColumns ? int(pool_run_span(kC)) : 1;
  static_assert(kColumns || kRun == 1, "a run's columns are held in registers");
  constexpr int kUnrollD = pool_unroll(kC.kernel_d), kUnrollH = pool_unroll(kC.kernel_h),
                kUnrollW = pool_unroll(kC.kernel_w);
  constexpr Index kRunsW = Index(launch::ceil_div(kC.out_w, kC.run));
  constexpr int kRows = kC.rows;
  constexpr Index kRowsH = Index(launch::ceil_div(kC.out_h, kC.rows));
  constexpr int kRowSpan = int(pool_row_span(kC));
  static_assert(kRows == 1 || (kC.max && kColumns && kRowSpan <= kPoolUnrolled),
                "runs of rows: max pools (any fold order gives the same value), columns and rows in registers");
  using P = typename detail::PlaneIndex<(kPlaneIn < (1LL << 31)), Index>::type;
  using detail::least;
  using detail::most;
  PoolConfig at = kC;   // (a constant where the planes are static)
  if constexpr (kC.planes == 0) at.planes = planes;
  const Index total = Index(pool_steps(at));
  const Index step = Index(gridDim.x) * Index(blockDim.x);
  for (Index e = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x); e < total; e = stride_next(e, step, total)) {
    Index r = e;
    const P ow0 = P(r % kRunsW) * kRun;
    r /= kRunsW;
    const P oh0 = P(r % kRowsH) * kRows;
    r /= kRowsH;
    const P od = P(r % Index(kC.out_d));
    const Index row_out = r * Index(kC.out_h) + Index(oh0);   // the first output row (plane, d, h): r = plane * out_d + d
    const Index base = (r / Index(kC.out_d)) * Index(kPlaneIn);
    const P d0 = od * kC.stride_d - kC.padding_d, h0 = oh0 * kC.stride_h - kC.padding_h,
            w0 = ow0 * kC.stride_w - kC.padding_w;   // the run's first window
    const C identity = kC.max ? Limits<C>::lowest() : C(0);
    auto fold = [&](C& a, C x) {
      if constexpr (kC.max) {
        if (x > a || is_nan(x)) a = x;
      } else {
        a += x;
      }
    };
    // The run's pool_run_span(kC) input columns of one input row (the offset of the row in its plane).
    auto load_columns = [&](const P row, C (&col)[kSpan]) {
      if constexpr (kVec > 1) {
        // [Note: pool runs] in config/pool.h: aligned 16-byte vectors, each wholly inside the
        // row or wholly outside it (in_w is a multiple of kVec).
        constexpr int kMis = pool_misalignment(kVec, kC.padding_w);
        constexpr int kVectors = int(pool_row_vectors(kVec, kC.padding_w, kSpan));
#pragma unroll
        for (int q = 0; q < kVectors; ++q) {
          const P c0 = w0 - P(kMis) + P(q * kVec);
          const bool inside = c0 >= 0 && c0 < P(kC.in_w);
          const Index f0 = base + Index(row + c0);
          const Vec<T, kVec> v = inside ? bit_cast_dev<Vec<T, kVec>>(ldg16(in + f0)) : Vec<T, kVec>{};
#pragma unroll
          for (int i = 0; i < kVec; ++i) {
            const int t = q * kVec + i - kMis;
            if (t >= 0 && t < kSpan) col[t] = inside ? C(load(v.v[i], f0 + Index(i))) : identity;
          }
        }
      } else {
#pragma unroll
        for (int t = 0; t < kSpan; ++t) {
          const P iw = w0 + P(t);
          const Index f = base + Index(row + iw);
          col[t] = iw >= 0 && iw < P(kC.in_w) ? C(load(ldg(in + f), f)) : identity;
        }
      }
    };
    // Folds each output's kernel_w columns of one row into its accumulator.
    auto fold_row = [&](C (&a)[kRun], const C (&col)[kSpan]) {
#pragma unroll
      for (int v = 0; v < kRun; ++v)
#pragma unroll
        for (int jw = 0; jw < kC.kernel_w; ++jw) fold(a[v], col[v * kC.stride_w + jw * kC.dilation_w]);
    };
    C acc[kRows][kRun];
#pragma unroll
    for (int u = 0; u < kRows; ++u)
#pragma unroll
      for (int v = 0; v < kRun; ++v) acc[u][v] = identity;
#pragma unroll kUnrollD
    for (int jd = 0; jd < kC.kernel_d; ++jd) {
      const P id = d0 + P(jd) * kC.dilation_d;
      if (id < 0 || id >= P(kC.in_d)) continue;
      if constexpr (kRows > 1) {
        // [Note: pool rows] in config/pool.h: each input row the run's kRows output rows read is
        // loaded once, folded along w per output, and that fold folded into every output row
        // whose window holds the row, in the order of its window rows.
#pragma unroll
        for (int t = 0; t < kRowSpan; ++t) {
          if (!pool_row_used(kRows, kC.kernel_h, kC.stride_h, kC.dilation_h, t)) continue;
          const P ih = h0 + P(t);
          if (ih < 0 || ih >= P(kC.in_h)) continue;
          C col[kSpan];
          load_columns((id * P(kC.in_h) + ih) * P(kC.in_w), col);
          C part[kRun];
#pragma unroll
          for (int v = 0; v < kRun; ++v) part[v] = identity;
          fold_row(part, col);
#pragma unroll
          for (int u = 0; u < kRows; ++u)
#pragma unroll
            for (int jh = 0; jh < kC.kernel_h; ++jh)
              if (u * kC.stride_h + jh * kC.dilation_h == t)
#pragma unroll
                for (int v = 0; v < kRun; ++v) fold(acc[u][v], part[v]);
        }
      } else {
#pragma unroll kUnrollH
        for (int jh = 0; jh < kC.kernel_h; ++jh) {
          const P ih = h0 + P(jh) * kC.dilation_h;
          if (ih < 0 || ih >= P(kC.in_h)) continue;
          const P row = (id * P(kC.in_h) + ih) * P(kC.in_w);
          if constexpr (kColumns) {
            C col[kSpan];
            load_columns(row, col);
            fold_row(acc[0], col);
          } else {
#pragma unroll kUnrollW
            for (int jw = 0; jw < kC.kernel_w; ++jw) {
              const P iw = w0 + P(jw) * kC.dilation_w;
              if (iw < 0 || iw >= P(kC.in_w)) continue;
              const Index f = base + Index(row + iw);
              fold(acc[0][0], C(load(ldg(in + f), f)));
            }
          }
        }
      }
    }
    // The run's outputs that exist (the row's last run may be short, and the plane's last rows),
    // all computed before the first is stored: [Note: pool runs] in config/pool.h.
    const int valid = int(least(P(kRun), P(kC.out_w) - ow0));
    Out result[kRows][kRun];
#pragma unroll
    for (int u = 0; u < kRows; ++u) {
      const P hu = h0 + P(u) * kC.stride_h;   // output row u's first window row
#pragma unroll
      for (int v = 0; v < kRun; ++v) {
        C value = acc[u][v];
        if constexpr (!kC.max) {
          // The divisor: the window clipped to the padded input (include_pad), or to the input.
          const P wv = w0 + P(v) * kC.stride_w;
          const P d1 = least(d0 + P(kC.kernel_d), P(kC.in_d + kC.padding_d));
          const P h1 = least(hu + P(kC.kernel_h), P(kC.in_h + kC.padding_h));
          const P w1 = least(wv + P(kC.kernel_w), P(kC.in_w + kC.padding_w));
          const P inside = most(least(d1, P(kC.in_d)) - most(d0, P(0)), P(0)) *
                           most(least(h1, P(kC.in_h)) - most(hu, P(0)), P(0)) *
                           most(least(w1, P(kC.in_w)) - most(wv, P(0)), P(0));
          const P divisor = kC.divisor != 0 ? P(kC.divisor) : kC.include_pad ? (d1 - d0) * (h1 - hu) * (w1 - wv) : inside;
          value = inside > 0 ? value / C(divisor) : C(0);
        }
        if (v < valid && oh0 + P(u) < P(kC.out_h))
          result[u][v] = store(value, (row_out + Index(u)) * Index(kC.out_w) + Index(ow0 + v));
      }
    }
#pragma unroll
    for (int u = 0; u < kRows; ++u)
#pragma unroll
      for (int v = 0; v < kRun; ++v)
        if (v < valid && oh0 + P(u) < P(kC.out_h)) {
          const Index o = (row_out + Index(u)) * Index(kC.out_w) + Index(ow0 + v);
          out[o] = result[u][v];
        }
  }
}

}  // namespace kiln
