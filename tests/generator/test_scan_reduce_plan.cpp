// Plans and generated sources of the strided-axis scan (scan_strided[_totals]), the
// decoupled look-back scan (scan_rows with a zeroed workspace) and reductions over
// non-adjacent axes (reduce_chain): plan-text + source goldens for every such op in specs/
// at its defaults and an awkward shape, FileCheck-style asserts on each choice, and every
// unit compiled by NVRTC for sm_80 and sm_90 (skipped with a message without NVRTC).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "generator/emit/emit.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "generator/emit/templates.h"
#include "golden.h"
#include "memory_plan_util.h"
#include "runtime/nvrtc.h"

namespace {

using namespace memory_plan_test;

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"scans", "cumsum_cols", "default", {}, {}},
      {"scans", "cumsum_cols", "odd", {{"R", 7}, {"C", 3}}, {}},
      {"scans", "cumsum_mid_exclusive", "default", {}, {}},
      {"scans", "cumsum_mid_exclusive", "odd", {{"B", 1}, {"M", 1001}, {"N", 5}}, {}},
      {"scans", "cummin_mid_reverse", "default", {}, {}},
      {"scans", "cumprod_cols_exclusive_reverse", "default", {}, {}},
      {"scans", "cummax_cols_epilogue", "default", {}, {}},
      {"scans", "cumsum_long_rows", "default", {}, {}},
      {"scans", "cumsum_long_rows", "odd", {{"B", 3}, {"N", 100003}}, {}},
      {"scans", "cumsum_dropout", "default", {}, {}},
      {"scans", "cumsum_dropout", "odd", {{"B", 5}, {"N", 1000}}, {}},
      {"reductions", "sum_outer_inner", "default", {}, {}},
      {"reductions", "sum_outer_inner", "odd", {{"A", 7}, {"B", 1}, {"C", 33}}, {}},
      {"reductions", "mean_outer_inner_keepdims", "default", {}, {}},
      {"reductions", "max_nonadjacent", "default", {}, {}},
      {"reductions", "min_0_2", "default", {}, {}},
      {"reductions", "logsumexp_nonadjacent", "default", {}, {}},
      {"reductions", "sumsq_1_3", "default", {}, {}},
  };
  return all;
}

}  // namespace

TEST_CASE("strided scans, look-back scans, chained reductions: plan text and source goldens") {
  for (const auto& c : cases()) {
    CAPTURE(c.op);
    CAPTURE(c.tag);
    const kiln::Plan plan = plan_of(c);
    check_golden("source/" + c.op + "_" + c.tag + ".cu", plan.text() + "\n" + all_sources(sources_of(plan)));
    CHECK(all_sources(sources_of(plan_of(c))) == all_sources(sources_of(plan)));   // deterministic
  }
}

TEST_CASE("a dropout after a row scan: the store's lanes form draws a Philox block for four outputs") {
  // [Note: flat lanes] in kiln/common.cuh: scan_store_slices calls Store::lanes<N> on its whole
  // 16-byte vectors (N = 4 f32 outputs from a multiple of 4), whose dropout reads a DropoutWords<N>.
  for (const auto& c : {Case{"scans", "cumsum_dropout", "default", {}, {}},
                        Case{"scans", "cumsum_dropout", "long", {{"B", 2}, {"N", 1 << 22}}, {}}}) {
    CAPTURE(c.tag);
    const kiln::Plan plan = plan_of(c, "sm_90a");
    REQUIRE(plan.kernels.size() == 1);
    const std::string src = sources_of(plan)[0].text;
    CHECK(contains(src, "static constexpr bool kFlatLanes = true;"));
    CHECK(contains(src, "const kiln::DropoutWords<N> words_0(seed, static_cast<unsigned long long>(first));"));
  }
}

