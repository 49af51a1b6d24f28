// Compiles every example instantiation unit in tests/templates/ with nvcc for sm_80 and sm_90
// and checks what the templates promise: it builds, nothing goes to local memory, and the
// units that claim 16-byte accesses really get them (PTX always; SASS where cuobjdump exists).
// Skips with a message when nvcc is not installed.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "cuda_tools.h"
#include "templates/kiln/config/reduce.h"    // plain C++: the planner includes them the same way
#include "templates/kiln/config/rownorm.h"
#include "templates/kiln/config/scan.h"

namespace {

namespace fs = std::filesystem;

using kiln::test::CommandResult;
using kiln::test::find_tool;
using kiln::test::run_command;

// Every "<N> bytes <what>" in ptxas -v output has N == 0.
bool all_zero(const std::string& log, const std::string& what, std::string& offender) {
  const std::string key = " bytes " + what;
  for (size_t pos = log.find(key); pos != std::string::npos; pos = log.find(key, pos + 1)) {
    size_t start = pos;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(log[start - 1]))) --start;
    if (log.substr(start, pos - start) != "0") {
      offender = log.substr(start, log.find('\n', pos) - start);
      return false;
    }
  }
  return true;
}

struct Unit {
  const char* file;
  bool loads16;              // the template claims 16-byte loads for this shape
  bool stores16;             // ... and 16-byte streaming stores
  bool plain_stores16 = false;   // ... or 16-byte stores that are not streaming (st.global.wb)
};

// Which units must show 128-bit accesses, and why:
const Unit kUnits[] = {
    {"reduce_min_axis1.cu", false, false},       // inner = 4095: a 16-byte vector would straddle columns
    {"reduce_min_axis2.cu", true, false},        // rows of 4095 floats: 16-byte body after a scalar head
    {"reduce_sumsq_axis0.cu", true, false},      // inner % 4 == 0: a thread owns 4 columns
    {"reduce_sumsq_axis1.cu", true, false},
    {"reduce_argmax_short.cu", true, false},     // the body path exists even if 7-long rows never use it
    {"reduce_argmax_long.cu", true, false},
    {"reduce_logsumexp.cu", true, false},
    {"scan_cumsum_exclusive.cu", true, true},    // 16-byte loads and st.global.cs stores
    {"scan_cumprod_reverse.cu", false, false},   // 5003-long rows: scalar path only
    {"scan_cummax_lookback.cu", true, true},     // 16-byte cp.async into shared memory
    {"rownorm_softmax_dropout.cu", true, true},
    {"rownorm_log_softmax.cu", true, true},
    {"rownorm_softmax_strided.cu", false, false},   // one column per thread along the strided axis
    {"pool_max2d_vec.cu", true, false, true},    // vector runs: a window row's columns as 16-byte loads; wide stores
    {"pool_avg3d_vec_half.cu", true, false},     // ... 8 halves a load; a run's 8 outputs stored one by one
};

fs::path scratch_dir() {
  const fs::path dir = fs::temp_directory_path() / ("kiln_tpl_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

}  // namespace

// gemm_*.cu and conv_*.cu units are compiled by test_gemm_templates_compile.cpp.
TEST_CASE("every memory-bound tests/templates unit is listed here") {
  const fs::path dir = fs::path(KILN_SOURCE_DIR) / "tests" / "templates";
  REQUIRE(fs::is_directory(dir));
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".cu") continue;
    const std::string name = entry.path().filename().string();
    if (name.rfind("gemm_", 0) == 0 || name.rfind("conv_", 0) == 0) continue;
    bool listed = false;
    for (const Unit& u : kUnits) listed |= entry.path().filename() == u.file;
    CHECK_MESSAGE(listed, entry.path().filename().string() << " has no row in kUnits");
  }
}

