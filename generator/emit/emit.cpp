#include "generator/emit/emit.h"

#include <filesystem>
#include <set>

#include "generator/support/assert.h"
#include "generator/emit/emitter.h"
#include "generator/support/source.h"
#include "generator/emit/substitute.h"

namespace kiln {

const char* generator_version() { return "generator 1"; }

namespace {

// __launch_bounds__ arguments: the block size, and the CTAs per SM a plan asks for
// (min_blocks > 1), which caps the registers so that many fit; a kernel that reallocates
// registers between warpgroups (setmaxnreg) always names it, for the cap at entry.
std::string launch_bounds(const PlannedKernel& kernel) {
  std::string s = std::to_string(kernel.block.x * kernel.block.y * kernel.block.z);
  if (kernel.min_blocks > 1 || kernel.setmaxnreg) s += ", " + std::to_string(kernel.min_blocks);
  return s;
}

}  // namespace

// ---------------------------------------------------------------- UnitParts

std::string dims_text(const std::vector<std::int64_t>& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return "[" + s + "]";
}

std::string dims_text(const Plan& plan, ir::NodeId node) {
  const auto& shape = plan.bound->shape(node);
  std::vector<std::string> extents;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const std::string* dyn = dyn_extent(plan, node, d);
    const ir::DimExpr* computed = computed_dyn_extent(plan, node, d);
    extents.push_back(dyn ? *dyn : computed ? computed->str() : std::to_string(shape[d]));
  }
  return fmt::format("[{}]", fmt::join(extents, ", "));
}

std::string dyn_extent_statement(const Plan& plan, const PlannedKernel& kernel, const char* type, const char* name,
                                 const char* what) {
  return dyn_extent_statement(plan, kernel.dyn_outer, type, name, what);
}

std::string dyn_extent_statement(const Plan& plan, const std::vector<ir::DimExpr>& extent, const char* type,
                                 const char* name, const char* what) {
  if (extent.empty()) return "";
  return fmt::format("  const {} {} = {};  // {}: this launch's\n", type, name, dyn_extent_expression(plan, extent, type),
                     what);
}

std::string dyn_extent_expression(const Plan& plan, const std::vector<ir::DimExpr>& factors, const char* type) {
  std::vector<std::string> terms;
  for (const auto& e : factors)
    terms.push_back(e.kind() == ir::DimExpr::Kind::Dim && plan.bound->is_dynamic(e.name())
                        ? fmt::format("static_cast<{}>(dim_{})", type, e.name())
                        : fmt::format("{}({})", type, e.evaluate(plan.bound->dims)));
  return fmt::format("{}", fmt::join(terms, " * "));
}

void UnitParts::launch_check(const PlannedKernel& kernel, const std::string& geometry, bool with_grid) {
  // Without the grid (a dyn dim sizes it at launch) its extents are written as 0: the source must
  // not hold the grid of the binding it was planned at.
  const Dim3 g = with_grid ? kernel.grid : Dim3{0, 0, 0};
  const auto& b = kernel.block;
  checks += fmt::format(
      "static_assert(kiln::launch::same_launch({}, {}, {}, {}, {}, {}, {}, {}, {}),\n"
      "              \"the template library's launch rule differs from the planner's\");\n",
      geometry, with_grid ? "true" : "false", g.x, g.y, g.z, b.x, b.y, b.z, kernel.shared_bytes);
}

std::string UnitParts::param_list(const Plan& plan, const PlannedKernel& kernel) {
  std::string params;
  for (const auto& arg : kernel.args) {
    if (!params.empty()) params += ", ";
    switch (arg.kind) {
      case KernelArg::Kind::Buffer:
        params += fmt::format("{}{}* __restrict__ {}", arg.writes ? "" : "const ", storage_type(arg.dtype),
                              pointer_name(plan, arg.buffer));
        break;
      case KernelArg::Kind::Scalar: params += fmt::format("{} {}", compute_type(arg.dtype), arg.name); break;
      case KernelArg::Kind::DynDim:   // kiln/dyn_dim.h
      case KernelArg::Kind::DynValue: params += fmt::format("kiln::DynDim {}", arg.name); break;
      case KernelArg::Kind::LaunchSplits: params += fmt::format("long long {}", arg.name); break;
      case KernelArg::Kind::TensorMap:
        params += fmt::format("const __grid_constant__ kiln::TensorMap {}", arg.name);
        break;
    }
  }
  return params;
}

