// Planning and emission of matmul and conv2d anchors (generator/plan/plan_contraction.cpp,
// generator/emit/emit_contraction.cpp): plan text and generated-source goldens for the seed
// specs and specs/matmul.kiln, specs/conv.kiln at their default dims and at an awkward
// small shape; FileCheck-style assertions on the choices; every unit compiles with NVRTC.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "generator/emit/emit.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "generator/emit/templates.h"
#include "golden.h"
#include "reference/reference.h"
#include "runtime/nvrtc.h"

namespace {

struct Case {
  const char* file;    // under specs/
  const char* op;
  std::map<std::string, std::int64_t> dims;   // empty: the spec's defaults
  const char* tag;     // golden name suffix
};

// Awkward shapes: M, N, K not multiples of any tile, odd spatial sizes.
const std::vector<Case> kCases = {
    {"matmul_small_k.kiln", "matmul_small_k", {}, "default"},
    {"matmul_small_k.kiln", "matmul_small_k", {{"M", 1000}, {"N", 33}, {"K", 64}}, "odd"},
    {"linear_dropout_softmax.kiln", "linear_dropout_softmax", {}, "default"},
    {"linear_dropout_softmax.kiln", "linear_dropout_softmax", {{"B", 7}, {"IN", 127}, {"OUT", 33}}, "odd"},
    {"conv2d_3x3.kiln", "conv2d_3x3", {}, "default"},
    {"conv2d_3x3.kiln", "conv2d_3x3", {{"N", 1}, {"C", 3}, {"H", 7}, {"W", 33}, {"K", 5}}, "odd"},
    {"matmul.kiln", "matmul_square", {}, "default"},
    {"matmul.kiln", "matmul_square", {{"M", 7}, {"N", 33}, {"K", 1000}}, "odd"},
    {"matmul.kiln", "matmul_square", {{"M", 96}, {"N", 200}, {"K", 5000}}, "splitk"},
    {"matmul.kiln", "gemm_bias_relu", {{"B", 33}, {"IN", 4000}, {"OUT", 7}}, "splitk"},
    {"matmul.kiln", "matmul_batched", {}, "default"},
    {"matmul.kiln", "matmul_batched", {{"B", 3}, {"M", 7}, {"N", 127}, {"K", 33}}, "odd"},
    {"matmul.kiln", "matmul_transposed", {}, "default"},
    {"matmul.kiln", "matmul_transposed", {{"M", 33}, {"N", 7}, {"K", 127}}, "odd"},
    {"matmul.kiln", "gemm_bias_relu", {}, "default"},
    {"matmul.kiln", "gemm_bias_relu", {{"B", 1}, {"IN", 7}, {"OUT", 1000}}, "odd"},
    {"matmul.kiln", "attention_scores", {}, "default"},
    {"matmul.kiln", "attention_scores", {{"B", 1}, {"H", 3}, {"S", 33}, {"D", 7}}, "odd"},
    {"conv.kiln", "conv2d_stride2_pad1", {}, "default"},
    {"conv.kiln", "conv2d_stride2_pad1", {{"N", 1}, {"C", 3}, {"H", 9}, {"W", 13}, {"K", 7}}, "odd"},
    {"conv.kiln", "conv2d_depthwise", {}, "default"},
    {"conv.kiln", "conv2d_depthwise", {{"N", 1}, {"H", 5}, {"W", 9}}, "odd"},
    {"conv.kiln", "conv2d_dilated_grouped", {}, "default"},
    {"conv.kiln", "conv2d_dilated_grouped", {{"N", 1}, {"H", 11}, {"W", 7}}, "odd"},
    // 24..: 16-bit and tf32 products in every layout (specs/gemm.kiln; the TMA engine on sm_90a).
    {"gemm.kiln", "mm_bf16", {}, "default"},
    {"gemm.kiln", "mm_bf16_tn", {{"M", 4096}, {"N", 4096}, {"K", 4096}}, "4096"},
    {"gemm.kiln", "mm_f16_tt", {{"M", 8}, {"N", 120}, {"K", 33}}, "odd"},
    {"gemm.kiln", "mm_f16_batched", {}, "default"},
    {"gemm.kiln", "linear_bf16_gelu", {}, "default"},
    {"gemm.kiln", "mm_tf32_nt", {}, "default"},
    {"gemm.kiln", "mm_bf16_nt", {{"M", 7}, {"N", 33}, {"K", 1001}}, "misaligned"},
    // 31: a 3xTF32 linear layer, 4096^3 (on sm_90a the TMA engine: hi / lo pre-passes, three products).
    {"matmul.kiln", "linear_bias", {}, "default"},
    // 32, 33: tf32 with operands whose k is not contiguous: OperandPrep (a transpose), then the engine.
    {"gemm.kiln", "mm_tf32", {}, "default"},
    {"gemm.kiln", "mm_tf32_tn_batched", {}, "default"},
    // 34, 35: a long K whose tiles cannot fill the SMs: split-K on the engine (bf16; tf32 after the
    // pre-pass, batched).
    {"gemm.kiln", "mm_bf16", {{"M", 512}, {"N", 512}, {"K", 262144}}, "longk"},
    {"gemm.kiln", "mm_tf32_tn_batched", {{"B", 2}, {"M", 100}, {"N", 264}, {"K", 8200}}, "longk"},
    // 36, 37: rows that are not a multiple of 16 bytes (bf16 K = 4799, N = 3331; tf32 K = 999): on
    // sm_90a both operands are copied k-major into padded rows, then the engine.
    {"gemm.kiln", "mm_bf16", {{"M", 6007}, {"N", 3331}, {"K", 4799}}, "pad"},
    {"gemm.kiln", "mm_tf32_nt", {{"M", 1000}, {"N", 1000}, {"K", 999}}, "pad"},
    // 38: a 3xTF32 linear layer with a batch of 512 (below kX3MinSide): WgGemm on sm_90a.
    {"matmul.kiln", "linear_bias", {{"B", 512}}, "b512"},
    // 39: a conv too small to pay for the TMA engine's copies (2^30 flops): WgConvNchw on sm_90a.
    {"conv2d_3x3.kiln", "conv2d_3x3", {{"N", 1}, {"C", 16}, {"H", 64}, {"W", 64}, {"K", 32}}, "small"},
    // 40: every conv parameter asymmetric, C and K not multiples of a tile, bias + relu: on sm_90a
    // the TMA engine with an im2col map.
    {"conv.kiln", "conv2d_asym_bias_relu", {}, "default"},
    // 41-43: tf32 on sm_90a with an m-major operand that has 16-byte rows: a·b runs as Cᵀ = Bᵀ·Aᵀ
    // (bias + relu, batched; a long K split), aᵀ·bᵀ takes A through registers as stored.
    {"gemm.kiln", "mm_tf32_bias_batched", {}, "default"},
    {"gemm.kiln", "mm_tf32_bias_batched", {{"B", 1}, {"M", 512}, {"N", 512}, {"K", 262144}}, "longk"},
    {"gemm.kiln", "mm_tf32_tt", {}, "default"},
    // 44-48: conv1d (the 2-d templates with H = 1), conv3d and the transposed convs (ConvNchw's
    // general im2col; one GEMM per stride phase, w split only for a GEMM K >= 128).
    {"conv_nd.kiln", "conv1d_strided_dilated_bias", {{"N", 2}, {"L", 1000}}, "odd"},
    {"conv_nd.kiln", "conv3d_asym_grouped_bf16", {}, "default"},
    {"conv_nd.kiln", "conv_transpose1d_strided_dilated", {{"N", 2}, {"L", 999}}, "odd"},
    {"conv_nd.kiln", "conv_transpose2d_opad_f16", {}, "default"},
    {"conv_nd.kiln", "conv_transpose3d_grouped", {}, "default"},
};

std::shared_ptr<const kiln::ir::BoundIr> bound_op(const Case& c) {
  // Parsed under its repository-relative name, so goldens do not depend on the checkout's path.
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/specs/" + c.file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const auto spec = kiln::parse_spec(text.str(), std::string("specs/") + c.file);
  auto ir = kiln::check_op(spec, c.op);
  std::map<std::string, kiln::ir::DimValue> dims;
  for (const auto& [k, v] : c.dims) dims[k] = {v, "test"};
  return std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, dims));
}

struct Generated {
  kiln::Plan plan;
  std::vector<kiln::KernelSource> sources;
};

Generated generate(const Case& c, const std::string& arch = "sm_90",
                   kiln::Precision precision = kiln::Precision::fp32_accurate) {
  static const kiln::TemplateLibrary templates;
  auto target = kiln::Target::for_arch(arch);
  target.precision = precision;
  Generated g{kiln::make_plan(bound_op(c), target), {}};
  g.sources = kiln::emit(g.plan, templates);
  return g;
}

// The bytes of the plan's workspace whose name starts with `prefix` (kmajor_a / kmajor_b + the
// anchor), -1 where it has none.
std::int64_t workspace_bytes(const Generated& g, const char* prefix) {
  for (const auto& b : g.plan.buffers)
    if (b.kind == kiln::BufferKind::Workspace && b.name.rfind(prefix, 0) == 0) return b.bytes;
  return -1;
}

Generated generate(const char* op, const char* tag) {
  for (const auto& c : kCases)
    if (std::string(c.op) == op && std::string(c.tag) == tag) return generate(c);
  FAIL("no case " << op << " " << tag);
  return {};
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The typed configs the planner chose for kernel k.
const kiln::GemmConfig& gemm_config(const Generated& g, std::size_t k) {
  return std::get<kiln::GemmConfig>(g.plan.kernels.at(k).config);
}
const kiln::ConvConfig& conv_config(const Generated& g, std::size_t k) {
  return std::get<kiln::ConvConfig>(g.plan.kernels.at(k).config);
}
// The tensor map kernel k takes as parameter `name`.
const kiln::TensorMapSpec& tensor_map(const Generated& g, std::size_t k, const std::string& name) {
  for (const auto& arg : g.plan.kernels.at(k).args)
    if (arg.kind == kiln::KernelArg::Kind::TensorMap && arg.name == name) return arg.tensor_map;
  FAIL("kernel " << k << " has no tensor map " << name);
  static const kiln::TensorMapSpec none;
  return none;
}

}  // namespace

TEST_CASE("contraction plans and sources match their goldens") {
  for (const auto& c : kCases) {
    CAPTURE(c.op);
    CAPTURE(c.tag);
    const auto g = generate(c);
    const std::string name = std::string(c.op) + "_" + c.tag;
    check_golden("plan/" + name + ".txt", g.plan.text());
    for (std::size_t k = 0; k < g.sources.size(); ++k)
      check_golden("source/" + name + "_k" + std::to_string(k) + ".cu", g.sources[k].text);
    // Generating twice gives the same bytes.
    const auto again = generate(c);
    REQUIRE(again.sources.size() == g.sources.size());
    for (std::size_t k = 0; k < g.sources.size(); ++k) CHECK(again.sources[k].text == g.sources[k].text);
  }
}

TEST_CASE("GemmConfig and ConvConfig: text, equality, hash") {
  kiln::GemmConfig a;
  a.kind = kiln::GemmKind::SplitK;
  a.m = 128, a.n = 16384, a.bm = 128, a.split_k = 2, a.vec_a = true;
  kiln::GemmConfig b = a;
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  CHECK(a.to_string() == b.to_string());
  CHECK(has(a.to_string(), "GemmConfig{kind=SplitK precision=Tf32x3 elem_bytes=4 layout_a=RowMajor"));
  CHECK(has(a.to_string(), " split_k=2 vec_a=1 "));
  CHECK(has(a.literal(), "/*kind=*/kiln::GemmKind::SplitK, /*precision=*/kiln::MmaPrecision::Tf32x3"));
  b.split_k = 3;   // one field differs
  CHECK_FALSE(a == b);
  CHECK(a.hash() != b.hash());
  b = a;
  b.layout_b = kiln::GemmLayout::ColMajor;   // an enum field differs
  CHECK_FALSE(a == b);
  CHECK(a.hash() != b.hash());

  kiln::ConvConfig c;
  c.kind = kiln::ConvKind::Depthwise;
  c.threads = 256;
  kiln::ConvConfig d = c;
  CHECK(c == d);
  CHECK(c.hash() == d.hash());
  CHECK(has(c.to_string(), "ConvConfig{kind=Depthwise "));
  d.pad_w = 1;
  CHECK_FALSE(c == d);
  CHECK(c.hash() != d.hash());
  // The variant holds them apart from other families.
  const kiln::KernelConfig kc = a;
  CHECK(kiln::config_text(kc) == a.to_string());
}

TEST_CASE("every contraction kernel: the planner's launch is its config's rule, and the unit asserts it") {
  std::set<std::string> kinds;
  auto check = [&](const Generated& g) {
    for (std::size_t k = 0; k < g.plan.kernels.size(); ++k) {
      const auto& kn = g.plan.kernels[k];
      const auto& src = g.sources[k].text;
      CAPTURE(kn.entry);
      kiln::launch::Geometry want;
      bool dynamic = true;
      if (const auto* c = std::get_if<kiln::GemmConfig>(&kn.config)) {
        kinds.insert(std::string("gemm ") + enum_name(c->kind));
        want = kiln::gemm_geometry(*c, g.plan.target.sm_count, kn.min_blocks);
        CHECK(want.shared_bytes == kiln::gemm_smem(*c));
        dynamic = c->kind == kiln::GemmKind::Gemm || c->kind == kiln::GemmKind::SplitK ||
                  c->kind == kiln::GemmKind::SmallK || c->kind == kiln::GemmKind::SmallKWgmma ||
                  c->kind == kiln::GemmKind::Wgmma || c->kind == kiln::GemmKind::WgmmaSplitK ||
                  c->kind == kiln::GemmKind::Tma;
      } else if (const auto* c = std::get_if<kiln::ConvConfig>(&kn.config)) {
        kinds.insert(std::string("conv ") + enum_name(c->kind));
        want = kiln::conv_geometry(*c, g.plan.target.sm_count);
        CHECK(want.shared_bytes == kiln::conv_smem(*c));
        dynamic = c->kind != kiln::ConvKind::Depthwise;
      } else {
        continue;   // an elementwise prologue kernel
      }
      CHECK(kn.shared_bytes == want.shared_bytes);
      CHECK(dynamic == (kn.shared_bytes > 0));
      CHECK((kn.grid.x == want.grid.x && kn.grid.y == want.grid.y && kn.grid.z == want.grid.z));
      CHECK((kn.block.x == want.block.x && kn.block.y == 1 && kn.block.z == 1));
      // The unit checks the template's own constants against the planner's numbers, and the
      // launch against its copy of the rule.
      CHECK(has(src, "constexpr kiln::"));
      CHECK(has(src, fmt::format("::kThreads == {}", kn.block.x)));
      if (dynamic) CHECK(has(src, fmt::format("::kSmemBytes == {}, \"the template's", kn.shared_bytes)));
      CHECK(has(src, "static_assert(kiln::launch::same_launch(kiln::"));
    }
  };
  for (const auto& c : kCases) {
    CAPTURE(c.op);
    CAPTURE(c.tag);
    for (const char* arch : {"sm_80", "sm_86", "sm_90", "sm_90a"})
      for (auto precision : {kiln::Precision::fp32_accurate, kiln::Precision::tf32, kiln::Precision::ieee})
        check(generate(c, arch, precision));
  }
  // Every kind of both families was seen.
  for (const char* kind : {"gemm Gemm", "gemm SplitK", "gemm SplitKReduce", "gemm SplitKSoftmax", "gemm SoftmaxFinalize",
                           "gemm SmallK", "gemm SmallKPrep", "gemm SmallKWgmma", "gemm Wgmma", "gemm WgmmaSplitK", "gemm Tma", "gemm OperandPrep", "gemm Gemv",
                           "conv Nchw", "conv Depthwise", "conv Wgmma", "conv Tma"}) {
    CAPTURE(kind);
    CHECK(kinds.count(kind) == 1);
  }
}