TEST_CASE("strided scans: template choices") {
  SUBCASE("cummin over axis 1 of 64x128x8192: one scan_strided pass, threads along the contiguous axis") {
    const auto plan = plan_of({"scans", "cummin_mid_reverse", "", {}, {}});
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].template_name == "scan_strided");
    CHECK(std::get<kiln::ScanConfig>(plan.kernels[0].config).chunks == 1);   // 64 * 32 blocks of 256 columns fill 132 SMs
    CHECK(std::get<kiln::ScanConfig>(plan.kernels[0].config).inner == 8192);
    const auto src = sources_of(plan)[0].text;
    CHECK(contains(src, "kiln::scan_strided<kThreads, kUnroll, kExclusive, kReverse, Op>(in_x, out_y, "
                        "static_cast<const C*>(nullptr)"));
  }
  SUBCASE("cumsum over axis 0 of 2048x1000: 1000 columns cannot fill the GPU, too few tiles for the look-back: chunked") {
    const auto plan = plan_of({"scans", "cummax_cols_epilogue", "", {}, {}});
    REQUIRE(plan.kernels.size() == 2);
    CHECK(std::get<kiln::ScanConfig>(plan.kernels[0].config).chunks == 32);   // at most len / (8 * unroll)
    CHECK(plan.kernels[0].grid.y == 32u);
  }
  SUBCASE("few columns down a long axis: chunk totals, then the scan reads them") {
    const auto plan = plan_of({"scans", "cumsum_mid_exclusive", "", {}, {}});
    REQUIRE(plan.kernels.size() == 2);
    CHECK(plan.kernels[0].template_name == "scan_strided_totals");
    CHECK(plan.kernels[1].template_name == "scan_strided");
    CHECK(std::get<kiln::ScanConfig>(plan.kernels[0].config).chunks > 1);
    CHECK(plan.kernels[0].grid.y == plan.kernels[1].grid.y);
    CHECK(plan.kernels[0].stores.empty());         // the totals kernel stores no output
    CHECK(plan.kernels[1].stores.size() == 1);
    const auto srcs = sources_of(plan);
    CHECK(contains(srcs[0].text, "kiln::scan_strided_totals<kThreads, kUnroll, kReverse, Op>(in_x, ws_y_chunk_totals"));
    CHECK(contains(srcs[1].text, "(in_x, out_y, ws_y_chunk_totals, kOuter, kLen, kInner, kChunk"));
    CHECK(contains(srcs[1].text, "constexpr bool kExclusive = true, kReverse = false;"));
  }
  SUBCASE("the epilogue of a strided scan is fused into its store") {
    const auto plan = plan_of({"scans", "cummax_cols_epilogue", "", {}, {}});
    const auto srcs = sources_of(plan);
    CHECK(contains(srcs.back().text, "kiln::MaxOp<float>"));
    CHECK(contains(srcs.back().text, "the result through the fused epilogue"));
  }
}

TEST_CASE("look-back scans: planned for few long rows, with the workspace zeroed before the launch") {
  const auto plan = plan_of({"scans", "cumsum_long_rows", "", {}, {}});
  REQUIRE(plan.kernels.size() == 1);
  const auto& k = plan.kernels[0];
  CHECK(k.template_name == "scan_rows");
  CHECK(std::get<kiln::ScanConfig>(k.config).variant == kiln::ScanVariant::kRowsLookback);
  // 2 rows of 4194304 in tiles of 256 * 8 * 4 (32 KiB of f32 a stage): a persistent grid of 2
  // blocks an SM (the test target's 132 SMs), 256 data threads and a walker warp, 3 stages
  // ([Note: the warp-specialized look-back]).
  CHECK(k.grid.x == 2u * 132u);
  CHECK(k.block.x == 256u + 32u);
  CHECK(k.shared_bytes == 3u * 32768u);
  CHECK(k.min_blocks == 2);
  CHECK(contains(k.reason, "a persistent grid of at most 264 blocks (2 an SM) claiming tiles in order"));
  CHECK(contains(k.reason, "3 shared stages (16-byte copies)"));
  REQUIRE(k.zero_before.size() == 1);
  const auto& ws = plan.buffers[static_cast<std::size_t>(k.zero_before[0])];
  CHECK(ws.kind == kiln::BufferKind::Workspace);
  CHECK(ws.bytes % 4 == 0);
  CHECK(contains(plan.text(), "zeroes #"));
  CHECK(contains(plan.text(), "cuMemsetD32Async"));
  const auto src = sources_of(plan)[0].text;
  CHECK(contains(src, "kiln::scan_rows_lookback<kThreads, kVecs, kConfig.stages, kExclusive, "
                     "kReverse, kConfig.aligned, Op>(in_x, out_y, ws_y_lookback"));
  // Many rows keep the block-per-row path and need no zeroing.
  const auto many = plan_of({"scans", "cumsum_reverse", "", {}, {}});
  CHECK(std::get<kiln::ScanConfig>(many.kernels[0].config).variant == kiln::ScanVariant::kRowsBlock);
  CHECK(many.kernels[0].zero_before.empty());
  // An operand computed from a tensor of another width: the tile is the streamed tensor's (f16:
  // 8 a vector, 4 vectors a thread so that 32 KiB of f32 values fill the stage: 256 * 4 * 8
  // elements), as the template derives it (Plan::streamed_leaf).
  const auto mixed = plan_of_text("op m {\n  dims B = 2, N = 4194304\n  in x: f16[B, N]\n  out y = cumsum(f32(x), axis=1)\n}\n", "m");
  CHECK(std::get<kiln::ScanConfig>(mixed.kernels[0].config).variant == kiln::ScanVariant::kRowsLookback);
  CHECK(std::get<kiln::ScanConfig>(mixed.kernels[0].config).vecs == 4);
  CHECK(mixed.kernels[0].zero_before.size() == 1);
  // Rows that are not whole vectors: f32 and f64 elements are copied one by one, f16 ones loaded
  // through registers; every kind at 2 blocks an SM (the no-spill compile test below holds them).
  const auto odd = plan_of_text("op o {\n  dims B = 2, N = 4194301\n  in x: f32[B, N]\n  out y = cumsum(x, axis=1)\n}\n", "o");
  CHECK(odd.kernels[0].min_blocks == 2);
  CHECK(contains(odd.kernels[0].reason, "element copies: the rows are not whole 16-byte vectors"));
  const auto wide = plan_of_text("op w {\n  dims B = 2, N = 4194301\n  in x: f64[B, N]\n  out y = cumsum(x, axis=1)\n}\n", "w");
  CHECK(wide.kernels[0].min_blocks == 2);
  CHECK(wide.kernels[0].shared_bytes == 3u * 32768u);   // 256 x 8 f64 values a stage
  const auto half = plan_of_text("op h {\n  dims B = 2, N = 4194301\n  in x: f16[B, N]\n  out y = cumsum(x, axis=1)\n}\n", "h");
  CHECK(half.kernels[0].min_blocks == 2);
  CHECK(contains(half.kernels[0].reason, "loaded element by element"));
}

