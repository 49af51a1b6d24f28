// Helpers shared by the memory-bound planner tests (test_memory_plan.cpp,
// test_scan_reduce_plan.cpp) and the tuned picks' tests (test_*_picks.cpp): plan a spec of specs/
// or given as text, emit its units.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <variant>
#include <string>
#include <vector>

#include "generator/emit/emit.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "generator/emit/templates.h"
#include "runtime/nvrtc.h"

namespace memory_plan_test {

struct Case {
  std::string file;                       // specs/<file>.kiln
  std::string op;
  std::string tag;                        // golden name suffix
  std::map<std::string, std::int64_t> dims;   // empty: defaults
  kiln::Consts consts;
};

inline kiln::Plan plan_of(const Case& c, const kiln::Target& target) {
  // Named by its repository path, so goldens do not depend on where the checkout lives.
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/specs/" + c.file + ".kiln");
  std::stringstream text;
  text << in.rdbuf();
  auto spec = kiln::parse_spec(text.str(), "specs/" + c.file + ".kiln");
  auto ir = kiln::check_op(spec, c.op, c.consts);
  std::map<std::string, kiln::ir::DimValue> given;
  for (const auto& [name, value] : c.dims) given[name] = {value, "test"};
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, given));
  return kiln::make_plan(bound, target);
}
inline kiln::Plan plan_of(const Case& c, const std::string& arch = "sm_90") { return plan_of(c, kiln::Target::for_arch(arch)); }

// The plan of op `op` of a spec given as text (named `file` in its messages) for `arch`, with
// `dims` bound (the rest at their defaults).
inline kiln::Plan plan_text_at(const std::string& text, const std::string& file, const std::string& op,
                               const std::map<std::string, std::int64_t>& dims, const std::string& arch) {
  auto spec = kiln::parse_spec(text, file);
  std::map<std::string, kiln::ir::DimValue> given;
  for (const auto& [name, value] : dims) given[name] = {value, "test"};
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), given));
  return kiln::make_plan(bound, kiln::Target::for_arch(arch));
}

// The plan of op `op` of a spec given as text (named `file`) at its default dims for `arch`, with
// `picks` as the target's tuned picks ([Note: tuned picks] in plan.h).
inline kiln::Plan plan_with_picks(const std::string& text, const std::string& file, const std::string& op,
                                  const std::map<int, kiln::TunedPick>& picks, const std::string& arch) {
  auto spec = kiln::parse_spec(text, file);
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), {}));
  kiln::Target target = kiln::Target::for_arch(arch);
  target.tuned_picks = picks;
  return kiln::make_plan(bound, target);
}

// The plan's first kernel of template `name` (a test failure when it has none).
inline const kiln::PlannedKernel& kernel_of(const kiln::Plan& plan, const std::string& name) {
  for (const auto& k : plan.kernels)
    if (k.template_name == name) return k;
  FAIL("no " << name << " kernel in the plan");
  return plan.kernels.front();
}

// A tuned pick's text parses back to the pick, and parse_pick reads it as the pick's family.
template <class P>
void check_pick_round_trip(const P& p) {
  CAPTURE(p.text());
  REQUIRE(P::parse(p.text()).has_value());
  CHECK(*P::parse(p.text()) == p);
  const auto any = kiln::parse_pick(p.text());
  REQUIRE(any.has_value());
  CHECK(std::holds_alternative<P>(*any));
}

// The plan's one tunable: `candidates` picks of family P, the heuristic's once among them and
// equal to `heuristic`.
template <class P>
const kiln::Plan::Tunable& the_tunable(const kiln::Plan& plan, std::size_t candidates, const P& heuristic) {
  REQUIRE(plan.tunables.size() == 1);
  const auto& t = plan.tunables[0];
  CHECK(t.candidates.size() == candidates);
  CHECK(std::count(t.candidates.begin(), t.candidates.end(), t.heuristic) == 1);
  CHECK(std::get<P>(t.heuristic) == heuristic);
  return t;
}

