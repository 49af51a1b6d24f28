#include "generator/plan/plan.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <set>
#include <utility>

#include "generator/support/assert.h"
#include "generator/plan/planner.h"
#include "generator/support/source.h"

namespace kiln {

std::string bytes_text(std::int64_t bytes) {
  if (bytes >= (std::int64_t{1} << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30));
  if (bytes >= (1 << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= (1 << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

std::string index_declaration(bool index64) {
  return index64 ? fmt::format("using Index = long long;  // some tensor has {} elements or more", kIndex32Bound)
                 : fmt::format("using Index = int;  // every tensor has fewer than {} elements", kIndex32Bound);
}

namespace {

std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

template <class Int>
std::string shape_text(const std::vector<Int>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}


// A node kernels may inline: elementwise work, views, literals and scalar arguments.
bool inlinable(ir::OpKind kind) {
  return ir::is_elementwise(kind) || ir::is_view(kind) || kind == ir::OpKind::Literal ||
         kind == ir::OpKind::Scalar || kind == ir::OpKind::Iota || kind == ir::OpKind::DimValue;
}

bool is_anchor(ir::OpKind kind) { return !inlinable(kind) && kind != ir::OpKind::Input; }

// The nodes where a walk of the graph behind `operand` stops (`stored` says so), in operand order.
std::vector<ir::NodeId> stored_sources(const ir::BoundIr& bound, ir::NodeId operand,
                                       const std::function<bool(ir::NodeId)>& stored) {
  std::vector<ir::NodeId> stack{operand}, found;
  std::set<ir::NodeId> seen;
  while (!stack.empty()) {
    const ir::NodeId n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (stored(n)) {
      found.push_back(n);
      continue;
    }
    const auto& node = bound.node(n);
    for (auto it = node.operands.rbegin(); it != node.operands.rend(); ++it) stack.push_back(*it);
  }
  return found;
}

const char* kind_name(BufferKind kind) {
  switch (kind) {
    case BufferKind::Input: return "in ";
    case BufferKind::Output: return "out";
    case BufferKind::Intermediate: return "tmp";
    case BufferKind::Workspace: return "ws ";
  }
  return "?";
}

}  // namespace

// ---------------------------------------------------------------- Target

Target Target::for_arch(const std::string& arch) {
  static const std::map<std::string, int> kSmCounts = {
      {"sm_80", 108}, {"sm_86", 84}, {"sm_89", 128}, {"sm_90", 132}, {"sm_90a", 132}};
  auto it = kSmCounts.find(arch);
  KILN_CHECK(it != kSmCounts.end(), ArgumentError,
             "unknown target arch '{}' (expected one of sm_80, sm_86, sm_89, sm_90, sm_90a)", arch);
  Target t;
  t.arch = arch;
  t.sm_count = it->second;
  return t;
}

int Target::sm_version() const {
  int v = 0;
  for (char c : arch)
    if (c >= '0' && c <= '9') v = v * 10 + (c - '0');
  return v;
}

// ---------------------------------------------------------------- TensorMapSpec

TensorMapSpec TensorMapSpec::with_extent(int dim, std::int64_t extent) const {
  const auto d = static_cast<std::size_t>(dim);
  KILN_ASSERT(d < dims.size() && dims[d] > 0 && extent > 0, "map extent {} of dim {} in {}", extent, dim, text());
  TensorMapSpec at = *this;
  at.dims[d] = extent;
  for (std::size_t j = d; j < strides.size(); ++j) {   // strides[j]: dim j + 1, which spans dims 0..j
    KILN_ASSERT(strides[j] % dims[d] == 0, "stride {} of {} does not span dim {}", j, text(), dim);
    at.strides[j] = strides[j] / dims[d] * extent;
  }
  return at;
}

TensorMapSpec TensorMapSpec::with_extents(const std::vector<std::int64_t>& at_dims,
                                          const std::vector<std::int64_t>& at_strides, std::int64_t elem_bytes) const {
  KILN_ASSERT(at_dims.size() == dims.size() && at_strides.size() == strides.size(), "map extents {} and strides {} for {}",
              shape_text(at_dims), shape_text(at_strides), text());
  TensorMapSpec at = *this;
  at.dims = at_dims;
  for (std::size_t j = 0; j < strides.size(); ++j) at.strides[j] = at_strides[j] * elem_bytes;
  return at;
}

std::string TensorMapSpec::text() const {
  std::string s = fmt::format("dims {} strides {} box {} swizzle {}", shape_text(dims), shape_text(strides),
                              shape_text(box), swizzle);
  if (im2col)
    s += fmt::format(" im2col lower {} upper {} element strides {}", shape_text(lower), shape_text(upper),
                     shape_text(element_strides));
  return s;
}

// ---------------------------------------------------------------- Plan
//
// [Note: zeroed workspaces]
// Some templates need scratch that starts at zero on every launch: the decoupled look-back
// scan's tile counter and per-tile flags (templates/kiln/scan.cuh). A kernel lists such
// workspaces in PlannedKernel::zero_before, and the runtime clears each with
// cuMemsetD32Async on the caller's stream just before that kernel's launch. So the zeroing
// is ordered with the launch (a later launch on the same stream cannot see stale flags),
// happens inside the same stream-ordered scratch allocation, and is captured into a CUDA
// graph like the launches are (a memset node). A memset needs no compiled kernel, so the
// plan's kernel list and the emitted units stay one-to-one.

void PlannedKernel::set_launch(const launch::Geometry& g) {
  auto narrow = [&](long long v, const char* what) {
    KILN_ASSERT(v >= 0 && v <= 0xFFFFFFFFLL, "{}: launch {} {} does not fit 32 bits", entry, what, v);
    return static_cast<unsigned>(v);
  };
  grid = {narrow(g.grid.x, "grid.x"), narrow(g.grid.y, "grid.y"), narrow(g.grid.z, "grid.z")};
  block = {narrow(g.block.x, "block.x"), narrow(g.block.y, "block.y"), narrow(g.block.z, "block.z")};
  shared_bytes = narrow(g.shared_bytes, "shared_bytes");
}

std::int64_t PlannedKernel::dyn_extent(const std::map<std::string, std::int64_t>& dims) const {
  std::int64_t extent = 1;
  for (const auto& e : dyn_outer) extent *= e.evaluate(dims);
  return extent;
}

void PlannedKernel::add_dyn_value(const std::string& name, const ir::DimExpr& value) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::DynValue;
  arg.dtype = DType::i64;
  arg.name = name;
  arg.value = value;
  args.push_back(std::move(arg));
}

bool PlannedKernel::has_dyn_value(const std::string& name) const {
  return std::any_of(args.begin(), args.end(),
                     [&](const KernelArg& a) { return a.kind == KernelArg::Kind::DynValue && a.name == name; });
}

std::int64_t PlannedKernel::dyn_value(const std::string& name, const std::map<std::string, std::int64_t>& dims) const {
  const auto a = std::find_if(args.begin(), args.end(), [&](const KernelArg& arg) {
    return arg.kind == KernelArg::Kind::DynValue && arg.name == name;
  });
  KILN_ASSERT(a != args.end(), "{}: no DynValue argument {}", entry, name);
  return a->value.evaluate(dims);
}

bool PlannedKernel::reads_dyn_dims() const {
  return std::any_of(args.begin(), args.end(), [](const KernelArg& a) { return a.kind == KernelArg::Kind::DynDim; });
}

std::string config_text(const KernelConfig& config) {
  return std::visit(
      [](const auto& c) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(c)>, std::monostate>) return "(no config)";
        else return c.to_string();
      },
      config);
}

namespace {
// A pick read from its text by `format`: a scanf format of the pick's `fields` in order, ending in
// "%c" (so that a trailing word is caught). The text must be exactly what the pick prints (no
// leading zeros, no trailing words).
template <class P, class... Fields>
std::optional<P> parse_fields(std::string_view text, const char* format, Fields P::*... fields) {
  P p;
  char tail = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), format, &(p.*fields)..., &tail) != static_cast<int>(sizeof...(fields)) || p.text() != s)
    return std::nullopt;
  return p;
}
}  // namespace

std::string TmaPick::text() const {
  return fmt::format("{}x{}x{} c{} st{} k{} cl{} g{}", bm, bn, bk, consumers_n, stages, split_k, cluster_m, group_m);
}

std::optional<TmaPick> TmaPick::parse(std::string_view text) {
  return parse_fields(text, "%dx%dx%d c%d st%d k%d cl%d g%d%c", &TmaPick::bm, &TmaPick::bn, &TmaPick::bk,
                      &TmaPick::consumers_n, &TmaPick::stages, &TmaPick::split_k, &TmaPick::cluster_m,
                      &TmaPick::group_m);
}

std::string RownormPick::text() const { return fmt::format("rows t{} g{} i{}", threads, group, items); }

std::optional<RownormPick> RownormPick::parse(std::string_view text) {
  return parse_fields(text, "rows t%d g%d i%lld%c", &RownormPick::threads, &RownormPick::group, &RownormPick::items);
}

std::string ElementwisePick::text() const {
  return fmt::format("ew t{}{}", threads, persistent ? " persistent" : "");
}

std::optional<ElementwisePick> ElementwisePick::parse(std::string_view text) {
  ElementwisePick e;
  char tail[16] = {};
  const std::string s(text);
  const int n = std::sscanf(s.c_str(), "ew t%d %15s", &e.threads, tail);
  if (n < 1) return std::nullopt;
  e.persistent = n == 2 && std::string_view(tail) == "persistent";
  if (e.text() != s) return std::nullopt;
  return e;
}

namespace {
constexpr std::pair<ReducePick::Kind, std::string_view> kReduceKinds[] = {
    {ReducePick::Kind::warp, "warp"}, {ReducePick::Kind::block, "block"}, {ReducePick::Kind::outer, "outer"},
    {ReducePick::Kind::v4, "v4"}, {ReducePick::Kind::rows, "rows"}};
}  // namespace

