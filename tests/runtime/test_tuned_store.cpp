// The tuned store ([Note: the tuned store] in runtime/tuner.cpp) and Options::tuning, without a
// GPU: KILN_TUNING_DEVICE names the device the picks were tuned on, as `kiln gen` on a machine
// without a GPU would. Round trip, damaged and foreign files, the key (dyn buckets, not values),
// and the runtime applying a stored pick (or not: tuning off, an illegal pick), of the TMA engine
// and of the elementwise, reduction and row norm families in one op; which launch errors the tuner
// skips a candidate for.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <cuda.h>
#include <fmt/format.h>

#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "kiln/kiln.h"
#include "runtime/tuner.h"

namespace {

namespace fs = std::filesystem;

const char* kSpec =
    "op mm16 {\n"
    "  dims M = 1000, N = 1000, K = 1000\n"
    "  in  a: bf16[M, K]\n"
    "  in  b: bf16[K, N]\n"
    "  out c = matmul(a, b)\n"
    "}\n"
    "op lin_dyn {\n"
    "  dims dyn M = 1000, N = 1024, K = 512\n"
    "  in  x: bf16[M, K]\n"
    "  in  w: bf16[N, K]\n"
    "  out y = matmul(x, transpose(w))\n"
    "}\n"
    "op mixed {\n"   // an elementwise kernel, a warp-per-row sum, a softmax, a row scan, a pool, a strided
                      // scan, a split norm
    "  dims static R = 4096, static L = 1000, static S = 16, static T = 262144\n"
    "  in  x: f32[R, L]\n"
    "  in  z: f32[S, T]\n"
    "  out y = x * 2.0\n"
    "  out s = sum(x, axis=1)\n"
    "  out p = softmax(x, axis=1)\n"
    "  out c = cumsum(x, axis=1)\n"
    "  out m = max_pool1d(x, 3, stride=1)\n"
    "  out c0 = cumsum(x, axis=0)\n"
    "  let d = z - mean(z, axis=1, keepdims=true)\n"
    "  out n = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)\n"
    "}\n"
    "op scale {\n"
    "  dims dyn N = 1000, C = 64\n"
    "  in  x: f32[N, C]\n"
    "  out y = x * 2.0\n"
    "}\n";

kiln::Plan plan_of(const std::string& op, std::map<std::string, std::int64_t> dims = {}) {
  auto spec = kiln::parse_spec(kSpec, "tuned.kiln");
  std::map<std::string, kiln::ir::DimValue> given;
  for (const auto& [k, v] : dims) given[k] = {v, "test"};
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(spec, op), given));
  return kiln::make_plan(bound, kiln::Target::for_arch("sm_90a"));
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("kiln-tuned-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string plan_text_with(const std::string& cache, const std::string& tuning, const std::string& op = "mm16",
                           const kiln::Bindings& bindings = {}) {
  kiln::Options o;
  o.arch = "sm_90a";
  o.cache_dir = cache;
  o.tuning = tuning;
  ::setenv("KILN_TUNING_DEVICE", "Test GPU 80GB", 1);
  kiln::Runtime rt(o);   // use_environment: KILN_TUNING_DEVICE
  auto text = rt.load_string(kSpec, "tuned.kiln").op(op).specialize(bindings).plan_text();
  ::unsetenv("KILN_TUNING_DEVICE");
  return text;
}

}  // namespace

TEST_CASE("tuned store: round trip, foreign key and damaged files ignored") {
  TempDir dir;
  const auto plan = plan_of("mm16");
  REQUIRE(plan.tunables.size() == 1);
  const std::string key = kiln::tuning_key_text(plan, "Test GPU");
  const std::string path = kiln::tuned_path(dir.path.string(), key);
  CHECK(kiln::load_tuned(path, key).empty());   // no file
  const auto pick = plan.tunables[0].candidates.back();
  std::string error;
  REQUIRE(kiln::store_tuned(path, key, {{plan.tunables[0].anchor, {pick, "tuned 0.0100 ms (test)"}}}, &error));
  const auto back = kiln::load_tuned(path, key);
  REQUIRE(back.size() == 1);
  CHECK(back.at(plan.tunables[0].anchor).pick == pick);
  CHECK(back.at(plan.tunables[0].anchor).origin == "tuned 0.0100 ms (test)");
  // The same file read for another key (a collision, a copied file): ignored.
  CHECK(kiln::load_tuned(path, kiln::tuning_key_text(plan, "Other GPU")).empty());
  // Damaged: truncated, a bad pick, garbage.
  std::ifstream in(path);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string& bad : {whole.substr(0, whole.size() / 2), whole.substr(0, whole.find("pick")) + "pick 3 12x | x\n",
                                 std::string("\x7f" "ELF garbage"), std::string()}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    CHECK(kiln::load_tuned(path, key).empty());
  }
}

