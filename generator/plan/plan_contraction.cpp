// Planning of the contraction template family: matmul -> gemm.cuh, conv -> conv_igemm.cuh.
//
// [Note: how a contraction is planned]
// Operands are read in place: a leaf, or a Permute of a leaf that swaps the last two dims
// (transpose(w)) and becomes a column-major flag (takes_view), never a copy (but for the TMA
// engine's pre-pass, below). Any other
// elementwise operand is stored first by the planner (prologue = false). Batch dims
// flatten to one batch index: an operand either has all of the output's batch dims
// (batch stride M*K) or none of them / only extent 1 (stride 0, broadcast).
// The template follows from the bound shape:
//   - SmallK (f32, no K loop, persistent CTAs streaming C) when K <= 128 and M x N is large;
//     on sm_90a in 3xTF32, SmallKPrep (A and B^T to k-contiguous hi/lo parts in a workspace)
//     + WgSmallK (persistent wgmma, two accumulator sets) where its blocks fit;
//   - Gemm with 128x128 tiles; 64x64 tiles when fewer than half the SMs would get a tile;
//   - GemmSplitK + SplitKReduce (deterministic, workspace) when even 64x64 tiles leave most
//     SMs idle and K is long; the epilogue then runs in the reduce kernel;
//   - a Softmax over the last axis right after the epilogue chain is claimed: the Gemm
//     writes the epilogue values and per-tile row statistics (max, sum of exp), and
//     SoftmaxFinalize normalizes in place — one extra light pass over the output;
//   - an f32 matmul whose 128x128 tiles cannot give every SM two CTAs and whose K is long
//     (linear layers with a small batch: W streaming bound): GemmSplitK with 128x128 tiles;
//     then SplitKSoftmax (a following softmax: adds the slices per row, applies the epilogue
//     and normalizes in one pass) or SplitKReduce (the epilogue);
//   - on sm_90a, a tf32 / 3xTF32 matmul with k contiguous in both operands (A row-major, B a
//     transposed view: a linear layer) and 16-byte rows takes the wgmma templates of
//     gemm_sm90.cuh instead (WgGemm, or WgGemmSplitK + the same reduce kernels; a following
//     softmax always takes the fused SplitKSoftmax, even with one K slice), unless a softmax
//     follows with enough tiles for the row-statistics Gemm;
//   - before those, on sm_90a: f16 / bf16 in any layout and f32 in tf32 take the TMA engine
//     (TmaGemm, split-K on it for a long K with few tiles). It reads operands through tensor
//     maps, which need 16-byte strides, and wgmma reads f32 only k-major, so an operand that is
//     neither (f32 with k strided, or a row of 4799 bf16) is first copied by OperandPrep into a
//     k-major workspace whose rows are padded to 16 bytes (prep_ldw), and the engine maps that.
//     The copy is a pass over the operand and a launch: padding is only planned where the
//     product is large (kPadMinFlops), else the mma.sync Gemm reads the operand in place.
// SmallK and split-K kernels set `min_blocks` (CTAs per SM), which becomes the second
// __launch_bounds__ argument so the registers allow that many resident CTAs.
// Conv (conv1d/2d/3d, conv_transpose1d/2d/3d): the spatial axes right-aligned into (d, h, w).
// A forward conv: DepthwiseDirect when groups == C over 1 or 2 axes (memory-bound), the TMA engine
// on sm_90a where it fits (over 1, 2 or 3 axes), else WgConvNchw on sm_90a (1 or 2 axes), else
// ConvNchw (implicit GEMM). A transposed conv: the TMA engine as the forward conv of its flipped
// filters where its stride is 1 ([Note: a stride-1 transposed conv as a forward conv]), else
// ConvNchw. ConvNchw takes a depth axis or a transposed conv with its general im2col
// (conv_im2col_general), which maps each output pixel and filter tap to its input position, the
// transposed mapping included.
// Every template parameter goes into the kernel's GemmConfig / ConvConfig (kiln/config/gemm.h,
// conv.h), which the emitter writes into the unit; shared memory and the launch come from the
// rules in those headers, the same functions that size the templates' shared memory.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <optional>

#include "generator/support/assert.h"
#include "generator/plan/planner.h"

namespace kiln {

namespace {

using ir::NodeId;
using ir::OpKind;

constexpr std::int64_t kLongK = 1024;   // split-K only pays when each split still has work
constexpr std::int64_t kStreamBytes = std::int64_t{40} << 20;   // ~ L2 of an H100 (50 MB)

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t product(const std::vector<std::int64_t>& v, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= v[i];
  return p;
}

// The deepest pipeline (2..4 stages) whose TileEngine (plus `extra` bytes) fits.
int pick_stages(const Target& t, int elem, int bm, int bn, int bk, int wn, bool a_k_contig, bool b_k_contig,
                std::int64_t extra = 0) {
  int stages = 4;
  while (stages > 2 && tile_engine_smem(elem, bm, bn, bk, wn, stages, a_k_contig, b_k_contig) + extra > smem_limit(t))
    --stages;
  return stages;
}

bool contraction_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// The f32 products of an op (f16/bf16 ignore it).
MmaPrecision mma_precision(const Planner& p, const ir::Node& node, std::string& why) {
  const Precision want = node.precision ? *node.precision : p.target().precision;
  why = fmt::format("precision {}{}", precision_name(want), node.precision ? " (op)" : " (target)");
  switch (want) {
    case Precision::ieee: return MmaPrecision::Ieee;
    case Precision::tf32: return MmaPrecision::Tf32;
    case Precision::fp32_accurate:
    case Precision::tf32x3: return MmaPrecision::Tf32x3;
  }
  return MmaPrecision::Tf32x3;
}

// A Permute swapping exactly the last two dims of an Input: a transposed view.
bool transposed_leaf(const Planner& p, NodeId id) {
  const auto& n = p.node(id);
  if (n.kind != OpKind::Permute || p.node(n.operands[0]).kind != OpKind::Input) return false;
  const std::size_t r = n.perm.size();
  if (r < 2) return false;
  for (std::size_t i = 0; i + 2 < r; ++i)
    if (n.perm[i] != static_cast<int>(i)) return false;
  return n.perm[r - 2] == static_cast<int>(r - 1) && n.perm[r - 1] == static_cast<int>(r - 2);
}

// One matmul operand as the template sees it.
struct Operand {
  NodeId leaf = -1;
  bool col_major = false;   // stored transposed: the leaf is [..., cols, rows]
  std::int64_t ld = 0, batch_stride = 0;
};

}  // namespace

bool batch_addressable(const std::vector<std::int64_t>& operand, const std::vector<std::int64_t>& out) {
  const std::size_t r = operand.size();
  if (product(operand, 0, r - 2) == 1) return true;   // broadcast over every batch dim: stride 0
  // All of the output's batch dims, right-aligned; the output's leading dims the operand lacks are
  // extents of 1 (the same batch index: [H, K, N] in a product of [1, H, M, N]).
  if (r > out.size()) return false;
  const std::size_t lead = out.size() - r;
  for (std::size_t d = 0; d < lead; ++d)
    if (out[d] != 1) return false;
  return std::equal(operand.begin(), operand.end() - 2, out.begin() + static_cast<std::ptrdiff_t>(lead));
}

namespace {

Operand matmul_operand(const Planner& p, NodeId anchor, NodeId op, const char* which) {
  Operand o;
  o.col_major = transposed_leaf(p, op);
  o.leaf = o.col_major ? p.node(op).operands[0] : op;
  KILN_ASSERT(p.leaf_buffer(o.leaf) >= 0, "matmul operand %{} is neither a leaf nor a transposed leaf", o.leaf);
  const auto& shape = p.shape(o.leaf);
  const auto& out = p.shape(anchor);
  const std::size_t r = shape.size();
  o.ld = shape[r - 1];
  KILN_ASSERT(batch_addressable(shape, out), "matmul operand {} has some of the batch dims: expand_matmul_batches "
              "expands it", which);
  if (product(shape, 0, r - 2) == 1) return o;   // broadcast over every batch dim: stride 0
  o.batch_stride = shape[r - 2] * shape[r - 1];
  return o;
}

// [Note: folded batches]
// A batched product whose B is shared by every batch (x[..., M, K] · w[K, N], a linear layer over
// [batch, sequence, features]) is one product of (batches x M) rows: A and C are packed and
// row-major, so batch b's row m is row b * M + m of both. The planner folds it: the config's M is
// the batches' rows, its batch 1, and the epilogue splits a row back into the batch coordinates
// and m (matmul_coords in emit_contraction.cpp, for each kernel marked PlannedKernel::folded_batches). So B is read
// once rather than once per batch (64 decode steps of x[64, 1, 4096] · w were a Gemv per batch,
// each reading all of w), and the tiles cover the rows of every batch together, as cuBLAS's
// callers (torch.matmul) do. A dyn batch dim or a dyn M is then a factor of the folded M ([Note:
// dyn matmul]). Not folded: a column-major A (its batches are not one run of rows), a B with
// batches, a product without batches.
// A dyn batch dim counts as batches whatever its value, so a spec folds (or not) for every value.
bool folds_batches(const Planner& p, NodeId anchor, const Operand& a, const Operand& b) {
  const ir::Shape& out = p.node(anchor).shape;
  const std::vector<std::int64_t>& bound = p.shape(anchor);
  const std::size_t r = out.size();
  if (r <= 2 || a.col_major) return false;
  const std::set<std::string> dyn = p.bound().ir->dyn_dims();
  const ir::Shape& sa = p.node(a.leaf).shape;
  const ir::Shape& sb = p.node(b.leaf).shape;
  bool batches = product(bound, 0, r - 2) > 1, a_all = sa.size() == r, b_none = b.batch_stride == 0;
  for (std::size_t d = 0; d + 2 < r; ++d) {
    batches |= out[d].mentions(dyn);
    a_all = a_all && sa[d].str() == out[d].str();
  }
  for (std::size_t d = 0; d + 2 < sb.size(); ++d) b_none = b_none && !sb[d].mentions(dyn);
  return batches && a_all && b_none;
}

bool takes_transposed_view(const Planner& p, NodeId, NodeId operand) { return transposed_leaf(p, operand); }

// [Note: dyn matmul]
// A matmul takes one dyn dim (AnchorRule::dyn), as a whole extent: its M (the rows of A and C), its
// N (the columns of B and C) or its K, or its outermost batch dim. Where the batches fold into M
// ([Note: folded batches]), M is their rows: it takes a dyn outermost batch dim and a dyn M
// together, as factors of M classed by their product ([Note: size classes of a product] in
// plan.h). Every other dyn dim is refused at its declaration, with the reason (a dyn dim inside a
// compound extent, a second dyn dim or one dim as two extents, an inner batch dim).
// - In a batched product a dyn M, N or K makes the batch strides of the operands it sizes, and
//   C's, dyn: the configs hold kDynStride there (0 still broadcasts), the templates compute rows x
//   cols at a launch (every batched operand is a packed leaf: matmul_operand), and a TMA map's
//   batch stride scales with the extent it spans (TensorMapSpec::with_extent).
// - Bucket one: the value is 1, and the product is planned as a static one (any template).
// - Otherwise only templates that read the extent at run time are planned ([Note: dyn matmul
//   extents] in gemm_store.cuh): the TMA engine (sm_90a), where no operand that the dyn extent
//   sizes needs a pre-pass (under swap_ab a dyn M is the engine's N, which it reads as it reads a
//   dyn N: until 2026-12-04 a dyn M refused the swap and tf32 a·b transposed B first); else
//   the mma.sync Gemm. Split-K (GemmSplitK or the engine's K slices, then SplitKReduce) only in a
//   size class with a largest value, whose workspace is sized for it (a dyn K does not size the
//   workspace: any class). Not planned with a dyn extent: Gemv, SmallK, WgGemm and the
//   row-statistics softmax (claims_softmax declines, and the row-norm family plans the softmax
//   with dyn rows). The TMA engine's picks are tuned per bucket and size class (plan_tma).
// - A dyn extent that is a row length (N: C's and a row-major B's; K: a row-major A's or a
//   column-major B's; M: a column-major A's) decides 16-byte alignment, so the plan follows the
//   bucket: a multiple of 16 is planned as one (16-byte rows: vector loads and stores, tensor
//   maps). The bucket general is keyed by row alignment too ([Note: dyn row alignment] in plan.h):
//   a value whose rows are 16-byte aligned is planned as such a multiple (not of 16), any other
//   as an odd extent (element by element, no tensor map over it).
// - Size classes ([Note: dyn size classes] in plan.h): the values of the dim at which the route
//   (template, tiles, K slices: dyn_route) changes, up to kDynRouteTop: the route is sampled at
//   the powers of two, and each change found is bisected to its first value. So a class takes one
//   route throughout (where the route changes once between two powers of two), and is planned at
//   its lowest value (of the bucket, as above); the top class, which has no largest value, has no
//   K slices. (Classes at the powers of two alone put bf16 M = 1000 x 4096² in [512, 1024),
//   planned with 512's 64x128 tiles: 1.52x the specialized kernel, bench/results/2026-11-27-h100-run13.)
// - The kernels' GemmConfig holds 0 for the dyn extent (and for each leading dimension that is it)
//   and PlannedKernel::dyn_outer its factors: gemm_launch runs gemm_geometry at a launch's extent,
//   and a tensor map's KernelArg::map_dyn_dim names the map extent a launch sets (with the strides
//   above it).
constexpr std::int64_t kDynRouteTop = std::int64_t{1} << 16;

struct DynMatmul {
  enum class Extent { M, N, K, Batch };
  std::string dim;                    // the dyn dim, or the key of two ("B*S": a folded M's factors)
  Extent which = Extent::M;
  std::vector<ir::DimExpr> factors;   // the dyn extent: the dim, or the product of every batch dim
  std::int64_t fixed = 1;             // batch, or folded M: the other factors' product
  bool folded = false;                // M with the batches folded in ([Note: folded batches])
  std::int64_t low = 0, high = 0;     // the class's lowest and largest extent (high 0: no largest)
  DynBucket bucket = DynBucket::General;
  bool leading = false;               // the extent is some operand's or C's row length
  std::int64_t align = 0;             // bucket general, leading: 16 bytes of elements ([Note: dyn row alignment])
  bool aligned = false;               // and the planned side: the value a multiple of `align`
  std::string text;                   // what the kernels' reasons start with

  bool batch() const { return which == Extent::Batch; }
  bool bounded() const { return high > 0; }
  // Whether a split-K workspace's size follows the extent (every extent but K).
  bool sizes_workspace() const { return which != Extent::K; }
  static const char* name_of(Extent e) {
    switch (e) {
      case Extent::M: return "M";
      case Extent::N: return "N";
      case Extent::K: return "K";
      case Extent::Batch: return "the batches";
    }
    return "?";
  }
  const char* name() const { return name_of(which); }
  // The value planned for extent v: a row length takes the bucket's alignment ([Note: dyn matmul]).
  std::int64_t in_bucket(std::int64_t v) const {
    if (!leading) return v;
    if (bucket == DynBucket::Div16) return (v + 15) / 16 * 16;
    if (aligned) {   // a multiple of `align`, not of 16
      const std::int64_t r = (v + align - 1) / align * align;
      return r % 16 == 0 ? r + align : r;
    }
    return v % 2 == 0 ? v + 1 : v;
  }
  // The config and operands at `extent` (the op's terms): the extent, every row length that is it
  // and every batch stride that spans it (at extent 0, a kernel's config: kDynStride there).
  GemmConfig at(GemmConfig c, std::int64_t extent) const {
    c = extents_at(c, extent);
    if (batch()) return c;
    auto stride = [&](long long& s, bool spans, long long rows, long long cols) {
      if (s != 0 && spans) s = extent == 0 ? kDynStride : rows * cols;
    };
    stride(c.stride_a, which != Extent::N, c.m, c.k);   // A: M x K
    stride(c.stride_b, which != Extent::M, c.k, c.n);   // B: K x N
    stride(c.stride_c, which != Extent::K, c.m, c.n);   // C: M x N
    return c;
  }
  Operand operand_at(Operand o, const GemmConfig& at_extent, int which_operand) const {
    if (batch()) return o;
    o.ld = which_operand == 1 ? at_extent.lda : at_extent.ldb;
    if (o.batch_stride != 0) o.batch_stride = which_operand == 1 ? at_extent.stride_a : at_extent.stride_b;
    return o;
  }
  // A kernel's config made dyn: the extent and its row lengths 0, in the kernel's own terms (the
  // TMA engine's m and n are the op's n and m under swap_ab, its operands the op's swapped).
  void make_dyn(GemmConfig& c) const { c = c.swap_ab ? swap_operands(at(swap_operands(c), 0)) : at(c, 0); }

