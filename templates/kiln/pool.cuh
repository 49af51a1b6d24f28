// kiln/pool.cuh — the pooling template: max_pool / avg_pool over the last 1-3 axes.
//
// Contract: `kC` is the planner's PoolConfig (kiln/config/pool.h), a constexpr object of the unit;
// C the compute type (float for f32/f16/bf16, double for f64). The generated functors are
//     struct Load  { struct Lead; __device__ Lead lead(Index plane) const;
//                    __device__ C operator()(T elem, Index flat, const Lead& at) const; };    // the operand at input flat index
//     struct Store { struct Lead; __device__ Lead lead(Index plane) const;
//                    __device__ Out operator()(C result, Index flat, const Lead& at) const; };  // the fused epilogue at output flat
// `in` is the stored tensor the operand streams (T its element); Load returns the operand's value
// at `flat` (elem is in[flat]). `plane` is flat's index over the axes before the pooled ones (the
// same for the input and the output elements of a step): each functor's lead(plane) computes
// what it needs of those axes (their coordinates), once a step and outside every predicated
// load, and each call of the step gets it as `at`. Each output element: max keeps the
// first NaN it meets (PyTorch's `val > max || isnan(val)`), -inf where the window holds no input
// position; avg sums in C the in-bounds positions of the window and divides by divisor_override,
// else the window clipped to the padded input (include_pad), else the in-bounds count; a window
// with no in-bounds position is 0. PyTorch's avg_pool kernels, the same arithmetic.
// Launch: any 1-D grid of 1-D blocks (grid-stride); the planner's rule: pool_geometry.
// `planes`: the leading extents' product where kC.planes is 0 (dyn planes, [Note: dyn pool planes]
// in plan_pool.cpp); a static config's are its own. `dyn`: the extents the config holds as 0 (dyn
// pooled axes, [Note: dyn pooled axes] in plan_pool.cpp), with the step counts along w and h that
// the flat step index is divided by, each with its division constants (kiln::DynDim).
#pragma once

#include "kiln/common.cuh"
#include "kiln/config/pool.h"