TEST_CASE("matmul_small_k: SmallK, persistent, no K loop") {
  const auto g = generate("matmul_small_k", "default");
  REQUIRE(g.sources.size() == 1);
  const auto& src = g.sources[0].text;
  // The small-K GEMM has no K loop: the SmallK template holds all of K in one shared tile.
  CHECK(has(src, "kiln::gemm::SmallK<kiln::Tf32x3, Index, kM, kN, kK"));
  // fp32 accuracy by default: 3xTF32.
  CHECK(has(src, "Tf32x3"));
  // C has 2^30 elements, but the planner's index rule is per tensor (< 2^31): int32 offsets.
  CHECK(has(src, "using Index = int;"));
  // Persistent CTAs, one per SM for 3xTF32: 128x128 tiles of 64x32 warps (the H100 harness's
  // fastest 3xTF32 configuration).
  CHECK(g.plan.kernels[0].grid.x == 132);
  CHECK(has(src, "__launch_bounds__(256)"));
  const auto& sk = gemm_config(g, 0);
  CHECK(sk.kind == kiln::GemmKind::SmallK);
  CHECK((sk.bm == 128 && sk.bn == 128 && sk.wm == 64 && sk.wn == 32));
  // tf32: 256x64 tiles of 8 warps of 64x32 (104 KB of shared memory), one CTA per SM: the tall
  // tile halves the B blocks re-read from L2, which share the memory system with C's writes.
  const auto t = generate(kCases[0], "sm_90", kiln::Precision::tf32);
  CHECK(t.plan.kernels[0].grid.x == 132);
  CHECK(t.plan.kernels[0].shared_bytes == 256 * 68 * 4 + 2 * 64 * 72 * 4);
  CHECK(has(t.sources[0].text, "__launch_bounds__(256)"));
  CHECK((gemm_config(t, 0).bm == 256 && gemm_config(t, 0).bn == 64 && gemm_config(t, 0).wm == 64 &&
         gemm_config(t, 0).wn == 32));
  // sm_86 cannot hold it (100 KB per SM): 128x64 tiles of 4 warps, as many CTAs as fit.
  const auto t86 = generate(kCases[0], "sm_86", kiln::Precision::tf32);
  CHECK((gemm_config(t86, 0).bm == 128 && gemm_config(t86, 0).bn == 64 && gemm_config(t86, 0).wm == 64 &&
         gemm_config(t86, 0).wn == 32));
  // sm_86 has 100 KB per SM: no room for a 128x128 tile, so 128x64, one CTA per SM, plain bounds.
  const auto g86 = generate(kCases[0], "sm_86");
  CHECK(g86.plan.kernels[0].template_name == "gemm_small_k");
  CHECK(g86.plan.kernels[0].grid.x == 84);
  CHECK(has(g86.sources[0].text, "__launch_bounds__(128)"));
  // No epilogue: the identity functor.
  CHECK(has(src, "kiln::gemm::Identity{}"));
  // sm_90a, fp32-accurate: the operand pre-pass (A and B^T as k-contiguous tf32 hi/lo parts) and
  // the persistent wgmma SmallK: 256x64 tiles of four warpgroups, a B ring of 3 (225 KB of shared
  // memory), one CTA per SM.
  {
    const auto w = generate(kCases[0], "sm_90a", kiln::Precision::fp32_accurate);
    check_golden("plan/matmul_small_k_sm90a.txt", w.plan.text());
    for (std::size_t k = 0; k < w.sources.size(); ++k)
      check_golden("source/matmul_small_k_sm90a_k" + std::to_string(k) + ".cu", w.sources[k].text);
    REQUIRE(w.plan.kernels.size() == 2);
    CHECK(w.plan.kernels[0].template_name == "gemm_small_k_prep");
    CHECK(w.plan.kernels[1].template_name == "gemm_small_k_wgmma");
    CHECK(w.plan.kernels[0].grid.x == 32768 / 32 + 32768 * 64 / 2048);
    CHECK(w.plan.kernels[1].grid.x == 132);
    CHECK(w.plan.kernels[1].block.x == 512);
    CHECK(w.plan.kernels[1].shared_bytes == 2 * 2 * 128 * (256 + 3 * 64) + 1024);
    CHECK(has(w.sources[0].text, "kiln::sm90::SmallKPrep<kiln::Tf32x3, Index, kM, kN, kK, kConfig.lda, kConfig.ldb>"));
    CHECK((gemm_config(w, 0).kind == kiln::GemmKind::SmallKPrep && gemm_config(w, 0).lda == 64 &&
           gemm_config(w, 0).ldb == 32768));
    const auto& wk = gemm_config(w, 1);
    CHECK((wk.kind == kiln::GemmKind::SmallKWgmma && wk.bm == 256 && wk.bn == 64 && wk.b_stages == 3 && wk.stream_c));
    // The planner's shared bytes are the rule's, and the unit asserts the template agrees.
    CHECK(w.plan.kernels[1].shared_bytes == kiln::wg_small_k_smem(256, 64, 3, 64, true));
    CHECK(has(w.sources[1].text, "static_assert(Kernel::kThreads == 512 && Kernel::kSmemBytes == 230400,"));
    // The workspace: A and B^T, hi and lo: 2 * (M + N) * K floats, written by k0, read by k1.
    const auto& ws = w.plan.buffers.back();
    CHECK(ws.bytes == 2 * (32768 + 32768) * 64 * 4);
    CHECK(has(w.plan.kernels[1].reason, "two accumulator sets"));
    // tf32 keeps the mma.sync SmallK (the wgmma kernel measured no faster there); so do sm_90 and
    // a K whose hi/lo blocks cannot fit in shared memory: K = 96 still fits 128x64 tiles with a
    // B ring of 2 (192 KB), K = 128 does not (256 KB).
    CHECK(generate(kCases[0], "sm_90a", kiln::Precision::tf32).plan.kernels[0].template_name == "gemm_small_k");
    CHECK(generate(kCases[0], "sm_90", kiln::Precision::fp32_accurate).plan.kernels[0].template_name ==
          "gemm_small_k");
    const Case k96{"matmul_small_k.kiln", "matmul_small_k", {{"K", 96}}, "k96"};
    const auto w96 = generate(k96, "sm_90a", kiln::Precision::fp32_accurate);
    REQUIRE(w96.plan.kernels.size() == 2);
    CHECK((gemm_config(w96, 1).bm == 128 && gemm_config(w96, 1).bn == 64 && gemm_config(w96, 1).b_stages == 2));
    const Case k128{"matmul_small_k.kiln", "matmul_small_k", {{"K", 128}}, "k128"};
    CHECK(generate(k128, "sm_90a", kiln::Precision::fp32_accurate).plan.kernels[0].template_name == "gemm_small_k");
  }
  // An odd N (33) is not a multiple of 4: no 16-byte rows, so the general Gemm.
  const auto odd = generate("matmul_small_k", "odd");
  CHECK(odd.plan.kernels[0].template_name != "gemm_small_k");
}

TEST_CASE("linear_dropout_softmax: split-K, transposed W as a view, dropout epilogue and softmax in the reduce") {
  const auto g = generate("linear_dropout_softmax", "default");
  // 128 tiles of 128x128 cannot give 132 SMs two CTAs each and K = 16384 is long: split-K GEMM,
  // then one kernel that reduces, applies the epilogue and normalizes (no row-statistics pass).
  REQUIRE(g.plan.kernels.size() == 2);
  CHECK(g.plan.kernels[0].template_name == "gemm_split_k");
  CHECK(g.plan.kernels[1].template_name == "gemm_split_k_softmax");
  const auto& gemm = g.sources[0].text;
  const auto& red = g.sources[1].text;
  // W [OUT, IN] is B = W^T read column-major in place.
  CHECK(has(gemm, "kiln::gemm::kRowMajor, kiln::gemm::kColMajor"));
  CHECK(gemm_config(g, 0).layout_b == kiln::GemmLayout::ColMajor);
  // The linear layer streams W once: one row of M tiles, so every W column tile (of one K slice)
  // is read by one CTA; 2 slices: 256 CTAs.
  CHECK(g.plan.kernels[0].grid.y == 1);
  CHECK(g.plan.kernels[0].grid.z == 2);
  CHECK(gemm_config(g, 0).split_k == 2);
  // fp32-accurate: 8 warps of 64x32 (acc + part: ~204 registers), 4 stages, one CTA per SM.
  CHECK(g.plan.kernels[0].block.x == 256);
  CHECK((gemm_config(g, 0).wm == 64 && gemm_config(g, 0).wn == 32 && gemm_config(g, 0).stages == 4));
  CHECK(has(gemm, "__launch_bounds__(256)"));
  // The GEMM kernel has no epilogue: dropout and bias live in the reduce kernel.
  CHECK(!has(gemm, "dropout_keep"));
  // Dropout hashes the flat index with the elementwise rule's threshold ceil(0.2 * 2^24).
  CHECK(has(red, "kiln::dropout_keep("));
  CHECK(has(red, "3355444u"));
  CHECK(has(red, "#include \"kiln/philox.cuh\""));
  // The bias is loaded by column.
  CHECK(has(red, "in_b[col]"));
  CHECK(has(red, "kiln::gemm::SplitKSoftmax<Index, kM, kN, kBatch, kConfig.split_k, kConfig.threads>"));
  CHECK((gemm_config(g, 1).kind == kiln::GemmKind::SplitKSoftmax && gemm_config(g, 1).split_k == 2 &&
         gemm_config(g, 1).threads == 512));
  CHECK(g.plan.kernels[1].grid.x == 128);
  CHECK(has(g.plan.kernels[0].reason, "split-K into 2 slices"));

  // tf32: 8 warps of 64x32, 3 stages (110 KB), two CTAs per SM through the launch bounds.
  const auto t = generate(kCases[2], "sm_90", kiln::Precision::tf32);
  REQUIRE(t.plan.kernels.size() == 2);
  CHECK(t.plan.kernels[0].template_name == "gemm_split_k");
  CHECK((gemm_config(t, 0).wm == 64 && gemm_config(t, 0).wn == 32 && gemm_config(t, 0).stages == 3));
  CHECK(t.plan.kernels[0].min_blocks == 2);
  CHECK(has(t.sources[0].text, "__launch_bounds__(256, 2)"));
  CHECK(t.plan.kernels[0].grid.z == 2);

  // A short K (odd shape, K = 127) keeps the one-pass Gemm with row statistics + finalize.
  const auto odd = generate("linear_dropout_softmax", "odd");
  REQUIRE(odd.plan.kernels.size() == 2);
  CHECK(odd.plan.kernels[0].template_name == "gemm");
  CHECK(gemm_config(odd, 0).row_stats);
  CHECK(odd.plan.kernels[1].template_name == "gemm_softmax_finalize");
}

// [Note: four-lane epilogue] (gemm_store.cuh): SplitKSoftmax and gemm::store_fragments hold four
// adjacent columns, and a dropout whose last axis is those columns draws one Philox block for
// them; any other dropout draws per element (once for the four when its index does not move with
// the column).
TEST_CASE("a dropout over four adjacent columns of a GEMM epilogue draws one Philox block") {
  const std::string text = R"(
op adjacent {
  dims B = 128, IN = 16384, OUT = 16384
  in  x: f32[B, IN]
  in  w: f32[OUT, IN]
  in  seed: u64
  out y = softmax(dropout(matmul(x, transpose(w)), p=0.5, seed=seed), axis=1)
}
op per_row {
  dims B = 128, IN = 16384, OUT = 16384
  in  x: f32[B, IN]
  in  w: f32[OUT, IN]
  in  r: f32[B, 1]
  in  seed: u64
  out y = softmax(matmul(x, transpose(w)) * dropout(r, p=0.5, seed=seed), axis=1)
}
op odd_columns {
  dims B = 128, IN = 16384, OUT = 16382
  in  x: f32[B, IN]
  in  w: f32[OUT, IN]
  in  seed: u64
  out y = softmax(dropout(matmul(x, transpose(w)), p=0.5, seed=seed), axis=1)
}
)";
  static const kiln::TemplateLibrary templates;
  const auto spec = kiln::parse_spec(text, "lanes.kiln");
  auto count = [](const std::string& s, const std::string& what) {
    int n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  std::map<std::string, std::string> lanes;   // op -> its reduce kernel's lanes4 body
  std::vector<kiln::KernelSource> reduces;
  for (const char* op : {"adjacent", "per_row", "odd_columns"}) {
    CAPTURE(op);
    auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), {}));
    const auto plan = kiln::make_plan(bound, kiln::Target::for_arch("sm_90a"));
    const auto sources = kiln::emit(plan, templates);
    REQUIRE(plan.kernels.size() == 2);
    REQUIRE(plan.kernels[1].template_name == "gemm_split_k_softmax");
    const std::string& red = sources[1].text;
    const auto at = red.find("float4 lanes4(float4 acc, Index batch, Index row, Index col) const");
    REQUIRE(at != std::string::npos);
    lanes[op] = red.substr(at, red.find("\n  }\n", at) - at);
    reduces.push_back(sources[1]);
  }
  // One block for the four lanes, word k for lane k; no per-element draw.
  CHECK(count(lanes["adjacent"], "kiln::dropout_block(seed, static_cast<unsigned long long>((row * 16384 + col)))") == 1);
  for (int k = 0; k < 4; ++k) CHECK(count(lanes["adjacent"], fmt::format("words0.v[{}]", k)) == 1);
  CHECK(count(lanes["adjacent"], "kiln::dropout_keep(") == 0);
  // A dropout of a per-row value: the same index for every lane, drawn once, no block.
  CHECK(count(lanes["per_row"], "kiln::dropout_block(") == 0);
  CHECK(count(lanes["per_row"], "kiln::dropout_keep(") == 1);
  // Rows of 16382 columns: lane 0 of a row is not at a multiple of 4, so each lane draws its own.
  CHECK(count(lanes["odd_columns"], "kiln::dropout_block(") == 0);
  CHECK(count(lanes["odd_columns"], "kiln::dropout_keep(") == 4);
  // A GEMM whose epilogue ends in the dropout: gemm::store_fragments gives lanes4 four adjacent
  // columns of C, on the TMA engine (sm_90a) and on mma.sync tiles (sm_80).
  const auto linear = kiln::parse_spec(R"(
op linear_dropout {
  dims B = 512, IN = 512, OUT = 512
  in  x: f32[B, IN]
  in  w: f32[OUT, IN]
  in  seed: u64
  out y = dropout(matmul(x, transpose(w), precision="tf32"), p=0.5, seed=seed)
}
)", "linear.kiln");
  for (const char* arch : {"sm_90a", "sm_80"}) {
    CAPTURE(arch);
    auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(linear, "linear_dropout"), {}));
    const auto plan = kiln::make_plan(bound, kiln::Target::for_arch(arch));
    const auto sources = kiln::emit(plan, templates);
    REQUIRE(sources.size() == 1);
    CHECK(plan.kernels[0].template_name == (std::string(arch) == "sm_90a" ? "gemm_tma" : "gemm"));
    const std::string& text = sources[0].text;
    const auto at = text.find("float4 lanes4(float4 acc, Index batch, Index row, Index col) const");
    REQUIRE(at != std::string::npos);
    CHECK(count(text.substr(at), "kiln::dropout_block(seed, static_cast<unsigned long long>((row * 512 + col)))") == 1);
    CHECK(count(text.substr(at), "kiln::dropout_keep(") == 0);
    reduces.push_back(sources[0]);
  }
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("NVRTC not loadable (" << why << "): skipping the compile checks");
    return;
  }
  for (const auto& s : reduces)
    for (const char* arch : {"sm_80", "sm_90a"}) {
      if (has(s.entry, "gemm_tma") && std::string(arch) == "sm_80") continue;   // TMA: sm_90a only
      CAPTURE(s.entry);
      CAPTURE(arch);
      CHECK(!kiln::compile({s.text, s.file_name, arch, {}, &templates}).cubin.empty());
    }
}