std::string ReducePick::text() const {
  std::string_view name;
  for (const auto& [k, n] : kReduceKinds)
    if (k == kind) name = n;
  if (kind == Kind::v4) return fmt::format("reduce {} t{} u{} w{}", name, threads, unroll, waves);
  return fmt::format("reduce {} t{} u{}", name, threads, unroll);
}

std::optional<ReducePick> ReducePick::parse(std::string_view text) {
  ReducePick r;
  char variant[8] = {};
  char tail = 0;
  const std::string s(text);
  const int fields = std::sscanf(s.c_str(), "reduce %7s t%d u%d w%d%c", variant, &r.threads, &r.unroll, &r.waves, &tail);
  if (fields != 3 && fields != 4) return std::nullopt;
  const auto* found = std::find_if(std::begin(kReduceKinds), std::end(kReduceKinds),
                                   [&](const auto& k) { return k.second == variant; });
  if (found == std::end(kReduceKinds)) return std::nullopt;
  r.kind = found->first;
  if (r.text() != s) return std::nullopt;
  return r;
}

std::string ScanPick::text() const { return fmt::format("scan rows t{} v{}", threads, vecs); }

std::optional<ScanPick> ScanPick::parse(std::string_view text) {
  return parse_fields(text, "scan rows t%d v%d%c", &ScanPick::threads, &ScanPick::vecs);
}

std::string SplitNormPick::text() const { return fmt::format("split norm t{} w{}", threads, waves); }

std::optional<SplitNormPick> SplitNormPick::parse(std::string_view text) {
  return parse_fields(text, "split norm t%d w%d%c", &SplitNormPick::threads, &SplitNormPick::waves);
}

std::string StridedScanPick::text() const { return fmt::format("scan strided t{} u{}", threads, unroll); }

std::optional<StridedScanPick> StridedScanPick::parse(std::string_view text) {
  return parse_fields(text, "scan strided t%d u%d%c", &StridedScanPick::threads, &StridedScanPick::unroll);
}

std::string LookbackScanPick::text() const {
  return fmt::format("scan lookback t{} v{} s{} b{}", threads, vecs, stages, blocks);
}

std::optional<LookbackScanPick> LookbackScanPick::parse(std::string_view text) {
  return parse_fields(text, "scan lookback t%d v%d s%d b%d%c", &LookbackScanPick::threads, &LookbackScanPick::vecs,
                      &LookbackScanPick::stages, &LookbackScanPick::blocks);
}

std::string PoolPick::text() const { return fmt::format("pool t{} w{} v{} h{}", threads, run, vec, rows); }

std::optional<PoolPick> PoolPick::parse(std::string_view text) {
  return parse_fields(text, "pool t%d w%d v%d h%d%c", &PoolPick::threads, &PoolPick::run, &PoolPick::vec,
                      &PoolPick::rows);
}

namespace {
constexpr std::pair<ConvKind, std::string_view> kConvKinds[] = {
    {ConvKind::Nchw, "nchw"}, {ConvKind::Wgmma, "wgmma"}, {ConvKind::Tma, "tma"}, {ConvKind::Depthwise, "depthwise"}};
}  // namespace

std::string ConvPick::text() const {
  std::string_view name;
  for (const auto& [k, n] : kConvKinds)
    if (k == kind) name = n;
  if (kind == ConvKind::Depthwise) return fmt::format("conv {} t{}", name, threads);
  return fmt::format("conv {} {}x{} st{}", name, bm, bn, stages);
}

std::optional<ConvPick> ConvPick::parse(std::string_view text) {
  ConvPick c;
  char route[12] = {};
  char tail = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), "conv depthwise t%d%c", &c.threads, &tail) == 1) {
    c.kind = ConvKind::Depthwise;
  } else if (std::sscanf(s.c_str(), "conv %11s %dx%d st%d%c", route, &c.bm, &c.bn, &c.stages, &tail) == 4) {
    const auto* found = std::find_if(std::begin(kConvKinds), std::end(kConvKinds),
                                     [&](const auto& k) { return k.second == route; });
    if (found == std::end(kConvKinds) || found->first == ConvKind::Depthwise) return std::nullopt;
    c.kind = found->first;
  } else {
    return std::nullopt;
  }
  if (c.text() != s) return std::nullopt;
  return c;
}

std::string AttentionPick::text() const { return fmt::format("attention n{} st{}", bn, stages); }

std::optional<AttentionPick> AttentionPick::parse(std::string_view text) {
  return parse_fields(text, "attention n%d st%d%c", &AttentionPick::bn, &AttentionPick::stages);
}

std::string GemvPick::text() const { return fmt::format("gemv {}r{} k{}", mma ? "mma " : "", rows, splits); }

std::optional<GemvPick> GemvPick::parse(std::string_view text) {
  GemvPick p;
  char tail = 0;
  const std::string s(text);
  p.mma = s.rfind("gemv mma ", 0) == 0;
  const char* format = p.mma ? "gemv mma r%d k%d%c" : "gemv r%d k%d%c";
  if (std::sscanf(s.c_str(), format, &p.rows, &p.splits, &tail) != 2 || p.text() != s) return std::nullopt;
  return p;
}

std::string MmaPick::text() const { return fmt::format("mma {}x{} st{} k{}", bm, bn, stages, split_k); }

std::optional<MmaPick> MmaPick::parse(std::string_view text) {
  return parse_fields(text, "mma %dx%d st%d k%d%c", &MmaPick::bm, &MmaPick::bn, &MmaPick::stages, &MmaPick::split_k);
}

std::string SmallKPick::text() const {
  return wgmma ? fmt::format("small k wgmma {}x{} b{}", bm, bn, depth) : fmt::format("small k {}x{} c{}", bm, bn, depth);
}

std::optional<SmallKPick> SmallKPick::parse(std::string_view text) {
  SmallKPick p;
  char tail = 0;
  const std::string s(text);
  p.wgmma = s.rfind("small k wgmma ", 0) == 0;
  const char* format = p.wgmma ? "small k wgmma %dx%d b%d%c" : "small k %dx%d c%d%c";
  if (std::sscanf(s.c_str(), format, &p.bm, &p.bn, &p.depth, &tail) != 3 || p.text() != s) return std::nullopt;
  return p;
}

std::string WgPick::text() const { return fmt::format("wgmma {}x{} st{} k{}", bm, bn, stages, split_k); }

std::optional<WgPick> WgPick::parse(std::string_view text) {
  return parse_fields(text, "wgmma %dx%d st%d k%d%c", &WgPick::bm, &WgPick::bn, &WgPick::stages, &WgPick::split_k);
}

std::string pick_text(const Pick& pick) {
  return std::visit([](const auto& p) { return p.text(); }, pick);
}

std::optional<Pick> parse_pick(std::string_view text) {
  if (auto t = TmaPick::parse(text)) return Pick{*t};
  if (auto r = RownormPick::parse(text)) return Pick{*r};
  if (auto n = SplitNormPick::parse(text)) return Pick{*n};
  if (auto e = ElementwisePick::parse(text)) return Pick{*e};
  if (auto r = ReducePick::parse(text)) return Pick{*r};
  if (auto c = ScanPick::parse(text)) return Pick{*c};
  if (auto c = StridedScanPick::parse(text)) return Pick{*c};
  if (auto c = PoolPick::parse(text)) return Pick{*c};
  if (auto c = LookbackScanPick::parse(text)) return Pick{*c};
  if (auto c = ConvPick::parse(text)) return Pick{*c};
  if (auto c = AttentionPick::parse(text)) return Pick{*c};
  if (auto c = GemvPick::parse(text)) return Pick{*c};
  if (auto c = MmaPick::parse(text)) return Pick{*c};
  if (auto c = SmallKPick::parse(text)) return Pick{*c};
  if (auto c = WgPick::parse(text)) return Pick{*c};
  return std::nullopt;
}

ir::NodeId Plan::streamed_leaf(ir::NodeId operand) const {
  const auto found = stored_sources(*bound, operand, [&](ir::NodeId n) { return leaves.count(n) != 0; });
  for (ir::NodeId l : found)
    if (bound->shape(l) == bound->shape(operand)) return l;
  for (ir::NodeId l : found)
    if (bound->numel(l) == bound->numel(operand)) return l;
  return -1;
}

std::int64_t Plan::buffer_bytes(std::size_t b, const std::map<std::string, std::int64_t>& dims) const {
  const Buffer& buf = buffers.at(b);
  if (!buf.dyn_dim.empty()) return buf.bytes / buf.shape.at(0) * dims.at(buf.dyn_dim);   // a workspace by the launch
  if (buf.launch_kernel >= 0)   // sized by its kernel's geometry at this launch
    return launch_for(*this, static_cast<std::size_t>(buf.launch_kernel), dims).workspace_bytes;
  if (buf.kind != BufferKind::Intermediate || buf.node < 0 || dyn_buckets.empty()) return buf.bytes;
  std::int64_t n = 1;
  for (const auto& e : ir().node(buf.node).shape) n *= e.evaluate(dims);
  return n * static_cast<std::int64_t>(dtype_size(buf.dtype));
}

