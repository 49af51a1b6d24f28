// Dyn spatial extents of convs ([Note: dyn conv spatial extents] in
// generator/plan/plan_contraction.cpp): a 1-d or 2-d forward conv takes dyn dims as x's spatial
// extents on the TMA engine and WgConvNchw (sm_90a, f32, one group), ConvNchw and DepthwiseDirect.
// Within a bucket every value gives the same source, free of the values; the config holds 0 for
// h, w, ho, wo and the kernel reads them (and Ho x Wo) from DynValue arguments; the launch is
// conv_geometry at each launch's extents (the TMA engine's copy of x and its map sized by it); the
// refusals are located; the units compile.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "generator/plan/plan.h"
#include "dyn_conv_spatial_spec.h"
#include "golden.h"
#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;

using kiln_test::kDynConvSpatialSpec;

// Ops a dyn spatial extent is refused for, and where.
constexpr const char* kRefused = R"(op dyn_c {
  dims N = 2, dyn C, H = 10, W = 10
  in x: f32[N, C, H, W]
  in w: f32[4, C, 3, 3]
  out y = conv2d(x, w, padding=1)
}
op conv3d {
  dims N = 2, C = 8, dyn D, H = 10, W = 10
  in x: f32[N, C, D, H, W]
  in w: f32[4, C, 3, 3, 3]
  out y = conv3d(x, w, padding=1)
}
op transposed {
  dims N = 2, C = 8, dyn H, W = 10
  in x: f32[N, C, H, W]
  in w: f32[C, 4, 3, 3]
  out y = conv_transpose2d(x, w, stride=2)
}
op nhwc {
  dims N = 2, dyn H, W = 10, C = 16
  in x: f32[N, H, W, C]
  in w: f32[8, C, 3, 3]
  out y = conv2d(x, w, padding=[1, 1], layout="NHWC")
}
op both {
  dims dyn S, C = 4
  in x: f32[S, C, S, 8]
  in w: f32[4, C, 3, 3]
  out y = conv2d(x, w, padding=1)
}
op reader {
  dims N = 2, C = 8, dyn H, W = 10
  in x: f32[N, C, H, W]
  in w: f32[4, C, 3, 3]
  out y = conv2d(x, w, stride=2)
  out z = exp(y)
}
)";

const std::vector<std::string> kOps{"conv_hw", "conv_s2_f16", "conv_res",    "depthwise",   "dw_nhwc",
                                    "conv1d_bf16", "grouped", "valid_tf32", "conv1d_tf32", "tma_tf32",
                                    "conv1d_tma",  "small_tf32"};

// The template the op's conv takes on `arch` at the tests' first value (20): f32 with one group on
// sm_90a the TMA engine, or WgConvNchw under 8 input channels, and in tf32 under 64 channels below
// the flops class's threshold (small_tf32 there).
kiln::ConvKind kind_of(const std::string& op, const std::string& arch) {
  if (op == "depthwise" || op == "dw_nhwc") return kiln::ConvKind::Depthwise;
  if (arch != "sm_90a") return kiln::ConvKind::Nchw;
  if (op == "conv_hw" || op == "conv_res" || op == "tma_tf32" || op == "conv1d_tma") return kiln::ConvKind::Tma;
  if (op == "valid_tf32" || op == "conv1d_tf32" || op == "small_tf32") return kiln::ConvKind::Wgmma;
  return kiln::ConvKind::Nchw;
}

// The op's dyn dims at `v` (the batch of conv_s2_f16 at 3).
std::map<std::string, std::int64_t> dims_at(const std::string& op, std::int64_t v) {
  if (op == "conv_s2_f16") return {{"N", 3}, {"S", v}};
  if (op == "conv1d_bf16" || op == "conv1d_tma") return {{"L", v}};
  if (op == "conv1d_tf32") return {{"N", 3}, {"L", v}};
  if (op == "tma_tf32" || op == "small_tf32") return {{"N", 2}, {"H", v}, {"W", v + 2}};
  if (op == "conv_res") return {{"H", v}};
  return {{"H", v}, {"W", v + 2}};
}

kiln::Plan plan_at(const std::string& op, std::int64_t v, const std::string& arch = "sm_90a") {
  return plan_text_at(kDynConvSpatialSpec, "conv.kiln", op, dims_at(op, v), arch);
}

const kiln::ConvConfig& conv_of(const kiln::PlannedKernel& k) { return std::get<kiln::ConvConfig>(k.config); }

}  // namespace