TEST_CASE("sm_90a: k-contiguous f32 matmuls and conv2d take the wgmma templates (goldens, plan choices)") {
  // The linear seed: 128 tiles of 128x128 for 132 SMs: one K slice, then the fused split-K
  // softmax. tf32 on the TMA engine (7 stages of 32 KB); fp32 (3xTF32) on WgGemmSplitK.
  for (const auto precision : {kiln::Precision::fp32_accurate, kiln::Precision::tf32}) {
    const bool tf32 = precision == kiln::Precision::tf32;
    CAPTURE(tf32);
    const auto g = generate(kCases[2], "sm_90a", precision);
    const std::string name = std::string("linear_dropout_softmax_sm90a") + (tf32 ? "_tf32" : "");
    check_golden("plan/" + name + ".txt", g.plan.text());
    for (std::size_t k = 0; k < g.sources.size(); ++k)
      check_golden("source/" + name + "_k" + std::to_string(k) + ".cu", g.sources[k].text);
    REQUIRE(g.plan.kernels.size() == 2);
    CHECK(g.plan.kernels[0].template_name == (tf32 ? "gemm_tma" : "gemm_wgmma_split_k"));
    CHECK(g.plan.kernels[1].template_name == "gemm_split_k_softmax");
    const auto& gemm = g.sources[0].text;
    CHECK(has(gemm, tf32 ? "#include \"kiln/gemm_tma.cuh\"" : "#include \"kiln/gemm_sm90.cuh\""));
    CHECK(has(gemm, tf32 ? "kiln::sm90::TmaGemm<float," : "kiln::sm90::WgGemmSplitK<kiln::Tf32x3,"));
    CHECK((gemm_config(g, 0).stages == (tf32 ? 7 : 4) && gemm_config(g, 0).split_k == 1));
    CHECK(has(gemm, tf32 ? "__launch_bounds__(384, 1)" : "__launch_bounds__(256)"));
    CHECK(g.plan.kernels[0].block.x == (tf32 ? 384 : 256));
    CHECK(g.plan.kernels[0].grid.x == 128);
    CHECK(g.plan.kernels[0].grid.z == 1);
    // tf32: 7 stages of 32 KB + the alignment slack and barriers; 3xTF32: 4 + the lo buffer.
    CHECK(g.plan.kernels[0].shared_bytes == (tf32 ? 7 * 32768 + 1024 + 7 * 16 : 5 * 32768 + 1024));
    CHECK((gemm_config(g, 1).kind == kiln::GemmKind::SplitKSoftmax && gemm_config(g, 1).split_k == 1 &&
           gemm_config(g, 1).threads == 512));
    CHECK(has(g.plan.kernels[0].reason, tf32 ? "TMA engine" : "sm_90a wgmma"));
    if (tf32) CHECK(has(gemm, "Kernel::run(tmap_a, tmap_b, ws_splitk5, kiln::gemm::Identity{});"));
  }
  // A tf32 linear layer with a long K and few tiles: K slices on the TMA engine so one wave covers
  // the SMs, the bias and relu in the reduce kernel; M = 33 and N = 40 are tails of one tile.
  {
    const Case c{"matmul.kiln", "gemm_bias_relu", {{"B", 33}, {"IN", 4000}, {"OUT", 40}}, "splitk40"};
    const auto g = generate(c, "sm_90a", kiln::Precision::fp32_accurate);
    check_golden("plan/gemm_bias_relu_splitk_sm90a.txt", g.plan.text());
    REQUIRE(g.plan.kernels.size() == 2);
    CHECK(g.plan.kernels[0].template_name == "gemm_tma");
    CHECK(gemm_config(g, 0).split_k == 31);   // min(132 / 1 tile, 125 k tiles / 4)
    CHECK(g.plan.kernels[0].grid.x == 31);
    CHECK(g.plan.kernels[1].template_name == "gemm_split_k_reduce");
  }
  // Many tiles, tf32 on the op, both operands k-contiguous: the TMA engine, the epilogue (bias,
  // relu) in its consumers. In 3xTF32 the same layer stays on WgGemm (one split).
  {
    const auto g = generate(kCases[14], "sm_90a", kiln::Precision::fp32_accurate);
    check_golden("plan/gemm_bias_relu_sm90a.txt", g.plan.text());
    for (std::size_t k = 0; k < g.sources.size(); ++k)
      check_golden("source/gemm_bias_relu_sm90a_k" + std::to_string(k) + ".cu", g.sources[k].text);
    REQUIRE(g.plan.kernels.size() == 1);
    CHECK(g.plan.kernels[0].template_name == "gemm_tma");
    CHECK(has(g.sources[0].text, "kiln::sm90::TmaGemm<float,"));   // precision="tf32" on the op
    CHECK(has(g.sources[0].text, "struct Epilogue"));
    // In 3xTF32 a large a·b (B n-contiguous) goes through B's transposing and splitting pre-pass to
    // the engine; A (k-contiguous, aligned) is read as stored and split by the engine's consumers.
    const auto x3 = generate(kCases[6], "sm_90a", kiln::Precision::fp32_accurate);
    REQUIRE(x3.plan.kernels.size() == 2);
    CHECK((x3.plan.kernels[0].template_name == "gemm_operand_prep" && x3.plan.kernels[1].template_name == "gemm_tma"));
    CHECK((gemm_config(x3, 0).prep == 2 && kiln::gemm_x3(gemm_config(x3, 0))));
  }
  // conv2d: the TMA engine in both precisions, after two OperandPrep passes (x to NHWC, the
  // filters to [K][R*S][C]); 128 out channels x 256 (tf32) or 128 (3xTF32) pixels.
  for (const auto precision : {kiln::Precision::fp32_accurate, kiln::Precision::tf32}) {
    const bool tf32 = precision == kiln::Precision::tf32;
    CAPTURE(tf32);
    const auto g = generate(kCases[4], "sm_90a", precision);
    const std::string name = std::string("conv2d_3x3_sm90a") + (tf32 ? "_tf32" : "");
    check_golden("plan/" + name + ".txt", g.plan.text());
    for (std::size_t k = 0; k < g.sources.size(); ++k)
      check_golden("source/" + name + "_k" + std::to_string(k) + ".cu", g.sources[k].text);
    REQUIRE(g.plan.kernels.size() == 3);
    CHECK(g.plan.kernels[0].template_name == "gemm_operand_prep");
    CHECK(g.plan.kernels[1].template_name == "gemm_operand_prep");
    CHECK(g.plan.kernels[2].template_name == "conv_tma");
    // x [8][64][512 * 1024] -> [8 (x2 for the lo parts)][512 * 1024][64]: a transpose per image.
    const auto& xp = gemm_config(g, 0);
    CHECK((xp.prep == 1 && xp.m == 512 * 1024 && xp.k == 64 && xp.batch == 8 && !kiln::prep_k_contig(xp)));
    // x's rows (pixels) are 16-byte vectors: the vector transpose, 64 pixels per CTA; the filters'
    // rows of 9 taps are not.
    CHECK((kiln::prep_vec_transpose(xp) && g.plan.kernels[0].grid.x == 512 * 1024 / 64));
    CHECK(has(g.sources[0].text, "a 16-byte vector transpose"));
    const auto& wp = gemm_config(g, 1);
    CHECK((wp.prep == 2 && wp.n == 9 && wp.k == 64 && wp.batch == 128 && !kiln::prep_k_contig(wp)));
    CHECK((!kiln::prep_vec_transpose(wp) && g.plan.kernels[1].grid.x == 1));
    CHECK(has(g.sources[2].text, "#include \"kiln/conv_tma.cuh\""));
    CHECK(has(g.sources[2].text, "Kernel::run(tmap_w, tmap_x, out_y, kiln::gemm::Identity{});"));
    const auto& tc = conv_config(g, 2);
    // tf32: rows = out channels, columns = 256 pixels, 16-byte stores along y's pixel rows.
    // 3xTF32: rows = 128 pixels (x is A, split by the consumers), columns = out channels, y stored
    // transposed (conv_tma_pixel_rows).
    CHECK((tc.kind == kiln::ConvKind::Tma && tc.bm == 128 && tc.bn == (tf32 ? 256 : 128) && tc.vec_y == tf32 &&
           tc.stream && kiln::conv_tma_pixel_rows(tc) == !tf32));
    CHECK(has(g.sources[2].text, "kiln::conv_x3(kConfig), kiln::conv_tma_pixel_rows(kConfig), kConfig.vec_y"));
    CHECK(g.plan.kernels[2].grid.x == 132);   // persistent: one CTA per SM walks the tiles
    CHECK(g.plan.kernels[2].setmaxnreg);
    // The filters: a tiled 3-D map (c, tap, filter), with 3xTF32 hi and lo parts; x: a 4-D im2col
    // map (c, w, h, image) of f32, never split in memory.
    const int parts = tf32 ? 1 : 2;
    const auto& wm = tensor_map(g, 2, "tmap_w");
    CHECK((!wm.im2col && wm.dims == std::vector<std::int64_t>{64, 9, 128 * parts} && wm.box == std::vector<int>{32, 1, 128}));
    const auto& xm = tensor_map(g, 2, "tmap_x");
    CHECK((xm.im2col && xm.dims == std::vector<std::int64_t>{64, 1024, 512, 8}));
    CHECK(kiln::gemm_x3(xp) == false);
    CHECK(kiln::gemm_x3(wp) == !tf32);
    CHECK((xm.box == std::vector<int>{32, tf32 ? 256 : 128} && xm.lower == std::vector<int>{0, 0} &&
           xm.upper == std::vector<int>{-2, -2} && xm.element_strides == std::vector<int>{1, 1, 1, 1}));
    CHECK(xm.strides == std::vector<std::int64_t>{256, 1024 * 256, 512LL * 1024 * 256});
  }
  // Every parameter asymmetric: the pixel box and the traversal strides are per dim (W first).
  {
    const auto g = generate(kCases[40], "sm_90a", kiln::Precision::fp32_accurate);
    REQUIRE(g.plan.kernels.size() == 3);
    const auto& xm = tensor_map(g, 2, "tmap_x");
    CHECK(xm.dims == std::vector<std::int64_t>{40, 131, 67, 4});   // (4 images: x is never split in memory)
    CHECK(xm.strides == std::vector<std::int64_t>{160, 131 * 160, 67 * 131 * 160});   // C padded to 16 bytes
    CHECK(xm.lower == std::vector<int>{-2, -1});                 // -pad_w, -pad_h
    CHECK(xm.upper == std::vector<int>{2 - 2 * 4, 1 - 1 * 2});   // pad - dil * (filter - 1)
    CHECK(xm.element_strides == std::vector<int>{1, 1, 2, 1});   // stride_w 1, stride_h 2
    CHECK(has(g.sources[2].text, "struct Epilogue"));
  }
  // Past the TMA im2col mode's limits (a rank-4 map's corners are signed 8-bit, its element
  // strides at most 8) the engine declines and the wgmma implicit GEMM plans it; at them it fits.
  {
    // conv2d of x [N, C, H, W] with 3x3 filters and the given keyword arguments, tf32, on sm_90a.
    auto planned = [](const std::string& args, int n, int c, int h, int w) {
      const std::string text = fmt::format("op c {{\n  dims N = {}, C = {}, H = {}, W = {}, K = 128\n  in x: f32[N, C, H, W]\n"
                                           "  in w: f32[K, C, 3, 3]\n  out y = conv2d(x, w, {})\n}}\n", n, c, h, w, args);
      auto ir = kiln::check_op(kiln::parse_spec(text, "limits.kiln"), "c");
      auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, {}));
      auto target = kiln::Target::for_arch("sm_90a");
      target.precision = kiln::Precision::tf32;
      return kiln::make_plan(bound, target).kernels.back().template_name;
    };
    CHECK(planned("padding=130", 1, 64, 64, 64) == "conv_wgmma");         // lower corner -130
    CHECK(planned("padding=127", 1, 64, 64, 64) == "conv_tma");
    CHECK(planned("dilation=70", 1, 64, 512, 1024) == "conv_wgmma");      // upper corner -140
    CHECK(planned("dilation=64", 1, 64, 512, 1024) == "conv_tma");        // -128
    CHECK(planned("stride=9", 8, 64, 512, 1024) == "conv_wgmma");
    CHECK(planned("stride=8", 8, 256, 512, 1024) == "conv_tma");
    // Fewer than kConvTmaMinChannels input channels: a tap's 32-channel k tile would be mostly
    // padding (KernelBench level 1's 50, C = 3: 10.4 ms there, 2.4 ms on ConvNchw).
    CHECK(kiln::kConvTmaMinChannels == 8);
    CHECK(planned("padding=1", 64, 8, 256, 256) == "conv_tma");
    CHECK(planned("padding=1", 64, 4, 256, 256) == "conv_wgmma");   // C*R*S = 36: the wgmma gather
    CHECK(planned("padding=1", 64, 3, 256, 256) == "conv_nchw");    // 27: not a multiple of 4
  }
  // Too small to pay for the copies: the wgmma implicit GEMM with its cp.async gather.
  {
    const auto g = generate(kCases[39], "sm_90a", kiln::Precision::tf32);
    REQUIRE(g.plan.kernels.size() == 1);
    CHECK(g.plan.kernels[0].template_name == "conv_wgmma");
    CHECK(has(g.sources[0].text, "#include \"kiln/conv_sm90.cuh\""));
    const auto& wc = conv_config(g, 0);
    CHECK((wc.kind == kiln::ConvKind::Wgmma && wc.bm == 64 && wc.bn == 256 && wc.stages == 4 && wc.vec_y));
    CHECK(has(g.plan.kernels[0].reason, "sm_90a implicit GEMM on wgmma"));
  }
  // A conv whose C*R*S is not a multiple of 4 (27), grouped or depthwise: the sm_80 templates.
  CHECK(generate(kCases[5], "sm_90a", kiln::Precision::fp32_accurate).plan.kernels[0].template_name == "conv_nchw");
  CHECK(generate(kCases[22], "sm_90a", kiln::Precision::fp32_accurate).plan.kernels[0].template_name == "conv_nchw");
  CHECK(generate(kCases[20], "sm_90a", kiln::Precision::fp32_accurate).plan.kernels[0].template_name ==
        "conv_depthwise");
  // 3xTF32 not k-contiguous (Aᵀ·Bᵀ) but large: the engine after the splitting pre-passes; misaligned
  // rows, or the portable sm_90 target: the sm_80 templates.
  CHECK(generate(kCases[12], "sm_90a", kiln::Precision::fp32_accurate).plan.kernels.back().template_name == "gemm_tma");
  CHECK(generate(kCases[15], "sm_90a", kiln::Precision::fp32_accurate).plan.kernels[0].template_name != "gemm_wgmma");
  CHECK(generate(kCases[2], "sm_90", kiln::Precision::tf32).plan.kernels[0].template_name == "gemm_split_k");
  // Ieee stays on FFMA.
  CHECK(generate(kCases[2], "sm_90a", kiln::Precision::ieee).plan.kernels[0].template_name == "gemm_split_k");
}

