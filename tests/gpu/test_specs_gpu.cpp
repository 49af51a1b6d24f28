// Every op in specs/ that kiln's templates cover, run on the GPU at several
// shapes and compared with the float64 reference. Ops no template covers yet are
// listed, not failed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "generator/frontend/frontend.h"
#include "gpu_test_util.h"
#include "runtime/driver.h"

namespace kiln::test {

namespace {

// Shape sets derived from the op's default dims. "long": every dim 3 but the one
// with the largest default, which is 100003 (prime): few long rows, where the
// planner splits rows, streams them in two passes or splits K.
// $KILN_GPU_SHAPES (a comma list of set names) runs only those sets: the
// compute-sanitizer runs of scripts/gpu_suite.sh use the small ones.
std::vector<std::pair<std::string, std::map<std::string, std::int64_t>>> shape_sets(const ir::Ir& ir) {
  static const std::int64_t kOdd[] = {7, 33, 127, 1001};
  std::map<std::string, std::int64_t> ones, small, odd, longest, defaults;
  int i = 0;
  std::string widest;
  std::int64_t widest_default = 0;
  for (const auto& d : ir.dims) {
    const std::int64_t def = d.default_value.value_or(64);
    ones[d.name] = 1;
    small[d.name] = std::min<std::int64_t>(def, 5);
    odd[d.name] = std::min<std::int64_t>(def, kOdd[i++ % 4]);
    longest[d.name] = 3;
    defaults[d.name] = def;
    if (def > widest_default) widest_default = def, widest = d.name;
  }
  if (!widest.empty()) longest[widest] = 100003;
  std::vector<std::pair<std::string, std::map<std::string, std::int64_t>>> sets = {
      {"ones", ones}, {"small", small}, {"odd", odd}, {"long", longest}, {"default", defaults}};
  if (const char* only = std::getenv("KILN_GPU_SHAPES"); only && *only) {
    const std::string list = std::string(",") + only + ",";
    std::erase_if(sets, [&](const auto& s) { return list.find("," + s.first + ",") == std::string::npos; });
  }
  return sets;
}

// Runs one (spec, op, shape) through run_and_check and prints a `gpu-check` line
// (scripts/gpu_suite.sh counts them). Tallies what it ran.
struct Checker {
  explicit Checker(Runtime& runtime) : rt(runtime) {}
  Runtime& rt;
  int checked = 0, failed = 0;
  double specialize_s = 0, inputs_s = 0, launch_s = 0, reference_s = 0;   // OpCheck's phases, summed
  std::string uncovered;
  std::set<std::string> templates;   // every template the checks ran

  // False when the op has no template (the caller stops trying other shapes).
  bool run(const std::string& file, const std::string& op, const std::string& label,
           const std::map<std::string, std::int64_t>& dims, OpCheckOptions opts) {
    const SpecFile spec = load_spec_file(file);
    auto ir = kiln::check_op(spec, op);
    std::map<std::string, ir::DimValue> given;
    for (const auto& [k, v] : dims) given[k] = {v, label};
    std::optional<ir::BoundIr> bound;
    try {
      bound.emplace(ir::bind(ir, given));
    } catch (const Error& e) {
      MESSAGE(op << " @" << label << ": shape not valid for this op (" << std::string(e.what()) << ")");
      return true;
    }
    if (ref::work_estimate(*bound) > 4e9) {
      MESSAGE(op << " @" << label << ": too large for the CPU reference; covered by bench/ against PyTorch");
      return true;
    }
    Bindings b;
    b.dims = dims;
    opts.seed += static_cast<std::uint64_t>(checked);
    OpCheck r;
    try {
      r = run_and_check(rt, file, op, b, opts);
    } catch (const std::exception& e) {
      ++failed;
      std::printf("gpu-check %-28s %-8s FAIL threw: %s\n", op.c_str(), label.c_str(), e.what());
      FAIL_CHECK(op << " @" << label << " threw: " << std::string(e.what()));
      return true;
    }
    if (!r.covered) {
      if (uncovered.find(op + " ") == std::string::npos) uncovered += op + " ";
      return false;
    }
    ++checked;
    specialize_s += r.specialize_s, inputs_s += r.inputs_s, launch_s += r.launch_s, reference_s += r.reference_s;
    for (const auto& k : rt.load_file(file).op(op).specialize(b).kernels()) templates.insert(k.template_name);
    std::string errors;
    for (const auto& c : r.outputs)
      errors += fmt::format(" max_abs={:.3g} max_rel={:.3g} norm_rel={:.3g}", c.max_abs_error, c.max_rel_error,
                            c.norm_rel_error);
    std::printf("gpu-check %-28s %-8s %-4s%s  %.3f ms  "
                "[host s: specialize %.2f, inputs %.2f, launch %.2f, reference %.2f]\n",
                op.c_str(), label.c_str(), r.ok ? "ok" : "FAIL", errors.c_str(), r.median_ms(), r.specialize_s,
                r.inputs_s, r.launch_s, r.reference_s);
    if (!r.ok) {
      ++failed;
      for (const auto& c : r.outputs)
        if (!c.ok) FAIL_CHECK(op << " @" << label << ": " << c.detail);
    }
    return true;
  }

