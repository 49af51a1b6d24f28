// `dyn` dims ([Note: dyn buckets] in generator/plan/plan.h): a plan depends on each dyn dim's
// bucket, never on its value. Sources of one bucket are byte-identical, buckets that change the
// plan give other sources, the launch follows the values (launch_for), and an op may mix a dyn
// elementwise part with anchors that do not use the dyn dims.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;

const char* kSpec =
    "op scale {\n"
    "  dims dyn N = 1000, C = 64\n"
    "  in  x: f32[N, C]\n"
    "  in  b: f32[C]\n"
    "  out y = relu(x * 2.0 + b)\n"
    "}\n"
    "op rows {\n"
    "  dims dyn N = 1000\n"
    "  in  x: f32[N]\n"
    "  out y = x * x\n"
    "}\n"
    "op bias_rows {\n"
    "  dims dyn B = 8, dyn N = 1000\n"
    "  in  x: f32[B, N]\n"
    "  in  b: f32[N]\n"
    "  out y = x + b\n"
    "}\n"
    "op mixed {\n"
    "  dims dyn N = 1000, M = 64, K = 8\n"
    "  in  x: f32[N]\n"
    "  in  w: f32[M, K]\n"
    "  out y = x + 1.0\n"
    "  out s = sum(w, axis=1)\n"
    "}\n"
    "op mm {\n"
    "  dims dyn M = 8, K = 4, N = 5\n"
    "  in  a: f32[M, K]\n"
    "  in  b: f32[K, N]\n"
    "  out c = matmul(a, b)\n"
    "}\n";

kiln::Plan plan_at(const std::string& op, std::map<std::string, std::int64_t> dims) {
  auto spec = kiln::parse_spec(kSpec, "dyn.kiln");
  std::map<std::string, kiln::ir::DimValue> given;
  for (const auto& [name, value] : dims) given[name] = {value, "test"};
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), given));
  return kiln::make_plan(bound, kiln::Target::for_arch("sm_90a"));
}

int vec_of(const kiln::Plan& plan, std::size_t k = 0) {
  return std::get<kiln::ElementwiseConfig>(plan.kernels.at(k).config).vec;
}

bool flat_of(const kiln::Plan& plan, std::size_t k = 0) {
  return std::get<kiln::ElementwiseConfig>(plan.kernels.at(k).config).flat;
}

}  // namespace

TEST_CASE("dyn buckets: the rule") {
  CHECK(kiln::dyn_bucket(1) == kiln::DynBucket::One);
  CHECK(kiln::dyn_bucket(16) == kiln::DynBucket::Div16);
  CHECK(kiln::dyn_bucket(4096) == kiln::DynBucket::Div16);
  CHECK(kiln::dyn_bucket(17) == kiln::DynBucket::General);
  CHECK(kiln::dyn_bucket(1000) == kiln::DynBucket::General);
}