std::string Plan::text() const {
  std::string out = fmt::format("plan {} [", ir().op_name);
  bool first = true;
  for (const auto& [name, value] : bound->dims) {
    auto bucket = dyn_buckets.find(name);
    auto classes = dyn_thresholds.find(name);
    std::string dyn;
    auto align = dyn_row_align.find(name);
    if (bucket != dyn_buckets.end())
      dyn = fmt::format(" (dyn, {}{}{})", dyn_bucket_text(bucket->second),
                        align == dyn_row_align.end()
                            ? ""
                            : fmt::format(", {}", dyn_row_class_text(align->second)),
                        classes == dyn_thresholds.end()
                            ? ""
                            : ", class " + dyn_class_text(classes->second, dyn_class(classes->second, value)));
    out += fmt::format("{}{}={}{}", first ? "" : " ", name, value, dyn);
    first = false;
  }
  for (const auto& [key, t] : dyn_thresholds)   // [Note: size classes of a product]
    if (key.find('*') != std::string::npos)
      out += fmt::format(" {} (class {})", key, dyn_class_text(t, dyn_class(t, dyn_class_value(key, bound->dims))));
  out += fmt::format("] for {} ({} SMs), f32 contractions {}{}\n", target.arch, target.sm_count,
                     precision_name(target.precision), target.aligned16 ? "" : ", unaligned pointers");
  out += "buffers:\n";
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const auto& b = buffers[i];
    out += fmt::format("  #{} {} {} {}{} ({})\n", i, kind_name(b.kind), b.name, dtype_name(b.dtype),
                       shape_text(b.shape), bytes_text(b.bytes));
  }
  if (!fusions.empty()) out += "fusions:\n";
  for (const auto& f : fusions) out += "  " + f + "\n";
  out += "kernels:\n";
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const auto& kn = kernels[k];
    out += fmt::format("  {} {}: {}  grid ({}, {}, {}) block ({}, {}, {}){} smem {} index {}{}\n", k, kn.entry,
                       kn.template_name, kn.grid.x, kn.grid.y, kn.grid.z, kn.block.x, kn.block.y, kn.block.z,
                       kn.cluster > 1 ? fmt::format(" cluster ({}, 1, 1)", kn.cluster) : "", kn.shared_bytes,
                       kn.index64 ? "int64" : "int32",
                       kn.min_blocks > 1 ? fmt::format(" min_blocks {}", kn.min_blocks) : "");
    if (kn.anchor >= 0) {
      const auto& a = ir().node(kn.anchor);
      out += fmt::format("      anchor %{} {} (line {})\n", kn.anchor, ir::node_kind_name(a), a.loc.line);
    }
    for (const auto& s : kn.stores)
      out += fmt::format("      stores %{} -> #{} {}\n", s.node, s.buffer, buffers[static_cast<std::size_t>(s.buffer)].name);
    std::string reads, map_writes;
    for (const auto& arg : kn.args) {
      const std::string_view sep = reads.empty() ? "" : ", ";
      if (arg.kind == KernelArg::Kind::Buffer && !arg.writes)
        reads += fmt::format("{}#{} {}", sep, arg.buffer, buffers[static_cast<std::size_t>(arg.buffer)].name);
      if (arg.kind == KernelArg::Kind::Scalar) reads += fmt::format("{}scalar {}", sep, arg.name);
      if (arg.kind != KernelArg::Kind::TensorMap) continue;
      // A map the kernel stores through (TMA store) is listed apart from those it loads through.
      std::string& list = arg.writes ? map_writes : reads;
      const TensorMapSpec& m = arg.tensor_map;
      // A map whose dims a launch sets (KernelArg::map_dims_at): the dims as expressions.
      std::vector<std::string> at;
      for (const auto& e : arg.map_dims_at) at.push_back(e.str());
      list += fmt::format("{}tensor map #{} {} ({}, swizzle {}{})", list.empty() ? "" : ", ", arg.buffer,
                          buffers[static_cast<std::size_t>(arg.buffer)].name,
                          m.im2col ? fmt::format("im2col: {} channels x {} pixels, pixel box {} .. {}, strides {}",
                                                 m.box[0], m.box[1], shape_text(m.lower), shape_text(m.upper),
                                                 shape_text(m.element_strides))
                                   : fmt::format("box {}", fmt::join(m.box, "x")),
                          m.swizzle, at.empty() ? "" : fmt::format(", dims [{}] at each launch", fmt::join(at, ", ")));
    }
    if (!reads.empty()) out += "      reads " + reads + "\n";
    if (!map_writes.empty()) out += "      writes " + map_writes + "\n";
    for (int b : kn.zero_before)
      out += fmt::format("      zeroes #{} {} ({}) on the stream before the launch (cuMemsetD32Async)\n", b,
                         buffers[static_cast<std::size_t>(b)].name, bytes_text(buffers[static_cast<std::size_t>(b)].bytes));
    out += "      config " + config_text(kn.config) + "\n";
    if (!kn.reason.empty()) out += "      why: " + kn.reason + "\n";
  }
  return out;
}

// ---------------------------------------------------------------- Planner

Planner::Planner(std::shared_ptr<const ir::BoundIr> bound, const Target& target) {
  plan_.bound = std::move(bound);
  plan_.target = target;
}

void Planner::find_consumers() {
  const auto& nodes = plan_.ir().nodes;
  consumers_.assign(nodes.size(), {});
  for (std::size_t id = 0; id < nodes.size(); ++id)
    for (ir::NodeId op : nodes[id].operands) {
      auto& list = consumers_[static_cast<std::size_t>(op)];
      if (std::find(list.begin(), list.end(), static_cast<ir::NodeId>(id)) == list.end())
        list.push_back(static_cast<ir::NodeId>(id));
    }
  is_output_.assign(nodes.size(), false);
  for (const auto& o : plan_.ir().outputs) is_output_[static_cast<std::size_t>(o.node)] = true;
}

int Planner::leaf_buffer(ir::NodeId id) const {
  auto it = plan_.leaves.find(id);
  return it == plan_.leaves.end() ? -1 : it->second;
}

int Planner::add_workspace(const std::string& name, DType dtype, std::vector<std::int64_t> shape,
                           const std::string& dyn_dim) {
  Buffer b;
  b.kind = BufferKind::Workspace;
  b.name = name;
  b.dtype = dtype;
  b.dyn_dim = dyn_dim;
  b.bytes = product(shape) * static_cast<std::int64_t>(dtype_size(dtype));
  b.shape = std::move(shape);
  plan_.buffers.push_back(std::move(b));
  return static_cast<int>(plan_.buffers.size()) - 1;
}

PlannedKernel& Planner::add_followup(PlannedKernel kernel) {
  followups_.push_back(std::move(kernel));
  return followups_.back();
}

// [Note: no walk recurses]
// The op graph is as deep as the spec's chain of lets (100,000 is a legal spec) and may be a
// wide DAG (`let t = u + u` a hundred times), so every walk of it here uses an explicit stack
// and a seen-set or a memo, never the call stack or a path enumeration; and no step of
// planning one node walks the whole graph again (that would be quadratic in the lets).

bool Planner::is_leaf(ir::NodeId id) const {
  return plan_.leaves.count(id) || plan_.ir().node(id).kind == ir::OpKind::Scalar;
}

// Leaves (nodes loaded from a buffer) reachable from `node` through inlined nodes, in
// depth-first preorder.
void Planner::collect_leaves(ir::NodeId node, std::vector<ir::NodeId>& out,
                             std::unordered_set<ir::NodeId>& seen) const {
  std::vector<ir::NodeId> stack{node};
  while (!stack.empty()) {
    const ir::NodeId id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    if (is_leaf(id)) {
      out.push_back(id);
      continue;
    }
    const auto& n = plan_.ir().node(id);
    KILN_ASSERT(inlinable(n.kind), "node %{} ({}) is read but neither stored nor inlinable", id,
                ir::op_kind_name(n.kind));
    stack.insert(stack.end(), n.operands.rbegin(), n.operands.rend());
  }
}

// The last kernel that stores a leaf `node` reads through inlined nodes (-1: none). A node
// about to be stored is computed from its operands even when it is a leaf already (an
// operand stored for an anchor): then its operands decide, not its own (unset) producer. Inlined nodes are memoized: when node i
// is planned, every node before it has its final leaf status and producer.
int Planner::dependency_position(ir::NodeId node) {
  const auto& ir = plan_.ir();
  constexpr int kUnknown = -2;
  if (dependency_.size() != ir.nodes.size()) dependency_.assign(ir.nodes.size(), kUnknown);
  auto known = [&](ir::NodeId id) {
    return is_leaf(id) ? producer_[static_cast<std::size_t>(id)] : dependency_[static_cast<std::size_t>(id)];
  };
  const auto& n = ir.node(node);
  // An input or scalar has no producer; a leaf stored already (a second output of an operand
  // stored for an anchor) goes after its own store.
  if (n.kind == ir::OpKind::Input || n.kind == ir::OpKind::Scalar || producer_[static_cast<std::size_t>(node)] >= 0)
    return producer_[static_cast<std::size_t>(node)];
  // Post-order over the inlined nodes not yet memoized: a node is pushed, then its operands
  // above it; it is resolved when it comes back to the top with every operand known.
  std::vector<std::pair<ir::NodeId, bool>> stack;
  for (ir::NodeId op : n.operands) stack.emplace_back(op, false);
  while (!stack.empty()) {
    const auto [id, expanded] = stack.back();
    stack.pop_back();
    if (known(id) != kUnknown) continue;
    const auto& o = ir.node(id);
    KILN_ASSERT(inlinable(o.kind), "node %{} ({}) is read but neither stored nor inlinable", id,
                ir::op_kind_name(o.kind));
    if (!expanded) {
      stack.emplace_back(id, true);
      for (ir::NodeId op : o.operands)
        if (known(op) == kUnknown) stack.emplace_back(op, false);
      continue;
    }
    int pos = -1;
    for (ir::NodeId op : o.operands) pos = std::max(pos, known(op));
    dependency_[static_cast<std::size_t>(id)] = pos;
  }
  int pos = -1;
  for (ir::NodeId op : n.operands) pos = std::max(pos, known(op));
  return pos;
}

// Whether the inlined graph behind `operand` reaches a node that will be stored (an input or an
// anchor) with the operand's element count: what Plan::streamed_leaf will find to stream.
bool Planner::has_stream_source(ir::NodeId operand) const {
  const auto& bound = *plan_.bound;
  const auto found = stored_sources(bound, operand, [&](ir::NodeId n) { return !inlinable(bound.node(n).kind); });
  return std::any_of(found.begin(), found.end(), [&](ir::NodeId n) { return bound.numel(n) == bound.numel(operand); });
}