  void summary() const {
    std::printf("gpu-check summary: %d checks, %d failed; not covered by a template yet: %s\n", checked, failed,
                uncovered.empty() ? "(none)" : uncovered.c_str());
    std::printf("gpu-check templates run: %s\n", fmt::format("{}", fmt::join(templates, " ")).c_str());
    std::printf("gpu-check host time: specialize %.1f s, inputs %.1f s, first launch %.1f s, "
                "reference and comparison %.1f s\n",
                specialize_s, inputs_s, launch_s, reference_s);
  }
};

// A copy of `file` with every f32 tensor type turned into `dtype` (in, let and
// out declarations alike), and every f32 scalar input too (`in eps: f32`: kiln does not
// mix an f32 scalar with a 16-bit tensor without a cast), written next to the other
// temporary files. Consts (`const eps: f32 = ...`) keep their type.
std::string retyped_copy(const std::string& file, const std::string& dtype) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t at = 0; (at = text.find("f32[", at)) != std::string::npos; at += dtype.size())
    text.replace(at, 3, dtype);
  for (std::size_t at = 0; (at = text.find(": f32\n", at)) != std::string::npos; at += dtype.size())
    text.replace(at + 2, 3, dtype);
  // `precision=` is for f32 operands: the half-type form of such an op is the op without it.
  for (std::size_t at; (at = text.find(", precision=\"")) != std::string::npos;)
    text.erase(at, text.find('"', at + 13) + 1 - at);
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("kiln-gpu-{}-{}", dtype, std::filesystem::path(file).filename().string());
  std::ofstream(path) << text;
  return path.string();
}

bool memory_bound_spec(const std::string& file) {
  for (const char* name : {"reductions.kiln", "scans.kiln", "norms.kiln", "min_reduce.kiln", "cumsum_exclusive.kiln"})
    if (std::filesystem::path(file).filename() == name) return true;
  return false;
}

// Every op of `file` with its f32 tensors retyped to f16 and to bf16, every dim capped at `cap`.
void check_half_types(Checker& checker, const std::string& file, std::int64_t cap) {
  for (const char* dtype : {"f16", "bf16"}) {
    const std::string copy = retyped_copy(file, dtype);
    const SpecFile retyped = load_spec_file(copy);
    for (const auto& op : retyped.op_names()) {
      std::shared_ptr<const ir::Ir> ir;   // held: the loop below reads its member
      try {
        ir = kiln::check_op(retyped, op);
      } catch (const Error& e) {
        // e.g. `precision=` is for f32 operands only: such an op has no half-type form.
        MESSAGE(op << " has no " << dtype << " form: " << std::string(e.what()));
        continue;
      }
      std::map<std::string, std::int64_t> dims;
      for (const auto& d : ir->dims)
        dims[d.name] = std::min<std::int64_t>(d.default_value.value_or(64), cap);
      OpCheckOptions opts;
      opts.seed = 7;
      checker.run(copy, op, dtype, dims, opts);
    }
  }
}

// Every kernel compiled afresh: no disk cache.
Options memory_only() {
  Options options;
  options.disk_cache = false;
  return options;
}

// The matrix tests below run whole or not at all: $KILN_GPU_SHAPES (set by the
// compute-sanitizer runs) skips them.
bool shape_filter_set() {
  if (!std::getenv("KILN_GPU_SHAPES")) return false;
  std::printf("%s KILN_GPU_SHAPES restricts the run to the shape sets of the first test\n", kSkipMarker);
  return true;
}

}  // namespace