TEST_CASE("precision: per op, per target, and ignored for 16-bit inputs") {
  // gemm_bias_relu asks for tf32 on the op: the target default does not override it.
  const auto g = generate("gemm_bias_relu", "default");
  CHECK(has(g.sources[0].text, "kiln::Tf32,"));
  CHECK(has(g.plan.kernels[0].reason, "precision tf32 (op)"));
  // relu(acc + bias) is the epilogue.
  CHECK(has(g.sources[0].text, "acc + "));
  Case square{"matmul.kiln", "matmul_square", {}, "default"};
  CHECK(has(generate(square, "sm_90", kiln::Precision::ieee).sources[0].text, "kiln::Ieee,"));
  CHECK(has(generate(square, "sm_90", kiln::Precision::tf32).sources[0].text, "kiln::Tf32,"));
  CHECK(has(generate(square, "sm_90", kiln::Precision::fp32_accurate).sources[0].text, "kiln::Tf32x3,"));
}

TEST_CASE("matmul shapes: batch broadcast, transposes, split-K, permuted operands") {
  // b [K, N] is shared by every batch: the 32 batches of 512 rows fold into one product of 16384
  // rows ([Note: folded batches]), and the epilogue splits a row into (batch, m).
  const auto batched = generate("matmul_batched", "default");
  const auto& folded = gemm_config(batched, 0);
  CHECK((folded.m == 16384 && folded.batch == 1 && folded.stride_a == 0 && folded.stride_b == 0 &&
         folded.stride_c == 0));
  CHECK(has(batched.plan.kernels[0].reason, "the batches (B) fold into M: B is shared by all of them"));
  // a^T b^T: both operands are views.
  const auto tr = generate("matmul_transposed", "default");
  REQUIRE(tr.plan.kernels.size() == 1);
  CHECK(has(tr.sources[0].text, "kiln::gemm::kColMajor, kiln::gemm::kColMajor"));
  const auto sk = generate("matmul_square", "splitk");
  // 8 64x64 tiles cannot fill 132 SMs and K is long: split-K, the reduce kernel runs the epilogue.
  REQUIRE(sk.plan.kernels.size() == 2);
  CHECK(sk.plan.kernels[0].template_name == "gemm_split_k");
  CHECK(sk.plan.kernels[1].template_name == "gemm_split_k_reduce");
  CHECK(has(sk.sources[0].text, "kiln::gemm::GemmSplitK<float, kiln::Tf32x3, Index"));
  CHECK(has(sk.sources[1].text, "Reduce::run(ws_"));
  // A linear layer with a small batch (128 x 16384 x 16384, tf32 by the op): 128 tiles of
  // 128x128 cannot give every SM two CTAs and K is long: split-K with 128x128 tiles, 2 CTAs per
  // SM, then the reduce kernel applies bias + relu.
  const Case wide{"matmul.kiln", "gemm_bias_relu", {{"B", 128}, {"IN", 16384}, {"OUT", 16384}}, "wide"};
  const auto lin = generate(wide);
  REQUIRE(lin.plan.kernels.size() == 2);
  CHECK(lin.plan.kernels[0].template_name == "gemm_split_k");
  CHECK(lin.plan.kernels[0].grid.z == 2);
  CHECK(has(lin.sources[0].text, "__launch_bounds__(256, 2)"));
  CHECK(lin.plan.kernels[1].template_name == "gemm_split_k_reduce");
  CHECK(has(lin.sources[1].text, "in_bias[col]"));
  // With a bias + relu epilogue, the reduce kernel applies it (N = 40: not a skinny product).
  const auto skb = generate(Case{"matmul.kiln", "gemm_bias_relu", {{"B", 33}, {"IN", 4000}, {"OUT", 40}}, "splitk40"});
  REQUIRE(skb.plan.kernels.size() == 2);
  CHECK(has(skb.sources[1].text, "in_bias[col]"));
  // attention_scores permutes k's batch dims too: not a transposed view, stored first.
  const auto att = generate("attention_scores", "default");
  REQUIRE(att.plan.kernels.size() == 3);
  CHECK(att.plan.kernels[0].template_name == "elementwise");
  CHECK(att.plan.kernels[1].template_name == "gemm");
  // The scale fuses into the epilogue and the softmax becomes row statistics + finalize.
  CHECK(has(att.sources[1].text, "0.125f"));
  CHECK(att.plan.kernels[2].template_name == "gemm_softmax_finalize");
}

TEST_CASE("conv1d, conv3d and transposed convs: which template, the phases, the w split") {
  // conv1d is conv2d with H = R = 1: the 2-d forward ConvShape (14 parameters), no general im2col.
  const auto c1 = generate(Case{"conv_nd.kiln", "conv1d_strided_dilated_bias", {{"N", 2}, {"L", 1000}}, "odd"});
  CHECK(has(c1.sources[0].text, "kConfig.dil_h, kConfig.dil_w, kConfig.groups>;"));
  CHECK((conv_config(c1, 0).h == 1 && conv_config(c1, 0).r == 1 && conv_config(c1, 0).stride_w == 3 &&
         conv_config(c1, 0).dil_w == 4 && !conv_config(c1, 0).transposed));
  // conv3d: the general ConvShape (depth fields), ConvNchw, groups on grid.z.
  const auto c3 = generate(Case{"conv_nd.kiln", "conv3d_asym_grouped_bf16", {}, "default"});
  CHECK(has(c3.sources[0].text, "kConfig.d, kConfig.t, kConfig.stride_d, kConfig.pad_d, kConfig.dil_d"));
  CHECK((conv_config(c3, 0).kind == kiln::ConvKind::Nchw && conv_config(c3, 0).t == 3 && conv_config(c3, 0).dout == 5));
  CHECK(c3.plan.kernels[0].grid.z == 2);
  // A transposed conv of GEMM K 32 * 3 = 96 with w stride 2: w unsplit, so one phase (1-d).
  const auto t1 = generate(Case{"conv_nd.kiln", "conv_transpose1d_strided_dilated", {{"N", 2}, {"L", 999}}, "odd"});
  CHECK((conv_config(t1, 0).transposed && !conv_config(t1, 0).phase_w));
  CHECK(t1.plan.kernels[0].grid.z == 1);
  CHECK(has(t1.sources[0].text, "kConfig.vec_w, kConfig.stream, kConfig.phase_w>;"));
  CHECK_FALSE(conv_config(t1, 0).vec_w);   // the filters are gathered
  // K 48 * 16 = 768, strides 2 x 2: split along h and w, 4 phases.
  const auto t2 = generate(Case{"conv_nd.kiln", "conv_transpose2d_opad_f16", {}, "default"});
  CHECK(conv_config(t2, 0).phase_w);
  CHECK(t2.plan.kernels[0].grid.z == 4);
  CHECK(has(t2.plan.kernels[0].reason, "one GEMM per stride phase (4 phases"));
  // Strides 2 x 2 x 2 and 4 groups: 8 phases per group.
  const auto t3 = generate(Case{"conv_nd.kiln", "conv_transpose3d_grouped", {}, "default"});
  CHECK(t3.plan.kernels[0].grid.z == 32);
  // The 16-bit tap offsets bound the filter extent, padding and stride, not W: a first build also
  // bounded W, and KernelBench 64's W = 65536 failed NVRTC (bench/results/2026-11-27-h100-run23/).
  const auto wide = generate(Case{"conv_nd.kiln", "conv_transpose1d_k3", {{"N", 1}, {"L", 70000}}, "wide"});
  CHECK(conv_config(wide, 0).wo == 70002);
}

TEST_CASE("sm_90a: a stride-1 transposed conv runs on the TMA engine as a forward conv of flipped filters") {
  // padding 1, dilation 2: forward padding 2 * (3 - 1) - 1 = 3 on both sides; the filters' pass
  // reads w [C][K][3 * 3] per filter k (channel stride K * 9, filter stride 9), taps reversed.
  for (const auto precision : {kiln::Precision::fp32_accurate, kiln::Precision::tf32}) {
    const auto g = generate(Case{"conv_nd.kiln", "conv_transpose2d_s1_dilated_bias", {}, "default"}, "sm_90a", precision);
    REQUIRE(g.plan.kernels.size() == 3);
    CHECK((gemm_config(g, 0).prep == kiln::kPrepA && !kiln::prep_reversed(gemm_config(g, 0))));
    const auto& wp = gemm_config(g, 1);
    CHECK((wp.prep == kiln::kPrepBReversed && kiln::prep_reversed(wp) && !kiln::prep_vec_transpose(wp)));
    CHECK((wp.n == 9 && wp.k == 32 && wp.batch == 48 && wp.ldb == 48 * 9 && wp.stride_b == 9 && !kiln::prep_k_contig(wp)));
    CHECK(kiln::gemm_x3(wp) == (precision == kiln::Precision::fp32_accurate));
    CHECK(has(g.plan.kernels[1].reason, "filters [32, 48, 3, 3] to [48, 9, 32]"));
    CHECK(has(g.plan.kernels[1].reason, "taps reversed"));
    CHECK(has(g.sources[1].text, "its rows in reverse order"));
    CHECK(g.plan.kernels[2].template_name == "conv_tma");
    const auto& cc = conv_config(g, 2);
    CHECK((!cc.transposed && cc.pad_h == 3 && cc.pad_w == 3 && cc.dil_h == 2 && cc.ho == 162 && cc.wo == 194));
    CHECK((cc.c == 32 && cc.k == 48 && cc.r == 3 && cc.s == 3));
    CHECK(has(g.plan.kernels[2].reason, "as the forward conv of its flipped filters (pad 3x3"));
    CHECK(has(g.sources[2].text, "in_b"));   // the bias and relu epilogue stays on the engine
  }
  // 1-d (KernelBench 64's shape at one image): padding 0 becomes 2 along w, none along h.
  const auto k64 = generate(Case{"conv_nd.kiln", "conv_transpose1d_k3", {{"N", 1}}, "one"}, "sm_90a");
  REQUIRE(k64.plan.kernels.size() == 3);
  CHECK((conv_config(k64, 2).pad_w == 2 && conv_config(k64, 2).pad_h == 0 && conv_config(k64, 2).wo == 65538));
  CHECK(has(k64.plan.kernels[2].reason, "flipped filters (pad 2;"));
  // Not rewritten, each with its reason: a stride of 2 (KernelBench 79; nor by stride phase, [Note:
  // strided transposed convs on the TMA engine]: its K of 96 keeps w whole on ConvNchw), groups.
  const auto s2 = generate(Case{"conv_nd.kiln", "conv_transpose1d_strided_dilated", {}, "default"}, "sm_90a");
  REQUIRE(s2.plan.kernels.size() == 1);
  CHECK(s2.plan.kernels[0].template_name == "conv_nchw");
  CHECK(has(s2.plan.kernels[0].reason, "not on the TMA engine as a forward conv: its stride is over 1; nor by stride "
                                       "phase: its GEMM K (96) is under 128 with a w stride over 1"));
  // With 48 channels (K 144) it takes the engine by stride phase.
  const auto s2k = generate(Case{"conv_nd.kiln", "conv_transpose1d_strided_dilated", {{"C", 48}}, "c48"}, "sm_90a");
  REQUIRE(s2k.plan.kernels.size() == 3);
  CHECK(has(s2k.plan.kernels[2].reason, "one implicit GEMM per stride phase"));
  const auto grouped = generate(Case{"conv_nd.kiln", "conv_transpose2d_grouped_dilated", {}, "default"}, "sm_90a");
  CHECK(has(grouped.plan.kernels[0].reason, "not on the TMA engine as a forward conv: it has groups; nor by stride "
                                            "phase: it takes one group (this conv has 4)"));
  // Padding past dilation x (extent - 1) would be a negative forward padding (a crop): by stride
  // phase (one phase), the map's lower corner positive (the least tap offset, 3 - 2 = 1).
  {
    const auto spec = kiln::parse_spec("op crop {\n  in x: f32[2, 32, 200, 200]\n  in w: f32[32, 48, 3, 3]\n"
                                       "  out y = conv_transpose2d(x, w, padding=3)\n}\n", "t.kiln");
    auto target = kiln::Target::for_arch("sm_90a");
    const auto plan = kiln::make_plan(std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, "crop"), {})),
                                      target);
    REQUIRE(plan.kernels.size() == 3);
    CHECK(plan.kernels[2].template_name == "conv_tma");
    for (const auto& arg : plan.kernels[2].args)
      if (arg.name == "tmap_x")
        CHECK((arg.tensor_map.lower == std::vector<int>{1, 1} && arg.tensor_map.upper == std::vector<int>{-3, -3}));
  }
  // Under the engine's flops floor: ConvNchw, with the engine's own refusal as the reason (a
  // transposed conv keeps the floor: [Note: small convs on the TMA engine]).
  const auto small = generate(Case{"conv_nd.kiln", "conv_transpose2d_s1_dilated_bias", {{"H", 9}, {"W", 11}}, "small"},
                              "sm_90a");
  REQUIRE(small.plan.kernels.size() == 1);
  CHECK(has(small.plan.kernels[0].reason, "not on the TMA engine as a forward conv: it is under the flops"));
}