// [Note: reshapes alias]
// A reshape keeps every element at its row-major offset, and a template reads its operands and
// writes its outputs as packed row-major buffers. torch.matmul of a vector is a product of rank-2
// views ([K] as [K, 1], the [M, 1] result as [M]: the checker's reshapes), einsum flattens its
// operands into matrices and splits the product back, and unsqueeze/squeeze/flatten/view around
// an anchor are common. So a reshape that an anchor cannot inline is not stored by an elementwise
// kernel when its operand already is a buffer (an input, a stored anchor): the anchor reads that
// buffer in place. And an output that is a reshape of an anchor's last node, which nothing else
// reads, is stored by the anchor directly.

void Planner::choose_leaves() {
  const auto& ir = plan_.ir();
  const std::size_t n = ir.nodes.size();
  epilogue_end_.resize(n);
  forced_leaf_.assign(n, false);
  producer_.assign(n, -1);
  for (std::size_t id = 0; id < n; ++id) epilogue_end_[id] = static_cast<ir::NodeId>(id);
  // The latest anchor each node reads through inlined nodes (itself, for an anchor; -1: none),
  // in one pass: operands precede users.
  std::vector<ir::NodeId> latest_anchor(n, -1);
  for (std::size_t id = 0; id < n; ++id) {
    const auto& node = ir.nodes[id];
    if (is_anchor(node.kind)) latest_anchor[id] = static_cast<ir::NodeId>(id);
    else if (inlinable(node.kind))
      for (ir::NodeId op : node.operands)
        latest_anchor[id] = std::max(latest_anchor[id], latest_anchor[static_cast<std::size_t>(op)]);
  }

  for (std::size_t id = 0; id < n; ++id) {
    const auto& node = ir.nodes[id];
    if (!is_anchor(node.kind)) continue;
    const AnchorRule* rule = anchor_rule(node.kind);
    if (!rule) continue;   // reported when the anchor is planned
    // Operands a template cannot inline are stored first by an elementwise kernel: every one
    // for a template without a prologue, and for one with a prologue an operand that reads no
    // stored tensor of its own size (a pad, a concat, a gather's result: nothing to stream).
    // A Normalize's eps (operand 1) is one element its Scale functor computes: never stored.
    const std::size_t streamed = node.kind == ir::OpKind::Normalize ? 1 : node.operands.size();
    for (std::size_t k = 0; k < streamed; ++k) {
      const ir::NodeId op = node.operands[k];
      const auto& o = ir.node(op);
      if (!inlinable(o.kind) || o.kind == ir::OpKind::Scalar) continue;
      const bool store = rule->prologue ? !has_stream_source(op)
                                        : !(rule->takes_view && rule->takes_view(*this, static_cast<ir::NodeId>(id), op));
      if (store) forced_leaf_[static_cast<std::size_t>(op)] = true;
    }
    if (!rule->epilogue) continue;
    // Follow the chain of single-consumer elementwise nodes of the same shape (and reshapes, where
    // the rule stores by flat index).
    ir::NodeId cur = static_cast<ir::NodeId>(id);
    while (!is_output_[static_cast<std::size_t>(cur)] && consumers_[static_cast<std::size_t>(cur)].size() == 1) {
      ir::NodeId next = consumers_[static_cast<std::size_t>(cur)][0];
      const auto& c = ir.node(next);
      const bool reshape = rule->epilogue_reshape && c.kind == ir::OpKind::Reshape;
      if (!reshape && (!ir::is_elementwise(c.kind) || plan_.bound->shape(next) != plan_.bound->shape(cur))) break;
      // Side operands must only read anchors planned before this one.
      bool ok = true;
      for (ir::NodeId side : c.operands)
        if (side != cur && latest_anchor[static_cast<std::size_t>(side)] >= static_cast<ir::NodeId>(id)) ok = false;
      if (!ok) break;
      cur = next;
    }
    // A following anchor the rule plans itself (the statistics epilogue of a softmax).
    if (rule->claims && !is_output_[static_cast<std::size_t>(cur)] && consumers_[static_cast<std::size_t>(cur)].size() == 1) {
      const ir::NodeId next = consumers_[static_cast<std::size_t>(cur)][0];
      if (is_anchor(ir.node(next).kind) && rule->claims(*this, static_cast<ir::NodeId>(id), next)) cur = next;
    }
    epilogue_end_[id] = cur;
  }
}

int Planner::add_elementwise_root(ir::NodeId node, int buffer) {
  const int dep = dependency_position(node);
  const auto& shape = plan_.bound->shape(node);
  // The latest elementwise kernel of this shape, when it runs after what the node reads.
  auto last = last_elementwise_.find(shape);
  // With dyn dims, equal extents now need not be equal at the next call: the shapes must match.
  if (last != last_elementwise_.end() && last->second > dep &&
      (plan_.dyn_buckets.empty() ||
       plan_.ir().node(plan_.kernels[static_cast<std::size_t>(last->second)].stores[0].node).shape ==
           plan_.ir().node(node).shape)) {
    plan_.kernels[static_cast<std::size_t>(last->second)].stores.push_back({node, buffer});
    return last->second;
  }
  PlannedKernel kn;
  kn.template_name = "elementwise";
  kn.stores.push_back({node, buffer});
  plan_.kernels.push_back(std::move(kn));
  const int position = static_cast<int>(plan_.kernels.size()) - 1;
  last_elementwise_[shape] = position;
  return position;
}

void Planner::finish_args(PlannedKernel& kernel) const {
  const auto& ir = plan_.ir();
  std::vector<ir::NodeId> roots;
  std::vector<ir::NodeId> leaves;
  std::unordered_set<ir::NodeId> seen;
  if (kernel.anchor >= 0) {
    const auto& a = ir.node(kernel.anchor);
    for (ir::NodeId op : a.operands) roots.push_back(op);
    // Side operands of the fused epilogue chain.
    ir::NodeId end = kernel.stores.empty() ? kernel.anchor : kernel.stores[0].node;
    ir::NodeId cur = kernel.anchor;
    while (cur != end) {
      ir::NodeId next = consumers_[static_cast<std::size_t>(cur)][0];
      for (ir::NodeId side : ir.node(next).operands)
        if (side != cur) roots.push_back(side);
      cur = next;
    }
    seen.insert(kernel.anchor);
  } else {
    // A stored node is computed from its operands, even when it is also a leaf (an
    // operand stored for an anchor); only a copied input or a scalar is read itself.
    for (const auto& s : kernel.stores) {
      const auto kind = ir.node(s.node).kind;
      if (kind == ir::OpKind::Input || kind == ir::OpKind::Scalar || !plan_.leaves.count(s.node)) {
        roots.push_back(s.node);
      } else {
        seen.insert(s.node);
        for (ir::NodeId op : ir.node(s.node).operands) roots.push_back(op);
      }
    }
  }
  for (ir::NodeId r : roots) collect_leaves(r, leaves, seen);

  std::set<int> read_buffers;
  for (const auto& a : kernel.args)   // workspaces the rule already added (a second pass reads them)
    if (a.kind == KernelArg::Kind::Buffer && !a.writes) read_buffers.insert(a.buffer);
  std::set<int> scalar_params;
  for (ir::NodeId leaf : leaves) {
    if (ir.node(leaf).kind == ir::OpKind::Scalar) {
      scalar_params.insert(param_of_node_[static_cast<std::size_t>(leaf)]);
    } else {
      read_buffers.insert(plan_.leaves.at(leaf));
    }
  }
  refuse_dyn_compound_extents(kernel, read_buffers);
  std::vector<KernelArg> args;
  std::vector<int> written;
  for (const auto& s : kernel.stores) written.push_back(s.buffer);
  for (const auto& a : kernel.args) {   // workspaces the rule already added
    if (a.kind != KernelArg::Kind::Buffer) continue;
    if (!a.writes) read_buffers.insert(a.buffer);
    else if (std::find(written.begin(), written.end(), a.buffer) == written.end()) written.push_back(a.buffer);
  }
  auto add_buffer = [&](int b, bool writes) {
    KernelArg arg;
    arg.kind = KernelArg::Kind::Buffer;
    arg.buffer = b;
    arg.dtype = plan_.buffers[static_cast<std::size_t>(b)].dtype;
    arg.writes = writes;
    arg.name = plan_.buffers[static_cast<std::size_t>(b)].name;
    args.push_back(arg);
  };
  for (int b : read_buffers)
    if (std::find(written.begin(), written.end(), b) == written.end()) add_buffer(b, false);
  std::set<int> written_once;
  for (int b : written)
    if (written_once.insert(b).second) add_buffer(b, true);
  for (int p : scalar_params) {
    KernelArg arg;
    arg.kind = KernelArg::Kind::Scalar;
    arg.param = p;
    arg.dtype = ir.params[static_cast<std::size_t>(p)].dtype;
    arg.name = ir.params[static_cast<std::size_t>(p)].name;
    args.push_back(arg);
  }
  // A dyn dim is an argument of the kernels whose tensors it sizes (elementwise kernels, and the
  // anchors whose rule takes dyn dims: AnchorRule::dyn; run() refuses the others).
  auto anchor_sized_by = [&](const std::string& dim) {
    const auto& a = ir.node(kernel.anchor);
    if (mentions_dim(a.shape, dim)) return true;
    for (ir::NodeId op : a.operands)
      if (mentions_dim(ir.node(op).shape, dim)) return true;
    return false;
  };
  auto sized_by = [&](const std::string& dim) {
    for (const auto& s : kernel.stores)
      if (mentions_dim(ir.node(s.node).shape, dim)) return true;
    for (int b : read_buffers) {
      const ir::NodeId n = plan_.buffers[static_cast<std::size_t>(b)].node;
      if (n >= 0 && mentions_dim(ir.node(n).shape, dim)) return true;
    }
    return false;
  };
  for (const auto& d : ir.dims)
    if (d.dynamic && (sized_by(d.name) || (kernel.anchor >= 0 && anchor_sized_by(d.name)))) {
      KernelArg arg;
      arg.kind = KernelArg::Kind::DynDim;
      arg.dim = d.name;
      arg.dtype = DType::i64;
      arg.name = "dim_" + d.name;
      args.push_back(arg);
    }
  for (const auto& a : kernel.args)   // a launch's split count or extents the rule added, after the dyn dims
    if (a.kind == KernelArg::Kind::LaunchSplits || a.kind == KernelArg::Kind::DynValue) args.push_back(a);
  for (const auto& a : kernel.args)   // tensor maps the rule added (over buffers listed above), last
    if (a.kind == KernelArg::Kind::TensorMap) args.push_back(a);
  kernel.args = std::move(args);

  bool big = false;
  for (const auto& a : kernel.args)
    if (a.kind == KernelArg::Kind::Buffer && product(plan_.buffers[static_cast<std::size_t>(a.buffer)].shape) > kIndex32Limit)
      big = true;
  if (kernel.anchor >= 0)
    for (ir::NodeId op : ir.node(kernel.anchor).operands)
      if (product(plan_.bound->shape(op)) > kIndex32Limit) big = true;
  kernel.index64 = big;
}