TEST_CASE("gpu: every covered spec matches the float64 reference") {
  KILN_REQUIRE_GPU();
  Runtime rt(memory_only());
  Checker checker{rt};
  for (const auto& file : spec_files()) {
    const SpecFile spec = load_spec_file(file);
    for (const auto& op : spec.op_names()) {
      OpCheckOptions opts;
      opts.seed = 1234;
      for (const auto& [label, dims] : shape_sets(*kiln::check_op(spec, op)))
        if (!checker.run(file, op, label, dims, opts)) break;
    }
  }
  checker.summary();
  CHECK(checker.checked > 0);
}

// The sm_90a wgmma templates at shapes the shape sets above never give them (k contiguous in
// both operands, 16-byte rows): M, N and K tails, split-K with the reduce and the fused softmax,
// the one-split form with its own epilogue, and conv2d's im2col gather with padding, stride and
// tails, in fp32-accurate (3xTF32) and tf32 (gemm_bias_relu is tf32 on the op). The name starts like the test above so the compute-sanitizer runs of
// scripts/gpu_suite.sh include it. KILN_WGMMA_COMPARE=1 also runs each case through the portable
// sm_90 plan on the same inputs. A softmax after a long linear layer is held to a bound that grows
// with sqrt(K) and its logits (docs/semantics.md, "Tolerances"; K = 4000 missed the plain fp32
// bound identically on both paths before it, 3.12e-5).
TEST_CASE("gpu: every covered spec's wgmma path (sm_90a): tails, split-K, both precisions") {
  KILN_REQUIRE_GPU();
  KILN_REQUIRE_SM90A("the wgmma templates");
  struct Case {
    const char* file;
    const char* op;
    std::map<std::string, std::int64_t> dims;
    const char* template_name;   // the GEMM kernel the planner must choose
    const char* tf32_template = nullptr;   // where tf32 plans another one
  };
  const Case cases[] = {
      // A softmax follows: one K slice (K is short) in the workspace, then SplitKSoftmax; M and N
      // tails, a last k tile of 4 columns; and K = 4000 (see the note above).
      // tf32 takes the TMA engine's split-K (its partial sums, then the same SplitKSoftmax).
      {"linear_dropout_softmax.kiln", "linear_dropout_softmax", {{"B", 33}, {"IN", 644}, {"OUT", 200}},
       "gemm_wgmma_split_k", "gemm_tma"},
      {"linear_dropout_softmax.kiln", "linear_dropout_softmax", {{"B", 130}, {"IN", 516}, {"OUT", 1000}},
       "gemm_wgmma_split_k", "gemm_tma"},
      {"linear_dropout_softmax.kiln", "linear_dropout_softmax", {{"B", 33}, {"IN", 4000}, {"OUT", 200}},
       "gemm_wgmma_split_k", "gemm_tma"},
      // Bias and relu in the split-K reduce. gemm_bias_relu asks for tf32 on the op, so both
      // target precisions take split-K on the TMA engine.
      {"matmul.kiln", "gemm_bias_relu", {{"B", 33}, {"IN", 4000}, {"OUT", 200}}, "gemm_tma"},
      {"matmul.kiln", "gemm_bias_relu", {{"B", 300}, {"IN", 1028}, {"OUT", 520}}, "gemm_tma"},
      // Many tiles: one split, the epilogue in the GEMM itself: tf32 (on the op, or the target's)
      // takes the TMA engine, 3xTF32 the cp.async WgGemm.
      {"matmul.kiln", "gemm_bias_relu", {{"B", 1000}, {"IN", 516}, {"OUT", 1000}}, "gemm_tma"},
      {"matmul.kiln", "linear_bias", {{"B", 1000}, {"IN", 516}, {"OUT", 1000}}, "gemm_wgmma", "gemm_tma"},
      // A dropout in the TMA engine's epilogue (tf32 on the op): 1000 columns draw a Philox block
      // per four adjacent outputs (the four-lane form, [Note: four-lane epilogue] in
      // gemm_store.cuh), a row's last groups past the N edge; 998 columns draw per element.
      {"matmul.kiln", "linear_relu_dropout", {{"B", 1000}, {"IN", 516}, {"OUT", 1000}}, "gemm_tma"},
      {"matmul.kiln", "linear_relu_dropout", {{"B", 257}, {"IN", 260}, {"OUT", 998}}, "gemm_tma"},
      // More dropouts in the TMA engine's epilogue: tf32 with A m-major (through registers), K =
      // 1028 (33 k tiles) and K = 72 (3; row and column tail tiles); bf16 batches (the batch in
      // the dropout's flat index) on clusters of two CTAs with two consumers along N, one k tile.
      // (docs/notes/pending/dropout-ahead.patch draws the keep bits during the mainloop: a k tile
      // for each of a slab's column groups, or a rolled loop after the last k tile.)
      {"matmul.kiln", "linear_xt_dropout", {{"B", 2000}, {"IN", 1028}, {"OUT", 1000}}, "gemm_tma"},
      {"matmul.kiln", "linear_xt_dropout", {{"B", 2000}, {"IN", 72}, {"OUT", 2000}}, "gemm_tma"},
      {"matmul.kiln", "bmm_dropout_bf16", {{"BATCH", 3}, {"M", 77}, {"K", 72}, {"N", 1000}}, "gemm_tma"},
      {"matmul.kiln", "linear_bias", {{"B", 257}, {"IN", 2052}, {"OUT", 129}}, "gemm_wgmma_split_k", "gemm_tma"},
      // conv2d on wgmma: 130 out channels (two row tiles, the second of 2), odd spatial sizes,
      // 72 = 8 x 3 x 3 k' (a short last k tile); stride 2 + padding 1 with 7 out channels
      // (one 64-row tile) and 35 pixels (scalar stores). Small convs from 8 channels take the TMA
      // engine in 3xTF32 ([Note: small convs on the TMA engine]): those two in tf32 only.
      {"conv2d_3x3.kiln", "conv2d_3x3", {{"N", 2}, {"C", 8}, {"H", 17}, {"W", 35}, {"K", 130}}, "conv_tma",
       "conv_wgmma"},
      {"conv.kiln", "conv2d_stride2_pad1", {{"N", 3}, {"C", 4}, {"H", 9}, {"W", 13}, {"K", 7}}, "conv_wgmma"},
      {"conv.kiln", "conv2d_stride2_pad1", {{"N", 2}, {"C", 12}, {"H", 64}, {"W", 66}, {"K", 64}}, "conv_tma",
       "conv_wgmma"},
      // Stride-1 transposed convs on the TMA engine as forward convs of flipped filters: 36 input
      // channels (a 4-channel second k tile), 130 out channels (a tail tile), odd lengths; in 2-d
      // with padding 1 and dilation 2 (forward padding 3), 20 channels, a bias and relu.
      {"conv_nd.kiln", "conv_transpose1d_k3", {{"N", 3}, {"C", 36}, {"L", 20001}, {"K", 130}}, "conv_tma"},
      // 1-d stride-1 convs over NCHW x: in tf32 the engine maps x in place ([Note: NCHW x read in
      // place]): 36 and 40 channels (a k tile's channels past C zeros), 130 and 70 out channels,
      // padding 3 with dilation 2 (zeros past both ends), and a transposed conv's forward form.
      {"conv_nd.kiln", "conv1d_k3", {{"N", 3}, {"C", 36}, {"L", 20000}, {"K", 130}}, "conv_tma"},
      {"conv_nd.kiln", "conv1d_padded_dilated_bias", {{"N", 2}, {"C", 40}, {"L", 30000}, {"K", 70}}, "conv_tma"},
      {"conv_nd.kiln", "conv_transpose1d_k3", {{"N", 2}, {"C", 40}, {"L", 40000}, {"K", 70}}, "conv_tma"},
      {"conv_nd.kiln", "conv_transpose2d_s1_dilated_bias", {{"N", 2}, {"C", 20}, {"H", 99}, {"W", 301}, {"K", 70}},
       "conv_tma"},
      // Over three spatial axes (x a 5-D im2col map): conv3d with stride 1x2x1, padding 1x2x0,
      // dilation 2x1x3, 36 channels (a 4-channel second k tile), 70 out channels, odd extents, a
      // bias and relu; a stride-1 conv_transpose3d (3x5x7 filters, forward padding 2x4x6).
      {"conv_nd.kiln", "conv3d_asym_bias_relu", {{"N", 2}, {"C", 36}, {"D", 11}, {"H", 29}, {"W", 53}, {"K", 70}},
       "conv_tma"},
      {"conv_nd.kiln", "conv_transpose3d_s1", {{"N", 2}, {"C", 20}, {"D", 9}, {"H", 21}, {"W", 37}, {"K", 24}},
       "conv_tma"},
      // By stride phase: stride 3x2 with output_padding 1x0 (phase grids past the output along h,
      // 70 out channels, 40 channels); 3-d with stride 2, padding 1, dilation 2 (KernelBench 77's).
      {"conv_nd.kiln", "conv_transpose2d_strided_bias", {{"N", 3}, {"C", 40}, {"H", 61}, {"W", 131}, {"K", 70}},
       "conv_tma"},
      {"conv_nd.kiln", "conv_transpose3d_dilated", {{"N", 5}, {"C", 36}, {"D", 9}, {"H", 17}, {"W", 23}, {"K", 33}},
       "conv_tma"},
      // Small K, fp32-accurate: the operand pre-pass and the persistent wgmma SmallK (tf32 keeps
      // the mma.sync SmallK). 4100 = 16 x 256 + 4 rows and 64 x 64 + 4 columns: tail tiles both
      // ways; each CTA's range of ~8 tiles crosses row blocks (the A refill). K = 40 ends in a
      // short k tile; K = 96 takes 128x64 tiles with a B ring of 2.
      {"matmul_small_k.kiln", "matmul_small_k", {{"M", 4100}, {"N", 4100}, {"K", 64}}, "gemm_small_k_wgmma",
       "gemm_small_k"},
      {"matmul_small_k.kiln", "matmul_small_k", {{"M", 4100}, {"N", 4100}, {"K", 40}}, "gemm_small_k_wgmma",
       "gemm_small_k"},
      {"matmul_small_k.kiln", "matmul_small_k", {{"M", 4100}, {"N", 4100}, {"K", 96}}, "gemm_small_k_wgmma",
       "gemm_small_k"},
  };
  for (const Precision precision : {Precision::fp32_accurate, Precision::tf32}) {
    Options options = memory_only();
    options.precision = precision;
    Runtime rt(options);
    Checker checker{rt};
    for (const Case& c : cases) {
      const std::string file = source_dir() + "/specs/" + c.file;
      Bindings b;
      b.dims = c.dims;
      const auto kernels = rt.load_file(file).op(c.op).specialize(b).kernels();
      REQUIRE(!kernels.empty());
      const std::string want = precision == Precision::tf32 && c.tf32_template ? c.tf32_template : c.template_name;
      CHECK_MESSAGE(std::any_of(kernels.begin(), kernels.end(), [&](const auto& k) { return k.template_name == want; }),
                    c.op << ": planned " << kernels[0].template_name << ", not " << want);
      OpCheckOptions opts;
      opts.seed = 4321;
      checker.run(file, c.op, precision == Precision::tf32 ? "wg-tf32" : "wg-fp32", c.dims, opts);
      if (std::getenv("KILN_WGMMA_COMPARE")) {   // the same inputs through the portable sm_90 plan
        Options portable = options;
        portable.arch = "sm_90";
        Runtime rt90(portable);
        Checker other{rt90};
        other.run(file, c.op, "sm90-ref", c.dims, opts);
      }
    }
    checker.summary();
    CHECK(checker.checked == static_cast<int>(std::size(cases)));
  }
}

