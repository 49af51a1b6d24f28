// The tuner on the GPU (issue 20; docs/api.md, "Tuning"): Op::tune runs every candidate of a
// bf16 product, each checked against the float64 reference before it is timed, and stores the
// winner; a new runtime (tuning = stored) plans with it and its output still matches the
// reference; a dyn product tuned at one value serves its bucket and size class; on-first-call
// tunes a long-K tf32 product (split-K candidates) on the first specialization; a softmax and a
// layer norm written out have row norm picks (warp and block rows), each checked and timed; two
// elementwise ops (one re-reading a broadcast operand) have block sizes and grids as picks, and two
// contiguous-row reductions (a warp and a block per row) and a strided one block sizes and loads
// in flight; a row scan its block size and vectors a thread, a strided one its block size and loads
// in flight; two split norms their block size and waves; two 3-d pools their block size, runs
// along w and rows along h; a reduction chain its first stage's block size and loads; four convs,
// one per route, their tile and stages or block size; a causal attention its key tile and stages;
// a skinny product on Gemv its rows a block and K slices; the mma.sync Gemm its tile, stages and K
// slices; two small-K products their tile and CTAs an SM or B ring; a 3xTF32 linear layer on the
// cp.async wgmma engine its tile, stages and K slices.
#include <cstdio>
#include <filesystem>
#include <string>

#include "gpu_test_util.h"
#include "runtime/op_check.h"