namespace {

// Elementwise kernels: 16-byte vectors where every tensor allows it.
// Whether an elementwise kernel over `out` reads a tensor of shape `in` (numpy-broadcast against
// it, kElementwiseReuseMinElems elements or more) whole again only after a span of at least its
// own size: broadcast along an axis outside all of its own ([Note: one step a thread, or a
// persistent grid] in config/elementwise.h).
bool rereads_whole_late(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out) {
  const std::int64_t elems = product(in);
  if (elems < kElementwiseReuseMinElems || elems >= product(out) || in.size() > out.size()) return false;
  std::int64_t span = 1;   // output elements between two reads of one element of `in`
  bool behind = false;     // the innermost broadcast axis is passed
  for (std::size_t d = out.size(); d-- > 0;) {
    const std::size_t from_end = out.size() - d;
    const std::int64_t extent = from_end <= in.size() ? in[in.size() - from_end] : 1;
    if (extent != 1 && extent != out[d]) return false;   // not a broadcast (a view's other shape)
    if (extent == 1 && out[d] > 1) behind = true;
    if (!behind) span *= out[d];
  }
  return span >= elems;
}

// [Note: elementwise picks]
// An elementwise kernel's picks ([Note: tuned picks] in plan.h): blocks of 128, 256, 512 or 1024
// threads, each with the grid of one step a thread and, where that grid is larger than the cap,
// the persistent one ([Note: one step a thread, or a persistent grid] in config/elementwise.h).
// The vector width is not a pick: the widest the tensors allow is the copy's width. The heuristic
// (256 threads, persistent where a broadcast operand is re-read late) is one of them. A dyn
// kernel's picks are those of the size it is planned at; each serves every size.
std::vector<ElementwisePick> elementwise_candidates(const ElementwiseConfig& config, std::int64_t numel,
                                                    std::int64_t inner, int sm_count) {
  std::vector<ElementwisePick> out;
  for (int threads : {128, 256, 512, 1024}) {
    ElementwiseConfig c = config;
    c.threads = threads;
    c.persistent = false;
    const auto uncapped = elementwise_geometry(c, numel, inner, sm_count).grid.x;
    out.push_back({threads, false});
    c.persistent = true;
    const bool heuristic = config.persistent && threads == config.threads;
    if (heuristic || elementwise_geometry(c, numel, inner, sm_count).grid.x < uncapped) out.push_back({threads, true});
  }
  return out;
}

void plan_elementwise(Planner& p, PlannedKernel& kn) {
  const Plan& plan = p.plan();
  const auto& bound = *plan.bound;
  const auto& shape = bound.shape(kn.stores[0].node);
  const std::int64_t numel = product(shape);
  std::size_t widest = 1;
  for (const auto& a : kn.args)
    if (a.kind == KernelArg::Kind::Buffer) widest = std::max(widest, dtype_size(a.dtype));
  for (const auto& s : kn.stores) widest = std::max(widest, dtype_size(bound.node(s.node).dtype));
  std::int64_t vec = static_cast<std::int64_t>(16 / widest);
  const std::int64_t inner = shape.empty() ? 1 : shape.back();
  const bool dynamic = kn.reads_dyn_dims();
  // With dyn dims the choice reads buckets only ([Note: dyn buckets]): a dyn innermost extent
  // allows row vectors in the bucket "multiple of 16". Flat vectors (across rows, a scalar tail)
  // need every tensor to have the output's shape: for dyn dims that is the same shape expression,
  // which holds for every value, so they serve any bucket.
  const ir::Shape& inner_expr = bound.node(kn.stores[0].node).shape;
  const auto all_flat = [&] {
    for (const auto& a : kn.args) {
      if (a.kind != KernelArg::Kind::Buffer) continue;
      const Buffer& b = plan.buffers[static_cast<std::size_t>(a.buffer)];
      if (dynamic ? b.node < 0 || bound.node(b.node).shape != inner_expr : product(b.shape) != numel) return false;
    }
    return true;
  };
  ElementwiseConfig config;
  const ir::DimExpr* dyn_inner = nullptr;
  if (!inner_expr.empty() && !inner_expr.back().as_constant() &&
      inner_expr.back().mentions(bound.ir->dyn_dims()))
    dyn_inner = &inner_expr.back();
  std::string why = "only elementwise nodes";
  if (!plan.target.aligned16) {
    vec = 1;
    why += "; some pointer is not 16-byte aligned: scalar loop";
  } else if (dyn_inner != nullptr) {
    const bool whole = dyn_inner->kind() == ir::DimExpr::Kind::Dim &&
                       plan.dyn_buckets.at(dyn_inner->name()) == DynBucket::Div16;
    if (whole) {
      why += fmt::format("; innermost extent {} (dyn, a multiple of 16): {}-byte vectors ({} x {} bytes)",
                         dyn_inner->str(), vec * static_cast<std::int64_t>(widest), vec, widest);
    } else if (vec > 1 && all_flat()) {
      config.flat = true;
      why += fmt::format("; innermost extent {} (dyn, not a multiple of 16): flat vectors with a scalar tail "
                         "(every tensor has the output's shape)", dyn_inner->str());
    } else if (vec > 1) {
      // [Note: row vectors checked at launch] (config/elementwise.h)
      config.checked = true;
      why += fmt::format("; innermost extent {} (dyn, not a multiple of 16): {}-byte row vectors where a launch's {} "
                         "is a multiple of {}, else a scalar loop", dyn_inner->str(),
                         vec * static_cast<std::int64_t>(widest), dyn_inner->str(), vec);
    } else {
      why += fmt::format("; innermost extent {} (dyn): scalar loop", dyn_inner->str());
    }
  } else if (vec > 1 && inner % vec != 0) {
    // Vectors would cross rows: only fine when every tensor is indexed by the flat index.
    config.flat = all_flat();
    if (!config.flat) vec = 1;
    why += fmt::format("; innermost extent {} % {} != 0{}: {}", inner, vec == 1 ? 16 / widest : vec,
                       dynamic ? " and dyn outer extents" : "",
                       config.flat ? "flat vectors with a scalar tail" : "scalar loop");
  } else if (vec > 1) {
    why += fmt::format("; {}-byte vectors ({} x {} bytes)", vec * static_cast<std::int64_t>(widest), vec, widest);
  }
  config.vec = static_cast<int>(vec);
  // [Note: one step a thread, or a persistent grid] (config/elementwise.h)
  for (const auto& a : kn.args)
    if (a.kind == KernelArg::Kind::Buffer && !a.writes &&
        rereads_whole_late(plan.buffers[static_cast<std::size_t>(a.buffer)].shape, shape))
      config.persistent = true;
  // [Note: elementwise picks]
  std::string pick_note = "; config: heuristic";
  const ElementwisePick chosen =
      p.offer_picks(kn.stores[0].node, fmt::format("elementwise: {} elements", numel),
                    ElementwisePick{config.threads, config.persistent},
                    elementwise_candidates(config, numel, inner, plan.target.sm_count), pick_note, "elementwise kernel");
  if (chosen.persistent)
    why += config.persistent ? "; persistent grid (a broadcast operand re-read each sweep stays in L2)"
                             : "; persistent grid";
  why += pick_note;
  config.threads = chosen.threads;
  config.persistent = chosen.persistent;
  kn.set_launch(elementwise_geometry(config, numel, inner, plan.target.sm_count));
  kn.config = config;
  kn.reason = why;
}

}  // namespace

