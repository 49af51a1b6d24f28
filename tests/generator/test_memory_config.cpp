// The typed configs of the memory-bound families (templates/kiln/config/{reduce,scan,rownorm}.h):
// the host half KILN_CONFIG gives (to_string, ==, hash, literal), and that every generated unit
// of each kind carries its config and the static_asserts holding the planner to the template
// library's rules.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "memory_plan_util.h"

namespace {

using namespace memory_plan_test;

// Equal configs print, compare and hash the same; `changed` (one field differs) does not.
template <class Config>
void check_identity(const Config& base, const Config& changed) {
  const Config copy = base;
  CHECK(copy == base);
  CHECK(copy.hash() == base.hash());
  CHECK(copy.to_string() == base.to_string());
  CHECK_FALSE(changed == base);
  CHECK(changed.hash() != base.hash());
  CHECK(changed.to_string() != base.to_string());
  CHECK(base.to_string().rfind(std::string(Config::kName) + "{", 0) == 0);
}

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("memory configs: to_string, ==, hash, literal") {
  kiln::ReduceConfig reduce;
  reduce.variant = kiln::ReduceVariant::kOuterV4;
  reduce.outer = 128;
  reduce.red = 4096;
  reduce.inner = 4095;
  reduce.threads = 1024;
  reduce.unroll = 2;
  reduce.vec = 4;
  reduce.splits = 4;
  reduce.chunk = 1024;
  CHECK(reduce.to_string() == "ReduceConfig{variant=kOuterV4 outer=128 red=4096 inner=4095 threads=1024 unroll=2 vec=4 "
                              "cols=1 splits=4 chunk=1024 acc_bytes=4 split_sms=0 waves=2}");
  CHECK(reduce.literal().rfind("kiln::ReduceConfig{/*variant=*/kiln::ReduceVariant::kOuterV4, /*outer=*/128,", 0) == 0);
  auto reduce2 = reduce;
  reduce2.chunk = 1025;
  check_identity(reduce, reduce2);
  reduce2 = reduce;
  reduce2.variant = kiln::ReduceVariant::kOuterRows;   // an enum field counts too
  check_identity(reduce, reduce2);

  kiln::ReduceFinishConfig finish;
  finish.n_out = 524160;
  finish.splits = 4;
  auto finish2 = finish;
  finish2.acc_bytes = 8;
  check_identity(finish, finish2);

  kiln::ReduceChainConfig chain;
  chain.variant = kiln::ReduceChainVariant::kOuter;
  chain.stage = 1;
  chain.stages = 2;
  auto chain2 = chain;
  chain2.stage = 0;
  check_identity(chain, chain2);
  CHECK(chain.literal().find("kiln::ReduceChainVariant::kOuter") != std::string::npos);

  kiln::ScanConfig scan;
  scan.variant = kiln::ScanVariant::kStridedTotals;
  scan.chunks = 8;
  auto scan2 = scan;
  scan2.variant = kiln::ScanVariant::kStrided;   // the follow-up of a chunked scan: same numbers, other kernel
  check_identity(scan, scan2);
  CHECK(scan.to_string().find("variant=kStridedTotals") != std::string::npos);

  kiln::RownormConfig rownorm;
  rownorm.variant = kiln::RownormVariant::kBlockRows;
  rownorm.threads = rownorm.group = 512;
  rownorm.items = 16;
  auto rownorm2 = rownorm;
  rownorm2.items = 32;
  check_identity(rownorm, rownorm2);
}

TEST_CASE("memory configs: the rules the planner and the templates share") {
  // scan.cuh's look-back workspace layout is the planner's: the statuses, then the tile counter.
  // [Note: look-back tile status]: an 8-byte word a tile for 4-byte values, else flags and two
  // value arrays.
  CHECK(kiln::launch::scan_lookback_status_bytes(4, 4) == 32);
  CHECK(kiln::launch::scan_lookback_status_bytes(6, 4) == 48);   // 6 tiles, 16-byte multiple
  CHECK(kiln::launch::scan_lookback_status_bytes(4, 8) ==
        kiln::launch::scan_lookback_flag_bytes(4) + 2 * kiln::launch::scan_lookback_value_bytes(4, 8));
  CHECK(kiln::launch::scan_lookback_status_bytes(4, 8) == 16 + 2 * 32);
  CHECK(kiln::launch::scan_lookback_workspace_bytes(2, 4096, 2048, 4) == 32 + 16);
  CHECK(kiln::launch::scan_lookback_workspace_bytes(2, 4096 + 1, 2048, 4) == 48 + 16);
  CHECK(kiln::launch::scan_lookback_workspace_bytes(2, 4096, 2048, 8) == 16 + 2 * 32 + 16);
  // [Note: the warp-specialized look-back]: a tile of converted values fills a stage.
  CHECK(kiln::launch::scan_lookback_vecs(4, 4) == 8);   // f32
  CHECK(kiln::launch::scan_lookback_vecs(2, 4) == 4);   // f16 / bf16, f32 values
  CHECK(kiln::launch::scan_lookback_vecs(8, 8) == 8);   // f64
  CHECK(kiln::launch::scan_lookback_vecs(1, 8) == 1);   // i8 / bool, i64 values
  for (const auto& [elem, value] : {std::pair{4, 4}, std::pair{2, 4}, std::pair{8, 8}, std::pair{4, 8}})
    CHECK(kiln::launch::scan_rows_tile(kiln::launch::kScanLookbackThreads, kiln::launch::scan_lookback_vecs(elem, value),
                                       elem) * value == kiln::launch::kScanLookbackStageBytes);
  CHECK(kiln::launch::scan_rows_tile(256, 2, 4) == 2048);
  CHECK(kiln::launch::scan_rows_tile(256, 2, 2) == 4096);
  CHECK(kiln::launch::rownorm_row_in_registers(8192, 512, 16));
  CHECK_FALSE(kiln::launch::rownorm_row_in_registers(8193, 512, 16));
  // A config's geometry is its variant's rule.
  kiln::RownormConfig strided;
  strided.variant = kiln::RownormVariant::kStrided;
  strided.outer = 3;
  strided.inner = 1000;
  CHECK(kiln::rownorm_geometry(strided).grid.x == kiln::launch::rownorm_strided_geometry(3, 1000, 256).grid.x);
}

TEST_CASE("memory configs: every generated unit carries its config and the launch static_assert") {
  struct Kind {
    Case c;
    std::string config;     // the config type every kernel of the plan carries, in order
    std::string geometry;   // the rule the launch check of its first kernel evaluates
  };
  const Kind kinds[] = {
      // split v4 reduction + reduce_finish: the partial states are sized by the combiner's Acc
      {{"min_reduce", "min_reduce", "", {}, {}}, "ReduceConfig", "kiln::reduce_geometry(kConfig)"},
      {{"reductions", "sum_outer_inner", "", {}, {}}, "ReduceChainConfig", "kiln::reduce_chain_geometry(kConfig)"},
      {{"scans", "cumsum_long_rows", "", {}, {}}, "ScanConfig", "kiln::scan_geometry(kConfig, sizeof(float), sizeof(C))"},
      {{"scans", "cumsum_mid_exclusive", "", {}, {}}, "ScanConfig", "kiln::scan_geometry(kConfig, sizeof(float), sizeof(C))"},
      {{"scans", "cumsum_reverse", "", {}, {}}, "ScanConfig", "kiln::scan_geometry(kConfig, sizeof(float), sizeof(C))"},
  };
  for (const auto& k : kinds) {
    CAPTURE(k.c.op);
    const auto plan = plan_of(k.c);
    const auto srcs = sources_of(plan);
    REQUIRE(srcs.size() == plan.kernels.size());
    for (std::size_t i = 0; i < srcs.size(); ++i) {
      // The planner's config is in the unit, and the unit checks the planner's launch against it.
      CHECK(contains(srcs[i].text, "constexpr kiln::"));
      CHECK(contains(srcs[i].text, " kConfig = kiln::"));
      CHECK(contains(srcs[i].text, "static_assert(kiln::launch::same_launch("));
    }
    CHECK(contains(srcs[0].text, "constexpr kiln::" + k.config + " kConfig"));
    CHECK(contains(srcs[0].text, "static_assert(kiln::launch::same_launch(" + k.geometry + ", true, "));
  }
  // The split reduction: the workspace and the Acc are checked in the partials kernel, the Acc
  // again in reduce_finish.
  const auto split = sources_of(plan_of({"min_reduce", "min_reduce", "", {}, {}}));
  REQUIRE(split.size() == 2);
  CHECK(contains(split[0].text, "static_assert(sizeof(Op::Acc) == kConfig.acc_bytes,"));
  CHECK(contains(split[0].text, "static_assert(kiln::reduce_geometry(kConfig).workspace_bytes == "));
  CHECK(contains(split[1].text, "constexpr kiln::ReduceFinishConfig kConfig"));
  CHECK(contains(split[1].text, "static_assert(sizeof(Op::Acc) == kConfig.acc_bytes,"));
  // The look-back scan checks its workspace layout; a chunked strided scan its chunk totals (both kernels).
  const auto lookback = sources_of(plan_of({"scans", "cumsum_long_rows", "", {}, {}}));
  CHECK(count_of(lookback[0].text, ".workspace_bytes == ") == 1);
  const auto chunked = sources_of(plan_of({"scans", "cumsum_mid_exclusive", "", {}, {}}));
  REQUIRE(chunked.size() == 2);
  CHECK(count_of(chunked[0].text, ".workspace_bytes == ") == 1);
  CHECK(count_of(chunked[1].text, ".workspace_bytes == ") == 1);
  // Softmax: rows (a warp or a block per row) and strided.
  for (const char* axis : {"1", "0"}) {
    const auto plan = plan_of_text(std::string("op s {\n  dims B = 64, N = 1000\n  in x: f32[B, N]\n  out y = softmax(x, axis=") +
                                       axis + ")\n}\n",
                                   "s");
    const auto src = sources_of(plan)[0].text;
    CHECK(contains(src, "constexpr kiln::RownormConfig kConfig"));
    CHECK(contains(src, "static_assert(kiln::launch::same_launch(kiln::rownorm_geometry(kConfig), true, "));
  }
}