std::string UnitParts::pointer_name(const Plan& plan, int buffer) {
  const auto& b = plan.buffers[static_cast<std::size_t>(buffer)];
  switch (b.kind) {
    case BufferKind::Input: return "in_" + b.name;
    case BufferKind::Output: return "out_" + b.name;
    case BufferKind::Intermediate: return "tmp_" + b.name;
    case BufferKind::Workspace: return "ws_" + b.name;
  }
  return b.name;
}

std::string UnitParts::buffer_comment(const Plan& plan, int buffer) {
  const auto& b = plan.buffers[static_cast<std::size_t>(buffer)];
  static const char* kKinds[] = {"in", "out", "intermediate", "workspace"};
  // A dyn dim's extent is written as its name, as the code reads it: the source (and with it the
  // cache key) must not hold the value one call happened to bind.
  std::string shape = b.node >= 0 ? dims_text(plan, b.node) : dims_text(b.shape);
  if (!b.dyn_dim.empty())   // a workspace sized by each launch: its first extent by the dim's name
    shape = fmt::format("[{}{}", b.dyn_dim, shape.substr(shape.find_first_of(",]")));
  if (b.launch_kernel >= 0) shape = "[as each launch's geometry sizes it]";
  return fmt::format("{} {}: {}{}", kKinds[static_cast<int>(b.kind)], b.name, dtype_name(b.dtype), shape);
}

void UnitParts::declare_members(const Plan& plan, const PlannedKernel& kernel, CodeWriter& w, ExprEmitter& ex) {
  for (const auto& arg : kernel.args) {
    switch (arg.kind) {
      case KernelArg::Kind::Buffer: {
        const std::string name = pointer_name(plan, arg.buffer);
        w.line("{}{}* __restrict__ {};  // {}", arg.writes ? "" : "const ", storage_type(arg.dtype), name,
               buffer_comment(plan, arg.buffer));
        ex.set_pointer(arg.buffer, name);
        break;
      }
      case KernelArg::Kind::Scalar:
        w.line("{} {};  // scalar in {}", compute_type(arg.dtype), arg.name, arg.name);
        ex.set_scalar(arg.param, arg.name);
        break;
      case KernelArg::Kind::DynDim:   // [Note: dividing by a dyn extent] in kiln/common.cuh
        w.line("kiln::DynExtent<Index> {};  // dyn dim {}", arg.name, arg.dim);
        break;
      case KernelArg::Kind::DynValue:   // an extent of dyn dims: the epilogue divides by it ([Note: dyn pooled axes])
        w.line("kiln::DynExtent<Index> {};  // dyn extent {}", arg.name, arg.value.str());
        ex.set_dyn_value(arg.value, arg.name);
        break;
      case KernelArg::Kind::TensorMap:      // read by the template's copies, not by functors
      case KernelArg::Kind::LaunchSplits: break;   // read by the body (emit_memory.cpp)
    }
  }
  ex.dyn_dim_name = [](const std::string& dim) { return "dim_" + dim; };
}

std::string UnitParts::member_inits(const Plan& plan, const PlannedKernel& kernel) {
  std::string s;
  for (const auto& arg : kernel.args) {
    if (arg.kind == KernelArg::Kind::TensorMap || arg.kind == KernelArg::Kind::LaunchSplits)
      continue;   // not a functor member (declare_members)
    if (!s.empty()) s += ", ";
    // A DynDim or DynValue argument initializes its DynExtent member with the constants it carries.
    s += arg.kind == KernelArg::Kind::Buffer ? pointer_name(plan, arg.buffer) : arg.name;
  }
  return s;
}