Plan Planner::run() {
  const auto& ir = plan_.ir();
  for (const auto& name : ir.dyn_dims()) plan_.dyn_buckets[name] = dyn_bucket(plan_.bound->dims.at(name));
  find_consumers();
  param_of_node_.assign(ir.nodes.size(), -1);
  for (std::size_t p = 0; p < ir.params.size(); ++p) param_of_node_[static_cast<std::size_t>(ir.params[p].node)] = static_cast<int>(p);
  for (std::size_t p = 0; p < ir.params.size(); ++p) {
    const auto& param = ir.params[p];
    if (!param.is_tensor) continue;
    Buffer b;
    b.kind = BufferKind::Input;
    b.name = param.name;
    b.dtype = param.dtype;
    b.shape = plan_.bound->shape(param.node);
    b.slot = static_cast<int>(p);
    b.node = param.node;
    b.bytes = product(b.shape) * static_cast<std::int64_t>(dtype_size(b.dtype));
    plan_.buffers.push_back(b);
    plan_.leaves[param.node] = static_cast<int>(plan_.buffers.size()) - 1;
  }
  std::vector<std::vector<int>> output_buffers(ir.nodes.size());   // node -> its output buffers, in order
  for (std::size_t o = 0; o < ir.outputs.size(); ++o) {
    const auto& out = ir.outputs[o];
    const auto& node = ir.node(out.node);
    Buffer b;
    b.kind = BufferKind::Output;
    b.name = out.name;
    b.dtype = node.dtype;
    b.shape = plan_.bound->shape(out.node);
    b.slot = static_cast<int>(o);
    b.node = out.node;
    b.bytes = product(b.shape) * static_cast<std::int64_t>(dtype_size(b.dtype));
    plan_.buffers.push_back(b);
    output_buffers[static_cast<std::size_t>(out.node)].push_back(static_cast<int>(plan_.buffers.size()) - 1);
  }
  choose_leaves();

  std::vector<bool> fused(ir.nodes.size(), false);   // inside an anchor's epilogue chain
  auto outputs_of = [&](ir::NodeId id) { return output_buffers[static_cast<std::size_t>(id)]; };
  auto intermediate = [&](ir::NodeId id) {
    Buffer b;
    b.kind = BufferKind::Intermediate;
    b.name = ir.node(id).name.empty() ? fmt::format("t{}", id) : ir.node(id).name;
    b.dtype = ir.node(id).dtype;
    b.shape = plan_.bound->shape(id);
    b.node = id;
    b.bytes = product(b.shape) * static_cast<std::int64_t>(dtype_size(b.dtype));
    plan_.buffers.push_back(b);
    return static_cast<int>(plan_.buffers.size()) - 1;
  };

  for (std::size_t i = 0; i < ir.nodes.size(); ++i) {
    const auto id = static_cast<ir::NodeId>(i);
    const auto& node = ir.nodes[i];
    if (is_anchor(node.kind) && !fused[i]) {
      const AnchorRule* rule = anchor_rule(node.kind);
      KILN_CHECK(rule != nullptr, UnsupportedError, "{}: {}() has no kernel template in this version of kiln",
                 ir.where(node.loc), ir::op_kind_name(node.kind));
      ir::NodeId end = epilogue_end_[i];
      if (!rule->dyn)
        if (const ir::DimDecl* d = dyn_dim_of_anchor(id, end))
          refuse_dyn(d->name, id, fmt::format("the {} template", rule->template_family), "needs every dim baked in");
      PlannedKernel kn;
      kn.anchor = id;
      for (ir::NodeId c = id; c != end;) {
        c = consumers_[static_cast<std::size_t>(c)][0];
        fused[static_cast<std::size_t>(c)] = true;
      }
      auto outs = outputs_of(end);
      // [Note: reshapes alias]: an output that is a reshape of the anchor's last node, its only
      // reader, is stored by the anchor itself.
      bool aliased = false;
      if (outs.empty() && consumers_[static_cast<std::size_t>(end)].size() == 1) {
        const ir::NodeId c = consumers_[static_cast<std::size_t>(end)][0];
        if (ir.node(c).kind == ir::OpKind::Reshape && consumers_[static_cast<std::size_t>(c)].empty() &&
            outputs_of(c).size() == 1) {
          outs = outputs_of(c);
          fused[static_cast<std::size_t>(c)] = true;
          plan_.leaves[c] = outs[0];
          aliased = true;
        }
      }
      const bool read_elsewhere = !aliased && !consumers_[static_cast<std::size_t>(end)].empty();
      for (int b : outs) kn.stores.push_back({end, b});
      if (outs.empty() || read_elsewhere) {
        int b = outs.empty() ? intermediate(end) : outs[0];
        if (outs.empty()) kn.stores.push_back({end, b});
        plan_.leaves[end] = b;
      } else {
        plan_.leaves[end] = outs[0];
      }
      rule->plan(*this, kn);
      finish_args(kn);
      const int position = static_cast<int>(plan_.kernels.size());
      plan_.kernels.push_back(std::move(kn));
      producer_[static_cast<std::size_t>(end)] = position;
      for (auto& f : followups_) {
        if (!f.args_done) finish_args(f);
        plan_.kernels.push_back(std::move(f));
      }
      followups_.clear();
      continue;
    }
    if (fused[i] || node.kind == ir::OpKind::Scalar) continue;
    auto outs = outputs_of(id);
    if (forced_leaf_[i] && node.kind == ir::OpKind::Reshape && plan_.leaves.count(node.operands[0])) {
      plan_.leaves[id] = plan_.leaves.at(node.operands[0]);   // [Note: reshapes alias]
      producer_[i] = producer_[static_cast<std::size_t>(node.operands[0])];
      for (int b : outs) add_elementwise_root(id, b);
      continue;
    }
    if (forced_leaf_[i] && !plan_.leaves.count(id)) {
      int b = outs.empty() ? intermediate(id) : outs[0];
      plan_.leaves[id] = b;
      producer_[i] = add_elementwise_root(id, b);
      for (std::size_t o = 1; o < outs.size(); ++o) add_elementwise_root(id, outs[o]);
      continue;
    }
    for (int b : outs) add_elementwise_root(id, b);
  }

  for (std::size_t k = 0; k < plan_.kernels.size(); ++k) {
    auto& kn = plan_.kernels[k];
    if (kn.anchor >= 0) continue;
    finish_args(kn);
    plan_elementwise(*this, kn);
  }
  // Entry names by position: stable for the same plan.
  for (std::size_t k = 0; k < plan_.kernels.size(); ++k) {
    auto& kn = plan_.kernels[k];
    kn.entry = fmt::format("kiln_{}_k{}_{}", ir.op_name, k, kn.template_name);
  }
  return std::move(plan_);
}

std::set<std::string> generic_dims(const ir::Ir& ir) {
  std::set<std::string> used_by_anchors, whole;
  std::unordered_set<const ir::DimExpr*> seen;   // one walk of each shared size node in all
  auto collect = [&](const ir::Shape& shape, std::set<std::string>& into) {
    for (const auto& e : shape) e.walk_dims(seen, [&](const std::string& name) { return into.insert(name), false; });
  };
  // The memory-bound family takes dyn dims among its rows, the axes before the first one it works
  // along ([Note: dyn rows] in plan_memory.cpp), as whole extents: those are free. So is the
  // batch (axis 0) of a conv ([Note: dyn conv]; 0.995-1.011x the specialized conv,
  // bench/results/2026-11-29-h200-run7), and so are a pool's planes, every axis before the pooled
  // ones ([Note: dyn pool planes]): its prologue and epilogue take the planes' coordinates once a
  // thread step (pool.cuh's Lead), so a per-channel operand costs one division by a run-time C a
  // step, not one per element (max_pool2d(x * s) with C dyn: 1.81x when it divided per element,
  // -run8; 1.07x through kiln::DynExtent, -run12; 1.31x from the step's plane but inside each
  // predicated load, 2026-12-03-h200-run5; 1.001-1.007x from the step's Lead,
  // 2026-12-04-h200-run1). Their other axes and every axis of other anchors (a matmul's) are not
  // free; nor are the axes a memory-bound anchor works along ([Note: dyn lengths]: a softmax up
  // to 1.16x, a scan of few long rows 32x, -run12).
  auto first_worked_axis = [](const ir::Node& n) -> std::size_t {
    if (ir::is_scan(n.kind) || ir::is_rownorm(n.kind)) return static_cast<std::size_t>(n.axis);
    if (!ir::is_reduction(n.kind) || n.axes.empty()) return 0;
    std::vector<int> axes = n.axes;
    std::sort(axes.begin(), axes.end());
    for (std::size_t i = 1; i < axes.size(); ++i)
      if (axes[i] != axes[i - 1] + 1) return 0;   // a chain: no dyn dims
    return static_cast<std::size_t>(axes.front());
  };
  for (const auto& n : ir.nodes) {
    if (n.kind == ir::OpKind::DimValue) used_by_anchors.insert(n.dim);   // a value is a literal ([Note: dims as values])
    if (!is_anchor(n.kind)) continue;
    const bool memory = ir::is_reduction(n.kind) || ir::is_scan(n.kind) || ir::is_rownorm(n.kind);
    auto collect_worked = [&](const ir::Shape& shape, std::size_t first) {
      for (std::size_t d = 0; d < shape.size(); ++d)
        if (d >= first || shape[d].kind() != ir::DimExpr::Kind::Dim)
          shape[d].walk_dims(seen, [&](const std::string& name) { return used_by_anchors.insert(name), false; });
    };
    if (ir::is_pool(n.kind) || n.kind == ir::OpKind::Conv) {   // a pool's planes; a conv's batch (axis 0)
      const std::size_t rank = n.shape.size();
      const std::size_t first = ir::is_pool(n.kind) ? rank - std::min(rank, static_cast<std::size_t>(n.pool.dims)) : 1;
      collect_worked(ir.node(n.operands[0]).shape, first);
      collect_worked(n.shape, first);
      for (std::size_t o = 1; o < n.operands.size(); ++o) collect_worked(ir.node(n.operands[o]).shape, 0);
      continue;
    }
    if (!memory) {
      collect(n.shape, used_by_anchors);
      for (ir::NodeId op : n.operands) collect(ir.node(op).shape, used_by_anchors);
      continue;
    }
    const std::size_t first = first_worked_axis(n);
    collect_worked(ir.node(n.operands[0]).shape, first);
    collect_worked(n.shape, ir::is_reduction(n.kind) ? std::min(first, n.shape.size()) : first);
    // One dyn dim among the rows at most: the outermost one the spec does not keep static. With two,
    // the rules have no size classes and plan for few rows ([Note: dyn rows] in plan_memory.cpp):
    // min over the last axis of 128x4096x4095 with B and M dyn took a block per row, 1.081x the
    // specialized warp per row on an H100 (bench/results/2026-12-02-h100-run1/).
    const ir::Shape& rows = ir.node(n.operands[0]).shape;
    bool kept = false;
    for (std::size_t d = 0; d < std::min(first, rows.size()); ++d) {
      if (rows[d].kind() != ir::DimExpr::Kind::Dim) continue;
      if (const ir::DimDecl* decl = ir.find_dim(rows[d].name()); decl && decl->fixed) continue;
      if (kept) used_by_anchors.insert(rows[d].name());
      kept = true;
    }
  }
  try {   // an op whose dims have no declared values keeps its norms' rows as the rules above say
    const ir::BoundIr declared = ir::bind(std::make_shared<const ir::Ir>(ir), {});
    for (const auto& name : norm_rows_kept_static(declared)) used_by_anchors.insert(name);
  } catch (const Error&) {
  }
  for (const auto& c : ir.constraints) collect({c.lhs, c.rhs}, used_by_anchors);
  // A dim an input's declared extent computes (`f32[2 * D]`) stays baked in: a computed input
  // extent of dyn dims is the conv's and pool's case, not every family's.
  for (const auto& p : ir.params)
    for (const auto& e : p.shape)
      if (e.kind() != ir::DimExpr::Kind::Dim) collect({e}, used_by_anchors);
  for (const auto& d : ir.dims)
    if (d.fixed) used_by_anchors.insert(d.name);   // `static`: the spec asks for it baked in
  auto whole_extents = [&](const ir::Shape& shape) {
    for (const auto& e : shape)
      if (e.kind() == ir::DimExpr::Kind::Dim) whole.insert(e.name());
  };
  for (const auto& p : ir.params) whole_extents(p.shape);
  for (const auto& o : ir.outputs) whole_extents(ir.node(o.node).shape);
  std::set<std::string> out;
  for (const auto& name : whole)
    if (!used_by_anchors.count(name)) out.insert(name);
  return out;
}

