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
#include <optional>
#include <set>

#include "generator/support/assert.h"
#include "generator/emit/emitter.h"

namespace kiln {

namespace {

// The tag type of a precision (mma.cuh).
const char* precision_type(MmaPrecision p) {
  return p == MmaPrecision::Ieee ? "kiln::Ieee" : p == MmaPrecision::Tf32 ? "kiln::Tf32" : "kiln::Tf32x3";
}

const char* layout_name(GemmLayout l) {
  return l == GemmLayout::ColMajor ? "kiln::gemm::kColMajor" : "kiln::gemm::kRowMajor";
}

std::string pointer_of(const Plan& plan, ir::NodeId leaf) { return UnitParts::pointer_name(plan, plan.leaves.at(leaf)); }

// The leaf a matmul operand is read from: the operand, or the Input under a transposed view. (Not
// from the config's layout: the TMA engine's config describes what it maps, which after a
// OperandPrep is the workspace, not the operand.)
ir::NodeId operand_leaf(const Plan& plan, const PlannedKernel& k, int i) {
  const ir::NodeId op = plan.ir().node(k.anchor).operands[static_cast<std::size_t>(i)];
  return plan.leaves.count(op) ? op : plan.ir().node(op).operands[0];
}

// The kernel's workspace buffer passed by pointer (split-K partial sums, row statistics, SmallK's
// parts), or -1.
int workspace_arg(const Plan& plan, const PlannedKernel& k) {
  int found = -1;
  for (const auto& arg : k.args) {
    if (arg.kind != KernelArg::Kind::Buffer || plan.buffers[static_cast<std::size_t>(arg.buffer)].kind != BufferKind::Workspace)
      continue;
    KILN_ASSERT(found < 0, "kernel {} has more than one workspace", k.template_name);
    found = arg.buffer;
  }
  return found;
}

std::string workspace_pointer(const Plan& plan, const PlannedKernel& k) {
  const int b = workspace_arg(plan, k);
  KILN_ASSERT(b >= 0, "kernel {} has no workspace", k.template_name);
  return UnitParts::pointer_name(plan, b);
}

// The checks every unit ends with: the template's own block size and shared memory against the
// planner's (`type` the instantiated template), then the launch from the family's rule.
// `with_grid`: the grid is the planned one (a dyn extent's is a launch's).
void template_checks(const PlannedKernel& k, UnitParts& unit, const std::string& type, bool dynamic_smem,
                     const std::string& geometry, std::optional<bool> with_grid = std::nullopt) {
  unit.checks += fmt::format("static_assert({}::kThreads == {}{}, \"the template's block size or shared memory differs "
                             "from the planner's\");\n", type, k.block.x,
                             dynamic_smem ? fmt::format(" && {}::kSmemBytes == {}", type, k.shared_bytes) : "");
  unit.launch_check(k, geometry, with_grid.value_or(k.dyn_outer.empty()));
}

// [Note: dyn matmul] (plan_contraction.cpp): a kernel whose M, N, K or batches are dyn (its config
// holds 0 there) passes that extent to the template's run() as a gemm::DynShape; "" for a static
// kernel.
std::string dyn_shape_arg(const PlannedKernel& k, const GemmConfig& config) {
  if (k.dyn_outer.empty()) return "";
  auto field = [](long long v) { return v == 0 ? "dyn_extent" : "0"; };
  return fmt::format(", kiln::gemm::DynShape{{/*m=*/{}, /*n=*/{}, /*k=*/{}, /*batch=*/{}}}", field(config.m),
                     field(config.n), field(config.k), field(config.batch));
}

// Which extent of the op a kernel's dyn extent is (the TMA engine's m and n are the op's n and m
// under swap_ab).
const char* dyn_extent_text(const GemmConfig& config) {
  if (config.batch == 0) return "dyn batches";
  if (config.k == 0) return "dyn K";
  if (config.m == 0) return config.swap_ab ? "dyn N (the engine's M: it computes the transpose)" : "dyn M";
  return config.swap_ab ? "dyn M (the engine's N: it computes the transpose)" : "dyn N";
}

// The value the kernel stores: the end of the epilogue chain (the softmax's operand when the
// softmax is planned as row statistics).
ir::NodeId epilogue_end(const Plan& plan, const PlannedKernel& k) {
  const ir::NodeId end = k.stores[0].node;
  const auto& n = plan.ir().node(end);
  return n.kind == ir::OpKind::Softmax && end != k.anchor ? n.operands[0] : end;
}

// Writes the Epilogue's lanes4 ([Note: four-lane epilogue] in gemm_store.cuh): the chain at the
// columns col .. col + 3, where a dropout whose last axis is those columns, of a static extent that
// is a multiple of 4, draws one Philox block for the four (word k for lane k: the flat index of
// lane 0 is then a multiple of 4). Any other dropout draws per element, as operator() does.
void write_lanes4(const Plan& plan, const PlannedKernel& k, CodeWriter& w, ExprEmitter& ex,
                  const std::vector<std::string>& coord_lines, const Coords& coords, ir::NodeId end) {
  constexpr int kLanes = 4;
  const std::string lane_col[kLanes] = {coords.back(), "col1", "col2", "col3"};
  const char* acc[kLanes] = {"acc.x", "acc.y", "acc.z", "acc.w"};
  w.open_block(fmt::format("__device__ __forceinline__ float4 lanes4(float4 acc, Index batch, Index row, Index {}) const",
                           coords.back()));
  for (const auto& l : coord_lines) w.line("{}", l);
  w.line("const Index col1 = {0} + 1, col2 = {0} + 2, col3 = {0} + 3;", coords.back());
  ex.reset();
  int lane = 0;
  std::map<std::pair<ir::NodeId, Coords>, std::string> blocks;   // (dropout, lane 0's coords) -> its block
  ex.dropout_bits_hook = [&](ir::NodeId id, const Coords& at, const std::string& seed) -> std::optional<std::string> {
    if (at.empty() || at.back() != lane_col[lane]) return std::nullopt;
    for (std::size_t d = 0; d + 1 < at.size(); ++d)   // another axis that moves with the lane: not adjacent
      if (at[d].find("col") != std::string::npos) return std::nullopt;
    const auto& shape = plan.bound->shape(id);
    if (dyn_extent(plan, id, shape.size() - 1) || computed_dyn_extent(plan, id, shape.size() - 1) ||
        shape.back() % kLanes != 0)
      return std::nullopt;
    Coords lane0 = at;
    lane0.back() = lane_col[0];
    const auto key = std::make_pair(id, lane0);
    if (lane == 0) {
      const std::string name = fmt::format("words{}", blocks.size());
      w.line("const kiln::PhiloxBlock {} = kiln::dropout_block({}, static_cast<unsigned long long>({}));  // lanes 0-3",
             name, seed, ex.flat_index(id, at));
      blocks[key] = name;
    }
    const auto it = blocks.find(key);
    if (it == blocks.end()) return std::nullopt;
    return fmt::format("{}.v[{}]", it->second, lane);
  };
  std::string v[kLanes];
  for (lane = 0; lane < kLanes; ++lane) {
    Coords at = coords;
    at.back() = lane_col[lane];
    ex.bind_value(k.anchor, at, rounded_to(plan.ir().node(k.anchor).dtype, acc[lane]));
    v[lane] = ex.value(end, at);
  }
  ex.dropout_bits_hook = nullptr;
  w.line("return make_float4({}, {}, {}, {});", v[0], v[1], v[2], v[3]);
  w.close_block();
}

// Writes `struct Epilogue` into unit.functors (or nothing) and returns its construction.
// `coords_lines` declares the output coordinates from the functor's arguments. With `lanes4` (a
// template that gives it four adjacent columns of the op: SplitKSoftmax's rows in registers, and
// gemm::store_fragments into a row-major C, which the mma.sync, wgmma and TMA engines use but
// not under swap_ab) and a dropout in the chain, also the four-lane form.
std::string epilogue(const Plan& plan, const PlannedKernel& k, UnitParts& unit, const std::string& signature,
                     const std::vector<std::string>& coord_lines, const Coords& coords, bool lanes4 = false) {
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
  // An f16 / bf16 product is that dtype's value before the chain reads it (rounded as every
  // 16-bit node is); the f32 accumulator is not.
  ex.bind_value(k.anchor, coords, rounded_to(plan.ir().node(k.anchor).dtype, "acc"));
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
  if (lanes4 && !extra_stores && chain_has_dropout(plan, end, k.anchor)) {
    w.blank();
    write_lanes4(plan, k, w, ex, coord_lines, coords, end);
  }
  w.close_block(";");
  unit.functors = w.str();
  return fmt::format("Epilogue{{{}}}", UnitParts::member_inits(plan, k));
}

std::string includes(const Plan& plan, const PlannedKernel& k, const char* header) {
  std::string s = fmt::format("#include \"kiln/{}\"", header);
  if (!k.stores.empty() && chain_has_dropout(plan, epilogue_end(plan, k), k.anchor)) s += "\n#include \"kiln/philox.cuh\"";
  return s;
}

// Output coordinates of a matmul epilogue: the flat batch index split into the batch dims; with
// `folded` ([Note: folded batches] in plan_contraction.cpp) the row, over every batch's rows, split
// into the batch dims and the row m of its batch.
// `dyn_batch`: the outermost batch dim is a launch's (a dyn matmul's batches, [Note: dyn matmul], or a
// dyn attention's, [Note: dyn attention]).
Coords matmul_coords(const Plan& plan, const PlannedKernel& k, std::vector<std::string>& lines, bool folded = false,
                     bool dyn_batch = false) {
  const auto& out = plan.bound->shape(k.anchor);
  const std::size_t nb = out.size() - 2;
  Coords c;
  if (folded) {
    // The rows below a coordinate: M (a number, or a dyn dim: the functor's member, magic-number
    // division) times the batch extents inside it.
    const std::string* dyn_m = dyn_extent(plan, k.anchor, nb);
    std::int64_t inner = 1;
    auto below = [&] {
      if (dyn_m == nullptr) return std::to_string(out[nb] * inner);
      return inner == 1 ? "dim_" + *dyn_m : fmt::format("(dim_{} * {})", *dyn_m, inner);
    };
    lines.push_back(fmt::format("const Index m = row % {};  // the batches fold into the rows", below()));
    for (std::size_t d = nb; d-- > 0;) {
      const std::string name = fmt::format("b{}", d);
      // The outermost batch dim needs no modulo (and may be dyn).
      if (d == 0) lines.push_back(fmt::format("const Index {} = row / {};", name, below()));
      else lines.push_back(fmt::format("const Index {} = row / {} % {};", name, below(), out[d]));
      inner *= out[d];
      c.insert(c.begin(), name);
    }
    c.push_back("m");
    c.push_back("col");
    return c;
  }
  // A batch dim's extent: its value, or a dyn one's name (the functor's member: a dyn attention's
  // heads, [Note: dyn attention]).
  auto extent_of = [&](std::size_t d) {
    const std::string* dyn = dyn_extent(plan, k.anchor, d);
    return dyn != nullptr ? "dim_" + *dyn : std::to_string(out[d]);
  };
  for (std::size_t d = 0; d < nb; ++d) {
    std::int64_t below = 1;
    std::string dyn_below;
    for (std::size_t e = d + 1; e < nb; ++e) {
      if (dyn_extent(plan, k.anchor, e) != nullptr) dyn_below += (dyn_below.empty() ? "" : " * ") + extent_of(e);
      else below *= out[e];
    }
    if (nb == 1) {
      c.push_back("batch");
      break;
    }
    const std::string name = fmt::format("b{}", d);
    const std::string divisor = dyn_below.empty() ? std::to_string(below)
                                : below == 1     ? dyn_below
                                                 : fmt::format("({} * {})", dyn_below, below);
    // (A dyn outermost batch dim, [Note: dyn matmul]: its extent is the launch's, and batch / below is below it.)
    if (d == 0 && (dyn_batch || !k.dyn_outer.empty()))
      lines.push_back(fmt::format("const Index {} = batch / {};", name, divisor));
    else lines.push_back(fmt::format("const Index {} = batch / {} % {};", name, divisor, extent_of(d)));
    c.push_back(name);
  }
  c.push_back("row");
  c.push_back("col");
  return c;
}

}  // namespace

void emit_family(const Plan& plan, const PlannedKernel& k, const GemmConfig& config, UnitParts& unit) {
  const GemmKind kind = config.kind;
  CodeWriter c;
  c.raw_line(index_declaration(k.index64));
  c.line("{}", UnitParts::config_line(config));
  if (kind == GemmKind::SoftmaxFinalize) {
    c.line("// rows of all batches: {} x {}", config.batch, config.m);
    c.line("using Finalize = kiln::gemm::SoftmaxFinalize<Index, kConfig.batch * kConfig.m, kConfig.n, "
           "/*tiles per row*/ kConfig.tiles_n, kConfig.threads>;");
    unit.constants = c.str();
    unit.includes = "#include \"kiln/gemm.cuh\"";
    unit.body = fmt::format("  Finalize::run({}, {});", UnitParts::pointer_name(plan, k.stores[0].buffer),
                            workspace_pointer(plan, k));
    template_checks(k, unit, "Finalize", false, fmt::format("kiln::gemm_geometry(kConfig, {}, {})",
                                                            plan.target.sm_count, k.min_blocks));
    return;
  }
  // (An OperandPrep with a dyn extent is a conv's copy of x, its images the grid's z: [Note: dyn conv].)
  KILN_ASSERT(k.dyn_outer.empty() || kind == GemmKind::Tma || kind == GemmKind::Gemm || kind == GemmKind::SplitK ||
                  kind == GemmKind::SplitKReduce || (kind == GemmKind::OperandPrep && config.batch == 0),
              "a {} kernel with a dyn extent", enum_name(kind));
  const std::string dyn = dyn_shape_arg(k, config);
  const ir::NodeId a = operand_leaf(plan, k, 0), bl = operand_leaf(plan, k, 1);
  const char* elem = storage_type(plan.ir().node(a).dtype);
  const char* prec = precision_type(config.precision);
  c.line("constexpr long long kM = kConfig.m, kN = kConfig.n, kK = kConfig.k, kBatch = kConfig.batch;");
  // The TMA engine and Gemv write partial sums to a workspace (one slice or more) when a reduce
  // follows.
  const bool ws_split =
      (kind == GemmKind::Tma || kind == GemmKind::Gemv || kind == GemmKind::GemvMma) && workspace_arg(plan, k) >= 0;
  const bool split = kind == GemmKind::SplitK || kind == GemmKind::WgmmaSplitK || ws_split;
  const bool prep = kind == GemmKind::SmallKPrep || kind == GemmKind::OperandPrep;
  const std::string out = split || prep ? "" : UnitParts::pointer_name(plan, k.stores[0].buffer);
  const std::string sig = "float acc, Index batch, Index row, Index col";
  std::vector<std::string> lines;
  Coords coords;
  if (!split && !prep) coords = matmul_coords(plan, k, lines, k.folded_batches);
  std::string type = "Kernel";   // the instantiated template's alias
  bool dynamic_smem = true;
  switch (kind) {
    case GemmKind::SmallK: {
      c.line("using Kernel = kiln::gemm::SmallK<{}, Index, kM, kN, kK, kConfig.lda, kConfig.ldb, kConfig.ldc,", prec);
      c.line("                                  kConfig.bm, kConfig.bn, kConfig.wm, kConfig.wn>;");
      const std::string epi = epilogue(plan, k, unit, "float acc, Index, Index row, Index col", lines, coords,
                                         /*lanes4=*/true);
      unit.body = fmt::format("  Kernel::run({}, {}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl), out, epi);
      break;
    }
    case GemmKind::SmallKPrep:
      c.line("// A and B^T to k-contiguous tf32 hi/lo parts in the workspace (B is n-contiguous)");
      c.line("using Prep = kiln::sm90::SmallKPrep<{}, Index, kM, kN, kK, kConfig.lda, kConfig.ldb>;", prec);
      unit.body = fmt::format("  Prep::run({}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl),
                              workspace_pointer(plan, k));
      type = "Prep";
      dynamic_smem = false;
      break;
    case GemmKind::SmallKWgmma: {
      c.line("// sm_90a: persistent wgmma over the pre-pass's workspace, two accumulator sets");
      c.line("using Kernel = kiln::sm90::WgSmallK<{}, Index, kM, kN, kK, kConfig.ldc, kConfig.bm, kConfig.bn, "
             "kConfig.b_stages, kConfig.stream_c>;", prec);
      const std::string epi = epilogue(plan, k, unit, "float acc, Index, Index row, Index col", lines, coords,
                                         /*lanes4=*/true);
      unit.body = fmt::format("  Kernel::run({}, {}, {});", workspace_pointer(plan, k), out, epi);
      break;
    }
    case GemmKind::Gemm:
    case GemmKind::SplitK: {
      c.line("using Kernel = kiln::gemm::{}<{}, {},{} Index, kM, kN, kK, kBatch,", split ? "GemmSplitK" : "Gemm", elem,
             prec, split ? "" : fmt::format(" {},", storage_type(plan.ir().node(epilogue_end(plan, k)).dtype)));
      c.line("    {}, {}, kConfig.lda, kConfig.ldb,{} kConfig.stride_a, kConfig.stride_b,{}", layout_name(config.layout_a),
             layout_name(config.layout_b), split ? "" : " kConfig.ldc,", split ? "" : " kConfig.stride_c,");
      c.line("    kConfig.bm, kConfig.bn, kConfig.bk, kConfig.wm, kConfig.wn, kConfig.stages, kConfig.vec_a, "
             "kConfig.vec_b,");
      if (split) {
        c.line("    kConfig.split_k>;");
        unit.body = fmt::format("  Kernel::run({}, {}, {}{});", pointer_of(plan, a), pointer_of(plan, bl),
                                workspace_pointer(plan, k), dyn);
      } else {
        c.line("    kConfig.vec_c, kConfig.stream_c, kConfig.row_stats>;");
        const std::string epi = epilogue(plan, k, unit, sig, lines, coords, /*lanes4=*/true);
        unit.body = fmt::format("  Kernel::run({}, {}, {}, {}, {}{});", pointer_of(plan, a), pointer_of(plan, bl), out,
                                epi, config.row_stats ? workspace_pointer(plan, k) : "nullptr", dyn);
      }
      break;
    }
    case GemmKind::Wgmma:
    case GemmKind::WgmmaSplitK: {
      c.line("// sm_90a: wgmma on 128-byte-swizzled shared memory; A row-major, B k-contiguous");
      c.line("using Kernel = kiln::sm90::{}<{}, Index, kM, kN, kK, kBatch, kConfig.lda, kConfig.ldb, kConfig.stride_a, "
             "kConfig.stride_b,", split ? "WgGemmSplitK" : "WgGemm", prec);
      if (split) {
        c.line("    kConfig.bm, kConfig.bn, kConfig.stages, /*BKMajor*/ true, kConfig.split_k>;");
        unit.body = fmt::format("  Kernel::run({}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl),
                                workspace_pointer(plan, k));
      } else {
        c.line("    kConfig.ldc, kConfig.stride_c, kConfig.bm, kConfig.bn, kConfig.stages, /*BKMajor*/ true, "
               "kConfig.vec_c, kConfig.stream_c>;");
        const std::string epi = epilogue(plan, k, unit, sig, lines, coords, /*lanes4=*/true);
        unit.body = fmt::format("  Kernel::run({}, {}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl), out, epi);
      }
      break;
    }
    case GemmKind::Tma: {
      c.line("// sm_90a: TMA ring, a producer warpgroup, wgmma consumer warpgroups, persistent CTAs");
      c.line("using Kernel = kiln::sm90::TmaGemm<{}, Index, kM, kN, kK, kBatch, kiln::gemm_a_k_contig(kConfig),", elem);
      c.line("    kiln::gemm_b_k_contig(kConfig), kConfig.stride_a != 0, kConfig.stride_b != 0, kConfig.ldc, "
             "kConfig.stride_c,");
      c.line("    kConfig.bm, kConfig.bn, kConfig.bk, kConfig.stages, kConfig.group_m, kConfig.split_k, "
             "kiln::gemm_x3(kConfig),");
      c.line("    kConfig.vec_c, kConfig.stream_c, kConfig.swap_ab, kConfig.cluster_m, kConfig.consumers_n>;");
      if (ws_split) {   // partial sums into the workspace; the reduce kernel finishes
        unit.body = fmt::format("  Kernel::run(tmap_a, tmap_b, {}, kiln::gemm::Identity{{}}{});", workspace_pointer(plan, k),
                                dyn);
      } else {
        const std::string epi = epilogue(plan, k, unit, sig, lines, coords, /*lanes4=*/!config.swap_ab);
        unit.body = fmt::format("  Kernel::run(tmap_a, tmap_b, {}, {}{});", out, epi, dyn);
      }
      break;
    }
    case GemmKind::OperandPrep: {
      const int which = prep_is_a(config) ? 0 : 1;
      const bool k_contig = prep_k_contig(config);
      c.line("// operand {} ([{}], {}{}) to k-contiguous rows of {} elements in the workspace (the TMA engine)",
             which == 0 ? "A" : "B", k_contig ? (which == 0 ? "M, K" : "N, K") : (which == 0 ? "K, M" : "K, N"),
             k_contig ? "a pitched copy" : prep_vec_transpose(config) ? "a 16-byte vector transpose" : "a transpose",
             prep_reversed(config) ? ", its rows in reverse order" : "", prep_ldw(config));
      c.line("using Prep = kiln::gemm::OperandPrep<{}, Index, kiln::prep_rows(kConfig), kK, "
             "kiln::prep_batches(kConfig), kiln::prep_ld(kConfig),", elem);
      c.line("    kiln::prep_stride(kConfig), kiln::prep_k_contig(kConfig), kiln::prep_ldw(kConfig), "
             "kiln::gemm_x3(kConfig),");
      c.line("    kiln::prep_vec_transpose(kConfig), kiln::prep_reversed(kConfig), kConfig.threads>;");
      // (Rows 0: a conv's copy of x with dyn spatial extents, its rows and strides a launch's
      // DynValue arguments: [Note: dyn conv spatial extents].)
      unit.body = fmt::format("  Prep::run({}, {}{});", pointer_of(plan, operand_leaf(plan, k, which)),
                              workspace_pointer(plan, k),
                              prep_rows(config) == 0 ? ", kiln::gemm::PrepRows{prep_rows, prep_ld, prep_stride}" : "");
      type = "Prep";
      dynamic_smem = false;
      break;
    }
    case GemmKind::Gemv:
    case GemmKind::GemvMma: {
      if (kind == GemmKind::Gemv) {
        c.line("// a skinny product: the big operand streamed once (16-byte loads where vec), f32 FMA");
        c.line("using Kernel = kiln::gemm::Gemv<{}, Index, kiln::gemv_rows(kConfig), kiln::gemv_p(kConfig), kK, kBatch,",
               elem);
        c.line("    kiln::gemv_big_is_a(kConfig), kiln::gemv_big_k_contig(kConfig), kiln::gemv_ld_big(kConfig),");
        c.line("    kiln::gemv_stride_big(kConfig), kiln::gemv_x_k(kConfig), kiln::gemv_x_p(kConfig), kiln::gemv_stride_x(kConfig),");
        c.line("    kConfig.ldc, kConfig.stride_c, int(kiln::gemv_block_rows(kConfig)), kiln::gemv_vec(kConfig),");
        c.line("    kiln::gemv_vec_x(kConfig), kConfig.split_k, kConfig.threads>;");
      } else {
        c.line("// a skinny product on mma.sync: the big operand streamed once into m16n8k8 fragments");
        c.line("using Kernel = kiln::gemm::GemvMma<{}, Index, kiln::gemv_rows(kConfig), kiln::gemv_p(kConfig), kK, kBatch,",
               prec);
        c.line("    kiln::gemv_big_is_a(kConfig), kiln::gemv_ld_big(kConfig), kiln::gemv_stride_big(kConfig),");
        c.line("    kiln::gemv_x_k(kConfig), kiln::gemv_x_p(kConfig), kiln::gemv_stride_x(kConfig), kConfig.ldc,");
        c.line("    kConfig.stride_c, int(kConfig.bm), kConfig.split_k, kConfig.threads>;");
      }
      if (ws_split) {
        unit.body = fmt::format("  Kernel::run({}, {}, {}, kiln::gemm::Identity{{}});", pointer_of(plan, a),
                                pointer_of(plan, bl), workspace_pointer(plan, k));
      } else {
        const std::string epi = epilogue(plan, k, unit, sig, lines, coords);
        unit.body = fmt::format("  Kernel::run({}, {}, {}, {});", pointer_of(plan, a), pointer_of(plan, bl), out, epi);
      }
      dynamic_smem = false;
      break;
    }
    case GemmKind::SplitKSoftmax: {
      c.line("// one CTA per row of all batches; the softmax over the last axis is fused");
      c.line("using Reduce = kiln::gemm::SplitKSoftmax<Index, kM, kN, kBatch, kConfig.split_k, kConfig.threads>;");
      const std::string epi = epilogue(plan, k, unit, sig, lines, coords, /*lanes4=*/true);
      unit.body = fmt::format("  Reduce::run({}, {}, {});", workspace_pointer(plan, k), out, epi);
      type = "Reduce";
      dynamic_smem = false;
      break;
    }
    case GemmKind::SplitKReduce: {
      c.line("using Reduce = kiln::gemm::SplitKReduce<{}, Index, kM, kN, kBatch, kConfig.split_k, kConfig.ldc, "
             "kConfig.stride_c, kConfig.stream_c, kConfig.threads>;", storage_type(plan.ir().node(k.stores[0].node).dtype));
      const std::string epi = epilogue(plan, k, unit, sig, lines, coords);
      unit.body = fmt::format("  Reduce::run({}, {}, {}{});", workspace_pointer(plan, k), out, epi, dyn);
      type = "Reduce";
      dynamic_smem = false;
      break;
    }
    case GemmKind::SoftmaxFinalize: KILN_ASSERT(false, "SoftmaxFinalize is emitted above");
  }
  unit.constants = c.str();
  if (kind != GemmKind::OperandPrep)   // (a copy of x with dyn images reads them from its grid)
    unit.body = dyn_extent_statement(plan, k, "Index", "dyn_extent", dyn_extent_text(config)) + unit.body;
  const bool sm90 = kind == GemmKind::Wgmma || kind == GemmKind::WgmmaSplitK || kind == GemmKind::SmallKPrep ||
                    kind == GemmKind::SmallKWgmma;
  unit.includes = includes(plan, k, kind == GemmKind::Tma           ? "gemm_tma.cuh"
                                    : kind == GemmKind::OperandPrep ? "gemm_prep.cuh"
                                    : kind == GemmKind::Gemv        ? "gemv.cuh"
                                    : kind == GemmKind::GemvMma     ? "gemv_mma.cuh"
                                    : sm90                   ? "gemm_sm90.cuh"
                                                             : "gemm.cuh");
  template_checks(k, unit, type, dynamic_smem,
                  fmt::format("kiln::gemm_geometry(kConfig, {}, {})", plan.target.sm_count, k.min_blocks),
                  k.dyn_outer.empty() && !(kind == GemmKind::OperandPrep && prep_rows(config) == 0));
}

void emit_family(const Plan& plan, const PlannedKernel& k, const ConvConfig& config, UnitParts& unit) {
  const auto& node = plan.ir().node(k.anchor);
  const ir::NodeId x = node.operands[0], w = node.operands[1];
  const char* elem = storage_type(plan.ir().node(x).dtype);
  const char* out = storage_type(plan.ir().node(k.stores[0].node).dtype);
  CodeWriter c;
  c.raw_line(index_declaration(k.index64));
  c.line("{}", UnitParts::config_line(config));
  c.line("using Shape = kiln::conv::ConvShape<kConfig.n, kConfig.c, kConfig.h, kConfig.w, kConfig.k, kConfig.r, "
         "kConfig.s,");
  if (!conv_im2col_general(config.d, config.t, config.dout, config.transposed)) {
    c.line("                                    kConfig.stride_h, kConfig.stride_w, kConfig.pad_h, kConfig.pad_w, "
           "kConfig.dil_h, kConfig.dil_w, kConfig.groups>;");
  } else {   // a depth axis or a transposed conv
    c.line("                                    kConfig.stride_h, kConfig.stride_w, kConfig.pad_h, kConfig.pad_w, "
           "kConfig.dil_h, kConfig.dil_w, kConfig.groups,");
    c.line("                                    kConfig.d, kConfig.t, kConfig.stride_d, kConfig.pad_d, kConfig.dil_d, "
           "kConfig.transposed,");
    c.line("                                    kConfig.opad_d, kConfig.opad_h, kConfig.opad_w>;");
  }
  switch (config.kind) {
    case ConvKind::Depthwise:
      c.line("using Kernel = kiln::conv::DepthwiseDirect<{}, {}, Index, Shape, kConfig.nhwc, kConfig.threads>;", elem, out);
      break;
    case ConvKind::Wgmma:
      c.line("// sm_90a: wgmma on 128-byte-swizzled shared memory, im2col gathered by 4-byte cp.async");
      c.line("using Kernel = kiln::sm90::WgConvNchw<{}, Index, Shape, kConfig.bm, kConfig.bn, kConfig.stages, "
             "kConfig.vec_y, kConfig.stream>;", precision_type(config.precision));
      break;
    case ConvKind::Tma:
      if (config.direct)
        c.line("// sm_90a: the TMA engine, x read in place by tiled copies, the filters from OperandPrep's k-major copy");
      else
        c.line("// sm_90a: the TMA engine over OperandPrep's k-major copies (x NHWC, read by im2col copies)");
      if (config.transposed)   // one GEMM per stride phase
        c.line("using Kernel = kiln::sm90::TmaConvPhased<Index, Shape, kConfig.bm, kConfig.bn, kConfig.stages, "
               "kiln::conv_x3(kConfig), kConfig.stream>;");
      else
        c.line("using Kernel = kiln::sm90::{}<Index, Shape, kConfig.bm, kConfig.bn, kConfig.stages, "
               "kiln::conv_x3(kConfig), {}kConfig.vec_y, kConfig.stream{}>;", config.nhwc ? "TmaConvNhwc" : "TmaConv",
               config.nhwc ? "" : "kiln::conv_tma_pixel_rows(kConfig), ", config.direct ? ", kConfig.direct" : "");
      break;
    case ConvKind::Nchw:
      c.line("using Kernel = kiln::conv::ConvNchw<{}, {}, {}, Index, Shape, kConfig.bm, kConfig.bn, kConfig.bk, "
             "kConfig.wm,", elem, precision_type(config.precision), out);
      c.line("                                    kConfig.wn, kConfig.stages, kConfig.vec_w, kConfig.stream{}>;",
             config.transposed ? ", kConfig.phase_w" : "");
      break;
  }
  unit.constants = c.str();
  // The epilogue's coordinates: hw is the output position within an image, split by axis.
  const int dims = node.conv.dims;
  std::vector<std::string> lines;
  Coords coords;
  if (dims == 1) {
    coords = {"n", "k", "hw"};
  } else if (dims == 2) {   // (a dyn Wo: its DynValue argument, a member of the functor)
    lines = {fmt::format("const Index ho = hw / {0}, wo = hw % {0};",
                         config.wo == 0 ? std::string("conv_wo") : std::to_string(config.wo))};
    coords = config.nhwc ? Coords{"n", "ho", "wo", "k"} : Coords{"n", "k", "ho", "wo"};
  } else {
    lines = {fmt::format("const Index od = hw / {0}, ho = hw / {1} % {2}, wo = hw % {1};", config.ho * config.wo, config.wo,
                         config.ho)};
    coords = {"n", "k", "od", "ho", "wo"};
  }
  const std::string epi = epilogue(plan, k, unit, "float acc, Index n, Index k, Index hw", lines, coords);
  const std::string y = UnitParts::pointer_name(plan, k.stores[0].buffer);
  // A dyn batch ([Note: dyn conv] in plan_contraction.cpp) goes to run() after the epilogue, then
  // dyn spatial extents as a ConvDyn of the DynValue arguments ([Note: dyn conv spatial extents]).
  const bool spatial = conv_dyn_spatial(config);
  std::string run_args = k.dyn_outer.empty() ? (spatial ? ", 0" : "") : ", batch";
  if (spatial) {
    std::vector<std::string> fields;
    for (const char* f : kConvDynFields) fields.push_back(fmt::format("conv_{}", f));
    run_args += fmt::format(", kiln::conv::ConvDyn{{{}}}", fmt::join(fields, ", "));
  }
  unit.body = dyn_extent_statement(plan, k, "Index", "batch", "dyn batch") +
              (config.kind == ConvKind::Tma
                   ? fmt::format("  Kernel::run(tmap_w, tmap_x, {}, {}{});", y, epi, run_args)
                   : fmt::format("  Kernel::run({}, {}, {}, {}{});", pointer_of(plan, x), pointer_of(plan, w), y, epi,
                                 run_args));
  unit.includes = includes(plan, k, config.kind == ConvKind::Wgmma ? "conv_sm90.cuh"
                                    : config.kind == ConvKind::Tma ? "conv_tma.cuh"
                                                                   : "conv_igemm.cuh");
  template_checks(k, unit, "Kernel", config.kind != ConvKind::Depthwise,
                  fmt::format("kiln::conv_geometry(kConfig, {})", plan.target.sm_count), k.dyn_outer.empty() && !spatial);
}

void emit_family(const Plan& plan, const PlannedKernel& k, const AttentionConfig& config, UnitParts& unit) {
  const auto& node = plan.ir().node(k.anchor);
  const auto& attrs = node.attention;
  const char* elem = storage_type(plan.ir().node(node.operands[0]).dtype);
  CodeWriter c;
  c.raw_line(index_declaration(k.index64));
  c.line("{}", UnitParts::config_line(config));
  c.line("struct Config {{");
  c.line("  static constexpr kiln::AttentionConfig value = kConfig;");
  c.line("}};");
  c.line("// sm_90a: q block once, k and v tiles through a TMA ring; scores and the online softmax in registers");
  c.line("using Kernel = kiln::sm90::FlashAttention<{}, Index, Config>;", elem);
  unit.constants = c.str();
  // The scale: a scalar argument (its name) or the literal, as f32; a divisor inverted.
  std::string scale = "1.0f";
  if (node.operands.size() > 3) scale = fmt::format("static_cast<float>({})", plan.ir().node(node.operands[3]).name);
  else if (attrs.has_scale) scale = fmt::format("static_cast<float>({})", attrs.scale);
  if (attrs.divide) scale = fmt::format("1.0f / {}", scale);
  // [Note: dyn attention]: the extents the config holds 0 for, from the launch's dims.
  const bool dyn = config.s == 0 || config.t == 0 || config.batch == 0 || config.inner == 0;
  std::string extents;
  if (dyn) {
    const AttentionExtentExprs e = attention_extent_exprs(plan.ir(), k);
    auto field = [&](long long planned, const ir::DimExpr& x) {
      return planned != 0 ? std::string("0") : x.code([&](const std::string& dim) {
        return plan.bound->is_dynamic(dim) ? "dim_" + dim : std::to_string(plan.bound->dims.at(dim));
      });
    };
    extents = fmt::format(", kiln::AttentionExtents{{/*s=*/{}, /*t=*/{}, /*batch=*/{}, /*inner=*/{}}}",
                          field(config.s, e.s), field(config.t, e.t), field(config.batch, e.batch),
                          field(config.inner, e.inner));
  }
  std::vector<std::string> lines;
  const bool dyn_outermost = node.shape.size() > 2 && node.shape[0].mentions(plan.ir().dyn_dims());
  const Coords coords = matmul_coords(plan, k, lines, false, dyn_outermost);
  const std::string epi = epilogue(plan, k, unit, "float acc, Index batch, Index row, Index col", lines, coords);
  unit.body = fmt::format("  Kernel::run(tmap_q, tmap_k, tmap_v, {}, {}, {}, {}{});",
                          UnitParts::pointer_name(plan, k.stores[0].buffer), epi, scale, workspace_pointer(plan, k),
                          extents);
  unit.includes = includes(plan, k, "attention_sm90.cuh");
  template_checks(k, unit, "Kernel", true, fmt::format("kiln::attention_geometry(kConfig, {})", plan.target.sm_count),
                  !dyn);
}

}  // namespace kiln