// ---------------------------------------------------------------- anchors' stores

ir::NodeId store_node(const PlannedKernel& kernel) {
  return kernel.stores.empty() ? kernel.anchor : kernel.stores[0].node;
}

// struct Store: the end of the epilogue chain at output index `flat`, given the anchor's value r.
void begin_unit(const PlannedKernel& kernel, const char* header, UnitParts& unit, CodeWriter& c) {
  unit.includes = fmt::format("#include \"kiln/{}\"", header);
  if (unit.op_has_dropout) unit.includes += "\n#include \"kiln/philox.cuh\"";
  c.line("{}", index_declaration(kernel.index64));
}

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

// Where a dropout's flat index at lane j of a loop over N adjacent elements is its index at lane 0
// plus j: that index at lane 0 (an expression in scope before the loop, a multiple of N); nullopt
// where it is not (the dropout then draws element by element).
using DropoutLaneFirst = std::function<std::optional<std::string>(ir::NodeId, const Coords&)>;

// A dropout_bits_hook for a loop over N adjacent elements ([Note: flat lanes]): a dropout that
// `first_of` places (see DropoutLaneFirst) and whose seed is an argument or a literal (in scope
// before the loop) reads word j of a kiln::DropoutWords<N> that `hoisted` declares, one per seed
// and first index.
std::function<std::optional<std::string>(ir::NodeId, const Coords&, const std::string&)> flat_lanes_dropout(
    const Plan& plan, DropoutLaneFirst first_of, std::map<std::string, std::string>& words,
    std::vector<std::string>& hoisted) {
  return [&plan, first_of = std::move(first_of), &words, &hoisted](
             ir::NodeId id, const Coords& at, const std::string& seed) -> std::optional<std::string> {
    const auto seed_kind = plan.ir().node(plan.ir().node(id).operands[1]).kind;
    if (seed_kind != ir::OpKind::Scalar && seed_kind != ir::OpKind::Literal) return std::nullopt;
    const std::optional<std::string> first = first_of(id, at);
    if (!first) return std::nullopt;
    const std::string key = seed + "@" + *first;
    auto it = words.find(key);
    if (it == words.end()) {
      it = words.emplace(key, fmt::format("words_{}", words.size())).first;
      hoisted.push_back(fmt::format("const kiln::DropoutWords<N> {}({}, static_cast<unsigned long long>({}));",
                                    it->second, seed, *first));
    }
    return it->second + ".bits(j)";
  };
}

// Store::lanes<N>: the chain of write_store at flat indices first .. first + N - 1, first a
// multiple of N, its dropouts drawn through flat_lanes_dropout.
void write_store_lanes(const Plan& plan, const PlannedKernel& kernel, const std::string& result_type, CodeWriter& w,
                       ir::NodeId end) {
  const auto& bound = *plan.bound;
  const DType out = bound.node(end).dtype;
  w.blank();
  w.line("// N adjacent outputs from `first`, a multiple of N ([Note: flat lanes] in kiln/common.cuh)");
  w.line("static constexpr bool kFlatLanes = true;");
  w.line("template <int N>");
  w.open_block(fmt::format("__device__ __forceinline__ void lanes(const {} (&result)[N], Index first, {} (&y)[N]) const",
                           result_type, storage_type(out)));
  CodeWriter loop;
  ExprEmitter ex(plan, loop);
  CodeWriter members;   // declared above by write_store; this names them for `ex`
  UnitParts::declare_members(plan, kernel, members, ex);
  loop.line("const Index flat = first + j;");
  const Coords coords = ex.declare_coords(end, "flat", "o");
  loop.line("const {} anchor_value = result[j];", compute_type(bound.node(kernel.anchor).dtype));
  ex.bind_value_at_flat(kernel.anchor, "flat", "anchor_value");
  if (end != kernel.anchor) ex.compute_here(end);
  std::map<std::string, std::string> words;
  std::vector<std::string> hoisted;
  const auto& end_shape = bound.shape(end);
  ex.dropout_bits_hook = flat_lanes_dropout(
      plan,
      [&](ir::NodeId id, const Coords& at) -> std::optional<std::string> {
        if (bound.shape(id) == end_shape && at == coords) return "first";
        return std::nullopt;
      },
      words, hoisted);
  const std::string v = ex.value(end, coords);
  if (out == DType::f16 || out == DType::bf16) loop.line("y[j] = kiln::from_float<{}>({});", storage_type(out), v);
  else loop.line("y[j] = {};", v);
  for (const auto& l : hoisted) w.line("{}", l);
  w.raw_line("#pragma unroll");
  w.open_block("for (int j = 0; j < N; ++j)");
  w.append(loop.str());
  w.close_block();
  w.close_block();
}