TEST_CASE("dyn conv spatial extents: one source per bucket, free of the values, on the TMA engine, WgConvNchw, "
          "ConvNchw or DepthwiseDirect") {
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      // (values in the bucket `general`: none a multiple of 16, none 1)
      const auto a = plan_at(op, 20, arch), b = plan_at(op, 37, arch), c = plan_at(op, 301, arch);
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(b)));
      // (The TMA engine's pixel tiles follow a size class of H x W: tma_tf32's 301 x 303 is in
      // another than 20 x 22, 61 x 63 is not; conv1d_tma's L = 301 too. small_tf32's 2 x 301 x 303
      // is past its flops class's threshold, on the TMA engine; 2 x 61 x 63 is not.)
      const bool other_class =
          (op == "tma_tf32" || op == "conv1d_tma" || op == "small_tf32") && std::string(arch) == "sm_90a";
      CHECK(all_sources(sources_of(a)) == all_sources(sources_of(other_class ? plan_at(op, 61, arch) : c)));
      if (other_class) CHECK(all_sources(sources_of(a)) != all_sources(sources_of(c)));
      const bool tma = kind_of(op, arch) == kiln::ConvKind::Tma;
      // (the TMA engine after its copies of x and the filters)
      REQUIRE(a.kernels.size() == (tma ? 3u : 1u));
      const auto& kn = a.kernels.back();
      const auto& cc = conv_of(kn);
      const bool depthwise = op == "depthwise" || op == "dw_nhwc";
      CHECK(cc.kind == kind_of(op, arch));
      CHECK(kiln::conv_dyn_spatial(cc));
      CHECK(!cc.stream);
      // WgConvNchw's and the TMA engine's 16-byte stores are the launch's pick: the config allows
      // them at any extent.
      // (The TMA engine's 3xTF32 stores y transposed, without them: conv_tma_pixel_rows.)
      if (cc.kind == kiln::ConvKind::Wgmma || (tma && !kiln::conv_tma_pixel_rows(cc))) CHECK(cc.vec_y);
      if (tma) {   // the copy of x: its rows and strides a launch's, its workspace sized by its geometry
        const auto& prep = std::get<kiln::GemmConfig>(a.kernels[0].config);
        CHECK((prep.m == 0 && prep.lda == 0 && prep.stride_a == 0));
        CHECK(kiln::prep_batches(prep) == prep.batch);
        int rows_args = 0;
        for (const auto& arg : a.kernels[0].args)
          rows_args += arg.kind == kiln::KernelArg::Kind::DynValue &&
                       (arg.name == "prep_rows" || arg.name == "prep_ld" || arg.name == "prep_stride");
        CHECK(rows_args == 3);
        int launch_sized = 0;
        for (const auto& buf : a.buffers) launch_sized += buf.launch_kernel == 0;
        CHECK(launch_sized == 1);
        // The x map's extents and strides: expressions of the dims.
        for (const auto& arg : kn.args)
          if (arg.kind == kiln::KernelArg::Kind::TensorMap && arg.name == "tmap_x")
            CHECK((arg.map_dims_at.size() == 4 && arg.map_strides_at.size() == 3 && arg.map_dyn_dim < 0));
      }
      // The dyn axes' extents are 0 in the config (a conv1d's h is its static 1).
      const bool h_dyn = op != "conv1d_bf16" && op != "conv1d_tf32" && op != "conv1d_tma";
      CHECK((cc.h == 0) == h_dyn);
      CHECK((cc.ho == 0) == h_dyn);
      CHECK((cc.w == 0) == (op != "conv_res"));
      CHECK((cc.wo == 0) == (op != "conv_res"));
      // Every ConvDyn member is a DynValue argument.
      for (const char* field : kiln::kConvDynFields) {
        int found = 0;
        for (const auto& arg : kn.args)
          found += arg.kind == kiln::KernelArg::Kind::DynValue && arg.name == std::string("conv_") + field;
        CHECK(found == 1);
      }
      CHECK(kn.reason.find("dyn spatial extents ") == 0);
      if (!depthwise && !tma) CHECK(contains(kn.reason, "not on the TMA engine: "));
      // The values the sources must not hold, as the plan texts and comments would write them.
      const auto units = sources_of(c);
      for (std::size_t u = 0; u < units.size(); ++u) {
        INFO(units[u].text);
        CHECK(!contains(units[u].text, "301"));
        CHECK(!contains(units[u].text, "303"));
        if (u + 1 == units.size())
          CHECK(contains(units[u].text, "kiln::conv::ConvDyn{conv_h, conv_w, conv_ho, conv_wo, conv_howo}"));
        else if (u == 0)   // the TMA engine's copy of x
          CHECK(contains(units[u].text, "kiln::gemm::PrepRows{prep_rows, prep_ld, prep_stride}"));
      }
    }
  // The bucket one plans the static conv: a 1x1 image with padding 1 (its Ho, Wo 1).
  const auto one = plan_text_at(kDynConvSpatialSpec, "conv.kiln", "conv_hw", {{"H", 1}, {"W", 1}}, "sm_90a");
  CHECK(!kiln::conv_dyn_spatial(conv_of(one.kernels.back())));
  CHECK(conv_of(one.kernels.back()).h == 1);
  // And where y's extents are quotients of the dim ((S - 1) / 2 + 1 at S = 1): the conv's kernel
  // stores them as its config's constants.
  const auto one_s2 = plan_at("conv_s2_f16", 1);
  REQUIRE(one_s2.kernels.size() == 1);
  CHECK(!kiln::conv_dyn_spatial(conv_of(one_s2.kernels[0])));
  CHECK(conv_of(one_s2.kernels[0]).ho == 1);
}