 private:
  GemmConfig extents_at(GemmConfig c, std::int64_t extent) const {
    switch (which) {
      case Extent::M:
        c.m = extent;
        if (c.layout_a == GemmLayout::ColMajor) c.lda = extent;
        break;
      case Extent::N:
        c.n = extent, c.ldc = extent;
        if (c.layout_b == GemmLayout::RowMajor) c.ldb = extent;
        break;
      case Extent::K:
        c.k = extent;
        if (c.layout_a == GemmLayout::RowMajor) c.lda = extent;
        if (c.layout_b == GemmLayout::ColMajor) c.ldb = extent;
        break;
      case Extent::Batch: c.batch = extent; break;
    }
    return c;
  }
};

// The matmul's dyn dim, or nothing (no dyn dim, or one in the bucket one); refuses, located, every
// dyn dim a matmul cannot take.
std::optional<DynMatmul> dyn_matmul(const Planner& p, NodeId anchor, const Operand& a, const Operand& b, bool fold) {
  const auto& ir = *p.bound().ir;
  const std::set<std::string> dyn = ir.dyn_dims();
  if (dyn.empty()) return std::nullopt;
  const char* what = "the gemm template";
  auto dyn_in = [&](const ir::DimExpr& e) {
    std::string found;
    std::unordered_set<const ir::DimExpr*> seen;
    e.walk_dims(seen, [&](const std::string& n) { return dyn.count(n) ? (found = n, true) : false; });
    return found;
  };
  const ir::Shape& out = ir.node(anchor).shape;
  const ir::Shape& sa = ir.node(a.leaf).shape;
  const ir::Shape& sb = ir.node(b.leaf).shape;
  const std::size_t r = out.size();
  using Extent = DynMatmul::Extent;
  std::optional<DynMatmul> dm;
  std::vector<std::string> dims;   // the dyn dims taken: one, or two factors of a folded M
  auto taken = [&](const std::string& d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
  auto take = [&](const ir::DimExpr& e, Extent which, std::size_t axis) {
    const std::string found = dyn_in(e);
    if (found.empty()) return;
    if (e.kind() != ir::DimExpr::Kind::Dim)
      p.refuse_dyn(found, anchor, what, fmt::format("takes a dyn dim only as a whole extent, not inside {}", e.str()));
    if (dm && taken(found) && dm->which == which) return;   // K, read from A and from B; a folded M's dim twice
    if (dm && taken(found))
      p.refuse_dyn(found, anchor, what, fmt::format("takes one dyn extent, and '{}' is both its {} and its {}", found,
                                                    dm->name(), DynMatmul::name_of(which)));
    if (axis + 2 < r && axis != 0)
      p.refuse_dyn(found, anchor, what, fmt::format("takes a dyn batch dim only as the outermost one (here axis {})", axis));
    // A folded M takes two dyn factors ([Note: size classes of a product] in plan.h): the outermost
    // batch dim and M.
    const bool second_factor = fold && dm && which == Extent::M && dm->which == Extent::M && dims.size() == 1;
    if (dm && !second_factor)
      p.refuse_dyn(found, anchor, what, fmt::format("takes one dyn dim, and '{}' is dyn too", dims.front()));
    if (!dm) {
      dm.emplace();
      dm->which = which;
    }
    dims.push_back(found);
  };
  for (std::size_t d = 0; d + 2 < r; ++d) take(out[d], fold ? Extent::M : Extent::Batch, d);   // [Note: folded batches]
  take(out[r - 2], Extent::M, r - 2);
  take(out[r - 1], Extent::N, r - 1);
  take(sb[sb.size() - (b.col_major ? 2 : 1)], Extent::N, r - 1);
  take(sa[sa.size() - (a.col_major ? 2 : 1)], Extent::K, r - 1);
  take(sb[sb.size() - (b.col_major ? 1 : 2)], Extent::K, r - 1);
  if (!dm) return std::nullopt;
  // A dim in the bucket one is 1 in this plan, as a static dim would be.
  const auto& values = p.bound().dims;
  std::erase_if(dims, [&](const std::string& d) { return dyn_bucket(values.at(d)) == DynBucket::One; });
  if (dims.empty()) return std::nullopt;
  dm->dim = dyn_class_key(dims);
  const auto& bound_out = p.shape(anchor);
  if (fold && dm->which == Extent::M) {   // M: the batches' rows, the dyn dims factors of it
    dm->folded = true;
    dm->factors.assign(out.begin(), out.end() - 1);
    int times = 0;
    for (std::size_t d = 0; d + 1 < r; ++d) {
      if (out[d].kind() == ir::DimExpr::Kind::Dim && taken(out[d].name())) ++times;
      else dm->fixed *= bound_out[d];
    }
    if (times > static_cast<int>(dims.size()))
      p.refuse_dyn(dims.front(), anchor, what, fmt::format("takes one dyn extent, and '{}' is both a batch dim and its M",
                                                           dims.front()));
    dm->bucket = dims.size() == 1 ? dyn_bucket(values.at(dims.front())) : DynBucket::General;
    return dm;
  }
  if (!dm->batch()) {
    const ir::DimExpr& e = dm->which == Extent::M ? out[r - 2] : dm->which == Extent::N ? out[r - 1]
                                                                                         : sa[sa.size() - (a.col_major ? 2 : 1)];
    dm->factors = {e};
    dm->leading = dm->which != Extent::M || a.col_major;
  } else {
    dm->factors.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(r - 2));
    dm->fixed = product(bound_out, 1, r - 2);
  }
  dm->bucket = dyn_bucket(values.at(dm->dim));
  return dm;
}

// A softmax over the last axis of an f32 matmul result: planned as row statistics + finalize.
bool claims_softmax(const Planner& p, NodeId anchor, NodeId next) {
  const auto& n = p.node(next);
  if (n.kind != OpKind::Softmax) return false;
  if (ir::mentions(p.node(anchor).shape, p.bound().ir->dyn_dims())) return false;   // [Note: dyn matmul]
  const auto& shape = p.shape(next);
  const int axis = n.axis < 0 ? n.axis + static_cast<int>(shape.size()) : n.axis;
  return axis == static_cast<int>(shape.size()) - 1 && n.dtype == DType::f32 && shape == p.shape(anchor) &&
         p.node(anchor).dtype == DType::f32;
}

KernelArg buffer_arg(const Planner& p, int buffer, bool writes) {
  KernelArg a;
  a.kind = KernelArg::Kind::Buffer;
  a.buffer = buffer;
  a.dtype = p.buffer(buffer).dtype;
  a.writes = writes;
  a.name = p.buffer(buffer).name;
  return a;
}

// grid, block and shared memory from the family's rule; every grid extent is 1 .. 2^31 - 1.
void set_launch(PlannedKernel& kn, const launch::Geometry& g) {
  for (long long v : {g.grid.x, g.grid.y, g.grid.z})
    KILN_ASSERT(v >= 1 && v <= 0x7fffffff, "{}: grid extent {} out of range", kn.template_name, v);
  kn.set_launch(g);
}

void set_launch(Planner& p, PlannedKernel& kn, const GemmConfig& c) {
  kn.config = c;
  set_launch(kn, gemm_geometry(c, p.target().sm_count, kn.min_blocks));
}

// The kernel after a split-K GEMM (kn, its config complete, `ws` its workspace): the reduce
// kernel takes over kn's stores and epilogue. With a softmax over rows, SplitKSoftmax (one CTA
// per row); otherwise SplitKReduce (one thread per output). The caller adds it as a follow-up.
PlannedKernel split_k_reduce(Planner& p, PlannedKernel& kn, int ws, bool softmax, bool vec_c, bool stream_c) {
  GemmConfig c = std::get<GemmConfig>(kn.config);
  if (c.swap_ab) c = swap_operands(c);   // the workspace holds the op's C, not its transpose
  PlannedKernel reduce;
  reduce.anchor = kn.anchor;
  reduce.stores = std::move(kn.stores);
  reduce.args.push_back(buffer_arg(p, ws, false));
  if (softmax) {
    reduce.template_name = "gemm_split_k_softmax";
    c.kind = GemmKind::SplitKSoftmax;
    // A float4 per thread per 2 KB of row keeps N <= 16384 in registers with 512 threads.
    c.threads = c.n >= 8192 ? 512 : c.n >= 2048 ? 256 : 128;
    reduce.reason = fmt::format("one CTA per row: sums the {} split-K slices in a fixed order, epilogue, softmax over "
                                "{} columns, one write", c.split_k, c.n);
  } else {
    reduce.template_name = "gemm_split_k_reduce";
    c.kind = GemmKind::SplitKReduce;
    c.vec_c = vec_c;
    c.stream_c = stream_c;
    c.threads = kSplitKReduceThreads;
    reduce.reason = fmt::format("sums the {} split-K slices in a fixed order, then the epilogue", c.split_k);
  }
  set_launch(p, reduce, c);
  kn.stores.clear();
  kn.args.push_back(buffer_arg(p, ws, true));
  return reduce;
}

void add_split_k_reduce(Planner& p, PlannedKernel& kn, int ws, bool softmax, bool vec_c, bool stream_c) {
  p.add_followup(split_k_reduce(p, kn, ws, softmax, vec_c, stream_c));
}

// An f32 matmul whose 128x128 tiles cannot give every SM two CTAs while K is long (a linear
// layer with a small batch: bound by streaming W): split K so that the GPU is full. GemmSplitK
// writes the partial sums; a following softmax over rows is fused with the reduction
// (SplitKSoftmax: one CTA per row adds the slices in a fixed order, applies the epilogue and
// normalizes, writing the output once), otherwise SplitKReduce adds them and applies the
// epilogue.
//   tf32: 8 warps of 64x32, 3 stages (110 KB), 2 CTAs per SM (registers capped at 128);
//   3xTF32: 8 warps of 64x32, 4 stages, 1 CTA per SM (acc + part: 204 registers);
//   ieee: 16 warps of 32x32, 4 stages, 1 CTA per SM. Splits: as many as fill one wave of resident CTAs (at least 2).
void plan_split_k_wide(Planner& p, PlannedKernel& kn, GemmConfig g, std::int64_t tiles, const std::string& why,
                       bool softmax, bool vec_c, bool stream_c) {
  const std::int64_t sms = p.target().sm_count;
  const bool tf32 = g.precision == MmaPrecision::Tf32;
  // 3xTF32 with 8 warps of 64x32 (204 registers, 1 CTA per SM) measured 1.292 ms on the linear
  // seed against 1.394 for 16 warps of 32x32 (bench/results/2026-11-22-h100-run5).
  const bool x3 = g.precision == MmaPrecision::Tf32x3;
  g.bm = 128, g.bn = 128, g.bk = 32, g.wm = tf32 || x3 ? 64 : 32, g.wn = 32;
  const bool a_k = gemm_a_k_contig(g), b_k = gemm_b_k_contig(g);
  g.stages = tf32 ? 3 : 4;
  while (g.stages > 2 && tile_engine_smem(4, g.bm, g.bn, g.bk, g.wn, g.stages, a_k, b_k) > smem_limit(p.target()))
    --g.stages;
  const std::int64_t per_sm = tf32 ? ctas_by_smem(p.target(), tile_engine_smem(4, g.bm, g.bn, g.bk, g.wn, g.stages,
                                                                                  a_k, b_k), 2)
                                   : 1;
  g.split_k = static_cast<int>(std::clamp<std::int64_t>(
      per_sm * sms / tiles, 2, std::max<std::int64_t>(2, std::min<std::int64_t>(16, g.k / 512))));
  g.kind = GemmKind::SplitK;
  kn.min_blocks = static_cast<int>(per_sm);
  kn.template_name = "gemm_split_k";
  const int ws = p.add_workspace(fmt::format("splitk{}", kn.anchor), DType::f32, {g.split_k, g.batch, g.m, g.n});
  set_launch(p, kn, g);
  kn.reason = fmt::format("matmul {}x{}x{} batch {}: only {} 128x128 tiles for {} SMs and K is long: split-K into {} "
                          "slices ({} CTAs, {} per SM resident, {}x{} warp tiles, BK {}, {} stages); {}; {}",
                          g.m, g.n, g.k, g.batch, tiles, sms, g.split_k, tiles * g.split_k, per_sm, g.wm, g.wn, g.bk,
                          g.stages,
                          softmax ? fmt::format("the softmax on line {} is fused into the reduce kernel (epilogue, row "
                                                "statistics, normalize)", p.node(kn.stores[0].node).loc.line)
                                  : std::string("a deterministic reduce kernel applies the epilogue"),
                          why);
  add_split_k_reduce(p, kn, ws, softmax, vec_c, stream_c);
}

// The Hopper cp.async path (sm_90a only, f32 operands: WgGemm is tf32 / 3xTF32): wgmma reads both
// operands from 128-byte-swizzled shared memory, which for f32 needs k contiguous in both,
// 16-byte rows and aligned bases. (16-bit operands that the TMA engine cannot take, rows not a
// multiple of 16 bytes, stay on the mma.sync Gemm.)
bool wgmma_fits(const Planner& p, const GemmConfig& g) {
  return p.target().arch == "sm_90a" && g.elem_bytes == 4 && g.precision != MmaPrecision::Ieee && gemm_a_k_contig(g) &&
         gemm_b_k_contig(g) && g.vec_a && g.vec_b;
}

// The tile, stages and K-slice picks of a tiled GEMM (MmaPick, WgPick: {bm, bn, stages, split_k}),
// appended to `out` unless there: CTA tiles of 64 or 128 rows x 64 or 128 columns, none wider than
// the power of two at or above its extent; at each, stages from top(bm, bn) down to one fewer (not
// under `min_stages`), and K slices 1, rule(bm, bn) and twice that, at most max(1, max_splits).
template <class P, class Top, class Rule>
void add_tile_picks(std::vector<P>& out, const GemmConfig& g, int min_stages, std::int64_t max_splits, Top top,
                    Rule rule) {
  auto fits = [](int size, std::int64_t extent) { return size == 64 || extent > 64; };
  for (int bm : {64, 128})
    for (int bn : {64, 128}) {
      if (!fits(bm, g.m) || !fits(bn, g.n)) continue;
      const int most = top(bm, bn), splits = rule(bm, bn);
      for (int stages = most; stages >= std::max(min_stages, most - 1); --stages)
        for (int k : {1, splits, 2 * splits}) {
          const P c{bm, bn, stages, k};
          if (k <= std::max<std::int64_t>(1, max_splits) && std::find(out.begin(), out.end(), c) == out.end())
            out.push_back(c);
        }
    }
}

// [Note: wgmma picks]
// The cp.async wgmma engine's tuner picks (WgPick): CTA tiles of 64 or 128 rows (1 or 2
// warpgroups) x 64 or 128 columns, none wider than the power of two at or above its extent but
// the heuristic's 128x128; the rule's stages at that tile (6 in tf32, 4 in 3xTF32, fewer where
// shared memory is short, at least 3) and one fewer; K slices 1, the rule's at that tile and
// twice as many, within the rule's bound (16, each at least 512 of K, only from kLongK).
int wg_stages(const Target& t, int bm, int bn, bool x3) {
  int stages = x3 ? 4 : 6;
  while (stages > 3 && wg_engine_smem(bm, bn, stages, x3) > smem_limit(t)) --stages;
  return stages;
}
std::int64_t wg_max_splits(const GemmConfig& g) { return g.k >= kLongK ? std::min<std::int64_t>(16, g.k / 512) : 1; }
int wg_splits(const GemmConfig& g, int bm, int bn, std::int64_t sms) {
  const std::int64_t tiles = ceil_div(g.m, bm) * ceil_div(g.n, bn) * g.batch;
  return static_cast<int>(std::clamp<std::int64_t>((sms + tiles / 2) / tiles, 1, std::max<std::int64_t>(1, wg_max_splits(g))));
}
std::vector<WgPick> wg_candidates(const Target& t, const GemmConfig& g, const WgPick& heuristic) {
  std::vector<WgPick> out{heuristic};
  const bool x3 = g.precision == MmaPrecision::Tf32x3;
  add_tile_picks(out, g, 3, wg_max_splits(g), [&](int bm, int bn) { return wg_stages(t, bm, bn, x3); },
                 [&](int bm, int bn) { return wg_splits(g, bm, bn, t.sm_count); });
  return out;
}

// A wgmma GEMM: 128x128 tiles (two warpgroups of m64n128), 1 CTA per SM, split along K so one
// wave covers the SMs when the tiles alone cannot (each split a whole number of 32-wide k tiles).
// Measured on the linear seed (128 x 16384 x 16384, bench/standalone/gemm_check.cu, H100):
//   tf32: 1 split, 6 stages: gemm 0.386 ms (W read at 2.8 TB/s); 2 splits 0.393; 128x256 tiles
//     with 2 splits 0.405; 2 CTAs per SM of 3 stages 0.438;
//   3xTF32: 2 splits, 4 stages 1.042 ms, 1 split 1.045; 2 or 3 CTAs per SM of 64x128 no better.
// With one split and no softmax the GEMM stores through the epilogue itself; otherwise the
// partial sums go to the workspace and the split-K reduce (or SplitKSoftmax) finishes.
void plan_wgmma(Planner& p, PlannedKernel& kn, GemmConfig g, const std::string& why, bool softmax, bool vec_c,
                bool stream_c) {
  const std::int64_t sms = p.target().sm_count;
  const bool x3 = g.precision == MmaPrecision::Tf32x3;
  const WgPick heuristic{128, 128, wg_stages(p.target(), 128, 128, x3), wg_splits(g, 128, 128, sms)};
  std::string pick_note = "; config: heuristic";   // [Note: wgmma picks]
  const WgPick pick =
      p.offer_picks(kn.anchor, fmt::format("matmul {}x{}x{} batch {} (wgmma engine)", g.m, g.n, g.k, g.batch), heuristic,
                    wg_candidates(p.target(), g, heuristic), pick_note, "wgmma engine");
  g.bm = pick.bm, g.bn = pick.bn, g.stages = pick.stages;
  const std::int64_t tiles = ceil_div(g.m, g.bm) * ceil_div(g.n, g.bn) * g.batch;
  const std::int64_t splits = pick.split_k;
  const std::string head = fmt::format("matmul {}x{}x{} batch {}: sm_90a wgmma, {}x{} tiles ({} warpgroup{} of m64n{}), "
                                       "BK 32, {} stages of 128-byte-swizzled cp.async, 1 CTA per SM",
                                       g.m, g.n, g.k, g.batch, g.bm, g.bn, g.bm / 64, g.bm > 64 ? "s" : "", g.bn,
                                       g.stages);
  if (splits == 1 && !softmax) {
    kn.template_name = "gemm_wgmma";
    g.kind = GemmKind::Wgmma;
    g.vec_c = vec_c;
    g.stream_c = stream_c;
    set_launch(p, kn, g);
    kn.reason = fmt::format("{}, {} tiles{}; {}{}", head, tiles, stream_c ? ", streaming stores" : "", why, pick_note);
    return;
  }
  kn.template_name = "gemm_wgmma_split_k";
  g.kind = GemmKind::WgmmaSplitK;
  g.split_k = static_cast<int>(splits);
  const int ws = p.add_workspace(fmt::format("splitk{}", kn.anchor), DType::f32, {splits, g.batch, g.m, g.n});
  set_launch(p, kn, g);
  kn.reason = fmt::format("{}, {} tiles x {} K slices for {} SMs; {}; {}{}", head, tiles, splits, sms,
                          softmax ? fmt::format("the softmax on line {} is fused into the reduce kernel (epilogue, row "
                                                "statistics, normalize)", p.node(kn.stores[0].node).loc.line)
                                  : std::string("a deterministic reduce kernel applies the epilogue"),
                          why, pick_note);
  add_split_k_reduce(p, kn, ws, softmax, vec_c, stream_c);
}

// The TMA engine (gemm_tma.cuh, sm_90a): f16 / bf16 in any layout, or f32 as tf32, read through
// tensor maps, whose row and batch strides must be multiples of 16 bytes. A softmax over the rows
// (f32) is fused into the split-K reduce (SplitKSoftmax) where the tiles are few (fewer than two
// per SM); with more, the row-statistics Gemm keeps it (the engine keeps no row statistics).
// An operand the engine cannot map as stored goes through OperandPrep first, into a k-major
// workspace [batches][rows][prep_ldw] (rows padded to 16 bytes) that the engine maps instead:
//   - f32 whose k is not contiguous (B row-major, A transposed): wgmma reads f32 only k-major, so
//     it is transposed;
//   - any operand whose row or batch stride is not a multiple of 16 bytes (bf16 with K = 4799):
//     copied (k contiguous) or transposed (k strided) to padded rows.
// 16-bit operands with 16-byte strides are read in place in any layout. A pre-pass that pads
// (the copy exists only to pad, or the transposed rows are not 16 bytes long) must pay for its
// launch and its pass over the operand: the product needs kPadMinFlops, else the mma.sync Gemm
// reads the operand in place.
// 3xTF32 (f32 at fp32 accuracy) takes the engine where the GPU is full and both sides are long
// (kX3MinSide): B then goes through the pre-pass, which also splits it into tf32 hi and lo parts
// (gemm_x3), A is split by the engine's consumers in registers ([Note: 3xTF32 with A split in
// registers] in gemm_tma.cuh; A has a pre-pass only to be made k-major or aligned), and the
// engine runs three tf32 products per k step. B's pre-pass reads it once and writes it twice (for
// a linear layer with a small batch that would cost more than the product: WgGemm keeps those,
// its split pass rewrites each stage in shared memory).
// 2^30 flops is ~2 µs of the engine at full rate, about one launch: below it the padded path's
// extra launch and pass over the operand cost what the engine saves over the mma.sync Gemm's one
// launch (an estimate, not a measurement).
constexpr double kPadMinFlops = 1073741824.0;
constexpr std::int64_t kX3MinSide = 1024;

// f32 operands wgmma cannot read as stored: B when not k-major, A when not k-major under 3xTF32
// (tf32 takes an m-major A through registers: [Note: tf32 A through registers] in gemm_tma.cuh).
bool tma_transposes(const GemmConfig& g, int which) {
  return g.elem_bytes == 4 && !(which == 1 ? gemm_a_k_contig(g) || !gemm_x3(g) : gemm_b_k_contig(g));
}

bool tma_misaligned(const GemmConfig& g, const Operand& o) {
  return o.ld * g.elem_bytes % 16 != 0 || o.batch_stride * g.elem_bytes % 16 != 0;
}

// [Note: realigning an m- or n-major operand]
// A 16-bit operand stored m- or n-major (B of a·b) whose rows do not start on 128-byte lines is
// read by the engine's boxes of 128-byte rows, each then two lines: on an H100 the bf16
// 6007x3336x4800 a·b (B's rows 6672 bytes, 16 off a line) took 0.40-0.415 ms against 0.25-0.26
// for N = 3392 (rows on lines), with C's rows off a line alone costing 0.27-0.29 (a·bᵀ, N 3336)
// and A's k rows off a line 0.27-0.28 against 0.25 (K 4808 against 4864): the m- or n-major
// operand's off-line boxes cost 0.12 ms, L2 read sectors 81M against 52M (Nsight Compute). Its
// pre-pass (a transpose to k-major rows) brought that product to 0.313 ms, pass included
// (bench/results/2026-12-07-h100-run1). It pays where the engine's tile rows read the operand
// many times over: at least kRealignMinReads tiles of 128 along the other side (47 there; with
// few reads the pass costs about what it saves: an estimate from that one shape, 2x margin).
constexpr std::int64_t kRealignMinReads = 16;
bool tma_realigns(const GemmConfig& g, int which, const Operand& o) {
  const bool k_contig = which == 1 ? gemm_a_k_contig(g) : gemm_b_k_contig(g);
  if (g.elem_bytes != 2 || k_contig || o.ld * g.elem_bytes % 128 == 0) return false;
  const std::int64_t reads = ceil_div(which == 1 ? g.n : g.m, 128);
  return reads >= kRealignMinReads;
}

// 3xTF32 splits B in its pre-pass, A in the engine (tma_split_parts).
bool tma_needs_prep(const GemmConfig& g, int which, const Operand& o) {
  return (gemm_x3(g) && which == 2) || tma_transposes(g, which) || tma_misaligned(g, o) || tma_realigns(g, which, o);
}
// The parts of operand `which` the engine maps: 3xTF32's B as tf32 hi and lo parts (lo after hi),
// A always as stored (the consumers split it).
std::int64_t tma_split_parts(const GemmConfig& g, int which) { return gemm_x3(g) && which == 2 ? 2 : 1; }

// The pre-pass of operand `which` (1: A, 2: B): the operand as stored. It splits only B.
GemmConfig prep_config(const GemmConfig& g, int which) {
  GemmConfig pc = g;
  pc.kind = GemmKind::OperandPrep;
  pc.prep = which;
  pc.threads = kOperandPrepThreads;
  if (tma_split_parts(g, which) == 1 && gemm_x3(g)) pc.precision = MmaPrecision::Tf32;
  return pc;
}

// Does the pre-pass pad (rather than transpose an f32 operand into rows that need no padding)?
bool tma_pads(const GemmConfig& g, int which, const Operand& o) {
  return tma_needs_prep(g, which, o) && (!tma_transposes(g, which) || prep_ldw(prep_config(g, which)) != g.k);
}

// The product as the engine runs it. tf32 a·b (A k-major, B n-major, both with 16-byte strides)
// runs as Cᵀ = Bᵀ·Aᵀ (swap_ab): the engine's A is the op's B, m-major, taken through registers,
// its B the op's A, k-major, and the tile's C is stored transposed; no operand needs a pre-pass.
// (The op's B transposed by OperandPrep instead costs a pass over B: 0.87-0.91x cuBLAS at
// 4096^3 and 8192^3, 0.80x at 512x512x262144, bench/results/2026-11-26-h100-run1.)
struct TmaView {
  GemmConfig g;
  Operand a, b;
};
bool tma_misaligned(const GemmConfig& g, const Operand& o);
TmaView tma_view(const GemmConfig& g, const Operand& a, const Operand& b) {
  const bool swap = g.elem_bytes == 4 && g.precision == MmaPrecision::Tf32 && gemm_a_k_contig(g) &&
                    !gemm_b_k_contig(g) && !tma_misaligned(g, a) && !tma_misaligned(g, b);
  if (!swap) return {g, a, b};
  return {swap_operands(g), b, a};
}

bool tma_fits(const Planner& p, const GemmConfig& op, const Operand& op_a, const Operand& op_b, bool softmax) {
  if (p.target().arch != "sm_90a" || !p.target().aligned16) return false;
  const TmaView v = tma_view(op, op_a, op_b);
  const GemmConfig& g = v.g;
  const Operand &a = v.a, &b = v.b;
  if (g.elem_bytes == 4 && g.precision == MmaPrecision::Ieee) return false;
  if (gemm_x3(g) && (softmax || std::min(g.m, g.n) < kX3MinSide ||
                     ceil_div(g.m, 128) * ceil_div(g.n, 128) * g.batch < p.target().sm_count))
    return false;
  if (softmax && ceil_div(g.m, 128) * ceil_div(g.n, 128) * g.batch >= 2 * p.target().sm_count) return false;
  const std::int64_t e = g.elem_bytes;
  // The template's tile coordinates are int (a TMA coordinate is 32-bit) and a map's strides stay
  // below 2^40 bytes (runtime/tensor_map.h checks the rest).
  constexpr std::int64_t kCoord = std::int64_t{1} << 31, kStride = std::int64_t{1} << 40;
  for (std::int64_t extent : {g.m, g.n, g.k, g.batch})
    if (extent >= kCoord) return false;
  const double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) *
                       static_cast<double>(g.batch);
  for (int which : {1, 2}) {
    const Operand& o = which == 1 ? a : b;
    if (!tma_needs_prep(g, which, o)) {
      if (o.ld * e >= kStride || o.batch_stride * e >= kStride) return false;
      continue;
    }
    if (tma_pads(g, which, o) && flops < kPadMinFlops) return false;
    // The workspace [batches][rows][ldw] is what the engine maps; the pre-pass's grid y and z stop
    // at 65535 (launch::kMaxGridY).
    const GemmConfig pc = prep_config(g, which);
    const launch::Geometry geo = gemm_geometry(pc, p.target().sm_count, 1);
    if (geo.grid.y > launch::kMaxGridY || geo.grid.z > launch::kMaxGridY || prep_rows(pc) * prep_ldw(pc) * e >= kStride ||
        2 * prep_batches(pc) >= kCoord)
      return false;
  }
  return true;
}

// Why operand `which` has a pre-pass, and what it writes (`ws_elems` elements of the workspace).
std::string prep_reason(const GemmConfig& g, int which, const Operand& o, DType et, std::int64_t ws_elems) {
  const GemmConfig pc = prep_config(g, which);
  const std::int64_t e = g.elem_bytes, rows = prep_rows(pc), ldw = prep_ldw(pc);
  const bool k_contig = prep_k_contig(pc);
  // A transposed operand's stored strides do not matter (the engine maps the workspace), its row length does.
  const bool transposes = tma_transposes(g, which);
  const char* strides = "a tensor map's strides must be multiples of 16 bytes";
  const bool split = tma_split_parts(g, which) == 2;
  const std::string because = split       ? std::string("3xTF32: tf32 hi and lo parts, three products per k step")
                              : !tma_misaligned(g, o) && tma_realigns(g, which, o)
                                  ? fmt::format("its rows start off 128-byte lines and {} tile rows read it "
                                                "([Note: realigning an m- or n-major operand])",
                                                ceil_div(which == 1 ? g.n : g.m, 128))
                              : !transposes ? std::string(strides)
                              : ldw != g.k ? fmt::format("wgmma reads f32 operands only k-major; {}", strides)
                                           : std::string("wgmma reads f32 operands only k-major");
  return fmt::format("operand {} ({} stored [{}, {}], {} contiguous, rows of {} bytes) {} to k-contiguous rows of {} "
                     "bytes{}{} in a workspace ({:.1f} MB) for the TMA engine: {}",
                     which == 1 ? "A" : "B", dtype_name(et), k_contig ? rows : g.k, k_contig ? g.k : rows,
                     k_contig ? "k" : which == 1 ? "m" : "n", o.ld * e, k_contig ? "copied" : "transposed", g.k * e,
                     ldw != g.k ? fmt::format(" padded to {}", ldw * e) : std::string(),
                     split ? ", split into hi and lo parts" : "", static_cast<double>(ws_elems * e) / 1e6, because);
}

// What the engine maps for one operand: a leaf, or the pre-pass's workspace.
struct MappedOperand {
  int buffer = -1;
  std::int64_t ld = 0, batch_stride = 0;
};

// The kernel parameter `name`: a tensor map over `buffer` (128-byte swizzle unless `spec` says).
KernelArg tensor_map_arg(int buffer, const char* name, DType dtype, TensorMapSpec spec) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::TensorMap;
  arg.buffer = buffer;
  arg.dtype = dtype;
  arg.name = name;
  arg.tensor_map = std::move(spec);
  return arg;
}

// A tensor map over a matmul operand (R rows of m or n; k_contig: k is the stored inner dim),
// 3-D: inner, outer, batch, with the box the template loads (config/gemm.h's tma_box).
// parts: 2 where the lo parts of 3xTF32 follow the hi parts (2 x the batches).
KernelArg operand_map(const MappedOperand& o, const char* name, DType dtype, std::int64_t rows, std::int64_t k,
                      std::int64_t batch, bool k_contig, const TmaBox& box, int parts) {
  const std::int64_t e = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int64_t inner = k_contig ? k : rows, outer = k_contig ? rows : k;
  const std::int64_t batches = o.batch_stride != 0 ? batch : 1;
  TensorMapSpec m;
  m.dims = {inner, outer, batches * parts};
  m.strides = {o.ld * e, (o.batch_stride != 0 ? o.batch_stride : outer * o.ld) * e};
  m.box = {box.inner, box.outer, 1};
  return tensor_map_arg(o.buffer, name, dtype, std::move(m));
}

// Pre-passes ahead of a kernel: kn, the anchor's slot in launch order, becomes the first pass (it
// keeps the reads the planner gives it and gains the pass's workspace), and the others follow it
// as follow-ups; the caller adds the kernel they prepare after them.
void place_passes(Planner& p, PlannedKernel& kn, std::vector<PlannedKernel>& passes) {
  kn.template_name = passes[0].template_name;
  kn.reason = passes[0].reason;
  kn.args.insert(kn.args.end(), passes[0].args.begin(), passes[0].args.end());
  kn.config = passes[0].config;   // (its launch as planned: a copy with a launch's rows has no rule's grid)
  kn.grid = passes[0].grid, kn.block = passes[0].block, kn.shared_bytes = passes[0].shared_bytes;
  for (std::size_t i = 1; i < passes.size(); ++i) {
    passes[i].anchor = kn.anchor;
    p.add_followup(std::move(passes[i]));
  }
}

// The pick's fields of an engine config, and back ([Note: tuned picks] in plan.h).
TmaPick tma_pick_of(const GemmConfig& c) {
  return {c.bm, c.bn, c.bk, c.consumers_n, c.stages, c.split_k, c.cluster_m, c.group_m};
}

void tma_apply(GemmConfig& c, const TmaPick& t) {
  c.bm = t.bm, c.bn = t.bn, c.bk = t.bk, c.consumers_n = t.consumers_n, c.stages = t.stages, c.split_k = t.split_k;
  c.cluster_m = t.cluster_m, c.group_m = t.group_m;
}

// Tile rows per rasterization group of the persistent schedule (the heuristic's and every candidate's).
constexpr int kTmaGroupM = 8;