TEST_CASE("tuned store: the key holds dims or dyn buckets, the device and the version") {
  const auto k1 = kiln::tuning_key_text(plan_of("mm16"), "Test GPU");
  CHECK(k1.find("dims K=1000 M=1000 N=1000") != std::string::npos);
  CHECK(k1.find("device Test GPU") != std::string::npos);
  CHECK(k1.find("arch sm_90a sms 132") != std::string::npos);
  CHECK(k1.find("\nkiln ") != std::string::npos);
  CHECK(k1 != kiln::tuning_key_text(plan_of("mm16", {{"M", 1024}}), "Test GPU"));
  const auto a = kiln::tuning_key_text(plan_of("scale", {{"N", 1000}}), "Test GPU");
  CHECK(a == kiln::tuning_key_text(plan_of("scale", {{"N", 1001}}), "Test GPU"));
  CHECK(a != kiln::tuning_key_text(plan_of("scale", {{"N", 1024}}), "Test GPU"));
  CHECK(a.find("N=dyn(general)") != std::string::npos);
  CHECK(kiln::tuned_path("/c", a).rfind("/c/tuned/", 0) == 0);
}

TEST_CASE("Options::tuning: a stored pick re-plans the op, off and illegal picks keep the heuristic") {
  TempDir dir;
  const auto plan = plan_of("mm16");
  const auto& t = plan.tunables.at(0);
  kiln::TmaPick pick = std::get<kiln::TmaPick>(t.candidates.front());
  if (pick == std::get<kiln::TmaPick>(t.heuristic)) pick = std::get<kiln::TmaPick>(t.candidates.back());
  const std::string key = kiln::tuning_key_text(plan, "Test GPU 80GB");
  std::string error;
  REQUIRE(kiln::store_tuned(kiln::tuned_path(dir.path.string(), key), key, {{t.anchor, {pick, "tuned 0.0100 ms (test)"}}},
                            &error));
  const std::string tuned = plan_text_with(dir.path.string(), "stored");
  CHECK(tuned.find("config: tuned 0.0100 ms (test)") != std::string::npos);
  CHECK(tuned.find(std::to_string(pick.bm) + "x" + std::to_string(pick.bn) + "x" + std::to_string(pick.bk) + " tiles") !=
        std::string::npos);
  CHECK(plan_text_with(dir.path.string(), "off").find("config: heuristic") != std::string::npos);
  // A pick that is not legal for the product (a hand edit, an older kiln's file) is named and ignored.
  kiln::TmaPick bad = std::get<kiln::TmaPick>(t.heuristic);
  bad.stages = 9;
  REQUIRE(kiln::store_tuned(kiln::tuned_path(dir.path.string(), key), key, {{t.anchor, {bad, "tuned (stale)"}}}, &error));
  const std::string stale = plan_text_with(dir.path.string(), "stored");
  CHECK(stale.find("config: heuristic (the pick " + bad.text() + ", tuned (stale), is not legal") != std::string::npos);
}