// GemvMma ([Note: skinny products on the tensor cores] in gemv_mma.cuh) at shapes the shape sets
// never give it: K slices of up to kGemvMmaMaxSlice (896) k at 8192 x 12 x 8192 (10 slices; the
// tuner's candidates go to 1664), one very long K on few rows (64 x 9 x 262144: 293 slices),
// rows past the last block's, in fp32-accurate (3xTF32) and tf32; and the tf32 linear layer with
// 16 rows of x k-contiguous.
TEST_CASE("gpu: skinny products on the tensor cores (GemvMma): long K slices, both precisions") {
  KILN_REQUIRE_GPU();
  struct Case {
    const char* op;
    std::map<std::string, std::int64_t> dims;
  };
  const Case cases[] = {
      {"mm_skinny_mma", {{"M", 8192}, {"K", 8192}, {"P", 12}}},
      {"mm_skinny_mma", {{"M", 8191}, {"K", 8196}, {"P", 16}}},
      {"mm_skinny_mma", {{"M", 64}, {"K", 262144}, {"P", 9}}},
      {"linear_skinny_tf32", {{"R", 16}, {"N", 4097}, {"K", 4100}}},
  };
  const std::string file = source_dir() + "/specs/gemm.kiln";
  for (const Precision precision : {Precision::fp32_accurate, Precision::tf32}) {
    Options options = memory_only();
    options.precision = precision;
    Runtime rt(options);
    Checker checker{rt};
    for (const Case& c : cases) {
      Bindings b;
      b.dims = c.dims;
      const auto kernels = rt.load_file(file).op(c.op).specialize(b).kernels();
      REQUIRE(!kernels.empty());
      CHECK_MESSAGE(kernels[0].template_name == "gemv_mma", c.op << ": planned " << kernels[0].template_name);
      OpCheckOptions opts;
      opts.seed = 97;
      checker.run(file, c.op, precision == Precision::tf32 ? "gemv-mma-tf32" : "gemv-mma-fp32", c.dims, opts);
    }
    checker.summary();
    CHECK(checker.checked == static_cast<int>(std::size(cases)));
  }
}

