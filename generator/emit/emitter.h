// Internals of the emitter shared by the per-template emitters (emit_*.cpp).
#pragma once

#include <string>

#include "generator/emit/code_writer.h"
#include "generator/emit/emit.h"
#include "generator/emit/expr_emitter.h"

namespace kiln {

// The pieces of one translation unit that fill templates/entry/kernel.cu.in.
struct UnitParts {
  std::string includes;    // #include lines
  std::string constants;   // `using Index`, constexpr shapes and parameters
  std::string functors;    // generated structs (bodies, prologues, epilogues)
  std::string body;        // statements of the extern "C" entry
  // static_asserts after the entry: the planner's launch and assumptions against the template's
  // own constants (see launch_check); one per line.
  std::string checks;
  bool op_has_dropout = false;   // some node of the op is a dropout (set once per plan by emit())

  // Entry parameters, from the kernel's argument list.
  static std::string param_list(const Plan& plan, const PlannedKernel& kernel);
  // The C++ name of a buffer's pointer ("in_x", "out_y", "tmp_h", "ws_partial").
  static std::string pointer_name(const Plan& plan, int buffer);
  static std::string buffer_comment(const Plan& plan, int buffer);
  // Declares one member per kernel argument and tells `ex` their names.
  static void declare_members(const Plan& plan, const PlannedKernel& kernel, CodeWriter& w, ExprEmitter& ex);
  // "in_x, out_y, alpha": a brace initializer for a functor declared by declare_members.
  static std::string member_inits(const Plan& plan, const PlannedKernel& kernel);
  // "constexpr kiln::XConfig kConfig = kiln::XConfig{...};": the planner's config in the unit.
  template <class Config>
  static std::string config_line(const Config& config) {
    return "constexpr " + std::string("kiln::") + Config::kName + " kConfig = " + config.literal() +
           ";  // the planner's config";
  }
  // Appends a static_assert that `geometry` (a C++ expression of type kiln::launch::Geometry,
  // evaluated by the unit's own copy of the family's rule) gives the block and shared memory
  // the planner launches with, and the grid too when `with_grid` (false where a dyn dim makes
  // it a run-time value).
  void launch_check(const PlannedKernel& kernel, const std::string& geometry, bool with_grid = true);
};

// "[8, 16, 64]": a bound shape in generated comments.
std::string dims_text(const std::vector<std::int64_t>& shape);
// "[B, 16, 64]": a node's bound shape with each dyn extent by its name (the source must not hold
// the value one call bound).
std::string dims_text(const Plan& plan, ir::NodeId node);

// A kernel with a dyn extent (PlannedKernel::dyn_outer: a memory family's rows, a matmul's M or
// batches) computes it at the top of its body from its dim_ arguments:
// "  const Index rows = static_cast<Index>(dim_B) * Index(12);  // dyn rows: this launch's\n" (`type`
// a one-word type: Index, whose width the executable's key holds);
// "" for a kernel without one.
std::string dyn_extent_statement(const Plan& plan, const PlannedKernel& kernel, const char* type, const char* name,
                                 const char* what);
// The same for other factors (a memory-family kernel's dyn_len); "" when there are none.
std::string dyn_extent_statement(const Plan& plan, const std::vector<ir::DimExpr>& factors, const char* type,
                                 const char* name, const char* what);
// The product of `factors` as an expression of `type` ("static_cast<Index>(dim_L) * Index(4)"):
// dyn dims read from dim_ arguments or functor members of those names, static ones as literals.
std::string dyn_extent_expression(const Plan& plan, const std::vector<ir::DimExpr>& factors, const char* type);

// The node an anchor kernel stores: the end of its fused epilogue chain, or the anchor itself.
ir::NodeId store_node(const PlannedKernel& kernel);
// Whether the chain from `anchor` to `end` (the value a kernel stores) draws a dropout mask.
bool chain_has_dropout(const Plan& plan, ir::NodeId end, ir::NodeId anchor);
// struct Store { ...; Out operator()(<result_type> result, Index flat) const; }: the anchor's
// value `result` at output index `flat` through the fused epilogue chain, as stored (a
// functor the memory-bound templates call per output element). With `pooled` > 0 (the pooling
// template) it has a Lead (write_lead) for the axes before the last `pooled`, and its call takes
// the step's `const Lead& at`. With `flat_lanes` (a template that calls kiln::store_lanes: the row
// norms) and a dropout in the chain, also the lanes form ([Note: flat lanes] in common.cuh): N
// adjacent outputs at once, a dropout over them drawing ceil(N / 4) Philox blocks.
void write_store(const Plan& plan, const PlannedKernel& kernel, const std::string& result_type, CodeWriter& w,
                 std::size_t pooled = 0, bool flat_lanes = false);

// The head of a template unit: `#include "kiln/<header>"` (and philox.cuh where the op has a
// dropout) into unit.includes, `using Index = ...;` into `c`.
void begin_unit(const PlannedKernel& kernel, const char* header, UnitParts& unit, CodeWriter& c);
// The stored tensor a template streams for the anchor's operand (Plan::streamed_leaf); an
// UnsupportedError, located, when the operand reads none of its size.
ir::NodeId primary_leaf(const Plan& plan, ir::NodeId operand);
// The pooling template's per-step part of a functor: `struct Lead { Index <prefix>0, ...; };` and
// `Lead lead(Index plane) const`, the coordinates of `node`'s axes before its last `inner` from a
// thread step's plane (ExprEmitter::lead_coords), which the template computes once a step and
// passes to each call. Returns the members as the call reads them (`at.<prefix>d`).
Coords write_lead(ExprEmitter& ex, CodeWriter& w, const Plan& plan, ir::NodeId node, const char* prefix,
                  std::size_t inner);
// struct Load { ...; C operator()(T elem, Index flat[, const Lead& at]) const; }: the anchor's operand at flat index
// `flat` of its shape, `elem` being the streamed tensor `primary`'s element there (emit_memory.cpp;
// the memory-bound and pooling templates call it per loaded element). `pooled`: as write_store's.
void write_load(const Plan& plan, const PlannedKernel& kernel, ir::NodeId primary, CodeWriter& w,
                std::size_t pooled = 0);
// write_load, a blank line and write_store(result_type): the two functors of a streaming template.
std::string load_store_functors(const Plan& plan, const PlannedKernel& kernel, ir::NodeId primary,
                                const std::string& result_type, std::size_t pooled = 0, bool flat_lanes = false);

// One emitter per family config (emit.cpp, emit_memory.cpp, emit_contraction.cpp, ...): the
// emitter is chosen by overload on the planner's config, so a family without one does not build.
void emit_family(const Plan& plan, const PlannedKernel& kernel, const ElementwiseConfig& config, UnitParts& unit);
void emit_family(const Plan& plan, const PlannedKernel& kernel, const ReduceConfig& config, UnitParts& unit);        // emit_memory.cpp
void emit_family(const Plan& plan, const PlannedKernel& kernel, const ReduceFinishConfig& config, UnitParts& unit);  // emit_memory.cpp
void emit_family(const Plan& plan, const PlannedKernel& kernel, const ReduceChainConfig& config, UnitParts& unit);   // emit_memory.cpp
void emit_family(const Plan& plan, const PlannedKernel& kernel, const ScanConfig& config, UnitParts& unit);          // emit_memory.cpp
void emit_family(const Plan& plan, const PlannedKernel& kernel, const RownormConfig& config, UnitParts& unit);       // emit_memory.cpp
void emit_family(const Plan& plan, const PlannedKernel& kernel, const GemmConfig& config, UnitParts& unit);   // emit_contraction.cpp
void emit_family(const Plan& plan, const PlannedKernel& kernel, const ConvConfig& config, UnitParts& unit);   // emit_contraction.cpp
void emit_family(const Plan& plan, const PlannedKernel& kernel, const PoolConfig& config, UnitParts& unit);   // emit_pool.cpp
void emit_family(const Plan& plan, const PlannedKernel& kernel, const AttentionConfig& config, UnitParts& unit);   // emit_contraction.cpp

}  // namespace kiln