TEST_CASE("template units compile for sm_80 and sm_90 without spills, with the promised vector accesses") {
  const std::string nvcc = find_tool("nvcc");
  if (nvcc.empty()) {
    MESSAGE("nvcc not found (/usr/local/cuda/bin, $CUDA_HOME/bin, PATH): skipping the template compile test");
    return;
  }
  const std::string ptxas = find_tool("ptxas");
  REQUIRE_MESSAGE(!ptxas.empty(), "nvcc found but not ptxas");
  const std::string cuobjdump = find_tool("cuobjdump");
  if (cuobjdump.empty()) MESSAGE("cuobjdump not found: checking 16-byte accesses in PTX only, not SASS");
  const fs::path root = KILN_SOURCE_DIR;
  const fs::path out = scratch_dir();

  for (const Unit& unit : kUnits) {
    const fs::path src = root / "tests" / "templates" / unit.file;
    REQUIRE_MESSAGE(fs::exists(src), src.string());
    for (const char* arch : {"sm_80", "sm_90"}) {
      INFO(unit.file << " for " << arch);
      const std::string stem = fs::path(unit.file).stem().string() + "_" + arch;
      // One front-end run to PTX, then ptxas for the cubin and its resource report (as NVRTC
      // output would be assembled): half the time of two nvcc runs.
      const fs::path ptx = out / (stem + ".ptx");
      const CommandResult ptx_build = run_command(nvcc + " -arch=" + arch + " -std=c++17 -I " +
                                                  (root / "templates").string() + " -ptx -o " + ptx.string() + " " +
                                                  src.string());
      INFO(ptx_build.output);
      REQUIRE(ptx_build.status == 0);
      const fs::path cubin = out / (stem + ".cubin");
      const CommandResult build = run_command(ptxas + " -arch=" + arch + " -v -o " + cubin.string() + " " + ptx.string());
      INFO(build.output);
      REQUIRE(build.status == 0);
      std::string offender;
      CHECK_MESSAGE(all_zero(build.output, "spill stores", offender), offender);
      CHECK_MESSAGE(all_zero(build.output, "spill loads", offender), offender);
      CHECK_MESSAGE(all_zero(build.output, "stack frame", offender), offender);   // no local arrays either

      std::stringstream ptx_text;
      ptx_text << std::ifstream(ptx).rdbuf();
      const std::string p = ptx_text.str();
      // 16-byte loads are ld.global.nc.v4 (read-only path) or 16-byte cp.async copies into shared
      // memory; stores are st.global.cs.v4 (streaming).
      const bool loads16 = p.find("ld.global.nc.v4") != std::string::npos || p.find("cp.async.cg.shared.global") != std::string::npos;
      CHECK_MESSAGE(loads16 == unit.loads16, "16-byte loads in PTX");
      if (unit.stores16) CHECK_MESSAGE(p.find("st.global.cs.v4") != std::string::npos, "16-byte streaming stores in PTX");
      if (unit.plain_stores16) CHECK_MESSAGE(p.find("st.global.wb.v4") != std::string::npos, "16-byte stores in PTX");

      if (!cuobjdump.empty() && unit.loads16) {
        const CommandResult sass = run_command(cuobjdump + " -sass " + cubin.string());
        REQUIRE(sass.status == 0);
        const bool loads128 = sass.output.find("LDG.E.128") != std::string::npos ||
                              sass.output.find("LDGSTS.E.BYPASS.128") != std::string::npos;
        CHECK_MESSAGE(loads128, "LDG.E.128 or LDGSTS.E.BYPASS.128 in SASS");
        if (unit.stores16 || unit.plain_stores16) {
          const bool stores128 = sass.output.find("STG.E.EF.128") != std::string::npos ||
                                 sass.output.find("STG.E.128") != std::string::npos;
          CHECK_MESSAGE(stores128, "128-bit stores in SASS");
        }
      }
    }
  }
  std::error_code ec;
  fs::remove_all(out, ec);
}