TEST_CASE("sm_90a: a 1-d stride-1 tf32 conv maps NCHW x in place (no copy of x), any padding and dilation") {
  // KernelBench 67 at two images: the filters' copy, then the engine over x as stored.
  const auto k67 = generate(Case{"conv_nd.kiln", "conv1d_k3", {{"N", 2}}, "two"}, "sm_90a", kiln::Precision::tf32);
  REQUIRE(k67.plan.kernels.size() == 2);
  CHECK(gemm_config(k67, 0).prep == kiln::kPrepB);
  const auto& cc = conv_config(k67, 1);
  CHECK((cc.kind == kiln::ConvKind::Tma && cc.direct && kiln::conv_tma_pixel_rows(cc) && cc.bm == 128 && cc.bn == 128));
  CHECK(has(k67.plan.kernels[1].reason, "x read in place: [Note: NCHW x read in place]"));
  CHECK(has(k67.sources[1].text, "kConfig.stream, kConfig.direct>;"));
  for (const auto& arg : k67.plan.kernels[1].args)
    if (arg.name == "tmap_x") {
      CHECK(arg.buffer == 0);   // x itself
      CHECK_FALSE(arg.tensor_map.im2col);
      CHECK(arg.tensor_map.dims == std::vector<std::int64_t>{131072, 64, 2});
      CHECK(arg.tensor_map.strides == std::vector<std::int64_t>{131072 * 4, 64 * 131072 * 4});
      CHECK(arg.tensor_map.box == std::vector<int>{32, 32, 1});
    }
  check_golden("plan/conv1d_direct_sm90a_tf32.txt", k67.plan.text());
  // Padding 2 and dilation 3 (tap offsets 0, 3, 6 from -2; zeros past both ends), 48 channels
  // (the second k tile half zeros), 36 out channels (BN 64).
  const auto spec = kiln::parse_spec("op pd {\n  in x: f32[3, 48, 100000]\n  in w: f32[36, 48, 3]\n"
                                     "  out y = conv1d(x, w, padding=2, dilation=3)\n}\n", "t.kiln");
  auto target = kiln::Target::for_arch("sm_90a");
  target.precision = kiln::Precision::tf32;
  const auto plan = kiln::make_plan(std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, "pd"), {})),
                                    target);
  REQUIRE(plan.kernels.size() == 2);
  const auto& pd = std::get<kiln::ConvConfig>(plan.kernels[1].config);
  CHECK((pd.direct && pd.pad_w == 2 && pd.dil_w == 3 && pd.wo == 99998 && pd.bn == 64 && pd.bm == 128));
  // A tap's first pixel is off a 16-byte boundary here (-2, 1, 4 from each tile's first): a stage
  // holds one box of 32 pixels more than the tile (conv_tma_a_pad_rows), and the planner sized the
  // ring with it.
  CHECK(kiln::conv_tma_a_pad_rows(pd) == 32);
  CHECK(kiln::conv_smem(pd) == kiln::tma_gemm_smem(4, pd.bm, pd.bn, kiln::kConvTmaChannels, pd.stages, false, 32));
  CHECK(kiln::conv_smem(pd) <= 227 * 1024);
  static const kiln::TemplateLibrary templates;
  const auto sources = kiln::emit(plan, templates);
  // Not direct, each keeping the copy of x: 3xTF32 (it splits A as k-major rows), a stride of 3,
  // rows not a multiple of 16 bytes (L = 1001).
  const auto x3 = generate(Case{"conv_nd.kiln", "conv1d_k3", {{"N", 2}}, "two"}, "sm_90a");
  REQUIRE(x3.plan.kernels.size() == 3);
  CHECK_FALSE(conv_config(x3, 2).direct);
  CHECK(kiln::conv_tma_a_pad_rows(conv_config(x3, 2)) == 0);
  const auto strided = generate(Case{"conv_nd.kiln", "conv1d_strided_dilated_bias", {{"N", 2}}, "two"}, "sm_90a",
                                kiln::Precision::tf32);
  CHECK_FALSE(conv_config(strided, strided.plan.kernels.size() - 1).direct);
  const auto odd = generate(Case{"conv_nd.kiln", "conv1d_k3", {{"N", 2}, {"L", 1001}}, "odd"}, "sm_90a",
                            kiln::Precision::tf32);
  REQUIRE(odd.plan.kernels.size() == 3);
  CHECK_FALSE(conv_config(odd, 2).direct);
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("NVRTC not loadable (" << why << "): skipping the compile checks");
    return;
  }
  for (const auto* s : {&k67.sources[1], &sources[1]}) {
    CAPTURE(s->entry);
    CHECK(!kiln::compile({s->text, s->file_name, "sm_90a", {}, &templates}).cubin.empty());
  }
}

TEST_CASE("sm_90a: conv3d and stride-1 conv_transpose3d on the TMA engine, x a 5-D im2col map") {
  // conv3d, 16 channels, stride 1x2x1, padding 1x2x0, dilation 2x1x3, 3x5x3 filters: x copied to
  // NDHWC [N][D*H*W][16], the filters to [K][45][16]; x mapped (c, w, h, d, n), the corners and
  // element strides innermost (w) first, the depth's after the height's.
  for (const auto precision : {kiln::Precision::fp32_accurate, kiln::Precision::tf32}) {
    const bool tf32 = precision == kiln::Precision::tf32;
    CAPTURE(tf32);
    const auto g = generate(Case{"conv_nd.kiln", "conv3d_asym_bias_relu", {}, "default"}, "sm_90a", precision);
    check_golden(std::string("plan/conv3d_asym_bias_relu_sm90a") + (tf32 ? "_tf32" : "") + ".txt", g.plan.text());
    REQUIRE(g.plan.kernels.size() == 3);
    const auto& xp = gemm_config(g, 0);
    CHECK((xp.prep == kiln::kPrepA && xp.m == 18 * 33 * 47 && xp.k == 16));
    const auto& wp = gemm_config(g, 1);
    CHECK((wp.prep == 2 && wp.n == 45 && wp.k == 16 && wp.batch == 40));
    CHECK(has(g.plan.kernels[0].reason, "x [4, 16, 18, 33, 47] (NCHW) transposed to NHWC"));
    CHECK(has(g.plan.kernels[1].reason, "filters [40, 16, 3, 5, 3] to [40, 45, 16]"));
    CHECK(g.plan.kernels[2].template_name == "conv_tma");
    CHECK(has(g.plan.kernels[2].reason, "im2col by the TMA unit over three spatial axes"));
    const auto& cc = conv_config(g, 2);
    CHECK((cc.kind == kiln::ConvKind::Tma && cc.d == 18 && cc.t == 3 && cc.dout == 16 && cc.ho == 17 && cc.wo == 41));
    const bool rows = kiln::conv_tma_pixel_rows(cc);   // pixel tiles: 128 (3xTF32, rows) or 256 (tf32, columns)
    CHECK(kiln::conv_tma_units(cc) == kiln::launch::ceil_div(16 * 17 * 41, rows ? cc.bm : cc.bn) *
                                          kiln::launch::ceil_div(40, rows ? cc.bn : cc.bm) * 4);
    const auto& wm = tensor_map(g, 2, "tmap_w");
    CHECK(wm.dims == std::vector<std::int64_t>{16, 45, 40 * (tf32 ? 1 : 2)});
    const auto& xm = tensor_map(g, 2, "tmap_x");
    CHECK(xm.dims == std::vector<std::int64_t>{16, 47, 33, 18, 4});
    CHECK(xm.strides == std::vector<std::int64_t>{64, 47 * 64, 33 * 47 * 64, 18 * 33 * 47 * 64});
    CHECK(xm.lower == std::vector<int>{0, -2, -1});                       // -pad: w, h, d
    CHECK(xm.upper == std::vector<int>{0 - 3 * 2, 2 - 1 * 4, 1 - 2 * 2});   // pad - dil * (filter - 1)
    CHECK(xm.element_strides == std::vector<int>{1, 1, 2, 1, 1});
    CHECK(has(g.sources[2].text, "kConfig.d, kConfig.t, kConfig.stride_d, kConfig.pad_d, kConfig.dil_d"));
    CHECK(has(g.sources[2].text, "struct Epilogue"));   // bias + relu on the engine
  }
  // KernelBench 58 (stride 1, 3x5x7 filters): the forward conv of its flipped filters, padding
  // 2x4x6, every axis of the filters' taps reversed at once.
  {
    const auto g = generate(Case{"conv_nd.kiln", "conv_transpose3d_s1", {}, "default"}, "sm_90a");
    REQUIRE(g.plan.kernels.size() == 3);
    CHECK(gemm_config(g, 1).prep == kiln::kPrepBReversed);
    CHECK((gemm_config(g, 1).n == 105 && gemm_config(g, 1).ldb == 16 * 105));
    const auto& cc = conv_config(g, 2);
    CHECK((!cc.transposed && cc.pad_d == 2 && cc.pad_h == 4 && cc.pad_w == 6 && cc.dout == 18 && cc.ho == 36 &&
           cc.wo == 70));
    CHECK(has(g.plan.kernels[2].reason, "flipped filters (pad 2x4x6;"));
    CHECK(tensor_map(g, 2, "tmap_x").dims.size() == 5);
    // 16 out channels: a column tile of 32 (wgmma m64n32), not 64, and the filters' box to match.
    CHECK((kiln::conv_tma_pixel_rows(cc) && cc.bn == 32));
    CHECK(tensor_map(g, 2, "tmap_w").box == std::vector<int>{32, 1, 32});
  }
  // Past a rank-5 map's corners (signed 5-bit: -16..15) the engine declines: ConvNchw.
  auto planned = [](const std::string& args, const char* conv, const char* w) {
    const std::string text = fmt::format("op c {{\n  in x: f32[2, 32, 40, 40, 40]\n  in w: f32[{}]\n"
                                         "  out y = {}(x, w, {})\n}}\n", w, conv, args);
    auto ir = kiln::check_op(kiln::parse_spec(text, "limits.kiln"), "c");
    auto target = kiln::Target::for_arch("sm_90a");
    return kiln::make_plan(std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, {})), target).kernels.back();
  };
  CHECK(planned("padding=16", "conv3d", "64, 32, 3, 3, 3").template_name == "conv_tma");
  CHECK(planned("padding=[1, 17, 1]", "conv3d", "64, 32, 3, 3, 3").template_name == "conv_nchw");   // lower -17
  CHECK(planned("dilation=[1, 1, 8]", "conv3d", "64, 32, 3, 3, 3").template_name == "conv_tma");    // upper -16
  CHECK(planned("dilation=[9, 1, 1]", "conv3d", "64, 32, 3, 3, 3").template_name == "conv_nchw");   // upper -18
  // Over three axes the engine takes at least 16 channels (2-d: 8): ConvNchw multiplies no zero
  // channels, and at C = 8 it was faster (config/conv.h's kConvTmaMinChannels3d).
  CHECK(kiln::kConvTmaMinChannels3d == 16);
  const std::string c15 = "op c {\n  in x: f32[2, 15, 40, 40, 40]\n  in w: f32[64, 15, 3, 3, 3]\n  out y = conv3d(x, w)\n}\n";
  {
    auto target = kiln::Target::for_arch("sm_90a");
    const auto ir = kiln::check_op(kiln::parse_spec(c15, "c15.kiln"), "c");
    const auto plan = kiln::make_plan(std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, {})), target);
    CHECK(plan.kernels.back().template_name == "conv_nchw");
  }
  CHECK(planned("padding=1", "conv3d", "64, 32, 3, 3, 3").template_name == "conv_tma");
  // Transposed with a stride over 1 or output_padding: by stride phase (1 x 2 x 1 phases).
  const auto s2 = planned("stride=[1, 2, 1], output_padding=[0, 1, 0]", "conv_transpose3d", "32, 64, 3, 3, 3");
  CHECK(s2.template_name == "conv_tma");
  CHECK(has(s2.reason, "of each of 2 stride phases per image"));
  const auto op = planned("padding=1", "conv_transpose3d", "32, 64, 3, 3, 3");
  CHECK(op.template_name == "conv_tma");
}

TEST_CASE("sm_90a: a strided transposed conv runs on the TMA engine by stride phase") {
  // stride 3x2, padding 1x2, dilation 2x1, output_padding 1x0 ([Note: strided transposed convs on
  // the TMA engine] in config/conv.h): along h the phases' taps sit at offsets -1, 0, 1 (phase 0:
  // tap 2, 1: tap 1, 2: tap 0), along w at 1, 0 (phase 0: taps 0 and 2) and 1 (phase 1: tap 1).
  CHECK(kiln::conv_phase_lower(3, 3, 1, 2) == -1);
  CHECK(kiln::conv_phase_lower(3, 2, 2, 1) == 0);
  CHECK((kiln::conv_phase_first_tap(0, 3, 3, 1, 2) == 2 && kiln::conv_phase_taps(2, 3, 3, 2) == 1));
  CHECK((kiln::conv_phase_first_tap(0, 3, 2, 2, 1) == 0 && kiln::conv_phase_taps(0, 3, 2, 1) == 2));
  // KernelBench 81 (stride 5, dilation 2, 3 taps): 3 of 5 phases per axis have one tap, 2 none.
  int reached = 0;
  for (int phase = 0; phase < 5; ++phase)
    reached += kiln::conv_phase_taps(kiln::conv_phase_first_tap(phase, 3, 5, 1, 2), 3, 5, 2) == 1;
  CHECK(reached == 3);
  for (const auto precision : {kiln::Precision::fp32_accurate, kiln::Precision::tf32}) {
    const bool tf32 = precision == kiln::Precision::tf32;
    CAPTURE(tf32);
    const auto g = generate(Case{"conv_nd.kiln", "conv_transpose2d_strided_bias", {}, "default"}, "sm_90a", precision);
    check_golden(std::string("plan/conv_transpose2d_strided_bias_sm90a") + (tf32 ? "_tf32" : "") + ".txt", g.plan.text());
    REQUIRE(g.plan.kernels.size() == 3);
    // The filters w [32][48][9] to [48][9][32], not reversed (a phase picks its taps by index).
    const auto& wp = gemm_config(g, 1);
    CHECK((wp.prep == 2 && wp.n == 9 && wp.k == 32 && wp.batch == 48 && wp.ldb == 48 * 9 && wp.stride_b == 9));
    CHECK(g.plan.kernels[2].template_name == "conv_tma");
    CHECK(has(g.sources[2].text, "kiln::sm90::TmaConvPhased<Index, Shape,"));
    CHECK(has(g.sources[2].text, "struct Epilogue"));
    const auto& cc = conv_config(g, 2);
    CHECK((cc.transposed && cc.ho == 184 && cc.wo == 251 && kiln::conv_tma_pixel_rows(cc) && !cc.vec_y));
    // Units: out-channel tiles x 6 phases x pixel tiles of the 62 x 126 phase grid x 8 images.
    CHECK(kiln::conv_tma_units(cc) == kiln::launch::ceil_div(48, cc.bn) * 6 * kiln::launch::ceil_div(62 * 126, cc.bm) * 8);
    const auto& xm = tensor_map(g, 2, "tmap_x");
    CHECK(xm.dims == std::vector<std::int64_t>{32, 127, 61, 8});
    CHECK(xm.lower == std::vector<int>{0, -1});
    CHECK(xm.upper == std::vector<int>{126 + 0 - 127, 62 - 1 - 61});   // the phase grid, from the lower corner
    CHECK(xm.element_strides == std::vector<int>{1, 1, 1, 1});
    CHECK(has(g.plan.kernels[2].reason, "one implicit GEMM per stride phase"));
    CHECK(has(g.plan.kernels[2].reason, "7812 pixels of each of 6 stride phases per image"));
  }
  // The CPU reference's work estimate of a transposed conv is its multiply-adds: each input
  // element meets K (48) times the taps (9), not each output every tap (6x more at stride 3x2).
  {
    const auto spec = kiln::parse_spec("op t {\n  in x: f32[2, 32, 61, 127]\n  in w: f32[32, 48, 3, 3]\n"
                                       "  out y = conv_transpose2d(x, w, stride=[3, 2])\n}\n", "t.kiln");
    const auto bound = kiln::ir::bind(kiln::check_op(spec, "t"), {});
    CHECK(kiln::ref::work_estimate(bound) >= 2.0 * 32 * 61 * 127 * 48 * 9);
    CHECK(kiln::ref::work_estimate(bound) < 1.1 * (2.0 * 32 * 61 * 127 * 48 * 9));
  }
  // On sm_90 (no TMA engine) ConvNchw, saying why neither engine route was taken.
  const auto g90 = generate(Case{"conv_nd.kiln", "conv_transpose2d_strided_bias", {}, "default"}, "sm_90");
  CHECK(g90.plan.kernels[0].template_name == "conv_nchw");
  CHECK(has(g90.plan.kernels[0].reason, "its stride is over 1; nor by stride phase: it runs on sm_90a only"));
}

