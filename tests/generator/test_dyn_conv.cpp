// dyn convs ([Note: dyn conv] in generator/plan/plan_contraction.cpp): a conv takes a dyn batch
// (x's and y's first axis). Within a bucket and size class every value gives the same source,
// free of the value; the class changes where the output outgrows the streaming-store limit; the
// launch follows the batch through conv_geometry; the TMA engine is never planned with a dyn
// batch; every other dyn dim is refused where it is declared; the units compile.
#include <doctest/doctest.h>

#include <map>
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
         "  in  w: f32[C, K, 3, 3]\n  out y = conv_transpose2d(x, w, padding=1, precision=\"tf32\")\n}\n";
}

const char* kRefused =
    "op dyn_h {\n  dims N = 2, C = 8, dyn H, W = 10\n  in x: f32[N, C, H, W]\n  in w: f32[4, C, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1)\n}\n"
    "op dyn_c {\n  dims N = 2, dyn C, H = 10, W = 10\n  in x: f32[N, C, H, W]\n  in w: f32[4, C, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1)\n}\n"
    "op dyn_k {\n  dims N = 2, C = 8, H = 10, W = 10, dyn K\n  in x: f32[N, C, H, W]\n  in w: f32[K, C, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1)\n}\n"
    "op nhwc {\n  dims dyn N, H = 10, W = 10, C = 16\n  in x: f32[N, H, W, C]\n  in w: f32[16, C, 3, 3]\n"
    "  out y = conv2d(x, w, padding=1, layout=\"NHWC\")\n}\n";

kiln::Plan plan_text_at(const std::string& text, const std::string& op, std::map<std::string, std::int64_t> dims,
                        const std::string& arch) {
  auto spec = kiln::parse_spec(text, "conv.kiln");
  std::map<std::string, kiln::ir::DimValue> given;
  for (const auto& [name, value] : dims) given[name] = {value, "test"};
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), given));
  return kiln::make_plan(bound, kiln::Target::for_arch(arch));
}
kiln::Plan dyn_at(const std::string& op, std::int64_t n, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("dyn N"), op, {{"N", n}}, arch);
}
kiln::Plan static_at(const std::string& op, std::int64_t n, const std::string& arch = "sm_90a") {
  return plan_text_at(spec_text("N = " + std::to_string(n)), op, {}, arch);
}

const std::vector<std::string> kOps{"conv_bias", "conv_res_f16", "depthwise", "conv3d_t", "conv1d_g", "convt_s1"};

const kiln::ConvConfig* conv_of(const kiln::PlannedKernel& k) { return std::get_if<kiln::ConvConfig>(&k.config); }

}  // namespace

TEST_CASE("dyn conv: one source per bucket and class, the batch only at launch") {
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const auto a = dyn_at(op, 3, arch), b = dyn_at(op, 5, arch), c = dyn_at(op, 7, arch);
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(c)));
      for (const auto& kn : a.kernels) {
        const auto* cc = conv_of(kn);
        REQUIRE(cc != nullptr);
        CHECK(cc->n == 0);
        CHECK(cc->kind != kiln::ConvKind::Tma);   // no TMA engine with a dyn batch
        CHECK(kn.dyn_outer.size() == 1);
        CHECK(kn.reason.find("dyn N: the batch") == 0);
        bool reads = false;
        for (const auto& arg : kn.args) reads |= arg.kind == kiln::KernelArg::Kind::DynDim && arg.dim == "N";
        CHECK(reads);
      }
      // The values the sources must not hold, as the plan texts and comments would write them:
      // "7x64x56x56", "[7, 64, ...]".
      for (const auto& src : sources_of(c)) {
        INFO(src.text);
        CHECK(src.text.find("[7,") == std::string::npos);
        CHECK(src.text.find(" 7x") == std::string::npos);
        CHECK(src.text.find("/*n=*/7") == std::string::npos);
      }
    }
}