namespace kiln::test {

namespace {

namespace fs = std::filesystem;

constexpr const char* kSpec = R"(
op mm16 {
  dims M = 1000, N = 1000, K = 1000
  in  a: bf16[M, K]
  in  b: bf16[K, N]
  out c = matmul(a, b)
}
op mm_ieee {
  dims M = 1000, N = 1000, K = 1000
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = matmul(a, b, precision="ieee")
}
op lin_dyn {
  dims dyn M, N = 1024, K = 512
  in  x: bf16[M, K]
  in  w: bf16[N, K]
  out y = relu(matmul(x, transpose(w)))
}
op long_k {
  dims M = 256, N = 256, K = 16384
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = relu(matmul(a, b, precision="tf32"))
}
op ew_add {
  dims R = 2048, L = 8192
  in  a: f32[R, L]
  in  b: f32[R, L]
  out y = relu(a + b)
}
op ew_bcast {
  dims N = 8, C = 64, H = 128, W = 256
  in  x: f32[N, C, H, W]
  in  w: f32[C, H, W]
  out y = x * w
}
op red_rows {
  dims R = 8192, L = 1000
  in  x: f32[R, L]
  out y = sum(x, axis=1)
}
op red_long {
  dims R = 16, L = 1048576
  in  x: f32[R, L]
  out y = max(x, axis=1)
}
op red_cols {
  dims A = 64, R = 8192, L = 1024
  in  x: f32[A, R, L]
  out y = sum(x, axis=1)
}
op red_sweep {
  dims A = 32, R = 2048, L = 4095
  in  x: f32[A, R, L]
  out y = min(x, axis=1)
}
op red_sweep_scalar {
  dims A = 32, R = 2048, L = 4095
  in  x: bf16[A, R, L]
  out y = min(x, axis=1)
}
op scan_rows {
  dims R = 8192, L = 4096
  in  x: f32[R, L]
  out y = cumsum(x, axis=1)
}
op bn_short {
  dims static N = 128, static C = 512, static H = 7, static W = 7
  in  x: f32[N, C, H, W]
  in  g: f32[C, 1, 1]
  let mu = mean(x, axis=[0, 2, 3], keepdims=true)
  let d = x - mu
  out y = d * rsqrt(mean(d * d, axis=[0, 2, 3], keepdims=true) + 1e-5) * g
}
op ln_chw {
  dims static N = 16, static C = 64, static H = 256, static W = 256
  in  x: f32[N, C, H, W]
  let mu = mean(x, axis=[1, 2, 3], keepdims=true)
  let d = x - mu
  out y = d * rsqrt(mean(d * d, axis=[1, 2, 3], keepdims=true) + 1e-5)
}
op scan_long {
  dims static R = 4, static L = 4194304
  in  x: f32[R, L]
  out y = cumsum(x, axis=1)
}
op scan_cols {
  dims static R = 4096, static L = 2000
  in  x: f32[R, L]
  out y = cumsum(x, axis=0)
}
op pool_max3d {
  dims N = 16, C = 32, D = 64, H = 64, W = 64
  in  x: f32[N, C, D, H, W]
  out y = max_pool3d(x, 3, stride=2, padding=1, dilation=3)
}
op pool_avg3d {
  dims N = 16, C = 32, D = 64, H = 64, W = 64
  in  x: f32[N, C, D, H, W]
  out y = avg_pool3d(x, 3, stride=2, padding=1)
}
op red_chain {
  dims A = 64, B = 128, L = 4096
  in  x: f32[A, B, L]
  out y = sum(x, axis=[0, 2])
}
op att_causal {
  dims B = 2, H = 8, S = 1024
  in  q: bf16[B, H, S, 64]
  in  k: bf16[B, H, S, 64]
  in  v: bf16[B, H, S, 64]
  let s = matmul(q, transpose(k)) * 0.125
  out o = matmul(softmax(where(iota(S, S, axis=1) <= iota(S, S, axis=0), s, -3.4e38), axis=-1), v)
}
op sk_tf32 {
  dims M = 4096, N = 8192, K = 64
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = matmul(a, b, precision="tf32")
}
op sk_x3 {
  dims M = 4096, N = 8192, K = 32
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = relu(matmul(a, b, precision="3xtf32"))
}
op lin_x3 {
  dims B = 128, IN = 2048, OUT = 2048
  in  x: f32[B, IN]
  in  w: f32[OUT, IN]
  out y = relu(matmul(x, transpose(w)))
}
op gemv_long {
  dims M = 64, K = 262144
  in  a: f32[M, K]
  in  x: f32[K, 4]
  out y = matmul(a, x)
}
op conv_dw {
  dims N = 16, H = 128, W = 128
  in  x: f32[N, 64, H, W]
  in  w: f32[64, 1, 3, 3]
  out y = conv2d(x, w, padding=1, groups=64)
}
op conv_grouped {
  dims N = 4, H = 64, W = 64
  in  x: f32[N, 128, H, W]
  in  w: f32[256, 32, 3, 3]
  out y = conv2d(x, w, padding=1, groups=4)
}
op conv_few {
  dims N = 8, H = 130, W = 130
  in  x: f32[N, 4, H, W]
  in  w: f32[64, 4, 3, 3]
  out y = conv2d(x, w, precision="tf32")
}
op conv_engine {
  dims N = 4, C = 64, H = 64, W = 64, K = 128
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  out y = conv2d(x, w, padding=1, precision="tf32")
}
op sm_rows {
  dims R = 8192, L = 1000
  in  x: f32[R, L]
  out y = softmax(x, axis=1)
}
op ln_rows {
  dims R = 4096, L = 8192
  in  x: f32[R, L]
  in  g: f32[L]
  in  b: f32[L]
  let m = mean(x, axis=1, keepdims=true)
  let d = x - m
  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5) * g + b
}
)";

Options with_cache(const std::string& dir, const std::string& tuning) {
  Options o;
  o.cache_dir = dir;
  o.tuning = tuning;
  o.use_environment = false;
  return o;
}

std::string spec_file(const fs::path& dir) {
  const fs::path p = dir / "tune.kiln";
  std::FILE* f = std::fopen(p.c_str(), "w");
  std::fputs(kSpec, f);
  std::fclose(f);
  return p.string();
}

// An empty directory under the system's temporary one, for a test's spec and cache.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Op::tune of `op` at `bindings` in a runtime of its own (tuning off), 20 timed launches a
// candidate, progress printed; the winner is stored in dir/cache.
TuneResult tune_in(const fs::path& dir, const std::string& spec, const std::string& op, const Bindings& bindings) {
  Runtime rt(with_cache((dir / "cache").string(), "off"));
  TuneOptions o;
  o.iters = 20;
  o.progress = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  return rt.load_file(spec).op(op).tune(bindings, o);
}