TEST_CASE("strided look-back: planned where the columns cannot fill the GPU and the tiles fill two waves") {
  // cumsum down 8192 x 4096 f32: tiles of 40 rows x 256 columns ([Note: the strided look-back]),
  // 205 x 16 of them, a status a column of each tile zeroed before the launch.
  const auto plan = plan_of({"scans", "cumsum_cols", "", {}, {}});
  REQUIRE(plan.kernels.size() == 1);
  const auto& k = plan.kernels[0];
  CHECK(k.template_name == "scan_strided_lookback");
  const auto& config = std::get<kiln::ScanConfig>(k.config);
  CHECK(config.variant == kiln::ScanVariant::kStridedLookback);
  CHECK(config.chunk == 40);
  CHECK(config.chunks == 205);
  CHECK(k.grid.x == 205u * 16u);
  CHECK(k.block.x == 256u);
  CHECK(k.min_blocks == 5);
  CHECK(contains(k.reason, "a block per tile of 40 rows x 256 columns (3280 tiles)"));
  REQUIRE(k.zero_before.size() == 1);
  const auto& statuses = plan.buffers[static_cast<std::size_t>(k.zero_before[0])];
  CHECK(statuses.name == "y_column_statuses");
  CHECK(statuses.bytes == 3280 * 256 * 8);   // an 8-byte status (flag and f32 value) a column of each tile
  const auto src = sources_of(plan)[0].text;
  CHECK(contains(src, "kiln::scan_strided_lookback<kThreads, kRows, kExclusive, kReverse, Op>(in_x, out_y, "
                      "ws_y_column_statuses, kOuter, kLen, kInner"));
  CHECK(contains(src, "__launch_bounds__(256, 5)"));
  // The rows follow the widths: f16 in, f32 values beside the raw ones (256 x 6 bytes a row: 26
  // rows); f64 20 rows.
  const auto half = plan_of_text("op h {\n  dims R = 8192, C = 2048\n  in x: f16[R, C]\n  out y = cumsum(x, axis=0)\n}\n", "h");
  CHECK(std::get<kiln::ScanConfig>(half.kernels[0].config).chunk == 26);
  const auto wide = plan_of_text("op w {\n  dims R = 8192, C = 1024\n  in x: f64[R, C]\n  out y = cumsum(x, axis=0)\n}\n", "w");
  CHECK(std::get<kiln::ScanConfig>(wide.kernels[0].config).chunk == 20);
  CHECK(wide.kernels[0].template_name == "scan_strided_lookback");
  // Too few tiles (2048 x 1000: 52 x 4), or narrow columns (4 x 65536 x 32): the chunked scan.
  CHECK(plan_of({"scans", "cummax_cols_epilogue", "", {}, {}}).kernels[0].template_name == "scan_strided_totals");
  CHECK(plan_of({"scans", "cumsum_mid_exclusive", "", {}, {}}).kernels[0].template_name == "scan_strided_totals");
  // Columns that fill the GPU: one scan_strided pass.
  CHECK(plan_of({"scans", "cummin_mid_reverse", "", {}, {}}).kernels[0].template_name == "scan_strided");
  // Dyn rows keep the chunked scan (its workspace follows the class's rows).
  const auto dyn = plan_of_text(
      "op d {\n  dims dyn B = 1, M = 8192, N = 4096\n  in x: f32[B, M, N]\n  out y = cumsum(x, axis=1)\n}\n", "d");
  CHECK(dyn.kernels[0].template_name != "scan_strided_lookback");
}

