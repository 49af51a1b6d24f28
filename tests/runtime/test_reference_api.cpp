// Op::reference and Executable::reference: the float64 CPU reference through the public API, on
// host arrays laid out as a launch's arguments. No GPU is involved.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace {

kiln::Runtime make_runtime() {
  kiln::Options options;
  options.arch = "sm_90";
  options.disk_cache = false;
  options.use_environment = false;
  return kiln::Runtime(options);
}

const char* kSpec = R"(
op relu_add {
  dims B = 2, N = 3
  in  a: f32[B, N]
  in  b: f32[N]
  out y = relu(a + b)
}
op scaled_half {
  dims N = 4
  in  x: f16[N]
  in  s: f32
  out y = f32(x) * s
  out h = x * x
}
)";

}  // namespace

TEST_CASE("Op::reference binds the dims from host tensors and writes each output in its dtype") {
  kiln::Runtime rt = make_runtime();
  kiln::Program prog = rt.load_string(kSpec, "ref.kiln");
  std::vector<float> a = {1, -2, 3, -4, 5, -6}, b = {0.5f, 0.5f, 0.5f}, y(6, -1);
  prog.op("relu_add").reference({kiln::TensorRef(a.data(), kiln::f32, {2, 3}), kiln::TensorRef(b.data(), kiln::f32, {3}),
                                 kiln::TensorRef(y.data(), kiln::f32, {2, 3})});
  CHECK(y == std::vector<float>{1.5f, 0, 3.5f, 0, 5.5f, 0});
  // Other dims than the spec's defaults bind from the tensors, as a call binds them.
  std::vector<float> a1 = {-1, 2}, b1 = {1, 1}, y1(2);
  prog.op("relu_add").reference({kiln::TensorRef(a1.data(), kiln::f32, {1, 2}), kiln::TensorRef(b1.data(), kiln::f32, {2}),
                                 kiln::TensorRef(y1.data(), kiln::f32, {1, 2})});
  CHECK(y1 == std::vector<float>{0, 3});

  // f16 in and out (bits), a scalar, two outputs. 1.5 * 1.5 = 2.25 is exact in f16 (0x4080).
  const std::uint16_t one_and_half = 0x3E00;
  std::vector<std::uint16_t> x(4, one_and_half), h(4, 0);
  std::vector<float> out(4, 0);
  prog.op("scaled_half").reference({kiln::TensorRef(x.data(), kiln::f16, {4}), 2.0,
                                    kiln::TensorRef(out.data(), kiln::f32, {4}), kiln::TensorRef(h.data(), kiln::f16, {4})});
  CHECK(out == std::vector<float>(4, 3.0f));
  CHECK(h == std::vector<std::uint16_t>(4, 0x4080));
}

TEST_CASE("Executable::reference checks the arguments against the specialization") {
  kiln::Runtime rt = make_runtime();
  kiln::Executable exe = rt.load_string(kSpec, "ref.kiln").op("relu_add").specialize({{"B", 2}, {"N", 3}});
  std::vector<float> a(6, 1), b(3, 1), y(6, 0);
  exe.reference({kiln::TensorRef(a.data(), kiln::f32, {2, 3}), kiln::TensorRef(b.data(), kiln::f32, {3}),
                 kiln::TensorRef(y.data(), kiln::f32, {2, 3})});
  CHECK(y == std::vector<float>(6, 2));
  CHECK_THROWS_AS(exe.reference({kiln::TensorRef(a.data(), kiln::f32, {3, 2}), kiln::TensorRef(b.data(), kiln::f32, {3}),
                                 kiln::TensorRef(y.data(), kiln::f32, {2, 3})}),
                  kiln::ShapeError);
  CHECK_THROWS_AS(exe.reference({kiln::TensorRef(a.data(), kiln::f32, {2, 3})}), kiln::ArgumentError);
}

TEST_CASE("Executable::reference of a dyn op takes any value of its bucket, as a launch does") {
  kiln::Runtime rt = make_runtime();
  kiln::Program p = rt.load_string("op twice {\n  dims dyn N = 16\n  in x: f32[N]\n  out y = x * 2.0\n}\n", "twice.kiln");
  kiln::Executable exe = p.op("twice").specialize({{"N", 1024}});
  for (std::int64_t n : {16, 48}) {
    std::vector<float> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n), -1.0f);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 3.0f;
    exe.reference({kiln::TensorRef(x.data(), kiln::f32, {n}), kiln::TensorRef(y.data(), kiln::f32, {n})});
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == 2 * x[i]);
  }
  std::vector<float> x(17), y(17);
  CHECK_THROWS_AS(exe.reference({kiln::TensorRef(x.data(), kiln::f32, {17}), kiln::TensorRef(y.data(), kiln::f32, {17})}),
                  kiln::ShapeError);
}
