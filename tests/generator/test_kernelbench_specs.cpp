// specs/kernelbench/: one op per KernelBench level-1 and level-2 problem, at the problem's default
// shapes (issue 21; specs/kernelbench/README.md says how they were written and checked). Each
// must check, bind at its default dims, plan and emit for sm_90a and sm_80. NVRTC is not run here:
// 200 ops of up to 19 kernels each would take CI many minutes; the GPU runs compile them.
#include <doctest/doctest.h>
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>
#include "generator/emit/emit.h"
#include "generator/emit/templates.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"

namespace {

std::vector<std::filesystem::path> level_specs(const char* level) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(KILN_SOURCE_DIR) / "specs" / "kernelbench" / level))
    if (e.path().extension() == ".kiln") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("specs/kernelbench: every level-1 and level-2 problem checks, plans and emits for sm_90a and sm_80") {
  static const kiln::TemplateLibrary templates;
  for (const char* level : {"level1", "level2"}) {
    const auto files = level_specs(level);
    CAPTURE(level);
    CHECK(files.size() == 100);   // one spec per problem
    for (const auto& file : files) {
      CAPTURE(file.filename().string());
      const auto spec = kiln::load_spec_file(file.string());
      const auto ops = kiln::check_all(spec);
      CHECK(ops.size() == 1);   // one op per problem
      for (const auto& ir : ops) {
        const auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, {}));   // default dims
        for (const char* arch : {"sm_90a", "sm_80"}) {
          CAPTURE(arch);
          const auto plan = kiln::make_plan(bound, kiln::Target::for_arch(arch));
          CHECK_FALSE(plan.kernels.empty());
          CHECK(kiln::emit(plan, templates).size() == plan.kernels.size());
        }
      }
    }
  }
}