TEST_CASE("dyn conv spatial extents: an epilogue operand broadcast along an output extent that is 1 at this value") {
  // conv1d_tma's `* b` (b: [K, 1]) against y [N, K, (L - 1) / 2 + 1]: at L = 2 that extent is 1,
  // at L = 7 of the same bucket and class it is 4; b is read at index 0 along it in both (the H200
  // ran L = 7 through the executable planned at L = 2, which read b at the output's coordinate).
  const auto at2 = plan_at("conv1d_tma", 2), at7 = plan_at("conv1d_tma", 7);
  CHECK(all_sources(sources_of(at2)) == all_sources(sources_of(at7)));
  CHECK(contains(all_sources(sources_of(at2)), "in_b[(k * 1 + 0)]"));
}

TEST_CASE("dyn conv spatial extents: the TMA engine's pixel tiles follow a size class of the dyn extents' product") {
  // tma_tf32: stride 2 (an image's output pixels about its input's over 4), tf32: 64-pixel tiles
  // for images of at most 64 output pixels, 256 from 2048, else 128, as the static rule.
  const auto small = plan_at("tma_tf32", 6);   // 6 x 8 input pixels
  REQUIRE(small.dyn_thresholds.count("H*W"));
  CHECK(small.dyn_thresholds.at("H*W") == std::vector<std::int64_t>{65 * 4, 2048 * 4});
  for (const auto& [h, tile] : std::vector<std::pair<std::int64_t, int>>{{6, 64}, {15, 64}, {16, 128}, {20, 128},
                                                                          {89, 128}, {90, 256}, {301, 256}}) {
    CAPTURE(h);   // (W = h + 2: 15 x 17 = 255 and 16 x 18 = 288 pixels; 89 x 91 = 8099, 90 x 92 = 8280)
    const auto plan = plan_at("tma_tf32", h);
    const auto& cc = conv_of(plan.kernels.back());
    CHECK(cc.kind == kiln::ConvKind::Tma);
    CHECK(cc.bn == tile);
    CHECK(contains(plan.kernels.back().reason, "H*W in "));
  }
  // 3xTF32 (conv_hw, stride 1; its tiles' rows are pixels): 64 up to 64 output pixels (7 x 9),
  // 128 past them (8 x 10).
  CHECK(plan_at("conv_hw", 6).dyn_thresholds.at("H*W") == std::vector<std::int64_t>{65});
  CHECK(kiln::conv_tma_pixel_rows(conv_of(plan_at("conv_hw", 6).kernels.back())));
  CHECK(conv_of(plan_at("conv_hw", 7).kernels.back()).bm == 64);
  CHECK(conv_of(plan_at("conv_hw", 8).kernels.back()).bm == 128);
}