// As many stages as fit in shared memory, at most 8 (fewer than 2: the tile does not fit).
int tma_max_stages(const GemmConfig& c, int smem) {
  int stages = 8;
  while (stages > 1 && tma_gemm_smem(c.elem_bytes, c.bm, c.bn, c.bk, stages, gemm_x3(c)) > smem) --stages;
  return stages;
}

// Clusters of two CTAs along M share each B tile: each loads half and the TMA unit multicasts it
// into both, so L2 serves B once per pair. Measured against the same kernels without clusters in
// one run (bench/results/2026-11-26-h100-run8): bf16 1000³ (128 tiles, one per CTA: latency- and
// L2-bound) 0.016 → 0.014 ms; the large 16-bit and tf32 products unchanged within the noise;
// split-K (512x512x262144: bf16 0.212 → 0.239 ms), batched bf16 32x1024³ (0.117 → 0.121) and tf32
// 1000³ through registers (0.017 → 0.019) slower. So: 16-bit operands, one K slice, at most one
// wave of tiles, two tile rows or more, and a B tile that halves into whole swizzle groups or
// boxes (BN >= 128).
int tma_cluster_m(const GemmConfig& mg, std::int64_t sms) {
  const std::int64_t tiles = ceil_div(mg.m, mg.bm) * ceil_div(mg.n, mg.bn) * mg.batch;
  return mg.elem_bytes == 2 && mg.split_k == 1 && tiles <= sms && ceil_div(mg.m, mg.bm) >= 2 && mg.bn >= 128 ? 2 : 1;
}

// How many K slices the engine splits a product into: one where its tiles fill the SMs or K is
// short; otherwise as many as make one wave of (slice, tile) units, each slice at least 4 k tiles
// (the workspace is then at most one wave of tiles: 132 x 128 x 256 floats, 17 MB). A fused
// softmax always takes the split-K reduce (SplitKSoftmax), with one slice or more.
// The most K slices a product takes: each slice at least 4 k tiles.
std::int64_t tma_max_splits(std::int64_t k_tiles) { return std::max<std::int64_t>(1, k_tiles / 4); }

// As many slices as make one wave of (slice, tile) units, within tma_max_splits.
std::int64_t tma_wave_splits(std::int64_t sms, std::int64_t tiles, std::int64_t k_tiles) {
  return std::clamp<std::int64_t>(sms / tiles, 1, tma_max_splits(k_tiles));
}

std::int64_t tma_splits(std::int64_t sms, std::int64_t tiles, std::int64_t k_tiles, std::int64_t k, bool softmax) {
  if (!softmax && (2 * tiles > sms || k < kLongK)) return 1;
  return tma_wave_splits(sms, tiles, k_tiles);
}

// The TMA engine's tiles: 128x256 (two consumer warpgroups of m64n256) where N > 128 and those tiles give
// every SM at least two and three stages of them fit; 128x128 while they fill 90% of the SMs; else
// 64x128: for 16-bit operands two consumers of m64n64 with BK of two swizzle atoms (128), for
// tf32 one consumer of m64n128. (bf16 1000³, one tile per CTA, four runs each in one device call,
// bench/results/2026-11-26-h100-run10: one m64n128 consumer with BK 64 0.83-0.91x cuBLAS, two
// m64n64 0.88-0.92x, two with BK 128 0.89-0.93x; cuBLAS runs 64x128 tiles, 8 stages, clusters of
// 2 and three warpgroups. tf32 1000³ through registers was 1.03-1.06x with two, 1.07-1.11x with
// one.) A long K whose 128x128 tiles cannot fill half the SMs takes 64x128 tiles where those
// fill half the SMs or M <= 64 (split as needed), else is split (tma_splits): 128x256 tiles where
// there are still at least 4 slices per tile (not in 3xTF32: tma_tile_fits_x3), else 128x128;
// the slices' partial sums go to a workspace and SplitKReduce (or SplitKSoftmax) adds them and
// applies the epilogue. BK is one
// 128-byte swizzle atom of k (64 f16 / bf16, 32 f32; two on those 64x128 tiles); as many stages
// as fit, at most 8. `mg` is the engine's config with everything but the pick set.
TmaPick tma_heuristic(const GemmConfig& mg, std::int64_t sms, int smem, bool softmax) {
  auto tiles = [&](int bm, int bn) { return ceil_div(mg.m, bm) * ceil_div(mg.n, bn) * mg.batch; };
  GemmConfig c = mg;
  c.bk = 128 / c.elem_bytes;
  const std::int64_t k_tiles = ceil_div(c.k, c.bk);
  const std::int64_t splits = tma_splits(sms, tiles(128, 128), k_tiles, c.k, softmax);
  // Few rows of a long K (a linear layer over a few tokens): 64-row tiles, with K slices only where
  // they cannot fill half the SMs either (and then only for M <= 64, whose 128-row tiles would be
  // half empty: more rows keep the wider tiles, which read A and B fewer times). Tuned on an H200
  // (bench/results/2026-12-04-h200-run25): bf16 64x4096x4096 took 0.0176 ms on 64x128 c2 with 4
  // slices against 0.0221 on 128x256 with 8; f16 384x2048x2048 0.0132 on 64x128 c2 without slices
  // against 0.0227 on 128x256 with 5.
  const auto narrow = [&] {   // 64x128: two consumers of m64n64 and BK of two atoms for 16-bit operands
    c.bm = 64, c.bn = 128;
    if (c.elem_bytes == 2) c.consumers_n = 2, c.bk = 2 * 128 / c.elem_bytes;
  };
  const bool few_rows = splits > 1 && !softmax && (2 * tiles(64, 128) > sms || c.m <= 64);
  if (few_rows) {
    narrow();
    c.split_k = static_cast<int>(tma_splits(sms, tiles(64, 128), ceil_div(c.k, c.bk), c.k, false));
  } else if (splits > 1 || softmax) {
    const bool wide = c.n > 128 && (!gemm_x3(c) || tma_tile_fits_x3(256, c.consumers_n)) &&
                      tma_splits(sms, tiles(128, 256), k_tiles, c.k, softmax) >= 4;
    c.bm = 128, c.bn = wide ? 256 : 128;
    c.split_k = static_cast<int>(tma_splits(sms, tiles(c.bm, c.bn), k_tiles, c.k, softmax));
  } else if (c.n > 128 && tiles(128, 256) >= 2 * sms && tma_gemm_smem(c.elem_bytes, 128, 256, c.bk, 3, gemm_x3(c)) <= smem) {
    c.bm = 128, c.bn = 256;   // (3xTF32's hi and lo tiles leave 128x256 two stages: 128x128 keeps three)
  } else if (10 * tiles(128, 128) >= 9 * sms) {
    // (90%: 128 tiles on 132 SMs, bf16 512x4096x4096 0.0295 ms on 128x128 against 0.0349 on 64x128,
    // tf32 400x4096x4096 0.0545 against 0.0599: run25.)
    c.bm = 128, c.bn = 128;
  } else {
    narrow();
  }
  c.stages = tma_max_stages(c, smem);
  c.group_m = kTmaGroupM;
  c.cluster_m = tma_cluster_m(c, sms);
  return tma_pick_of(c);
}

// Every legal pick for the product: each tile shape (64x128 with one consumer, and with two and
// BK of two atoms for 16-bit operands; 128x128; 128x256 where N > 128, but not in 3xTF32:
// tma_tile_fits_x3) with as many stages as fit (two at least); one K slice, the one wave of units
// tma_splits takes, or a power of two up to two waves, each slice at least 4 k tiles; and
// clusters of 2 where tma_cluster_m's preconditions hold. The heuristic's pick is one of them.
std::vector<TmaPick> tma_candidates(const GemmConfig& mg, std::int64_t sms, int smem, bool softmax) {
  const int atom = 128 / mg.elem_bytes;
  struct Tile { int bm, bn, consumers_n, bk; };
  std::vector<Tile> tiles_list = {{64, 128, 1, atom}};
  if (mg.elem_bytes == 2) tiles_list.push_back({64, 128, 2, 2 * atom});
  tiles_list.push_back({128, 128, 1, atom});
  if (mg.n > 128) tiles_list.push_back({128, 256, 1, atom});
  std::vector<TmaPick> out;
  for (const Tile& t : tiles_list) {
    if (gemm_x3(mg) && !tma_tile_fits_x3(t.bn, t.consumers_n)) continue;
    GemmConfig c = mg;
    c.bm = t.bm, c.bn = t.bn, c.consumers_n = t.consumers_n, c.bk = t.bk, c.group_m = kTmaGroupM;
    c.stages = tma_max_stages(c, smem);
    if (c.stages < 2) continue;
    const std::int64_t tiles = ceil_div(c.m, c.bm) * ceil_div(c.n, c.bn) * c.batch;
    const std::int64_t k_tiles = ceil_div(c.k, c.bk);
    // K slices: one; the one wave tma_splits would take; and powers of two up to two waves of
    // (slice, tile) units, each slice at least 4 k tiles.
    const std::int64_t most = tma_max_splits(k_tiles);
    std::set<int> splits = {1, static_cast<int>(tma_wave_splits(sms, tiles, k_tiles))};
    for (std::int64_t s = 2; s <= most && s * tiles <= 2 * sms; s *= 2) splits.insert(static_cast<int>(s));
    for (int s : splits) {
      c.split_k = s;
      c.cluster_m = 1;
      out.push_back(tma_pick_of(c));
      if (tma_cluster_m(c, sms) == 2) {
        c.cluster_m = 2;
        out.push_back(tma_pick_of(c));
      }
    }
  }
  return out;
}

// Each operand the engine cannot map as stored (tma_fits) gets an OperandPrep kernel first, and the
// engine maps its workspace (kn becomes the first of them; the engine follows, then the reduce).
// The tiles, stages, K slices, cluster and rasterization group come from tma_heuristic, or from a
// legal pick in Target::tuned_picks ([Note: tuned picks]).
void plan_tma(Planner& p, PlannedKernel& kn, const GemmConfig& op, const Operand& op_a, const Operand& op_b, DType et,
              const std::string& why, bool softmax, bool vec_c, bool stream_c, const DynMatmul* dyn = nullptr) {
  const std::int64_t sms = p.target().sm_count;
  const TmaView v = tma_view(op, op_a, op_b);
  const GemmConfig& g = v.g;
  const Operand &a = v.a, &b = v.b;
  auto tiles = [&](int bm, int bn) { return ceil_div(g.m, bm) * ceil_div(g.n, bn) * g.batch; };
  MappedOperand ma{p.leaf_buffer(a.leaf), a.ld, a.batch_stride}, mb{p.leaf_buffer(b.leaf), b.ld, b.batch_stride};
  GemmConfig mg = g;   // the engine's config: what it maps
  std::vector<PlannedKernel> preps;
  for (int which : {1, 2}) {
    const Operand& o = which == 1 ? a : b;
    if (!tma_needs_prep(g, which, o)) continue;
    MappedOperand& m = which == 1 ? ma : mb;
    const GemmConfig pc = prep_config(g, which);
    const std::int64_t rows = prep_rows(pc), ldw = prep_ldw(pc), batches = prep_batches(pc);
    const std::int64_t parts = tma_split_parts(g, which);
    const int ws = p.add_workspace(fmt::format("kmajor_{}{}", which == 1 ? "a" : "b", kn.anchor), et,
                                   {parts * batches, rows, ldw});
    PlannedKernel prep;
    prep.template_name = "gemm_operand_prep";
    prep.args.push_back(buffer_arg(p, ws, true));
    set_launch(p, prep, pc);
    prep.reason = prep_reason(g, which, o, et, parts * batches * rows * ldw);
    preps.push_back(std::move(prep));
    m = {ws, ldw, o.batch_stride != 0 ? rows * ldw : 0};
    if (which == 1) mg.layout_a = GemmLayout::RowMajor, mg.lda = m.ld, mg.stride_a = m.batch_stride;
    else mg.layout_b = GemmLayout::ColMajor, mg.ldb = m.ld, mg.stride_b = m.batch_stride;
  }
  mg.kind = GemmKind::Tma;
  const int smem = smem_limit(p.target());
  std::string what = fmt::format("matmul {}x{}x{} batch {}", op.m, op.n, op.k, op.batch);
  TmaPick heuristic = tma_heuristic(mg, sms, smem, softmax);
  std::vector<TmaPick> candidates = tma_candidates(mg, sms, smem, softmax);
  std::string pick_note = "; config: heuristic";
  // [Note: dyn matmul]: a dyn product is tuned per bucket and size class (the tuned store's key
  // holds both, tuning_key_text), timed at the value it is tuned at; a class without a largest
  // value has no K slices (no workspace size), so neither the heuristic nor a candidate takes them.
  if (dyn != nullptr) {
    what += fmt::format(" ({})", dyn->text);
    if (!dyn->bounded() && dyn->sizes_workspace()) {
      std::erase_if(candidates, [](const TmaPick& c) { return c.split_k > 1; });
      if (heuristic.split_k > 1) {
        heuristic.split_k = 1;
        pick_note += ", one K slice (the size class has no largest value to size a workspace for)";
        if (std::find(candidates.begin(), candidates.end(), heuristic) == candidates.end())
          candidates.insert(candidates.begin(), heuristic);
      }
    }
  }
  tma_apply(mg, p.offer_picks(kn.anchor, std::move(what), heuristic, candidates, pick_note, "product"));
  const bool split = mg.split_k > 1 || softmax;
  mg.vec_c = split ? op.n % 4 == 0 : vec_c && !g.swap_ab;   // the workspace is 16-byte aligned; swap_ab stores by element
  // The reduce re-reads the workspace from L2. swap_ab's transposed stores fill each 32-byte sector
  // of C from two instructions (16 bytes each): evict-first would send half sectors to DRAM.
  mg.stream_c = !split && stream_c && !g.swap_ab;
  PlannedKernel engine;
  PlannedKernel& main = preps.empty() ? kn : engine;
  if (!preps.empty()) {
    main.anchor = kn.anchor;
    main.stores = std::move(kn.stores);
    kn.stores.clear();
  }
  main.template_name = "gemm_tma";
  main.setmaxnreg = true;
  main.cluster = mg.cluster_m;
  main.args.push_back(operand_map(ma, "tmap_a", et, mg.m, mg.k, mg.batch, gemm_a_k_contig(mg),
                                  tma_box(mg.elem_bytes, mg.bm, mg.bk, gemm_a_k_contig(mg)), tma_split_parts(mg, 1)));
  main.args.push_back(operand_map(mb, "tmap_b", et, mg.n, mg.k, mg.batch, gemm_b_k_contig(mg),
                                  tma_box(mg.elem_bytes, mg.bn / mg.cluster_m, mg.bk, gemm_b_k_contig(mg)),
                                  tma_split_parts(mg, 2)));
  if (dyn != nullptr) {   // the map extents a launch sets (dims {K, rows, batches} k-major, else {rows, K, batches})
    KernelArg& map_a = main.args[main.args.size() - 2];
    KernelArg& map_b = main.args.back();
    GemmConfig zeroed = mg;   // the engine's extents that are dyn: 0
    dyn->make_dyn(zeroed);
    auto dim_of = [&](const MappedOperand& m, long long rows, bool k_contig) {
      if (zeroed.batch == 0) return m.batch_stride != 0 ? 2 : -1;
      if (rows == 0) return k_contig ? 1 : 0;
      return zeroed.k == 0 ? (k_contig ? 0 : 1) : -1;
    };
    map_a.map_dyn_dim = dim_of(ma, zeroed.m, gemm_a_k_contig(mg));
    map_b.map_dyn_dim = dim_of(mb, zeroed.n, gemm_b_k_contig(mg));
  }
  set_launch(p, main, mg);
  const std::string split_why =
      !split ? std::string()
             : fmt::format(" x {} K slices (partial sums to a workspace; {})", mg.split_k,
                           softmax ? fmt::format("the softmax on line {} is fused into the reduce kernel (epilogue, "
                                                 "row statistics, normalize)", p.node(main.stores[0].node).loc.line)
                                   : std::string("a deterministic reduce kernel applies the epilogue"));
  main.reason = fmt::format("matmul {}x{}x{} batch {} {}({} {}, {} {}): sm_90a TMA engine, {}x{}x{} tiles ({} consumer "
                            "warpgroup{} of m64n{} + a TMA producer warpgroup), {} stages, {} persistent CTAs over {} "
                            "tiles{} in groups of {} tile rows{}{}; {}",
                            op.m, op.n, op.k, op.batch,
                            g.swap_ab ? fmt::format("as Cᵀ = Bᵀ·Aᵀ, {}x{} ", g.m, g.n) : std::string(),
                            g.swap_ab ? "Bᵀ" : "A", tma_needs_prep(g, 1, a) ? "k-contiguous after the pre-pass"
                            : gemm_a_k_contig(g)    ? "k-contiguous"
                            : g.elem_bytes == 4     ? "m-contiguous, through registers"
                                                    : "m-contiguous",
                            g.swap_ab ? "Aᵀ" : "B", tma_needs_prep(g, 2, b) ? "k-contiguous after the pre-pass"
                            : gemm_b_k_contig(g)    ? "k-contiguous"
                                                    : "n-contiguous",
                            mg.bm, mg.bn, mg.bk, tma_gemm_consumers(mg.bm, mg.consumers_n),
                            tma_gemm_consumers(mg.bm, mg.consumers_n) > 1 ? "s" : "", mg.bn / mg.consumers_n, mg.stages,
                            main.grid.x,
                            tiles(mg.bm, mg.bn), split_why, mg.group_m, mg.stream_c ? ", streaming stores" : "",
                            mg.cluster_m > 1 ? fmt::format(", clusters of {} CTAs along M sharing each B tile (TMA "
                                                           "multicast)", mg.cluster_m)
                                             : std::string(),
                            why) + pick_note;
  std::optional<PlannedKernel> reduce;
  if (split) {
    GemmConfig sized = op;   // a dyn extent's workspace holds its class's largest
    if (dyn != nullptr && dyn->sizes_workspace()) sized = dyn->at(op, dyn->high);
    const int ws = p.add_workspace(fmt::format("splitk{}", kn.anchor), DType::f32,
                                   {mg.split_k, sized.batch, sized.m, sized.n});
    reduce = split_k_reduce(p, main, ws, softmax, vec_c, stream_c);
  }
  if (preps.empty()) {
    if (reduce) p.add_followup(std::move(*reduce));
    return;
  }
  place_passes(p, kn, preps);
  p.add_followup(std::move(engine));
  if (reduce) p.add_followup(std::move(*reduce));
}

// [Note: small-K picks]
// The small-K kernels' tuner picks (SmallKPick), within the route the rule took (SmallK, or for
// 3xTF32 on sm_90a the wgmma SmallK, which its heuristic tile's fit decides): CTA tiles of 128 or
// 256 rows x 64 or 128 columns that fit shared memory, and
//   - on the mma.sync SmallK (warp tiles 64x32), 1 to 3 CTAs an SM as shared memory allows, while
//     an SM holds at most kSmallKPickThreads threads (half that in 3xTF32, whose warp tiles hold
//     twice the registers), so __launch_bounds__ leaves a thread 128 registers or more (255 in
//     3xTF32); the rule's tiles (256x64 at 1 an SM in tf32, 128x64 at 3 where that does not fit,
//     128x128 at 1 otherwise) measured best on 32768x64 . 64x32768 (plan_matmul's SmallK notes):
//     the picks are for other shapes and GPUs;
//   - on the wgmma SmallK, a B ring of 2 or 3 blocks, and no 256x128 tile (its accumulators would
//     fill the 128 registers a thread of 512 gets).
constexpr int kSmRegisters = 65536;                      // 32-bit registers an SM (sm_80 to sm_90)
constexpr int kSmallKPickThreads = kSmRegisters / 128;   // 512: 128 registers a thread
std::vector<SmallKPick> small_k_candidates(const Target& t, const GemmConfig& g, const SmallKPick& heuristic) {
  std::vector<SmallKPick> out{heuristic};
  auto add = [&](const SmallKPick& c) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  const int k = static_cast<int>(g.k);
  const bool x3 = g.precision == MmaPrecision::Tf32x3;
  for (int bm : {128, 256})
    for (int bn : {64, 128}) {
      if (heuristic.wgmma) {
        // a thread's two accumulator sets hold bn floats: at most half its share of the SM's
        // registers among the 2 bm threads (256x128 would spill)
        if (2 * bn * 2 * bm > kSmRegisters) continue;
        for (int ring : {2, 3})
          if (wg_small_k_smem(bm, bn, ring, k, x3) <= smem_limit(t)) add({true, bm, bn, ring});
        continue;
      }
      const int bytes = small_k_smem(bm, bn, k, false);
      if (bytes > smem_limit(t)) continue;
      const int threads = 32 * (bm / 64) * (bn / 32);
      const int most = static_cast<int>(ctas_by_smem(t, bytes, 3));
      for (int c = 1; c <= most && threads * c <= (x3 ? kSmallKPickThreads / 2 : kSmallKPickThreads); ++c)
        add({false, bm, bn, c});
    }
  return out;
}

// 3xTF32 small K on sm_90a: a pre-pass writes A and Bᵀ as k-contiguous tf32 hi/lo parts to a
// workspace (B is n-contiguous, and wgmma reads f32 operands only k-major), then persistent CTAs
// of four warpgroups run m64n64 wgmma with two accumulator sets, so the stores of one tile
// overlap the tensor cores' work on the next ([Note: small K on wgmma] in gemm_sm90.cuh).
// Measured on 32768x64 . 64x32768 (H100, bench/results/2026-11-22-h100-run11): 256x64 tiles with
// a B ring of 3: 1.93 ms, 128x128 with 2: 2.00, 128x64 with 3: 2.00; the mma.sync SmallK 2.61.
// For tf32 the same kernel measured 1.61 ms, no faster than the mma.sync SmallK (both store-bound
// at 84% of the write ceiling), which therefore stays the tf32 plan. Returns false (nothing
// planned) when no tile shape fits in shared memory.
bool plan_small_k_wgmma(Planner& p, PlannedKernel& kn, GemmConfig g, const std::string& why, bool stream_c) {
  const int shapes[][3] = {{256, 64, 3}, {256, 64, 2}, {128, 128, 2}, {128, 64, 2}};
  const int* rule = nullptr;
  for (const auto& s : shapes)
    if (wg_small_k_smem(s[0], s[1], s[2], static_cast<int>(g.k), true) <= smem_limit(p.target())) {
      rule = s;
      break;
    }
  if (rule == nullptr) return false;
  std::string pick_note = "; config: heuristic";   // [Note: small-K picks]
  const SmallKPick heuristic{true, rule[0], rule[1], rule[2]};
  const SmallKPick pick =
      p.offer_picks(kn.anchor, fmt::format("matmul {}x{}x{} (wgmma SmallK)", g.m, g.n, g.k), heuristic,
                    small_k_candidates(p.target(), g, heuristic), pick_note, "small k");
  const std::int64_t M = g.m, N = g.n, K = g.k;
  const std::int64_t ws_floats = 2 * (M + N) * K;
  const int ws = p.add_workspace(fmt::format("smallk{}", kn.anchor), DType::f32, {ws_floats});

  PlannedKernel main;
  main.anchor = kn.anchor;
  main.stores = std::move(kn.stores);
  main.template_name = "gemm_small_k_wgmma";
  GemmConfig mc = g;
  mc.kind = GemmKind::SmallKWgmma;
  mc.bm = pick.bm, mc.bn = pick.bn, mc.b_stages = pick.depth;
  mc.stream_c = stream_c;
  main.args.push_back(buffer_arg(p, ws, false));
  set_launch(p, main, mc);
  const std::int64_t tiles = ceil_div(M, mc.bm) * ceil_div(N, mc.bn);
  main.reason = fmt::format("matmul {}x{}x{}: K = {} fits one tile: sm_90a wgmma SmallK, {} persistent CTAs of {} "
                            "warpgroups over {} {}x{} tiles, a B ring of {}, two accumulator sets (the stores of one "
                            "tile overlap the wgmma of the next); {}{}", M, N, K, K, main.grid.x, mc.bm / 64, tiles,
                            mc.bm, mc.bn, mc.b_stages, why, pick_note);

  kn.template_name = "gemm_small_k_prep";
  g.kind = GemmKind::SmallKPrep;
  g.threads = kSmallKPrepThreads;
  kn.stores.clear();
  kn.args.push_back(buffer_arg(p, ws, true));
  set_launch(p, kn, g);
  kn.reason = fmt::format("operand pre-pass for the wgmma SmallK: A and Bᵀ to k-contiguous tf32 hi and lo parts "
                          "({:.1f} MB workspace)", static_cast<double>(ws_floats) * 4 / 1e6);
  p.add_followup(std::move(main));
  return true;
}

