// Emission of the contraction template family: instantiation units for gemm.cuh and
// conv_igemm.cuh (tests/templates/gemm_*.cu and conv_*.cu are the hand-written models).
//
// [Note: the epilogue functor]
// The fused elementwise chain after the anchor becomes Epilogue::operator(): the accumulator
// is bound as the anchor's value at the output coordinates (batch dims..., row, col for a
// matmul; n, k, ho, wo for a conv), and ExprEmitter writes the chain up to the stored node,
// loading side operands (a bias) by their own coordinates and hashing dropout by the flat
// index of its output, so the mask is the elementwise template's bit for bit. A chain that
// is only the anchor uses kiln::gemm::Identity. Extra stores of the same value (an output
// that is also read elsewhere under another buffer) are written by the functor itself.
#include <set>

#include "generator/support/assert.h"
#include "generator/emit/emitter.h"

namespace kiln {

namespace {

std::string b(std::int64_t v) { return v ? "true" : "false"; }

const char* precision_type(std::int64_t code) {
  return code == 0 ? "kiln::Ieee" : code == 1 ? "kiln::Tf32" : "kiln::Tf32x3";
}

const char* layout_name(std::int64_t col_major) { return col_major ? "kiln::gemm::kColMajor" : "kiln::gemm::kRowMajor"; }

std::int64_t param(const PlannedKernel& k, const char* name) {
  auto it = k.params.find(name);
  KILN_ASSERT(it != k.params.end(), "kernel {} has no parameter {}", k.template_name, name);
  return it->second;
}

std::string pointer_of(const Plan& plan, ir::NodeId leaf) { return UnitParts::pointer_name(plan, plan.leaves.at(leaf)); }

std::string index_line(const PlannedKernel& k) {
  return fmt::format("using Index = {};  // {}\n", k.index64 ? "long long" : "int",
                     k.index64 ? "some tensor has 2^31 elements or more" : "every tensor has fewer than 2^31 elements");
}

// Does the value stored by the kernel hash a dropout mask (then philox.cuh is needed)?
bool chain_has_dropout(const Plan& plan, ir::NodeId end, ir::NodeId anchor) {
  std::vector<ir::NodeId> stack{end};
  std::set<ir::NodeId> seen;
  while (!stack.empty()) {
    const ir::NodeId id = stack.back();
    stack.pop_back();
    if (id == anchor || !seen.insert(id).second || (plan.leaves.count(id) && id != end)) continue;
    const auto& n = plan.ir().node(id);
    if (n.kind == ir::OpKind::Dropout) return true;
    stack.insert(stack.end(), n.operands.begin(), n.operands.end());
  }
  return false;
}

// The value the kernel stores: the end of the epilogue chain (the softmax's operand when the
// softmax is planned as row statistics).
ir::NodeId epilogue_end(const Plan& plan, const PlannedKernel& k) {
  const ir::NodeId end = k.stores[0].node;
  const auto& n = plan.ir().node(end);
  return n.kind == ir::OpKind::Softmax && end != k.anchor ? n.operands[0] : end;
}

// Writes `struct Epilogue` into unit.functors (or nothing) and returns its construction.
// `coords_lines` declares the output coordinates from the functor's arguments.
std::string epilogue(const Plan& plan, const PlannedKernel& k, UnitParts& unit, const std::string& signature,
                     const std::vector<std::string>& coord_lines, const Coords& coords) {
  const ir::NodeId end = epilogue_end(plan, k);
  const bool extra_stores = k.stores.size() > 1 && plan.ir().node(k.stores[0].node).kind != ir::OpKind::Softmax;
  if (end == k.anchor && !extra_stores) return "kiln::gemm::Identity{}";
  CodeWriter w;
  ExprEmitter ex(plan, w);
  w.open_block("struct Epilogue");
  UnitParts::declare_members(plan, k, w, ex);
  w.blank();
  w.open_block(fmt::format("__device__ __forceinline__ float operator()({}) const", signature));
  for (const auto& l : coord_lines) w.line("{}", l);
  ex.bind_value(k.anchor, coords, "acc");
  ex.compute_here(end);
  const std::string v = ex.value(end, coords);
  if (extra_stores) {
    std::set<int> done{k.stores[0].buffer};
    for (const auto& s : k.stores) {
      if (!done.insert(s.buffer).second) continue;
      const DType t = plan.ir().node(s.node).dtype;
      const std::string stored = t == DType::f16 || t == DType::bf16
                                     ? fmt::format("kiln::from_float<{}>({})", storage_type(t), v) : v;
      w.line("{}[{}] = {};  // a second copy of the stored value", UnitParts::pointer_name(plan, s.buffer),
             ex.flat_index(s.node, coords), stored);
    }
  }
  w.line("return {};", v);
  w.close_block();
  w.close_block(";");
  unit.functors = w.str();
  return fmt::format("Epilogue{{{}}}", UnitParts::member_inits(plan, k));
}

std::string includes(const Plan& plan, const PlannedKernel& k, const char* header) {
  std::string s = fmt::format("#include \"kiln/{}\"", header);
  if (!k.stores.empty() && chain_has_dropout(plan, epilogue_end(plan, k), k.anchor)) s += "\n#include \"kiln/philox.cuh\"";
  return s;
}

// Output coordinates of a matmul epilogue: the flat batch index split into the batch dims.
Coords matmul_coords(const Plan& plan, const PlannedKernel& k, std::vector<std::string>& lines) {
  const auto& out = plan.bound->shape(k.anchor);
  const std::size_t nb = out.size() - 2;
  Coords c;
  std::string rest = "batch";
  for (std::size_t d = 0; d < nb; ++d) {
    std::int64_t below = 1;
    for (std::size_t e = d + 1; e < nb; ++e) below *= out[e];
    if (nb == 1) {
      c.push_back("batch");
      break;
    }
    const std::string name = fmt::format("b{}", d);
    lines.push_back(fmt::format("const Index {} = batch / {} % {};", name, below, out[d]));
    c.push_back(name);
  }
  c.push_back("row");
  c.push_back("col");
  return c;
}

void emit_gemm_family(const Plan& plan, const PlannedKernel& k, UnitParts& unit) {
  const std::string& t = k.template_name;
  const bool reduce = t == "gemm_split_k_reduce";
  const ir::NodeId a = param(k, "a_leaf"), bl = param(k, "b_leaf");
  const char* elem = storage_type(plan.ir().node(a).dtype);
  const char* prec = precision_type(param(k, "precision"));
  CodeWriter c;
  c.raw_line(index_line(k).substr(0, index_line(k).size() - 1));
  c.line("constexpr long long kM = {}, kN = {}, kK = {}, kBatch = {};", param(k, "m"), param(k, "n"), param(k, "k"),
         param(k, "batch"));
  const std::string ws = k.params.count("workspace") ? UnitParts::pointer_name(plan, static_cast<int>(param(k, "workspace"))) : "";
  std::string sig = "float acc, Index batch, Index row, Index col";
  std::vector<std::string> lines;
  Coords coords;
  if (t != "gemm_split_k" && t != "gemm_wgmma_split_k") coords = matmul_coords(plan, k, lines);
  if (t == "gemm_small_k") {
    c.line("using Kernel = kiln::gemm::SmallK<{}, Index, kM, kN, kK, /*lda*/ {}, /*ldb*/ {}, /*ldc*/ {},", prec,
           param(k, "lda"), param(k, "ldb"), param(k, "ldc"));
    c.line("                                  /*BM*/ {}, /*BN*/ {}, /*WM*/ {}, /*WN*/ {}>;", param(k, "bm"),
           param(k, "bn"), param(k, "wm"), param(k, "wn"));
    const std::string epi = epilogue(plan, k, unit, "float acc, Index, Index row, Index col", lines, coords);
    unit.body = fmt::format("  Kernel::run({}, {}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl),
                            UnitParts::pointer_name(plan, k.stores[0].buffer), epi);
  } else if (t == "gemm_small_k_prep") {
    c.line("// A and B^T to k-contiguous tf32 hi/lo parts in the workspace (B is n-contiguous)");
    c.line("using Prep = kiln::sm90::SmallKPrep<{}, Index, kM, kN, kK, /*lda*/ {}, /*ldb*/ {}>;", prec,
           param(k, "lda"), param(k, "ldb"));
    unit.body = fmt::format("  Prep::run({}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl), ws);
  } else if (t == "gemm_small_k_wgmma") {
    c.line("// sm_90a: persistent wgmma over the pre-pass's workspace, two accumulator sets");
    c.line("using Kernel = kiln::sm90::WgSmallK<{}, Index, kM, kN, kK, /*ldc*/ {}, /*BM*/ {}, /*BN*/ {}, "
           "/*BStages*/ {}, /*streamC*/ {}>;", prec, param(k, "ldc"), param(k, "bm"), param(k, "bn"),
           param(k, "b_stages"), b(param(k, "stream_c")));
    const std::string epi = epilogue(plan, k, unit, "float acc, Index, Index row, Index col", lines, coords);
    unit.body = fmt::format("  Kernel::run({}, {}, {});", ws, UnitParts::pointer_name(plan, k.stores[0].buffer), epi);
  } else if (t == "gemm" || t == "gemm_split_k") {
    const bool split = t == "gemm_split_k";
    c.line("using Kernel = kiln::gemm::{}<{}, {},{} Index, kM, kN, kK, kBatch,", split ? "GemmSplitK" : "Gemm", elem,
           prec, split ? "" : fmt::format(" {},", storage_type(plan.ir().node(epilogue_end(plan, k)).dtype)));
    c.line("    {}, {}, /*lda*/ {}, /*ldb*/ {},{} /*strides*/ {}, {},{}", layout_name(param(k, "layout_a")),
           layout_name(param(k, "layout_b")), param(k, "lda"), param(k, "ldb"),
           split ? "" : fmt::format(" /*ldc*/ {},", param(k, "ldc")), param(k, "stride_a"), param(k, "stride_b"),
           split ? "" : fmt::format(" {},", param(k, "stride_c")));
    c.line("    /*BM*/ {}, /*BN*/ {}, /*BK*/ {}, /*WM*/ {}, /*WN*/ {}, /*Stages*/ {}, /*vecA*/ {}, /*vecB*/ {},",
           param(k, "bm"), param(k, "bn"), param(k, "bk"), param(k, "wm"), param(k, "wn"), param(k, "stages"),
           b(param(k, "vec_a")), b(param(k, "vec_b")));
    if (split) {
      c.line("    /*SplitK*/ {}>;", param(k, "split_k"));
      unit.body = fmt::format("  Kernel::run({}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl), ws);
    } else {
      c.line("    /*vecC*/ {}, /*streamC*/ {}, /*rowStats*/ {}>;", b(param(k, "vec_c")), b(param(k, "stream_c")),
             b(param(k, "row_stats")));
      const std::string epi = epilogue(plan, k, unit, sig, lines, coords);
      unit.body = fmt::format("  Kernel::run({}, {}, {}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl),
                              UnitParts::pointer_name(plan, k.stores[0].buffer), epi,
                              param(k, "row_stats") ? ws : "nullptr");
    }
  } else if (t == "gemm_wgmma" || t == "gemm_wgmma_split_k") {
    const bool split = t == "gemm_wgmma_split_k";
    c.line("// sm_90a: wgmma on 128-byte-swizzled shared memory; A row-major, B k-contiguous");
    c.line("using Kernel = kiln::sm90::{}<{}, Index, kM, kN, kK, kBatch, /*lda*/ {}, /*ldb*/ {}, /*strides*/ {}, {},",
           split ? "WgGemmSplitK" : "WgGemm", prec, param(k, "lda"), param(k, "ldb"), param(k, "stride_a"),
           param(k, "stride_b"));
    if (split) {
      c.line("    /*BM*/ {}, /*BN*/ {}, /*Stages*/ {}, /*BKMajor*/ true, /*SplitK*/ {}>;", param(k, "bm"),
             param(k, "bn"), param(k, "stages"), param(k, "split_k"));
      unit.body = fmt::format("  Kernel::run({}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl), ws);
    } else {
      c.line("    /*ldc*/ {}, /*strideC*/ {}, /*BM*/ {}, /*BN*/ {}, /*Stages*/ {}, /*BKMajor*/ true, /*vecC*/ {}, "
             "/*streamC*/ {}>;", param(k, "ldc"), param(k, "stride_c"), param(k, "bm"), param(k, "bn"),
             param(k, "stages"), b(param(k, "vec_c")), b(param(k, "stream_c")));
      const std::string epi = epilogue(plan, k, unit, sig, lines, coords);
      unit.body = fmt::format("  Kernel::run({}, {}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl),
                              UnitParts::pointer_name(plan, k.stores[0].buffer), epi);
    }
  } else if (t == "gemm_split_k_softmax") {
    c.line("// one CTA per row of all batches; the softmax over the last axis is fused");
    c.line("using Reduce = kiln::gemm::SplitKSoftmax<Index, kM, kN, kBatch, /*SplitK*/ {}, {}>;", param(k, "split_k"),
           k.block.x);
    const std::string epi = epilogue(plan, k, unit, sig, lines, coords);
    unit.body = fmt::format("  Reduce::run({}, {}, {});", ws, UnitParts::pointer_name(plan, k.stores[0].buffer), epi);
  } else {
    KILN_ASSERT(reduce, "unknown gemm template {}", t);
    c.line("using Reduce = kiln::gemm::SplitKReduce<{}, Index, kM, kN, kBatch, /*SplitK*/ {}, /*ldc*/ {}, /*strideC*/ "
           "{}, /*streamC*/ {}, {}>;", storage_type(plan.ir().node(k.stores[0].node).dtype), param(k, "split_k"),
           param(k, "ldc"), param(k, "stride_c"), b(param(k, "stream_c")), k.block.x);
    const std::string epi = epilogue(plan, k, unit, sig, lines, coords);
    unit.body = fmt::format("  Reduce::run({}, {}, {});", ws, UnitParts::pointer_name(plan, k.stores[0].buffer), epi);
  }
  unit.constants = c.str();
  const bool sm90 = t == "gemm_wgmma" || t == "gemm_wgmma_split_k" || t == "gemm_small_k_prep" ||
                    t == "gemm_small_k_wgmma";
  unit.includes = includes(plan, k, sm90 ? "gemm_sm90.cuh" : "gemm.cuh");
}

void emit_softmax_finalize(const Plan& plan, const PlannedKernel& k, UnitParts& unit) {
  CodeWriter c;
  c.raw_line(index_line(k).substr(0, index_line(k).size() - 1));
  c.line("// rows of all batches: {} x {}", param(k, "batch"), param(k, "m"));
  c.line("using Finalize = kiln::gemm::SoftmaxFinalize<Index, {}, {}, /*tiles per row*/ {}, {}>;",
         param(k, "batch") * param(k, "m"), param(k, "n"), param(k, "tiles_n"), param(k, "threads"));
  unit.constants = c.str();
  unit.includes = "#include \"kiln/gemm.cuh\"";
  unit.body = fmt::format("  Finalize::run({}, {});", UnitParts::pointer_name(plan, k.stores[0].buffer),
                          UnitParts::pointer_name(plan, static_cast<int>(param(k, "workspace"))));
}

void emit_conv(const Plan& plan, const PlannedKernel& k, UnitParts& unit) {
  const auto& node = plan.ir().node(k.anchor);
  const ir::NodeId x = node.operands[0], w = node.operands[1];
  const char* elem = storage_type(plan.ir().node(x).dtype);
  const char* out = storage_type(plan.ir().node(k.stores[0].node).dtype);
  const bool nhwc = param(k, "nhwc") != 0;
  CodeWriter c;
  c.raw_line(index_line(k).substr(0, index_line(k).size() - 1));
  c.line("// N, C, H, W, K, R, S, stride, padding, dilation, groups");
  c.line("using Shape = kiln::conv::ConvShape<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}>;", param(k, "n"),
         param(k, "c"), param(k, "h"), param(k, "w"), param(k, "k"), param(k, "r"), param(k, "s"), param(k, "stride_h"),
         param(k, "stride_w"), param(k, "pad_h"), param(k, "pad_w"), param(k, "dil_h"), param(k, "dil_w"),
         param(k, "groups"));
  if (k.template_name == "conv_depthwise") {
    c.line("using Kernel = kiln::conv::DepthwiseDirect<{}, {}, Index, Shape, /*nhwc*/ {}, {}>;", elem, out, b(nhwc),
           param(k, "threads"));
  } else if (k.template_name == "conv_wgmma") {
    c.line("// sm_90a: wgmma on 128-byte-swizzled shared memory, im2col gathered by 4-byte cp.async");
    c.line("using Kernel = kiln::sm90::WgConvNchw<{}, Index, Shape, /*BM*/ {}, /*BN*/ {}, /*Stages*/ {}, /*vecY*/ {}, "
           "/*stream*/ {}>;", precision_type(param(k, "precision")), param(k, "bm"), param(k, "bn"),
           param(k, "stages"), b(param(k, "vec_y")), b(param(k, "stream")));
  } else {
    c.line("using Kernel = kiln::conv::ConvNchw<{}, {}, {}, Index, Shape, /*BM*/ {}, /*BN*/ {}, /*BK*/ {}, /*WM*/ {},",
           elem, precision_type(param(k, "precision")), out, param(k, "bm"), param(k, "bn"), param(k, "bk"),
           param(k, "wm"));
    c.line("                                    /*WN*/ {}, /*Stages*/ {}, /*vecW*/ {}, /*stream*/ {}>;", param(k, "wn"),
           param(k, "stages"), b(param(k, "vec_w")), b(param(k, "stream")));
  }
  unit.constants = c.str();
  std::vector<std::string> lines = {fmt::format("const Index ho = hw / {0}, wo = hw % {0};", param(k, "wo"))};
  const Coords coords = nhwc ? Coords{"n", "ho", "wo", "k"} : Coords{"n", "k", "ho", "wo"};
  const std::string epi = epilogue(plan, k, unit, "float acc, Index n, Index k, Index hw", lines, coords);
  unit.body = fmt::format("  Kernel::run({}, {}, {}, {});", pointer_of(plan, x), pointer_of(plan, w),
                          UnitParts::pointer_name(plan, k.stores[0].buffer), epi);
  unit.includes = includes(plan, k, k.template_name == "conv_wgmma" ? "conv_sm90.cuh" : "conv_igemm.cuh");
}

}  // namespace

const AnchorEmitter* contraction_emitter(const std::string& template_name) {
  static const std::map<std::string, AnchorEmitter> kEmitters = {
      {"gemm", emit_gemm_family},
      {"gemm_small_k", emit_gemm_family},
      {"gemm_split_k", emit_gemm_family},
      {"gemm_split_k_reduce", emit_gemm_family},
      {"gemm_wgmma", emit_gemm_family},
      {"gemm_wgmma_split_k", emit_gemm_family},
      {"gemm_small_k_prep", emit_gemm_family},
      {"gemm_small_k_wgmma", emit_gemm_family},
      {"gemm_split_k_softmax", emit_gemm_family},
      {"gemm_softmax_finalize", emit_softmax_finalize},
      {"conv_nchw", emit_conv},
      {"conv_depthwise", emit_conv},
      {"conv_wgmma", emit_conv},
  };
  auto it = kEmitters.find(template_name);
  return it == kEmitters.end() ? nullptr : &it->second;
}

}  // namespace kiln