void normalize_thresholds(std::vector<std::int64_t>& t) {
  t.erase(std::remove_if(t.begin(), t.end(), [](std::int64_t v) { return v <= 1; }), t.end());
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
}

std::vector<std::string> dyn_class_factors(const std::string& key) {
  std::vector<std::string> factors;
  std::size_t start = 0;
  for (std::size_t star = key.find('*'); star != std::string::npos; star = key.find('*', start)) {
    factors.push_back(key.substr(start, star - start));
    start = star + 1;
  }
  factors.push_back(key.substr(start));
  return factors;
}

std::string dyn_class_key(const std::vector<std::string>& dims) { return fmt::format("{}", fmt::join(dims, "*")); }

std::int64_t dyn_class_value(const std::string& key, const std::map<std::string, std::int64_t>& dims) {
  std::int64_t v = 1;
  for (const auto& f : dyn_class_factors(key)) v *= dims.at(f);
  return v;
}

int dyn_class(const std::vector<std::int64_t>& thresholds, std::int64_t value) {
  return static_cast<int>(std::upper_bound(thresholds.begin(), thresholds.end(), value) - thresholds.begin());
}

std::int64_t dyn_class_low(const std::vector<std::int64_t>& thresholds, int klass) {
  return klass == 0 ? 1 : thresholds.at(static_cast<std::size_t>(klass - 1));
}

std::string dyn_class_text(const std::vector<std::int64_t>& thresholds, int klass) {
  const auto n = static_cast<int>(thresholds.size());
  if (klass == n) return fmt::format(">= {}", dyn_class_low(thresholds, klass));
  return fmt::format("[{}, {})", dyn_class_low(thresholds, klass), thresholds[static_cast<std::size_t>(klass)]);
}

const char* dyn_bucket_text(DynBucket b) {
  switch (b) {
    case DynBucket::One: return "one";
    case DynBucket::Div16: return "multiple of 16";
    case DynBucket::General: return "general";
  }
  return "?";
}

namespace {

// A pool's config at a launch's dims: its dyn planes and pooled extents filled in.
PoolConfig pool_at(const Plan& plan, const PlannedKernel& kn, PoolConfig at,
                   const std::map<std::string, std::int64_t>& dims) {
  if (!kn.dyn_outer.empty()) at.planes = kn.dyn_extent(dims);
  const auto& node = plan.ir().node(kn.anchor);
  const auto& in = plan.ir().node(node.operands[0]).shape;
  const std::size_t d = static_cast<std::size_t>(node.pool.dims), rank = in.size();
  for (std::size_t i = 0; i < d; ++i) {
    const int slot = static_cast<int>(3 - d + i);
    if (pool_in_extent(at, slot) == 0) pool_in_extent(at, slot) = in[rank - d + i].evaluate(dims);
    if (pool_out_extent(at, slot) == 0) pool_out_extent(at, slot) = node.shape[rank - d + i].evaluate(dims);
  }
  return at;
}

}  // namespace

launch::Geometry launch_for(const Plan& plan, std::size_t k, const std::map<std::string, std::int64_t>& dims) {
  const PlannedKernel& kn = plan.kernels.at(k);
  launch::Geometry g;
  g.grid = {kn.grid.x, kn.grid.y, kn.grid.z};
  g.block = {kn.block.x, kn.block.y, kn.block.z};
  g.shared_bytes = kn.shared_bytes;
  if (!kn.reads_dyn_dims()) return g;
  if (const auto* config = std::get_if<ElementwiseConfig>(&kn.config)) {
    std::int64_t numel = 1, inner = 1;
    for (const auto& e : plan.ir().node(kn.stores[0].node).shape) {
      inner = e.evaluate(dims);
      numel *= inner;
    }
    return elementwise_geometry(*config, numel, inner, plan.target.sm_count);
  }
  if (const auto* pool = std::get_if<PoolConfig>(&kn.config))   // [Note: dyn pool planes], [Note: dyn pooled axes]
    return pool_geometry(pool_at(plan, kn, *pool, dims));
  if (std::holds_alternative<AttentionConfig>(kn.config)) return attention_launch(plan, kn, dims);   // [Note: dyn attention]
  if (std::holds_alternative<ConvConfig>(kn.config)) return conv_launch(plan, kn, dims);   // [Note: dyn conv]
  if (const auto* g = std::get_if<GemmConfig>(&kn.config); g != nullptr && g->kind == GemmKind::OperandPrep &&
                                                           prep_rows(*g) == 0)
    return conv_prep_launch(plan, kn, dims);   // [Note: dyn conv spatial extents]
  // A strided reduction's dyn inner extent ([Note: dyn inner extents] in plan_memory.cpp): its
  // grid, split count and partial states follow it.
  std::int64_t inner = 0;
  if (!kn.dyn_inner.empty()) {
    inner = 1;
    for (const auto& e : kn.dyn_inner) inner *= e.evaluate(dims);
  }
  if (kn.dyn_outer.empty() && inner > 0) {
    std::int64_t outer = 0;
    if (const auto* reduce = std::get_if<ReduceConfig>(&kn.config)) outer = reduce->outer;
    else if (const auto* finish = std::get_if<ReduceFinishConfig>(&kn.config)) outer = finish->outer;
    else if (const auto* scan = std::get_if<ScanConfig>(&kn.config)) outer = scan->outer;
    else if (const auto* norm = std::get_if<RownormConfig>(&kn.config)) outer = norm->outer;
    KILN_ASSERT(outer > 0, "{}: a dyn inner extent outside the memory-bound family", kn.entry);
    return memory_launch(plan, kn, outer, 0, inner);
  }
  if (kn.dyn_outer.empty()) {
    // The look-back scan over a dyn length ([Note: dyn lengths]): its grid and the workspace it
    // lays out follow the length; any other kernel reads dyn dims only in its body and functors.
    const auto* scan = std::get_if<ScanConfig>(&kn.config);
    if (scan == nullptr || scan->variant != ScanVariant::kRowsLookback || kn.dyn_len.empty()) return g;
    std::int64_t len = 1;
    for (const auto& e : kn.dyn_len) len *= e.evaluate(dims);
    return memory_launch(plan, kn, scan->outer, len);
  }
  const std::int64_t outer = kn.dyn_extent(dims);
  if (std::holds_alternative<GemmConfig>(kn.config)) return gemm_launch(plan, kn, outer);   // M or batches
  return memory_launch(plan, kn, outer, 0, inner);   // the family's rules over the launch's rows
}

std::int64_t launch_value(const Plan& plan, const KernelArg& arg, const std::map<std::string, std::int64_t>& dims) {
  KILN_ASSERT(arg.kind == KernelArg::Kind::LaunchSplits && arg.kernel >= 0, "{}: not a value a launch computes",
              arg.name);
  return launch_for(plan, static_cast<std::size_t>(arg.kernel), dims).grid.y;
}

void Planner::add_dyn_thresholds(const std::string& dim, const std::vector<std::int64_t>& values) {
  auto& t = plan_.dyn_thresholds[dim];
  t.insert(t.end(), values.begin(), values.end());
  normalize_thresholds(t);
  if (t.empty()) plan_.dyn_thresholds.erase(dim);
}

std::set<std::string> dyn_row_lengths(const ir::Ir& ir) {
  const std::set<std::string> dyn = ir.dyn_dims();
  std::set<std::string> rows;
  auto innermost = [&](const ir::Shape& shape) {
    if (!shape.empty() && shape.back().kind() == ir::DimExpr::Kind::Dim && dyn.count(shape.back().name()))
      rows.insert(shape.back().name());
  };
  for (const auto& p : ir.params)
    if (p.is_tensor) innermost(p.shape);
  for (const auto& o : ir.outputs) innermost(ir.node(o.node).shape);
  return rows;
}

