// dyn matmuls ([Note: dyn matmul] in generator/plan/plan_contraction.cpp, [Note: dyn size
// classes] in generator/plan/plan.h): a matmul takes one dyn extent, its M, N or K (batched or
// not) or its outermost batch dim. Within
// a bucket and size class every value gives the same source, free of the value; a class is
// planned at its lowest value; split-K only in a class with a largest value, whose workspace it
// sizes; the launch follows the value through gemm_geometry; tensor maps name the extent a launch
// sets; other dyn dims are refused where they are declared; the units compile.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "generator/plan/plan.h"
#include "golden.h"
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
    "op n_dyn {\n  dims M = 8, K = 4, dyn N\n  in a: f32[2, M, K]\n  in b: f32[2, K, N]\n  out c = matmul(a, b)\n}\n"
    "op k_two {\n  dims dyn K, dyn N\n  in a: f32[8, K]\n  in b: f32[K, N]\n  out c = matmul(a, b)\n}\n"
    "op batched_m {\n  dims dyn M, K = 4, B = 3\n  in a: f32[B, M, K]\n  in b: f32[B, K, 5]\n  out c = matmul(a, b)\n}\n"
    "op two {\n  dims dyn M, dyn B\n  in a: f32[B, M, 4]\n  in b: f32[B, 4, 5]\n  out c = matmul(a, b)\n}\n"
    "op inner_batch {\n  dims dyn H, B = 3\n  in a: f32[B, H, 8, 4]\n  in b: f32[B, H, 4, 5]\n  out c = matmul(a, b)\n}\n"
    "op gram {\n  dims dyn M\n  in a: f32[M, 4]\n  out c = matmul(a, transpose(a))\n}\n"
    "op fold_twice {\n  dims dyn S\n  in a: f32[S, S, 4]\n  in b: f32[4, 5]\n  out c = matmul(a, b)\n}\n"
    "op fold_two {\n  dims dyn B, dyn S\n  in a: f32[B, S, 4]\n  in b: f32[4, 5]\n  out c = matmul(a, b)\n}\n"
    "op fold_inner {\n  dims B = 2, dyn H, dyn S\n  in a: f32[B, H, S, 4]\n  in b: f32[4, 5]\n  out c = matmul(a, b)\n}\n";

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
// bmm_bcast's weights are shared by every batch, so its batches fold into M ([Note: folded batches]
// in plan_contraction.cpp): its dyn B is a factor of M, which is B x 4 x 64 rows.
bool folded(const std::string& op) { return op == "bmm_bcast"; }
// The field of a kernel's config that holds the op's dyn dim: the batches, else M (the TMA engine's
// N under swap_ab, which tf32 a·b takes: the engine computes Cᵀ).
long long& dyn_field(kiln::GemmConfig& g, const std::string& op) {
  return batched(op) && !folded(op) ? g.batch : g.swap_ab ? g.n : g.m;
}

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
          kiln::GemmConfig c = *g;
          CHECK(dyn_field(c, op) == 0);
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
        kiln::GemmConfig want = *sg;
        if (dg->kind != kiln::GemmKind::OperandPrep) dyn_field(fixed, op) = dyn_field(want, op);
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
        dyn_field(at, op) = folded(op) ? v * 4 * 64 : v;
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
  // Folded, the activations are one k-major matrix of B x 4 x 64 rows: their map's rows are dyn.
  const auto bcast = dyn_at("bmm_bcast", 100);
  for (const auto& a : bcast.kernels[0].args)
    if (a.kind == kiln::KernelArg::Kind::TensorMap) CHECK(a.map_dyn_dim == (a.name == "tmap_a" ? 1 : -1));
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
  // A dyn M, N or K of a batched product: its batch strides are dyn (the batched tests below).
  CHECK(refused("n_dyn") == "planned");
  CHECK(refused("batched_m") == "planned");
  CHECK(refused("k_two") == "mm.kiln:8:12: op k_two: dim 'K' is dyn, but the gemm template (for line 11) takes one "
                            "dyn dim, and 'N' is dyn too");
  CHECK(refused("two") == "mm.kiln:20:12: op two: dim 'M' is dyn, but the gemm template (for line 23) takes one dyn "
                          "dim, and 'B' is dyn too");
  CHECK(refused("inner_batch") == "mm.kiln:26:12: op inner_batch: dim 'H' is dyn, but the gemm template (for line 29) "
                                  "takes a dyn batch dim only as the outermost one (here axis 1)");
  CHECK(refused("gram") == "mm.kiln:32:12: op gram: dim 'M' is dyn, but the gemm template (for line 34) takes one dyn "
                           "extent, and 'M' is both its M and its N");
  // Folded batches ([Note: folded batches]): M is the batches' rows, a dyn outermost batch dim
  // and a dyn M its factors (classed by their product: the tests below); one dim twice is not.
  CHECK(refused("fold_twice") == "mm.kiln:37:12: op fold_twice: dim 'S' is dyn, but the gemm template (for line 40) "
                                 "takes one dyn extent, and 'S' is both a batch dim and its M");
  CHECK(refused("fold_two") == "planned");
  CHECK(refused("fold_inner") == "mm.kiln:49:19: op fold_inner: dim 'H' is dyn, but the gemm template (for line 52) "
                                 "takes a dyn batch dim only as the outermost one (here axis 1)");
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