TEST_CASE("conv2d: implicit GEMM, depthwise, grouped, and NHWC's limit") {
  const auto g = generate("conv2d_3x3", "default");
  REQUIRE(g.plan.kernels.size() == 1);
  // The seed conv is an implicit GEMM over NCHW with fp32-level accuracy.
  CHECK(has(g.sources[0].text, "kiln::conv::ConvNchw<float, kiln::Tf32x3, float, Index, Shape"));
  const kiln::ConvConfig& cc = conv_config(g, 0);
  CHECK((cc.n == 8 && cc.c == 64 && cc.h == 512 && cc.w == 1024 && cc.k == 128 && cc.r == 3 && cc.s == 3));
  CHECK((cc.stride_h == 1 && cc.stride_w == 1 && cc.pad_h == 0 && cc.pad_w == 0 && cc.dil_h == 1 && cc.dil_w == 1 &&
         cc.groups == 1));
  // y (2.1 GB) is much larger than L2: streaming stores.
  CHECK(cc.stream);
  // groups == C: the direct depthwise kernel (tensor cores do not pay).
  const auto dw = generate("conv2d_depthwise", "default");
  CHECK(has(dw.sources[0].text, "kiln::conv::DepthwiseDirect<float, float, Index, Shape, kConfig.nhwc, kConfig.threads>"));
  CHECK((conv_config(dw, 0).kind == kiln::ConvKind::Depthwise && !conv_config(dw, 0).nhwc &&
         conv_config(dw, 0).threads == 256));
  const auto grouped = generate("conv2d_dilated_grouped", "default");
  CHECK(grouped.plan.kernels[0].grid.z == 4);
  // NHWC (groups != C) has a template only on sm_90a: elsewhere a clear error, not wrong code.
  Case nhwc{"conv.kiln", "conv2d_nhwc_bias_relu", {}, "default"};
  CHECK_THROWS_WITH_AS(generate(nhwc), doctest::Contains("NHWC runs on the sm_90a TMA engine only, and it runs on sm_90a only (this is sm_90)"),
                       kiln::UnsupportedError);
  CHECK_THROWS_WITH_AS(generate(nhwc, "sm_90a", kiln::Precision::ieee),
                       doctest::Contains("and it computes in tf32 or 3xTF32 (fp32-accurate), not ieee"), kiln::UnsupportedError);
  // Each reason the engine refuses a conv is the one the message gives (here: too few channels).
  Case few_channels{"conv.kiln", "conv2d_nhwc_bias_relu", {{"C", 7}, {"W", 7}}, "few_channels"};
  CHECK_THROWS_WITH_AS(generate(few_channels, "sm_90a"),
                       doctest::Contains("and it takes at least 8 input channels (this conv has 7)"), kiln::UnsupportedError);
  // On sm_90a: the TMA engine, rows = the 32 x 56 x 56 output pixels, columns = the 64 out
  // channels. x is read in place (its rows of 64 channels are 16-byte multiples; 3xTF32 splits it
  // in the engine's consumers) and only the filters are copied.
  for (const auto precision : {kiln::Precision::tf32, kiln::Precision::fp32_accurate}) {
    const bool tf32 = precision == kiln::Precision::tf32;
    CAPTURE(tf32);
    const auto g = generate(nhwc, "sm_90a", precision);
    check_golden(std::string("plan/conv2d_nhwc_bias_relu_sm90a") + (tf32 ? "_tf32" : "") + ".txt", g.plan.text());
    REQUIRE(g.plan.kernels.size() == 2u);
    const std::size_t e = g.plan.kernels.size() - 1;
    CHECK(g.plan.kernels[e].template_name == "conv_tma");
    CHECK(has(g.sources[e].text, "kiln::sm90::TmaConvNhwc<Index, Shape,"));
    CHECK(has(g.sources[e].text, "struct Epilogue"));   // bias + relu
    const auto& c = conv_config(g, e);
    CHECK((c.nhwc && c.bm == 128 && c.bn == 64 && c.vec_y));
    const auto& xm = tensor_map(g, e, "tmap_x");
    CHECK((xm.im2col && xm.box == std::vector<int>{32, 128} && xm.lower == std::vector<int>{-1, -1} &&
           xm.upper == std::vector<int>{-1, -1}));
    CHECK(xm.dims == std::vector<std::int64_t>{64, 56, 56, 32});
    // In place, the map is over the input x itself (buffer #0).
    for (const auto& arg : g.plan.kernels[e].args)
      if (arg.name == "tmap_x") CHECK(arg.buffer == 0);
    CHECK(gemm_config(g, 0).prep == 2);   // the one pass: the filters
  }
}

TEST_CASE("every generated contraction unit compiles with NVRTC for sm_80, sm_90 and sm_90a") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("NVRTC not loadable (" << why << "): skipping the compile checks");
    return;
  }
  static const kiln::TemplateLibrary templates;
  std::vector<kiln::CompileRequest> reqs;
  std::vector<std::string> names;
  auto add = [&](const Case& c, const char* arch, kiln::Precision precision, const char* label) {
    const auto g = generate(c, arch, precision);
    for (const auto& s : g.sources) {
      reqs.push_back({s.text, s.file_name, arch, {}, &templates});
      names.push_back(std::string(arch) + " " + c.op + " " + c.tag + label + " " + s.entry);
    }
  };
  for (const char* arch : {"sm_80", "sm_90", "sm_90a"}) {
    for (const auto& c : kCases) add(c, arch, kiln::Precision::fp32_accurate, "");
    // The seed GEMMs also plan differently in tf32 (two CTAs per SM on sm_90).
    add(kCases[0], arch, kiln::Precision::tf32, " tf32");
    add(kCases[2], arch, kiln::Precision::tf32, " tf32");
  }
  // NHWC conv2d has a template on sm_90a only (TmaConvNhwc): x in place (tf32) or copied (3xTF32).
  const Case nhwc{"conv.kiln", "conv2d_nhwc_bias_relu", {}, "default"};
  add(nhwc, "sm_90a", kiln::Precision::tf32, " tf32");
  add(nhwc, "sm_90a", kiln::Precision::fp32_accurate, "");
  // The conv seed in tf32 (TmaConv with 128x256 tiles; 3xTF32 takes 128x128 above).
  add(kCases[4], "sm_90a", kiln::Precision::tf32, " tf32");
  // TmaConv over three spatial axes (a 5-D im2col map): conv3d, and a stride-1 conv_transpose3d;
  // TmaConvPhased: strided transposed convs in 2-d and 3-d.
  for (const char* op : {"conv3d_asym_bias_relu", "conv_transpose3d_s1", "conv_transpose2d_strided_bias",
                         "conv_transpose3d_dilated"}) {
    add(Case{"conv_nd.kiln", op, {}, "default"}, "sm_90a", kiln::Precision::tf32, " tf32");
    add(Case{"conv_nd.kiln", op, {}, "default"}, "sm_90a", kiln::Precision::fp32_accurate, "");
  }
  const auto results = kiln::compile_all(reqs, 2);
  for (std::size_t i = 0; i < results.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(!results[i].cubin.empty());
    for (const auto& r : results[i].resources) {
      // Spills would make a tile choice wrong for the architecture; reported, not fatal: the
      // sm_80 dilated grouped conv at an odd shape spills 8 bytes inside the template.
      WARN(r.spill_stores <= 0);
      MESSAGE(names[i] << ": " << r.registers << " registers, " << r.spill_stores << " bytes spilled");
    }
  }
}

TEST_CASE("16-bit matmul and conv: tensor cores with f32 accumulation, 16-bit stores, compile with NVRTC") {
  const char* text = R"(op mm_bf16 {
  dims B = 4, M = 33, N = 64, K = 40
  in  a: bf16[B, M, K]
  in  b: bf16[K, N]
  out c = matmul(a, b)
}
op mm_bf16_t {
  dims B = 4, M = 33, N = 64, K = 40
  in  a: bf16[B, K, M]
  in  b: bf16[K, N]
  out c = matmul(transpose(a), b) * 2
}
op conv_f16 {
  dims N = 2, C = 16, H = 9, W = 12, K = 24
  in  x: f16[N, C, H, W]
  in  w: f16[K, C, 3, 3]
  out y = conv2d(x, w, padding=1)
}
)";
  static const kiln::TemplateLibrary templates;
  const auto spec = kiln::parse_spec(text, "t.kiln");
  std::vector<kiln::KernelSource> all;
  for (const char* op : {"mm_bf16", "mm_bf16_t", "conv_f16"}) {
    auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), {}));
    const auto plan = kiln::make_plan(bound, kiln::Target::for_arch("sm_80"));
    auto sources = kiln::emit(plan, templates);
    REQUIRE(sources.size() == 1);
    all.push_back(sources[0]);
  }
  // bf16 operands, bf16 output; precision is meaningless for 16-bit inputs.
  CHECK(has(all[0].text, "kiln::gemm::Gemm<__nv_bfloat16, kiln::Tf32, __nv_bfloat16, Index"));
  // b is shared by the 4 batches: they fold into M, 4 x 33 rows ([Note: folded batches]).
  CHECK(has(all[0].text, "/*m=*/132, /*n=*/64, /*k=*/40, /*batch=*/1,"));
  // A column-major a does not fold (a batch's rows are not one run): b's batch stride is 0.
  CHECK(has(all[1].text, "/*batch=*/4,"));
  CHECK(has(all[1].text, "/*stride_a=*/1320, /*stride_b=*/0, /*stride_c=*/2112,"));
  CHECK(has(all[2].text, "kiln::conv::ConvNchw<__half, kiln::Tf32, __half, Index, Shape"));
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("NVRTC not loadable (" << why << "): skipping the compile checks");
    return;
  }
  for (const auto& s : all)
    for (const char* arch : {"sm_80", "sm_90"}) {
      CAPTURE(s.entry);
      CAPTURE(arch);
      CHECK(!kiln::compile({s.text, s.file_name, arch, {}, &templates}).cubin.empty());
    }
}

