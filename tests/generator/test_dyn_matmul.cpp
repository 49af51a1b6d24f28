// dyn matmuls ([Note: dyn matmul] in generator/plan/plan_contraction.cpp, [Note: dyn size
// classes] in generator/plan/plan.h): a matmul takes a dyn M or a dyn outermost batch dim. Within
// a bucket and size class every value gives the same source, free of the value; a class is
// planned at its lowest value; split-K only in a class with a largest value, whose workspace it
// sizes; the launch follows the value through gemm_geometry; tensor maps name the extent a launch
// sets; other dyn dims are refused where they are declared; the units compile.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"
#include "runtime/nvrtc.h"

namespace {

using namespace memory_plan_test;

// Each op with `D` the dyn dim's declaration: "dyn M" (or "dyn B"), or "M = <value>" for the
// static plan of the same product.
std::string spec_text(const std::string& m_decl, const std::string& b_decl) {
  return "op lin_bf16 {\n  dims " + m_decl + ", N = 1024, K = 512\n  in  x: bf16[M, K]\n  in  w: bf16[N, K]\n" +
         "  in  bias: bf16[N]\n  out y = relu(matmul(x, transpose(w)) + bias)\n}\n" +
         "op lin_f32 {\n  dims " + m_decl + ", N = 512, K = 4096\n  in  x: f32[M, K]\n  in  w: f32[N, K]\n" +
         "  out y = matmul(x, transpose(w))\n}\n" +
         "op mm_tf32 {\n  dims " + m_decl + ", N = 768, K = 1000\n  in  a: f32[M, K]\n  in  b: f32[K, N]\n" +
         "  out c = matmul(a, b, precision=\"tf32\")\n}\n" +
         "op bmm_f16 {\n  dims " + b_decl + ", M = 256, N = 256, K = 128\n  in  a: f16[B, M, K]\n" +
         "  in  b: f16[B, K, N]\n  in  r: f16[B, M, N]\n  out c = matmul(a, b) + r\n}\n" +
         "op bmm_bcast {\n  dims " + b_decl + ", H = 4, M = 64, N = 96, K = 64\n  in  a: bf16[B, H, M, K]\n" +
         "  in  w: bf16[K, N]\n  out c = matmul(a, w)\n}\n" +
         "op lin_softmax {\n  dims " + m_decl + ", N = 1000, K = 256\n  in  x: f32[M, K]\n  in  w: f32[N, K]\n" +
         "  out y = softmax(matmul(x, transpose(w), precision=\"tf32\"), axis=-1)\n}\n";
}

const char* kRefused =
    "op n_dyn {\n  dims M = 8, K = 4, dyn N\n  in a: f32[M, K]\n  in b: f32[K, N]\n  out c = matmul(a, b)\n}\n"
    "op a_t {\n  dims dyn M, K = 4\n  in a: f32[K, M]\n  in b: f32[K, 5]\n  out c = matmul(transpose(a), b)\n}\n"
    "op batched_m {\n  dims dyn M, K = 4, B = 3\n  in a: f32[B, M, K]\n  in b: f32[B, K, 5]\n  out c = matmul(a, b)\n}\n"
    "op two {\n  dims dyn M, dyn B\n  in a: f32[B, M, 4]\n  in b: f32[B, 4, 5]\n  out c = matmul(a, b)\n}\n"
    "op inner_batch {\n  dims dyn H, B = 3\n  in a: f32[B, H, 8, 4]\n  in b: f32[B, H, 4, 5]\n  out c = matmul(a, b)\n}\n"
    "op gram {\n  dims dyn M\n  in a: f32[M, 4]\n  out c = matmul(a, transpose(a))\n}\n";

kiln::Plan plan_text_at(const std::string& text, const std::string& op, std::map<std::string, std::int64_t> dims,
                        const std::string& arch) {
  return memory_plan_test::plan_text_at(text, "mm.kiln", op, dims, arch);
}
bool batched(const std::string& op) { return op.rfind("bmm", 0) == 0; }
// The op with its dyn dim at `v` (M, or B for the batched ops).
kiln::Plan dyn_at(const std::string& op, std::int64_t v, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("dyn M", "dyn B"), op, {{batched(op) ? "B" : "M", v}}, arch);
}
// The same product with the dim baked in at `v`.
kiln::Plan static_at(const std::string& op, std::int64_t v, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("M = " + std::to_string(v), "B = " + std::to_string(v)), op, {}, arch);
}
std::string dim_of(const std::string& op) { return batched(op) ? "B" : "M"; }

const std::vector<std::string> kOps{"lin_bf16", "lin_f32", "mm_tf32", "bmm_f16", "bmm_bcast", "lin_softmax"};

const kiln::GemmConfig* gemm_of(const kiln::PlannedKernel& k) { return std::get_if<kiln::GemmConfig>(&k.config); }

}  // namespace

