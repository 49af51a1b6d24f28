// Every shipped spec (specs/ and specs/kernelbench/) with each of its dims, and each pair of them,
// marked `dyn`, as a user would write it: the op plans and emits for sm_90a, or a family refuses the dyn dim
// with an UnsupportedError located at the dim's declaration ("file:line:col: op NAME: dim 'X' is
// dyn, but ..."), or the checker refuses it with a located SpecError (a dim used as a value).
// Never an internal error, and never an unlocated one. NVRTC is not run here (the dyn tests of
// each family compile their units); this is the adversarial sweep over every op kiln ships.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "generator/emit/emit.h"
#include "generator/emit/templates.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/kernel_config.h"
#include "generator/plan/plan.h"
#include "generator/support/source.h"

namespace {

std::vector<std::filesystem::path> shipped_specs() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(KILN_SOURCE_DIR) / "specs"))
    if (e.path().extension() == ".kiln") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Each shipped spec file, parsed, with its path relative to the source tree.
void each_spec(const std::function<void(const std::string& name, const kiln::SpecFile& spec)>& visit) {
  for (const auto& path : shipped_specs()) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string name = std::filesystem::relative(path, KILN_SOURCE_DIR).string();
    visit(name, kiln::parse_spec(buffer.str(), name));
  }
}

// An op checked as the runtime's generic default checks it: generic_dims' dims made dyn.
std::shared_ptr<const kiln::ir::Ir> generic_ir(const kiln::SpecFile& spec, const std::string& op) {
  const auto checked = kiln::check_op(spec, op);
  const std::set<std::string> generic = kiln::generic_dims(*checked);
  auto ir = std::make_shared<kiln::ir::Ir>(*checked);
  for (auto& d : ir->dims) d.dynamic = d.dynamic || generic.count(d.name) > 0;
  return ir;
}

// The parsed file's text with "dyn " written before each name declared at (line, column), both
// 1-based (the places in the original text).
std::string with_dyn_at(const kiln::SourceFile& source, std::vector<std::pair<int, int>> places) {
  std::string text = source.text;
  std::sort(places.rbegin(), places.rend());   // last first: earlier places keep their offsets
  for (const auto& [line, column] : places)
    text.insert(source.line_starts.at(static_cast<std::size_t>(line - 1)) + static_cast<std::size_t>(column - 1),
                "dyn ");
  return text;
}

struct Sweep {
  std::map<std::string, int> outcomes;   // planned / refused by a family / refused by the checker
  int variants = 0;
};

// Every op of every shipped spec that checks and binds as shipped, with each set of `count` of its
// dims (declared with a value, neither dyn nor static) made dyn, planned and emitted for sm_90a.
void sweep(std::size_t count, Sweep& out) {
  static const kiln::TemplateLibrary templates;
  const auto target = kiln::Target::for_arch("sm_90a");
  each_spec([&](const std::string& name, const kiln::SpecFile& spec) {
    for (const auto& op : spec.op_names()) {
      std::shared_ptr<const kiln::ir::Ir> ir;
      try {   // ops that need a const or a dim from outside are left out (they fail without dyn too)
        ir = kiln::check_op(spec, op);
        kiln::ir::bind(ir, {});
      } catch (const kiln::Error&) {
        continue;
      }
      std::vector<const kiln::ir::DimDecl*> dims;
      for (const auto& dim : ir->dims)
        if (!dim.dynamic && !dim.fixed && dim.default_value) dims.push_back(&dim);
      std::vector<std::vector<const kiln::ir::DimDecl*>> sets;
      for (std::size_t a = 0; a < dims.size(); ++a) {
        if (count == 1) sets.push_back({dims[a]});
        else
          for (std::size_t b = a + 1; b < dims.size(); ++b) sets.push_back({dims[a], dims[b]});
      }
      for (const auto& set : sets) {
        ++out.variants;
        std::vector<std::pair<int, int>> places;
        std::string names;
        for (const auto* d : set) places.emplace_back(d->loc.line, d->loc.column), names += d->name + " ";
        CAPTURE(name);
        CAPTURE(op);
        CAPTURE(names);
        try {
          const auto changed = kiln::parse_spec(with_dyn_at(*spec.source, places), name);
          const auto checked = kiln::check_op(changed, op);
          for (const auto* d : set) CHECK(checked->find_dim(d->name)->dynamic);
          const auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(checked, {}));
          const auto plan = kiln::make_plan(bound, target);
          CHECK(kiln::emit(plan, templates).size() == plan.kernels.size());
          ++out.outcomes["planned"];
        } catch (const kiln::InternalError& e) {
          FAIL_CHECK("internal error: " << e.what());
        } catch (const kiln::UnsupportedError& e) {
          // Located at the refused dim's declaration in the changed text: 4 columns on ("dyn ") for
          // its own mark and for each other one before it on its line.
          const std::string what = e.what();
          bool located = false;
          for (const auto* d : set) {
            int shift = 0;
            for (const auto* o : set)
              if (o->loc.line == d->loc.line && o->loc.column <= d->loc.column) shift += 4;
            if (what.rfind(fmt::format("{}:{}:{}: op {}: dim '{}' is dyn, but ", name, d->loc.line,
                                       d->loc.column + shift, op, d->name), 0) == 0)
              located = true;
          }
          CHECK_MESSAGE(located, what);
          ++out.outcomes["refused by a template family"];
        } catch (const kiln::SpecError& e) {
          CHECK_MESSAGE(std::string(e.what()).find(name + ":") != std::string::npos, e.what());
          ++out.outcomes["refused by the checker"];
        }
      }
    }
  });
}