// Issue 4's matrix for the memory-bound specs, beyond the shape sets above: rows
// of 32767 and one huge row; NaN and +-inf inputs; f16 and bf16 inputs.
TEST_CASE("gpu: memory-bound specs on odd sizes, special values and half types") {
  KILN_REQUIRE_GPU();
  if (shape_filter_set()) return;
  Runtime rt(memory_only());
  Checker checker{rt};
  for (const auto& file : spec_files()) {
    if (!memory_bound_spec(file)) continue;
    const SpecFile spec = load_spec_file(file);
    for (const auto& op : spec.op_names()) {
      const auto ir = kiln::check_op(spec, op);
      // For each axis in turn: that axis 32767 and the others 3; then that axis
      // 2^24 + 43 (prime) and the others 1 (one huge row or column).
      std::map<std::string, std::int64_t> odd;
      for (const auto& d : ir->dims) odd[d.name] = std::min<std::int64_t>(d.default_value.value_or(64), 1001);
      OpCheckOptions opts;
      opts.seed = 99;
      OpCheckOptions specials = opts;   // about one element in 5000 is NaN, +inf or -inf
      specials.special_fraction = 2e-4;
      // cumprod of values in [0, 1) underflows to 0 in f32 after ~150 elements but
      // not in float64, so a later infinity gives NaN (0 * inf) on the GPU and +-inf
      // in the reference (docs/semantics.md, "Tolerances"): NaN inputs only there.
      specials.special_infinities = std::none_of(ir->nodes.begin(), ir->nodes.end(),
                                                 [](const ir::Node& n) { return n.kind == ir::OpKind::Cumprod; });
      bool covered = checker.run(file, op, "nan-inf", odd, specials);
      for (const auto& axis : ir->dims) {
        if (!covered) break;
        std::map<std::string, std::int64_t> rows32767, huge_row;
        for (const auto& d : ir->dims) {
          rows32767[d.name] = d.name == axis.name ? 32767 : 3;
          huge_row[d.name] = d.name == axis.name ? (std::int64_t{1} << 24) + 43 : 1;
        }
        checker.run(file, op, "32767@" + axis.name, rows32767, opts);
        checker.run(file, op, "nan-inf-32767@" + axis.name, rows32767, specials);
        checker.run(file, op, "huge@" + axis.name, huge_row, opts);
      }
    }
    check_half_types(checker, file, 1001);
  }
  checker.summary();
  CHECK(checker.checked > 0);
}

TEST_CASE("gpu: matmul and conv specs with f16 and bf16 inputs") {
  KILN_REQUIRE_GPU();
  if (shape_filter_set()) return;
  Runtime rt(memory_only());
  Checker checker{rt};
  for (const auto& file : spec_files()) {
    const auto name = std::filesystem::path(file).filename();
    if (name == "matmul.kiln" || name == "conv.kiln" || name == "conv2d_3x3.kiln" || name == "matmul_small_k.kiln" ||
        name == "linear_dropout_softmax.kiln")
      check_half_types(checker, file, 37);
  }
  checker.summary();
  CHECK(checker.checked > 0);
}

}  // namespace kiln::test
