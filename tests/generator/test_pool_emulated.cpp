// Runs the pooling template (kiln/pool.cuh) on the CPU through cuda_emulator.h for window
// settings that exercise each edge (padding on both sides, ceil_mode's partial last window, a
// dilated window, count_include_pad off, divisor_override, 1-3 spatial axes, NaN and
// infinities) and holds it to the float64 reference of the same spec text. The GPU runs the
// same template against PyTorch (python/tests/test_pooling.py).
#include "cuda_emulator.h"   // first: compiles the templates as host code

#include "kiln/pool.cuh"

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pool_cases.h"

namespace {

// Load and Store as the generated ones are called: lead(plane) once a step, then each call with
// its result. Each counts the calls whose step's plane is not flat's plane (flat / the elements
// of a plane).
struct Identity {
  int plane_elems;
  std::atomic<int>* wrong_planes;
  struct Lead {
    int plane;
  };
  Lead lead(int plane) const { return {plane}; }
  float operator()(float x, int flat, const Lead& at) const {
    if (at.plane != flat / plane_elems) ++*wrong_planes;
    return x;
  }
};
using Keep = Identity;

// kiln::PoolConfig{threads, max, planes, in_d, in_h, in_w, out_d, out_h, out_w, kernel_{d,h,w},
// stride_{d,h,w}, padding_{d,h,w}, dilation_{d,h,w}, include_pad, divisor, run, vec, rows,
// wide_stores}, as
// the planner gives them for the spec beside each (tests/generator/test_pool.cpp checks the
// planner's side). The three max pools with rows = 4 (pool_rows) end in a short run of rows
// (out_h 4, 6 and 5), one with a dilation along h equal to its stride.
constexpr kiln::PoolConfig kMaxCeil{64, true, 6, 1, 9, 7, 1, 4, 3, 1, 3, 2, 1, 2, 3, 0, 1, 1, 1, 2, 1, true, 0, 1, 1, 4};
constexpr kiln::PoolConfig kAvgExclude{64, false, 4, 1, 1, 11, 1, 1, 4, 1, 1, 3, 1, 1, 3, 0, 0, 1, 1, 1, 1, false, 0};
constexpr kiln::PoolConfig kAvg3d{64, false, 2, 5, 6, 7, 3, 3, 4, 2, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, true, 0, 4, 1, 1, true};
constexpr kiln::PoolConfig kAvgDivisor{64, false, 3, 1, 5, 6, 1, 3, 3, 1, 2, 4, 1, 2, 3, 0, 1, 2, 1, 1, 1, true, 5};
// Runs of 4 outputs along w (the planner's pool_run gives them to stride-1 max pools; the
// template takes a run for any pool): rows of 10 and 7 outputs end in a short run.
constexpr kiln::PoolConfig kMaxRun{64, true, 2, 1, 6, 12, 1, 6, 10, 1, 3, 4, 1, 1, 1, 0, 1, 2, 1, 1, 2, true, 0, 4, 1, 4, true};
// A window wider than kPoolUnrolled: folded as it is loaded, 4 positions a step.
constexpr kiln::PoolConfig kAvgWide{64, false, 2, 1, 1, 200, 1, 1, 28, 1, 1, 70, 1, 1, 5, 0, 0, 3, 1, 1, 1, false, 0, 1};
constexpr kiln::PoolConfig kAvgRun{64, false, 3, 1, 1, 13, 1, 1, 7, 1, 1, 5, 1, 1, 2, 0, 0, 2, 1, 1, 1, false, 0, 4, 1, 1, true};
// Vector runs (pool_vec): 16-byte loads of a run's columns, each vector wholly inside a row or
// outside it. Padding 1 puts a run's first column 3 past an aligned one; a 2-d stride-1 max pool
// whose rows (11 outputs) end in a short run, a strided 3-d avg pool (padding 2 along w), and a
// dilated 1-d max pool.
constexpr kiln::PoolConfig kMaxVec{64, true, 2, 1, 5, 12, 1, 5, 11, 1, 3, 4, 1, 1, 1, 0, 1, 1, 1, 1, 1, true, 0, 4, 4, 4, true};
constexpr kiln::PoolConfig kAvgVec{64, false, 2, 5, 6, 16, 3, 3, 9, 2, 3, 4, 2, 2, 2, 1, 1, 2, 1, 1, 1, true, 0, 4, 4, 1, true};
constexpr kiln::PoolConfig kMaxVecDilated{64, true, 3, 1, 1, 24, 1, 1, 19, 1, 1, 4, 1, 1, 1, 0, 0, 2, 1, 1, 3, true, 0, 4, 4, 1, true};
// Wide stores (pool_wide_stores) over rows of 71 outputs: runs start at every flat index mod 4
// (their four shapes of vectors), and each row ends in a short run, stored element by element.
constexpr kiln::PoolConfig kMaxWide{64, true, 2, 1, 9, 71, 1, 9, 71, 1, 3, 3, 1, 1, 1, 0, 1, 1, 1, 1, 1, true, 0, 4, 1, 4, true};

using Case = EmulatedPoolCase;

template <const kiln::PoolConfig& kC>
std::vector<float> emulate(const std::vector<float>& x) {
  std::vector<float> y(static_cast<std::size_t>(kiln::pool_outputs(kC)), -7.f);
  std::atomic<int> wrong_planes{0};
  const Identity load{int(kC.in_d * kC.in_h * kC.in_w), &wrong_planes};
  const Keep store{int(kC.out_d * kC.out_h * kC.out_w), &wrong_planes};
  emu::launch({2, 1, 0}, kC.threads, [&] { kiln::pool<kC, float, int>(x.data(), y.data(), load, store); });
  CHECK(wrong_planes.load() == 0);
  return y;
}

std::vector<double> reference(const Case& c, const std::vector<float>& x) {
  return pool_reference(c.shape, c.expr, c.dims, std::vector<double>(x.begin(), x.end()));
}

}  // namespace

