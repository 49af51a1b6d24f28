// Every op in specs/ that kiln's templates cover, run on the GPU at several
// shapes and compared with the float64 reference. Ops no template covers yet are
// listed, not failed.
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "generator/frontend.h"
#include "gpu_test_util.h"

namespace kiln::test {

namespace {

// Shape sets derived from the op's default dims.
std::vector<std::pair<std::string, std::map<std::string, std::int64_t>>> shape_sets(const ir::Ir& ir) {
  static const std::int64_t kOdd[] = {7, 33, 127, 1001};
  std::map<std::string, std::int64_t> ones, small, odd, defaults;
  int i = 0;
  for (const auto& d : ir.dims) {
    const std::int64_t def = d.default_value.value_or(64);
    ones[d.name] = 1;
    small[d.name] = std::min<std::int64_t>(def, 5);
    odd[d.name] = std::min<std::int64_t>(def, kOdd[i++ % 4]);
    defaults[d.name] = def;
  }
  return {{"ones", ones}, {"small", small}, {"odd", odd}, {"default", defaults}};
}

}  // namespace

TEST_CASE("gpu: every covered spec matches the float64 reference") {
  KILN_REQUIRE_GPU();
  Options options;
  options.disk_cache = false;
  Runtime rt(options);
  int checked = 0, failed = 0;
  std::string uncovered;
  for (const auto& file : spec_files()) {
    const SpecFile spec = load_spec_file(file);
    for (const auto& op : spec.op_names()) {
      auto ir = kiln::check_op(spec, op);
      for (const auto& [label, dims] : shape_sets(*ir)) {
        std::map<std::string, ir::DimValue> given;
        for (const auto& [k, v] : dims) given[k] = {v, label};
        std::optional<ir::BoundIr> bound;
        try {
          bound.emplace(ir::bind(ir, given));
        } catch (const Error& e) {
          MESSAGE(op << " @" << label << ": shape not valid for this op (" << std::string(e.what()) << ")");
          continue;
        }
        if (ref::work_estimate(*bound) > 4e9) {
          MESSAGE(op << " @" << label << ": too large for the CPU reference; covered by bench/ against PyTorch");
          continue;
        }
        Bindings b;
        b.dims = dims;
        OpCheckOptions opts;
        opts.seed = 1234 + static_cast<std::uint64_t>(checked);
        OpCheck r;
        try {
          r = run_and_check(rt, file, op, b, opts);
        } catch (const std::exception& e) {
          ++failed;
          std::printf("gpu-check %-28s %-8s FAIL threw: %s\n", op.c_str(), label.c_str(), e.what());
          FAIL_CHECK(op << " @" << label << " threw: " << std::string(e.what()));
          continue;
        }
        if (!r.covered) {
          if (uncovered.find(op + " ") == std::string::npos) uncovered += op + " ";
          break;
        }
        ++checked;
        std::string errors;
        for (const auto& c : r.outputs)
          errors += fmt::format(" max_abs={:.3g} max_rel={:.3g} norm_rel={:.3g}", c.max_abs_error, c.max_rel_error,
                                c.norm_rel_error);
        std::printf("gpu-check %-28s %-8s %-4s%s  %.3f ms\n", op.c_str(), label.c_str(), r.ok ? "ok" : "FAIL",
                    errors.c_str(), r.median_ms());
        if (!r.ok) {
          ++failed;
          for (const auto& c : r.outputs)
            if (!c.ok) FAIL_CHECK(op << " @" << label << ": " << c.detail);
        }
      }
    }
  }
  std::printf("gpu-check summary: %d checks, %d failed; not covered by a template yet: %s\n", checked, failed,
              uncovered.empty() ? "(none)" : uncovered.c_str());
  CHECK(checked > 0);
}

}  // namespace kiln::test
