// dyn fused attention ([Note: dyn attention] in generator/plan/plan_contraction.cpp): the flash
// kernel takes dyn dims in the batch dims and the query and key rows. Every value gives the same
// source, free of the value; the config holds 0 for those extents and the entry passes the
// launch's; the maps' extents and strides are expressions that a launch evaluates (views'
// permuted strides included); the grid follows the launch; the head dims stay baked in (the
// fusion is refused, saying why); the units compile for sm_90a.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "generator/plan/plan.h"
#include "generator/plan/planner.h"
#include "golden.h"
#include "dyn_attention_spec.h"
#include "memory_plan_util.h"

namespace {

using memory_plan_test::plan_text_at;
using memory_plan_test::sources_of;

using kiln_test::kDynAttentionSpec;

// Each op's dyn dims, bound together at one value per dim.
const std::map<std::string, std::vector<std::string>> kDynDims{
    {"att", {"B", "S"}}, {"att_causal", {"S"}}, {"att_bshd", {"B", "S"}}, {"att_d256", {"BH", "T"}},
    {"att_epi", {"B", "S"}}, {"att_heads", {"H", "S"}}, {"att_q_shared", {"B", "S"}}, {"att_bcast", {"B", "S"}}};

kiln::Plan plan_at(const std::string& op, std::int64_t batch, std::int64_t rows) {
  std::map<std::string, std::int64_t> dims;
  const auto& names = kDynDims.at(op);
  for (std::size_t i = 0; i < names.size(); ++i) dims[names[i]] = names.size() == 2 && i == 0 ? batch : rows;
  return plan_text_at(kDynAttentionSpec, "att.kiln", op, dims, "sm_90a");
}

const kiln::PlannedKernel& attention_kernel(const kiln::Plan& p) {
  const auto it = std::find_if(p.kernels.begin(), p.kernels.end(),
                               [](const kiln::PlannedKernel& k) { return k.template_name == "flash_attention"; });
  REQUIRE(it != p.kernels.end());
  return *it;
}

const kiln::KernelArg& map_named(const kiln::PlannedKernel& k, const std::string& name) {
  const auto it = std::find_if(k.args.begin(), k.args.end(), [&](const kiln::KernelArg& a) { return a.name == name; });
  REQUIRE(it != k.args.end());
  return *it;
}

// A launch's dims: the plan's static ones with `dyn`'s values.
std::map<std::string, std::int64_t> launch_dims(const kiln::Plan& p, const std::map<std::string, std::int64_t>& dyn) {
  std::map<std::string, std::int64_t> dims = p.bound->dims;
  for (const auto& [name, value] : dyn) dims[name] = value;
  return dims;
}

// A map argument at a launch's dims (launch_dims): its dims and its strides in bytes.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> map_at(const kiln::KernelArg& a,
                                                                        const std::map<std::string, std::int64_t>& dims) {
  std::vector<std::int64_t> d, s;
  for (const auto& e : a.map_dims_at) d.push_back(e.evaluate(dims));
  for (const auto& e : a.map_strides_at) s.push_back(e.evaluate(dims) * 2);
  return {d, s};
}

}  // namespace