// ---------------------------------------------------------------------------------------------
// A dyn N or K (and a dyn M that is A's row length), each in an unbatched product: N as the rows
// of k-major weights and as the row length of B and of a residual; N under the TMA engine's
// swap_ab (tf32 a·b); K in 16-bit, in 3xTF32 (no TMA: its B has a pre-pass) and in tf32 aᵀ·bᵀ;
// M of a transposed A.
namespace {

const char* kNKSpec = R"(
op lin_n_bf16 {
  dims M = 512, dyn N, K = 1024
  in  x: bf16[M, K]
  in  w: bf16[N, K]
  in  bias: bf16[N]
  out y = relu(matmul(x, transpose(w)) + bias)
}
op mm_n_f16 {
  dims M = 300, K = 256, dyn N
  in  a: f16[M, K]
  in  b: f16[K, N]
  in  r: f16[M, N]
  out c = matmul(a, b) + r
}
op mm_n_tf32 {
  dims M = 640, K = 320, dyn N
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = matmul(a, b, precision="tf32")
}
op mm_k_bf16 {
  dims M = 256, N = 384, dyn K
  in  a: bf16[M, K]
  in  b: bf16[K, N]
  out c = matmul(a, b)
}
op lin_k_f32 {
  dims M = 96, N = 256, dyn K
  in  x: f32[M, K]
  in  w: f32[N, K]
  out y = matmul(x, transpose(w))
}
op mm_k_tt {
  dims M = 200, N = 136, dyn K
  in  a: f32[K, M]
  in  b: f32[N, K]
  out c = matmul(transpose(a), transpose(b), precision="tf32")
}
op mm_m_at {
  dims dyn M, N = 192, K = 128
  in  a: f16[K, M]
  in  b: f16[K, N]
  out c = matmul(transpose(a), b)
}
)";

const std::map<std::string, std::string> kNKDims{{"lin_n_bf16", "N"}, {"mm_n_f16", "N"}, {"mm_n_tf32", "N"},
                                                 {"mm_k_bf16", "K"},  {"lin_k_f32", "K"}, {"mm_k_tt", "K"},
                                                 {"mm_m_at", "M"}};

kiln::Plan nk_at(const std::string& op, std::int64_t v, const std::string& arch = "sm_90a") {
  return plan_text_at(kNKSpec, op, {{kNKDims.at(op), v}}, arch);
}

// The main kernel's tensor map named `name`.
const kiln::KernelArg* map_named(const kiln::PlannedKernel& k, const std::string& name) {
  for (const auto& a : k.args)
    if (a.kind == kiln::KernelArg::Kind::TensorMap && a.name == name) return &a;
  return nullptr;
}

const kiln::PlannedKernel& engine_of(const kiln::Plan& p) {
  for (const auto& k : p.kernels)
    if (k.template_name == "gemm_tma") return k;
  FAIL("no TMA engine kernel");
  return p.kernels[0];
}

}  // namespace