TEST_CASE("dyn matmul: one source per bucket and class, values only at launch") {
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const auto a = dyn_at(op, 2999, arch), b = dyn_at(op, 3001, arch), c = dyn_at(op, 3003, arch);
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(c)));
      for (const auto* p : {&a, &b, &c})
        for (const auto& src : sources_of(*p)) {
          INFO(src.text);
          for (const char* v : {"2999", "3001", "3003"}) CHECK(src.text.find(v) == std::string::npos);
        }
      // Every matmul kernel reads its dyn extent (a static operand's pre-pass does not).
      for (const auto& kn : a.kernels)
        if (const auto* g = gemm_of(kn); g != nullptr && g->kind != kiln::GemmKind::OperandPrep) {
          CHECK(!kn.dyn_outer.empty());
          CHECK((batched(op) ? g->batch : g->m) == 0);
          CHECK(kn.reason.find("dyn " + dim_of(op) + ":") == 0);
        }
      // Small values share a class too.
      CHECK(all_sources(sources_of(dyn_at(op, 5, arch))) == all_sources(sources_of(dyn_at(op, 6, arch))));
    }
}

TEST_CASE("dyn matmul: classes start where the plan changes, each planned at its lowest value") {
  for (const auto& op : kOps) {
    CAPTURE(op);
    const auto p = dyn_at(op, 100);
    const std::string dim = dim_of(op);
    const auto it = p.dyn_thresholds.find(dim);
    REQUIRE(it != p.dyn_thresholds.end());
    const auto& t = it->second;
    CHECK(!t.empty());
    CHECK(t.back() <= 65536);
    // A threshold is where the plan changes: the sources of the values on either side differ.
    // (lin_softmax's row norm declares its own thresholds, 2 and 8 rows per SM, where its rule may
    // change: [Note: dyn size classes].)
    for (std::int64_t v : t) {
      if (op == "lin_softmax") break;
      CAPTURE(v);
      CHECK(all_sources(sources_of(dyn_at(op, v - 1))) != all_sources(sources_of(dyn_at(op, v))));
    }
    // Each class's plan equals the static plan at the class's lowest value, where that plan takes a
    // template with the extent read at run time (not Gemv, SmallK or WgGemm, which a value of the
    // class may take as a static product): same templates, same configs but for the extent.
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::int64_t low = t[i];
      CAPTURE(low);
      const auto d = dyn_at(op, low), s = static_at(op, low);
      bool comparable = s.kernels.size() == d.kernels.size();
      for (std::size_t k = 0; comparable && k < s.kernels.size(); ++k)
        comparable = s.kernels[k].template_name == d.kernels[k].template_name;
      if (!comparable) continue;
      for (std::size_t k = 0; k < s.kernels.size(); ++k) {
        const auto* sg = gemm_of(s.kernels[k]);
        const auto* dg = gemm_of(d.kernels[k]);
        if (sg == nullptr || dg == nullptr) continue;
        kiln::GemmConfig fixed = *dg;
        if (dg->kind != kiln::GemmKind::OperandPrep) (batched(op) ? fixed.batch : fixed.m) = batched(op) ? sg->batch : sg->m;
        CHECK(kiln::config_text(fixed) == kiln::config_text(*sg));
      }
    }
  }
}

TEST_CASE("dyn matmul: split-K only in a class with a largest value, its workspace sized for that") {
  // lin_f32 (3xTF32, N = 512, K = 4096) splits K on sm_80 at few rows: the mma.sync GemmSplitK.
  const auto few = dyn_at("lin_f32", 100, "sm_80");
  const auto& t = few.dyn_thresholds.at("M");
  const int klass = kiln::dyn_class(t, 100);
  REQUIRE(klass < static_cast<int>(t.size()));
  const std::int64_t high = t[static_cast<std::size_t>(klass)] - 1;
  REQUIRE(few.kernels.size() == 2);
  CHECK(few.kernels[0].template_name == "gemm_split_k");
  CHECK(few.kernels[1].template_name == "gemm_split_k_reduce");
  const int splits = gemm_of(few.kernels[0])->split_k;
  bool sized = false;
  for (const auto& b : few.buffers)
    if (b.kind == kiln::BufferKind::Workspace) {
      CHECK(b.shape == std::vector<std::int64_t>{splits, 1, high, 512});
      sized = true;
    }
  CHECK(sized);
  // The top class (no largest value) has no K slices, on either engine.
  for (const char* arch : {"sm_80", "sm_90a"})
    for (const auto& op : kOps) {
      CAPTURE(op);
      CAPTURE(arch);
      const auto top = dyn_at(op, 200000, arch);
      const auto& tt = top.dyn_thresholds.at(dim_of(op));
      CHECK(kiln::dyn_class(tt, 200000) == static_cast<int>(tt.size()));
      for (const auto& kn : top.kernels)
        if (const auto* g = gemm_of(kn)) CHECK(g->split_k == 1);
    }
}