void write_store(const Plan& plan, const PlannedKernel& kernel, const std::string& result_type, CodeWriter& w,
                 std::size_t pooled, bool flat_lanes) {
  const auto& bound = *plan.bound;
  const ir::NodeId end = store_node(kernel);
  const DType out = bound.node(end).dtype;
  ExprEmitter ex(plan, w);
  w.line("// spec line {}: {}", bound.node(end).loc.line,
         end == kernel.anchor ? "the result as is" : "the result through the fused epilogue");
  w.open_block("struct Store");
  UnitParts::declare_members(plan, kernel, w, ex);
  // The chain is elementwise over the anchor's shape, or reshapes it (AnchorRule::epilogue_reshape):
  // either way the anchor's element is the one at the output's flat index. The plane's axes are
  // the anchor's leading ones only where the chain keeps its shape.
  const bool by_plane = pooled > 0 && bound.shape(end) == bound.shape(kernel.anchor);
  const Coords lead = pooled ? write_lead(ex, w, plan, end, "o", by_plane ? pooled : bound.shape(end).size()) : Coords{};
  w.open_block(fmt::format("__device__ __forceinline__ {} operator()({} result, Index flat{}) const", storage_type(out),
                           result_type, pooled ? ", const Lead& at" : ""));
  Coords coords = ex.declare_coords(end, "flat", "o", lead);
  w.line("const {} anchor_value = result;  // %{} {}", compute_type(bound.node(kernel.anchor).dtype), kernel.anchor,
         ir::op_kind_name(bound.node(kernel.anchor).kind));
  ex.bind_value_at_flat(kernel.anchor, "flat", "anchor_value");
  if (end != kernel.anchor) ex.compute_here(end);
  const std::string v = ex.value(end, coords);
  w.line("(void)flat;");
  if (pooled) w.line("(void)at;");
  if (out == DType::f16 || out == DType::bf16) w.line("return kiln::from_float<{}>({});", storage_type(out), v);
  else w.line("return {};", v);
  w.close_block();
  if (flat_lanes && !pooled && end != kernel.anchor && chain_has_dropout(plan, end, kernel.anchor))
    write_store_lanes(plan, kernel, result_type, w, end);
  w.close_block(";");
}

// ---------------------------------------------------------------- elementwise