TEST_CASE("dyn matmul N and K: one source per bucket and class, the bucket decides 16-byte rows") {
  for (const auto& [op, dim] : kNKDims)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      // Two values of each bucket in one class: their sources are one, free of the values.
      for (const auto& pair : {std::pair<std::int64_t, std::int64_t>{1008, 992}, {1001, 995}, {1000, 1032}}) {
        const auto a = nk_at(op, pair.first, arch), b = nk_at(op, pair.second, arch);
        const auto& t = a.dyn_thresholds.at(dim);
        if (kiln::dyn_class(t, pair.first) != kiln::dyn_class(t, pair.second)) continue;
        CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
        for (const auto& src : sources_of(a)) {
          INFO(src.text);
          for (const std::int64_t v : {pair.first, pair.second})
            CHECK(src.text.find(std::to_string(v)) == std::string::npos);
        }
      }
      // Every matmul kernel reads the extent; in the bucket general no map's row length is the
      // extent (a tensor map's strides are multiples of 16 bytes), and the dyn row lengths move
      // element by element.
      const auto general = nk_at(op, 1001, arch);
      for (const auto& kn : general.kernels) {
        const auto* g = gemm_of(kn);
        if (g == nullptr || g->kind == kiln::GemmKind::OperandPrep) continue;
        CHECK(!kn.dyn_outer.empty());
        CHECK(kn.reason.find("dyn " + dim + ":") == 0);
        CHECK(kn.reason.find("(bucket general, not a multiple of ") != std::string::npos);
        for (const auto& a : kn.args)
          if (a.kind == kiln::KernelArg::Kind::TensorMap) CHECK(a.map_dyn_dim != 0);
        if (g->kind != kiln::GemmKind::Gemm) continue;
        CHECK((dim == "N" ? g->n : dim == "K" ? g->k : g->m) == 0);
        if (g->lda == 0) CHECK(!g->vec_a);
        if (g->ldb == 0) CHECK(!g->vec_b);
        if (dim == "N") CHECK((g->ldc == 0 && !g->vec_c));
      }
    }
  // A multiple of 16 takes the TMA engine where a static product would (every op but 3xTF32's).
  for (const auto& [op, dim] : kNKDims) {
    CAPTURE(op);
    const auto p = nk_at(op, 1008);
    const bool tma = std::any_of(p.kernels.begin(), p.kernels.end(),
                                 [](const kiln::PlannedKernel& k) { return k.template_name == "gemm_tma"; });
    CHECK(tma == (op != "lin_k_f32"));
  }
}

TEST_CASE("dyn matmul N and K: the bucket general splits by 16-byte rows, and the plan records the side") {
  for (const auto& [op, dim] : kNKDims)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const auto odd = nk_at(op, 1001, arch), rows8 = nk_at(op, 1000, arch), rows4 = nk_at(op, 1004, arch);
      const auto div16 = nk_at(op, 1008, arch);
      const bool f32 = op.find("f32") != std::string::npos || op.find("tt") != std::string::npos;
      // Every op's dyn dim is some tensor's row length (lin_n_bf16's N is C's), keyed by it.
      CHECK(odd.dyn_row_align.at(dim) == 0);
      CHECK(rows4.dyn_row_align.at(dim) == 1);
      CHECK(rows8.dyn_row_align.at(dim) == 2);
      CHECK(div16.dyn_row_align.empty());   // a multiple of 16 is its own bucket
      CHECK(rows8.text().find(dim + "=1000 (dyn, general, a multiple of 8") != std::string::npos);
      CHECK(rows4.text().find(dim + "=1004 (dyn, general, a multiple of 4, not of 8") != std::string::npos);
      CHECK(all_sources(sources_of(odd)) != all_sources(sources_of(rows8)));
      // 16-byte rows (a multiple of 8, or of 4 for f32) move in 16-byte vectors as a multiple of 16
      // does; a multiple of 4 is as odd for 16-bit rows.
      for (const auto* p : {&rows8, &rows4}) {
        const bool aligned = p == &rows8 || f32;
        for (const auto& kn : p->kernels) {
          const auto* g = gemm_of(kn);
          if (g == nullptr || g->kind != kiln::GemmKind::Gemm) continue;
          CHECK(g->vec_a == (aligned || g->lda != 0));
          CHECK(g->vec_b == (aligned || g->ldb != 0));
          if (dim == "N") CHECK(g->vec_c == aligned);
        }
      }
    }
  // The irregular bf16 K = 1000 of a·b takes the TMA engine, as the specialized product does.
  const auto k1000 = nk_at("mm_k_bf16", 1000);
  CHECK(std::any_of(k1000.kernels.begin(), k1000.kernels.end(),
                    [](const kiln::PlannedKernel& k) { return k.template_name == "gemm_tma"; }));
}