TEST_CASE("dyn matmul: the launch is gemm_geometry at the launch's extent, maps name the extent they take") {
  for (const auto& op : kOps) {
    CAPTURE(op);
    const auto p = dyn_at(op, 1000);
    for (std::int64_t v : {1000, 1001, 1023}) {
      auto dims = p.bound->dims;
      dims[dim_of(op)] = v;
      for (std::size_t k = 0; k < p.kernels.size(); ++k) {
        const auto* g = gemm_of(p.kernels[k]);
        if (g == nullptr || p.kernels[k].dyn_outer.empty()) continue;
        kiln::GemmConfig at = *g;
        (batched(op) ? at.batch : at.m) = batched(op) && op == "bmm_bcast" ? v * 4 : v;
        const auto want = kiln::gemm_geometry(at, p.target.sm_count, p.kernels[k].min_blocks);
        const auto got = kiln::launch_for(p, k, dims);
        CHECK(got.grid.x == want.grid.x);
        CHECK(got.grid.y == want.grid.y);
        CHECK(got.grid.z == want.grid.z);
        CHECK(got.block.x == p.kernels[k].block.x);
      }
    }
  }
  // The bf16 linear layer's engine maps A (k-major: dims {K, M, 1}) with M at launch, W as planned.
  const auto lin = dyn_at("lin_bf16", 1000);
  int maps = 0;
  for (const auto& a : lin.kernels[0].args)
    if (a.kind == kiln::KernelArg::Kind::TensorMap) {
      CHECK(a.map_dyn_dim == (a.name == "tmap_a" ? 1 : -1));
      ++maps;
    }
  CHECK(maps == 2);
  // The batched product maps both operands' batches at launch; the broadcast weights' map does not.
  // (Each plan is named: a range-for over a member of a temporary would outlive the plan.)
  const auto bmm = dyn_at("bmm_f16", 100);
  for (const auto& a : bmm.kernels[0].args)
    if (a.kind == kiln::KernelArg::Kind::TensorMap) CHECK(a.map_dyn_dim == 2);
  const auto bcast = dyn_at("bmm_bcast", 100);
  for (const auto& a : bcast.kernels[0].args)
    if (a.kind == kiln::KernelArg::Kind::TensorMap) CHECK(a.map_dyn_dim == (a.name == "tmap_a" ? 2 : -1));
}

TEST_CASE("dyn matmul: the bucket one plans the static product, a softmax after it is the row-norm family's") {
  // M = 1: the value is known, so the skinny product (Gemv) with nothing read at run time.
  const auto one = dyn_at("lin_bf16", 1);
  REQUIRE(one.kernels.size() == 1);
  CHECK(one.kernels[0].template_name == "gemv");
  CHECK(one.kernels[0].dyn_outer.empty());
  CHECK(gemm_of(one.kernels[0])->m == 1);
  CHECK(kiln::launch_for(one, 0, one.bound->dims).grid.x == one.kernels[0].grid.x);
  // A softmax after a dyn matmul is not fused into it: a rownorm kernel with dyn rows follows.
  const auto sm = dyn_at("lin_softmax", 3000);
  REQUIRE(sm.kernels.size() == 2);
  CHECK(sm.kernels[1].template_name.find("rownorm") == 0);
  CHECK(!sm.kernels[1].dyn_outer.empty());
}

TEST_CASE("dyn matmul: other dyn dims are refused where they are declared") {
  auto refused = [](const std::string& op) {
    return refusal_of(kRefused, "mm.kiln", op, dyn_dims_at(kRefused, "mm.kiln", op, 8));
  };
  CHECK(refused("n_dyn") == "mm.kiln:2:26: op n_dyn: dim 'N' is dyn, but the gemm template (for line 5) takes a dyn M "
                            "(the rows of A and C) or a dyn outermost batch dim; K and N are baked in");
  CHECK(refused("a_t") == "mm.kiln:8:12: op a_t: dim 'M' is dyn, but the gemm template (for line 11) takes a dyn M only "
                          "with A stored [M, K] (transpose(a) makes M its leading dim)");
  CHECK(refused("batched_m") == "mm.kiln:14:12: op batched_m: dim 'M' is dyn, but the gemm template (for line 17) takes "
                                "a dyn M only in an unbatched product (the batch strides would be dyn); a dyn outermost "
                                "batch dim is taken");
  CHECK(refused("two") == "mm.kiln:20:12: op two: dim 'M' is dyn, but the gemm template (for line 23) takes one dyn "
                          "dim, and 'B' is dyn too");
  CHECK(refused("inner_batch") == "mm.kiln:26:12: op inner_batch: dim 'H' is dyn, but the gemm template (for line 29) "
                                  "takes a dyn batch dim only as the outermost one (here axis 1)");
  CHECK(refused("gram").find("mm.kiln:32:12: op gram: dim 'M' is dyn, but the gemm template (for line 34) takes a dyn "
                             "M (the rows of A and C) or a dyn outermost batch dim") == 0);
}

TEST_CASE("dyn matmul: every unit compiles with NVRTC for sm_80 and sm_90a") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC not loadable (" << why << ")");
    return;
  }
  int units = 0;
  for (const auto& op : kOps)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t v : {5, 1000, 100000}) {
        CAPTURE(op);
        CAPTURE(v);
        units += check_units_compile(dyn_at(op, v, arch), arch);
      }
  MESSAGE(units << " units compiled");
}
