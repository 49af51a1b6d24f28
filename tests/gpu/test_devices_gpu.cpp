// Several devices and streams in one process (issue 23): a Runtime serving every device it is
// called on, the device guard, arch checks before a load, and concurrent streams.
#include <atomic>
#include <cmath>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "gpu_test_util.h"
#include "runtime/driver.h"

namespace kiln::test {

namespace {

constexpr const char* kSpec = R"(
op scale_add {
  dims R, C
  in  x: f32[R, C]
  in  b: f32[C]
  out y = x * 3.0 + b
}
)";

// x[i] = i % 97, b[j] = j % 13: every result is an exact float.
struct Case {
  std::int64_t R, C;
  DeviceBuffer x, b, y;
  Case(std::int64_t r, std::int64_t c) : R(r), C(c), x(r * c * 4), b(c * 4), y(r * c * 4) {
    std::vector<float> hx(r * c), hb(c);
    for (std::int64_t i = 0; i < r * c; ++i) hx[i] = static_cast<float>(i % 97);
    for (std::int64_t j = 0; j < c; ++j) hb[j] = static_cast<float>(j % 13);
    x.upload(hx);
    b.upload(hb);
    y.memset32(0x7fc00000u);   // NaN: a kernel that writes nothing fails
  }
  std::vector<Arg> args() const {
    return {TensorRef{x.data(), DType::f32, {R, C}}, TensorRef{b.data(), DType::f32, {C}}, TensorRef{y.data(), DType::f32, {R, C}}};
  }
  std::int64_t wrong() const {   // elements that differ from the expected value
    const auto got = y.download_as<float>();
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < R * C; ++i)
      bad += got[i] != static_cast<float>(i % 97) * 3.0f + static_cast<float>((i % C) % 13);
    return bad;
  }
};

}  // namespace

TEST_CASE("gpu: a device out of range is an ArgumentError naming the range, and the guard restores the context") {
  KILN_REQUIRE_GPU();
  const int count = device_count();
  REQUIRE(count >= 1);
  try {
    DeviceGuard guard(count);
    FAIL("DeviceGuard accepted an ordinal out of range");
  } catch (const ArgumentError& e) {
    CHECK(std::string(e.what()).find(fmt::format("device {} is out of range: this process sees {} CUDA device", count, count)) !=
          std::string::npos);
  }
  CHECK_THROWS_AS(DeviceGuard(-1), ArgumentError);
  int before = -1;
  void* ctx = current_context(&before);
  {
    DeviceGuard guard(count - 1);
    int now = -1;
    current_context(&now);
    CHECK(now == count - 1);
  }
  int after = -1;
  CHECK(current_context(&after) == ctx);
  CHECK(after == before);
}

TEST_CASE("gpu: Options::arch naming code the device cannot run is an ArgumentError before any load") {
  KILN_REQUIRE_GPU();
  int device = 0;
  current_context(&device);
  const std::string own = device_arch(device);
  const std::string other = own.rfind("sm_8", 0) == 0 ? "sm_90a" : "sm_80";
  REQUIRE(!arch_runs_on(other, own));
  Options options = without_disk_cache();
  options.arch = other;
  Runtime rt(options);
  Op op = rt.load_string(kSpec, "devices.kiln").op("scale_add");
  Case c(64, 33);
  try {
    op(nullptr, c.args());
    FAIL("a launch loaded code for another arch");
  } catch (const ArgumentError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find(fmt::format("was planned for {}, but the current device {} (", other, device)) != std::string::npos);
    CHECK(what.find(fmt::format(") is {}", own)) != std::string::npos);
    CHECK(what.find("Options::arch (or KILN_ARCH)") != std::string::npos);
  }
  // The same op on a runtime planning for the device runs (and is right).
  Runtime own_rt(without_disk_cache());
  own_rt.load_string(kSpec, "devices.kiln").op("scale_add")(nullptr, c.args());
  synchronize();
  CHECK(c.wrong() == 0);
}

TEST_CASE("gpu: a load names its device and arch at KILN_LOG=info") {
  KILN_REQUIRE_GPU();
  std::mutex mutex;
  std::vector<std::string> lines;
  set_log_handler([&](int, const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    lines.push_back(line);
  });
  REQUIRE(set_log_level_name("info"));
  Runtime rt(without_disk_cache());
  Case c(8, 5);
  rt.load_string(kSpec, "devices.kiln").op("scale_add")(nullptr, c.args());
  synchronize();
  set_log_handler({});
  set_log_level_name("warning");
  int device = 0;
  current_context(&device);
  bool found = false;
  for (const auto& l : lines)
    found |= l.find("loaded scale_add (C=5 R=8: 1 kernel, ") != std::string::npos &&
             l.find(fmt::format("on device {} ({}, {})", device, device_name(device), device_arch(device))) != std::string::npos;
  INFO(fmt::format("{}", fmt::join(lines, "\n")));
  CHECK(found);
  CHECK(c.wrong() == 0);
}

TEST_CASE("gpu: one process, two streams of one device, launches interleaved on both") {
  KILN_REQUIRE_GPU();
  Runtime rt(without_disk_cache());
  Op op = rt.load_string(kSpec, "devices.kiln").op("scale_add");
  current_context(nullptr);
  CUstream s[2];
  for (auto& stream : s) check(driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  Case a(4096, 1031), b(4096, 1031);
  for (int i = 0; i < 20; ++i) {
    op(s[0], a.args());
    op(s[1], b.args());
  }
  for (auto stream : s) {
    check(driver().stream_synchronize(stream), "cuStreamSynchronize");
    check(driver().stream_destroy(stream), "cuStreamDestroy");
  }
  CHECK(a.wrong() == 0);
  CHECK(b.wrong() == 0);
  CHECK(rt.stats().compiles == 1);
}

TEST_CASE("gpu: one Runtime launching the same op on two devices at once compiles it once") {
  KILN_REQUIRE_GPU();
  const int count = device_count();
  if (count < 2) {
    std::printf("%s needs two GPUs; this process sees %d\n", kSkipMarker, count);
    return;
  }
  Runtime rt(without_disk_cache());
  Op op = rt.load_string(kSpec, "devices.kiln").op("scale_add");
  std::vector<std::string> errors(2);
  std::vector<std::int64_t> wrong(2, -1);
  std::vector<std::thread> threads;
  for (int d = 0; d < 2; ++d)
    threads.emplace_back([&, d] {
      try {
        DeviceGuard guard(d);
        Case c(3000, 517);
        for (int i = 0; i < 10; ++i) op(nullptr, c.args());
        synchronize();
        wrong[d] = c.wrong();
      } catch (const std::exception& e) {
        errors[d] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int d = 0; d < 2; ++d) {
    INFO("device " << d << ": " << errors[d]);
    CHECK(errors[d].empty());
    CHECK(wrong[d] == 0);
  }
  // Same-model devices share the kernel: one NVRTC run, loaded into both contexts. Devices of
  // different archs (or SM counts, which size persistent grids) plan and compile their own.
  const bool same = device_arch(0) == device_arch(1) && device_sm_count(0) == device_sm_count(1);
  CHECK(rt.stats().compiles == (same ? 1u : 2u));
}

}  // namespace kiln::test