TEST_CASE("launch rules choose the seed variants (132 SMs)") {
  using namespace kiln::launch;
  // min over axis 2 of 128x4096x4095: 524288 rows, a warp each, 8 rows per 256-thread block.
  CHECK(reduce_inner_use_warp(128LL * 4096, 4095, 132));
  CHECK(reduce_inner_warp_geometry(128LL * 4096, 256).grid.x == 65536);
  // min over axis 1: inner 4095 is not a multiple of 4, so scalar columns; 2048 blocks fill the GPU.
  CHECK(reduce_outer_vec(4095, 4) == 1);
  CHECK(reduce_outer_threads(4095, 1) == 256);
  const OuterSplit seed = reduce_outer_split(128, 4096, 4095, 256, 1, 8, 132);
  CHECK(seed.splits == 1);
  CHECK(reduce_outer_geometry(128, 4095, seed, 256, 1, 4).grid.x == 128 * 16);
  // A narrow, short outer reduction splits the reduced axis, every split non-empty.
  const OuterSplit narrow = reduce_outer_split(1, 4096, 8192, 256, 4, 4, 132);
  CHECK(narrow.splits > 1);
  CHECK((narrow.splits - 1) * narrow.chunk < 4096);
  CHECK(narrow.splits * narrow.chunk >= 4096);
  // Wave quantization: 512 blocks (sum over the middle axis of 512x512x1024) against a wave of
  // 1056 resident blocks split 2 ways (0.97 of a wave), not 3 (1.45 waves).
  CHECK(reduce_outer_split(512, 512, 1024, 256, 4, 4, 132).splits == 2);
  CHECK(reduce_outer_split(1, 512, 512 * 1024, 256, 4, 4, 132).splits == 2);
  // 8 blocks: 132 splits make exactly one wave.
  CHECK(reduce_outer_split(1, 32768, 8192, 256, 4, 4, 132).splits == 132);
  // The shared rule: the best-filled last wave, the fewest parts on a tie, capped, a full wave uncut.
  CHECK(wave_filling_parts(128, 1056, 128) == 8);     // 1024 blocks, not 9 x 128 = 1152
  CHECK(wave_filling_parts(100, 1056, 5) == 5);       // the cap: 500 blocks, all in one wave
  CHECK(wave_filling_parts(1056, 1056, 64) == 1);
  CHECK(wave_filling_parts(2000, 1056, 64) == 1);
  CHECK(wave_filling_parts(1, 1056, 4096) == 1056);
  // The closed form against the scan it replaced (every count up to the cap and one wave's worth;
  // the best-filled last wave, the fewest on a tie), and no division by zero for 0 blocks (a dyn
  // config's 0 rows).
  auto scanned = [](long long blocks, long long wave, long long most) {
    long long parts = 1, best = 0;
    const long long limit = std::min(most, ceil_div(wave, blocks));
    for (long long s = 1; blocks < wave && s <= limit; ++s) {
      const long long b = blocks * s, per_wave = b / ceil_div(b, wave);
      if (per_wave > best) parts = s, best = per_wave;
    }
    return parts;
  };
  for (long long wave : {1LL, 7LL, 1056LL, 8448LL})
    for (long long blocks = 1; blocks <= 2 * wave + 1; blocks += blocks < 64 ? 1 : 37)
      for (long long most : {1LL, 2LL, 5LL, 64LL, 65535LL}) {
        CAPTURE(wave);
        CAPTURE(blocks);
        CAPTURE(most);
        CHECK(wave_filling_parts(blocks, wave, most) == scanned(blocks, wave, most));
      }
  CHECK(wave_filling_parts(0, 1056, 64) == 64);
  // cumsum down the columns of 32768²: 128 column blocks, the axis cut 8 ways (one wave).
  CHECK(scan_strided_chunks(1, 32768, 32768, 256, 8, 132).chunks == 8);
  CHECK(reduce_outer_threads(7, 1) == 32);
  // Few long rows split along the row; chunks are whole 16-byte vectors and cover the row.
  const InnerSplit long_rows = reduce_inner_split(8, (1 << 24) + 3, 512, 4, 4, 132);
  CHECK(long_rows.splits > 1);
  CHECK(long_rows.chunk % 4 == 0);
  CHECK((long_rows.splits - 1) * long_rows.chunk < (1 << 24) + 3);
  CHECK(long_rows.splits * long_rows.chunk >= (1 << 24) + 3);
  // cumsum 32768x32768: block per row; cummax 8x4000000: decoupled look-back.
  CHECK_FALSE(scan_use_lookback(32768, 32768, 2048, 132));
  CHECK(scan_use_lookback(8, 4000000, 4096, 132));
  const Geometry lb = scan_rows_lookback_geometry(8, 4000000, 4096, 256, 4, 264);
  CHECK(lb.grid.x == 264);            // a persistent grid: at most the blocks given
  CHECK(lb.block.x == 256 + 32);      // the data threads and the walker warp
  CHECK(lb.shared_bytes == kScanLookbackStages * 4096 * 4);
  CHECK(lb.zero_workspace);
  CHECK(lb.workspace_bytes == 8 * 977 * 8 + 16);   // 7816 tiles, an 8-byte status each, then the counter
  CHECK(scan_rows_lookback_geometry(1, 5000, 4096, 256, 4, 264).grid.x == 2);   // no more blocks than tiles
  // softmax 128x16384: block per row (few rows); log_softmax 8192x1000: warp per row.
  CHECK_FALSE(rownorm_use_warp(128, 16384, 32, 132));
  CHECK(rownorm_use_warp(8192, 1000, 32, 132));
}
