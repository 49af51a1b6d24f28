// The look-back scan's zeroed workspace through the public API, on any machine: the
// executable's plan names the memset step (the runtime issues it with cuMemsetD32Async on the
// launch stream before the kernel), the workspace is part of the scratch the runtime
// allocates, and the unit calls scan_rows_lookback. The GPU suite runs the op itself
// (cumsum_long_rows in specs/scans.kiln).
#include <doctest/doctest.h>

#include <string>

#include "kiln/kiln.h"

TEST_CASE("runtime: a look-back scan plans its workspace zeroing before the launch") {
  kiln::Options options;
  options.arch = "sm_90";
  options.disk_cache = false;
  kiln::Runtime rt(options);
  const auto op = rt.load_file(std::string(KILN_SOURCE_DIR) + "/specs/scans.kiln").op("cumsum_long_rows");
  kiln::Bindings two_rows;
  two_rows.dims = {{"B", 2}, {"N", 4194304}};
  const auto few = op.specialize(two_rows);
  const std::string plan = few.plan_text();
  CHECK(plan.find("zeroes #") != std::string::npos);
  CHECK(plan.find("cuMemsetD32Async") != std::string::npos);
  CHECK(few.source().find("kiln::scan_rows_lookback<") != std::string::npos);
  // Many rows: a block per row, nothing to zero.
  kiln::Bindings many_rows;
  many_rows.dims = {{"B", 4096}, {"N", 4096}};
  const auto many = op.specialize(many_rows);
  CHECK(many.plan_text().find("zeroes") == std::string::npos);
  CHECK(many.source().find("kiln::scan_rows_block<") != std::string::npos);
}
