// dyn convs ([Note: dyn conv] in generator/plan/plan_contraction.cpp): a conv takes a dyn batch
// (x's and y's first axis). Within a bucket and size class every value gives the same source,
// free of the value; classes change where the route does (the TMA engine, streaming stores); the
// launch follows the batch through conv_geometry (the copy of x: gemm_geometry); the TMA engine's
// x map and copy of x take the batch at launch; every other dyn dim is refused where it is
// declared; the units compile.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>

#include "generator/plan/plan.h"
#include "memory_plan_util.h"
#include "runtime/nvrtc.h"

namespace {

using namespace memory_plan_test;

// Each op with the batch declared as `n_decl`: "dyn N" or "N = <value>".
std::string spec_text(const std::string& n_decl) {
  return "op conv_bias {\n  dims " + n_decl + ", C = 64, H = 56, W = 56, K = 128\n  in  x: f32[N, C, H, W]\n" +
         "  in  w: f32[K, C, 3, 3]\n  in  b: f32[K, 1, 1]\n  out y = relu(conv2d(x, w, padding=1) + b)\n}\n" +
         "op conv_res_f16 {\n  dims " + n_decl + ", C = 32, H = 30, W = 30, K = 48\n  in  x: f16[N, C, H, W]\n" +
         "  in  w: f16[K, C, 3, 3]\n  in  r: f16[N, K, H, W]\n  out y = conv2d(x, w, padding=1) + r\n}\n" +
         "op depthwise {\n  dims " + n_decl + ", C = 32, H = 30, W = 30\n  in  x: f32[N, C, H, W]\n" +
         "  in  w: f32[C, 1, 3, 3]\n  out y = conv2d(x, w, padding=1, groups=32)\n}\n" +
         "op conv3d_t {\n  dims " + n_decl + ", C = 8, D = 6, H = 10, W = 10, K = 16\n  in  x: f32[N, C, D, H, W]\n" +
         "  in  w: f32[C, K, 3, 3, 3]\n  out y = conv_transpose3d(x, w, stride=2, padding=1)\n}\n" +
         "op conv1d_g {\n  dims " + n_decl + ", C = 16, L = 100, K = 32\n  in  x: bf16[N, C, L]\n" +
         "  in  w: bf16[K, 4, 5]\n  out y = conv1d(x, w, groups=4, stride=2)\n}\n" +
         "op convt_s1 {\n  dims " + n_decl + ", C = 32, H = 20, W = 20, K = 16\n  in  x: f32[N, C, H, W]\n" +
         "  in  w: f32[C, K, 3, 3]\n  out y = conv_transpose2d(x, w, padding=1, precision=\"tf32\")\n}\n" +
         "op nhwc {\n  dims " + n_decl + ", H = 56, W = 56, C = 64, K = 64\n  in  x: f32[N, H, W, C]\n" +
         "  in  w: f32[K, C, 3, 3]\n  in  b: f32[K]\n" +
         "  out y = relu(conv2d(x, w, padding=[1, 1], layout=\"NHWC\") + b)\n}\n" +
         "op nhwc_c10 {\n  dims " + n_decl + ", H = 56, W = 56, C = 10, K = 64\n  in  x: f32[N, H, W, C]\n" +
         "  in  w: f32[K, C, 3, 3]\n  out y = conv2d(x, w, padding=[1, 1], layout=\"NHWC\", precision=\"tf32\")\n}\n";
}

const char* kRefused =
    "op dyn_h {\n  dims N = 2, C = 8, dyn H, W = 10\n  in x: f32[N, C, H, W]\n  in w: f32[4, C, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1)\n}\n"
    "op dyn_c {\n  dims N = 2, dyn C, H = 10, W = 10\n  in x: f32[N, C, H, W]\n  in w: f32[4, C, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1)\n}\n"
    "op dyn_k {\n  dims N = 2, C = 8, H = 10, W = 10, dyn K\n  in x: f32[N, C, H, W]\n  in w: f32[K, C, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1)\n}\n"
    "op compound {\n  dims dyn N, C = 8, H = 10, W = 10\n  in x: f32[N, C, H, W]\n  in w: f32[4, C, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1)\n  out z = x\n}\n";

kiln::Plan plan_text_at(const std::string& text, const std::string& op, std::map<std::string, std::int64_t> dims,
                        const std::string& arch) {
  return memory_plan_test::plan_text_at(text, "conv.kiln", op, dims, arch);
}
kiln::Plan dyn_at(const std::string& op, std::int64_t n, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("dyn N"), op, {{"N", n}}, arch);
}
kiln::Plan static_at(const std::string& op, std::int64_t n, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("N = " + std::to_string(n)), op, {}, arch);
}