TEST_CASE("dyn matmul N and K: maps name the dyn extent, whose strides scale with it at launch") {
  auto dyn_dim_of = [](const std::string& op, const char* map) {
    const auto p = nk_at(op, 1008);
    const auto* a = map_named(engine_of(p), map);
    REQUIRE(a != nullptr);
    return a->map_dyn_dim;
  };
  // Maps are {K, rows, 1} k-major, else {rows, K, 1}.
  CHECK(dyn_dim_of("lin_n_bf16", "tmap_a") == -1);
  CHECK(dyn_dim_of("lin_n_bf16", "tmap_b") == 1);   // w [N, K]: N its rows
  CHECK(dyn_dim_of("mm_n_f16", "tmap_a") == -1);
  CHECK(dyn_dim_of("mm_n_f16", "tmap_b") == 0);     // b [K, N]: N its row length
  CHECK(dyn_dim_of("mm_n_tf32", "tmap_a") == 0);    // swap_ab: the engine's A is b, n-contiguous
  CHECK(dyn_dim_of("mm_n_tf32", "tmap_b") == -1);
  CHECK(dyn_dim_of("mm_k_bf16", "tmap_a") == 0);
  CHECK(dyn_dim_of("mm_k_bf16", "tmap_b") == 1);
  CHECK(dyn_dim_of("mm_k_tt", "tmap_a") == 1);      // a [K, M]: m-contiguous
  CHECK(dyn_dim_of("mm_k_tt", "tmap_b") == 0);
  CHECK(dyn_dim_of("mm_m_at", "tmap_a") == 0);
  // b [K, N] of mm_n_f16 planned at N = 1008: a launch at 2000 sets the row length and its strides.
  const auto p = nk_at("mm_n_f16", 1008);
  const auto* b = map_named(engine_of(p), "tmap_b");
  const kiln::TensorMapSpec at = b->tensor_map.with_extent(0, 2000);
  const std::int64_t planned = b->tensor_map.dims[0];
  CHECK(at.dims == std::vector<std::int64_t>{2000, 256, 1});
  CHECK(at.strides == std::vector<std::int64_t>{b->tensor_map.strides[0] / planned * 2000,
                                                b->tensor_map.strides[1] / planned * 2000});
  CHECK(at.strides[0] == 4000);   // 2000 f16
  // The outermost dim (the batches) has no stride above it.
  const kiln::TensorMapSpec batches = b->tensor_map.with_extent(2, 1);
  CHECK(batches.strides == b->tensor_map.strides);
}

TEST_CASE("dyn matmul N and K: the launch is gemm_geometry at the launch's extent") {
  for (const auto& [op, dim] : kNKDims)
    for (const char* arch : {"sm_90a", "sm_80"})
      for (std::int64_t planned : {1001, 1008}) {
        CAPTURE(op);
        CAPTURE(arch);
        const auto p = nk_at(op, planned, arch);
        for (std::int64_t v : {planned, planned + 32}) {
          auto dims = p.bound->dims;
          dims[dim] = v;
          for (std::size_t k = 0; k < p.kernels.size(); ++k) {
            const auto* g = gemm_of(p.kernels[k]);
            if (g == nullptr || p.kernels[k].dyn_outer.empty()) continue;
            kiln::GemmConfig at = *g;
            for (long long* e : {&at.m, &at.n, &at.k})
              if (*e == 0) *e = v;
            const auto want = kiln::gemm_geometry(at, p.target.sm_count, p.kernels[k].min_blocks);
            const auto got = kiln::launch_for(p, k, dims);
            CHECK(got.grid.x == want.grid.x);
            CHECK(got.grid.y == want.grid.y);
            CHECK(got.grid.z == want.grid.z);
          }
        }
      }
}