TEST_CASE("tuned store: picks of every memory-bound family round-trip and re-plan the op") {
  TempDir dir;
  const auto plan = plan_of("mixed");
  REQUIRE(plan.tunables.size() == 7);
  // For each tunable, its last candidate that is not the heuristic's.
  std::map<int, kiln::TunedPick> picks;
  for (const auto& t : plan.tunables) {
    auto it = std::find_if(t.candidates.rbegin(), t.candidates.rend(), [&](const auto& c) { return c != t.heuristic; });
    REQUIRE(it != t.candidates.rend());
    picks[t.anchor] = {*it, "tuned 0.0200 ms (test)"};
  }
  auto of_family = [&](auto family) {
    return std::count_if(picks.begin(), picks.end(), [](const auto& p) {
      return std::holds_alternative<decltype(family)>(p.second.pick);
    });
  };
  CHECK(of_family(kiln::ElementwisePick{}) == 1);
  CHECK(of_family(kiln::ReducePick{}) == 1);
  CHECK(of_family(kiln::RownormPick{}) == 1);
  CHECK(of_family(kiln::ScanPick{}) == 1);
  CHECK(of_family(kiln::PoolPick{}) == 1);
  CHECK(of_family(kiln::StridedScanPick{}) == 1);
  CHECK(of_family(kiln::SplitNormPick{}) == 1);
  const std::string key = kiln::tuning_key_text(plan, "Test GPU 80GB");
  std::string error;
  REQUIRE(kiln::store_tuned(kiln::tuned_path(dir.path.string(), key), key, picks, &error));
  const auto back = kiln::load_tuned(kiln::tuned_path(dir.path.string(), key), key);
  REQUIRE(back.size() == 7);
  for (const auto& [anchor, p] : picks) CHECK(back.at(anchor).pick == p.pick);
  // The runtime (tuning = stored) plans every kernel with its stored pick.
  const std::string tuned = plan_text_with(dir.path.string(), "stored", "mixed");
  std::size_t at = 0, count = 0;
  while ((at = tuned.find("config: tuned 0.0200 ms (test)", at)) != std::string::npos) ++count, ++at;
  CHECK(count >= 7);   // each kernel's reason (in the plan's list and its source's header)
  for (const auto& [anchor, p] : picks) {
    CAPTURE(kiln::pick_text(p.pick));
    if (const auto* e = std::get_if<kiln::ElementwisePick>(&p.pick))
      CHECK(tuned.find(fmt::format("ElementwiseConfig{{vec=4 threads={}", e->threads)) != std::string::npos);
    if (const auto* r = std::get_if<kiln::ReducePick>(&p.pick))
      CHECK(tuned.find(fmt::format("threads={} unroll={}", r->threads, r->unroll)) != std::string::npos);
    if (const auto* r = std::get_if<kiln::RownormPick>(&p.pick))
      CHECK(tuned.find(fmt::format("threads={} group={} items={}", r->threads, r->group, r->items)) != std::string::npos);
    if (const auto* c = std::get_if<kiln::ScanPick>(&p.pick))
      CHECK(tuned.find(fmt::format("threads={} vecs={}", c->threads, c->vecs)) != std::string::npos);
    if (const auto* c = std::get_if<kiln::StridedScanPick>(&p.pick))
      CHECK(tuned.find(fmt::format("inner=1000 threads={} vecs=1 unroll={}", c->threads, c->unroll)) != std::string::npos);
    if (const auto* n = std::get_if<kiln::SplitNormPick>(&p.pick))
      CHECK(tuned.find(fmt::format("kSplitStats outer=16 len=262144 inner=1 threads={} ", n->threads)) != std::string::npos);
    if (const auto* c = std::get_if<kiln::PoolPick>(&p.pick)) {
      CHECK(tuned.find(fmt::format("PoolConfig{{threads={} ", c->threads)) != std::string::npos);
      CHECK(tuned.find(fmt::format("run={} vec={} rows={}", c->run, c->vec, c->rows)) != std::string::npos);
    }
  }
  CHECK(plan_text_with(dir.path.string(), "off", "mixed").find("config: tuned") == std::string::npos);
}