// Tunes `op` (one tunable, candidates printed `prefix`...), each candidate correct and timed;
// then a runtime with tuning = stored plans it with the stored pick and still matches the reference.
void tune_one_family(const fs::path& dir, const std::string& spec, const char* op, const char* prefix,
                     std::size_t min_candidates, std::size_t max_candidates) {
  CAPTURE(op);
  const TuneResult r = tune_in(dir, spec, op, Bindings{});
  CHECK(r.checked_against == "the float64 reference");
  REQUIRE(r.products.size() == 1);
  const auto& p = r.products[0];
  CHECK(p.candidates.size() >= min_candidates);
  CHECK(p.candidates.size() <= max_candidates);
  for (const auto& c : p.candidates) {
    CAPTURE(c.config);
    CHECK(c.config.rfind(prefix, 0) == 0);
    CHECK_MESSAGE(c.correct, c.note);
    CHECK(c.median_ms > 0);
  }
  CHECK(p.best_ms <= p.heuristic_ms);
  std::printf("tuned %s (%s): best %s %.4f ms, heuristic %s %.4f ms (%.3fx)\n", op, p.what.c_str(), p.best.c_str(),
              p.best_ms, p.heuristic.c_str(), p.heuristic_ms, p.heuristic_ms / p.best_ms);
  REQUIRE(!r.stored_path.empty());
  Runtime stored(with_cache((dir / "cache").string(), "stored"));
  const std::string plan = stored.load_file(spec).op(op).specialize(Bindings{}).plan_text();
  CHECK(plan.find("config: tuned") != std::string::npos);
  OpCheckOptions co;
  co.seed = 11;
  const OpCheck check = run_and_check(stored, spec, op, Bindings{}, co);
  CHECK(check.checked);
  CHECK(check.ok);
}

// A family's case: tune_one_family of `op`, whose candidates' texts start with `prefix`.
struct Family {
  const char* op;
  const char* prefix;
  std::size_t min_candidates, max_candidates;
};

// tune_one_family for each of `families` in turn, in a fresh directory of `name` (removed after).
void tune_families(const std::string& name, std::initializer_list<Family> families) {
  const fs::path dir = fresh_dir(name);
  const std::string spec = spec_file(dir);
  for (const Family& f : families) tune_one_family(dir, spec, f.op, f.prefix, f.min_candidates, f.max_candidates);
  fs::remove_all(dir);
}

}  // namespace

