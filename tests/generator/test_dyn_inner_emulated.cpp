// The emulated side of test_dyn_inner.cpp's launches of strided reductions and scans over a dyn inner extent
// ([Note: dyn inner extents] in generator/plan/plan_memory.cpp): the templates compiled as host
// code through cuda_emulator.h, instantiated with a planned config's numbers, and launched on the
// grid, split count and chunk the plan gives a launch; then reduce_finish where it splits.
#include "cuda_emulator.h"   // first: compiles the templates as host code

#include "kiln/reduce.cuh"
#include "kiln/scan.cuh"
#include "reduce_emulation.h"

#include <doctest/doctest.h>

#include <type_traits>

namespace reduce_emulation {
namespace {

using kiln::ReduceVariant;

struct Id {
  template <class R>
  R operator()(R r, int) const {
    return r;
  }
};

// Calls f(std::integral_constant<int, V>{}) for the V of `kValues` equal to `v` (a config's number
// as a template argument).
template <int... kValues, class F>
void dispatch(int v, F&& f) {
  bool found = false;
  ((v == kValues ? (f(std::integral_constant<int, kValues>{}), found = true) : false), ...);
  REQUIRE_MESSAGE(found, "no instantiation for " << v);
}

template <class Op>
std::vector<float> run_op(const Launch& l, const float* x, int outer, int red, int inner) {
  const kiln::ReduceConfig& c = l.config;
  const int splits = static_cast<int>(l.grid_y), chunk = static_cast<int>(l.chunk);
  const bool split = c.splits > 1;
  std::vector<typename Op::Acc> partials(split ? static_cast<std::size_t>(splits) * outer * inner : 0, Op::identity());
  std::vector<float> out(static_cast<std::size_t>(outer) * inner, -5.f);
  float* const dst = split ? nullptr : out.data();   // as the unit: a split kernel stores partial states only
  auto* const acc = split ? partials.data() : nullptr;
  const emu::Dim grid{unsigned(l.grid_x), unsigned(l.grid_y), 0};
  switch (c.variant) {
    case ReduceVariant::kOuter:
      dispatch<32, 64, 128, 256>(c.threads, [&](auto t) {
        constexpr int kThreads = decltype(t)::value;
        if (c.vec == 4) {
          REQUIRE(c.unroll == 4);
          emu::launch(grid, kThreads, [&] {
            kiln::reduce_outer<kThreads, 4, 4, Op>(x, dst, acc, outer, red, inner, splits, chunk, Id{}, Id{});
          });
        } else {
          REQUIRE(c.vec == 1);
          REQUIRE(c.unroll == 8);
          emu::launch(grid, kThreads, [&] {
            kiln::reduce_outer<kThreads, 8, 1, Op>(x, dst, acc, outer, red, inner, splits, chunk, Id{}, Id{});
          });
        }
      });
      break;
    case ReduceVariant::kOuterV4:
      REQUIRE(c.unroll == kiln::launch::kOuterV4Unroll);
      dispatch<256, 512, 1024>(c.threads, [&](auto t) {
        constexpr int kThreads = decltype(t)::value;
        emu::launch(grid, kThreads, [&] {
          kiln::reduce_outer_rows_v4<kThreads, kiln::launch::kOuterV4Unroll, Op>(x, dst, acc, outer, red, inner,
                                                                                splits, chunk, Id{}, Id{});
        });
      });
      break;
    case ReduceVariant::kOuterRows:
      REQUIRE(c.threads == kiln::launch::kOuterRowsThreads);
      REQUIRE(c.unroll == 1);
      dispatch<4, 8, 16>(c.cols, [&](auto cols) {
        emu::launch(grid, kiln::launch::kOuterRowsThreads, [&] {
          kiln::reduce_outer_rows<kiln::launch::kOuterRowsThreads, decltype(cols)::value, 1, Op>(
              x, dst, acc, outer, red, inner, splits, chunk, Id{}, Id{});
        });
      });
      break;
    default: FAIL("a strided variant expected, got " << kiln::enum_name(c.variant));
  }
  if (split) {
    REQUIRE(l.finish_threads == 256);
    dispatch<1, 2, 4, 8, 16, 32>(l.finish_lanes, [&](auto lanes) {
      emu::launch({unsigned(l.finish_grid_x), 1, 0}, 256, [&] {
        kiln::reduce_finish<256, decltype(lanes)::value, Op>(partials.data(), out.data(), outer * inner, splits, red,
                                                             Id{});
      });
    });
  }
  return out;
}

}  // namespace

std::vector<float> run(const Launch& l, bool max, const float* x, int outer, int red, int inner) {
  return max ? run_op<kiln::MaxOp<float>>(l, x, outer, red, inner)
             : run_op<kiln::SumOp<float>>(l, x, outer, red, inner);
}

namespace {
template <bool kReverse, class Op>
std::vector<float> run_scan_op(const kiln::ScanConfig& c, const kiln::launch::Geometry& g, const float* x, int outer,
                               int len, int inner) {
  REQUIRE(c.unroll == 8);
  const int chunks = static_cast<int>(g.grid.y);
  REQUIRE((c.chunk_sms > 0 || chunks == c.chunks));
  const int chunk = static_cast<int>(c.chunk_sms > 0 ? kiln::scan_launch_chunk(len, chunks) : c.chunk);
  std::vector<float> totals(static_cast<std::size_t>(chunks) * outer * inner, -7.f), out;
  out.assign(static_cast<std::size_t>(outer) * len * inner, -5.f);
  const emu::Dim grid{unsigned(g.grid.x), unsigned(chunks), 0};
  dispatch<32, 64, 128, 256>(c.threads, [&](auto t) {
    constexpr int kThreads = decltype(t)::value;
    if (c.variant == kiln::ScanVariant::kStridedTotals && chunks > 1)   // (one chunk: not launched)
      emu::launch(grid, kThreads, [&] {
        kiln::scan_strided_totals<kThreads, 8, kReverse, Op>(x, totals.data(), outer, len, inner, chunk, Id{});
      });
    else
      REQUIRE(c.variant == kiln::ScanVariant::kStrided);
    emu::launch(grid, kThreads, [&] {
      kiln::scan_strided<kThreads, 8, false, kReverse, Op>(x, out.data(), chunks > 1 ? totals.data() : nullptr, outer,
                                                          len, inner, chunk, Id{}, Id{});
    });
  });
  return out;
}
}  // namespace

std::vector<float> run_scan(const kiln::ScanConfig& config, const kiln::launch::Geometry& g, bool reverse,
                            const float* x, int outer, int len, int inner) {
  return reverse ? run_scan_op<true, kiln::MaxOp<float>>(config, g, x, outer, len, inner)
                 : run_scan_op<false, kiln::SumOp<float>>(config, g, x, outer, len, inner);
}

}  // namespace reduce_emulation