TEST_CASE("strided look-back rules") {
  using namespace kiln::launch;
  CHECK(scan_strided_lookback_rows(256, 4, 4) == 40);   // 40 KiB of f32, converted in place
  CHECK(scan_strided_lookback_rows(256, 2, 4) == 26);   // f16 raw beside f32
  CHECK(scan_strided_lookback_rows(256, 8, 8) == 20);
  CHECK(scan_strided_lookback_rows(256, 1, 8) == 17);   // bool -> i64
  CHECK(scan_strided_lookback_rows(32, 4, 4) == kScanStridedLookbackMaxRows);
  CHECK(scan_strided_lookback_row_bytes(256, 4, 4) * 40 <= kScanStridedLookbackStageBytes);
  // 5 blocks of the stage (and 1 KiB each the hardware reserves) fit an SM's 228 KiB.
  CHECK(kScanStridedLookbackBlocksPerSm * (kScanStridedLookbackStageBytes + 1024 + 64) <= 228 * 1024);
  const auto g = scan_strided_lookback_geometry(2, 1001, 300, 256, 40, 4);
  CHECK(g.grid.x == 2 * 26 * 2);
  CHECK(g.workspace_bytes == 104 * 256 * 8);   // packed: a word a column of each tile
  CHECK(g.zero_workspace);
  // 8-byte values: a flag, an aggregate and a prefix a column of each tile.
  CHECK(scan_strided_lookback_geometry(2, 1001, 300, 256, 20, 8).workspace_bytes ==
        scan_lookback_flag_bytes(2 * 51 * 2 * 256) + 2 * scan_lookback_value_bytes(2 * 51 * 2 * 256, 8));
  CHECK(scan_strided_use_lookback(1, 32768, 32768, 40, 132));
  CHECK(!scan_strided_use_lookback(1, 2048, 1000, 40, 132));    // 208 tiles
  CHECK(!scan_strided_use_lookback(4, 65536, 32, 40, 132));     // narrower than a block
}