const std::vector<std::string> kOps{"conv_bias", "conv_res_f16", "depthwise", "conv3d_t",
                                    "conv1d_g",  "convt_s1",     "nhwc",      "nhwc_c10"};

// NHWC convs run on the sm_90a TMA engine only.
bool runs_on(const std::string& op, const std::string& arch) { return op.rfind("nhwc", 0) != 0 || arch == "sm_90a"; }

const kiln::ConvConfig* conv_of(const kiln::PlannedKernel& k) { return std::get_if<kiln::ConvConfig>(&k.config); }
const kiln::GemmConfig* gemm_of(const kiln::PlannedKernel& k) { return std::get_if<kiln::GemmConfig>(&k.config); }
// A TMA conv's copy of x (OperandPrep of its A operand), which takes the batch at launch too.
bool x_copy(const kiln::PlannedKernel& k) { return gemm_of(k) != nullptr && gemm_of(k)->prep == kiln::kPrepA; }
// The kernel the conv runs in (the last; the copies come first).
const kiln::PlannedKernel& conv_kernel(const kiln::Plan& p) { return p.kernels.back(); }

}  // namespace

TEST_CASE("dyn conv: one source per bucket and class, the batch only at launch") {
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      if (!runs_on(op, arch)) continue;
      const auto a = dyn_at(op, 2, arch), b = dyn_at(op, 3, arch), c = dyn_at(op, 5, arch);
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(c)));
      for (const auto& kn : a.kernels) {
        INFO(kn.template_name);
        if (const auto* cc = conv_of(kn)) CHECK(cc->n == 0);
        else if (x_copy(kn)) CHECK(gemm_of(kn)->batch == 0);
        else {   // the filters' copy: static
          CHECK(kn.dyn_outer.empty());
          continue;
        }
        CHECK(kn.dyn_outer.size() == 1);
        CHECK(kn.reason.find("dyn N: the batch") == 0);
        bool reads = false;
        for (const auto& arg : kn.args) reads |= arg.kind == kiln::KernelArg::Kind::DynDim && arg.dim == "N";
        CHECK(reads);
      }
      // The values the sources must not hold, as the plan texts and comments would write them:
      // "5x64x56x56", "[5, 64, ...]".
      for (const auto& src : sources_of(c)) {
        INFO(src.text);
        CHECK(src.text.find("[5,") == std::string::npos);
        CHECK(src.text.find(" 5x") == std::string::npos);
        CHECK(src.text.find("/*n=*/5") == std::string::npos);
      }
    }
}