TEST_CASE("sm_90a: the TMA engine takes f16 / bf16 in every layout and k-contiguous tf32 (tiles, maps, launch)") {
  // 4096^3 bf16 aᵀ·b: 128x256 tiles (512 of them, two per SM and more), two consumer warpgroups
  // + the producer, 4 stages of 48 KB, persistent CTAs, both operands m- / n-contiguous.
  {
    const auto g = generate(kCases[25], "sm_90a");
    check_golden("plan/mm_bf16_tn_4096_sm90a.txt", g.plan.text());
    check_golden("source/mm_bf16_tn_4096_sm90a_k0.cu", g.sources[0].text);
    REQUIRE(g.plan.kernels.size() == 1);
    const auto& kn = g.plan.kernels[0];
    CHECK(kn.template_name == "gemm_tma");
    const auto& c = gemm_config(g, 0);
    CHECK((c.kind == kiln::GemmKind::Tma && c.bm == 128 && c.bn == 256 && c.bk == 64 && c.stages == 4 &&
           c.group_m == 8));
    CHECK((kn.block.x == 384 && kn.grid.x == 132 && kn.grid.y == 1));
    CHECK(kn.shared_bytes == 4 * (128 + 256) * 64 * 2 + 1024 + 4 * 16);
    CHECK(has(g.sources[0].text, "__launch_bounds__(384, 1)"));   // setmaxnreg needs the cap
    CHECK(has(g.sources[0].text, "const __grid_constant__ kiln::TensorMap tmap_a"));
    CHECK(has(g.sources[0].text, "Kernel::run(tmap_a, tmap_b, out_c, kiln::gemm::Identity{});"));
    // A is [K, M] (m contiguous): dims {M, K, 1}, a box of 64 m x 64 k; B is [K, N]: {N, K, 1}.
    std::vector<const kiln::KernelArg*> maps;
    for (const auto& a : kn.args)
      if (a.kind == kiln::KernelArg::Kind::TensorMap) maps.push_back(&a);
    REQUIRE(maps.size() == 2);
    CHECK(maps[0]->name == "tmap_a");
    CHECK(maps[0]->tensor_map.dims == std::vector<std::int64_t>{4096, 4096, 1});
    CHECK(maps[0]->tensor_map.strides == std::vector<std::int64_t>{8192, 4096LL * 8192});
    CHECK(maps[0]->tensor_map.box == std::vector<int>{64, 64, 1});
    CHECK(maps[1]->tensor_map.box == std::vector<int>{64, 64, 1});
    CHECK(maps[0]->tensor_map.swizzle == 128);
  }
  // k-contiguous A (row-major), n-contiguous B: A's box is 64 k x BM rows; a small problem takes
  // 64x128 tiles split between two consumers of m64n64, BK 128 (two boxes of k per A tile) and
  // as many stages as fit (4).
  {
    const auto g = generate(kCases[24], "sm_90a");
    const auto& c = gemm_config(g, 0);
    CHECK((c.kind == kiln::GemmKind::Tma && c.bm == 64 && c.bn == 128 && c.bk == 128 && c.stages == 4));
    CHECK(c.consumers_n == 2);
    CHECK(g.plan.kernels[0].block.x == 384);
    CHECK(has(g.plan.kernels[0].reason, "64x128x128 tiles (2 consumer warpgroups of m64n64 + a TMA producer"));
    CHECK(g.plan.kernels[0].args.back().tensor_map.box == std::vector<int>{64, 128, 1});   // B: 64 n x 128 k
    bool a_box = false;
    for (const auto& a : g.plan.kernels[0].args)
      if (a.kind == kiln::KernelArg::Kind::TensorMap && a.name == "tmap_a")
        a_box = a.tensor_map.box == std::vector<int>{64, 64, 1} && a.tensor_map.dims[0] == 1000;
    CHECK(a_box);
  }
  // Batched with a broadcast B: the batches fold into A's rows ([Note: folded batches]), so both
  // maps have one batch.
  {
    const auto g = generate(kCases[27], "sm_90a");
    REQUIRE(g.plan.kernels[0].template_name == "gemm_tma");
    std::map<std::string, std::vector<std::int64_t>> dims;
    for (const auto& a : g.plan.kernels[0].args)
      if (a.kind == kiln::KernelArg::Kind::TensorMap) dims[a.name] = a.tensor_map.dims;
    CHECK(dims["tmap_a"] == std::vector<std::int64_t>{256, 4 * 512, 1});
    CHECK(dims["tmap_b"] == std::vector<std::int64_t>{512, 256, 1});
  }
  // An epilogue (bias, gelu) in the consumers; tf32 with both operands k-contiguous: 32-wide k tiles.
  CHECK(has(generate(kCases[28], "sm_90a").sources[0].text, "struct Epilogue"));
  CHECK(gemm_config(generate(kCases[29], "sm_90a", kiln::Precision::tf32), 0).bk == 32);
  // tf32 a·b: B (n-contiguous) goes through OperandPrep into a k-contiguous workspace, which the
  // engine maps; aᵀ·b batched: both operands, each batch (the first pre-pass takes the anchor's
  // slot, the engine comes last and stores).
  {
    const auto g = generate(kCases[32], "sm_90a");
    check_golden("plan/mm_tf32_sm90a.txt", g.plan.text());
    for (std::size_t k = 0; k < g.sources.size(); ++k)
      check_golden("source/mm_tf32_sm90a_k" + std::to_string(k) + ".cu", g.sources[k].text);
    REQUIRE(g.plan.kernels.size() == 2);
    CHECK(g.plan.kernels[0].template_name == "gemm_operand_prep");
    CHECK(g.plan.kernels[0].stores.empty());
    CHECK((gemm_config(g, 0).prep == 2 && g.plan.kernels[0].grid.x == 32 && g.plan.kernels[0].grid.y == 32));
    CHECK(g.plan.kernels[1].template_name == "gemm_tma");
    CHECK(g.plan.kernels[1].stores.size() == 1);
    const auto& mc = gemm_config(g, 1);
    CHECK((mc.layout_b == kiln::GemmLayout::ColMajor && mc.ldb == 1000 && mc.bk == 32));
    const auto& map_b = g.plan.kernels[1].args.back();
    CHECK(map_b.name == "tmap_b");
    CHECK(g.plan.buffers[static_cast<std::size_t>(map_b.buffer)].kind == kiln::BufferKind::Workspace);
    CHECK(map_b.tensor_map.dims == std::vector<std::int64_t>{1000, 1003, 1});
    CHECK(has(g.sources[0].text, "Prep::run(in_b, ws_kmajor_b"));
    // tf32 a·b with 16-byte rows: the engine computes Cᵀ = Bᵀ·Aᵀ, one kernel, no pre-pass. Its A
    // is the op's B (m-major: through registers), its B the op's A (k-major); the epilogue's bias
    // is still indexed by the op's column. B is shared by the 2 batches: they fold into the op's M
    // (2 x 1000 rows: the engine's N).
    {
      const auto w = generate(kCases[41], "sm_90a");
      check_golden("plan/mm_tf32_bias_batched_sm90a.txt", w.plan.text());
      check_golden("source/mm_tf32_bias_batched_sm90a_k0.cu", w.sources[0].text);
      REQUIRE(w.plan.kernels.size() == 1);
      const auto& c = gemm_config(w, 0);
      CHECK((c.kind == kiln::GemmKind::Tma && c.swap_ab && c.m == 520 && c.n == 2000 && c.k == 264 && c.batch == 1));
      CHECK((c.layout_a == kiln::GemmLayout::ColMajor && c.layout_b == kiln::GemmLayout::ColMajor));
      CHECK((c.lda == 520 && c.ldb == 264 && c.stride_a == 0 && c.stride_b == 0 && c.ldc == 520));
      CHECK(has(w.plan.kernels[0].reason, "as Cᵀ = Bᵀ·Aᵀ, 520x2000 (Bᵀ m-contiguous, through registers"));
      // tmap_a maps b ([K, N]: dims {N, K, 1}, a box of 32 n x 32 k); tmap_b maps a ({K, B x M, 1}).
      CHECK(tensor_map(w, 0, "tmap_a").dims == std::vector<std::int64_t>{520, 264, 1});
      CHECK(tensor_map(w, 0, "tmap_a").box == std::vector<int>{32, 32, 1});
      CHECK(tensor_map(w, 0, "tmap_b").dims == std::vector<std::int64_t>{264, 2000, 1});
      CHECK(has(w.sources[0].text, "kConfig.stream_c, kConfig.swap_ab, kConfig.cluster_m, kConfig.consumers_n>"));
      CHECK(has(w.sources[0].text, "bias"));
      // split-K: the slices hold the op's C ([1, 512, 512] per slice), the reduce is unswapped
      const auto l = generate(kCases[42], "sm_90a");
      REQUIRE(l.plan.kernels.size() == 2);
      CHECK((gemm_config(l, 0).swap_ab && gemm_config(l, 0).split_k > 1));
      CHECK((gemm_config(l, 1).kind == kiln::GemmKind::SplitKReduce && !gemm_config(l, 1).swap_ab &&
             gemm_config(l, 1).m == 512 && gemm_config(l, 1).n == 512));
      // aᵀ·bᵀ: no swap, A through registers, no pre-pass
      const auto t = generate(kCases[43], "sm_90a");
      REQUIRE(t.plan.kernels.size() == 1);
      CHECK((!gemm_config(t, 0).swap_ab && gemm_config(t, 0).layout_a == kiln::GemmLayout::ColMajor));
      static_assert(kiln::swap_operands(kiln::swap_operands(kiln::GemmConfig{})) == kiln::GemmConfig{});
    }
    // aᵀ·b batched: tf32 takes the m-major A through registers as stored; only B is transposed
    const auto t = generate(kCases[33], "sm_90a");
    REQUIRE(t.plan.kernels.size() == 2);
    CHECK((gemm_config(t, 0).prep == 2 && t.plan.kernels[0].grid.z == 3));
    CHECK(t.plan.kernels[1].template_name == "gemm_tma");
    CHECK((!gemm_config(t, 1).swap_ab && gemm_config(t, 1).layout_a == kiln::GemmLayout::ColMajor));
    CHECK(has(t.plan.kernels[1].reason, "A m-contiguous, through registers"));
  }
  // 3xTF32 on the engine: B through OperandPrep, split into tf32 hi and lo parts ([2][rows][K],
  // mapped as 2 batches), A (k-contiguous, aligned) as stored, split by the consumers in registers;
  // 128x128 tiles with 4 stages of A, B hi and B lo tiles (128x256 would leave two), three
  // products per k step. A batch of 512 stays on WgGemm.
  {
    const auto g = generate(kCases[31], "sm_90a", kiln::Precision::fp32_accurate);
    check_golden("plan/linear_bias_x3_sm90a.txt", g.plan.text());
    for (std::size_t k = 0; k < g.sources.size(); ++k)
      check_golden("source/linear_bias_x3_sm90a_k" + std::to_string(k) + ".cu", g.sources[k].text);
    REQUIRE(g.plan.kernels.size() == 2);
    CHECK(g.plan.kernels[0].template_name == "gemm_operand_prep");
    CHECK((gemm_config(g, 0).prep == 2 && kiln::gemm_x3(gemm_config(g, 0))));
    CHECK(has(g.plan.kernels[0].reason, "split into hi and lo parts"));
    CHECK(has(g.sources[0].text, "kiln::gemm_x3(kConfig),\n    kiln::prep_vec_transpose(kConfig), kiln::prep_reversed(kConfig), kConfig.threads>;"));
    const auto& c = gemm_config(g, 1);
    CHECK((c.kind == kiln::GemmKind::Tma && kiln::gemm_x3(c) && c.bm == 128 && c.bn == 128 && c.stages == 4));
    CHECK(g.plan.kernels[1].shared_bytes == 4 * (128 + 2 * 128) * 32 * 4 + 1024 + 4 * 16);
    for (const auto& a : g.plan.kernels[1].args)
      if (a.kind == kiln::KernelArg::Kind::TensorMap)   // A as stored; B hi, then lo
        CHECK(a.tensor_map.dims == std::vector<std::int64_t>{4096, 4096, a.name == "tmap_a" ? 1 : 2});
    for (const auto& b : g.plan.buffers)
      if (b.kind == kiln::BufferKind::Workspace) CHECK(b.bytes == 2LL * 4096 * 4096 * 4);
    CHECK(generate(kCases[38], "sm_90a", kiln::Precision::fp32_accurate).plan.kernels[0].template_name == "gemm_wgmma");
    // tf32 on the same layer: no pre-pass (k-contiguous, aligned), one product per k step.
    CHECK(generate(kCases[31], "sm_90a", kiln::Precision::tf32).plan.kernels.size() == 1);
  }
  // A long K with few tiles: (slice, tile) units on the engine, partial sums to a workspace
  // [splits][batch][M][N], and the split-K reduce stores through the epilogue.
  {
    const auto g = generate(kCases[34], "sm_90a");
    check_golden("plan/mm_bf16_longk_sm90a.txt", g.plan.text());
    check_golden("source/mm_bf16_longk_sm90a_k0.cu", g.sources[0].text);
    REQUIRE(g.plan.kernels.size() == 2);
    const auto& c = gemm_config(g, 0);
    // 8 tiles of 128x256, 16 slices of 256 k tiles each: 128 units for 132 SMs.
    CHECK((c.kind == kiln::GemmKind::Tma && c.bm == 128 && c.bn == 256 && c.split_k == 16 && !c.stream_c));
    CHECK(g.plan.kernels[0].grid.x == 128);
    CHECK(g.plan.kernels[0].stores.empty());
    CHECK(has(g.sources[0].text, "Kernel::run(tmap_a, tmap_b, ws_splitk2, kiln::gemm::Identity{});"));
    CHECK(g.plan.kernels[1].template_name == "gemm_split_k_reduce");
    CHECK(g.plan.kernels[1].stores.size() == 1);
    CHECK(gemm_config(g, 1).split_k == 16);
    const auto t = generate(kCases[35], "sm_90a", kiln::Precision::tf32);
    REQUIRE(t.plan.kernels.size() == 3);   // B's pre-pass (A goes through registers), the engine, the reduce
    CHECK((t.plan.kernels[1].template_name == "gemm_tma" && t.plan.kernels[2].template_name == "gemm_split_k_reduce"));
    const auto& tc = gemm_config(t, 1);
    // 2 batches x 1 x 2 tiles of 128x256, 33 slices of 7 or 8 k tiles of 32: 132 units
    CHECK((tc.bn == 256 && tc.split_k == 33 && tc.batch == 2 && t.plan.kernels[1].grid.x == 132));
    CHECK(t.plan.kernels[2].stores.size() == 1);
    // A short K (1000) with few tiles keeps one slice.
    CHECK(gemm_config(generate(kCases[24], "sm_90a"), 0).split_k == 1);
  }
  // Rows that are not a multiple of 16 bytes in a large product: each such operand is copied k-major
  // by OperandPrep into a workspace whose rows are padded to 16 bytes (prep_ldw), and the engine
  // maps the workspace with the true K (TMA zero-fills past it; the pad columns are never read).
  {
    auto maps_of = [](const kiln::PlannedKernel& kn) {
      std::map<std::string, kiln::TensorMapSpec> maps;
      for (const auto& a : kn.args)
        if (a.kind == kiln::KernelArg::Kind::TensorMap) maps[a.name] = a.tensor_map;
      return maps;
    };
    // 6007x3331x4799 bf16 a·b: A [M, K] rows of 9598 bytes (a pitched copy, 32 rows x 32 16-byte
    // vectors per CTA), B [K, N] rows of 6662 bytes (transposed in 32 x 32 tiles); both to rows of
    // 4800 bf16 (9600 bytes). The engine then reads both k-major: 128x256 tiles, 4 stages.
    const auto g = generate(kCases[36], "sm_90a");
    check_golden("plan/mm_bf16_pad_sm90a.txt", g.plan.text());
    for (std::size_t k = 0; k < 2; ++k)
      check_golden("source/mm_bf16_pad_sm90a_k" + std::to_string(k) + ".cu", g.sources[k].text);
    REQUIRE(g.plan.kernels.size() == 3);
    CHECK((g.plan.kernels[0].template_name == "gemm_operand_prep" &&
           g.plan.kernels[1].template_name == "gemm_operand_prep" && g.plan.kernels[2].template_name == "gemm_tma"));
    const auto& pa = gemm_config(g, 0);
    const auto& pb = gemm_config(g, 1);
    CHECK((pa.kind == kiln::GemmKind::OperandPrep && pa.prep == 1 && kiln::prep_k_contig(pa) &&
           kiln::prep_ldw(pa) == 4800 && pa.threads == 256));
    CHECK((pb.kind == kiln::GemmKind::OperandPrep && pb.prep == 2 && !kiln::prep_k_contig(pb) &&
           kiln::prep_ldw(pb) == 4800));
    CHECK((g.plan.kernels[0].grid.x == 188 && g.plan.kernels[0].grid.y == 19 && g.plan.kernels[0].grid.z == 1));
    CHECK((g.plan.kernels[1].grid.x == 105 && g.plan.kernels[1].grid.y == 150 && g.plan.kernels[1].grid.z == 1));
    CHECK(has(g.sources[0].text, "kiln::gemm::OperandPrep<__nv_bfloat16, Index, kiln::prep_rows(kConfig), kK,"));
    CHECK(has(g.sources[0].text, "Prep::run(in_a, ws_kmajor_a2);"));
    CHECK(has(g.sources[1].text, "Prep::run(in_b, ws_kmajor_b2);"));
    // The reasons say why each copy exists.
    CHECK(has(g.plan.kernels[0].reason, "copied to k-contiguous rows of 9598 bytes padded to 9600"));
    CHECK(has(g.plan.kernels[1].reason, "n contiguous, rows of 6662 bytes) transposed"));
    CHECK(has(g.plan.kernels[1].reason, "a tensor map's strides must be multiples of 16 bytes"));
    CHECK(workspace_bytes(g, "kmajor_a") == 6007LL * 4800 * 2);
    CHECK(workspace_bytes(g, "kmajor_b") == 3331LL * 4800 * 2);
    const auto& mc = gemm_config(g, 2);
    CHECK((mc.kind == kiln::GemmKind::Tma && mc.layout_a == kiln::GemmLayout::RowMajor &&
           mc.layout_b == kiln::GemmLayout::ColMajor && mc.lda == 4800 && mc.ldb == 4800 && mc.bm == 128 &&
           mc.bn == 256 && mc.bk == 64 && mc.stages == 4 && mc.split_k == 1));
    CHECK(g.plan.kernels[2].stores.size() == 1);
    auto maps = maps_of(g.plan.kernels[2]);
    CHECK(maps["tmap_a"].dims == std::vector<std::int64_t>{4799, 6007, 1});
    CHECK(maps["tmap_a"].strides == std::vector<std::int64_t>{4800 * 2, 6007LL * 4800 * 2});
    CHECK(maps["tmap_b"].dims == std::vector<std::int64_t>{4799, 3331, 1});
    CHECK(maps["tmap_b"].strides == std::vector<std::int64_t>{4800 * 2, 3331LL * 4800 * 2});
    CHECK((mc.cluster_m == 1 && g.plan.kernels[2].cluster == 1));   // 658 tiles: more than a wave
    CHECK(maps["tmap_b"].box == std::vector<int>{64, 256, 1});

    // tf32 a·bᵀ with K = 999: both operands k-contiguous but rows of 3996 bytes: two pitched copies
    // to rows of 1000 f32 (32 rows x 32 vectors of 4 per CTA), then the engine with 32-wide k tiles.
    const auto t = generate(kCases[37], "sm_90a");
    check_golden("plan/mm_tf32_nt_pad_sm90a.txt", t.plan.text());
    REQUIRE(t.plan.kernels.size() == 3);
    for (std::size_t k = 0; k < 2; ++k) {
      const auto& pc = gemm_config(t, k);
      CHECK((pc.kind == kiln::GemmKind::OperandPrep && pc.prep == int(k) + 1 && kiln::prep_k_contig(pc) &&
             kiln::prep_ldw(pc) == 1000));
      CHECK((t.plan.kernels[k].grid.x == 32 && t.plan.kernels[k].grid.y == 8 && t.plan.kernels[k].grid.z == 1));
      CHECK(has(t.sources[k].text, "kiln::gemm::OperandPrep<float, Index,"));
      CHECK(has(t.plan.kernels[k].reason, "rows of 3996 bytes padded to 4000"));
    }
    CHECK(workspace_bytes(t, "kmajor_a") == 1000LL * 1000 * 4);
    CHECK(workspace_bytes(t, "kmajor_b") == 1000LL * 1000 * 4);
    const auto& tc = gemm_config(t, 2);
    CHECK((tc.kind == kiln::GemmKind::Tma && tc.lda == 1000 && tc.ldb == 1000 && tc.bk == 32));
    maps = maps_of(t.plan.kernels[2]);
    CHECK(maps["tmap_a"].dims == std::vector<std::int64_t>{999, 1000, 1});
    CHECK(maps["tmap_a"].strides == std::vector<std::int64_t>{1000 * 4, 1000LL * 1000 * 4});
    CHECK(maps["tmap_b"].strides == std::vector<std::int64_t>{1000 * 4, 1000LL * 1000 * 4});

    // Batched aᵀ·b in tf32 with K = 999: B transposed into padded rows, each batch of the workspace
    // rows x ldw apart; A (m-major, rows of 4000 bytes) goes through registers as stored.
    const Case batched{"gemm.kiln", "mm_tf32_tn_batched", {{"B", 3}, {"M", 1000}, {"N", 520}, {"K", 999}}, "pad"};
    const auto tb = generate(batched, "sm_90a");
    REQUIRE(tb.plan.kernels.size() == 2);
    CHECK((!kiln::prep_k_contig(gemm_config(tb, 0)) && tb.plan.kernels[0].grid.z == 3 &&
           tb.plan.kernels[0].grid.y == 32));
    CHECK(has(tb.plan.kernels[0].reason, "transposed to k-contiguous rows of 3996 bytes padded to 4000"));
    CHECK(has(tb.plan.kernels[0].reason, "wgmma reads f32 operands only k-major"));
    CHECK(workspace_bytes(tb, "kmajor_b") == 3LL * 520 * 1000 * 4);
    maps = maps_of(tb.plan.kernels[1]);
    CHECK(maps["tmap_a"].dims == std::vector<std::int64_t>{1000, 999, 3});
    CHECK(maps["tmap_b"].dims == std::vector<std::int64_t>{999, 520, 3});
    CHECK(maps["tmap_b"].strides == std::vector<std::int64_t>{1000 * 4, 520LL * 1000 * 4});
    // A small product pads nothing (kPadMinFlops): tf32 a·b with K = 99 stays on the mma.sync path.
    const Case small{"gemm.kiln", "mm_tf32", {{"M", 100}, {"N", 100}, {"K", 99}}, "small"};
    for (const auto& kn : generate(small, "sm_90a").plan.kernels) CHECK(kn.template_name == "gemm");
  }
  // Rows that are not a multiple of 16 bytes in a small product (K = 1001 bf16, 7x33: skinny, M = 7):
  // Gemv; the portable sm_90 target, or sm_80: the mma.sync Gemm. 16-bit operands never go to the
  // f32-only WgGemm.
  CHECK(generate(kCases[30], "sm_90a").plan.kernels[0].template_name == "gemv");
  CHECK(generate(kCases[24], "sm_90").plan.kernels[0].template_name == "gemm");
  CHECK(generate(kCases[24], "sm_80").plan.kernels[0].template_name == "gemm");
}