TEST_CASE("dyn attention: one source for every value, the extents a launch's") {
  for (const auto& [op, names] : kDynDims) {
    CAPTURE(op);
    const kiln::Plan first = plan_at(op, 3, 1000);
    const kiln::PlannedKernel& k = attention_kernel(first);
    const auto& c = std::get<kiln::AttentionConfig>(k.config);
    // The config holds 0 for what dyn dims size: the source holds no value of them.
    CHECK(c.s == (op == "att_d256" ? 200 : 0));
    CHECK(c.t == (op == "att_epi" ? 300 : op == "att_bcast" ? 70 : 0));
    CHECK((c.batch == 0) == (names.size() == 2));
    const std::string source = memory_plan_test::all_sources(sources_of(first));
    CHECK(source.find("kiln::AttentionExtents{") != std::string::npos);
    CHECK(source.find("1000") == std::string::npos);
    CHECK(source.find("false, 0, 0, 0, 384") != std::string::npos);   // the launch check leaves the grid out
    for (const auto& [batch, rows] : std::vector<std::pair<int, int>>{{2, 5}, {7, 129}, {2, 4097}}) {
      CAPTURE(rows);
      CHECK(memory_plan_test::all_sources(sources_of(plan_at(op, batch, rows))) == source);
    }
  }
  // The extents the entry passes, as code of the dim arguments (a static factor by its value).
  const std::string att = memory_plan_test::all_sources(sources_of(plan_at("att", 3, 1000)));
  CHECK(att.find("kiln::AttentionExtents{/*s=*/dim_S, /*t=*/dim_S, /*batch=*/(dim_B * 4), /*inner=*/0}") !=
        std::string::npos);
  const std::string d256 = memory_plan_test::all_sources(sources_of(plan_at("att_d256", 3, 1000)));
  CHECK(d256.find("kiln::AttentionExtents{/*s=*/0, /*t=*/dim_T, /*batch=*/dim_BH, /*inner=*/dim_BH}") !=
        std::string::npos);
  // The epilogue's batch coordinate divides by the static heads only.
  const std::string epi = memory_plan_test::all_sources(sources_of(plan_at("att_epi", 3, 1000)));
  CHECK(epi.find("const Index b0 = batch / 2;") != std::string::npos);
  CHECK(epi.find("* dim_S + row) * 64 + col") != std::string::npos);
  // Dyn heads (the inner batch dim): the coordinates divide by the launch's, magic-number division.
  const std::string heads = memory_plan_test::all_sources(sources_of(plan_at("att_heads", 8, 1000)));
  CHECK(heads.find("const Index b0 = batch / dim_H % 2;") != std::string::npos);
  CHECK(heads.find("const Index b1 = batch / 1 % dim_H;") != std::string::npos);
  CHECK(heads.find("kiln::AttentionExtents{/*s=*/dim_S, /*t=*/dim_S, /*batch=*/(2 * dim_H), /*inner=*/dim_H}") !=
        std::string::npos);
}