std::string summary(const Sweep& s) {
  std::string text;
  for (const auto& [what, count] : s.outcomes) text += fmt::format("{} {}; ", count, what);
  return text;
}

}  // namespace

TEST_CASE("every shipped spec with any one or two dims made dyn plans, or is refused at a dim's declaration") {
  for (const std::size_t count : {1, 2}) {
    Sweep s;
    sweep(count, s);
    MESSAGE(s.variants << " ops with " << count << " dims made dyn: " << summary(s));
    CHECK(s.variants > 500 * static_cast<int>(count));
    CHECK(s.outcomes["planned"] > 100);
  }
}

// [Note: dyn size classes]: a dim's thresholds depend on static dims, consts and the target, never
// on a dyn value, since the runtime learns them from the first plan of a bucket key. Every shipped
// op under the generic default (generic_dims' dims made dyn), planned at its declared values, then
// at the lowest and the highest value of each class of each dim with thresholds: within one key
// code of the dim (its bucket, and a row length's alignment: dyn_key_code), the same thresholds
// every time (a composition pass that fuses in some classes only, [Note: thresholds of a fusion
// decision], is where this broke first).
TEST_CASE("every shipped op under the generic default: a dim's thresholds do not depend on its value") {
  const auto target = kiln::Target::for_arch("sm_90a");
  int ops = 0, probes = 0;
  each_spec([&](const std::string& name, const kiln::SpecFile& spec) {
    for (const auto& op : spec.op_names()) {
      std::shared_ptr<const kiln::ir::Ir> ir;
      std::map<std::string, std::vector<std::int64_t>> want;
      std::map<std::string, std::int64_t> values;
      try {   // ops that need a const or a dim from outside are left out
        ir = generic_ir(spec, op);
        const auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, {}));
        want = kiln::make_plan(bound, target).dyn_thresholds;
        values = bound->dims;
      } catch (const kiln::InternalError&) {
        throw;
      } catch (const kiln::Error&) {
        continue;
      }
      ++ops;
      const std::set<std::string> row_lengths = kiln::dyn_row_lengths(*ir);
      for (const auto& [dim, thresholds] : want) {
        auto code = [&](std::int64_t v) { return kiln::dyn_key_code(v, row_lengths.count(dim) > 0); };
        std::map<std::int64_t, decltype(want)> first;   // key code -> the first plan's thresholds
        first[code(values.at(dim))] = want;
        std::vector<std::int64_t> at;
        for (int k = 0; k <= static_cast<int>(thresholds.size()); ++k) {
          at.push_back(kiln::dyn_class_low(thresholds, k));
          if (k < static_cast<int>(thresholds.size())) at.push_back(thresholds[static_cast<std::size_t>(k)] - 1);
        }
        for (const std::int64_t value : at) {
          CAPTURE(name);
          CAPTURE(op);
          CAPTURE(dim);
          CAPTURE(value);
          std::map<std::string, kiln::ir::DimValue> given;
          for (const auto& [d, v] : values) given[d] = {d == dim ? value : v, "test"};
          try {
            const auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, given));
            const auto got = kiln::make_plan(bound, target).dyn_thresholds;
            const auto [seen, fresh] = first.emplace(code(value), got);
            CHECK(got == seen->second);
            probes += !fresh;
          } catch (const kiln::InternalError&) {
            throw;
          } catch (const kiln::Error&) {   // a value the op's constraints or templates refuse
          }
        }
      }
    }
  });
  MESSAGE(ops << " ops, " << probes << " plans at class edges");
  CHECK(ops > 200);
  CHECK(probes > 100);
}

// A kernel as the comparison below sees it: its template and its config's variant or kind
// ("reduce_inner kInnerWarp", "gemm_tma Tma"), the choices a dyn dim must not change.
std::string kernel_choice(const kiln::PlannedKernel& k) {
  const std::string config = kiln::config_text(k.config);
  for (const char* field : {"variant=", "kind="})
    if (const auto at = config.find(field); at != std::string::npos)
      return k.template_name + " " + config.substr(at + std::strlen(field), config.find_first_of(" }", at) - at -
                                                                             std::strlen(field));
  return k.template_name;
}

// Shape-generic by default only where it costs nothing (issue 20): at its declared values every
// shipped op plans, under the generic default, the same kernels (templates and their variants or
// kinds, in order) as with every dim baked in. A dyn dim that changes a plan's families (an unfused norm, a block per row where
// the rows fill the GPU with warps) showed up as a slower row on the GPU first (H100, 2026-12-02:
// KernelBench's RMS norm over channels 1.45x, min over the last axis 1.08x); this finds the next
// one before a GPU does.
TEST_CASE("every shipped op plans the same kernels under the generic default as specialized") {
  const auto target = kiln::Target::for_arch("sm_90a");
  int ops = 0, generic = 0;
  each_spec([&](const std::string& name, const kiln::SpecFile& spec) {
    for (const auto& op : spec.op_names()) {
      std::vector<std::string> want, got;
      bool dyn = false;
      try {
        const auto baked = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), {}));
        for (const auto& k : kiln::make_plan(baked, target).kernels) want.push_back(kernel_choice(k));
        const auto ir = generic_ir(spec, op);
        dyn = !ir->dyn_dims().empty();
        const auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, {}));
        for (const auto& k : kiln::make_plan(bound, target).kernels) got.push_back(kernel_choice(k));
      } catch (const kiln::InternalError&) {
        throw;
      } catch (const kiln::Error&) {   // ops that need a const or a dim from outside
        continue;
      }
      CAPTURE(name);
      CAPTURE(op);
      CHECK(got == want);
      ++ops;
      generic += dyn;
    }
  });
  MESSAGE(ops << " ops, " << generic << " of them with dyn dims under the generic default");
  CHECK(generic > 150);
}