TEST_CASE("sm_90a: an n-major 16-bit B off 128-byte lines and read by many tile rows is realigned first") {
  // [Note: realigning an m- or n-major operand]: bf16 a·b, B's rows 6672 bytes (16 off a line),
  // 47 tile rows of 128: B is transposed to k-major rows of 9600 bytes, and the engine maps them.
  auto plan_of = [](std::int64_t m, std::int64_t n, std::int64_t k, const char* op = "mm_bf16") {
    return generate({"gemm.kiln", op, {{"M", m}, {"N", n}, {"K", k}}, "realign"}, "sm_90a");
  };
  const auto g = plan_of(6007, 3336, 4800);
  REQUIRE(g.plan.kernels.size() == 2);
  CHECK(g.plan.kernels[0].template_name == "gemm_operand_prep");
  CHECK((gemm_config(g, 0).prep == 2 && !kiln::prep_k_contig(gemm_config(g, 0))));
  CHECK(has(g.plan.kernels[0].reason, "rows of 6672 bytes) transposed to k-contiguous rows of 9600 bytes"));
  CHECK(has(g.plan.kernels[0].reason, "its rows start off 128-byte lines and 47 tile rows read it"));
  CHECK(workspace_bytes(g, "kmajor_b") == 3336LL * 4800 * 2);
  const auto& mc = gemm_config(g, 1);
  CHECK((mc.kind == kiln::GemmKind::Tma && mc.layout_b == kiln::GemmLayout::ColMajor && mc.ldb == 4800));
  // Rows on lines (N 3392), few tile rows (M 1920: 15 < kRealignMinReads), a k-major B (a·bᵀ),
  // or rows not even 16 bytes apart (N 3331: padded for that reason, as before): no realignment.
  for (const auto& other : {plan_of(6007, 3392, 4800), plan_of(1920, 3336, 4800), plan_of(6007, 3336, 4800, "mm_bf16_nt")}) {
    REQUIRE(other.plan.kernels.size() == 1);
    CHECK(other.plan.kernels[0].template_name == "gemm_tma");
  }
  CHECK(plan_of(2048, 3336, 4800).plan.kernels.size() == 2);   // 16 tile rows: realigned
  const auto odd = plan_of(6007, 3331, 4800);
  REQUIRE(odd.plan.kernels.size() == 2);
  CHECK(has(odd.plan.kernels[0].reason, "a tensor map's strides must be multiples of 16 bytes"));
}

TEST_CASE("skinny products (M or N at most 16) take Gemv on every target: row dot, column sweep, split K") {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    CAPTURE(arch);
    // The GEMV of the benchmark: 4096 rows of A, k-contiguous, 16-byte loads; one row per block
    // (fewer than 64 rows per SM), its 8 warps splitting K; 4096 blocks fill the GPU: one slice.
    const auto g = generate(Case{"gemm.kiln", "gemv_f32", {{"M", 4096}, {"K", 262144}}, "bench"}, arch);
    REQUIRE(g.plan.kernels.size() == 1);
    CHECK(g.plan.kernels[0].template_name == "gemv");
    const auto& c = gemm_config(g, 0);
    CHECK((c.kind == kiln::GemmKind::Gemv && c.bm == 1 && c.split_k == 1 && c.vec_a && c.vec_b));
    CHECK((kiln::gemv_big_is_a(c) && kiln::gemv_big_k_contig(c) && kiln::gemv_vec(c) == 4 && kiln::gemv_p(c) == 1));
    CHECK((g.plan.kernels[0].grid.x == 4096 && g.plan.kernels[0].grid.y == 1 && g.plan.kernels[0].block.x == 256));
    CHECK(has(g.sources[0].text, "#include \"kiln/gemv.cuh\""));
    CHECK(has(g.sources[0].text, "Kernel::run(in_a, in_x, out_y,"));
  }
  // K = 4099 (not a multiple of 4): element loads; 1000 blocks leave room: 2 K slices, then the
  // reduce. Golden plan and sources.
  {
    const auto g = generate(Case{"gemm.kiln", "gemv_f32", {}, "default"}, "sm_90a");
    check_golden("plan/gemv_f32_sm90a.txt", g.plan.text());
    for (std::size_t k = 0; k < g.sources.size(); ++k)
      check_golden("source/gemv_f32_sm90a_k" + std::to_string(k) + ".cu", g.sources[k].text);
    REQUIRE(g.plan.kernels.size() == 2);
    CHECK((gemm_config(g, 0).split_k == 2 && !gemm_config(g, 0).vec_a));
    CHECK(has(g.sources[0].text, "Kernel::run(in_a, in_x, ws_splitk2, kiln::gemm::Identity{});"));
    CHECK(g.plan.kernels[1].template_name == "gemm_split_k_reduce");
  }
  // x stored [K, 8] against 2000 rows of 1024 (16-byte loads): warps that carry 8 rows, 64 a
  // block, x read as 4 x 8 blocks ([Note: rows a warp carries]); 32 blocks: half the rule's slices
  // (rule: 8 blocks an SM, at most 1024 / 512 = 2: 1). Golden plan and source.
  {
    const auto g = generate(Case{"gemm.kiln", "mm_skinny_kp", {}, "default"}, "sm_90a");
    check_golden("plan/mm_skinny_kp_sm90a.txt", g.plan.text());
    check_golden("source/mm_skinny_kp_sm90a_k0.cu", g.sources.at(0).text);
    REQUIRE(g.plan.kernels.size() == 1);
    const auto& c = gemm_config(g, 0);
    CHECK((c.bm == 64 && kiln::gemv_warp_rows(c) == 8 && kiln::gemv_vec_x(c) && kiln::gemv_x_k(c) == 8 &&
           kiln::gemv_x_p(c) == 1 && c.split_k == 1));
    CHECK(g.plan.kernels[0].grid.x == 32);
    CHECK(has(g.plan.kernels[0].reason, "64 rows per block (8 a warp: [Note: rows a warp carries])"));
  }
  // 12 columns of x stored [K, 12], f32 fp32-accurate, 1001 rows of 1000 (16-byte loads): GemvMma
  // ([Note: skinny products on the tensor cores]) in 3xTF32, blocks of 128 rows (8), 3 K slices of
  // 352 (two blocks an SM, at most 1000 / 256 = 3), then the reduce with the relu. Golden plan and
  // source. sm_80 too (mma.sync).
  {
    const auto g = generate(Case{"gemm.kiln", "mm_skinny_mma", {}, "default"}, "sm_90a");
    check_golden("plan/mm_skinny_mma_sm90a.txt", g.plan.text());
    check_golden("source/mm_skinny_mma_sm90a_k0.cu", g.sources.at(0).text);
    REQUIRE(g.plan.kernels.size() == 2);
    const auto& c = gemm_config(g, 0);
    CHECK((c.kind == kiln::GemmKind::GemvMma && c.bm == 128 && c.split_k == 3 &&
           c.precision == kiln::MmaPrecision::Tf32x3 && kiln::gemv_mma_tiles_a_warp(c.bm) == 1));
    CHECK(kiln::gemv_mma_slice(c.k, c.split_k) == 352);
    CHECK((g.plan.kernels[0].grid.x == 8 && g.plan.kernels[0].grid.y == 3 && g.plan.kernels[0].block.x == 256));
    CHECK(has(g.sources[0].text, "#include \"kiln/gemv_mma.cuh\""));
    CHECK(has(g.sources[0].text, "kiln::gemm::GemvMma<kiln::Tf32x3, Index,"));
    CHECK(g.plan.kernels[1].template_name == "gemm_split_k_reduce");
    CHECK(generate(Case{"gemm.kiln", "mm_skinny_mma", {}, "default"}, "sm_80").plan.kernels[0].template_name ==
          "gemv_mma");
    // A linear layer on 12 rows in tf32: the weight (B) is the big operand, x = A k-contiguous.
    const auto lin = generate(Case{"gemm.kiln", "linear_skinny_tf32", {}, "default"}, "sm_90a");
    const auto& lc = gemm_config(lin, 0);
    CHECK((lc.kind == kiln::GemmKind::GemvMma && lc.precision == kiln::MmaPrecision::Tf32 && !kiln::gemv_big_is_a(lc) &&
           kiln::gemv_p(lc) == 12 && kiln::gemv_x_k(lc) == 1 && kiln::gemv_x_p(lc) == 520));
    // Batched x, 20000 rows of 256 a batch: 157 blocks of 128 a batch (314 fill two an SM), one K slice,
    // the epilogue in the kernel.
    const auto bat = generate(Case{"gemm.kiln", "mm_skinny_mma_batched", {}, "default"}, "sm_90a");
    REQUIRE(bat.plan.kernels.size() == 1);
    CHECK((bat.plan.kernels[0].grid.x == 157 && bat.plan.kernels[0].grid.z == 2 && gemm_config(bat, 0).split_k == 1));
    CHECK(has(bat.sources[0].text, "struct Epilogue"));
  }
  // M = 4: B (W stored [OUT, IN], k-contiguous) is the big operand; x = A, k-contiguous with rows
  // of 1000 bf16 (16 bytes apart): vector loads of both; the bias in the epilogue.
  {
    const auto g = generate(Case{"gemm.kiln", "linear_bf16_skinny", {}, "default"}, "sm_90a");
    REQUIRE(g.plan.kernels.size() == 1);
    const auto& c = gemm_config(g, 0);
    CHECK((!kiln::gemv_big_is_a(c) && kiln::gemv_p(c) == 4 && kiln::gemv_rows(c) == 1003 && kiln::gemv_vec(c) == 8 &&
           kiln::gemv_vec_x(c) && kiln::gemv_x_k(c) == 1 && kiln::gemv_x_p(c) == 1000));
    CHECK(has(g.sources[0].text, "struct Epilogue"));
    CHECK(has(g.plan.kernels[0].reason, "16-bit inputs widened to f32"));
  }
  // The big operand m-contiguous (A transposed): the column sweep, 32 lanes of rows per block,
  // batched (grid z), x = B(k, n) n-contiguous: element loads of x.
  {
    const auto g = generate(Case{"gemm.kiln", "mm_skinny_tn_batched", {}, "default"}, "sm_80");
    const auto& c = gemm_config(g, 0);
    CHECK((kiln::gemv_big_is_a(c) && !kiln::gemv_big_k_contig(c) && kiln::gemv_block_rows(c) == 32 &&
           kiln::gemv_x_k(c) == 8 && kiln::gemv_x_p(c) == 1));
    CHECK((g.plan.kernels[0].grid.x == 32 && g.plan.kernels[0].grid.z == 2));
  }
  // 17 columns: not skinny, the tensor-core paths.
  CHECK(generate(Case{"gemm.kiln", "mm_skinny_tn_batched", {{"N", 17}}, "n17"}, "sm_80").plan.kernels[0].template_name !=
        "gemv");
}

TEST_CASE("sm_90a: 16-bit products of at most one wave of tiles run in clusters of two sharing B (TMA multicast)") {
  // 1001x1000x1000 bf16 a·b: 16 x 8 tiles of 64x128, one per CTA: clusters of 2 along M, 64 units
  // (pairs of tile rows; the last pair's second tile starts past M and loads zeros), 128 CTAs.
  // B is n-major: each CTA multicasts one of the tile's two 64-column boxes.
  const auto g = generate(kCases[24], "sm_90a");
  REQUIRE(g.plan.kernels.size() == 1);
  const auto& c = gemm_config(g, 0);
  CHECK((c.cluster_m == 2 && c.bm == 64 && c.bn == 128 && kiln::tma_gemm_units(c) == 64));
  CHECK((g.plan.kernels[0].cluster == 2 && g.plan.kernels[0].grid.x == 128));
  CHECK(tensor_map(g, 0, "tmap_b").box == std::vector<int>{64, 128, 1});
  CHECK(has(g.sources[0].text, "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)"));
  CHECK(has(g.plan.kernels[0].reason, "clusters of 2 CTAs along M sharing each B tile (TMA multicast)"));
  CHECK(has(g.plan.text(), "cluster (2, 1, 1)"));
  // k-major B (a·bᵀ): each CTA multicasts half of the tile's rows, so the box has BN / 2 rows.
  const Case nt{"gemm.kiln", "mm_bf16_nt", {{"M", 1000}, {"N", 1000}, {"K", 1000}}, "cluster"};
  const auto t = generate(nt, "sm_90a");
  CHECK(gemm_config(t, 0).cluster_m == 2);
  CHECK(tensor_map(t, 0, "tmap_b").box == std::vector<int>{64, 64, 1});
  // Not in clusters: more than a wave of tiles (4096^3), split-K, tf32, and a single tile row.
  CHECK(gemm_config(generate(kCases[25], "sm_90a"), 0).cluster_m == 1);
  CHECK(gemm_config(generate(kCases[34], "sm_90a"), 0).cluster_m == 1);
  CHECK(gemm_config(generate(kCases[41], "sm_90a"), 0).cluster_m == 1);
  // tf32's 64x128 tiles keep one consumer of m64n128 and BK of one swizzle atom (32).
  const Case tf{"gemm.kiln", "mm_tf32_nt", {{"M", 1000}, {"N", 1000}, {"K", 1000}}, "tf32"};
  const auto tg = generate(tf, "sm_90a");
  CHECK((gemm_config(tg, 0).bm == 64 && gemm_config(tg, 0).consumers_n == 1 && gemm_config(tg, 0).bk == 32));
  CHECK(tg.plan.kernels[0].block.x == 256);
  const Case row{"gemm.kiln", "mm_bf16", {{"M", 64}, {"N", 4096}, {"K", 4096}}, "row"};
  for (const auto& kn : generate(row, "sm_90a").plan.kernels) CHECK(kn.cluster == 1);
}