TEST_CASE("dyn matmul N and K: K slices in any class of a dyn K (the workspace does not grow with K)") {
  // 96x256 on sm_80: two 128x128 tiles; a long K splits.
  const auto p = nk_at("lin_k_f32", 200000, "sm_80");
  const auto& t = p.dyn_thresholds.at("K");
  CHECK(kiln::dyn_class(t, 200000) == static_cast<int>(t.size()));   // the top class
  REQUIRE(p.kernels.size() == 2);
  CHECK(p.kernels[0].template_name == "gemm_split_k");
  const int splits = gemm_of(p.kernels[0])->split_k;
  CHECK(splits > 1);
  for (const auto& b : p.buffers)
    if (b.kind == kiln::BufferKind::Workspace) CHECK(b.shape == std::vector<std::int64_t>{splits, 1, 96, 256});
}

TEST_CASE("dyn matmul N and K: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!nvrtc_or_skip()) return;
  int units = 0;
  for (const auto& [op, dim] : kNKDims)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t v : {5, 1001, 1008, 100000}) {
        CAPTURE(op);
        CAPTURE(v);
        units += check_units_compile(nk_at(op, v, arch), arch);
      }
  MESSAGE(units << " units compiled");
}

// ---------------------------------------------------------------------------------------------
// A dyn M, N or K of a batched product ([Note: dyn matmul]): the batch strides that span the
// extent are dyn (kDynStride in the configs; a broadcast operand keeps 0), the TMA maps' batch
// strides scale with it. M with a batched residual (the epilogue indexes it by the dyn M) on the
// TMA engine; N of k-major weights in tf32 and of a row-major B in 3xTF32 (the mma.sync Gemm);
// K split into slices; M of a transposed A (its row length); M under weights broadcast over two
// batch dims.
namespace {

const char* kBatchedSpec = R"(
op bmm_m_bf16 {
  dims B = 4, dyn M, K = 256, N = 192
  in  a: bf16[B, M, K]
  in  b: bf16[B, K, N]
  in  r: f32[B, M, N]
  out c = f32(matmul(a, b)) + r
}
op bmm_n_tf32 {
  dims B = 3, M = 96, K = 128, dyn N
  in  a: f32[B, M, K]
  in  b: f32[B, N, K]
  out c = relu(matmul(a, transpose(b), precision="tf32"))
}
op bmm_n_f32 {
  dims B = 2, M = 64, K = 300, dyn N
  in  a: f32[B, M, K]
  in  b: f32[B, K, N]
  in  r: f32[B, M, N]
  out c = matmul(a, b) - r
}
op bmm_k_f32 {
  dims B = 6, M = 64, dyn K, N = 80
  in  a: f32[B, M, K]
  in  b: f32[B, K, N]
  out c = matmul(a, b)
}
op bmm_k_f16 {
  dims B = 5, M = 130, dyn K, N = 72
  in  a: f16[B, K, M]
  in  b: f16[B, K, N]
  out c = matmul(transpose(a), b)
}
op bmm_m_at {
  dims B = 3, dyn M, K = 64, N = 128
  in  a: bf16[B, K, M]
  in  b: bf16[B, K, N]
  out c = matmul(transpose(a), b)
}
op bmm_m_bcast {
  dims B = 2, H = 3, dyn M, K = 64, N = 128
  in  a: f16[B, H, M, K]
  in  w: f16[K, N]
  in  bias: f16[N]
  out c = matmul(a, w) + bias
}
)";

const std::map<std::string, std::string> kBatchedDims{
    {"bmm_m_bf16", "M"}, {"bmm_n_tf32", "N"}, {"bmm_n_f32", "N"},  {"bmm_k_f32", "K"},
    {"bmm_k_f16", "K"},  {"bmm_m_at", "M"},   {"bmm_m_bcast", "M"}};