void emit_family(const Plan& plan, const PlannedKernel& kernel, const ElementwiseConfig& config, UnitParts& unit) {
  const auto& bound = *plan.bound;
  const ir::NodeId root = kernel.stores[0].node;
  const auto& shape = bound.shape(root);
  const std::size_t rank = shape.size();
  const std::int64_t vec = config.vec;
  std::int64_t numel = 1;
  for (auto d : shape) numel *= d;
  const bool rows = rank > 0 && !config.flat;   // vectors never cross a row (the planner's choice)

  unit.includes = "#include \"kiln/elementwise.cuh\"";
  if (unit.op_has_dropout) unit.includes += "\n#include \"kiln/philox.cuh\"";

  CodeWriter c;
  c.line("{}", index_declaration(kernel.index64));
  c.line("{}", UnitParts::config_line(config));
  c.line("constexpr int kVec = kConfig.vec;  // elements per thread step ({}-byte accesses)",
         vec * static_cast<std::int64_t>(dtype_size(bound.node(root).dtype)));
  const bool dynamic = kernel.reads_dyn_dims();
  if (!dynamic) c.line("constexpr Index kNumel = {};  // {}", numel, dims_text(shape));
  unit.constants = c.str();

  CodeWriter w;
  ExprEmitter ex(plan, w);
  w.open_block("struct Body");
  UnitParts::declare_members(plan, kernel, w, ex);
  w.blank();
  w.line("template <int N>");
  w.open_block("__device__ __forceinline__ void apply(Index i) const");
  // Leaves that advance with the output by one element per j are loaded as vectors.
  const Coords identity = [&] {
    Coords c(rank);
    for (std::size_t d = 0; d < rank; ++d) c[d] = fmt::format("c{}", d);
    return c;
  }();
  Coords base;
  if (rows && rank > 0) {
    std::vector<std::string> extents;   // a dyn dim by its name: the source must not hold its value
    for (std::size_t d = 0; d < rank; ++d) extents.push_back(ex.extent(root, d));
    w.line("// coordinates of element i of [{}]", fmt::join(extents, ", "));
    base = ex.declare_coords(root, "i", "b");
  }
  std::map<ir::NodeId, std::string> vector_leaf;   // leaf -> register array name
  std::vector<std::pair<ir::NodeId, Coords>> pending;
  // A node (of shape `lshape`, at `coords` of the loop's element) whose index advances by one
  // along the loop's N elements, all inside one row: the output's own shape and coordinates, or a
  // row vector, whose last axis is the output's and whose other coordinates are fixed along the
  // row: the output's own (or 0), which a hoisted expression rewrites to the row's base; an index
  // view's expressions are not.
  const auto advances_with_row = [&](const std::vector<std::int64_t>& lshape, const Coords& coords) {
    if (lshape == shape && coords == identity) return true;
    const auto plain = [&](const std::string& c) {
      return c == "0" || std::find(identity.begin(), identity.end(), c) != identity.end();
    };
    return rows && !lshape.empty() && coords.back() == identity.back() && lshape.back() == shape.back() &&
           std::all_of(coords.begin(), coords.end(), plain);
  };
  // The index of the node at `coords` for the loop's first element: the output's coordinates
  // replaced by the row's base (i's).
  const auto index_at_base = [&](ir::NodeId node, const Coords& coords) {
    if (bound.shape(node) == shape && coords == identity) return std::string("i");
    Coords at = coords;
    for (auto& x : at)
      for (std::size_t d = 0; d < rank; ++d)
        if (x == identity[d]) x = rows ? base[d] : "";
    return ex.flat_index(node, at);
  };
  ex.leaf_hook = [&](ir::NodeId leaf, const Coords& coords) -> std::optional<std::string> {
    if (vec == 1 || rank == 0) return std::nullopt;
    if (!advances_with_row(bound.shape(leaf), coords)) return std::nullopt;
    auto it = vector_leaf.find(leaf);
    if (it == vector_leaf.end()) {
      // Hoisted before the loop (vector loads of the leaf's first element).
      it = vector_leaf.emplace(leaf, fmt::format("vec_{}", leaf)).first;
      pending.emplace_back(leaf, coords);
    }
    std::string access = it->second + ".v[j]";
    const DType t = plan.ir().node(leaf).dtype;
    if (t == DType::f16 || t == DType::bf16) access = "kiln::to_float(" + access + ")";
    return access;
  };
  // The loop body is written to a separate writer so vector loads can be hoisted above it.
  CodeWriter loop;
  ExprEmitter body_ex(plan, loop);
  body_ex.leaf_hook = ex.leaf_hook;
  body_ex.dyn_dim_name = ex.dyn_dim_name;
  for (const auto& arg : kernel.args) {
    if (arg.kind == KernelArg::Kind::Buffer) body_ex.set_pointer(arg.buffer, UnitParts::pointer_name(plan, arg.buffer));
    if (arg.kind == KernelArg::Kind::Scalar) body_ex.set_scalar(arg.param, arg.name);
  }
  loop.line("const Index e = i + j;");
  Coords coords = body_ex.declare_coords(root, "e", "c");
  // A dropout whose flat index advances with the element's, its own or a row vector's (a dropout of
  // a broadcast bias), draws from a DropoutWords<N> made before the loop: a Philox block for four
  // adjacent elements, not one each (philox.cuh). Its first index is a multiple of N: i is, and
  // a row vector's is i's column (vectors never cross a row, whose length N divides) plus
  // multiples of the row length.
  std::map<std::string, std::string> dropout_words;   // seed@first -> DropoutWords variable
  std::vector<std::string> dropout_lines;
  body_ex.dropout_bits_hook = flat_lanes_dropout(
      plan,
      [&](ir::NodeId id, const Coords& at) -> std::optional<std::string> {
        if (!advances_with_row(bound.shape(id), at)) return std::nullopt;
        return index_at_base(id, at);
      },
      dropout_words, dropout_lines);
  // A stored root may also be a leaf that an anchor reads (a permuted operand): compute it here.
  for (const auto& s : kernel.stores)
    if (plan.ir().node(s.node).kind != ir::OpKind::Input) body_ex.compute_here(s.node);
  for (const auto& s : kernel.stores) {
    const std::string v = body_ex.value(s.node, coords);
    const DType t = bound.node(s.node).dtype;
    std::string stored = v;
    if (t == DType::f16 || t == DType::bf16) stored = fmt::format("kiln::from_float<{}>({})", storage_type(t), v);
    loop.line("out_{}.v[j] = {};", s.buffer, stored);
  }

  for (const auto& [leaf, coords_at] : pending) {   // each leaf's vector from its index at j = 0
    const int buffer = plan.leaves.at(leaf);
    w.line("const kiln::Vec<{0}, N> {1} = kiln::load_vec<{0}, N>({2} + {3});", storage_type(bound.node(leaf).dtype),
           vector_leaf[leaf], UnitParts::pointer_name(plan, buffer), index_at_base(leaf, coords_at));
  }
  for (const auto& l : dropout_lines) w.line("{}", l);
  std::set<int> declared;
  for (const auto& s : kernel.stores)
    if (declared.insert(s.buffer).second)
      w.line("kiln::Vec<{}, N> out_{};", storage_type(bound.node(s.node).dtype), s.buffer);
  w.raw_line("#pragma unroll");
  w.open_block("for (int j = 0; j < N; ++j)");
  w.append(loop.str());
  w.close_block();
  declared.clear();
  for (const auto& s : kernel.stores)
    if (declared.insert(s.buffer).second)
      w.line("kiln::store_vec<{0}, N>({1} + i, out_{2});", storage_type(bound.node(s.node).dtype),
             UnitParts::pointer_name(plan, s.buffer), s.buffer);
  w.close_block();
  w.close_block(";");
  unit.functors = w.str();

  const std::string numel_expr = [&] {
    if (!dynamic) return std::string("kNumel");
    std::string e = "Index(1)";
    for (std::size_t d = 0; d < rank; ++d) e += " * " + ex.extent(root, d);
    return e;
  }();
  if (dynamic) {
    // In the entry, dyn dims are the kernel's own parameters.
    std::string fixed;
    for (std::size_t d = 0; d < rank; ++d) fixed += " * static_cast<Index>(" + ex.extent(root, d) + ")";
    if (config.checked)   // [Note: row vectors checked at launch]
      unit.body = fmt::format("  kiln::elementwise_checked<Index, kVec>(Body{{{}}}, Index(1){}, Index({}));",
                              UnitParts::member_inits(plan, kernel), fixed, ex.extent(root, rank - 1));
    else
      unit.body = fmt::format("  kiln::elementwise<Index, kVec>(Body{{{}}}, Index(1){});",
                              UnitParts::member_inits(plan, kernel), fixed);
  } else {
    unit.body = fmt::format("  kiln::elementwise<Index, kVec>(Body{{{}}}, {});", UnitParts::member_inits(plan, kernel),
                            numel_expr);
  }
  // With dyn dims the grid follows the bound values, which the unit does not know.
  unit.launch_check(kernel, fmt::format("kiln::elementwise_geometry(kConfig, {}, {}, {})", dynamic ? "1" : "kNumel",
                                        dynamic || rank == 0 ? 1 : shape.back(), plan.target.sm_count),
                    !dynamic);
}