// What planning op `op` of `text` (as plan_text_at) refuses with: the UnsupportedError's message,
// or "planned".
inline std::string refusal_of(const std::string& text, const std::string& file, const std::string& op,
                              const std::map<std::string, std::int64_t>& dims, const std::string& arch = "sm_90a") {
  try {
    plan_text_at(text, file, op, dims, arch);
  } catch (const kiln::UnsupportedError& e) {
    return e.what();
  }
  return "planned";
}

// Each dyn dim of op `op` of `text` bound to `value`.
inline std::map<std::string, std::int64_t> dyn_dims_at(const std::string& text, const std::string& file,
                                                       const std::string& op, std::int64_t value) {
  std::map<std::string, std::int64_t> dims;
  const auto ir = kiln::check_op(kiln::parse_spec(text, file), op);   // held: dims lives in it
  for (const auto& d : ir->dims)
    if (d.dynamic) dims[d.name] = value;
  return dims;
}

// The plan of op `op` of a spec given as text, at its default dims.
inline kiln::Plan plan_of_text(const std::string& text, const std::string& op) {
  auto spec = kiln::parse_spec(text, op + ".kiln");
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), {}));
  return kiln::make_plan(bound, kiln::Target::for_arch("sm_90"));
}

inline const kiln::TemplateLibrary& library() {
  static const kiln::TemplateLibrary lib;
  return lib;
}

inline std::vector<kiln::KernelSource> sources_of(const kiln::Plan& plan) { return kiln::emit(plan, library()); }

// The NVRTC request for one generated unit, against the template library.
inline kiln::CompileRequest compile_request(const kiln::KernelSource& src, const std::string& arch) {
  kiln::CompileRequest r;
  r.source = src.text;
  r.file_name = src.file_name;
  r.arch = arch;
  r.templates = &library();
  return r;
}

// Checks that every unit of `plan` compiles with NVRTC for `arch`; returns how many there are.
// Whether NVRTC can be loaded; says why the calling test skips its compiles when it cannot.
inline bool nvrtc_or_skip() {
  std::string why;
  if (kiln::nvrtc_available(&why)) return true;
  MESSAGE("skipped: NVRTC not loadable (" << why << ")");
  return false;
}

// Compiles every request with NVRTC (two jobs) and checks that each gave a cubin; names[i] says
// which unit request i is.
inline void check_all_compile(const std::vector<kiln::CompileRequest>& reqs, const std::vector<std::string>& names) {
  const auto results = kiln::compile_all(reqs, 2);
  REQUIRE(results.size() == reqs.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(!results[i].cubin.empty());
  }
}

// Compiles with NVRTC, for each of `archs` (sm_90a and sm_80 unless given), every unit of the plan
// of each op in `ops` under each candidate pick of its first tunable (`plan_with(op, picks, arch)`
// plans it); returns the units.
template <class PlanWith>
inline std::size_t compile_every_candidate(const PlanWith& plan_with, std::initializer_list<const char*> ops,
                                           std::initializer_list<const char*> archs = {"sm_90a", "sm_80"}) {
  std::vector<kiln::CompileRequest> reqs;
  std::vector<std::string> names;
  for (const char* arch : archs)
    for (const char* op : ops) {
      const auto t = plan_with(op, std::map<int, kiln::TunedPick>{}, arch).tunables.at(0);
      for (const auto& pick : t.candidates)
        for (const auto& s : sources_of(plan_with(op, {{t.anchor, {pick, "test"}}}, arch))) {
          reqs.push_back({s.text, s.file_name, arch, {}, &library()});
          names.push_back(std::string(arch) + " " + op + " " + kiln::pick_text(pick) + " " + s.entry);
        }
    }
  check_all_compile(reqs, names);
  return reqs.size();
}

inline int check_units_compile(const kiln::Plan& plan, const std::string& arch) {
  int units = 0;
  for (const auto& src : sources_of(plan)) {
    CAPTURE(arch);
    CAPTURE(src.file_name);
    CHECK_NOTHROW(CHECK(!kiln::compile(compile_request(src, arch)).cubin.empty()));
    ++units;
  }
  return units;
}

inline std::string all_sources(const std::vector<kiln::KernelSource>& sources) {
  std::string s;
  for (const auto& k : sources) s += "// ==== " + k.file_name + "\n" + k.text + "\n";
  return s;
}

inline bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

}  // namespace memory_plan_test
