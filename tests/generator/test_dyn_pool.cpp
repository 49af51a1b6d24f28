// dyn pool planes ([Note: dyn pool planes] in generator/plan/plan_pool.cpp): the axes before the
// pooled ones (batch, channels) may be dyn. Every value gives the same source, free of the value;
// the config holds planes = 0 and the launch is pool_geometry at a launch's planes; a dyn pooled
// axis ([Note: dyn pooled axes]; test_pool.cpp) inside an expression is refused where it is
// declared; the units compile.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"
#include "runtime/nvrtc.h"

namespace {

using namespace memory_plan_test;

const char* kSpec =
    "op mp {\n  dims dyn N, C = 16, H = 64, W = 64\n  in  x: f32[N, C, H, W]\n  in  s: f32[C, 1, 1]\n"
    "  out y = relu(max_pool2d(x * s, 3, stride=2, padding=1))\n}\n"
    "op ap3 {\n  dims dyn B, C = 8, D = 10, H = 20, W = 20\n  in  x: f16[B, C, D, H, W]\n"
    "  out y = avg_pool3d(x, 3, stride=2, padding=1)\n}\n"
    "op mp1 {\n  dims dyn N, dyn C, L = 1000\n  in  x: bf16[N, C, L]\n  out y = max_pool1d(x, 4, stride=1, dilation=3)\n}\n"
    "op bad {\n  dims N = 2, C = 3, dyn H, W = 8\n  in  x: f32[N, C, H, W]\n  out y = max_pool2d(max_pool2d(x, 2), 2)\n}\n"
    "op hw {\n  dims dyn N, C = 3, dyn H, dyn W\n  in  x: bf16[N, C, H, W]\n  in  s: bf16[C, 1, 1]\n"
    "  out y = avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=false) * s\n}\n";

kiln::Plan plan_at(const std::string& op, std::map<std::string, std::int64_t> dims, const std::string& arch = "sm_90a") {
  return plan_text_at(kSpec, "pool.kiln", op, dims, arch);
}

// The op's dyn dims at v (and C at 5 where it is dyn too).
std::map<std::string, std::int64_t> at(const std::string& op, std::int64_t v) {
  if (op == "ap3") return {{"B", v}};
  if (op == "mp1") return {{"N", v}, {"C", 5}};
  if (op == "hw") return {{"N", 2}, {"H", v}, {"W", v + 8}};
  return {{"N", v}};
}

}  // namespace

TEST_CASE("dyn pool: one source for every value of the planes, each launch's grid") {
  for (const char* op : {"mp", "ap3", "mp1"})
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const auto a = plan_at(op, at(op, 3), arch), b = plan_at(op, at(op, 7), arch), c = plan_at(op, at(op, 1001), arch);
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(c)));
      for (const auto& src : sources_of(c)) CHECK(src.text.find("1001") == std::string::npos);
      REQUIRE(a.kernels.size() == 1);
      const auto& kn = a.kernels[0];
      const auto& config = std::get<kiln::PoolConfig>(kn.config);
      CHECK(config.planes == 0);
      CHECK(!kn.dyn_outer.empty());
      CHECK(a.dyn_thresholds.empty());   // nothing the plan picks depends on the planes
      for (std::int64_t v : {2, 40, 1001}) {
        auto dims = a.bound->dims;
        for (const auto& [name, value] : at(op, v)) dims[name] = value;
        kiln::PoolConfig want = config;
        want.planes = v * (std::string(op) == "mp" ? 16 : std::string(op) == "ap3" ? 8 : 5);
        const auto got = kiln::launch_for(a, 0, dims);
        CHECK(got.grid.x == kiln::pool_geometry(want).grid.x);
        CHECK(got.block.x == kn.block.x);
      }
    }
}

TEST_CASE("dyn pool: a dyn pooled axis inside an expression (a pool's output) is refused where it is declared") {
  std::string what;
  try {
    plan_at("bad", {{"H", 8}});
  } catch (const kiln::UnsupportedError& e) {
    what = e.what();
  }
  CHECK(what == "pool.kiln:18:26: op bad: dim 'H' is dyn, but the pool template (for line 20) takes a dyn pooled axis "
                "only as a whole dim, not inside (((H - 2) / 2) + 1) (axis 2)");
}

TEST_CASE("dyn pool: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!nvrtc_or_skip()) return;
  int units = 0;
  for (const char* op : {"mp", "ap3", "mp1", "hw"})
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t v : {9, 16}) units += check_units_compile(plan_at(op, at(op, v), arch), arch);
  MESSAGE(units << " units compiled");
}