TEST_CASE("gpu: Op::tune checks and times every candidate, stores the winner, and the runtime plans with it") {
  KILN_REQUIRE_GPU();
  const fs::path dir = fresh_dir("kiln-tune-gpu");
  const std::string spec = spec_file(dir);
  const TuneResult r = tune_in(dir, spec, "mm16", Bindings{});
  CHECK(r.checked_against == "the float64 reference");
  REQUIRE(r.products.size() == 1);
  const auto& p = r.products[0];
  CHECK(p.candidates.size() >= 4);
  for (const auto& c : p.candidates) {
    CAPTURE(c.config);
    CHECK_MESSAGE(c.correct, c.note);
    CHECK(c.median_ms > 0);
  }
  CHECK(p.best_ms <= p.heuristic_ms);
  std::printf("tuned mm16: best %s %.4f ms, heuristic %s %.4f ms\n", p.best.c_str(), p.best_ms, p.heuristic.c_str(),
              p.heuristic_ms);
  REQUIRE(!r.stored_path.empty());
  CHECK(fs::is_regular_file(r.stored_path));

  Runtime stored(with_cache((dir / "cache").string(), "stored"));
  const std::string plan = stored.load_file(spec).op("mm16").specialize(Bindings{}).plan_text();
  CHECK(plan.find("config: tuned") != std::string::npos);
  CHECK(plan.find(p.best.substr(0, p.best.find(' '))) != std::string::npos);   // the winner's tile
  OpCheckOptions co;
  co.seed = 7;
  const OpCheck check = run_and_check(stored, spec, "mm16", Bindings{}, co);
  CHECK(check.checked);
  CHECK(check.ok);

  Runtime off(with_cache((dir / "cache").string(), "off"));
  CHECK(off.load_file(spec).op("mm16").specialize(Bindings{}).plan_text().find("config: heuristic") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("gpu: a dyn matmul tuned at one value plans its bucket and size class with the pick") {
  KILN_REQUIRE_GPU();
  const fs::path dir = fresh_dir("kiln-tune-dyn");
  const std::string spec = spec_file(dir);
  const TuneResult r = tune_in(dir, spec, "lin_dyn", Bindings{{{"M", 1000}}, {}});
  CHECK(r.checked_against == "the float64 reference");
  REQUIRE(r.products.size() == 1);
  const auto& p = r.products[0];
  CHECK(p.what.find("dyn M") != std::string::npos);
  CHECK(p.candidates.size() >= 4);
  for (const auto& c : p.candidates) {
    CAPTURE(c.config);
    CHECK_MESSAGE(c.correct, c.note);
  }
  CHECK(p.best_ms <= p.heuristic_ms);
  std::printf("tuned lin_dyn at M = 1000: best %s %.4f ms, heuristic %s %.4f ms\n", p.best.c_str(), p.best_ms,
              p.heuristic.c_str(), p.heuristic_ms);
  REQUIRE(!r.stored_path.empty());
  // M = 1001 is in 1000's bucket and size class: the stored pick plans it, and the kernel that
  // serves the class is checked at values of the class other than the one tuned at.
  Runtime stored(with_cache((dir / "cache").string(), "stored"));
  const std::string plan = stored.load_file(spec).op("lin_dyn").specialize(Bindings{{{"M", 1001}}, {}}).plan_text();
  CHECK(plan.find("config: tuned") != std::string::npos);
  for (std::int64_t m : {1001, 777, 1003}) {
    CAPTURE(m);
    OpCheckOptions co;
    co.seed = static_cast<std::uint64_t>(m);
    const OpCheck check = run_and_check(stored, spec, "lin_dyn", Bindings{{{"M", m}}, {}}, co);
    CHECK(check.checked);
    CHECK(check.ok);
  }
  fs::remove_all(dir);
}

TEST_CASE("gpu: a softmax and a layer norm tune their row norm picks, each checked, and plan with the winner") {
  KILN_REQUIRE_GPU();
  tune_families("kiln-tune-rows", {{"sm_rows", "rows t", 3, 6}, {"ln_rows", "rows t", 3, 6}});
}

TEST_CASE("gpu: elementwise ops tune their block size and grid, each checked, and plan with the winner") {
  KILN_REQUIRE_GPU();
  // 128 to 1024 threads, each uncapped, and persistent where that caps the grid (on 132 SMs all
  // but 1024 threads' 4096 blocks).
  tune_families("kiln-tune-ew", {{"ew_add", "ew t", 5, 8}, {"ew_bcast", "ew t", 5, 8}});
}

TEST_CASE("gpu: contiguous-row reductions tune their block size and loads, each checked, and plan with the winner") {
  KILN_REQUIRE_GPU();
  // A warp per row (8192 rows of 1000) and a block per row split along it (16 rows of 2^20):
  // 3 block sizes x 2, 4 or 8 loads in flight each.
  tune_families("kiln-tune-red", {{"red_rows", "reduce ", 9, 9}, {"red_long", "reduce ", 9, 9}});
}

TEST_CASE("gpu: a strided reduction tunes its block size and loads, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  // 64 x 1024 columns of 16-byte loads summed down 8192 rows (A dyn under the generic default):
  // 64, 128 or 256 threads x 2, 4 or 8 loads in flight.
  tune_families("kiln-tune-red-cols", {{"red_cols", "reduce outer ", 9, 9}});
}

TEST_CASE("gpu: a 16-byte whole-row sweep tunes its block, rows in flight and waves, each checked, and plans with "
          "the winner") {
  KILN_REQUIRE_GPU();
  // The seed's min over a middle axis at a quarter of its rows (A dyn under the generic default,
  // split per launch): rows of 4095 in 1, 2 or 4 tiles x 1 or 2 rows of loads x 1, 2 or 4 waves.
  tune_families("kiln-tune-red-sweep", {{"red_sweep", "reduce v4 ", 18, 18}});
}

TEST_CASE("gpu: a scalar whole-row sweep tunes its block and rows in flight, each checked, and plans with the "
          "winner") {
  KILN_REQUIRE_GPU();
  // The same min over bf16 (2-byte elements: the sweep of single elements, A dyn, split per
  // launch): 128, 256, 512 or 1024 threads (16, 16, 8, 4 columns a thread) x 1 or 2 rows of loads.
  tune_families("kiln-tune-red-sweep-scalar", {{"red_sweep_scalar", "reduce rows ", 8, 8}});
}

TEST_CASE("gpu: a row scan tunes its block size and vectors, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  // 8192 rows of 4096, a block per row: 128, 256 or 512 threads x 1, 2 or 4 16-byte vectors.
  tune_families("kiln-tune-scan", {{"scan_rows", "scan rows ", 9, 9}});
}

TEST_CASE("gpu: split norms tune their block size and waves, each checked, and plan with the winner") {
  KILN_REQUIRE_GPU();
  // A batch norm over 7x7 images (ganged segments; 0.69x eager on an H200) and a layer norm over
  // C, H, W of 16x64x256x256 (split rows): 256, 512 or 1024 threads x chunks for 1, 2 or 4 waves;
  // the batch norm's rows of 128 x 49 also fit a block per row at each of the three block sizes.
  tune_families("kiln-tune-split-norm", {{"bn_short", "split norm ", 12, 12}, {"ln_chw", "split norm ", 9, 9}});
}

TEST_CASE("gpu: a strided scan tunes its block size and loads, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  // Down 4096 rows of 2000 columns (8 blocks of 256: cut into chunks by the rule at each pick's
  // numbers): 64, 128 or 256 threads x 4, 8 or 16 loads in flight.
  tune_families("kiln-tune-scan-cols", {{"scan_cols", "scan strided ", 9, 9}});
}

TEST_CASE("gpu: a look-back scan tunes its threads, vectors, stages and blocks, each checked, and plans with the "
          "winner") {
  KILN_REQUIRE_GPU();
  // 4 rows of 2^22 (the look-back: fewer rows than SMs): 128, 256 or 512 data threads x 4, 8 or 16
  // vectors x 2, 3 or 4 stages x 1 or 2 blocks an SM, where the stages fit (37 of the 54).
  tune_families("kiln-tune-scan-long", {{"scan_long", "scan lookback ", 37, 37}});
}

TEST_CASE("gpu: 3-d pools tune their block size, runs and rows, each checked, and plan with the winner") {
  KILN_REQUIRE_GPU();
  // KernelBench 43's and 46's windows (the pools furthest under copy bandwidth on an H100): 3 block
  // sizes x one output, a run of 4 by element or a vector run x (max only) 1 or 4 rows along h.
  tune_families("kiln-tune-pool", {{"pool_max3d", "pool t", 18, 18}, {"pool_avg3d", "pool t", 9, 9}});
}

TEST_CASE("gpu: a reduction chain tunes its first stage's block size and loads, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  // Axes 0 and 2: 8192 contiguous rows of 4096 first (a warp per row: 3 block sizes x 2, 4 or 8
  // loads in flight), then 64 rows strided over 128 columns (the rule's).
  tune_families("kiln-tune-chain", {{"red_chain", "reduce warp ", 9, 9}});
}

TEST_CASE("gpu: convs tune their tile and stages or block size within their route, each checked, and plan with the winner") {
  KILN_REQUIRE_GPU();
  KILN_REQUIRE_SM90A("the wgmma and TMA conv routes");
  // One conv per route ([Note: conv picks]): DepthwiseDirect's 3 block sizes; ConvNchw (4 groups
  // of 64 filters) 64 rows x 64 or 128 pixels x 2-4 stages; WgConvNchw (4 input channels) 64 rows
  // x 64, 128 or 256 pixels x 3 or 4 stages; the TMA engine (NCHW tf32: out channels x pixels) 64
  // or 128 x 64, 128 or 256, its stages as many as fit.
  tune_families("kiln-tune-conv", {{"conv_dw", "conv depthwise ", 3, 3}, {"conv_grouped", "conv nchw ", 6, 6},
                                   {"conv_few", "conv wgmma ", 6, 6}, {"conv_engine", "conv tma ", 6, 6}});
}

TEST_CASE("gpu: fused attention tunes its key tile and ring depth, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  KILN_REQUIRE_SM90A("the flash attention kernel");
  // Head dim 64 ([Note: attention picks]): key tiles of 64 or 128 x 2, 3 or 4 stages.
  tune_families("kiln-tune-attention", {{"att_causal", "attention n", 6, 6}});
}

TEST_CASE("gpu: a skinny product on Gemv tunes its rows a block and K slices, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  // 64 rows of 262144 times 4 columns ([Note: gemv picks]): 1, 2, 4 or 8 rows a block, each with
  // the rule's K slices, half and twice; 16, 32 or 64 (warps that carry 2, 4 or 8 rows: [Note: rows
  // a warp carries]), each with the rule's slices and half.
  tune_families("kiln-tune-gemv", {{"gemv_long", "gemv r", 18, 18}});
}

TEST_CASE("gpu: a product on the mma.sync Gemm tunes its tile, stages and K slices, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  // f32 in ieee (the mma.sync Gemm on every target; [Note: mma picks]): 64 or 128 x 64 or 128
  // tiles, the most stages and one fewer, 1 or 2 K slices (tests/generator/test_mma_picks.cpp).
  tune_families("kiln-tune-mma", {{"mm_ieee", "mma ", 16, 16}});
}

TEST_CASE("gpu: a small-K product tunes its tile and CTAs an SM, or the wgmma one's B ring, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  KILN_REQUIRE_SM90A("the wgmma SmallK");
  // [Note: small-K picks] (tests/generator/test_small_k_picks.cpp): tf32 at K = 64 on the mma.sync
  // SmallK, 8 tiles and CTA counts; 3xTF32 at K = 32 on the wgmma SmallK, 256x64, 128x64 and
  // 128x128 with 2 or 3 B blocks.
  tune_families("kiln-tune-small-k", {{"sk_tf32", "small k ", 8, 8}, {"sk_x3", "small k wgmma ", 6, 6}});
}

TEST_CASE("gpu: a product on the cp.async wgmma engine tunes its tile, stages and K slices, each checked, and plans with the winner") {
  KILN_REQUIRE_GPU();
  KILN_REQUIRE_SM90A("the cp.async wgmma engine");
  // 3xTF32 with 16 tiles of 128x128 ([Note: wgmma picks], tests/generator/test_wgmma_picks.cpp): 64
  // or 128 x 64 or 128 tiles, 4 or 3 stages, slices 1, the rule's and twice within K / 512 = 4:
  // 4 at 128x128, 4 more at each of 64x128 and 128x64, 6 at 64x64.
  tune_families("kiln-tune-wgmma", {{"lin_x3", "wgmma ", 18, 18}});
}

TEST_CASE("gpu: tuning = on-first-call tunes a split-K product on its first specialization") {
  KILN_REQUIRE_GPU();
  const fs::path dir = fresh_dir("kiln-tune-first");
  const std::string spec = spec_file(dir);
  Runtime rt(with_cache((dir / "cache").string(), "on-first-call"));
  const std::string plan = rt.load_file(spec).op("long_k").specialize(Bindings{}).plan_text();
  std::printf("%s\n", plan.c_str());
  CHECK(plan.find("config: tuned") != std::string::npos);
  CHECK(fs::exists(dir / "cache" / "tuned"));
  const OpCheck check = run_and_check(rt, spec, "long_k", Bindings{}, OpCheckOptions{});
  CHECK(check.ok);
  fs::remove_all(dir);
}

}  // namespace kiln::test