TEST_CASE("reductions over non-adjacent axes: a chain of box reductions") {
  SUBCASE("sum over (0, 2) of 64x512x512: reduce axis 2 (rows), then axis 0 (columns)") {
    const auto plan = plan_of({"reductions", "sum_outer_inner", "", {}, {}});
    REQUIRE(plan.kernels.size() == 2);
    CHECK(plan.kernels[0].template_name == "reduce_chain");
    CHECK(std::get<kiln::ReduceChainConfig>(plan.kernels[0].config).inner == 1);        // the innermost group first
    CHECK(std::get<kiln::ReduceChainConfig>(plan.kernels[0].config).red == 512);
    CHECK(std::get<kiln::ReduceChainConfig>(plan.kernels[1].config).red == 64);
    CHECK(std::get<kiln::ReduceChainConfig>(plan.kernels[1].config).inner == 512);
    CHECK(plan.kernels[0].stores.empty());
    REQUIRE(plan.kernels[1].stores.size() == 1);
    const auto srcs = sources_of(plan);
    CHECK(contains(srcs[0].text, "kiln::reduce_inner_warp<kThreads, kUnroll, Op>(in_x, ws_y_stage0"));
    CHECK(contains(srcs[1].text, "kiln::reduce_outer<kThreads, kUnroll, kVec, Op>(ws_y_stage0, out_y"));
  }
  SUBCASE("mean divides once by the count of every stage") {
    const auto plan = plan_of({"reductions", "mean_outer_inner_keepdims", "", {}, {}});
    const auto srcs = sources_of(plan);
    REQUIRE(srcs.size() == 2);
    CHECK(contains(srcs[0].text, "using Op = kiln::SumOp<C>;"));
    CHECK(std::get<kiln::ReduceChainConfig>(plan.kernels[1].config).count == 8481);   // 33 * 257
    CHECK(contains(srcs[1].text, "/*count=*/8481"));
    CHECK(contains(srcs[1].text, "constexpr Index kCount = kConfig.count;"));
    CHECK(contains(srcs[1].text, "return a / C(kCount);"));
  }
  SUBCASE("a prologue runs in the first stage, an epilogue in the last") {
    const auto plan = plan_of({"reductions", "sumsq_1_3", "", {}, {}});
    const auto srcs = sources_of(plan);
    REQUIRE(srcs.size() == 2);
    CHECK(contains(srcs[0].text, "(v0_0 * v0_0)"));   // x*x from the loaded element, in the first stage
    CHECK(contains(srcs[1].text, "sqrtf(anchor_value)"));
  }
  SUBCASE("three groups chain in three stages") {
    const auto plan = plan_of_text("op t {\n  dims A = 3, B = 4, C = 5, D = 6, E = 7\n  in x: f32[A, B, C, D, E]\n"
                                   "  out y = logsumexp(x, axis=[0, 2, 4])\n}\n", "t");
    REQUIRE(plan.kernels.size() == 3);
    for (const auto& k : plan.kernels) CHECK(k.template_name == "reduce_chain");
    CHECK(contains(sources_of(plan)[2].text, "kiln::LogSumExpOp<float>"));
  }
}

TEST_CASE("strided scans, look-back scans, chained reductions: every unit compiles with NVRTC for sm_80 and sm_90") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC not loadable (" << why << ")");
    return;
  }
  int units = 0;
  for (const auto& c : cases())
    for (const char* arch : {"sm_80", "sm_90"})
      for (const auto& src : sources_of(plan_of(c, arch))) {
        CAPTURE(c.op + "_" + c.tag + " " + arch + " " + src.file_name);
        try {
          const auto result = kiln::compile(compile_request(src, arch));
          CHECK(!result.cubin.empty());
          for (const auto& res : result.resources) CHECK(res.spill_stores == 0);
          ++units;
        } catch (const kiln::Error& e) {
          FAIL_CHECK(e.what());
        }
      }
  MESSAGE(units << " units compiled");
  // Half-precision inputs: the strided scan and the chain accumulate in f32 and hand f32 over.
  const char* text =
      "op h {\n  dims B = 3, M = 2000, N = 40\n  in x: f16[B, M, N]\n  out y = cumsum(x, axis=1, reverse=true)\n}\n"
      "op g {\n  dims B = 3, M = 20, N = 40\n  in x: bf16[B, M, N]\n  out y = mean(x, axis=[0, 2])\n}\n"
      "op l {\n  dims B = 2, N = 1000000\n  in x: f16[B, N]\n  out y = cummax(x, axis=1, exclusive=true)\n}\n"
      // The strided look-back in every copy path: f16 beside f32, bool through registers, f64.
      "op sh {\n  dims R = 8192, C = 2048\n  in x: f16[R, C]\n  out y = cumsum(x, axis=0, reverse=true)\n}\n"
      "op sb {\n  dims R = 8192, C = 1024\n  in x: bool[R, C]\n  out y = cumsum(i64(x), axis=0)\n}\n"
      "op sd {\n  dims B = 8, M = 3001, N = 999\n  in x: f64[B, M, N]\n  out y = cummin(x, axis=1, exclusive=true)\n}\n";
  for (const char* op : {"h", "g", "l", "sh", "sb", "sd"})
    for (const auto& src : sources_of(plan_of_text(text, op))) {
      CAPTURE(src.file_name);
      try {
        const auto result = kiln::compile(compile_request(src, "sm_80"));
        CHECK(!result.cubin.empty());
        for (const auto& res : result.resources) CHECK(res.spill_stores == 0);
      } catch (const kiln::Error& e) {
        FAIL_CHECK(e.what());
      }
    }
}