kiln::Plan batched_at(const std::string& op, std::int64_t v, const std::string& arch = "sm_90a") {
  return plan_text_at(kBatchedSpec, op, {{kBatchedDims.at(op), v}}, arch);
}

}  // namespace

TEST_CASE("dyn matmul, batched: the strides that span the extent are dyn, one source per class") {
  for (const auto& [op, dim] : kBatchedDims)
    for (const char* arch : {"sm_90a", "sm_80"})
      for (const auto& pair : {std::pair<std::int64_t, std::int64_t>{1008, 1024}, {1001, 1003}, {100, 116}}) {
        CAPTURE(op);
        CAPTURE(arch);
        CAPTURE(pair.first);
        const auto a = batched_at(op, pair.first, arch), b = batched_at(op, pair.second, arch);
        const auto& t = a.dyn_thresholds.at(dim);
        if (kiln::dyn_class(t, pair.first) == kiln::dyn_class(t, pair.second) &&
            kiln::dyn_key_code(pair.first, true) == kiln::dyn_key_code(pair.second, true))
          CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
        for (const auto& kn : a.kernels) {
          const auto* g = gemm_of(kn);
          if (g == nullptr || g->kind == kiln::GemmKind::OperandPrep) continue;
          CHECK(!kn.dyn_outer.empty());
          if (op == "bmm_m_bcast") continue;   // folded: below
          CHECK(g->batch > 1);
          // In the kernel's own terms (the engine's A is the op's B under swap_ab).
          const bool a_spans = dim != (g->swap_ab ? "M" : "N"), b_spans = dim != (g->swap_ab ? "N" : "M");
          if (g->stride_a != 0) CHECK((g->stride_a == kiln::kDynStride) == a_spans);
          if (g->stride_b != 0) CHECK((g->stride_b == kiln::kDynStride) == b_spans);
          if (g->stride_c != 0) CHECK((g->stride_c == kiln::kDynStride) == (dim != "K"));
        }
      }
  // Weights shared by every batch: the batches fold into M ([Note: folded batches]), one product of
  // 2 x 3 x M rows without batch strides, whose epilogue splits a row by the dyn M.
  const auto bcast = batched_at("bmm_m_bcast", 500);
  const auto* g = gemm_of(bcast.kernels[0]);
  REQUIRE(g != nullptr);
  CHECK(g->batch == 1);
  CHECK(g->m == 0);
  CHECK(g->stride_a == 0);
  CHECK(g->stride_b == 0);
  CHECK(g->stride_c == 0);
  CHECK(bcast.kernels[0].dyn_extent(bcast.bound->dims) == 6 * 500);
  const std::string src = all_sources(sources_of(bcast));
  CHECK(src.find("const Index m = row % dim_M;") != std::string::npos);
  CHECK(src.find("const Index b1 = row / dim_M % 3;") != std::string::npos);
  CHECK(src.find("const Index b0 = row / (dim_M * 3);") != std::string::npos);
}

TEST_CASE("dyn matmul, batched: the maps' batch strides scale with the extent, the launch follows it") {
  // bmm_m_bf16 at M = 1008 on the TMA engine: a [4, M, K] maps as {K, M, 4}; M is its dim 1, and
  // the batch stride spans it. b does not depend on M.
  const auto p = batched_at("bmm_m_bf16", 1008);
  const auto& engine = engine_of(p);
  const auto* a = map_named(engine, "tmap_a");
  const auto* b = map_named(engine, "tmap_b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a->map_dyn_dim == 1);
  CHECK(b->map_dyn_dim == -1);
  const kiln::TensorMapSpec at = a->tensor_map.with_extent(1, 3000);
  CHECK(at.dims == std::vector<std::int64_t>{256, 3000, 4});
  CHECK(at.strides == std::vector<std::int64_t>{256 * 2, 3000 * 256 * 2});
  // Every dyn kernel's launch is gemm_geometry at the launch's extent, batches included.
  for (const auto& [op, dim] : kBatchedDims)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const auto q = batched_at(op, 1001, arch);
      auto dims = q.bound->dims;
      dims[dim] = 1033;
      for (std::size_t k = 0; k < q.kernels.size(); ++k) {
        const auto* c = gemm_of(q.kernels[k]);
        if (c == nullptr || q.kernels[k].dyn_outer.empty()) continue;
        kiln::GemmConfig want_at = *c;
        for (long long* e : {&want_at.m, &want_at.n, &want_at.k})   // bmm_m_bcast's M: 2 x 3 batches folded
          if (*e == 0) *e = op == "bmm_m_bcast" ? 6 * 1033 : 1033;
        const auto want = kiln::gemm_geometry(want_at, q.target.sm_count, q.kernels[k].min_blocks);
        const auto got = kiln::launch_for(q, k, dims);
        CHECK(got.grid.x == want.grid.x);
        CHECK(got.grid.y == want.grid.y);
        CHECK(got.grid.z == want.grid.z);
      }
    }
}

