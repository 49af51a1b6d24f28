// `dyn` dims on the GPU (issue 20, [Note: dyn buckets] in generator/plan/plan.h): one executable
// per bucket serves every value in it, with the grid and the kernel's dims from each launch;
// an executable refuses a value outside its bucket and shapes that disagree. Values are small
// integers, so every result is exact in f32.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "runtime/driver.h"

namespace kiln::test {

namespace {

constexpr const char* kDynSpec = R"(
op scale {
  dims dyn N = 1000, C = 64
  in  x: f32[N, C]
  in  b: f32[C]
  out y = relu(x * 2.0 + b)
}
op rows {
  dims dyn N = 1000
  in  x: f32[N]
  in  z: f32[N]
  out y = x * 3.0 - z
}
)";

// x[i] = (i % 37) - 18, b[c] = (c % 5) - 2: y = max(2x + b, 0).
std::int64_t run_scale(const Op& op, std::int64_t n) {
  const std::int64_t c = 64;
  std::vector<float> x(static_cast<std::size_t>(n * c)), b(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<std::int64_t>(i) % 37 - 18);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<std::int64_t>(i) % 5 - 2);
  DeviceBuffer dx(x.size() * 4), db(b.size() * 4), dy(x.size() * 4 + 64);
  dx.upload(x);
  db.upload(b);
  dy.memset32(0x7fc00000u);   // NaN, and 16 floats past the end that must stay NaN
  op(nullptr, {TensorRef(dx.data(), DType::f32, {n, c}), TensorRef(db.data(), DType::f32, {c}),
               TensorRef(dy.data(), DType::f32, {n, c})});
  check(driver().ctx_synchronize(), "cuCtxSynchronize");
  const auto y = dy.download_as<std::uint32_t>();
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = std::max(2 * x[i] + b[i % 64], 0.0f);
    float got;
    std::memcpy(&got, &y[i], 4);
    wrong += got != want;
  }
  for (std::size_t i = x.size(); i < y.size(); ++i) wrong += y[i] != 0x7fc00000u;
  return wrong;
}

}  // namespace

TEST_CASE("gpu: a dyn dim's values share one executable per bucket, each launch with its own extents") {
  KILN_REQUIRE_GPU();
  Runtime rt(without_disk_cache());
  Program program = rt.load_string(kDynSpec, "dyn.kiln");
  const Op scale = program.op("scale");
  // N in every bucket (general, multiple of 16, one): N is an outer extent, so each plans the
  // same 16-byte vectors over rows of 64 floats, one source for all
  for (std::int64_t n : {1000, 1001, 7, 100003, 2000, 4096, 16, 1, 1 << 20}) {
    const std::int64_t wrong = run_scale(scale, n);
    std::printf("dyn scale N=%lld: %lld wrong\n", static_cast<long long>(n), static_cast<long long>(wrong));
    CHECK_MESSAGE(wrong == 0, "N=" << n);
  }
  const Stats s = rt.stats();
  std::printf("dyn scale: %llu compiles for 9 values in 3 buckets\n", static_cast<unsigned long long>(s.compiles));
  CHECK(s.compiles == 1);
}

TEST_CASE("gpu: an executable of a dyn op refuses other buckets and disagreeing shapes") {
  KILN_REQUIRE_GPU();
  Runtime rt(without_disk_cache());
  Program program = rt.load_string(kDynSpec, "dyn.kiln");
  Executable exe = program.op("rows").specialize({{"N", 1024}});
  DeviceBuffer x(4096 * 4), z(4096 * 4), y(4096 * 4);
  std::vector<float> hx(4096), hz(4096);
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = static_cast<float>(i % 101), hz[i] = static_cast<float>(i % 7);
  x.upload(hx);
  z.upload(hz);
  for (std::int64_t n : {1024, 4096, 16}) {   // one bucket: multiple of 16
    y.memset32(0x7fc00000u);
    exe.launch(nullptr, {TensorRef(x.data(), DType::f32, {n}), TensorRef(z.data(), DType::f32, {n}),
                         TensorRef(y.data(), DType::f32, {n})});
    check(driver().ctx_synchronize(), "cuCtxSynchronize");
    const auto got = y.download_as<float>();
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < n; ++i) wrong += got[static_cast<std::size_t>(i)] != 3 * hx[static_cast<std::size_t>(i)] - hz[static_cast<std::size_t>(i)];
    CHECK_MESSAGE(wrong == 0, "N=" << n);
  }
  auto launch = [&](std::int64_t nx, std::int64_t nz, std::int64_t ny) {
    exe.launch(nullptr, {TensorRef(x.data(), DType::f32, {nx}), TensorRef(z.data(), DType::f32, {nz}),
                         TensorRef(y.data(), DType::f32, {ny})});
  };
  CHECK_THROWS_WITH_AS(launch(1000, 1000, 1000),
                       doctest::Contains("dyn dim N=1000 is outside this executable's bucket (N: multiple of 16)"), ShapeError);
  CHECK_THROWS_WITH_AS(launch(2048, 1024, 2048), doctest::Contains("'z' has shape 1024, expected 2048"), ShapeError);
  CHECK(rt.stats().compiles == 1);
}

}  // namespace kiln::test