TEST_CASE("tuned store: a dyn matmul is tuned per bucket and size class, and a stored pick serves the class") {
  const auto at1000 = plan_of("lin_dyn", {{"M", 1000}});
  REQUIRE(at1000.tunables.size() == 1);
  const auto& t = at1000.tunables[0];
  CHECK(std::find(t.candidates.begin(), t.candidates.end(), t.heuristic) != t.candidates.end());
  CHECK(t.what.find("dyn M: M in the size class") != std::string::npos);
  // The key: the bucket and the class, never the value.
  const auto key = kiln::tuning_key_text(at1000, "Test GPU 80GB");
  const auto& thresholds = at1000.dyn_thresholds.at("M");
  const std::string klass = kiln::dyn_class_text(thresholds, kiln::dyn_class(thresholds, 1000));
  CHECK(key.find("M=dyn(general, class " + klass + ")") != std::string::npos);
  CHECK(key == kiln::tuning_key_text(plan_of("lin_dyn", {{"M", 1001}}), "Test GPU 80GB"));
  CHECK(key != kiln::tuning_key_text(plan_of("lin_dyn", {{"M", 1008}}), "Test GPU 80GB"));   // multiple of 16
  const std::int64_t other = thresholds.back() + 1;   // the top class
  CHECK(kiln::dyn_class(thresholds, other) != kiln::dyn_class(thresholds, 1001));
  CHECK(key != kiln::tuning_key_text(plan_of("lin_dyn", {{"M", other}}), "Test GPU 80GB"));
  // The top class has no largest value to size a workspace for: no candidate has K slices.
  const auto top = plan_of("lin_dyn", {{"M", 200000}});
  REQUIRE(top.tunables.size() == 1);
  for (const auto& c : top.tunables[0].candidates) CHECK(std::get<kiln::TmaPick>(c).split_k == 1);
  // A pick stored at M = 1000 plans M = 1001 (same bucket and class), not M = 1008.
  TempDir dir;
  kiln::TmaPick pick = std::get<kiln::TmaPick>(t.candidates.front());
  if (pick == std::get<kiln::TmaPick>(t.heuristic)) pick = std::get<kiln::TmaPick>(t.candidates.back());
  std::string error;
  const std::map<int, kiln::TunedPick> picks{{t.anchor, {pick, "tuned 0.0200 ms (test)"}}};
  REQUIRE(kiln::store_tuned(kiln::tuned_path(dir.path.string(), key), key, picks, &error));
  const std::string same = plan_text_with(dir.path.string(), "stored", "lin_dyn", kiln::Bindings{{{"M", 1001}}, {}});
  CHECK(same.find("config: tuned 0.0200 ms (test)") != std::string::npos);
  const std::string other_bucket =
      plan_text_with(dir.path.string(), "stored", "lin_dyn", kiln::Bindings{{{"M", 1008}}, {}});
  CHECK(other_bucket.find("config: heuristic") != std::string::npos);
}

TEST_CASE("Options::tuning: a bad value is an ArgumentError naming it") {
  kiln::Options o;
  o.use_environment = false;
  o.disk_cache = false;
  o.tuning = "always";
  try {
    kiln::Runtime rt(o);
    FAIL("no error");
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()).find("tuning 'always' (Options::tuning or KILN_TUNING) is not one of off, stored, on-first-call") !=
          std::string::npos);
  }
}

TEST_CASE("tuner: a launch the driver refuses skips the candidate, a fault ends the run") {
  const auto error = [](const char* call, int code) { return kiln::CudaError("kiln: failed", call, code, "CODE"); };
  CHECK(kiln::tuner_skips_launch_error(error("cuLaunchKernel", CUDA_ERROR_INVALID_VALUE)));
  CHECK(kiln::tuner_skips_launch_error(error("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)));
  CHECK(kiln::tuner_skips_launch_error(error("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", CUDA_ERROR_INVALID_VALUE)));
  CHECK(kiln::tuner_skips_launch_error(error("cuOccupancyMaxActiveClusters", CUDA_ERROR_INVALID_VALUE)));
  // Sticky faults, and errors of other calls, end the run.
  CHECK_FALSE(kiln::tuner_skips_launch_error(error("cuLaunchKernel", CUDA_ERROR_ILLEGAL_ADDRESS)));
  CHECK_FALSE(kiln::tuner_skips_launch_error(error("cuCtxSynchronize", CUDA_ERROR_ILLEGAL_INSTRUCTION)));
  CHECK_FALSE(kiln::tuner_skips_launch_error(error("cuCtxSynchronize", CUDA_ERROR_INVALID_VALUE)));
  CHECK_FALSE(kiln::tuner_skips_launch_error(error("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY)));
}