// GemvMma's block rows (16 or 32 a warp) and the columns from which its heuristic takes it: with
// 9 to 16 columns Gemv's FMA sums against x stored [K, P] ran at half cuBLAS's speed (8192 x 16 x
// 8192: 0.303 ms against 0.155, bench/results/2026-12-07-h100-run7), bound by x's loads.
constexpr int kGemvMmaRows[] = {128, 256};
constexpr int kGemvMmaFromP = 9;
// The longest K slice GemvMma's rule gives. Before [Note: the step's sums] a slice ran through the
// tensor cores' accumulators whole, and on an H100 (bench/results/2026-12-08-h100-run1) 3xTF32
// slices of 456-928 k met the fp32 bound while 1024-4096 k did not (1.0-4.3e-5). The step sums
// should make any length safe but have not run on a GPU yet: until they have, the rule's slices
// stay within what passed without them.
constexpr std::int64_t kGemvMmaMaxSlice = 896;

// The K slices' partial sums to a workspace that SplitKReduce adds in order (a Gemv or GemvMma
// kernel of more than one slice).
void add_gemv_slices(Planner& p, PlannedKernel& kn, const GemmConfig& g, bool vec_c, bool stream_c) {
  const int ws = p.add_workspace(fmt::format("splitk{}", kn.anchor), DType::f32, {g.split_k, g.batch, g.m, g.n});
  set_launch(p, kn, g);
  add_split_k_reduce(p, kn, ws, false, vec_c, stream_c);
}

// A skinny product on the tensor cores (gemv_mma.cuh): the pick's block rows and K slices.
bool plan_gemv_mma(Planner& p, PlannedKernel& kn, GemmConfig g, const GemvPick& pick, const std::string& why,
                   const std::string& pick_note, bool vec_c, bool stream_c) {
  g.kind = GemmKind::GemvMma;
  g.bm = pick.rows;
  g.split_k = pick.splits;
  kn.template_name = "gemv_mma";
  const bool big_a = gemv_big_is_a(g);
  kn.reason = fmt::format(
      "matmul {}x{}x{} batch {}: {} <= {}: GemvMma, {} rows per block ({} a warp: [Note: skinny products on the "
      "tensor cores]) of {} {} rows (k-contiguous, 16-byte loads) against {} column{} of {}, mma.sync m16n8k8 {}, x "
      "staged {} k at a time, {} blocks x {} K slices{}; {}{}",
      g.m, g.n, g.k, g.batch, big_a ? "N" : "M", kGemvMaxP, g.bm, 16 * gemv_mma_tiles_a_warp(g.bm), gemv_rows(g),
      big_a ? "A" : "B", gemv_p(g), gemv_p(g) > 1 ? "s" : "", big_a ? "B" : "A",
      g.precision == MmaPrecision::Tf32x3 ? "3xTF32" : "tf32", kGemvMmaChunk, ceil_div(gemv_rows(g), g.bm) * g.batch,
      g.split_k,
      g.split_k > 1 ? " (partial sums to a workspace; a deterministic reduce kernel applies the epilogue)" : "", why,
      pick_note);
  if (g.split_k == 1) set_launch(p, kn, g);
  else add_gemv_slices(p, kn, g, vec_c, stream_c);
  return true;
}

// The skinny product (gemv.cuh, any target): M or N at most kGemvMaxP, so the product is bound
// by reading the larger operand once; tensor-core tiles of 64 or more rows would waste most of
// their work and re-read it. No fused softmax (a row of at most 16 is not worth a kernel of its
// own; the general path keeps it). Gemv sums with f32 FMA in every precision: the products of
// tf32-rounded or 16-bit inputs are exact in f32, so the result is at least as accurate as the
// tensor cores'. Past 8 columns of f32 in tf32 or 3xTF32 the heuristic takes GemvMma, on the
// tensor cores (plan_gemv_mma), where Gemv's loads of x bind it.
//   Row dot (the big operand k-contiguous): 8 rows per block of 8 warps when there are at least
//   64 rows per SM, else one row per block, its 8 warps splitting k.
//   Column sweep (k strided): 32 vectors of rows per block, the 8 warps splitting k.
// The k range splits across blocks (grid y) until one wave of 8 blocks per SM is covered, each
// slice at least one unrolled step of loads; the slices go to a workspace and SplitKReduce adds
// them in order and applies the epilogue. Returns false where the grid does not fit.
bool plan_gemv(Planner& p, PlannedKernel& kn, GemmConfig g, const Operand& a, const Operand& b, const std::string& why,
               bool vec_c, bool stream_c) {
  const std::int64_t sms = p.target().sm_count;
  const std::int64_t v = 16 / g.elem_bytes;
  const bool aligned = p.target().aligned16;
  g.kind = GemmKind::Gemv;
  g.threads = kGemvThreads;
  const bool big_a = gemv_big_is_a(g);
  const Operand& big = big_a ? a : b;
  const Operand& x = big_a ? b : a;
  (big_a ? g.vec_a : g.vec_b) = aligned && big.ld % v == 0 && big.batch_stride % v == 0;
  // x's 16-byte loads along k (gemv.cuh's kVecX); warps that carry rows also read x stored [K, P]
  // as V x P blocks (below, once the rows are picked).
  const int cols = gemv_p(g);
  bool& vec_x = big_a ? g.vec_b : g.vec_a;
  vec_x = aligned && x.batch_stride % v == 0 && gemv_x_k(g) == 1 && (cols == 1 || gemv_x_p(g) % v == 0);
  const bool x_blocks = aligned && x.batch_stride % v == 0 && gemv_x_p(g) == 1 && gemv_x_k(g) == cols;
  const std::int64_t rows = gemv_rows(g);
  const bool row_dot = gemv_big_k_contig(g);
  if (g.batch > launch::kMaxGridY) return false;
  // [Note: gemv picks] The heuristic of a row dot against x stored [K, P] (P >= 2 columns, read as
  // V x P blocks) with the big operand in 16-byte loads and at least 16 rows: warps that carry W
  // rows ([Note: rows a warp carries]), W the most of 8, 4 or 2 with W x P <= kGemvMaxWarpSums and
  // 8 W no more rows than the power of two at or above the rows, at half the rule's K slices.
  // Otherwise 8 rows a block where the rows fill the GPU 64 times over, else 1, at the rule's K
  // slices (8 blocks an SM, each slice at least 4 sweeps of the block long). What the warp rows'
  // rule measured on an H100 (bench/results/2026-12-07-h100-run7/, medians, f32; the old rule's
  // time, then this rule's, the best candidate's and torch.matmul's): 8192 x 8 x 8192 2.126 ms,
  // 0.1136 (r64 k4, the best), torch 0.1544; 8192 x 4 x 8192 0.549, 0.1033, best 0.0966, torch
  // 0.1568; 8192 x 16 x 8192 4.253, 0.3032 (the best), torch 0.1548; 64 x 4 x 262144 0.1714,
  // 0.0390, best 0.0380, torch 0.0908; 65536 x 2 x 1024 0.1524, 0.0924, best 0.0918, torch 0.2412;
  // 777 x 4 x 1000 batch 3 0.0272, 0.0145, best 0.0108. Against x k-contiguous (4 x 16384 x 8192,
  // 16 x 4096 x 4096) warp rows bought nothing (best r1 and r2), and against an odd K (1000 x 5 x
  // 999: element loads) they lost (0.0116 against 0.0096), so there the old rule stays.
  // The picks: a row dot's 1, 2, 4 or 8 rows a block, and against 2 or more columns, 16, 32 or 64
  // (2, 4 or 8 rows a warp, at most kGemvMaxWarpSums sums a lane); the column sweep's are its warp
  // of vectors. Each with K slices of the rule at those rows, half or twice as many, within the
  // rule's bounds.
  constexpr int warps = kGemvThreads / 32;
  auto max_splits = [&](int bm) {
    const std::int64_t min_chunk = !row_dot ? 8LL * 16 : 32LL * gemv_vec(g) * 4 * (bm < warps ? warps / bm : 1);
    return std::max<std::int64_t>(1, std::min<std::int64_t>(launch::kMaxGridY, g.k / min_chunk));
  };
  auto blocks_at = [&](int bm) {
    GemmConfig at = g;
    at.bm = bm;
    return ceil_div(rows, gemv_block_rows(at)) * g.batch;
  };
  auto rule_splits = [&](int bm) {
    return static_cast<int>(std::clamp<std::int64_t>(ceil_div(8 * sms, blocks_at(bm)), 1, max_splits(bm)));
  };
  // GemvMma ([Note: skinny products on the tensor cores] in gemv_mma.cuh): f32 inputs in tf32 or
  // 3xTF32, the big operand k-contiguous in 16-byte loads. Blocks of 128 (or 256) rows, K slices
  // until two blocks an SM are covered, each slice at least one staged chunk of x. The heuristic
  // takes it past kGemvMmaFromP columns, where the FMA sums' loads of x bound Gemv. The rule's
  // slices are at most kGemvMmaMaxSlice long.
  const bool mma_ok = g.elem_bytes == 4 && g.precision != MmaPrecision::Ieee && row_dot && gemv_vec(g) > 1;
  const int mma_most = static_cast<int>(std::clamp<std::int64_t>(g.k / kGemvMmaChunk, 1, launch::kMaxGridY));
  auto mma_splits = [&](int bm) {
    const std::int64_t fill = ceil_div(2 * sms, ceil_div(rows, bm) * g.batch);
    return static_cast<int>(std::clamp<std::int64_t>(std::max(fill, ceil_div(g.k, kGemvMmaMaxSlice)), 1, mma_most));
  };
  int warp_rows = 0;   // the heuristic's rows a warp, 0: none
  if (row_dot && x_blocks && cols >= 2 && gemv_vec(g) > 1 && rows >= 2 * warps)
    for (int w : {8, 4, 2})
      if (warp_rows == 0 && w * cols <= kGemvMaxWarpSums && w * warps / 2 < rows)
        warp_rows = w;
  const int h_rows = warp_rows > 0 ? warp_rows * warps : row_dot && rows * g.batch >= 64 * sms ? warps : 1;
  const GemvPick heuristic =
      mma_ok && cols >= kGemvMmaFromP
          ? GemvPick{kGemvMmaRows[0], mma_splits(kGemvMmaRows[0]), true}
          : GemvPick{h_rows, warp_rows > 0 ? std::max(1, rule_splits(h_rows) / 2) : rule_splits(h_rows)};
  std::vector<int> block_rows{1};
  if (row_dot) block_rows = {1, 2, 4, 8};
  if (row_dot && cols >= 2)
    for (int bm : {16, 32, 64})
      if ((bm / warps) * cols <= kGemvMaxWarpSums) block_rows.push_back(bm);
  std::vector<GemvPick> candidates;
  auto add_splits = [&](int bm, int rule, int most, bool mma) {
    for (std::int64_t k : {std::int64_t{rule} / 2, std::int64_t{rule}, 2 * std::int64_t{rule}}) {
      const GemvPick c{bm, static_cast<int>(k), mma};
      if (k >= 1 && k <= most && std::find(candidates.begin(), candidates.end(), c) == candidates.end())
        candidates.push_back(c);
    }
  };
  for (int bm : block_rows) add_splits(bm, rule_splits(bm), static_cast<int>(max_splits(bm)), false);
  if (mma_ok && cols >= 2)
    for (int bm : kGemvMmaRows) add_splits(bm, mma_splits(bm), mma_most, true);
  std::string pick_note = "; config: heuristic";
  const GemvPick chosen =
      p.offer_picks(kn.anchor, fmt::format("matmul {}x{}x{} batch {} (Gemv)", g.m, g.n, g.k, g.batch), heuristic,
                    candidates, pick_note, "gemv");
  if (chosen.mma) return plan_gemv_mma(p, kn, g, chosen, why, pick_note, vec_c, stream_c);
  g.bm = chosen.rows;
  if (gemv_warp_rows(g) > 1) vec_x = vec_x || x_blocks;
  const std::int64_t blocks = blocks_at(g.bm);
  const std::int64_t splits = chosen.splits;
  g.split_k = static_cast<int>(splits);
  kn.template_name = "gemv";
  const std::string head = fmt::format(
      "matmul {}x{}x{} batch {}: {} <= {}: Gemv, {} ({} {} rows, {}{}) against {} column{} of {}, f32 FMA, {} "
      "blocks x {} K slices{}",
      g.m, g.n, g.k, g.batch, big_a ? "N" : "M", kGemvMaxP,
      row_dot ? fmt::format("row dot, {} row{} per block{}", g.bm, g.bm > 1 ? "s" : "",
                            gemv_warp_rows(g) > 1 ? fmt::format(" ({} a warp: [Note: rows a warp carries])",
                                                                gemv_warp_rows(g))
                                                  : std::string())
              : std::string("column sweep, 32 lanes of rows per block"),
      rows, big_a ? "A" : "B", row_dot ? "k-contiguous" : "k-strided",
      gemv_vec(g) > 1 ? ", 16-byte loads" : ", element loads", gemv_p(g), gemv_p(g) > 1 ? "s" : "", big_a ? "B" : "A",
      blocks, splits, splits > 1 ? " (partial sums to a workspace; a deterministic reduce kernel applies the epilogue)"
                                 : "");
  // `why` names the f32 precision asked for; 16-bit inputs are widened to f32 (no tensor cores).
  kn.reason = (g.elem_bytes == 4 ? fmt::format("{}; {}", head, why)
                                 : fmt::format("{}; 16-bit inputs widened to f32", head)) + pick_note;
  if (splits == 1) set_launch(p, kn, g);
  else add_gemv_slices(p, kn, g, vec_c, stream_c);
  return true;
}

// The mma.sync Gemm's tiles: 128x128, or 64x64 where fewer than half the SMs would get a 128x128
// tile (never with a fused softmax, whose row statistics are per 128-wide tile).
constexpr int kMmaBk = 32;
struct MmaTiles {
  int bm = 128, bn = 128, wm = 64, wn = 32;
  std::string why = "128x128 tiles";
};
MmaTiles mma_tiles(const GemmConfig& g, std::int64_t sms, bool softmax) {
  MmaTiles t;
  const std::int64_t big = ceil_div(g.m, 128) * ceil_div(g.n, 128) * g.batch;
  if (softmax || big >= sms / 2) return t;
  t.bm = t.bn = 64, t.wm = t.wn = 32;
  t.why = fmt::format("64x64 tiles ({} 128x128 tile{} would leave most of {} SMs idle)", big, big == 1 ? "" : "s", sms);
  return t;
}
// K slices of the mma.sync path: split where the tiles still cannot fill half the GPU and K is long.
int mma_splits(const GemmConfig& g, const MmaTiles& t, std::int64_t sms, bool softmax) {
  const std::int64_t tiles = ceil_div(g.m, t.bm) * ceil_div(g.n, t.bn) * g.batch;
  if (softmax || tiles >= sms / 2 || g.k < kLongK) return 1;
  return static_cast<int>(std::clamp<std::int64_t>(sms / tiles, 2, std::min<std::int64_t>(16, g.k / (4 * kMmaBk))));
}

// [Note: mma picks]
// The mma.sync Gemm's tuner picks (MmaPick) of a static product without a fused softmax (whose row
// statistics are per 128-wide tile; a dyn product keeps the rule): CTA tiles of 64 or 128 rows x
// 64 or 128 columns (warp tiles 64x32 at 128 rows, else 32x32, as mma_tiles'), no wider along an
// axis than the power of two at or above its extent but for the heuristic's; the most stages that
// fit shared memory (pick_stages) and one fewer; K slices 1, the rule's at that tile and twice as
// many, within mma_splits' bound (16, and 4 k tiles a slice).
std::vector<MmaPick> mma_candidates(const Target& t, const GemmConfig& g, const MmaPick& heuristic) {
  std::vector<MmaPick> out;
  auto tiles_at = [](int bm, int bn) {
    MmaTiles tiles;
    tiles.bm = bm, tiles.bn = bn, tiles.wm = bm == 128 ? 64 : 32, tiles.wn = 32;
    return tiles;
  };
  add_tile_picks(
      out, g, 2, std::min<std::int64_t>(16, g.k / (4 * kMmaBk)),
      [&](int bm, int bn) {
        return pick_stages(t, g.elem_bytes, bm, bn, kMmaBk, tiles_at(bm, bn).wn, gemm_a_k_contig(g), gemm_b_k_contig(g));
      },
      [&](int bm, int bn) { return mma_splits(g, tiles_at(bm, bn), t.sm_count, false); });
  if (std::find(out.begin(), out.end(), heuristic) == out.end()) out.insert(out.begin(), heuristic);
  return out;
}

// The mma.sync Gemm (any target) with tiles `t`: GemmSplitK + SplitKReduce where mma_splits splits
// (a dyn extent: only in a class with a largest value, which sizes the workspace), else Gemm with
// the epilogue (and, with `softmax`, row statistics: the caller adds the finalize).
void plan_mma(Planner& p, PlannedKernel& kn, GemmConfig g, MmaTiles t, const Operand& a, const Operand& b,
              const std::string& why, bool softmax, bool vec_c, bool stream_c, const DynMatmul* dyn = nullptr) {
  const std::int64_t sms = p.target().sm_count;
  g.stages = pick_stages(p.target(), g.elem_bytes, t.bm, t.bn, kMmaBk, t.wn, gemm_a_k_contig(g), gemm_b_k_contig(g));
  int splits = dyn != nullptr && !dyn->bounded() && dyn->sizes_workspace() ? 1 : mma_splits(g, t, sms, softmax);
  std::string pick_note;   // [Note: mma picks]
  if (dyn == nullptr && !softmax) {
    pick_note = "; config: heuristic";
    const MmaPick heuristic{t.bm, t.bn, g.stages, splits};
    const MmaPick chosen =
        p.offer_picks(kn.anchor, fmt::format("matmul {}x{}x{} batch {} (mma.sync Gemm)", g.m, g.n, g.k, g.batch),
                      heuristic, mma_candidates(p.target(), g, heuristic), pick_note, "mma");
    if (!(chosen == heuristic)) {
      t.bm = chosen.bm, t.bn = chosen.bn, t.wm = chosen.bm == 128 ? 64 : 32, t.wn = 32;
      t.why = fmt::format("{}x{} tiles", t.bm, t.bn);
      g.stages = chosen.stages;
      splits = chosen.split_k;
    }
  }
  const std::int64_t tiles = ceil_div(g.m, t.bm) * ceil_div(g.n, t.bn) * g.batch;
  g.bm = t.bm, g.bn = t.bn, g.bk = kMmaBk, g.wm = t.wm, g.wn = t.wn;
  if (splits > 1) {
    g.split_k = splits;
    kn.template_name = "gemm_split_k";
    g.kind = GemmKind::SplitK;
    // A dyn extent that sizes the workspace: its class's largest.
    const GemmConfig sized = dyn != nullptr && dyn->sizes_workspace() ? dyn->at(g, dyn->high) : g;
    const int ws = p.add_workspace(fmt::format("splitk{}", kn.anchor), DType::f32,
                                   {g.split_k, sized.batch, sized.m, sized.n});
    set_launch(p, kn, g);
    kn.reason = fmt::format("matmul {}x{}x{} batch {}: {} tiles, K long: split-K into {} slices (workspace, "
                            "deterministic reduce kernel applies the epilogue); {}, {} stages; {}{}", g.m, g.n, g.k,
                            g.batch, tiles, g.split_k, t.why, g.stages, why, pick_note);
    add_split_k_reduce(p, kn, ws, false, vec_c, stream_c);
    return;
  }
  kn.template_name = "gemm";
  g.kind = GemmKind::Gemm;
  g.vec_c = vec_c;
  g.stream_c = stream_c;
  g.row_stats = softmax;
  set_launch(p, kn, g);
  kn.reason = fmt::format("matmul {}x{}x{} batch {} ({}{}): Gemm, {}, BK {}, {} stages{}; {}{}", g.m, g.n, g.k,
                          g.batch, a.col_major ? "A col-major" : "A row-major",
                          b.col_major ? ", B col-major" : ", B row-major", t.why, g.bk, g.stages,
                          stream_c ? ", streaming stores" : "", why, pick_note);
}

// Whether the TMA engine takes the product with a dyn extent: as tma_fits, without a pre-pass
// over an operand the extent sizes ([Note: dyn matmul]). `g`, `a` and `b` are at a value of the
// extent.
bool dyn_tma_fits(const Planner& p, const GemmConfig& g, const Operand& a, const Operand& b, const DynMatmul& dm) {
  if (!tma_fits(p, g, a, b, false)) return false;
  const TmaView v = tma_view(g, a, b);
  // Which operands the extent sizes, in the op's terms: A by M and K, B by N and K, both by the batches they have.
  bool sizes_a = dm.which != DynMatmul::Extent::N, sizes_b = dm.which != DynMatmul::Extent::M;
  if (dm.batch()) sizes_a = a.batch_stride != 0, sizes_b = b.batch_stride != 0;
  if (v.g.swap_ab) std::swap(sizes_a, sizes_b);
  return !(sizes_a && tma_needs_prep(v.g, 1, v.a)) && !(sizes_b && tma_needs_prep(v.g, 2, v.b));
}

// The product at a value of its dyn extent, as the planner sees it: the config and both operands.
struct DynProduct {
  GemmConfig g;
  Operand a, b;
};
DynProduct dyn_product(const GemmConfig& g, const Operand& a, const Operand& b, const DynMatmul& dm,
                       std::int64_t extent) {
  const GemmConfig c = dm.at(g, extent);
  return {c, dm.operand_at(a, c, 1), dm.operand_at(b, c, 2)};
}

// What a dyn product is planned as at extent `extent`: the template, tiles and K slices (the size
// classes are where this changes).
std::string dyn_route(const Planner& p, const GemmConfig& g, const Operand& a, const Operand& b, const DynMatmul& dm,
                      std::int64_t extent) {
  const std::int64_t sms = p.target().sm_count;
  const DynProduct at = dyn_product(g, a, b, dm, extent);
  const GemmConfig& c = at.g;
  if (dyn_tma_fits(p, c, at.a, at.b, dm))
    return "tma " + tma_heuristic(tma_view(c, at.a, at.b).g, sms,
                                  static_cast<int>(smem_limit(p.target())), false).text();
  const MmaTiles t = mma_tiles(c, sms, false);
  return fmt::format("gemm {}x{} k{}", t.bm, t.bn, mma_splits(c, t, sms, false));
}

// The values of a dyn dim, up to kDynRouteTop, at which a family's route (what it plans at that
// value, as text) changes: the size-class thresholds ([Note: dyn size classes] in plan.h). Powers of
// two find a change, bisection its first value.
std::vector<std::int64_t> route_thresholds(const std::function<std::string(std::int64_t)>& route_at) {
  std::vector<std::int64_t> thresholds;
  std::string route = route_at(1);
  std::int64_t same = 1;   // the largest value known to take `route`
  for (std::int64_t v = 2; v <= kDynRouteTop;) {
    if (route_at(v) == route) {
      same = v;
      v *= 2;
      continue;
    }
    std::int64_t lo = same, hi = v;   // route_at(lo) == route != route_at(hi)
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (route_at(mid) == route ? lo : hi) = mid;
    }
    thresholds.push_back(hi);
    route = route_at(hi);
    same = hi;
  }
  return thresholds;
}

// Whether an operand's rows take 16-byte loads (GemmConfig::vec_a, vec_b).
bool operand_vec(const Planner& p, const Operand& o, std::int64_t elem) {
  const std::int64_t v = 16 / elem;
  return p.target().aligned16 && o.ld % v == 0 && o.batch_stride % v == 0;
}

// A matmul with a dyn extent ([Note: dyn matmul]): the size classes, then the plan at the bound
// value's class's lowest extent (of its bucket), then the kernels' configs made dyn.
void plan_matmul_dyn(Planner& p, PlannedKernel& kn, const GemmConfig& bound_g, const Operand& a, const Operand& b,
                     DType et, const std::string& why, std::int64_t out_elem, DynMatmul dm) {
  std::string bucket_text;   // a row length's bucket, which its plan follows
  if (dm.leading) bucket_text = fmt::format(" (bucket {})", dyn_bucket_text(dm.bucket));
  if (dm.leading && dm.bucket == DynBucket::General) {
    dm.align = 16 / bound_g.elem_bytes;
    dm.aligned = p.add_dyn_row_align(dm.dim, dm.align);
    if (const auto keyed = p.plan().dyn_row_align.find(dm.dim); keyed != p.plan().dyn_row_align.end())
      bucket_text = fmt::format(" (bucket {}, {})", dyn_bucket_text(dm.bucket), dyn_row_class_text(keyed->second));
  }
  const std::vector<std::int64_t> thresholds = route_thresholds(
      [&](std::int64_t v) { return dyn_route(p, bound_g, a, b, dm, dm.fixed * dm.in_bucket(v)); });
  p.add_dyn_thresholds(dm.dim, thresholds);
  const int klass = dyn_class(thresholds, dyn_class_value(dm.dim, p.bound().dims));
  dm.low = dm.fixed * dyn_class_low(thresholds, klass);
  dm.high = klass < static_cast<int>(thresholds.size()) ? dm.fixed * (thresholds[static_cast<std::size_t>(klass)] - 1) : 0;
  dm.text = fmt::format("dyn {}: {} in the size class {} of {}{}, planned at its lowest value", dm.dim,
                        dm.folded ? "M (the rows of every batch)" : dm.name(),
                        dyn_class_text(thresholds, klass), dm.dim,
                        bucket_text);
  DynProduct at = dyn_product(bound_g, a, b, dm, dm.in_bucket(dm.low));
  GemmConfig& g = at.g;
  g.vec_a = operand_vec(p, at.a, g.elem_bytes);
  g.vec_b = operand_vec(p, at.b, g.elem_bytes);
  const bool vec_c = p.target().aligned16 && g.n % 4 == 0;
  const bool stream_c = g.batch * g.m * g.n * out_elem > kStreamBytes;
  if (dyn_tma_fits(p, g, at.a, at.b, dm)) plan_tma(p, kn, g, at.a, at.b, et, why, false, vec_c, stream_c, &dm);
  else plan_mma(p, kn, g, mma_tiles(g, p.target().sm_count, false), at.a, at.b, why, false, vec_c, stream_c, &dm);
  auto make_dyn = [&](PlannedKernel& k) {
    auto* c = std::get_if<GemmConfig>(&k.config);
    if (c == nullptr || c->kind == GemmKind::OperandPrep) return;   // a pre-pass reads only a static operand
    dm.make_dyn(*c);
    k.dyn_outer = dm.factors;
    k.reason = fmt::format("{}; {}", dm.text, k.reason);
  };
  make_dyn(kn);
  for (auto& f : p.pending_followups()) make_dyn(f);
}