TEST_CASE("dyn attention: the maps and the grid at a launch's dims") {
  const kiln::Plan plan = plan_at("att_bshd", 2, 777);
  const kiln::PlannedKernel& k = attention_kernel(plan);
  // q [B, S, H, 64] read as [B, H, S, 64]: map {64, S, H, B}, strides {H*64, 64, S*H*64} elements.
  const auto dims = launch_dims(plan, {{"B", 5}, {"S", 1001}});
  for (const char* name : {"tmap_q", "tmap_k", "tmap_v"}) {
    CAPTURE(name);
    const auto [d, s] = map_at(map_named(k, name), dims);
    CHECK(d == std::vector<std::int64_t>{64, 1001, 4, 5});
    CHECK(s == std::vector<std::int64_t>{4 * 64 * 2, 64 * 2, 1001 * 4 * 64 * 2});
  }
  // The planned map is the expressions at the bound dims.
  const auto& q = map_named(k, "tmap_q");
  const auto [d0, s0] = map_at(q, plan.bound->dims);
  CHECK(q.tensor_map.with_extents(d0, std::vector<std::int64_t>{s0[0] / 2, s0[1] / 2, s0[2] / 2}, 2) == q.tensor_map);
  // A k every batch shares: extent 1 in both batch dims, its placeholder stride past all of it.
  const kiln::Plan d256 = plan_at("att_d256", 3, 500);
  const auto [kd, ks] = map_at(map_named(attention_kernel(d256), "tmap_k"), launch_dims(d256, {{"BH", 9}, {"T", 70}}));
  CHECK(kd == std::vector<std::int64_t>{256, 70, 1, 1});
  CHECK(ks == std::vector<std::int64_t>{512, 70 * 512, 70 * 512});
  // Operands broadcast over a batch dim: extent 1 there, whatever the launch's B (q shared by
  // every batch, k over B, v over the heads).
  const kiln::Plan shared = plan_at("att_q_shared", 3, 500);
  const auto [qd, qs] = map_at(map_named(attention_kernel(shared), "tmap_q"), launch_dims(shared, {{"B", 7}, {"S", 90}}));
  CHECK(qd == std::vector<std::int64_t>{64, 90, 1, 1});
  const kiln::Plan bc = plan_at("att_bcast", 3, 500);
  const auto& bk = attention_kernel(bc);
  const auto at = launch_dims(bc, {{"B", 5}, {"S", 90}});
  CHECK(map_at(map_named(bk, "tmap_k"), at).first == std::vector<std::int64_t>{64, 70, 2, 1});
  CHECK(map_at(map_named(bk, "tmap_v"), at).first == std::vector<std::int64_t>{64, 70, 1, 5});
  CHECK(std::get<kiln::AttentionConfig>(bk.config).k_bcast == 1);   // bit 0: the outer batch dim
  CHECK(std::get<kiln::AttentionConfig>(bk.config).v_bcast == 2);   // bit 1: the inner
  // The grid: one CTA a 128-row block of each batch, at most one an SM.
  const auto& cfg = std::get<kiln::AttentionConfig>(k.config);
  CHECK(cfg.inner == 4);
  CHECK(kiln::launch_for(plan, 0, launch_dims(plan, {{"B", 1}, {"S", 100}})).grid.x == 4);       // 4 batches x 1 block
  CHECK(kiln::launch_for(plan, 0, launch_dims(plan, {{"B", 2}, {"S", 300}})).grid.x == 24);      // 8 batches x 3 blocks
  CHECK(kiln::launch_for(plan, 0, launch_dims(plan, {{"B", 64}, {"S", 4096}})).grid.x == 132);   // persistent
  const auto x = kiln::attention_extents(plan.ir(), k, launch_dims(plan, {{"B", 3}, {"S", 50}}));
  CHECK(x.s == 50);
  CHECK(x.t == 50);
  CHECK(x.batch == 12);
  CHECK(x.inner == 4);
}

TEST_CASE("dyn attention: what the kernel does not take is planned as written, saying why") {
  auto fusions_of = [](const std::string& text, const std::map<std::string, std::int64_t>& dims) {
    const kiln::Plan p = plan_text_at(text, "a.kiln", "a", dims, "sm_90a");
    REQUIRE(p.fusions.size() == 1);
    return p.fusions[0];
  };
  // A dyn head dim: the fusion is refused; the products plan with their one dyn dim each.
  CHECK(fusions_of("op a {\n  dims dyn D, S = 256\n  in q: f16[S, D]\n  in k: f16[S, D]\n  in v: f16[S, D]\n"
                   "  out o = matmul(softmax(matmul(q, transpose(k)), axis=-1), v)\n}\n",
                   {{"D", 64}})
            .find("not fused, a dyn dim sizes q's head dim") != std::string::npos);
}

TEST_CASE("dyn attention: golden of a [B, S, H, D] attention with dyn B and S") {
  check_golden("source/dyn_attention_bshd.cu", [] {
    const auto plan = plan_at("att_bshd", 2, 777);
    return plan.text() + "\n" + memory_plan_test::all_sources(sources_of(plan));
  }());
}

TEST_CASE("dyn attention: every unit compiles with NVRTC for sm_90a") {
  if (!memory_plan_test::nvrtc_or_skip()) return;
  int units = 0;
  for (const auto& entry : kDynDims) {
    CAPTURE(entry.first);
    units += memory_plan_test::check_units_compile(plan_at(entry.first, 3, 1000), "sm_90a");
  }
  CHECK(units == 8);
}