TEST_CASE("dyn conv: classes start where the route changes, each planned as the static conv at its lowest batch") {
  // conv_bias (sm_90a): 64 channels in 3xTF32, so the TMA engine at every batch ([Note: small
  // convs on the TMA engine]); 128 x 56 x 56 f32 outputs an image (1.53 MiB), streaming stores
  // from 40 MiB: 27.
  const auto p = dyn_at("conv_bias", 8);
  // Its copy of x takes a grid of 65535 images at most: WgConvNchw from 65536. Under 6 images its
  // 25 tiles of 128 pixels an image leave SMs idle: 64-row tiles ([Note: a wave of TMA conv tiles]).
  CHECK(p.dyn_thresholds.at("N") == std::vector<std::int64_t>{6, 27, 65536});
  CHECK(conv_of(conv_kernel(dyn_at("conv_bias", 5)))->bm == 64);
  CHECK(conv_of(conv_kernel(dyn_at("conv_bias", 6)))->bm == 128);
  CHECK(conv_of(conv_kernel(static_at("conv_bias", 5)))->bm == 64);
  CHECK(conv_of(conv_kernel(static_at("conv_bias", 6)))->bm == 128);
  CHECK(conv_of(conv_kernel(dyn_at("conv_bias", 1)))->kind == kiln::ConvKind::Tma);
  CHECK(conv_of(conv_kernel(dyn_at("conv_bias", 3)))->kind == kiln::ConvKind::Tma);
  // convt_s1 (a stride-1 transposed conv in tf32, the TMA engine as a forward conv): 2^30 flops
  // pay for the copies from 292 images (3.7 Mflop an image), ConvNchw below.
  CHECK(dyn_at("convt_s1", 8).dyn_thresholds.at("N").front() == 292);
  CHECK(conv_of(conv_kernel(dyn_at("convt_s1", 291)))->kind == kiln::ConvKind::Nchw);
  CHECK(conv_of(conv_kernel(dyn_at("convt_s1", 292)))->kind == kiln::ConvKind::Tma);
  CHECK(!conv_of(conv_kernel(dyn_at("conv_bias", 26)))->stream);
  CHECK(conv_of(conv_kernel(dyn_at("conv_bias", 27)))->stream);
  CHECK(all_sources(sources_of(dyn_at("conv_bias", 27))) == all_sources(sources_of(dyn_at("conv_bias", 1000))));
  CHECK(all_sources(sources_of(dyn_at("conv_bias", 26))) != all_sources(sources_of(dyn_at("conv_bias", 27))));
  // On sm_80 (ConvNchw) only the streaming stores change it; DepthwiseDirect never changes.
  CHECK(dyn_at("conv_bias", 8, "sm_80").dyn_thresholds.at("N") == std::vector<std::int64_t>{27});
  CHECK(dyn_at("depthwise", 8).dyn_thresholds.count("N") == 0);
  // The TMA engine stops at 65536 images (its copy's grid): the top class takes WgConvNchw.
  CHECK(conv_of(conv_kernel(dyn_at("conv_bias", 70000)))->kind == kiln::ConvKind::Wgmma);
  // Each class's plan is the static plan at its lowest value but for the batch: the same kernels
  // and configs.
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      if (!runs_on(op, arch)) continue;
      std::vector<std::int64_t> lows{2};
      const auto first = dyn_at(op, 2, arch);
      if (auto t = first.dyn_thresholds.find("N"); t != first.dyn_thresholds.end())
        lows.insert(lows.end(), t->second.begin(), t->second.end());
      for (std::int64_t low : lows) {
        CAPTURE(low);
        std::optional<kiln::Plan> planned;
        try {
          planned = static_at(op, low, arch);
        } catch (const kiln::UnsupportedError&) {   // NHWC past the TMA engine's limits: no template
          CHECK_THROWS_AS(dyn_at(op, low, arch), kiln::UnsupportedError);
          continue;
        }
        const auto d = dyn_at(op, low, arch);
        const auto& s = *planned;
        REQUIRE(d.kernels.size() == s.kernels.size());
        for (std::size_t k = 0; k < s.kernels.size(); ++k) {
          CHECK(d.kernels[k].template_name == s.kernels[k].template_name);
          if (const auto* dc = conv_of(d.kernels[k])) {
            kiln::ConvConfig fixed = *dc;
            fixed.n = low;
            CHECK(kiln::config_text(fixed) == kiln::config_text(*conv_of(s.kernels[k])));
          } else if (x_copy(d.kernels[k])) {   // NHWC: the same copy, image by image
            CHECK(gemm_of(d.kernels[k])->batch == 0);
          } else {
            CHECK(kiln::config_text(*gemm_of(d.kernels[k])) == kiln::config_text(*gemm_of(s.kernels[k])));
          }
        }
      }
    }
}