void plan_matmul_kernels(Planner& p, PlannedKernel& kn, Operand a, const Operand& b, bool fold);

// The matmul's kernels, each marked where the batches fold into M ([Note: folded batches]).
void plan_matmul(Planner& p, PlannedKernel& kn) {
  const auto& node = p.node(kn.anchor);
  const Operand a = matmul_operand(p, kn.anchor, node.operands[0], "a");
  const Operand b = matmul_operand(p, kn.anchor, node.operands[1], "b");
  const bool fold = folds_batches(p, kn.anchor, a, b);
  plan_matmul_kernels(p, kn, a, b, fold);
  if (!fold) return;
  auto mark = [](PlannedKernel& k) {
    const auto* c = std::get_if<GemmConfig>(&k.config);
    k.folded_batches = c != nullptr && c->kind != GemmKind::OperandPrep;
  };
  mark(kn);
  for (auto& f : p.pending_followups()) mark(f);
}

void plan_matmul_kernels(Planner& p, PlannedKernel& kn, Operand a, const Operand& b, bool fold) {
  const auto& node = p.node(kn.anchor);
  const auto& out = p.shape(kn.anchor);
  const DType et = p.node(node.operands[0]).dtype;
  KILN_CHECK(contraction_dtype(et) && p.node(node.operands[1]).dtype == et, UnsupportedError,
             "{}: matmul of {} has no gemm template (f32, f16, bf16; cast first, e.g. f32(x))",
             p.bound().ir->where(node.loc), dtype_name(et));
  const DType stored = p.node(kn.stores[0].node).dtype;
  KILN_CHECK(contraction_dtype(stored), UnsupportedError, "{}: the epilogue of this matmul ends in {}, which the gemm "
             "template cannot store (f32, f16, bf16)", p.bound().ir->where(node.loc), dtype_name(stored));
  const std::size_t r = out.size();
  std::int64_t M = out[r - 2], batch = product(out, 0, r - 2);
  const std::int64_t N = out[r - 1];
  const std::int64_t K = p.shape(a.leaf)[p.shape(a.leaf).size() - (a.col_major ? 2 : 1)];
  if (fold) M *= batch, batch = 1, a.batch_stride = 0;   // [Note: folded batches]
  const std::optional<DynMatmul> dm = dyn_matmul(p, kn.anchor, a, b, fold);
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(et));
  const bool aligned = p.target().aligned16;
  const bool f32 = et == DType::f32;
  std::string why;
  const MmaPrecision precision = f32 ? mma_precision(p, node, why) : MmaPrecision::Tf32;
  if (!f32) why = fmt::format("{} tensor cores, f32 accumulation", dtype_name(et));
  if (fold) {
    std::vector<std::string> dims;
    for (std::size_t d = 0; d + 2 < r; ++d) dims.push_back(node.shape[d].str());
    why += fmt::format("; the batches ({}) fold into M: B is shared by all of them", fmt::join(dims, " x "));
  }
  const bool softmax = p.node(kn.stores[0].node).kind == OpKind::Softmax;
  const std::int64_t sms = p.target().sm_count;
  const std::int64_t out_bytes = batch * M * N * static_cast<std::int64_t>(dtype_size(stored));

  GemmConfig g;
  g.precision = precision;
  g.elem_bytes = static_cast<int>(elem);
  g.m = M, g.n = N, g.k = K, g.batch = batch;
  g.layout_a = a.col_major ? GemmLayout::ColMajor : GemmLayout::RowMajor;
  g.layout_b = b.col_major ? GemmLayout::ColMajor : GemmLayout::RowMajor;
  g.lda = a.ld, g.ldb = b.ld, g.ldc = N;
  g.stride_a = a.batch_stride, g.stride_b = b.batch_stride, g.stride_c = batch > 1 ? M * N : 0;
  const bool vec_c = aligned && N % 4 == 0;
  const bool stream_c = out_bytes > kStreamBytes && !softmax;

  if (!dm && !softmax && std::min(M, N) <= kGemvMaxP && plan_gemv(p, kn, g, a, b, why, vec_c, stream_c)) return;

  // Small K: the whole K in one tile, persistent CTAs; bound by the stores of C. What the H100
  // harness (bench/standalone/gemm_check.cu, bench/results/2026-11-22-h100-run5) measured on
  // 32768x64 . 64x32768:
  //   tf32: 256x64 tiles of 8 warps of 64x32, 1 CTA per SM (104 KB) 1.531 ms
  //     (bench/results/2026-11-22-h100-run13), ahead of 128x64 tiles at 3 CTAs per SM (1.598),
  //     128x128 at 1 per SM (1.613) and 256x128 (1.58). The kernel runs at the speed of its
  //     memory traffic, C's writes plus the B blocks re-read from L2 for every row block: with no
  //     math at all, writing C while reading 128-row tiles' B blocks took 1.59 ms, 256-row tiles'
  //     (half the B traffic) 1.46. Where 256x64 does not fit in shared memory, 128x64 at 3 per SM.
  //   3xTF32 (twice the registers per warp tile): 128x128 tiles of 8 warps of 64x32 at 1 per SM
  //     2.677 ms; 2 per SM was slower (2.944) and 3 per SM spills.
  //   A target whose shared memory cannot hold a 128x128 tile (sm_86) takes 128x64 in any precision.
  const bool sk_tf32 = precision == MmaPrecision::Tf32;
  // Only K <= 128 takes SmallK; the clamp keeps the sizes of longer K (never used) in range.
  const int sk_k = static_cast<int>(std::min<std::int64_t>(K, 4096));
  const bool sk_tall = sk_tf32 && small_k_smem(256, 64, sk_k, false) <= smem_limit(p.target());
  const int sk_bm = sk_tall ? 256 : 128;
  const int sk_bn = sk_tf32 || small_k_smem(128, 128, sk_k, false) > smem_limit(p.target()) ? 64 : 128;
  const std::int64_t small_k_bytes = small_k_smem(sk_bm, sk_bn, sk_k, false);
  if (!dm && f32 && stored == DType::f32 && !softmax && batch == 1 && !a.col_major && !b.col_major && K <= 128 && K % 8 == 0 && aligned &&
      a.ld % 4 == 0 && b.ld % 4 == 0 && N % 4 == 0 && ceil_div(M, sk_bm) * ceil_div(N, sk_bn) >= 8 * sms &&
      small_k_bytes <= smem_limit(p.target())) {
    if (precision == MmaPrecision::Tf32x3 && p.target().arch == "sm_90a" && plan_small_k_wgmma(p, kn, g, why, stream_c))
      return;
    kn.template_name = "gemm_small_k";
    g.kind = GemmKind::SmallK;
    std::string pick_note = "; config: heuristic";   // [Note: small-K picks]
    const SmallKPick heuristic{
        false, sk_bm, sk_bn, static_cast<int>(ctas_by_smem(p.target(), small_k_bytes, sk_tf32 && !sk_tall ? 3 : 1))};
    const SmallKPick pick = p.offer_picks(kn.anchor, fmt::format("matmul {}x{}x{} (SmallK)", M, N, K), heuristic,
                                          small_k_candidates(p.target(), g, heuristic), pick_note, "small k");
    g.bm = pick.bm, g.bn = pick.bn, g.wm = 64, g.wn = 32;
    const std::int64_t tiles = ceil_div(M, g.bm) * ceil_div(N, g.bn);
    kn.min_blocks = pick.depth;
    set_launch(p, kn, g);
    kn.reason = fmt::format("matmul {}x{}x{}: K = {} fits one tile: SmallK (no K loop), {} persistent CTAs ({} per "
                            "SM) over {} {}x{} tiles; {}{}", M, N, K, K, kn.grid.x, kn.min_blocks, tiles, g.bm, g.bn,
                            why, pick_note);
    return;
  }

  g.vec_a = operand_vec(p, a, elem);
  g.vec_b = operand_vec(p, b, elem);
  if (dm) {
    plan_matmul_dyn(p, kn, g, a, b, et, why, static_cast<std::int64_t>(dtype_size(stored)), *dm);
    return;
  }
  const MmaTiles t = mma_tiles(g, sms, softmax);
  const std::int64_t tiles = ceil_div(M, t.bm) * ceil_div(N, t.bn) * batch;
  if (tma_fits(p, g, a, b, softmax)) {
    plan_tma(p, kn, g, a, b, et, why, softmax, vec_c, stream_c);
    return;
  }
  if (wgmma_fits(p, g) && (!softmax || tiles < 2 * sms)) {
    plan_wgmma(p, kn, g, why, softmax, vec_c, stream_c);
    return;
  }
  if (f32 && t.bm == 128 && tiles < 2 * sms && K >= kLongK) {
    plan_split_k_wide(p, kn, g, tiles, why, softmax, vec_c, stream_c);
    return;
  }
  plan_mma(p, kn, g, t, a, b, why, softmax, vec_c, stream_c);
  if (!softmax) return;

  // Softmax over rows: the Gemm also writes per-tile (max, sum exp) of what it stores.
  const std::int64_t tiles_n = ceil_div(N, t.bn);
  const int stats = p.add_workspace(fmt::format("rowstats{}", kn.anchor), DType::f32, {batch * M, tiles_n, 2});
  kn.args.push_back(buffer_arg(p, stats, true));
  kn.reason += fmt::format("; the softmax on line {} becomes row statistics in the epilogue + SoftmaxFinalize",
                           p.node(kn.stores[0].node).loc.line);
  PlannedKernel fin;
  fin.anchor = kn.stores[0].node;
  fin.template_name = "gemm_softmax_finalize";
  GemmConfig fc = std::get<GemmConfig>(kn.config);   // the Gemm's
  fc.kind = GemmKind::SoftmaxFinalize;
  fc.tiles_n = tiles_n;
  fc.threads = N >= 4096 ? 512 : 128;
  for (const auto& s : kn.stores) fin.stores.push_back(s);
  fin.args.push_back(buffer_arg(p, stats, false));
  fin.args.push_back(buffer_arg(p, kn.stores[0].buffer, true));
  fin.args_done = true;
  fin.index64 = batch * M * N > (std::int64_t{1} << 31) - 1;
  set_launch(p, fin, fc);
  fin.reason = fmt::format("softmax rows of {} from {} tile statistics each, in place", N, tiles_n);
  p.add_followup(std::move(fin));
}