TEST_CASE("dyn matmul, batched: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!nvrtc_or_skip()) return;
  int units = 0;
  for (const auto& [op, dim] : kBatchedDims)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t v : {5, 1001, 1008, 100000}) {
        CAPTURE(op);
        CAPTURE(v);
        units += check_units_compile(batched_at(op, v, arch), arch);
      }
  MESSAGE(units << " units compiled");
}

TEST_CASE("dyn matmul: goldens of a dyn M on the TMA engine, a dyn N under swap_ab and a dyn K with K slices") {
  // Each plan's text then every unit's source: the DynShape argument names the extent it fills.
  auto golden = [](const kiln::Plan& plan) { return plan.text() + "\n" + all_sources(sources_of(plan)); };
  check_golden("source/dyn_matmul_m_bf16.cu", golden(dyn_at("lin_bf16", 1000)));
  check_golden("source/dyn_matmul_n_tf32.cu", golden(nk_at("mm_n_tf32", 1000)));
  check_golden("source/dyn_matmul_k_f32.cu", golden(nk_at("lin_k_f32", 20008)));
  check_golden("source/dyn_matmul_batched_m_bf16.cu", golden(batched_at("bmm_m_bf16", 1000)));
}

namespace {

// A linear layer over tokens with a dyn batch and a dyn sequence length: the batches fold into M
// ([Note: folded batches]), whose two dyn factors are classed by their product ([Note: size
// classes of a product] in generator/plan/plan.h); and the same under two batch dims in f32.
constexpr const char* kTokensSpec = R"(
op tokens {
  dims dyn B, dyn S, D = 512, N = 1024
  in  x: bf16[B, S, D]
  in  w: bf16[N, D]
  in  pos: f32[S, N]
  out y = f32(matmul(x, transpose(w))) + pos
}
op tokens_f32 {
  dims dyn B, H = 2, dyn S, D = 96, N = 200
  in  x: f32[B, H, S, D]
  in  w: f32[D, N]
  in  hb: f32[H, 1, N]
  out y = relu(matmul(x, w) + hb)
}
)";

kiln::Plan tokens_at(const std::string& op, std::int64_t b, std::int64_t s, const std::string& arch = "sm_90a") {
  return plan_text_at(kTokensSpec, op, {{"B", b}, {"S", s}}, arch);
}

}  // namespace