TEST_CASE("dyn conv spatial extents: under 64 channels in tf32 a flops class keeps small launches on WgConvNchw") {
  // small_tf32 (32 channels, 32 filters 3x3, pad 1, tf32): the specialized conv takes the TMA engine
  // from kPadMinFlops (2^30) of 2 x 32 x 288 flops per output pixel, 58255 pixels of N x H x W; the
  // dyn one has that threshold on the product N*H*W, and the engine's pixel classes on H*W.
  const auto small = plan_at("small_tf32", 20);
  REQUIRE(small.dyn_thresholds.count("N*H*W"));
  CHECK(small.dyn_thresholds.at("N*H*W") == std::vector<std::int64_t>{58255});
  CHECK(small.dyn_thresholds.at("H*W") == std::vector<std::int64_t>{65, 2048});
  CHECK(contains(small.kernels.back().reason, "not on the TMA engine: it is under the flops where its operand "
                                              "copies pay off (N*H*W in [1, 58255))"));
  constexpr const char* kStatic = R"(op s {
  dims N = 2, C = 32, H = 20, W = 20, K = 32
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  out y = conv2d(x, w, padding=1, precision="tf32")
}
)";
  // Both sides of the threshold, by the batch and by the image: the same route as the specialized
  // conv (whose output pixels, at stride 1 and pad 1, are the estimate's), and every class's plan
  // declares the same thresholds.
  for (const auto& [n, h, w] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {2, 227, 128}, {2, 228, 128}, {3, 139, 139}, {3, 140, 139}, {64, 30, 30}, {65, 30, 30}, {70000, 3, 5}}) {
    CAPTURE(n);
    CAPTURE(h);
    CAPTURE(w);
    const auto plan = plan_text_at(kDynConvSpatialSpec, "conv.kiln", "small_tf32", {{"N", n}, {"H", h}, {"W", w}},
                                   "sm_90a");
    const bool past = n * h * w >= 58255;
    CHECK(plan.dyn_thresholds == small.dyn_thresholds);
    // (From 65536 images WgConvNchw: the engine's copies take at most 65535.)
    CHECK((conv_of(plan.kernels.back()).kind == kiln::ConvKind::Tma) == (past && n < 65536));
    const auto fixed = plan_text_at(kStatic, "conv.kiln", "s", {{"N", n}, {"H", h}, {"W", w}}, "sm_90a");
    CHECK(conv_of(fixed.kernels.back()).kind == conv_of(plan.kernels.back()).kind);
  }
}