// [Note: dyn conv]
// A conv takes a dyn batch N, the first axis of x and y, as a whole extent (a batch of images that
// varies from call to call), and dyn spatial extents (below). The channels and the filters stay
// baked in: the im2col tables and the index math divide by them as constants, and the tiles
// follow from them. A dyn dim anywhere else (x's channels, w, inside a compound extent, or
// another dyn dim in the epilogue's side operands) is refused at its declaration, saying why.
// - The bucket one plans the static conv.
// - Every conv template reads the batch at run time ([Note: dyn conv batch] in conv_shape.cuh),
//   so a dyn conv takes the template the static conv at the same batch would. On the TMA engine
//   the x map's image extent is a launch's (KernelArg::map_dyn_dim), and so is the copy of x
//   OperandPrep makes (grid z = the images; NHWC copies image by image for that) in a workspace
//   sized by the launch (Buffer::dyn_dim).
// - Size classes ([Note: dyn size classes] in plan.h): where the route changes with the batch
//   (the TMA engine from the flops that pay for its copies and up to its grid and coordinate
//   limits; streaming stores from kStreamBytes of output; NHWC's 64-pixel tiles), found by
//   route_thresholds; a class is planned at its lowest value.
// - The kernels' configs hold 0 for the batch (ConvConfig n; an x copy's GemmConfig batch),
//   PlannedKernel::dyn_outer the batch dim, and the reasons name the dim, never its value (the
//   source holds none). Every launch takes conv_geometry (gemm_geometry) at its batch.
//
// [Note: dyn conv spatial extents] (the templates' side in kiln/conv_shape.cuh)
// A 1-d or 2-d forward conv also takes dyn dims as x's spatial extents (whole dims: `dims dyn H,
// dyn W`, or the side S of a square image), on the templates that read them at run time: ConvNchw's
// 2-d im2col, DepthwiseDirect, and on sm_90a (f32 in tf32 or 3xTF32, one group) the TMA engine
// (TmaConv) or WgConvNchw's cp.async gather. y's spatial extents are then expressions of the dims
// (floor((H + 2 pad - dil (R - 1) - 1) / stride) + 1). The config holds 0 for h, w, ho and wo, and
// the kernel takes H, W, Ho, Wo and Ho x Wo per launch as KernelArg::DynValue arguments
// (kiln::DynDim: the template and the epilogue divide by Wo and Ho x Wo with a multiply-high and a
// shift); the im2col table, built once per CTA, reads H and W. The route is the same at every value
// but for one size class: the TMA engine where it takes the conv but for its extents
// (conv_tma_refusal with dyn_spatial: its channels, window and grid limits), else WgConvNchw
// (sm_90a, f32, one group), else ConvNchw; where the specialized conv's route asks the flops (tf32
// under kConvTmaSmallMinChannels input channels: conv_tma_pays_small), a size class of the product
// of the dyn extents among N, H and W at kPadMinFlops sends the launches under it to WgConvNchw
// (without it, 32x32x28x28 -> 32 in tf32 ran on the engine at 1.34x the specialized conv's
// WgConvNchw time, bench/results/2026-12-05-h100-run14/); with no streaming stores (that pick
// follows the output's bytes, a product of the dims). On the TMA engine: OperandPrep's copy of x
// reads its rows (H x W) and strides as DynValue arguments (gemm_prep.cuh's PrepRows; 16-byte
// vectors where a factor's bucket or value makes H x W a multiple of 4) into a workspace its
// geometry sizes at each launch (conv_prep_launch, Buffer::launch_kernel); the x map's extents and
// strides are expressions of the dims (KernelArg::map_dims_at, encoded per launch); the engine's
// pixel tiles follow a size class of the product of the dyn extents (64 for images of at most 64
// output pixels, 256 in tf32 from 2048, else 128, as the static rule; the output pixels estimated
// as the input's over the strides: without the class, 256-pixel tiles ran 14x14 images at
// 1.25-1.47x the specialized conv, bench/results/2026-12-05-h100-run11/); a dyn batch takes at most
// 65535 images there (the copy's grid.z; a size class from 65536 takes WgConvNchw); the maps'
// coordinate and stride limits are checked at the launch (conv_tma_launch_refusal). The engines'
// 16-byte stores of y are picked per launch (where Ho x Wo is a multiple of 4), and WgConvNchw's
// pixel decode's 32-bit bound checked at the launch (kConvWgmmaMaxPixels, conv_launch). A depth
// axis, a transposed conv and NHWC (but depthwise) take none: their templates bake the extents into
// the general im2col and the TMA maps. As a dyn pool's output ([Note: dyn pooled axes] in
// plan_pool.cpp), y's extents are quotients that only the conv's kernel and its fused epilogue read
// (Planner::refuse_dyn_compound_extents); Options::shapes = generic does not make them dyn.
struct DynConv {
  std::string dim;        // the dyn batch, "" for none
  ir::DimExpr extent;     // x's first axis: the dim
  std::string text;
  // The dyn spatial extents, right-aligned into (d, h, w) slots: the dim ("" static), x's extent
  // and y's (an expression of the dim).
  std::string spatial[3];
  ir::DimExpr in[3], out[3];
  bool any_spatial() const { return !spatial[0].empty() || !spatial[1].empty() || !spatial[2].empty(); }
  // x's extent in slot s: the dyn dim's, or the static value v.
  ir::DimExpr in_or(int s, std::int64_t v) const { return spatial[s].empty() ? ir::DimExpr::constant(v) : in[s]; }
  // Whether x's extent in slot s is a multiple of 4 at every launch: by its bucket (a dyn dim's
  // "multiple of 16") or its value v.
  bool multiple_of_4(const Planner& p, int s, std::int64_t v) const {
    return spatial[s].empty() ? v % 4 == 0 : dyn_bucket(p.bound().dims.at(spatial[s])) == DynBucket::Div16;
  }
  // The size-class key of the product of x's dyn extents among its spatial axes (with `batch`,
  // its batch first), and the product of the static extents among those axes.
  std::pair<std::string, std::int64_t> product(const ConvConfig& cc, bool batch) const {
    std::vector<std::string> dims;
    std::int64_t fixed = 1;
    if (batch && dim.empty()) fixed *= cc.n;
    if (batch && !dim.empty()) dims.push_back(dim);
    const std::int64_t extents[3] = {cc.d, cc.h, cc.w};
    for (int s = 0; s < 3; ++s) {
      if (spatial[s].empty()) fixed *= extents[s];
      else dims.push_back(spatial[s]);
    }
    return {dyn_class_key(dims), fixed};
  }
  std::string spatial_text() const {
    std::vector<std::string> parts;
    for (int s = 0; s < 3; ++s) {   // (a square image's side once)
      const std::string part = fmt::format("{} -> {}", spatial[s], out[s].str());
      if (!spatial[s].empty() && std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
    }
    return fmt::format("{}", fmt::join(parts, ", "));
  }
};

// A conv on the TMA engine (conv_tma.cuh, sm_90a): f32 in tf32 / 3xTF32, NCHW or NHWC, one group;
// forward over 1-3 axes (a depth axis: 5-D maps), or transposed by stride phase (TmaConvPhased,
// [Note: strided transposed convs on the TMA engine] in config/conv.h).
// OperandPrep passes first write k-major copies the TMA unit can read: x as NHWC ([N][H][W][ldc],
// the transpose of each image's [C][H*W]; NHWC x is read in place when its rows are 16-byte
// multiples) and the filters as [K][R*S][ldc] (the transpose of each filter's [C][R*S]), channel
// rows padded to 16 bytes (conv_tma_ldc), the filters for 3xTF32 split into hi and lo parts (x is
// split by the engine's consumers in registers). The engine then maps the filters as a tiled 3-D
// tensor and x in im2col mode, so each k tile's x operand (a tile's output pixels x 32 channels of
// one filter tap) is one TMA copy, padding included. It needs the im2col mode's limits
// (conv_tma_im2col_fits), int coordinates, map strides below 2^40, at least conv_tma_min_channels
// input channels (a k tile is 32 channels wide whatever C is), and work enough to pay for the
// copies (kPadMinFlops; at any flops where measured to pay: [Note: small convs on the TMA engine]).
// Tiles (conv_tma_pixel_rows says which are rows): out channels 32 or 64 when there are at most
// that many (32: columns only, wgmma's m64n32), else 128 (256 in tf32 NHWC); pixels 64 when
// there are at most 64; else 128, or 256 in tf32 NCHW while an image has at least 8 such tiles
// (3xTF32's B hi and lo tiles double its registers).
// The GEMM K from which a transposed conv splits w by stride phase (see plan_conv): under it, the
// strided stores of a phase's outputs along w cost more than its work. The TMA engine's phases
// (TmaConvPhased) follow the same rule: KernelBench 79 (1-d, stride 2, K 96) took 2.86 ms there
// against ConvNchw's 2.18 with w unsplit, where the 20 others with K >= 128 took 0.25-0.82x
// ConvNchw's time (H200, bench/results/2026-12-04-h200-run29/, call 3).
constexpr std::int64_t kConvPhaseWMinK = 128;
// An image's output pixels up to which a pixel tile is 64 wide, and from which it is 256 in tf32
// NCHW (8 such tiles).
constexpr std::int64_t kConvTmaSmallImage = 64, kConvTmaLargeImage = 8 * 256;
std::int64_t conv_tma_pixel_tile(std::int64_t pixels, bool x3) {
  return pixels <= kConvTmaSmallImage ? 64 : !x3 && pixels >= kConvTmaLargeImage ? 256 : 128;
}

// [Note: small convs on the TMA engine]
// Under kPadMinFlops the engine's two copies (x and the filters) and its launch were taken to cost
// what it saves. Measured on an H100 against WgConvNchw, the alternative of a forward 1-d or 2-d
// conv (bench/results/2026-12-05-h100-run10/: the dyn-spatial conv takes the engine at every size,
// the specialized one WgConvNchw), 3x3 pad 1 convs of 3.6e6 to 9.2e8 flops:
// - tf32 with C >= 64: the engine in 0.51-0.87x WgConvNchw's time (1x64x7x7 -> 64: 0.020 against
//   0.023 ms; 4x128x28x28 -> 128: 0.036 / 0.063; 2x256x14x14 -> 256: 0.058 / 0.114);
// - 3xTF32 (fp32-accurate) at C = 32, 64 and 128: 0.49-0.80x;
// - tf32 with C = 32 (one k tile a tap: a GEMM K of 288): 1.07-1.26x, whatever K (32 or 64) and
//   the flops (2.9e7-4.6e8): WgConvNchw keeps those.
// So a forward 1-d or 2-d conv takes the engine at any flops in 3xTF32 and, in tf32, from
// kConvTmaSmallMinChannels input channels; planned so, the static convs of those rows ran in
// 0.35-0.86x WgConvNchw's time (-run11: 2x256x14x14 -> 256 0.040 ms, cuDNN 0.026). A 3-d or transposed conv's alternative is ConvNchw, not
// measured here: the flops rule stays.
// (as_forward: a stride-1 transposed conv taken as the forward conv of its flipped filters,
// whose alternative is ConvNchw.)
constexpr int kConvTmaSmallMinChannels = 2 * kConvTmaChannels;
// Why a conv under kPadMinFlops (where conv_tma_pays_small does not hold) keeps off the engine.
constexpr const char* kUnderFlopsWhy = "it is under the flops where its operand copies pay off";
bool conv_tma_pays_small(const ConvConfig& cc, bool as_forward) {
  if (as_forward || cc.transposed || conv_tma_depth(cc.d, cc.t, cc.dout)) return false;
  return conv_x3(cc) || cc.c >= kConvTmaSmallMinChannels;
}

// Why the TMA conv engine cannot take the conv at its extents (a tensor map's coordinates and
// strides), as the end of a sentence; "" when it can. Asked when planned, and at each launch of
// a conv with dyn spatial extents (conv_launch).
std::string conv_tma_launch_refusal(const ConvConfig& cc) {
  constexpr std::int64_t kCoord = std::int64_t{1} << 31, kStride = std::int64_t{1} << 40;
  const std::int64_t parts = conv_x3(cc) ? 2 : 1, ldc = conv_tma_ldc(cc);
  const std::int64_t image = cc.d * cc.h * cc.w, pixels = cc.dout * cc.ho * cc.wo;   // an image's input and output pixels
  for (const std::int64_t extent : std::initializer_list<std::int64_t>{cc.n, parts * cc.k + 128, cc.d * cc.stride_d,
                                                                        cc.h * cc.stride_h, cc.w * cc.stride_w, pixels})
    if (extent >= kCoord) return "an extent reaches 2^31, past a tensor map's coordinates";
  if (image * ldc * 4 >= kStride || image >= kCoord) return "an image reaches a tensor map's 2^40-byte stride";
  return "";
}

// Why the TMA conv engine does not take this conv, as the end of a sentence; "" when it does.
// dyn_spatial: its spatial extents are a launch's ([Note: dyn conv spatial extents]): what they
// decide is left to conv_tma_launch_refusal at each launch, and the flops are not asked (the route
// is the same at every value). as_forward: cc is a transposed conv's forward form.
std::string conv_tma_refusal(const Planner& p, const ConvConfig& cc, bool dyn_spatial = false,
                             bool as_forward = false) {
  if (p.target().arch != "sm_90a") return fmt::format("it runs on sm_90a only (this is {})", p.target().arch);
  if (!p.target().aligned16) return "it needs 16-byte aligned tensors";
  if (cc.elem_bytes != 4) return "it takes f32 tensors only";
  if (cc.groups != 1) return fmt::format("it takes one group (this conv has {})", cc.groups);
  if (cc.precision == MmaPrecision::Ieee) return "it computes in tf32 or 3xTF32 (fp32-accurate), not ieee";
  if (cc.c < conv_tma_min_channels(cc))
    return fmt::format("it takes at least {} input channels{} (this conv has {})", conv_tma_min_channels(cc),
                       conv_tma_depth(cc.d, cc.t, cc.dout) ? " over three spatial axes" : "", cc.c);
  if (!conv_tma_im2col_fits(cc))
    return "the window (padding, stride, dilation) is outside what the TMA unit's im2col mode describes";
  if (cc.transposed && cc.stride_w > 1 && conv_gemm_k(cc) < kConvPhaseWMinK)
    return fmt::format("its GEMM K ({}) is under {} with a w stride over 1 (ConvNchw then stores whole rows)",
                       conv_gemm_k(cc), kConvPhaseWMinK);
  if (!dyn_spatial) {
    const std::string extents = conv_tma_launch_refusal(cc);
    if (!extents.empty()) return extents;
  }
  // OperandPrep's grid: (pixel or tap blocks, ldc / 32, images or filters); y and z stop at 65535.
  if (ceil_div(conv_tma_ldc(cc), kPrepTile) > launch::kMaxGridY || cc.n > launch::kMaxGridY || cc.k > launch::kMaxGridY)
    return "its operand copy's grid would pass 65535 blocks in y or z (C, N or K too large)";
  if (dyn_spatial) return "";
  constexpr std::int64_t kCoord = std::int64_t{1} << 31;
  const std::int64_t image = cc.d * cc.h * cc.w, pixels = cc.dout * cc.ho * cc.wo;   // an image's input and output pixels
  if (cc.nhwc)   // x needs no transpose, and no other template takes NHWC
    return cc.n * pixels < kCoord ? "" : "N * Ho * Wo reaches 2^31";
  // (A transposed conv multiplies each input pixel by every tap: its output pixels overcount by the stride.)
  const double flops = 2.0 * static_cast<double>(cc.n * cc.k) * static_cast<double>(cc.transposed ? image : pixels) *
                       static_cast<double>(conv_gemm_k(cc));
  if (flops >= kPadMinFlops || conv_tma_pays_small(cc, as_forward)) return "";
  return kUnderFlopsWhy;
}

bool conv_tma_fits(const Planner& p, const ConvConfig& cc, bool as_forward = false) {
  return conv_tma_refusal(p, cc, false, as_forward).empty();
}


// NHWC x is read in place when its channel rows are 16-byte multiples (3xTF32 included: the
// engine's consumers split x).
bool conv_tma_x_in_place(const ConvConfig& cc) { return cc.nhwc && cc.c % 4 == 0; }

void make_dyn_spatial(const DynConv& dc, ConvConfig& cc, PlannedKernel& kn);

// The OperandPrep pass that writes one conv operand k-major (which 1: x as [N][D*H*W][ldc], 2: the
// filters as [K][T*R*S][ldc]): a transpose of each [C][rows] block, described as a GEMM operand.
// `flipped`: the filters are a transposed conv's, w [C][K][R*S], each filter's taps reversed
// ([Note: a stride-1 transposed conv as a forward conv]).
// rows4: the caller's promise that x's rows (its images' pixels) are a multiple of 4 at every
// launch, where dyn spatial extents make them a launch's (the config then holds 0 for the rows,
// their stride and the images' stride: gemm_prep.cuh's PrepRows; [Note: dyn conv spatial extents]).
GemmConfig conv_prep_config(const ConvConfig& cc, int which, bool aligned16, bool flipped, bool dyn_batch = false,
                            bool dyn_rows = false, bool rows4 = false) {
  GemmConfig g;
  g.kind = GemmKind::OperandPrep;
  // x is never split into tf32 hi and lo parts: with 3xTF32 the engine's consumers split it.
  g.precision = which == 1 && cc.precision == MmaPrecision::Tf32x3 ? MmaPrecision::Tf32 : cc.precision;
  g.elem_bytes = 4;
  g.prep = which;
  g.k = cc.c;
  g.threads = kOperandPrepThreads;
  const std::int64_t rows = which == 1 ? cc.d * cc.h * cc.w : std::int64_t{cc.t} * cc.r * cc.s;
  // 16-byte loads of the operand where its rows (and so its strides, multiples of them) are.
  const bool vec = aligned16 && rows % 4 == 0;
  if (which == 1 && cc.nhwc && dyn_batch) {   // the same copy image by image: the images are the grid's z
    g.m = rows, g.layout_a = GemmLayout::RowMajor, g.lda = cc.c, g.stride_a = cc.c * rows, g.batch = cc.n;
  } else if (which == 1 && cc.nhwc) {   // x [N*H*W][C]: a pitched copy to 16-byte rows (and the split)
    g.m = cc.n * rows, g.layout_a = GemmLayout::RowMajor, g.lda = cc.c, g.stride_a = 0, g.batch = 1;
  } else if (which == 1 && dyn_rows) {
    g.m = 0, g.layout_a = GemmLayout::ColMajor, g.lda = 0, g.stride_a = 0, g.batch = cc.n, g.vec_a = aligned16 && rows4;
  } else if (which == 1) {
    g.m = rows, g.layout_a = GemmLayout::ColMajor, g.lda = rows, g.stride_a = cc.c * rows, g.batch = cc.n, g.vec_a = vec;
  } else if (flipped || cc.transposed) {   // filter k's channel c, tap t at w[c][k][t] (flipped: [R*S - 1 - t])
    g.prep = flipped ? kPrepBReversed : which;
    g.n = rows, g.layout_b = GemmLayout::RowMajor, g.ldb = cc.k * rows, g.stride_b = rows, g.batch = cc.k;
  } else {
    g.n = rows, g.layout_b = GemmLayout::RowMajor, g.ldb = rows, g.stride_b = cc.c * rows, g.batch = cc.k, g.vec_b = vec;
  }
  return g;
}

// Dyn spatial extents on the TMA engine: the pixel tiles by a size class of the product of the dyn
// extents, at the input pixels where an image's output pixels, estimated as its input pixels over
// the strides, pass kConvTmaSmallImage and (tf32) reach kConvTmaLargeImage; each class planned at
// its lowest value. Declares the thresholds and returns the image's output pixels at the class's
// lowest value (`text`: the class, for the kernel's reason). plan_conv declares them also where a
// flops class keeps a small launch off the engine (every class's plan declares the same).
std::int64_t conv_tma_pixel_class(Planner& p, const ConvConfig& cc, const DynConv& dyn, std::string& text) {
  const auto [key, fixed] = dyn.product(cc, false);
  const std::int64_t strides = std::int64_t{cc.stride_d} * cc.stride_h * cc.stride_w;
  std::vector<std::int64_t> at{ceil_div((kConvTmaSmallImage + 1) * strides, fixed)};
  if (!conv_x3(cc)) at.push_back(ceil_div(kConvTmaLargeImage * strides, fixed));
  normalize_thresholds(at);
  p.add_dyn_thresholds(key, at);
  const int klass = dyn_class(at, dyn_class_value(key, p.bound().dims));
  const std::int64_t pixels = std::max<std::int64_t>(1, dyn_class_low(at, klass) * fixed / strides);
  text = fmt::format(" ({} in {}: images of about {} output pixels on)", key, dyn_class_text(at, klass), pixels);
  return pixels;
}

// [Note: conv picks]
// A conv has picks ([Note: tuned picks] in plan.h) within the route the planner took for it (the
// route itself stays the rule's): the TMA engine its tile (rows x columns: pixels x out channels
// where conv_tma_pixel_rows, else out channels x an image's pixels), 64 or 128 rows by 32 (f32
// only, which the engine's copies always are), 64, 128 or 256 columns (3xTF32: at most
// kTmaX3MaxCols), its stages as many as fit (conv_tma_stages); WgConvNchw 64 or 128 out channels
// by 64, 128 or 256 pixels (3xTF32: at most kConvWgmmaX3MaxCols) in 3 or 4 stages; ConvNchw 64 or
// 128 out channels of a group by 64 or 128 pixels (warp tiles of half the rows by 32 columns: 4 or
// 8 warps) in 2 to 4 stages, where they fit with the im2col table; DepthwiseDirect blocks of 128, 256 or 512
// threads. A tile no wider along an axis than the power of two at or above its extent there (a
// wider one only adds idle rows), besides the heuristic's. The heuristic's pick is always one of
// them. Dyn spatial extents (a pixel tile by size class, the extents a launch's) have no picks;
// a dyn batch has, tuned per size class as a dyn matmul is.
ConvPick conv_pick_of(const ConvConfig& c) {
  if (c.kind == ConvKind::Depthwise) return {c.kind, 0, 0, 0, c.threads};
  return {c.kind, c.bm, c.bn, c.stages, 0};
}

// Sets the fields a pick of the config's route holds (ConvNchw's warp tile follows its tile).
void conv_apply(ConvConfig& c, const ConvPick& k) {
  KILN_ASSERT(k.kind == c.kind, "a {} conv pick for a {} conv", enum_name(k.kind), enum_name(c.kind));
  if (c.kind == ConvKind::Depthwise) {
    c.threads = k.threads;
    return;
  }
  c.bm = k.bm, c.bn = k.bn, c.stages = k.stages;
  if (c.kind == ConvKind::Nchw) c.wm = c.bm / 2, c.wn = 32, c.bk = 32;
}

// The TMA engine's stages for the config's tile: as many as fit, at most 8, at least 2.
int conv_tma_stages(const Target& t, ConvConfig c) {
  c.stages = 8;
  while (c.stages > 2 && conv_smem(c) > smem_limit(t)) --c.stages;
  return c.stages;
}

std::vector<ConvPick> conv_candidates(const Target& t, const ConvConfig& cc) {
  const ConvPick h = conv_pick_of(cc);
  // Tile sizes along an axis of `extent`: those up to the power of two at or above it, and the heuristic's.
  auto sizes = [](std::initializer_list<int> options, std::int64_t extent, int heuristic) {
    std::vector<int> out;
    for (int s : options)
      if (s == heuristic || s / 2 < extent) out.push_back(s);
    return out;
  };
  std::vector<ConvPick> out;
  auto add = [&](const ConvPick& k) {
    ConvConfig c = cc;
    conv_apply(c, k);
    if (conv_smem(c) <= smem_limit(t)) out.push_back(k);
  };
  const bool x3 = conv_x3(cc);
  switch (cc.kind) {
    case ConvKind::Depthwise:
      for (int threads : {128, 256, 512}) out.push_back({ConvKind::Depthwise, 0, 0, 0, threads});
      break;
    case ConvKind::Nchw: {
      const std::int64_t pixels = conv_gemm_pixels(cc.n, cc.dout, cc.ho, cc.wo, cc.stride_d, cc.stride_h,
                                                   conv_phases_w(cc), cc.transposed);
      for (int bm : sizes({64, 128}, cc.k / cc.groups, h.bm))
        for (int bn : sizes({64, 128}, pixels, h.bn))
          for (int stages : {2, 3, 4}) add({ConvKind::Nchw, bm, bn, stages, 0});
      break;
    }
    case ConvKind::Wgmma:
      for (int bm : sizes({64, 128}, cc.k, h.bm))
        for (int bn : sizes({64, 128, 256}, cc.ho * cc.wo, h.bn))
          if (!x3 || bn <= kConvWgmmaX3MaxCols)
            for (int stages : {3, 4}) add({ConvKind::Wgmma, bm, bn, stages, 0});
      break;
    case ConvKind::Tma: {
      const bool pixel_rows = conv_tma_pixel_rows(cc);
      const std::int64_t howo = conv_tma_grid(cc);
      const std::int64_t pixels = cc.nhwc ? cc.n * howo : howo;
      const auto rows = pixel_rows ? sizes({64, 128}, pixels, h.bm) : sizes({64, 128}, cc.k, h.bm);
      const auto cols = pixel_rows ? sizes({32, 64, 128, 256}, cc.k, h.bn) : sizes({64, 128, 256}, pixels, h.bn);
      for (int bm : rows)
        for (int bn : cols) {
          if (x3 && !tma_tile_fits_x3(bn, 1)) continue;
          ConvConfig c = cc;
          c.bm = bm, c.bn = bn;
          add({ConvKind::Tma, bm, bn, conv_tma_stages(t, c), 0});
        }
      break;
    }
  }
  // (The rule's tile where none fits: the heuristic's own config, which its launch then checks.)
  if (std::find(out.begin(), out.end(), h) == out.end()) out.insert(out.begin(), h);
  return out;
}

// The TMA engine's tile by the rule: cc.bm x cc.bn (rows x columns as conv_tma_pixel_rows lays
// them out) and cc.vec_y (16-byte stores: NHWC with K a multiple of 4, or NCHW where an image's
// pixels are; with dyn spatial extents, where a launch's are, which the launch checks). The pixel
// tiles follow an image's output pixels (of a stride phase's grid where the rows are pixels), or
// with dyn spatial extents `class_pixels`, their size class (conv_tma_pixel_class; 0: static).
// Returns the count of 128-row tiles where [Note: a wave of TMA conv tiles] took 64 rows, else 0.
//
// [Note: a wave of TMA conv tiles]
// A conv with static spatial extents whose 128-row tiles number fewer than the SMs takes 64 rows
// (twice the tiles, one consumer warpgroup each): on an H100 a 4x64x64x64 -> 128 tf32 conv's 128
// tiles of 128x256 took 0.0306 ms, 256 of 64x256 0.0244 (bench/results/2026-12-07-h100-run5/,
// `kiln tune`; with this rule, 0.0261 against 0.0306 in one run: run6). The tile count grows with the batch, so with a dyn batch the rule is a route change
// of its size classes (plan_conv), each class planned at its lowest batch.
std::int64_t conv_tma_tile(const Target& t, ConvConfig& cc, std::int64_t class_pixels) {
  const bool dyn_spatial = class_pixels > 0, x3 = conv_x3(cc);
  const std::int64_t howo = cc.dout * cc.ho * cc.wo;
  // (A transposed conv's rows' tile follows its phase grid.)
  const std::int64_t tile_pixels = dyn_spatial ? class_pixels : howo,
                     tile_grid = dyn_spatial ? class_pixels : conv_tma_grid(cc);
  if (conv_tma_pixel_rows(cc)) {   // rows = output pixels (of all images in NHWC, of one in NCHW), columns = out channels
    cc.bm = (cc.nhwc ? cc.n * howo : tile_grid) <= kConvTmaSmallImage ? 64 : 128;
    cc.bn = cc.k <= 32 ? 32 : cc.k <= 64 ? 64 : cc.k <= 128 || x3 ? 128 : 256;
    cc.vec_y = cc.nhwc && cc.k % 4 == 0;   // (NCHW: the transposed store takes no 16-byte stores)
  } else {      // rows = out channels, columns = an image's output pixels
    cc.bm = cc.k <= 64 ? 64 : 128;
    cc.bn = static_cast<int>(conv_tma_pixel_tile(tile_pixels, x3));
    cc.vec_y = dyn_spatial || howo % 4 == 0;
  }
  const std::int64_t units = conv_tma_units(cc);
  if (dyn_spatial || cc.bm != 128 || units >= t.sm_count) return 0;
  cc.bm = 64;
  return units;
}

// Offers the conv's picks for `anchor` ([Note: conv picks]) and applies the chosen one to `cc`
// (its heuristic config); returns the reason's config note ("" where it has none).
std::string offer_conv_picks(Planner& p, int anchor, ConvConfig& cc, std::string what, bool dyn_spatial) {
  if (dyn_spatial) return "";
  std::string note = "; config: heuristic";
  conv_apply(cc,
             p.offer_picks(anchor, std::move(what), conv_pick_of(cc), conv_candidates(p.target(), cc), note, "conv"));
  return note;
}

void plan_conv_tma(Planner& p, PlannedKernel& kn, ConvConfig cc, const std::string& shape_why, const std::string& why,
                   bool flipped, const DynConv* dyn) {
  // [Note: dyn conv spatial extents]: the tiles as for large images, the copy of x and the x map
  // sized by each launch.
  const bool dyn_spatial = dyn != nullptr && dyn->any_spatial();
  const bool dyn_batch = dyn != nullptr && !dyn->dim.empty();
  const std::int64_t parts = conv_x3(cc) ? 2 : 1, ldc = conv_tma_ldc(cc), rs = std::int64_t{cc.t} * cc.r * cc.s;
  const std::int64_t howo = cc.dout * cc.ho * cc.wo, pixels = cc.n * howo, image = cc.d * cc.h * cc.w;
  // A transposed conv ([Note: strided transposed convs on the TMA engine] in config/conv.h): one
  // GEMM per stride phase over its phase grid.
  const bool phased = cc.transposed;
  const int phases = conv_phases(phased, cc.stride_d, cc.stride_h, cc.stride_w);
  const std::int64_t grid = conv_tma_grid(cc);
  const bool depth = conv_tma_depth(cc.d, cc.t, cc.dout);   // x a 5-D map
  // The input's spatial extents as the texts give them: (D, )H, W (a dyn one by its dim).
  auto extent_text = [&](int slot, std::int64_t v) {
    return dyn_spatial && !dyn->spatial[slot].empty() ? dyn->spatial[slot] : std::to_string(v);
  };
  const std::string spatial = depth ? fmt::format("{}, {}, {}", cc.d, cc.h, cc.w)
                                    : fmt::format("{}, {}", extent_text(1, cc.h), extent_text(2, cc.w));
  // [Note: NCHW x read in place] (config/conv.h): a 1-d stride-1 tf32 conv maps x as stored.
  cc.direct = !dyn_spatial && conv_tma_direct_fits(cc);
  const bool direct = cc.direct;
  const bool nhwc = cc.nhwc, x_in_place = direct || conv_tma_x_in_place(cc), pixel_rows = conv_tma_pixel_rows(cc);
  cc.kind = ConvKind::Tma;
  // Dyn spatial extents: the pixel tiles by a size class (conv_tma_pixel_class).
  std::string pixel_class;
  const std::int64_t class_pixels = dyn_spatial ? conv_tma_pixel_class(p, cc, *dyn, pixel_class) : 0;
  if (const std::int64_t idle = conv_tma_tile(p.target(), cc, class_pixels))
    pixel_class += fmt::format(", 64 rows as {} tiles of 128 would leave SMs idle ([Note: a wave of TMA conv tiles])", idle);
  cc.stages = conv_tma_stages(p.target(), cc);
  const std::string pick_note = offer_conv_picks(p, kn.anchor, cc, shape_why, dyn_spatial);
  const char* split = conv_x3(cc) ? ", split into tf32 hi and lo parts" : "";   // (the filters only)
  const bool aligned = p.target().aligned16;
  // The passes: x (unless read in place), then the filters; kn (the anchor's slot) is the first.
  std::vector<PlannedKernel> preps;
  int x_buf = p.leaf_buffer(p.node(kn.anchor).operands[0]);
  std::int64_t x_ld = cc.c;   // elements between pixels of the x the engine maps
  // [Note: dyn conv]: with a dyn batch the copy of x is sized by each launch, as its map is; with
  // dyn spatial extents by the copy's geometry at each launch (conv_prep_launch).
  const std::string batch = dyn_batch ? dyn->dim : std::to_string(cc.n);
  if (!x_in_place) {
    x_buf = p.add_workspace(fmt::format("{}_x{}", nhwc ? "padded" : "nhwc", kn.anchor), DType::f32,
                            {cc.n, image, ldc}, dyn_batch && !dyn_spatial ? dyn->dim : "");
    if (dyn_spatial) p.size_by_launch(x_buf);   // (the copy is the kernel in the anchor's slot)
    x_ld = ldc;
    PlannedKernel xp;
    xp.template_name = "gemm_operand_prep";
    xp.args.push_back(buffer_arg(p, x_buf, true));
    // Its rows a multiple of 4 at every launch: some factor of H x W is, by its bucket or its value.
    const bool rows4 = dyn_spatial && (dyn->multiple_of_4(p, 1, cc.h) || dyn->multiple_of_4(p, 2, cc.w));
    const GemmConfig xg = conv_prep_config(cc, 1, aligned, false, dyn != nullptr, dyn_spatial, rows4);
    if (dyn_spatial) {   // the launch at the bound extents (each launch's: conv_prep_launch)
      GemmConfig at = xg;
      at.m = at.lda = image, at.stride_a = cc.c * image;
      set_launch(p, xp, at);
      xp.config = xg;
      // x's pixels per image (H x W: its rows and their stride) and the images' stride, as
      // expressions of the dims.
      const ir::DimExpr x_rows = dyn->in_or(1, cc.h) * dyn->in_or(2, cc.w);
      xp.add_dyn_value("prep_rows", x_rows);
      xp.add_dyn_value("prep_ld", x_rows);
      xp.add_dyn_value("prep_stride", x_rows * ir::DimExpr::constant(cc.c));
    } else {
      set_launch(p, xp, xg);
    }
    const std::string size = dyn_spatial ? std::string("sized by each launch")
                             : dyn       ? fmt::format("{:.1f} MB an image", static_cast<double>(image * ldc * 4) / 1e6)
                                         : fmt::format("{:.1f} MB", static_cast<double>(cc.n * image * ldc * 4) / 1e6);
    xp.reason = fmt::format("x {} {} channel rows of {} bytes in a workspace ({}) for the TMA engine's im2col copies",
                            nhwc ? fmt::format("[{}, {}, {}] (NHWC)", batch, spatial, cc.c)
                                 : fmt::format("[{}, {}, {}] (NCHW)", batch, cc.c, spatial),
                            nhwc ? "copied to" : "transposed to NHWC with", ldc * 4, size);
    preps.push_back(std::move(xp));
  }
  const int w_ws = p.add_workspace(fmt::format("kmajor_w{}", kn.anchor), DType::f32, {parts * cc.k, rs, ldc});
  PlannedKernel wprep;
  wprep.template_name = "gemm_operand_prep";
  wprep.args.push_back(buffer_arg(p, w_ws, true));
  set_launch(p, wprep, conv_prep_config(cc, 2, aligned, flipped));
  const std::string taps = depth ? fmt::format("{}, {}, {}", cc.t, cc.r, cc.s) : fmt::format("{}, {}", cc.r, cc.s);
  wprep.reason = fmt::format("filters [{}, {}, {}] to [{}, {}, {}] (channels innermost, rows of {} bytes{}){} in a "
                             "workspace", flipped || phased ? cc.c : cc.k, flipped || phased ? cc.k : cc.c, taps, cc.k, rs, cc.c,
                             ldc * 4, flipped ? ", taps reversed" : "", split);
  preps.push_back(std::move(wprep));
  PlannedKernel engine;
  engine.anchor = kn.anchor;
  engine.stores = std::move(kn.stores);
  kn.stores.clear();
  engine.template_name = "conv_tma";
  engine.setmaxnreg = true;
  TensorMapSpec wmap;   // the filters, tiled: (channel, tap, filter)
  wmap.dims = {cc.c, rs, parts * cc.k};
  wmap.strides = {ldc * 4, rs * ldc * 4};
  wmap.box = {kConvTmaChannels, 1, pixel_rows ? cc.bn : cc.bm};
  TensorMapSpec xmap;   // x in NHWC, im2col: (channel, w, h, image), or NDHWC: (channel, w, h, d, image)
  if (direct) {         // x as stored, tiled: (pixel, channel, image), boxes of 32 pixels x 32 channels
    xmap.dims = {cc.w, cc.c, cc.n};
    xmap.strides = {cc.w * 4, cc.c * cc.w * 4};
    xmap.box = {kConvTmaChannels, kConvTmaChannels, 1};
  } else {
    xmap.dims = {cc.c, cc.w, cc.h};
    xmap.strides = {x_ld * 4, cc.w * x_ld * 4};
    xmap.box = {kConvTmaChannels, pixel_rows ? cc.bm : cc.bn};
    xmap.im2col = true;
    xmap.lower = {conv_tma_lower_w(cc), conv_tma_lower_h(cc)};
    // (corners are in the map's narrow range: conv_tma_im2col_fits)
    xmap.upper = {static_cast<int>(conv_tma_upper_w(cc)), static_cast<int>(conv_tma_upper_h(cc))};
    xmap.element_strides = {1, phased ? 1 : cc.stride_w, phased ? 1 : cc.stride_h};   // (phases: their grids)
    if (depth) {
      xmap.dims.push_back(cc.d);
      xmap.strides.push_back(cc.h * cc.w * x_ld * 4);
      xmap.lower.push_back(conv_tma_lower_d(cc));
      xmap.upper.push_back(static_cast<int>(conv_tma_upper_d(cc)));
      xmap.element_strides.push_back(phased ? 1 : cc.stride_d);
    }
    xmap.dims.push_back(cc.n);
    xmap.strides.push_back(image * x_ld * 4);
    xmap.element_strides.push_back(1);
  }
  const std::size_t xmap_rank = xmap.dims.size();
  engine.args = {tensor_map_arg(w_ws, "tmap_w", DType::f32, std::move(wmap)),
                 tensor_map_arg(x_buf, "tmap_x", DType::f32, std::move(xmap))};
  if (dyn_spatial) {   // (2-d or 1-d: {C, W, H, N}) every extent and stride a launch's, in elements
    const ir::DimExpr h = dyn->in_or(1, cc.h), w = dyn->in_or(2, cc.w), c = ir::DimExpr::constant(cc.c);
    const ir::DimExpr ld = ir::DimExpr::constant(x_ld);
    engine.args[1].map_dims_at = {c, w, h, dyn_batch ? dyn->extent : ir::DimExpr::constant(cc.n)};
    engine.args[1].map_strides_at = {ld, w * ld, h * w * ld};
  } else if (dyn != nullptr) {
    engine.args[1].map_dyn_dim = static_cast<int>(xmap_rank) - 1;   // the images: a launch's
  }
  engine.config = cc;
  set_launch(engine, conv_geometry(cc, p.target().sm_count));
  const std::string pixel_text =
      nhwc && !dyn ? fmt::format("{} output pixels", pixels)
      : phased     ? fmt::format("{} pixels of each of {} stride phases per image", grid, phases)
      : dyn_spatial
          ? fmt::format("{} x {} pixels per image", dyn->spatial[1].empty() ? std::to_string(cc.ho) : dyn->out[1].str(),
                        dyn->spatial[2].empty() ? std::to_string(cc.wo) : dyn->out[2].str())
          : fmt::format("{} pixels per image", howo);
  const std::string units = dyn ? fmt::format("at most {} persistent CTAs", p.target().sm_count)
                                : fmt::format("{} persistent CTAs over {} tiles", engine.grid.x, conv_tma_units(cc));
  const std::string channel_text = fmt::format("{} out channels", cc.k);
  engine.reason = fmt::format("{}: sm_90a TMA engine, {} of {} x {} x K {} (taps x channels in 32-channel "
                              "k tiles{}{}), {}x{} tiles{} ({} consumer warpgroup{} + a TMA producer warpgroup, {}{}), "
                              "{} stages, {}{}; {}", shape_why,
                              phased ? "one implicit GEMM per stride phase (only the taps that reach it; [Note: strided "
                                       "transposed convs on the TMA engine])"
                                     : "implicit GEMM",
                              pixel_rows ? pixel_text : channel_text, pixel_rows ? channel_text : pixel_text,
                              conv_gemm_k(cc),
                              direct ? ", x read in place: [Note: NCHW x read in place]" : x_in_place ? ", x read in place" : "",
                              conv_x3(cc) ? ", x split into tf32 hi and lo parts by the consumers" : "", cc.bm, cc.bn,
                              pixel_class, cc.bm / 64, cc.bm > 64 ? "s" : "",
                              direct ? "x by tiled copies of 32 pixels x 32 channels from the 16-byte boundary at or before a tap's "
                                              "first pixel, one box more than the tile, through the consumers' registers"
                                     : "im2col by the TMA unit",
                              depth ? " over three spatial axes" : "", cc.stages, units,
                              cc.stream ? ", streaming stores" : "", why) + pick_note;
  place_passes(p, kn, preps);
  p.add_followup(std::move(engine));
  if (dyn == nullptr) return;
  // [Note: dyn conv]: the engine and the copy of x take the batch at launch; the filters' copy is
  // static. Dyn spatial extents: the engine reads them as DynValue arguments (make_dyn_spatial),
  // the copy of x its rows (added above).
  auto make_dyn = [&](PlannedKernel& k) {
    if (auto* c = std::get_if<ConvConfig>(&k.config)) {
      if (dyn_batch) c->n = 0;
      make_dyn_spatial(*dyn, *c, k);
    } else if (auto* g = std::get_if<GemmConfig>(&k.config); g != nullptr && g->prep == kPrepA) {
      if (dyn_batch) g->batch = 0;
    } else {
      return;
    }
    if (dyn_batch) k.dyn_outer = {dyn->extent};
    k.reason = fmt::format("{}; {}", dyn->text, k.reason);
  };
  make_dyn(kn);
  for (auto& f : p.pending_followups()) make_dyn(f);
}

// [Note: a stride-1 transposed conv as a forward conv]
// With stride 1, y = conv_transpose(x, w) (padding p, dilation d, filter extent R along each axis)
// takes y[o] = sum over i, r of x[i] w[r] where o = i - p + d r. Substituting r' = R - 1 - r gives
// y[o] = sum over r' of x[o - P + d r'] w[R - 1 - r'] with P = d (R - 1) - p: the forward conv of
// x with padding P on both sides and the filters flipped, in and out channels exchanged
// (w'[k][c][r'][s'] = w[c][k][R - 1 - r'][S - 1 - s']; reversing the flattened taps
// (t * R + r) * S + s flips every axis at once, the depth's too). So the TMA engine runs it like
// any forward conv; only its filter pass differs (OperandPrep's reversed rows, kPrepBReversed).
// Not taken: a stride over 1 (its phases are strided stores the engine does not make),
// output_padding (a pad on one side only), p > d (R - 1) (a negative pad), groups (the engine
// takes one).
// The forward conv a transposed one is, or nullopt where the rewrite does not apply (`why_not`
// then says why, as the end of a sentence).
std::optional<ConvConfig> transposed_as_forward(const ConvConfig& cc, std::string& why_not) {
  ConvConfig f = cc;
  f.transposed = false;
  f.pad_h = cc.dil_h * (cc.r - 1) - cc.pad_h;
  f.pad_w = cc.dil_w * (cc.s - 1) - cc.pad_w;
  f.pad_d = cc.dil_d * (cc.t - 1) - cc.pad_d;
  why_not = cc.groups != 1 ? "it has groups"
            : cc.stride_d != 1 || cc.stride_h != 1 || cc.stride_w != 1 ? "its stride is over 1"
            : cc.opad_d != 0 || cc.opad_h != 0 || cc.opad_w != 0 ? "it has output_padding"
            : f.pad_d < 0 || f.pad_h < 0 || f.pad_w < 0 ? "its padding passes dilation x (filter extent - 1)"
                                                        : "";
  if (!why_not.empty()) return std::nullopt;
  return f;
}


// The conv's dyn batch and spatial extents, or nothing (no dyn dim, or only ones in the bucket
// one); refuses, located, every dyn dim a conv cannot take. The caller sets its class text.
std::optional<DynConv> dyn_conv(Planner& p, const PlannedKernel& kn) {
  const auto& ir = *p.bound().ir;
  // (The walks share the planner's memo of dyn-free size nodes: no dyn dim at all is the common case.)
  if (p.dyn_dim_of_anchor(kn.anchor, kn.stores[0].node) == nullptr) return std::nullopt;
  const auto& node = ir.node(kn.anchor);
  const auto& c = node.conv;
  const char* what = "the conv template";
  const std::string why = "takes a dyn dim only as its batch (the first axis of x and y) or as a spatial extent of "
                          "x: the channels and the filters are baked in (its im2col tables divide by them)";
  const ir::Shape& xs = ir.node(node.operands[0]).shape;
  const ir::Shape& ws = ir.node(node.operands[1]).shape;
  const ir::Shape& ys = node.shape;
  for (const auto& e : ws)
    if (const std::string d = p.dyn_in(e); !d.empty()) p.refuse_dyn(d, kn.anchor, what, why);
  const bool nhwc = c.layout == ir::Layout::NHWC;
  const std::size_t dims = static_cast<std::size_t>(c.dims), first = nhwc ? 1 : 2;
  const std::int64_t channels = p.shape(node.operands[0])[nhwc ? xs.size() - 1 : 1];
  const bool depthwise = c.groups == channels && channels > 1 && dims < 3 && !c.transposed;
  DynConv dc;
  std::set<std::string> spatial_dims;   // (in the bucket one too)
  for (std::size_t a = 1; a < xs.size(); ++a) {
    const std::string d = p.dyn_in(xs[a]);
    if (d.empty()) continue;
    if (a < first || a >= first + dims) p.refuse_dyn(d, kn.anchor, what, why);   // the channels
    if (xs[a].kind() != ir::DimExpr::Kind::Dim)
      p.refuse_dyn(d, kn.anchor, what, fmt::format("takes a dyn spatial extent only as a whole dim, not inside {}",
                                                   xs[a].str()));
    if (dims == 3 || c.transposed)
      p.refuse_dyn(d, kn.anchor, what, "takes dyn spatial extents on 1-d and 2-d forward convs only (a depth axis or a "
                                       "transposed conv runs on templates that bake them in)");
    if (nhwc && !depthwise)
      p.refuse_dyn(d, kn.anchor, what, "takes dyn spatial extents in NHWC only where it is depthwise (NHWC runs on the "
                                       "sm_90a TMA engine, whose tensor maps and tiles bake them in)");
    spatial_dims.insert(d);
    if (dyn_bucket(p.bound().dims.at(d)) == DynBucket::One) continue;   // 1: static
    const std::size_t slot = 3 - dims + (a - first);
    dc.spatial[slot] = d;
    dc.in[slot] = xs[a];
    dc.out[slot] = ys[a];
  }
  const std::string batch = p.dyn_in(xs[0]);
  if (!batch.empty() && xs[0].kind() != ir::DimExpr::Kind::Dim)
    p.refuse_dyn(batch, kn.anchor, what, fmt::format("takes a dyn batch only as a whole extent, not inside {}", xs[0].str()));
  std::set<std::string> allowed = spatial_dims;
  if (!batch.empty() && spatial_dims.count(batch))
    p.refuse_dyn(batch, kn.anchor, what, "takes a dyn dim as its batch or as a spatial extent, not as both");
  allowed.insert(batch);
  // The output and the epilogue's side operands: no dyn dim but the batch and the spatial extents.
  if (const ir::DimDecl* other = p.dyn_dim_of_anchor(kn.anchor, kn.stores[0].node, allowed))
    p.refuse_dyn(other->name, kn.anchor, what, why);
  if (!batch.empty() && dyn_bucket(p.bound().dims.at(batch)) != DynBucket::One) dc.dim = batch, dc.extent = xs[0];
  if (dc.dim.empty() && !dc.any_spatial()) return std::nullopt;
  return dc;
}

// [Note: dyn conv spatial extents]: the config's dyn spatial extents zeroed and the DynValue
// arguments the kernel reads them from (every kConvDynFields member: the static ones as constants).
void make_dyn_spatial(const DynConv& dc, ConvConfig& cc, PlannedKernel& kn) {
  if (!dc.any_spatial()) return;
  const ir::DimExpr h = dc.spatial[1].empty() ? ir::DimExpr::constant(cc.h) : dc.in[1];
  const ir::DimExpr w = dc.spatial[2].empty() ? ir::DimExpr::constant(cc.w) : dc.in[2];
  const ir::DimExpr ho = dc.spatial[1].empty() ? ir::DimExpr::constant(cc.ho) : dc.out[1];
  const ir::DimExpr wo = dc.spatial[2].empty() ? ir::DimExpr::constant(cc.wo) : dc.out[2];
  const ir::DimExpr values[5] = {h, w, ho, wo, ho * wo};
  for (int f = 0; f < 5; ++f) kn.add_dyn_value(fmt::format("conv_{}", kConvDynFields[f]), values[f]);
  if (!dc.spatial[1].empty()) cc.h = 0, cc.ho = 0;
  if (!dc.spatial[2].empty()) cc.w = 0, cc.wo = 0;
}

void plan_conv(Planner& p, PlannedKernel& kn) {
  const auto& node = p.node(kn.anchor);
  const auto& c = node.conv;
  const char* conv = ir::conv_name(c);
  const NodeId x = node.operands[0], w = node.operands[1];
  const DType et = p.node(x).dtype;
  KILN_CHECK(contraction_dtype(et) && p.node(w).dtype == et, UnsupportedError,
             "{}: {} of {} has no conv template (f32, f16, bf16; cast first, e.g. f32(x))",
             p.bound().ir->where(node.loc), conv, dtype_name(et));
  const DType stored = p.node(kn.stores[0].node).dtype;
  KILN_CHECK(contraction_dtype(stored), UnsupportedError, "{}: the epilogue of this {} ends in {}, which the conv "
             "template cannot store (f32, f16, bf16)", p.bound().ir->where(node.loc), conv, dtype_name(stored));
  const auto& xs = p.shape(x);
  const auto& ws = p.shape(w);
  const auto& ys = p.shape(kn.anchor);
  const bool nhwc = c.layout == ir::Layout::NHWC;
  // The spatial axes right-aligned into (d, h, w): index a of these is spatial axis a - (3 - dims).
  const std::size_t dims = static_cast<std::size_t>(c.dims), first = nhwc ? 1 : 2;
  std::int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1}, opad[3] = {0, 0, 0};
  for (std::size_t i = 0; i < dims; ++i) {
    const std::size_t a = 3 - dims + i;
    in[a] = xs[first + i], out[a] = ys[first + i], kernel[a] = ws[2 + i];
    stride[a] = static_cast<int>(c.stride[i]), pad[a] = static_cast<int>(c.padding[i]);
    dil[a] = static_cast<int>(c.dilation[i]), opad[a] = static_cast<int>(c.output_padding[i]);
  }
  const std::int64_t C = nhwc ? xs[3] : xs[1], D = in[0], H = in[1], W = in[2];
  const std::int64_t K = nhwc ? ys[3] : ys[1], T = kernel[0], R = kernel[1], S = kernel[2], G = c.groups;
  const std::int64_t Do = out[0], Ho = out[1], Wo = out[2];
  // A dyn batch ([Note: dyn conv]): the rules see its class's lowest value, the texts its name.
  // Dyn spatial extents ([Note: dyn conv spatial extents]): the rules see the bound values (they
  // pick nothing by them), the texts the names.
  std::optional<DynConv> dc = dyn_conv(p, kn);
  std::int64_t N = xs[0];
  const bool dyn_batch = dc && !dc->dim.empty(), dyn_spatial = dc && dc->any_spatial();
  const std::string batch_text = dyn_batch ? dc->dim : std::to_string(N);
  ConvConfig cc;
  cc.elem_bytes = static_cast<int>(dtype_size(et));
  cc.nhwc = nhwc;
  cc.n = N, cc.c = C, cc.h = H, cc.w = W, cc.k = K, cc.r = static_cast<int>(R), cc.s = static_cast<int>(S);
  cc.stride_h = stride[1], cc.stride_w = stride[2], cc.pad_h = pad[1], cc.pad_w = pad[2];
  cc.dil_h = dil[1], cc.dil_w = dil[2], cc.groups = static_cast<int>(G);
  cc.ho = Ho, cc.wo = Wo;
  cc.transposed = c.transposed;
  cc.d = D, cc.t = static_cast<int>(T), cc.stride_d = stride[0], cc.pad_d = pad[0], cc.dil_d = dil[0], cc.dout = Do;
  cc.opad_d = opad[0], cc.opad_h = opad[1], cc.opad_w = opad[2];
  auto axes_text = [&](const auto& v) {
    std::string t;
    for (std::size_t i = 0; i < dims; ++i) t += fmt::format("{}{}", i ? "x" : "", v[3 - dims + i]);
    return t;
  };
  // An image's outputs with dyn spatial extents: "((H + -1) / 2 + 1) x W".
  auto dyn_outputs_text = [&] {
    std::vector<std::string> parts;
    for (std::size_t s = 3 - dims; s < 3; ++s) parts.push_back(dc->spatial[s].empty() ? std::to_string(out[s]) : dc->out[s].str());
    return fmt::format("{}", fmt::join(parts, " x "));
  };
  std::string in_text = axes_text(in);
  if (dyn_spatial) {
    std::string names[3] = {std::to_string(D), std::to_string(H), std::to_string(W)};
    for (int s = 0; s < 3; ++s)
      if (!dc->spatial[s].empty()) names[s] = dc->spatial[s];
    in_text = axes_text(names);
  }
  const std::string shape_why =
      fmt::format("{} {}x{}x{} -> {} filters {}, stride {}, pad {}{}, dil {}, groups {}, {}", conv, batch_text, C, in_text, K,
                  axes_text(kernel), axes_text(stride), axes_text(pad),
                  c.transposed ? fmt::format(", output_padding {}", axes_text(opad)) : std::string(), axes_text(dil), G,
                  nhwc ? "NHWC" : "NCHW");
  // A depth axis or a transposed conv: only ConvNchw's general im2col takes them.
  const bool general = conv_im2col_general(D, cc.t, Do, c.transposed);
  const int sms = p.target().sm_count;
  const std::int64_t image_bytes = K * Do * Ho * Wo * static_cast<std::int64_t>(dtype_size(stored));
  const bool f32 = et == DType::f32;
  std::string why;
  const MmaPrecision precision = f32 ? mma_precision(p, node, why) : MmaPrecision::Tf32;
  if (!f32) why = fmt::format("{} tensor cores, f32 accumulation", dtype_name(et));
  const bool depthwise = G == C && C > 1 && !general;
  // How the TMA engine takes the conv at batch n: "" (not), "tma", or for a transposed one "tma fwd"
  // (as a forward conv) or "tma phased" (by stride phase); " 64 rows" where [Note: a wave of TMA conv
  // tiles] takes them (plan_conv_tma: the tile rule as it sees the conv).
  auto on_tma = [&](std::int64_t n) -> std::string {
    ConvConfig at = cc;
    at.n = n, at.precision = precision;
    auto rows = [&](ConvConfig tiled) {
      tiled.direct = conv_tma_direct_fits(tiled);
      return conv_tma_tile(p.target(), tiled, 0) ? " 64 rows" : "";
    };
    if (!c.transposed) return conv_tma_fits(p, at) ? std::string("tma") + rows(at) : "";
    std::string unused;
    const auto fwd = transposed_as_forward(at, unused);
    if (fwd && conv_tma_fits(p, *fwd, true)) return std::string("tma fwd") + rows(*fwd);
    return conv_tma_fits(p, at) ? std::string("tma phased") + rows(at) : "";
  };
  if (dyn_spatial) {   // one route at every value: the TMA engine, WgConvNchw, ConvNchw or DepthwiseDirect
    // (The TMA engine's copies take at most 65535 images (their grid's z): WgConvNchw from 65536.)
    std::string batch_class;
    if (dyn_batch) {
      const std::vector<std::int64_t> thresholds{launch::kMaxGridY + 1};
      p.add_dyn_thresholds(dc->dim, thresholds);
      const int klass = dyn_class(thresholds, N);
      N = dyn_class_low(thresholds, klass);
      batch_class = fmt::format(", and the batch {} in the size class {} of {}", dc->dim,
                                dyn_class_text(thresholds, klass), dc->dim);
    }
    dc->text = fmt::format("dyn spatial extents {}: read per launch{}", dc->spatial_text(), batch_class);
  } else if (dc) {   // the size classes: where the route (engine, streaming stores, NHWC's 64-pixel tiles) changes
    const std::vector<std::int64_t> thresholds = route_thresholds([&](std::int64_t n) {
      if (depthwise) return std::string();   // DepthwiseDirect at every batch
      return fmt::format("{}{}{}", on_tma(n), n * image_bytes > kStreamBytes ? " stream" : "",
                         nhwc && n * Ho * Wo <= 64 ? " 64" : "");
    });
    p.add_dyn_thresholds(dc->dim, thresholds);
    const int klass = dyn_class(thresholds, N);
    N = dyn_class_low(thresholds, klass);   // the rules see the class's lowest batch
    dc->text = fmt::format("dyn {}: the batch in the size class {} of {}, planned at its lowest value", dc->dim,
                           dyn_class_text(thresholds, klass), dc->dim);
  }
  cc.n = N;
  const std::int64_t out_bytes = N * image_bytes;
  // Every route but the TMA engine's ends here: with a dyn batch, the config holds 0 and the
  // launch takes the batch.
  auto finish = [&]() {
    if (!dc) return;
    auto& config = std::get<ConvConfig>(kn.config);
    if (dyn_batch) {
      config.n = 0;
      kn.dyn_outer = {dc->extent};
    }
    make_dyn_spatial(*dc, config, kn);
    kn.reason = fmt::format("{}; {}", dc->text, kn.reason);
  };
  if (depthwise) {
    kn.template_name = "conv_depthwise";
    cc.kind = ConvKind::Depthwise;
    cc.threads = 256;
    const std::string pick_note = offer_conv_picks(p, kn.anchor, cc, shape_why, dyn_spatial);
    kn.config = cc;
    set_launch(kn, conv_geometry(cc, sms));
    kn.reason = shape_why + ": groups == C: DepthwiseDirect, one thread per output, f32 FMA (memory-bound)" + pick_note;
    finish();
    return;
  }
  cc.precision = precision;
  const std::int64_t Kg = K / G, kdim = conv_gemm_k(cc);
  cc.stream = !dyn_spatial && out_bytes > kStreamBytes;
  const DynConv* dyn = dc ? &*dc : nullptr;
  // Dyn spatial extents where the specialized conv asks the flops (conv_tma_pays_small): a size
  // class of the product of the dyn extents among N and x's spatial axes, at kPadMinFlops (the
  // output pixels estimated as the input's over the strides); below it the engine's copies do not
  // pay and WgConvNchw takes the conv, as it takes the specialized one. Asked of the channels,
  // filters and target only (a batch of 1: the batch's class decides the copies' grid, not the
  // rule), so that every class's plan declares the same thresholds, the engine's pixel classes too.
  std::string under_flops;   // the class, where it keeps the conv off the engine
  if (dyn_spatial && !c.transposed) {
    ConvConfig one = cc;
    one.n = 1;
    if (conv_tma_refusal(p, one, true).empty() && !conv_tma_pays_small(cc, false)) {
      const auto [key, fixed] = dc->product(cc, true);
      const double strides = double(cc.stride_d) * cc.stride_h * cc.stride_w;
      const double flops_per_value = 2.0 * static_cast<double>(K * kdim * fixed) / strides;
      // (At most 1: every value is past it, one class.)
      const auto need = static_cast<std::int64_t>(std::ceil(kPadMinFlops / flops_per_value));
      if (need > 1) {
        const std::vector<std::int64_t> at{need};
        p.add_dyn_thresholds(key, at);
        if (dyn_class(at, dyn_class_value(key, p.bound().dims)) == 0)
          under_flops = fmt::format("{} ({} in {})", kUnderFlopsWhy, key, dyn_class_text(at, 0));
      }
      std::string unused;
      conv_tma_pixel_class(p, cc, *dc, unused);
    }
  }
  // Dyn spatial extents: why not the TMA engine, and no streaming stores.
  const std::string engines_why_not =
      dyn_spatial ? fmt::format("; not on the TMA engine: {}; no streaming stores (dyn spatial extents)",
                                under_flops.empty() ? conv_tma_refusal(p, cc, true) : under_flops)
                  : "";
  if (!c.transposed && under_flops.empty() && conv_tma_refusal(p, cc, dyn_spatial).empty()) {
    plan_conv_tma(p, kn, cc, shape_why, why, false, dyn);
    return;
  }
  // A transposed conv: the TMA engine as a forward conv where it can, else ConvNchw (why not: `tma_why_not`).
  std::string tma_why_not;
  if (c.transposed) {
    const auto fwd = transposed_as_forward(cc, tma_why_not);
    if (fwd && (tma_why_not = conv_tma_refusal(p, *fwd, false, true)).empty()) {
      const int fwd_pad[3] = {fwd->pad_d, fwd->pad_h, fwd->pad_w};
      plan_conv_tma(p, kn, *fwd,
                    fmt::format("{} as the forward conv of its flipped filters (pad {}; [Note: a stride-1 "
                                "transposed conv as a forward conv])", shape_why, axes_text(fwd_pad)),
                    why, true, dyn);
      return;
    }
    // Else by stride phase on the engine ([Note: strided transposed convs on the TMA engine]).
    const std::string phased_why_not = conv_tma_refusal(p, cc);
    if (phased_why_not.empty()) {
      plan_conv_tma(p, kn, cc, shape_why, why, false, dyn);
      return;
    }
    tma_why_not += "; nor by stride phase: " + phased_why_not;
  }
  KILN_CHECK(!nhwc, UnsupportedError,
             "{}: {}() has no kernel template in this version of kiln for NHWC with groups {} != C "
             "here: NHWC runs on the sm_90a TMA engine only, and {}",
             p.bound().ir->where(node.loc), conv, G,
             general ? "a depth axis or a transposed conv takes the general im2col" : conv_tma_refusal(p, cc));
  // sm_90a, f32 in tf32 / 3xTF32, one group, 16-byte filter rows: WgConvNchw (conv_sm90.cuh), the
  // wgmma engine with an im2col gather, one persistent CTA per SM walking the tiles (the next
  // tile's loads overlap the last one's stores). Measured on the seed (8x64x512x1024 -> 128,
  // 3x3, H100, bench/standalone/gemm_check.cu): tf32 128x256 tiles, 4 stages 3.58 ms persistent,
  // 3.79 one CTA per tile (128x128: 4.41; 2 CTAs per SM of 128x128: 4.41); 3xTF32 128x128,
  // 4 stages 10.13 ms (128x64 at 2 per SM 11.78); ConvNchw 6.40 / 13.68.
  // Dyn spatial extents too: its gather reads them per launch (conv_sm90.cuh); y's 16-byte stores
  // are then the launch's pick (vec_y: where the target allows them), and Ho x Wo under
  // kConvWgmmaMaxPixels is the launch's check (conv_launch).
  if (!general && p.target().arch == "sm_90a" && f32 && cc.precision != MmaPrecision::Ieee && G == 1 && kdim % 4 == 0 &&
      p.target().aligned16 && Ho * Wo < kConvWgmmaMaxPixels) {
    const bool x3 = cc.precision == MmaPrecision::Tf32x3;
    cc.kind = ConvKind::Wgmma;
    cc.bm = K <= 64 ? 64 : 128, cc.bn = x3 ? kConvWgmmaX3MaxCols : 256, cc.stages = 4;
    const std::string pick_note = offer_conv_picks(p, kn.anchor, cc, shape_why, dyn_spatial);
    cc.vec_y = p.target().aligned16 && (dyn_spatial || (Ho * Wo) % 4 == 0);
    kn.template_name = "conv_wgmma";
    kn.config = cc;
    set_launch(kn, conv_geometry(cc, sms));
    const std::string pixels = dyn_spatial ? dyn_outputs_text() : std::to_string(Ho * Wo);
    std::string tiles;
    if (dyn_spatial)
      tiles = fmt::format("{}x{} tiles over at most {}", cc.bm, cc.bn, sms);
    else if (dc)
      tiles = fmt::format("{} {}x{} tiles an image over at most {}", ceil_div(Ho * Wo, cc.bn) * ceil_div(K, cc.bm), cc.bm,
                          cc.bn, sms);
    else
      tiles = fmt::format("{} {}x{} tiles over {}", ceil_div(Ho * Wo, cc.bn) * ceil_div(K, cc.bm) * N, cc.bm, cc.bn,
                          kn.grid.x);
    kn.reason = fmt::format("{}: sm_90a implicit GEMM on wgmma (WgConvNchw), {} out channels x {} pixels per image x "
                            "K {}, {} persistent CTAs, {} stages, im2col gathered by 4-byte cp.async{}{}; {}{}", shape_why,
                            K, pixels, kdim, tiles, cc.stages, cc.stream ? ", streaming stores" : "",
                            dyn_spatial ? ", 16-byte stores where the launch's pixels per image are a multiple of 4" : "",
                            why, engines_why_not) + pick_note;
    finish();
    return;
  }
  KILN_CHECK(conv_nchw_image_fits(cc), UnsupportedError,
             "{}: this {} reads images of {} x {} x {} elements; the implicit GEMM's im2col table indexes an "
             "image with 32-bit offsets (fewer than 2^31 elements)", p.bound().ir->where(node.loc), conv, C, D * H, W);
  // conv_igemm.cuh's im2col tables pack the (h, w) tap offsets in 16 bits each.
  KILN_CHECK(R * dil[1] + pad[1] + stride[1] < 32768 && S * dil[2] + pad[2] + stride[2] < 32768, UnsupportedError,
             "{}: this {} needs filter extent + padding + stride under 32768 along h and w for the implicit "
             "GEMM's im2col tables (this one: {} and {})", p.bound().ir->where(node.loc), conv,
             R * dil[1] + pad[1] + stride[1], S * dil[2] + pad[2] + stride[2]);
  // A transposed conv splits w by stride phase too where its GEMM K is long enough that the
  // zero taps cost more than the phases' strided stores ([Note: transposed convs by stride
  // phase]). Measured on the H100 (bench/results/2026-11-27-h100-run23/): KernelBench 79 (K 96,
  // w stride 2) 2.11 ms unsplit, 4.83 split; 72 (K 840) and 77 (K 864) 7.5x and 2.9x faster split.
  cc.phase_w = c.transposed && cc.stride_w > 1 && kdim >= kConvPhaseWMinK;
  // Rows = out channels of a group: a 64-row tile when there are at most 64.
  cc.kind = ConvKind::Nchw;
  conv_apply(cc, {ConvKind::Nchw, Kg <= 64 ? 64 : 128, 128, 0, 0});
  cc.stages = pick_stages(p.target(), cc.elem_bytes, cc.bm, cc.bn, cc.bk, cc.wn, true, false,
                          conv_table_bytes(kdim, cc.bk, general));
  const std::string pick_note = offer_conv_picks(p, kn.anchor, cc, shape_why, dyn_spatial);
  // (a transposed conv's filters are gathered: w [C][K/groups][taps] is not k-contiguous)
  cc.vec_w = !c.transposed && p.target().aligned16 && kdim % (16 / cc.elem_bytes) == 0;
  kn.template_name = "conv_nchw";
  kn.config = cc;
  set_launch(kn, conv_geometry(cc, sms));
  // A transposed conv: the registers allow as many CTAs per SM as shared memory does (at most 2,
  // a 128-register cap at 256 threads). Its loader (stride phases, gathered filters, 16-byte table
  // entries) sits at 117-125 registers, and a little more tips it to one CTA per SM: a dyn batch
  // took KernelBench L2 13's kernel from 121 to 141 registers, 1.37x slower (ncu,
  // bench/results/2026-12-03-h200-run3/). A forward conv (76-121 registers) is left uncapped: the
  // cap only constrains ptxas's scheduling there. Measured A/B in one run on the H200 over every
  // KernelBench conv on this kernel (bench/results/2026-12-03-h200-run4/): transposed capped
  // 0.754 (L2 13) to 1.016x, the other 11 within 1%; forward capped 0.992-1.037x, 10 of 14 slower.
  if (c.transposed)
    kn.min_blocks = static_cast<int>(ctas_by_smem(p.target(), kn.shared_bytes, kConvNchwMaxBlocksPerSm));
  kn.reason = fmt::format("{}: implicit GEMM ConvNchw, {} out channels x {} pixels x K {} per group, {}x{} tiles, {} "
                          "stages{}{}; {}", shape_why, Kg,
                          dyn_spatial ? fmt::format("{} x {}", batch_text, dyn_outputs_text())
                          : dc        ? fmt::format("{} x {}", dc->dim, Do * Ho * Wo)
                                      : std::to_string(N * Do * Ho * Wo),
                          kdim,
                          cc.bm, cc.bn, cc.stages,
                          c.transposed ? fmt::format(", one GEMM per stride phase ({} phases: only the taps that reach "
                                                     "a phase are multiplied{}), filters gathered",
                                                     conv_phases(true, cc.stride_d, cc.stride_h, conv_phases_w(cc)),
                                                     cc.stride_w > 1 && !cc.phase_w ? "; w unsplit: K under "
                                                     + std::to_string(kConvPhaseWMinK) : "")
                                           + "; not on the TMA engine as a forward conv: " + tma_why_not
                                       : std::string(),
                          cc.stream ? ", streaming stores" : "", why) + engines_why_not + pick_note;
  finish();
}