std::string Planner::apply_tuned_pick(Plan::Tunable& t, const std::string& note, const char* family) const {
  KILN_ASSERT(std::find(t.candidates.begin(), t.candidates.end(), t.heuristic) != t.candidates.end(),
              "the {} heuristic's pick {} is not among the candidates", family, pick_text(t.heuristic));
  const auto it = plan_.target.tuned_picks.find(t.anchor);
  if (it == plan_.target.tuned_picks.end()) return note;
  const TunedPick& tuned = it->second;
  if (std::find(t.candidates.begin(), t.candidates.end(), tuned.pick) == t.candidates.end())
    return fmt::format("; config: heuristic (the pick {}, {}, is not legal for this {})", pick_text(tuned.pick),
                       tuned.origin, family);
  t.chosen = tuned.pick;
  t.origin = tuned.origin;
  return fmt::format("; config: {}", tuned.origin);
}

bool Planner::add_dyn_row_align(const std::string& dim, std::int64_t elements) {
  KILN_ASSERT(elements == 4 || elements == 8, "row alignment of {} elements", elements);
  if (!dyn_row_lengths(plan_.ir()).count(dim)) return false;   // not keyed by it: nothing assumed
  const std::int64_t value = plan_.bound->dims.at(dim);
  plan_.dyn_row_align[dim] = dyn_row_class(value);
  return value % elements == 0;
}

const char* dyn_row_class_text(int row_class) {
  return row_class == 2 ? "a multiple of 8" : row_class == 1 ? "a multiple of 4, not of 8" : "not a multiple of 4";
}

void Planner::refuse_dyn_compound_extents(const PlannedKernel& kernel, const std::set<int>& read_buffers) const {
  // [Note: dyn pooled axes] in plan_pool.cpp: a dyn pool's output extents are quotients of dyn
  // dims, which only the pool template (its store and fused epilogue) reads. (Sums and products of
  // dyn dims, pad's and concat's extents, the elementwise family reads through ExprEmitter::extent.)
  const auto& ir = plan_.ir();
  auto check = [&](ir::NodeId node, ir::NodeId at) {
    for (const auto& e : ir.node(node).shape) {
      if (!e.divides()) continue;
      const std::string found = dyn_in(e);
      if (found.empty()) continue;
      refuse_dyn(found, at, fmt::format("the {} template", kernel.template_name),
                 fmt::format("reads the extent {} of its dyn dims, and only a pool's or conv's own kernel reads such a "
                             "quotient (a dyn pooled axis or conv spatial extent: that template and its fused epilogue)",
                             e.str()));
    }
  };
  // A pool's or conv's kernel computes its output's extents from its input's: as DynValue
  // arguments where they are dyn (a dyn pool's, a conv's dyn spatial extents: [Note: dyn conv
  // spatial extents] in plan_contraction.cpp), else as its config's constants (a conv planned
  // static because its dyn extents are 1 at this binding, the bucket `== 1`). It stores them itself.
  const bool own_extents =
      std::any_of(kernel.args.begin(), kernel.args.end(),
                  [](const KernelArg& a) { return a.kind == KernelArg::Kind::DynValue; }) ||
      (kernel.anchor >= 0 && (ir::is_pool(ir.node(kernel.anchor).kind) || ir.node(kernel.anchor).kind == ir::OpKind::Conv));
  for (const auto& st : kernel.stores)
    if (!own_extents) check(st.node, kernel.anchor >= 0 ? kernel.anchor : st.node);
  for (int b : read_buffers) {
    const ir::NodeId n = plan_.buffers[static_cast<std::size_t>(b)].node;
    if (n >= 0) check(n, kernel.anchor >= 0 ? kernel.anchor : n);
  }
}

void Planner::refuse_dyn(const std::string& dim, ir::NodeId at, const std::string& what, const std::string& why) const {
  const auto& ir = plan_.ir();
  const ir::DimDecl* d = ir.find_dim(dim);
  KILN_ASSERT(d != nullptr, "no dim {}", dim);
  throw UnsupportedError(fmt::format("{}: dim '{}' is dyn, but {} (for line {}) {}", ir.where(d->loc), d->name, what,
                                     ir.node(at).loc.line, why));
}

bool Planner::mentions_dim(const ir::Shape& shape, const std::string& dim) const {
  auto& free = free_of_[dim];
  for (const auto& e : shape)
    if (e.walk_dims(free, [&](const std::string& name) { return name == dim; })) return true;
  return false;
}

std::string Planner::dyn_in(const ir::DimExpr& extent) const {
  const std::set<std::string> dyn = plan_.ir().dyn_dims();
  std::string found;
  if (!dyn.empty())
    extent.walk_dims(dyn_free_, [&](const std::string& name) { return dyn.count(name) ? (found = name, true) : false; });
  return found;
}

// The first dyn dim other than `allowed` that sizes a tensor the anchor's kernel touches (its node,
// operands and the fused epilogue with its side operands, and the elementwise expressions inlined
// into them).
const ir::DimDecl* Planner::dyn_dim_of_anchor(ir::NodeId anchor, ir::NodeId end, const std::string& allowed) const {
  return dyn_dim_of_anchor(anchor, end, allowed.empty() ? std::set<std::string>{} : std::set<std::string>{allowed});
}

const ir::DimDecl* Planner::dyn_dim_of_anchor(ir::NodeId anchor, ir::NodeId end,
                                              const std::set<std::string>& allowed) const {
  const auto& ir = plan_.ir();
  std::set<std::string> dyn = ir.dyn_dims();
  for (const auto& a : allowed) dyn.erase(a);
  if (dyn.empty()) return nullptr;
  // dyn_free_ holds the size nodes walked so far without finding a dyn dim (a find is refused at
  // once), so the anchors of a long chain walk their nested sizes once in all. A walk that
  // allows a dyn dim keeps its own (a node free of the others may still hold that one).
  std::unordered_set<const ir::DimExpr*> own;
  std::unordered_set<const ir::DimExpr*>& free = allowed.empty() ? dyn_free_ : own;
  auto reads_dyn = [&](const ir::Shape& shape, std::string& found) {
    for (const auto& e : shape)
      if (e.walk_dims(free, [&](const std::string& name) { return dyn.count(name) ? (found = name, true) : false; }))
        return true;
    return false;
  };
  std::vector<ir::NodeId> stack{anchor};
  for (ir::NodeId c = anchor; c != end;) stack.push_back(c = consumers_[static_cast<std::size_t>(c)][0]);
  std::unordered_set<ir::NodeId> seen;
  while (!stack.empty()) {
    const ir::NodeId id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    const auto& n = ir.node(id);
    std::string found;
    if (reads_dyn(n.shape, found)) return ir.find_dim(found);
    if (id == anchor || !is_anchor(n.kind))
      for (ir::NodeId op : n.operands) stack.push_back(op);
  }
  return nullptr;
}

namespace {

void merge_thresholds(DynThresholds& into, const DynThresholds& from) {
  for (const auto& [dim, values] : from) {
    auto& t = into[dim];
    t.insert(t.end(), values.begin(), values.end());
    normalize_thresholds(t);
  }
}

// The composition passes, then the planner; `fused_at` receives the passes' size classes.
Plan plan_once(std::shared_ptr<const ir::BoundIr> bound, const Target& target, DynThresholds& fused_at) {
  std::vector<std::string> fusions;
  auto fused = fuse_compositions(std::move(bound), target, fusions, &fused_at);
  Plan plan = Planner(std::move(fused), target).run();
  plan.fusions = std::move(fusions);
  merge_thresholds(plan.dyn_thresholds, fused_at);
  return plan;
}

}  // namespace

// [Note: thresholds of a fusion decision]
// A composition pass may decide by a dyn dim's size class (fuse_norms: a strided norm over dyn rows
// fuses where its columns fill the GPU). The plans on the two sides of that threshold come from
// different families, whose own thresholds differ, yet the runtime learns a dim's thresholds from
// the first plan of a bucket key and must see the same list whatever value came first ([Note: dyn
// size classes]). So each class of the pass's thresholds is planned (the bound value's plan for
// its own class; elsewhere at the class's highest value, or its lowest for the last one), and the
// dim's list is the pass's thresholds plus, for each class, that plan's thresholds inside it.
Plan make_plan(std::shared_ptr<const ir::BoundIr> bound, const Target& target) {
  DynThresholds fused_at;
  Plan plan = plan_once(bound, target, fused_at);
  DynThresholds others;   // the other dims' thresholds in the other classes' plans
  for (const auto& [dim, at] : fused_at) {
    const int mine = dyn_class(at, bound->dims.at(dim));
    std::vector<std::int64_t> list = at;
    const std::vector<std::int64_t> own = plan.dyn_thresholds[dim];
    for (int k = 0; k <= static_cast<int>(at.size()); ++k) {
      const std::int64_t lo = dyn_class_low(at, k);
      const bool last = k == static_cast<int>(at.size());
      const std::int64_t hi = last ? std::numeric_limits<std::int64_t>::max() : at[static_cast<std::size_t>(k)];
      std::vector<std::int64_t> inside = own;
      if (k != mine) {
        std::map<std::string, ir::DimValue> dims;
        for (const auto& [name, value] : bound->dims)
          dims[name] = {name == dim ? (last ? lo : hi - 1) : value, "a size class's edge"};
        DynThresholds ignored;
        Plan other = plan_once(std::make_shared<const ir::BoundIr>(ir::bind(bound->ir, dims)), target, ignored);
        inside = other.dyn_thresholds[dim];
        other.dyn_thresholds.erase(dim);
        merge_thresholds(others, other.dyn_thresholds);
      }
      for (std::int64_t v : inside)
        if (v > lo && v < hi) list.push_back(v);
    }
    normalize_thresholds(list);
    plan.dyn_thresholds[dim] = list;
  }
  for (const auto& [dim, values] : others)
    if (!fused_at.count(dim)) merge_thresholds(plan.dyn_thresholds, {{dim, values}});
  return plan;
}

const AnchorRule* anchor_rule(ir::OpKind kind) {
  if (const AnchorRule* r = memory_bound_rule(kind)) return r;
  if (const AnchorRule* r = pool_rule(kind)) return r;
  return contraction_rule(kind);
}

}  // namespace kiln