// ---------------------------------------------------------------- driver

std::vector<KernelSource> emit(const Plan& plan, const TemplateLibrary& templates) {
  const TemplateFile* entry_template = templates.find("entry/kernel.cu.in");
  KILN_ASSERT(entry_template != nullptr, "entry/kernel.cu.in is missing from the template library");
  // Once per plan, not per kernel: a plan may have as many kernels as the op has nodes.
  bool dropout = false;
  for (const auto& n : plan.ir().nodes) dropout |= n.kind == ir::OpKind::Dropout;
  std::vector<KernelSource> out;
  for (std::size_t k = 0; k < plan.kernels.size(); ++k) {
    const auto& kernel = plan.kernels[k];
    UnitParts unit;
    unit.op_has_dropout = dropout;
    std::visit(
        [&](const auto& config) {
          if constexpr (std::is_same_v<std::decay_t<decltype(config)>, std::monostate>) {
            KILN_ASSERT(false, "kernel {} ({}) has no config: its plan rule did not set one", kernel.entry,
                        kernel.template_name);
          } else {
            emit_family(plan, kernel, config, unit);
          }
        },
        kernel.config);
    const ir::NodeId where = kernel.anchor >= 0 ? kernel.anchor : kernel.stores[0].node;
    auto trimmed = [](std::string s) {
      while (!s.empty() && s.back() == '\n') s.pop_back();
      return s;
    };
    std::map<std::string, std::string> values = {
        {"kiln_version", generator_version()},
        {"op_name", plan.ir().op_name},
        {"kernel_index", std::to_string(k)},
        {"template_name", kernel.template_name},
        // The spec by its file name only: the source is the kernel's cache and pack key, so a
        // pack built from app/app.kiln serves a program that loads its copy from anywhere.
        {"spec_file", plan.ir().source ? std::filesystem::path(plan.ir().source->name).filename().string() : "<unknown>"},
        {"spec_line", std::to_string(plan.ir().node(where).loc.line)},
        {"reason", kernel.reason},
        {"includes", unit.includes},
        {"constants", trimmed(unit.constants)},
        {"functors", trimmed(unit.functors)},
        {"threads", launch_bounds(kernel)},
        {"cluster", kernel.cluster > 1 ? fmt::format("__cluster_dims__({}, 1, 1) ", kernel.cluster) : ""},
        {"entry", kernel.entry},
        {"params", UnitParts::param_list(plan, kernel)},
        {"body", unit.body},
        {"checks", unit.checks.empty() ? "" : "\n" + unit.checks},
    };
    KernelSource src;
    src.entry = kernel.entry;
    src.template_name = kernel.template_name;
    src.file_name = fmt::format("{}_k{}.cu", plan.ir().op_name, k);
    src.text = substitute(entry_template->name, entry_template->contents, values);
    src.grid = kernel.grid;
    src.block = kernel.block;
    src.shared_bytes = kernel.shared_bytes;
    src.args = kernel.args;
    out.push_back(std::move(src));
  }
  return out;
}

}  // namespace kiln