// ---------------------------------------------------------------- fused attention
// [Note: attention compositions] (fuse_attention.cpp) made the node; attention_sm90.cuh runs it.
// Each operand is mapped where it is stored (a view of an input: its own strides) or, stored
// first by the planner, row-major. The maps are 4-D: the head dim (contiguous), the rows (queries
// or keys), the inner and the outer batch dim; a batch dim an operand broadcasts has extent 1.
//
// [Note: dyn attention]
// The kernel takes dyn dims in the output's batch dims (a batch of requests, the heads; the inner
// of two as a whole dim, which the epilogue's coordinates divide by) and in the query and key
// rows (sequence lengths), as whole extents or any expression of dims; fuse_attention refuses the
// rest (the head dims), saying why, and the product is then planned as written. Nothing in the
// plan depends on these extents but the grid, so one kernel serves every value:
// - the config holds 0 for each of s, t, batch and inner that a dyn dim sizes, and the entry
//   passes an AttentionExtents of the launch's dims to run() ([Note: dyn attention extents] in
//   config/attention.h);
// - the maps' extents and strides are expressions of the dims (KernelArg::map_dims_at,
//   map_strides_at: a view's strides are its leaf's row-major strides, products of the leaf's
//   extents), which each launch evaluates; every stride stays a multiple of 16 bytes, since each
//   spans a head dim of 64 or more 16-bit elements;
// - the grid is the launch's (launch_for: attention_geometry at the launch's extents), and the
//   reasons name the dims, not their values (the source holds none).