TEST_CASE("dyn buckets: one source per bucket, values only at launch") {
  // A dyn outer extent: every value plans the same vectors (the inner extent is static).
  const auto a = plan_at("scale", {{"N", 1000}}), b = plan_at("scale", {{"N", 2048}}), c = plan_at("scale", {{"N", 1}});
  CHECK(vec_of(a) == 4);
  CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
  CHECK(all_sources(sources_of(a)) == all_sources(sources_of(c)));
  CHECK(a.text().find("N=1000 (dyn, general)") != std::string::npos);
  CHECK(b.text().find("N=2048 (dyn, multiple of 16)") != std::string::npos);
  // The grid follows the launch's values: 2048 x 64 floats in 4-float steps of 256 threads.
  CHECK(kiln::launch_for(a, 0, {{"N", 2048}, {"C", 64}}).grid.x == 2048 * 64 / 4 / 256);
  CHECK(kiln::launch_for(a, 0, {{"N", 1}, {"C", 64}}).grid.x == 1);

  // A dyn innermost extent: row vectors in the bucket "multiple of 16"; in the others, flat vectors
  // with a scalar tail when every tensor has the output's shape expression, else a scalar loop.
  const auto g1 = plan_at("rows", {{"N", 1000}}), g2 = plan_at("rows", {{"N", 1001}}), d1 = plan_at("rows", {{"N", 4096}}),
             d2 = plan_at("rows", {{"N", 16}});
  CHECK(vec_of(g1) == 4);
  CHECK(flat_of(g1));
  CHECK(vec_of(d1) == 4);
  CHECK_FALSE(flat_of(d1));
  const auto r1 = plan_at("bias_rows", {{"B", 8}, {"N", 1000}}), r2 = plan_at("bias_rows", {{"B", 3}, {"N", 1002}}),
             r3 = plan_at("bias_rows", {{"B", 8}, {"N", 1024}});
  // b is broadcast, so its rows are not the flat index: in the bucket "general" the kernel holds
  // row vectors and a scalar loop, and each launch takes the vectors where its N is a multiple of 4
  // ([Note: row vectors checked at launch]).
  const auto& r1_config = std::get<kiln::ElementwiseConfig>(r1.kernels.at(0).config);
  CHECK(r1_config.vec == 4);
  CHECK(r1_config.checked);
  CHECK_FALSE(r1_config.flat);
  CHECK_FALSE(std::get<kiln::ElementwiseConfig>(r3.kernels.at(0).config).checked);   // 1024 is known to fit
  CHECK(vec_of(r3) == 4);
  CHECK(all_sources(sources_of(r1)) == all_sources(sources_of(r2)));
  CHECK(r1.text().find("row vectors where a launch's N is a multiple of 4, else a scalar loop") != std::string::npos);
  CHECK(sources_of(r1).at(0).text.find("kiln::elementwise_checked<Index, kVec>(Body{") != std::string::npos);
  CHECK(kiln::launch_for(r1, 0, {{"B", 8}, {"N", 1000}}).grid.x == 8 * 1000 / 4 / 256 + 1);   // vectors: 2000 steps
  CHECK(kiln::launch_for(r1, 0, {{"B", 8}, {"N", 1001}}).grid.x == (8 * 1001 + 255) / 256);   // scalars: 8008 steps
  CHECK(kiln::elementwise_step(r1_config, 1002) == 1);
  CHECK(kiln::elementwise_step(r1_config, 1004) == 4);
  if (nvrtc_or_skip())   // both loops of the checked kernel compile
    for (const char* arch : {"sm_80", "sm_90a"}) CHECK(check_units_compile(r1, arch) == 1);
  CHECK(g1.text().find("flat vectors with a scalar tail") != std::string::npos);
  CHECK(all_sources(sources_of(g1)) == all_sources(sources_of(g2)));
  CHECK(all_sources(sources_of(d1)) == all_sources(sources_of(d2)));
  CHECK(all_sources(sources_of(g1)) != all_sources(sources_of(d1)));
  for (const auto* p : {&g1, &g2, &d1, &d2})
    for (const auto& src : sources_of(*p)) {
      INFO(src.text);
      CHECK(src.text.find("1000") == std::string::npos);
      CHECK(src.text.find("4096") == std::string::npos);
      CHECK(src.text.find("1001") == std::string::npos);
    }
  CHECK(kiln::launch_for(d1, 0, {{"N", 1 << 20}}).grid.x == (1 << 20) / 4 / 256);
}

TEST_CASE("dyn buckets: an anchor that does not use a dyn dim plans beside a dyn elementwise kernel") {
  const auto p = plan_at("mixed", {{"N", 77}});
  REQUIRE(p.kernels.size() == 2);
  int dyn_kernels = 0;
  for (const auto& kn : p.kernels)
    for (const auto& a : kn.args)
      if (a.kind == kiln::KernelArg::Kind::DynDim) {
        ++dyn_kernels;
        CHECK(kn.anchor < 0);
        CHECK(a.dim == "N");
      }
  CHECK(dyn_kernels == 1);   // only the elementwise kernel reads N
  // The reduction keeps its planned launch whatever N is.
  for (std::size_t k = 0; k < p.kernels.size(); ++k)
    if (p.kernels[k].anchor >= 0) CHECK(kiln::launch_for(p, k, {{"N", 5000}, {"M", 64}, {"K", 8}}).grid.x == p.kernels[k].grid.x);
  // A matmul takes a dyn M (tests/generator/test_dyn_matmul.cpp): its kernel reads M.
  const auto mm = plan_at("mm", {});
  REQUIRE(mm.kernels.size() == 1);
  CHECK(std::get<kiln::GemmConfig>(mm.kernels[0].config).m == 0);
  CHECK(mm.kernels[0].reads_dyn_dims());
}