TEST_CASE("dyn conv: a class changes where the output outgrows streaming stores, planned at its lowest batch") {
  // conv_bias: 128 x 56 x 56 f32 outputs an image (1.53 MiB), streaming stores from 40 MiB: 27 images.
  const auto p = dyn_at("conv_bias", 8);
  const auto& t = p.dyn_thresholds.at("N");
  REQUIRE(t.size() == 1);
  CHECK(t[0] == 27);
  CHECK(!conv_of(dyn_at("conv_bias", 26).kernels[0])->stream);
  CHECK(conv_of(dyn_at("conv_bias", 27).kernels[0])->stream);
  CHECK(all_sources(sources_of(dyn_at("conv_bias", 27))) == all_sources(sources_of(dyn_at("conv_bias", 1000))));
  CHECK(all_sources(sources_of(dyn_at("conv_bias", 26))) != all_sources(sources_of(dyn_at("conv_bias", 27))));
  // Each class's plan is the static plan at its lowest value but for the batch, wherever the
  // static plan takes the same template (the TMA engine takes the static conv from 27 images).
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"})
      for (std::int64_t low : {2, 27}) {
        CAPTURE(op);
        CAPTURE(arch);
        CAPTURE(low);
        const auto d = dyn_at(op, low, arch), s = static_at(op, low, arch);
        if (s.kernels.size() != 1 || s.kernels[0].template_name != d.kernels[0].template_name) continue;
        kiln::ConvConfig fixed = *conv_of(d.kernels[0]);
        fixed.n = low;
        CHECK(kiln::config_text(fixed) == kiln::config_text(*conv_of(s.kernels[0])));
      }
}

TEST_CASE("dyn conv: the launch is conv_geometry at the launch's batch") {
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const auto p = dyn_at(op, 3, arch);
      for (std::int64_t n : {2, 3, 17, 26}) {
        auto dims = p.bound->dims;
        dims["N"] = n;
        kiln::ConvConfig at = *conv_of(p.kernels[0]);
        at.n = n;
        const auto want = kiln::conv_geometry(at, p.target.sm_count);
        const auto got = kiln::launch_for(p, 0, dims);
        CHECK(got.grid.x == want.grid.x);
        CHECK(got.grid.y == want.grid.y);
        CHECK(got.grid.z == want.grid.z);
        CHECK(got.block.x == p.kernels[0].block.x);
        CHECK(got.shared_bytes == p.kernels[0].shared_bytes);
      }
    }
  // The bucket one plans the static conv (on the TMA engine where that takes it).
  const auto one = dyn_at("conv_bias", 1);
  CHECK(one.kernels[0].dyn_outer.empty());
  CHECK(conv_of(one.kernels[0])->n == 1);
}

TEST_CASE("dyn conv: other dyn dims are refused where they are declared") {
  auto refused = [](const std::string& op) {
    std::map<std::string, std::int64_t> dims;
    const auto ir = kiln::check_op(kiln::parse_spec(kRefused, "conv.kiln"), op);
    for (const auto& d : ir->dims)
      if (d.dynamic) dims[d.name] = 8;
    try {
      plan_text_at(kRefused, op, dims, "sm_90a");
    } catch (const kiln::UnsupportedError& e) {
      return std::string(e.what());
    }
    return std::string("planned");
  };
  const std::string only = "takes a dyn dim only as its batch (the first axis of x and y): the channels, the spatial "
                           "extents and the filters are baked in (its im2col tables divide by them)";
  CHECK(refused("dyn_h") == "conv.kiln:2:26: op dyn_h: dim 'H' is dyn, but the conv template (for line 5) " + only);
  CHECK(refused("dyn_c") == "conv.kiln:8:19: op dyn_c: dim 'C' is dyn, but the conv template (for line 11) " + only);
  CHECK(refused("dyn_k") == "conv.kiln:14:42: op dyn_k: dim 'K' is dyn, but the conv template (for line 17) " + only);
  CHECK(refused("nhwc") == "conv.kiln:20:12: op nhwc: dim 'N' is dyn, but the conv template (for line 23) takes a dyn "
                           "batch only in NCHW: an NHWC conv runs on the sm_90a TMA engine alone, whose copy of x and "
                           "im2col map are sized by the batch");
}

TEST_CASE("dyn conv: every unit compiles with NVRTC for sm_80 and sm_90a") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC not loadable (" << why << ")");
    return;
  }
  int units = 0;
  for (const auto& op : kOps)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (std::int64_t n : {5, 100}) {
        CAPTURE(op);
        CAPTURE(arch);
        CAPTURE(n);
        units += check_units_compile(dyn_at(op, n, arch), arch);
      }
  MESSAGE(units << " units compiled");
}