// A view the kernel maps in place, or the operand the planner stored first (row-major).
StridedView attention_operand(const Planner& p, NodeId op, bool kt) {
  if (attention_reads_in_place(p.bound(), op, kt)) return *strided_view(p.bound(), op);
  return row_major(op, p.shape(op));
}

bool takes_attention_view(const Planner& p, NodeId anchor, NodeId operand) {
  const auto& ops = p.node(anchor).operands;
  const bool kt = ops.size() > 1 && ops[1] == operand;
  const auto kind = p.node(operand).kind;
  return (kind == OpKind::Permute || kind == OpKind::Reshape) && attention_reads_in_place(p.bound(), operand, kt);
}

ir::DimExpr product_of(const ir::Shape& shape, std::size_t from, std::size_t to) {
  ir::DimExpr e = ir::DimExpr::constant(1);
  for (std::size_t i = from; i < to; ++i) e = e * shape[i];
  return e;
}

// The operand's 4-D map: {head dim, rows, inner batch, outer batch}; `bcast` gets a bit per
// batch dim it broadcasts (0 outer, 1 inner). kt's rows are its last dim (the keys). `dyn`: the
// map's extents and strides also as expressions of the dims ([Note: dyn attention]).
KernelArg attention_map(const Planner& p, NodeId op, const StridedView& v, bool kt, std::size_t out_rank, int rows_box,
                        const char* name, DType et, int& bcast, bool dyn) {
  const std::int64_t e = static_cast<std::int64_t>(dtype_size(et));
  const std::size_t r = v.shape.size();
  const std::size_t row_dim = kt ? r - 1 : r - 2, col_dim = kt ? r - 2 : r - 1;
  // Bytes a placeholder stride of an extent-1 dim steps: past the whole tensor, a multiple of 16.
  const std::int64_t whole = (product(p.shape(v.leaf), 0, p.shape(v.leaf).size()) * e + 15) / 16 * 16;
  // The same as expressions: the view's extents, the leaf's row-major strides (elements).
  const ir::Shape& extents = p.node(op).shape;
  const ir::Shape& leaf = p.node(v.leaf).shape;
  const ir::DimExpr whole_at = product_of(leaf, 0, leaf.size());
  auto stride_at = [&](std::size_t d) {
    const int j = v.leaf_dims[d];
    return j < 0 ? whole_at : product_of(leaf, static_cast<std::size_t>(j) + 1, leaf.size());
  };
  TensorMapSpec m;
  m.dims = {v.shape[col_dim], v.shape[row_dim]};
  m.strides = {v.shape[row_dim] > 1 ? v.strides[row_dim] * e : whole};
  std::vector<ir::DimExpr> dims_at = {extents[col_dim], extents[row_dim]};
  std::vector<ir::DimExpr> strides_at = {v.shape[row_dim] > 1 ? stride_at(row_dim) : whole_at};
  bcast = 0;
  // Output batch dim k (0 outer, 1 inner) of out_rank - 2 <= 2, right-aligned onto the operand's.
  const std::size_t nb = out_rank - 2, ob = r - 2;
  for (int k = 1; k >= 0; --k) {   // inner first: map dim 2, then outer: map dim 3
    const std::ptrdiff_t od = static_cast<std::ptrdiff_t>(nb) - (k == 1 ? 1 : 2);   // output batch dim
    const std::ptrdiff_t vd = od - static_cast<std::ptrdiff_t>(nb) + static_cast<std::ptrdiff_t>(ob);   // operand's
    if (od < 0 || vd < 0 || v.shape[static_cast<std::size_t>(vd)] == 1) {
      bcast |= 1 << k;
      m.dims.push_back(1);
      m.strides.push_back(whole);
      dims_at.push_back(ir::DimExpr::constant(1));
      strides_at.push_back(whole_at);
    } else {
      const auto d = static_cast<std::size_t>(vd);
      m.dims.push_back(v.shape[d]);
      m.strides.push_back(v.strides[d] * e);
      dims_at.push_back(extents[d]);
      strides_at.push_back(stride_at(d));
    }
  }
  m.box = {64, rows_box, 1, 1};
  KernelArg arg = tensor_map_arg(p.leaf_buffer(v.leaf), name, et, m);
  if (!dyn) return arg;
  // The expressions give the planned map at the bound dims (whole: a head dim's rows are 16-byte multiples).
  std::vector<std::int64_t> at_dims, at_strides;
  for (const auto& x : dims_at) at_dims.push_back(x.evaluate(p.bound().dims));
  for (const auto& x : strides_at) at_strides.push_back(x.evaluate(p.bound().dims));
  KILN_ASSERT(m.with_extents(at_dims, at_strides, e) == m, "attention map {} as expressions: dims [{}] strides [{}]",
              m.text(), fmt::join(at_dims, ", "), fmt::join(at_strides, ", "));
  arg.map_dims_at = std::move(dims_at);
  arg.map_strides_at = std::move(strides_at);
  return arg;
}

// [Note: attention picks]
// Fused attention has picks ([Note: tuned picks] in plan.h): key tiles of 64 or 128 (at most
// attention_bn's: 64 where a head dim is 256, whose accumulators leave no registers for more) and
// a k and v ring of 2, 3 or 4 stages where it fits shared memory with the q block. The query
// block stays 128 rows (two consumer warpgroups: the template's only shape). The heuristic (the
// widest key tile, 3 stages where they fit) is one of them; dyn extents take any pick (nothing
// but the grid depends on them), tuned per bucket and size class as a dyn matmul is.
std::vector<AttentionPick> attention_candidates(const Target& t, AttentionConfig c) {
  std::vector<AttentionPick> out;
  for (int bn : {64, 128})
    for (int stages : {2, 3, 4}) {
      c.bn = bn, c.stages = stages;
      if (bn <= attention_bn(c.d, c.dv) && attention_smem(c) <= smem_limit(t)) out.push_back({bn, stages});
    }
  return out;
}

void plan_attention(Planner& p, PlannedKernel& kn) {
  const auto& node = p.node(kn.anchor);
  const auto& out = p.shape(kn.anchor);
  const DType et = p.node(node.operands[0]).dtype;
  const std::size_t r = out.size();
  AttentionConfig c;
  c.elem_bytes = static_cast<int>(dtype_size(et));
  c.s = out[r - 2];
  c.dv = static_cast<int>(out[r - 1]);
  c.d = static_cast<int>(p.shape(node.operands[0]).back());
  c.t = p.shape(node.operands[1]).back();
  c.batch = product(out, 0, r - 2);
  c.inner = r > 2 ? out[r - 3] : 1;
  c.causal = node.attention.causal;
  c.bm = 128;
  c.bn = attention_bn(c.d, c.dv);
  // The deepest ring that fits: a tile's k and v load while the two tiles before it are consumed.
  c.stages = 3;
  if (attention_smem(c) > smem_limit(p.target())) c.stages = 2;
  c.vec_out = p.target().aligned16;
  KILN_ASSERT(attention_head_dim(c.d) && attention_head_dim(c.dv) && r <= 4, "attention node the kernel does not take");
  // [Note: dyn attention]: the extents dyn dims size (fuse_attention took only these), "" where static.
  const ir::Shape& shape = node.shape;
  const std::string dyn_s = p.dyn_in(shape[r - 2]), dyn_t = p.dyn_in(p.node(node.operands[1]).shape.back());
  const std::string dyn_b = r > 2 ? p.dyn_in(shape[0]) : "", dyn_h = r > 3 ? p.dyn_in(shape[r - 3]) : "";
  const bool dyn = !dyn_s.empty() || !dyn_t.empty() || !dyn_b.empty() || !dyn_h.empty();
  std::string pick_note = "; config: heuristic";
  const AttentionPick chosen = p.offer_picks(
      kn.anchor,
      fmt::format("attention {} queries x {} keys, head dims {} and {}{}", dyn_s.empty() ? std::to_string(c.s) : dyn_s,
                  dyn_t.empty() ? std::to_string(c.t) : dyn_t, c.d, c.dv, c.causal ? ", causal" : ""),
      AttentionPick{c.bn, c.stages}, attention_candidates(p.target(), c), pick_note, "attention");
  c.bn = chosen.bn, c.stages = chosen.stages;
  const StridedView q = attention_operand(p, node.operands[0], false), kt = attention_operand(p, node.operands[1], true),
                    v = attention_operand(p, node.operands[2], false);
  kn.args.push_back(attention_map(p, node.operands[0], q, false, r, c.bm, "tmap_q", et, c.q_bcast, dyn));
  kn.args.push_back(attention_map(p, node.operands[1], kt, true, r, c.bn, "tmap_k", et, c.k_bcast, dyn));
  kn.args.push_back(attention_map(p, node.operands[2], v, false, r, c.bn, "tmap_v", et, c.v_bcast, dyn));
  // The unit counter ([Note: the attention unit order]): one int, zeroed before every launch.
  const int ws = p.add_workspace(fmt::format("units{}", kn.anchor), DType::i32, {1});
  kn.args.push_back(buffer_arg(p, ws, true));
  kn.zero_before.push_back(ws);
  kn.template_name = "flash_attention";
  kn.setmaxnreg = true;
  set_launch(kn, attention_geometry(c, static_cast<int>(p.target().sm_count)));
  const std::int64_t flops = 2 * c.batch * c.s * c.t * (c.d + c.dv) / (c.causal ? 2 : 1);
  // An extent as the reasons write it: a dyn dim by its name, a static one by its value.
  auto text = [&](const ir::DimExpr& e) {
    return e.code([&](const std::string& dim) {
      return p.bound().is_dynamic(dim) ? dim : std::to_string(p.bound().dims.at(dim));
    });
  };
  const std::string batches =
      dyn_b.empty() && dyn_h.empty() ? std::to_string(c.batch) : text(product_of(shape, 0, r - 2));
  const std::string schedule =
      dyn ? fmt::format("at most {} persistent CTAs taking the blocks from a counter", p.target().sm_count)
          : fmt::format("{} persistent CTAs taking {} blocks from a counter, {:.1f} GFLOP", kn.grid.x,
                        attention_row_blocks(c) * c.batch, static_cast<double>(flops) * 1e-9);
  kn.reason = fmt::format("attention {} queries x {} keys, head dims {} and {}, {} batches{}: sm_90a flash kernel, {} "
                          "query rows a CTA (two consumer warpgroups of 64 + a TMA producer warpgroup), key tiles of "
                          "{} through a {}-stage ring, scores and the online softmax in registers, P as the A operand "
                          "of the second wgmma from registers; {}",
                          dyn_s.empty() ? std::to_string(c.s) : text(shape[r - 2]),
                          dyn_t.empty() ? std::to_string(c.t) : text(p.node(node.operands[1]).shape.back()), c.d, c.dv,
                          batches, c.causal ? ", causal" : "", c.bm, c.bn, c.stages, schedule) + pick_note;
  if (dyn) {
    std::set<std::string> names{dyn_s, dyn_t, dyn_b, dyn_h};
    names.erase("");
    kn.reason = fmt::format("dyn {}; {}", fmt::join(names, ", "), kn.reason);
  }
  if (!dyn_s.empty()) c.s = 0;
  if (!dyn_t.empty()) c.t = 0;
  if (!dyn_b.empty() || !dyn_h.empty()) c.batch = 0;
  if ((!dyn_b.empty() && r == 3) || !dyn_h.empty()) c.inner = 0;   // (with one batch dim it is the inner one too)
  kn.config = c;
}
}  // namespace

const AnchorRule* contraction_rule(ir::OpKind kind) {
  static const AnchorRule kMatmul{"gemm", false, true, plan_matmul, takes_transposed_view, claims_softmax, true};
  static const AnchorRule kConv{"conv_igemm", false, true, plan_conv, nullptr, nullptr, /*dyn=*/true};
  if (kind == OpKind::Matmul) return &kMatmul;
  static const AnchorRule kAttention{"attention", false, true, plan_attention, takes_attention_view, nullptr,
                                     /*dyn=*/true};   // [Note: dyn attention]
  if (kind == OpKind::Conv) return &kConv;
  if (kind == OpKind::Attention) return &kAttention;
  return nullptr;
}

}  // namespace kiln

namespace kiln {

launch::Geometry gemm_launch(const Plan& plan, const PlannedKernel& kernel, std::int64_t extent) {
  GemmConfig c = std::get<GemmConfig>(kernel.config);
  for (long long* e : {&c.m, &c.n, &c.k, &c.batch})
    if (*e == 0) *e = extent;   // the dyn one ([Note: dyn matmul])
  return gemm_geometry(c, plan.target.sm_count, kernel.min_blocks);
}

// A conv's copy of x for the TMA engine with dyn spatial extents (gemm_prep.cuh's PrepRows): its
// rows, their stride and the images' stride at this launch (its DynValue arguments), the batch
// where dyn; the workspace it writes, sized by this geometry (Buffer::launch_kernel).
launch::Geometry conv_prep_launch(const Plan& plan, const PlannedKernel& kernel,
                                  const std::map<std::string, std::int64_t>& dims) {
  GemmConfig c = std::get<GemmConfig>(kernel.config);
  c.m = kernel.dyn_value("prep_rows", dims), c.lda = kernel.dyn_value("prep_ld", dims);
  c.stride_a = kernel.dyn_value("prep_stride", dims);
  if (c.batch == 0) c.batch = kernel.dyn_extent(dims);
  KILN_CHECK(c.batch <= launch::kMaxGridY, UnsupportedError, "{}: {} images at this launch; the TMA conv engine's copy "
             "of x takes at most {}", plan.ir().op_name, c.batch, launch::kMaxGridY);
  launch::Geometry g = gemm_geometry(c, plan.target.sm_count, kernel.min_blocks);
  g.workspace_bytes = c.batch * c.m * prep_ldw(c) * c.elem_bytes;
  return g;
}

launch::Geometry conv_launch(const Plan& plan, const PlannedKernel& kernel, const std::map<std::string, std::int64_t>& dims) {
  ConvConfig c = std::get<ConvConfig>(kernel.config);
  if (!kernel.dyn_outer.empty()) c.n = kernel.dyn_extent(dims);   // [Note: dyn conv]
  if (conv_dyn_spatial(c)) {   // [Note: dyn conv spatial extents]: the values its DynValue arguments take
    c.h = kernel.dyn_value("conv_h", dims), c.w = kernel.dyn_value("conv_w", dims);
    c.ho = kernel.dyn_value("conv_ho", dims), c.wo = kernel.dyn_value("conv_wo", dims);
    // WgConvNchw decodes a pixel within an image with 32-bit division (conv_sm90.cuh).
    KILN_CHECK(c.kind != ConvKind::Wgmma || c.ho * c.wo < kConvWgmmaMaxPixels, UnsupportedError,
               "{}: an image of y has {} x {} pixels at this launch; the sm_90a wgmma conv template takes fewer than "
               "{} per image", plan.ir().op_name, c.ho, c.wo, kConvWgmmaMaxPixels);
    // The TMA engine's maps: coordinates and strides at this launch's extents.
    if (c.kind == ConvKind::Tma) {
      const std::string why_not = conv_tma_launch_refusal(c);
      KILN_CHECK(why_not.empty(), UnsupportedError, "{}: x of {} x {} x {} x {} at this launch is past the sm_90a TMA "
                 "conv engine's tensor maps: {}", plan.ir().op_name, c.n, c.c, c.h, c.w, why_not);
    }
    // ConvNchw's im2col table holds 32-bit offsets within an image (conv_nchw_image_fits).
    KILN_CHECK(c.kind != ConvKind::Nchw || conv_nchw_image_fits(c), UnsupportedError,
               "{}: an image of x has {} x {} x {} elements at this launch; the conv template's im2col table "
               "indexes an image with 32-bit offsets (fewer than 2^31 elements)",
               plan.ir().op_name, c.c, c.h, c.w);
  }
  return conv_geometry(c, plan.target.sm_count);
}

AttentionExtentExprs attention_extent_exprs(const ir::Ir& ir, const PlannedKernel& kn) {
  const auto& node = ir.node(kn.anchor);
  const ir::Shape& out = node.shape;
  const std::size_t r = out.size();
  return {out[r - 2], ir.node(node.operands[1]).shape.back(), product_of(out, 0, r - 2),
          r > 2 ? out[r - 3] : ir::DimExpr::constant(1)};
}

AttentionExtents attention_extents(const ir::Ir& ir, const PlannedKernel& kn,
                                   const std::map<std::string, std::int64_t>& dims) {
  const AttentionExtentExprs e = attention_extent_exprs(ir, kn);
  return {e.s.evaluate(dims), e.t.evaluate(dims), e.batch.evaluate(dims), e.inner.evaluate(dims)};
}

launch::Geometry attention_launch(const Plan& plan, const PlannedKernel& kernel,
                                  const std::map<std::string, std::int64_t>& dims) {
  const AttentionConfig c = attention_at(std::get<AttentionConfig>(kernel.config), attention_extents(plan.ir(), kernel, dims));
  return attention_geometry(c, plan.target.sm_count);
}

std::int64_t smem_limit(const Target& t) {
  const int v = t.sm_version();
  if (v >= 90) return 232448;   // 227 KB
  if (v == 80) return 166912;   // 163 KB
  return 101376;                // 99 KB (sm_86, sm_89)
}

std::int64_t ctas_by_smem(const Target& t, std::int64_t bytes, std::int64_t want) {
  const int v = t.sm_version();
  const std::int64_t per_sm = v >= 90 ? 233472 : v == 80 ? 167936 : 102400;
  return std::clamp<std::int64_t>(per_sm / (bytes + 1024), 1, want);
}

}  // namespace kiln