TEST_CASE("dyn matmul, folded: a dyn batch and a dyn M are one extent, classed by their product") {
  for (const char* op : {"tokens", "tokens_f32"})
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const std::int64_t h = std::string(op) == "tokens_f32" ? 2 : 1;
      const auto p = tokens_at(op, 4, 100, arch);
      REQUIRE(p.dyn_thresholds.count("B*S") == 1);
      CHECK(p.dyn_thresholds.count("B") == 0);
      CHECK(p.dyn_thresholds.count("S") == 0);
      CHECK(p.text().find(" B*S (class ") != std::string::npos);
      const auto& t = p.dyn_thresholds.at("B*S");
      for (const auto& kn : p.kernels) {
        const auto* g = gemm_of(kn);
        if (g == nullptr || g->kind == kiln::GemmKind::OperandPrep) continue;
        CHECK(kn.folded_batches);
        CHECK(g->batch == 1);
        CHECK((g->swap_ab ? g->n : g->m) == 0);
        CHECK(kn.reason.find("dyn B*S: M (the rows of every batch) in the size class ") == 0);
        // The launch: gemm_geometry at B x H x S rows.
        auto dims = p.bound->dims;
        dims["B"] = 8, dims["S"] = 51;
        REQUIRE(kiln::dyn_class(t, 8 * 51) == kiln::dyn_class(t, 400));
        kiln::GemmConfig at = *g;
        (g->swap_ab ? at.n : at.m) = 8 * h * 51;
        const auto k = static_cast<std::size_t>(&kn - p.kernels.data());
        const auto want = kiln::gemm_geometry(at, p.target.sm_count, kn.min_blocks);
        const auto got = kiln::launch_for(p, k, dims);
        CHECK((got.grid.x == want.grid.x && got.grid.y == want.grid.y && got.grid.z == want.grid.z));
      }
      // Pairs whose products share a class share the source, which holds neither value.
      for (const auto& [b, s] : {std::pair<std::int64_t, std::int64_t>{8, 50}, {5, 97}, {2, 213}}) {
        CAPTURE(b);
        CAPTURE(s);
        if (kiln::dyn_class(t, b * s) != kiln::dyn_class(t, 400)) continue;
        const auto q = tokens_at(op, b, s, arch);
        const std::string src = all_sources(sources_of(q));
        CHECK(src == all_sources(sources_of(p)));
        for (const std::string v : {std::to_string(b), std::to_string(s)}) CHECK(src.find("= " + v + ";") == std::string::npos);
      }
      // The first product of the next class plans another route: another source.
      const int klass = kiln::dyn_class(t, 400);
      if (klass < static_cast<int>(t.size())) {
        const std::int64_t next = t[static_cast<std::size_t>(klass)];
        const std::int64_t b = next % 2 == 0 ? 2 : 3, s = (next + b - 1) / b;   // b x s reaches the next class
        if (kiln::dyn_class(t, b * s) == klass + 1)
          CHECK(all_sources(sources_of(tokens_at(op, b, s, arch))) != all_sources(sources_of(p)));
      }
      // A factor in the bucket one is 1 in the plan: the other is classed alone.
      CHECK(tokens_at(op, 1, 100, arch).dyn_thresholds.count("S") == 1);
      CHECK(tokens_at(op, 4, 1, arch).dyn_thresholds.count("B") == 1);
    }
  // The epilogue splits a row by the dyn S, the outermost batch by H x S.
  const std::string src = all_sources(sources_of(tokens_at("tokens_f32", 3, 50)));
  CHECK(src.find("const Index m = row % dim_S;") != std::string::npos);
  CHECK(src.find("const Index b1 = row / dim_S % 2;") != std::string::npos);
  CHECK(src.find("const Index b0 = row / (dim_S * 2);") != std::string::npos);
}

TEST_CASE("dyn matmul, folded: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!nvrtc_or_skip()) return;
  int units = 0;
  for (const char* op : {"tokens", "tokens_f32"})
    for (const char* arch : {"sm_80", "sm_90a"})
      for (const auto& [b, s] : {std::pair<std::int64_t, std::int64_t>{1, 5}, {3, 1}, {4, 100}, {64, 1001}}) {
        CAPTURE(op);
        CAPTURE(b);
        CAPTURE(s);
        units += check_units_compile(tokens_at(op, b, s, arch), arch);
      }
  MESSAGE(units << " units compiled");
}

TEST_CASE("size classes of a product: keys, factors and values") {
  // [Note: size classes of a product] in generator/plan/plan.h.
  CHECK(kiln::dyn_class_key({"B", "S"}) == "B*S");
  CHECK(kiln::dyn_class_key({"M"}) == "M");
  CHECK(kiln::dyn_class_factors("B*S") == std::vector<std::string>{"B", "S"});
  CHECK(kiln::dyn_class_factors("M") == std::vector<std::string>{"M"});
  const std::map<std::string, std::int64_t> dims{{"B", 6}, {"S", 77}, {"M", 5}};
  CHECK(kiln::dyn_class_value("B*S", dims) == 6 * 77);
  CHECK(kiln::dyn_class_value("M", dims) == 5);
  CHECK_THROWS(kiln::dyn_class_value("B*T", dims));   // a factor the binding lacks
}