TEST_CASE("dyn conv spatial extents: the launch is conv_geometry at each launch's extents") {
  for (const auto& op : kOps)
    for (const char* arch : {"sm_90a", "sm_80"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const auto p = plan_at(op, 20, arch);
      const std::size_t ki = p.kernels.size() - 1;   // the conv (the TMA engine after its copies)
      const auto& cc = conv_of(p.kernels[ki]);
      for (std::int64_t v : {7, 20, 45, 130, 1001}) {
        CAPTURE(v);
        auto dims = p.bound->dims;
        for (const auto& [name, value] : dims_at(op, v)) dims[name] = value;
        kiln::ConvConfig at = cc;
        if (at.n == 0) at.n = dims.at("N");
        const auto& xs = p.bound->ir->node(p.bound->ir->node(p.kernels[0].anchor).operands[0]).shape;
        const bool nhwc = cc.nhwc;
        const std::size_t rank = xs.size();
        const std::int64_t h = rank == 3 ? 1 : xs[nhwc ? 1 : rank - 2].evaluate(dims);
        const std::int64_t w = xs[nhwc ? rank - 2 : rank - 1].evaluate(dims);
        at.h = h, at.w = w;
        at.ho = kiln::conv_out_size(h, cc.r, cc.stride_h, cc.pad_h, cc.dil_h, 0, false);
        at.wo = kiln::conv_out_size(w, cc.s, cc.stride_w, cc.pad_w, cc.dil_w, 0, false);
        const auto want = kiln::conv_geometry(at, p.target.sm_count);
        const auto got = kiln::launch_for(p, ki, dims);
        CHECK(got.grid.x == want.grid.x);
        CHECK(got.grid.y == want.grid.y);
        CHECK(got.grid.z == want.grid.z);
        CHECK(got.block.x == p.kernels[ki].block.x);
        CHECK(got.shared_bytes == p.kernels[ki].shared_bytes);
        if (cc.kind == kiln::ConvKind::Tma) {   // the copy of x: N images of H x W rows of ldc channels
          kiln::GemmConfig prep = std::get<kiln::GemmConfig>(p.kernels[0].config);
          prep.m = prep.lda = h * w, prep.stride_a = cc.c * h * w, prep.batch = at.n;
          const auto want_prep = kiln::gemm_geometry(prep, p.target.sm_count, 0);
          const auto got_prep = kiln::launch_for(p, 0, dims);
          CHECK(got_prep.grid.x == want_prep.grid.x);
          CHECK(got_prep.grid.z == at.n);
          const std::int64_t bytes = at.n * h * w * kiln::conv_tma_ldc(cc) * 4;
          CHECK(got_prep.workspace_bytes == bytes);
          for (std::size_t b = 0; b < p.buffers.size(); ++b)
            if (p.buffers[b].launch_kernel == 0) CHECK(p.buffer_bytes(b, dims) == bytes);
        }
        // The DynValue arguments evaluate to the launch's extents.
        for (const auto& arg : p.kernels[ki].args) {
          if (arg.kind != kiln::KernelArg::Kind::DynValue) continue;
          const std::int64_t want_value = arg.name == "conv_h"    ? h
                                          : arg.name == "conv_w"  ? w
                                          : arg.name == "conv_ho" ? at.ho
                                          : arg.name == "conv_wo" ? at.wo
                                                                  : at.ho * at.wo;
          CHECK(arg.value.evaluate(dims) == want_value);
        }
      }
    }
}

TEST_CASE("dyn conv spatial extents: what the conv cannot take is refused where the dim is declared") {
  auto refused = [](const std::string& op) {
    return refusal_of(kRefused, "conv.kiln", op, dyn_dims_at(kRefused, "conv.kiln", op, 12));
  };
  CHECK(refused("dyn_c") == "conv.kiln:2:19: op dyn_c: dim 'C' is dyn, but the conv template (for line 5) takes a dyn "
                            "dim only as its batch (the first axis of x and y) or as a spatial extent of x: the channels "
                            "and the filters are baked in (its im2col tables divide by them)");
  CHECK(refused("conv3d") == "conv.kiln:8:26: op conv3d: dim 'D' is dyn, but the conv template (for line 11) takes dyn "
                             "spatial extents on 1-d and 2-d forward convs only (a depth axis or a transposed conv runs "
                             "on templates that bake them in)");
  CHECK(refused("transposed") == "conv.kiln:14:26: op transposed: dim 'H' is dyn, but the conv template (for line 17) "
                                 "takes dyn spatial extents on 1-d and 2-d forward convs only (a depth axis or a "
                                 "transposed conv runs on templates that bake them in)");
  CHECK(refused("nhwc") == "conv.kiln:20:19: op nhwc: dim 'H' is dyn, but the conv template (for line 23) takes dyn "
                           "spatial extents in NHWC only where it is depthwise (NHWC runs on the sm_90a TMA engine, "
                           "whose tensor maps and tiles bake them in)");
  CHECK(refused("both") == "conv.kiln:26:12: op both: dim 'S' is dyn, but the conv template (for line 29) takes a dyn "
                           "dim as its batch or as a spatial extent, not as both");
  // y's extents are quotients of H: only the conv's own kernel reads them.
  CHECK(refused("reader") == "conv.kiln:32:26: op reader: dim 'H' is dyn, but the elementwise template (for line 36) reads "
                             "the extent (((H - 3) / 2) + 1) of its dyn dims, and only a pool's or conv's own kernel "
                             "reads such a quotient (a dyn pooled axis or conv spatial extent: that template and its "
                             "fused epilogue)");
}

TEST_CASE("dyn conv spatial extents: an image past the templates' 32-bit offsets is refused, at plan or launch") {
  // ConvNchw's table indexes an image with 32-bit offsets: 16 x 12000 x 12000 elements are too many.
  const auto p = plan_at("conv_hw", 20, "sm_80");
  auto dims = p.bound->dims;
  dims["H"] = 12000, dims["W"] = 12000;
  try {
    kiln::launch_for(p, 0, dims);
    FAIL("launched");
  } catch (const kiln::UnsupportedError& e) {
    CHECK(std::string(e.what()) == "conv_hw: an image of x has 16 x 12000 x 12000 elements at this launch; the conv "
                                   "template's im2col table indexes an image with 32-bit offsets (fewer than 2^31 "
                                   "elements)");
  }
  dims["H"] = 8000, dims["W"] = 8000;   // 1.02e9 elements: within
  CHECK(kiln::launch_for(p, 0, dims).grid.x > 0);
  // WgConvNchw (sm_90a) decodes a pixel within an image in 32 bits: y's images under 2^31 - 256
  // pixels (valid_tf32: stride 2, 5 taps of dilation 2, Ho = 1 at H = 5).
  const auto wg = plan_at("valid_tf32", 20, "sm_90a");
  REQUIRE(conv_of(wg.kernels[0]).kind == kiln::ConvKind::Wgmma);
  dims = wg.bound->dims;
  dims["H"] = 5, dims["W"] = 4294966787;   // Wo = 2147483392
  try {
    kiln::launch_for(wg, 0, dims);
    FAIL("launched");
  } catch (const kiln::UnsupportedError& e) {
    CHECK(std::string(e.what()) == "valid_tf32: an image of y has 1 x 2147483392 pixels at this launch; the sm_90a "
                                   "wgmma conv template takes fewer than 2147483392 per image");
  }
  dims["W"] = 4294966785;   // Wo = 2147483391: within
  CHECK(kiln::launch_for(wg, 0, dims).grid.x > 0);
  // The TMA engine's maps: an image's pixels under 2^31 (a map's coordinates), at each launch.
  const auto tma = plan_at("conv_hw", 20, "sm_90a");
  REQUIRE(conv_of(tma.kernels.back()).kind == kiln::ConvKind::Tma);
  dims = tma.bound->dims;
  dims["H"] = 46341, dims["W"] = 46341;
  try {
    kiln::launch_for(tma, tma.kernels.size() - 1, dims);
    FAIL("launched");
  } catch (const kiln::UnsupportedError& e) {
    CHECK(std::string(e.what()) == "conv_hw: x of 2 x 16 x 46341 x 46341 at this launch is past the sm_90a TMA conv "
                                   "engine's tensor maps: an extent reaches 2^31, past a tensor map's coordinates");
  }
  dims["H"] = 46340;   // 46340 x 46341 = 2147441940 pixels: within
  CHECK(kiln::launch_for(tma, tma.kernels.size() - 1, dims).grid.x > 0);
  // A static conv as big, on ConvNchw (sm_80): refused when planned.
  const char* big = "op big {\n  dims N = 1, C = 16, H = 12000, W = 12000, K = 8\n  in x: f32[N, C, H, W]\n"
                    "  in w: f32[K, C, 3, 3]\n  out y = conv2d(x, w, padding=1)\n}\n";
  CHECK(refusal_of(big, "big.kiln", "big", {}, "sm_80") ==
        "big.kiln:5:11: op big: this conv2d reads images of 16 x 12000 x 12000 elements; the implicit GEMM's im2col table "
        "indexes an image with 32-bit offsets (fewer than 2^31 elements)");
}

TEST_CASE("dyn conv spatial extents: `generic` shapes leave them baked in") {
  // Options::shapes = generic frees a conv's batch, never its spatial extents (the engines bake them in).
  const char* text = "op c {\n  dims N = 4, C = 32, H = 56, W = 56, K = 64\n  in x: f32[N, C, H, W]\n"
                     "  in w: f32[K, C, 3, 3]\n  out y = conv2d(x, w, padding=1)\n}\n";
  const auto ir = kiln::check_op(kiln::parse_spec(text, "c.kiln"), "c");
  CHECK(kiln::generic_dims(*ir) == std::set<std::string>{"N"});
}

TEST_CASE("dyn conv spatial extents: golden of a strided f16 conv over a dyn square side and batch") {
  check_golden("source/dyn_conv_spatial_s2_f16.cu", [] {
    const auto plan = plan_at("conv_s2_f16", 37, "sm_90a");
    return plan.text() + "\n" + all_sources(sources_of(plan));
  }());
}

TEST_CASE("dyn conv spatial extents: golden of a strided tf32 conv with a dyn batch on the TMA engine (sm_90a)") {
  check_golden("source/dyn_conv_spatial_tma_tf32.cu", [] {
    const auto plan = plan_at("tma_tf32", 37, "sm_90a");
    return plan.text() + "\n" + all_sources(sources_of(plan));
  }());
}

TEST_CASE("dyn conv spatial extents: golden of a tf32 conv without padding on WgConvNchw (sm_90a)") {
  check_golden("source/dyn_conv_spatial_valid_tf32.cu", [] {
    const auto plan = plan_at("valid_tf32", 37, "sm_90a");
    return plan.text() + "\n" + all_sources(sources_of(plan));
  }());
}

TEST_CASE("dyn conv spatial extents: every unit compiles with NVRTC for sm_80 and sm_90a") {
  if (!nvrtc_or_skip()) return;
  int units = 0;
  for (const auto& op : kOps)
    for (const char* arch : {"sm_80", "sm_90a"}) {
      CAPTURE(op);
      CAPTURE(arch);
      units += check_units_compile(plan_at(op, 37, arch), arch);
    }
  MESSAGE(units << " units compiled");
}