const std::vector<EmulatedPoolCase>& emulated_pool_cases() {
  static const std::vector<EmulatedPoolCase> cases = {
      {&kMaxCeil, "2, 3, 9, 7", "max_pool2d(x, [3, 2], stride=[2, 3], padding=[1, 1], dilation=[2, 1], ceil_mode=true)",
       {2, 3, 9, 7}},
      {&kAvgExclude, "4, 11", "avg_pool1d(x, 3, stride=3, padding=1, ceil_mode=true, count_include_pad=false)", {4, 11}},
      {&kAvg3d, "2, 5, 6, 7", "avg_pool3d(x, [2, 3, 3], stride=2, padding=1)", {2, 5, 6, 7}},
      {&kAvgDivisor, "3, 5, 6", "avg_pool2d(x, [2, 4], stride=[2, 3], padding=[1, 2], divisor_override=5)", {3, 5, 6}},
      {&kMaxRun, "2, 6, 12", "max_pool2d(x, [3, 4], stride=1, padding=[1, 2], dilation=[1, 2])", {2, 6, 12}},
      {&kAvgRun, "3, 13", "avg_pool1d(x, 5, stride=2, padding=2, ceil_mode=true, count_include_pad=false)", {3, 13}},
      {&kAvgWide, "2, 200", "avg_pool1d(x, 70, stride=5, padding=3, count_include_pad=false)", {2, 200}},
      {&kMaxVec, "2, 5, 12", "max_pool2d(x, [3, 4], stride=1, padding=[1, 1])", {2, 5, 12}},
      {&kAvgVec, "2, 5, 6, 16", "avg_pool3d(x, [2, 3, 4], stride=2, padding=[1, 1, 2])", {2, 5, 6, 16}},
      {&kMaxVecDilated, "3, 24", "max_pool1d(x, 4, stride=1, padding=2, dilation=3)", {3, 24}},
      {&kMaxWide, "2, 9, 71", "max_pool2d(x, 3, stride=1, padding=1)", {2, 9, 71}},
  };
  return cases;
}

TEST_CASE("emulated pool: max, avg (include and exclude padding, divisor), 1-3 axes, ceil_mode, NaN and inf") {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal;
  for (const auto& c : emulated_pool_cases()) {
    CAPTURE(c.expr);
    std::size_t n = 1;
    for (auto d : c.dims) n *= static_cast<std::size_t>(d);
    std::vector<float> x(n);
    for (auto& v : x) v = normal(gen);
    x[3] = std::numeric_limits<float>::quiet_NaN();
    x[n / 2] = std::numeric_limits<float>::infinity();
    x[n - 2] = -std::numeric_limits<float>::infinity();
    const std::vector<double> want = reference(c, x);
    const std::vector<float> got = c.config == &kMaxCeil      ? emulate<kMaxCeil>(x)
                                   : c.config == &kAvgExclude ? emulate<kAvgExclude>(x)
                                   : c.config == &kAvg3d      ? emulate<kAvg3d>(x)
                                   : c.config == &kMaxRun     ? emulate<kMaxRun>(x)
                                   : c.config == &kAvgRun     ? emulate<kAvgRun>(x)
                                   : c.config == &kAvgWide    ? emulate<kAvgWide>(x)
                                   : c.config == &kMaxVec     ? emulate<kMaxVec>(x)
                                   : c.config == &kAvgVec     ? emulate<kAvgVec>(x)
                                   : c.config == &kMaxVecDilated ? emulate<kMaxVecDilated>(x)
                                   : c.config == &kMaxWide    ? emulate<kMaxWide>(x)
                                                              : emulate<kAvgDivisor>(x);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      if (std::isnan(want[i])) {
        CHECK(std::isnan(got[i]));
      } else if (std::isinf(want[i])) {
        CHECK(double(got[i]) == want[i]);
      } else {
        CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
      }
    }
  }
}