TEST_CASE("dyn conv: the launch is conv_geometry at the launch's batch, the x copy's grid and workspace its") {
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      if (!runs_on(op, arch)) continue;
      const auto p = dyn_at(op, 4, arch);
      for (std::int64_t n : {4, 5, 17, 26}) {
        auto dims = p.bound->dims;
        dims["N"] = n;
        for (std::size_t k = 0; k < p.kernels.size(); ++k) {
          const auto& kn = p.kernels[k];
          kiln::launch::Geometry want;
          if (const auto* cc = conv_of(kn)) {
            kiln::ConvConfig at = *cc;
            at.n = n;
            want = kiln::conv_geometry(at, p.target.sm_count);
          } else {
            kiln::GemmConfig at = *gemm_of(kn);
            if (x_copy(kn)) at.batch = n;
            want = kiln::gemm_geometry(at, p.target.sm_count, kn.min_blocks);
          }
          const auto got = kiln::launch_for(p, k, dims);
          CHECK(got.grid.x == want.grid.x);
          CHECK(got.grid.y == want.grid.y);
          CHECK(got.grid.z == want.grid.z);
          CHECK(got.block.x == kn.block.x);
          CHECK(got.shared_bytes == kn.shared_bytes);
        }
        // The copy of x (NCHW to NHWC, or NHWC to 16-byte rows) is sized by the launch's images.
        for (std::size_t b = 0; b < p.buffers.size(); ++b)
          if (!p.buffers[b].dyn_dim.empty()) {
            CHECK(p.buffers[b].dyn_dim == "N");
            CHECK(p.buffer_bytes(b, dims) == p.buffers[b].bytes / p.buffers[b].shape[0] * n);
          }
      }
    }
  // The engine's x map takes the images at launch (its dims {C, W, H, N}); the filters' does not.
  for (const char* op : {"conv_bias", "nhwc", "nhwc_c10"}) {
    CAPTURE(op);
    const auto p = dyn_at(op, 8);
    const auto& engine = conv_kernel(p);
    REQUIRE(conv_of(engine)->kind == kiln::ConvKind::Tma);
    int maps = 0;
    for (const auto& a : engine.args)
      if (a.kind == kiln::KernelArg::Kind::TensorMap) {
        CHECK(a.map_dyn_dim == (a.name == "tmap_x" ? 3 : -1));
        ++maps;
      }
    CHECK(maps == 2);
    // Read in place (nhwc: 64 channels) or copied image by image into a workspace the launch sizes.
    const bool copied = std::string(op) != "nhwc";
    CHECK(x_copy(p.kernels[0]) == copied);
    int sized = 0;
    for (const auto& b : p.buffers) sized += !b.dyn_dim.empty();
    CHECK(sized == (copied ? 1 : 0));
  }
  // The bucket one plans the static conv (on the TMA engine where that takes it).
  const auto one = dyn_at("conv_bias", 1);
  for (const auto& kn : one.kernels) CHECK(kn.dyn_outer.empty());
  REQUIRE(conv_of(conv_kernel(one)) != nullptr);
  CHECK(conv_of(conv_kernel(one))->n == 1);
}

TEST_CASE("dyn conv: other dyn dims are refused where they are declared") {
  auto refused = [](const std::string& op) {
    return refusal_of(kRefused, "conv.kiln", op, dyn_dims_at(kRefused, "conv.kiln", op, 8));
  };
  const std::string only = "takes a dyn dim only as its batch (the first axis of x and y) or as a spatial extent of "
                           "x: the channels and the filters are baked in (its im2col tables divide by them)";
  // (A dyn spatial extent plans: tests/generator/test_dyn_conv_spatial.cpp.)
  CHECK(refused("dyn_h") == "planned");
  CHECK(refused("dyn_c") == "conv.kiln:8:19: op dyn_c: dim 'C' is dyn, but the conv template (for line 11) " + only);
  CHECK(refused("dyn_k") == "conv.kiln:14:42: op dyn_k: dim 'K' is dyn, but the conv template (for line 17) " + only);
  // (A dyn batch inside a compound extent cannot reach a conv: the checker takes dyn dims only as
  // whole extents of an input or output. `compound` plans: x is stored as is.)
  CHECK(refused("compound") == "planned");
}

TEST_CASE("dyn conv: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!nvrtc_or_skip()) return;
  int units = 0;
  for (const auto& op : kOps)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t n : {5, 100}) {
        CAPTURE(op);
        CAPTURE(arch);
        CAPTURE(n);
        if (!runs_on(op, arch)) continue;
        units += check_units_compile(dyn_at(op, n, arch), arch);
      }
  MESSAGE(units << " units compiled");
}