namespace kiln {

// [Note: pool windows without branches]
// A window row or position outside the input is not skipped by a branch: its loads are predicated
// off and it folds the identity (-inf or the type's lowest for max, 0 for avg). A skip put each
// row's loads behind its own branch, and the compiler then waited for each row's loads before the
// next row's were issued: KernelBench 46's 3x3x3 avg pool ran at 70% of copy with the warps
// stalled on those loads (Nsight Compute, 2026-12-07: 18 cycles of long scoreboard per issued
// instruction, every row's first use of its loads the hot spot). Folding the identity changes no
// result bit: max(a, lowest) is a (a NaN stays), and a + 0 is a for every a but -0, which a sum
// that starts at +0 never holds.
namespace detail {
template <bool kNarrow, class Wide> struct PlaneIndex { using type = Wide; };
template <class Wide> struct PlaneIndex<true, Wide> { using type = int; };
template <class I> __device__ __forceinline__ I least(I a, I b) { return a < b ? a : b; }
template <class I> __device__ __forceinline__ I most(I a, I b) { return a < b ? b : a; }
// q = r / d, r %= d as r - q * d, for a constant d or a dyn one (DynExtent: multiply-high and shift).
template <class Index, class D> __device__ __forceinline__ Index take_index(Index& r, const D& d) {
  const Index q = r / d;
  const Index m = r - q * Index(d);
  r = q;
  return m;
}
// a = the larger of a and x, NaN if either is: max.NaN for f32 (common.cuh's fmax_nan: one
// instruction, where PyTorch's `x > a || isnan(x)` takes three and held KernelBench 41 at 63% of
// a copy); PyTorch's compare for f64, whose max has no NaN-propagating instruction.
__device__ __forceinline__ void max_fold(float& a, float x) { a = fmax_nan(a, x); }
template <class C> __device__ __forceinline__ void max_fold(C& a, C x) {
  if (x > a || is_nan(x)) a = x;
}
// [Note: pool wide stores] in config/pool.h. Stores a run's kRun outputs at out + o, whose
// o % kRun is kA: from output v on, as one vector of the most outputs (a power of two, at most
// 16 bytes, none past the run) that start at a multiple of their number.
template <int kA, int kV, int kRun, class Out, class Index>
__device__ __forceinline__ void store_pieces(Out* out, Index o, const Out (&r)[kRun]) {
  if constexpr (kV < kRun) {
    constexpr int kW = pool_store_piece(kA + kV, kRun - kV, int(sizeof(Out)));
    Vec<Out, kW> piece;
#pragma unroll
    for (int i = 0; i < kW; ++i) piece.v[i] = r[kV + i];
    store_vec_bits<false>(out + o + Index(kV), piece);
    store_pieces<kA, kV + kW, kRun>(out, o, r);
  }
}
template <int kA, int kRun, class Out, class Index>
__device__ __forceinline__ void store_run(Out* out, Index o, int a, const Out (&r)[kRun]) {
  if constexpr (kA + 1 < kRun) {
    if (a != kA) {
      store_run<kA + 1, kRun>(out, o, a, r);
      return;
    }
  }
  store_pieces<kA, 0, kRun>(out, o, r);
}
}  // namespace detail

// The extents of a pool's dyn pooled axes at this launch (only those its config holds as 0 are read);
// the members in kPoolDynFields' order (config/pool.h).
struct PoolDyn {
  DynDim in_d, in_h, in_w, out_d, out_h, out_w;
  DynDim runs_w, rows_h;   // ceil(out_w / run), ceil(out_h / rows): the flat step index's divisors
};

// A base for Load and Store functors that need nothing of the plane (hand-written instantiations).
struct PoolNoLead {
  struct Lead {};
  template <class I>
  __device__ __forceinline__ Lead lead(I) const { return {}; }
};

// Window loops run over the kernel's positions with compile-time trip counts, unrolled whole up
// to kPoolUnrolled positions an axis (every load of a window in flight at once), positions
// outside the input folded as the identity ([Note: pool windows without branches]); offsets
// within a plane are 32-bit where a plane has fewer than 2^31 elements (the plane's base stays Index). A thread step computes a run of kC.run adjacent
// outputs along w (pool_run): per (d, h) row of the windows it loads the run's pool_run_span(kC)
// input columns once into registers (padding as the identity: -inf for max, 0 for avg), element
// by element or as aligned 16-byte vectors (kC.vec, pool_vec), and each output folds its own
// kernel_w of them. A max pool whose windows overlap along h computes kC.rows output rows of
// its run (pool_rows), which load each of their input rows once. A row wider than
// kPoolUnrolled is folded as it is loaded, 4 positions a step (run 1).
template <const PoolConfig& kC, class C, class Index, class T, class Out, class Load, class Store>
__device__ __forceinline__ void pool(const T* __restrict__ in, Out* __restrict__ out, const Load& load,
                                     const Store& store, long long planes = 0, const PoolDyn& dyn = PoolDyn{}) {
  constexpr bool kDynAxes = kC.in_d == 0 || kC.in_h == 0 || kC.in_w == 0;
  static_assert(kDynAxes == (kC.out_d == 0 || kC.out_h == 0 || kC.out_w == 0), "a dyn pooled axis: in and out extents");
  constexpr long long kPlaneIn = kC.in_d * kC.in_h * kC.in_w;   // 0 with dyn pooled axes
  constexpr int kRun = kC.run;
  constexpr int kVec = kC.vec;
  static_assert(kVec == 1 || (kRun == kVec && int(sizeof(T)) * kVec == 16), "a vector run is 16 bytes of outputs");
  constexpr bool kColumns = pool_run_span(kC) <= kPoolUnrolled;   // the row's columns in registers
  constexpr int kSpan = kColumns ? int(pool_run_span(kC)) : 1;
  static_assert(kColumns || kRun == 1, "a run's columns are held in registers");
  constexpr int kUnrollD = pool_unroll(kC.kernel_d), kUnrollH = pool_unroll(kC.kernel_h),
                kUnrollW = pool_unroll(kC.kernel_w);
  constexpr int kRows = kC.rows;
  constexpr int kRowSpan = int(pool_row_span(kC));
  static_assert(kRows == 1 || (kC.max && kColumns && kRowSpan <= kPoolUnrolled),
                "runs of rows: max pools (any fold order gives the same value), columns and rows in registers");
  using P = typename detail::PlaneIndex<(!kDynAxes && kPlaneIn < (1LL << 31)), Index>::type;
  using detail::least;
  using detail::most;
  // Each extent: the config's constant, or this launch's where the config holds 0.
  const P in_d = kC.in_d ? P(kC.in_d) : P(dyn.in_d.value), in_h = kC.in_h ? P(kC.in_h) : P(dyn.in_h.value),
          in_w = kC.in_w ? P(kC.in_w) : P(dyn.in_w.value);
  const P out_d = kC.out_d ? P(kC.out_d) : P(dyn.out_d.value), out_h = kC.out_h ? P(kC.out_h) : P(dyn.out_h.value),
          out_w = kC.out_w ? P(kC.out_w) : P(dyn.out_w.value);
  const Index plane_in = Index(in_d) * Index(in_h) * Index(in_w);
  const auto runs_w = [&] {
    if constexpr (kC.out_w == 0) return DynExtent<Index>(dyn.runs_w);
    else return Index(launch::ceil_div(kC.out_w, kC.run));
  }();
  const auto rows_h = [&] {
    if constexpr (kC.out_h == 0) return DynExtent<Index>(dyn.rows_h);
    else return Index(launch::ceil_div(kC.out_h, kC.rows));
  }();
  const auto planes_d = [&] {   // r / out_d: the plane of the row r = plane * out_d + d
    if constexpr (kC.out_d == 0) return DynExtent<Index>(dyn.out_d);
    else return Index(kC.out_d);
  }();
  PoolConfig at = kC;   // (a constant where the planes and pooled axes are static)
  if constexpr (kC.planes == 0) at.planes = planes;
  if constexpr (kDynAxes) at.out_d = out_d, at.out_h = out_h, at.out_w = out_w;
  const Index total = Index(pool_steps(at));
  const Index step = Index(gridDim.x) * Index(blockDim.x);
  for (Index e = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x); e < total; e = stride_next(e, step, total)) {
    Index r = e;
    const P ow0 = P(detail::take_index(r, runs_w)) * kRun;
    const P oh0 = P(detail::take_index(r, rows_h)) * kRows;
    const Index row_out = r * Index(out_h) + Index(oh0);   // the first output row (plane, d, h): r = plane * out_d + d
    const P od = P(detail::take_index(r, planes_d));
    const Index plane = r;
    const Index base = plane * plane_in;
    const auto load_at = load.lead(plane);    // once a step: not sunk into each predicated load
    const auto store_at = store.lead(plane);
    const P d0 = od * kC.stride_d - kC.padding_d, h0 = oh0 * kC.stride_h - kC.padding_h,
            w0 = ow0 * kC.stride_w - kC.padding_w;   // the run's first window
    const C identity = kC.max ? Limits<C>::lowest() : C(0);
    auto fold = [&](C& a, C x) {
      if constexpr (kC.max) {
        detail::max_fold(a, x);
      } else {
        a += x;
      }
    };
    // The run's pool_run_span(kC) input columns of one input row (the offset of the row in its plane).
    // `row_ok`: the row is inside the input; a position outside is the identity, by a predicated
    // load, not a branch ([Note: pool windows without branches]).
    auto load_columns = [&](const bool row_ok, const P row, C (&col)[kSpan]) {
      if constexpr (kVec > 1) {
        // [Note: pool runs] in config/pool.h: aligned 16-byte vectors, each wholly inside the
        // row or wholly outside it (in_w is a multiple of kVec).
        constexpr int kMis = pool_misalignment(kVec, kC.padding_w);
        constexpr int kVectors = int(pool_row_vectors(kVec, kC.padding_w, kSpan));
#pragma unroll
        for (int q = 0; q < kVectors; ++q) {
          const P c0 = w0 - P(kMis) + P(q * kVec);
          const bool inside = row_ok && c0 >= 0 && c0 < in_w;
          const Index f0 = base + Index(row + c0);
          const Vec<T, kVec> v = inside ? bit_cast_dev<Vec<T, kVec>>(ldg16(in + f0)) : Vec<T, kVec>{};
#pragma unroll
          for (int i = 0; i < kVec; ++i) {
            const int t = q * kVec + i - kMis;
            if (t >= 0 && t < kSpan) col[t] = inside ? C(load(v.v[i], f0 + Index(i), load_at)) : identity;
          }
        }
      } else {
#pragma unroll
        for (int t = 0; t < kSpan; ++t) {
          const P iw = w0 + P(t);
          const Index f = base + Index(row + iw);
          col[t] = row_ok && iw >= 0 && iw < in_w ? C(load(ldg(in + f), f, load_at)) : identity;
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
      const bool d_ok = id >= 0 && id < in_d;
      if constexpr (kRows > 1) {
        // [Note: pool rows] in config/pool.h: each input row the run's kRows output rows read is
        // loaded once, folded along w per output, and that fold folded into every output row
        // whose window holds the row, in the order of its window rows.
#pragma unroll
        for (int t = 0; t < kRowSpan; ++t) {
          if (!pool_row_used(kRows, kC.kernel_h, kC.stride_h, kC.dilation_h, t)) continue;
          const P ih = h0 + P(t);
          C col[kSpan];
          load_columns(d_ok && ih >= 0 && ih < in_h, (id * in_h + ih) * in_w, col);
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
          const bool row_ok = d_ok && ih >= 0 && ih < in_h;
          const P row = (id * in_h + ih) * in_w;
          if constexpr (kColumns) {
            C col[kSpan];
            load_columns(row_ok, row, col);
            fold_row(acc[0], col);
          } else {
#pragma unroll kUnrollW
            for (int jw = 0; jw < kC.kernel_w; ++jw) {
              const P iw = w0 + P(jw) * kC.dilation_w;
              const Index f = base + Index(row + iw);
              fold(acc[0][0], row_ok && iw >= 0 && iw < in_w ? C(load(ldg(in + f), f, load_at)) : identity);
            }
          }
        }
      }
    }
    // The run's outputs that exist (the row's last run may be short, and the plane's last rows),
    // all computed before the first is stored: [Note: pool runs] in config/pool.h.
    const int valid = int(least(P(kRun), out_w - ow0));
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
          const P d1 = least(d0 + P(kC.kernel_d), in_d + P(kC.padding_d));
          const P h1 = least(hu + P(kC.kernel_h), in_h + P(kC.padding_h));
          const P w1 = least(wv + P(kC.kernel_w), in_w + P(kC.padding_w));
          const P inside = most(least(d1, in_d) - most(d0, P(0)), P(0)) *
                           most(least(h1, in_h) - most(hu, P(0)), P(0)) *
                           most(least(w1, in_w) - most(wv, P(0)), P(0));
          const P divisor = kC.divisor != 0 ? P(kC.divisor) : kC.include_pad ? (d1 - d0) * (h1 - hu) * (w1 - wv) : inside;
          value = inside > 0 ? value / C(divisor) : C(0);
        }
        if (v < valid && oh0 + P(u) < out_h)
          result[u][v] = store(value, (row_out + Index(u)) * Index(out_w) + Index(ow0 + v), store_at);
      }
    }
    if constexpr (kC.wide_stores) {
      // [Note: pool wide stores] in config/pool.h.
      if (valid == kRun) {
#pragma unroll
        for (int u = 0; u < kRows; ++u)
          if (oh0 + P(u) < out_h) {
            const Index o = (row_out + Index(u)) * Index(out_w) + Index(ow0);
            detail::store_run<0, kRun>(out, o, int(o % kRun), result[u]);
          }
        continue;
      }
    }
#pragma unroll
    for (int u = 0; u < kRows; ++u)
#pragma unroll
      for (int v = 0; v < kRun; ++v)
        if (v < valid && oh0 + P(u) < out_h) {
          const Index o = (row_out + Index(u)) * Index(out_w) + Index(ow0 + v);
          out[o] = result[u][v];
        }
  }
}

}  // namespace kiln
