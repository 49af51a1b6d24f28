// Reference interpreter: elementwise ops, broadcasting, casts, f16/bf16 rounding,
// random inputs and the size guard. Expected values are computed by hand or by an
// independent scalar formula in the test.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>

#include "ref_builder.h"

using kiln::DType;
using kiln::ir::OpKind;
using kiln::test::Dims;
using kiln::test::IrBuilder;
namespace ref = kiln::ref;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// out = kind(x) on a 1-D f64 tensor.
std::vector<double> unary(OpKind kind, const std::vector<double>& x, DType out_dtype = DType::f64,
                          DType in_dtype = DType::f64) {
  IrBuilder b;
  const Dims shape{static_cast<std::int64_t>(x.size())};
  auto in = b.input("x", in_dtype, shape);
  b.output("y", b.add(kind, out_dtype, {in}, shape));
  return kiln::test::run1(b, {ref::make_tensor(in_dtype, shape, x)}).data;
}

}  // namespace

TEST_CASE("unary elementwise ops match their formulas") {
  const std::vector<double> x = {-2.5, -1.0, -0.0, 0.5, 1.0, 3.0};
  struct Case {
    OpKind kind;
    std::function<double(double)> f;
  };
  const Case cases[] = {
      {OpKind::Neg, [](double v) { return -v; }},
      {OpKind::Abs, [](double v) { return std::fabs(v); }},
      {OpKind::Exp, [](double v) { return std::exp(v); }},
      {OpKind::Tanh, [](double v) { return std::tanh(v); }},
      {OpKind::Sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {OpKind::Relu, [](double v) { return v > 0 ? v : 0.0; }},
      {OpKind::Gelu, [](double v) { return v * 0.5 * std::erfc(-v / std::sqrt(2.0)); }},
      {OpKind::Silu, [](double v) { return v / (1 + std::exp(-v)); }},
      {OpKind::Log1p, [](double v) { return std::log(1 + v); }},
      {OpKind::Expm1, [](double v) { return std::exp(v) - 1; }},
      {OpKind::Erf, [](double v) { return 1 - std::erfc(v); }},
  };
  for (const auto& c : cases) {
    const auto y = unary(c.kind, x);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = c.f(x[i]);   // log1p(-2.5) is NaN, log1p(-1) is -inf
      if (std::isnan(want)) CHECK(std::isnan(y[i]));
      else if (std::isinf(want)) CHECK(y[i] == want);
      else CHECK(y[i] == doctest::Approx(want).epsilon(1e-14));
    }
  }
  // Hand values: gelu(1) = Phi(1) = 0.841344746..., silu(1) = 0.731058578...
  CHECK(unary(OpKind::Gelu, {1.0})[0] == doctest::Approx(0.8413447460685429).epsilon(1e-15));
  CHECK(unary(OpKind::Silu, {1.0})[0] == doctest::Approx(0.7310585786300049).epsilon(1e-15));
  CHECK(unary(OpKind::Sqrt, {4.0, 2.0})[1] == doctest::Approx(1.4142135623730951));
  CHECK(unary(OpKind::Rsqrt, {4.0})[0] == 0.5);
  CHECK(unary(OpKind::Log, {1.0})[0] == 0.0);
  CHECK(std::isnan(unary(OpKind::Log, {-1.0})[0]));
  CHECK(std::isnan(unary(OpKind::Relu, {kNaN})[0]));  // relu propagates NaN, as PyTorch
  // log1p and expm1 keep the digits near 0 that log(1 + x) and exp(x) - 1 lose.
  CHECK(unary(OpKind::Log1p, {1e-12})[0] == doctest::Approx(9.999999999995e-13).epsilon(1e-15));
  CHECK(unary(OpKind::Expm1, {1e-12})[0] == doctest::Approx(1.0000000000005e-12).epsilon(1e-15));
  CHECK(std::isinf(unary(OpKind::Log1p, {-1.0})[0]));
  CHECK(unary(OpKind::Erf, {1.0})[0] == doctest::Approx(0.8427007929497149).epsilon(1e-15));
  CHECK(unary(OpKind::Not, {0, 1}, DType::boolean, DType::boolean) == std::vector<double>{1, 0});
}

TEST_CASE("binary ops broadcast numpy-style for every kind") {
  // [2,1,3] op [4,1] -> [2,4,3]
  const Dims sa{2, 1, 3}, sb{4, 1}, so{2, 4, 3};
  const auto a = kiln::test::noise(6, 1, -3, 3);
  auto bv = kiln::test::noise(4, 2, 0.5, 2);
  bv[1] = a[1];  // an equal pair for the comparisons
  struct Case {
    OpKind kind;
    DType out;
    std::function<double(double, double)> f;
  };
  const Case cases[] = {
      {OpKind::Add, DType::f64, std::plus<double>()},
      {OpKind::Sub, DType::f64, std::minus<double>()},
      {OpKind::Mul, DType::f64, std::multiplies<double>()},
      {OpKind::Div, DType::f64, std::divides<double>()},
      {OpKind::Pow, DType::f64, [](double x, double y) { return std::pow(x, y); }},
      {OpKind::Minimum, DType::f64, [](double x, double y) { return std::min(x, y); }},
      {OpKind::Maximum, DType::f64, [](double x, double y) { return std::max(x, y); }},
      {OpKind::Eq, DType::boolean, [](double x, double y) { return double(x == y); }},
      {OpKind::Ne, DType::boolean, [](double x, double y) { return double(x != y); }},
      {OpKind::Lt, DType::boolean, [](double x, double y) { return double(x < y); }},
      {OpKind::Le, DType::boolean, [](double x, double y) { return double(x <= y); }},
      {OpKind::Gt, DType::boolean, [](double x, double y) { return double(x > y); }},
      {OpKind::Ge, DType::boolean, [](double x, double y) { return double(x >= y); }},
  };
  for (const auto& c : cases) {
    IrBuilder b;
    auto x = b.input("a", DType::f64, sa);
    auto y = b.input("b", DType::f64, sb);
    b.output("c", b.add(c.kind, c.out, {x, y}, so));
    const auto out = kiln::test::run1(b, {ref::make_tensor(DType::f64, sa, a), ref::make_tensor(DType::f64, sb, bv)});
    REQUIRE(out.shape == so);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 3; ++k) {
          const double want = c.f(a[static_cast<std::size_t>(i * 3 + k)], bv[static_cast<std::size_t>(j)]);
          const double got = out.data[static_cast<std::size_t>((i * 4 + j) * 3 + k)];
          if (std::isnan(want))
            CHECK(std::isnan(got));  // pow of a negative base
          else
            CHECK(got == doctest::Approx(want).epsilon(1e-15));
        }
  }
}

TEST_CASE("logical and/or, and a scalar literal broadcast") {
  IrBuilder b;
  auto x = b.input("x", DType::boolean, {4});
  auto y = b.input("y", DType::boolean, {4});
  b.output("and", b.add(OpKind::And, DType::boolean, {x, y}, {4}));
  b.output("or", b.add(OpKind::Or, DType::boolean, {x, y}, {4}));
  auto two = b.literal(2.0, DType::f32);
  auto z = b.input("z", DType::f32, {3});
  b.output("scaled", b.add(OpKind::Mul, DType::f32, {two, z}, {3}));
  auto outs = ref::evaluate(b.bind(), {ref::make_tensor(DType::boolean, {4}, {0, 0, 1, 1}),
                                       ref::make_tensor(DType::boolean, {4}, {0, 1, 0, 1}),
                                       ref::make_tensor(DType::f32, {3}, {1, 2, 3})});
  CHECK(outs[0].data == std::vector<double>{0, 0, 0, 1});
  CHECK(outs[1].data == std::vector<double>{0, 1, 1, 1});
  CHECK(outs[2].data == std::vector<double>{2, 4, 6});
}

TEST_CASE("minimum / maximum propagate NaN from either side") {
  IrBuilder b;
  auto x = b.input("x", DType::f64, {4});
  auto y = b.input("y", DType::f64, {4});
  b.output("lo", b.add(OpKind::Minimum, DType::f64, {x, y}, {4}));
  b.output("hi", b.add(OpKind::Maximum, DType::f64, {x, y}, {4}));
  auto outs = ref::evaluate(b.bind(), {ref::make_tensor(DType::f64, {4}, {kNaN, 1, 2, -kInf}),
                                       ref::make_tensor(DType::f64, {4}, {1, kNaN, 3, 5})});
  CHECK(std::isnan(outs[0].data[0]));
  CHECK(std::isnan(outs[0].data[1]));
  CHECK(outs[0].data[2] == 2);
  CHECK(outs[0].data[3] == -kInf);
  CHECK(std::isnan(outs[1].data[0]));
  CHECK(std::isnan(outs[1].data[1]));
  CHECK(outs[1].data[2] == 3);
  CHECK(outs[1].data[3] == 5);
}

TEST_CASE("where broadcasts its condition and both branches") {
  IrBuilder b;
  auto c = b.input("c", DType::boolean, {2, 1});
  auto x = b.input("x", DType::f32, {3});
  auto y = b.literal(-1.0, DType::f32);
  b.output("w", b.add(OpKind::Where, DType::f32, {c, x, y}, {2, 3}));
  auto out = kiln::test::run1(b, {ref::make_tensor(DType::boolean, {2, 1}, {1, 0}),
                                  ref::make_tensor(DType::f32, {3}, {10, 20, 30})});
  CHECK(out.data == std::vector<double>{10, 20, 30, -1, -1, -1});
}

TEST_CASE("casts: truncation toward zero, saturation, NaN, bool, wrap, rounding") {
  const std::vector<double> x = {-2.7, -0.5, 0.0, 2.7, kNaN, 3e9, -3e9};
  const auto to_i32 = unary(OpKind::Cast, x, DType::i32);
  CHECK(to_i32 == std::vector<double>{-2, 0, 0, 2, 0, 2147483647.0, -2147483648.0});
  const auto to_i64 = unary(OpKind::Cast, x, DType::i64);
  CHECK(to_i64 == std::vector<double>{-2, 0, 0, 2, 0, 3e9, -3e9});
  const auto to_bool = unary(OpKind::Cast, x, DType::boolean);
  CHECK(to_bool == std::vector<double>{1, 1, 0, 1, 1, 1, 1});  // x != 0; NaN != 0
  // i64 -> i32 keeps the low 32 bits, two's complement.
  CHECK(unary(OpKind::Cast, {4294967301.0, 2147483648.0}, DType::i32, DType::i64) ==
        std::vector<double>{5, -2147483648.0});
  CHECK(unary(OpKind::Cast, {0.1}, DType::f32)[0] == static_cast<double>(0.1f));
  CHECK(unary(OpKind::Cast, {1 + 0x1p-11}, DType::f16)[0] == 1.0);
  CHECK(unary(OpKind::Cast, {1, 0}, DType::f32, DType::boolean) == std::vector<double>{1, 0});
}

TEST_CASE("round_to: round-to-nearest-even into f16, bf16, f32") {
  using ref::round_to;
  CHECK(round_to(DType::f16, 1 + 0x1p-11) == 1.0);                 // tie, to even
  CHECK(round_to(DType::f16, 1 + 3 * 0x1p-11) == 1 + 0x1p-9);      // tie, to even (up)
  CHECK(round_to(DType::f16, 1 + 0x1p-11 + 0x1p-30) == 1 + 0x1p-10);  // above the tie
  CHECK(round_to(DType::f16, 65504) == 65504);
  CHECK(round_to(DType::f16, 65519) == 65504);
  CHECK(round_to(DType::f16, 65520) == kInf);                      // tie at the top goes to inf
  CHECK(round_to(DType::f16, -1e6) == -kInf);
  CHECK(round_to(DType::f16, 0x1p-24) == 0x1p-24);                 // smallest subnormal
  CHECK(round_to(DType::f16, 0x1p-25) == 0.0);                     // tie between 0 and 2^-24: even is 0
  CHECK(round_to(DType::f16, 3 * 0x1p-25) == 0x1p-23);
  CHECK(std::signbit(round_to(DType::f16, -0x1p-30)));             // -0 keeps its sign
  CHECK(round_to(DType::bf16, 1 + 0x1p-8) == 1.0);
  CHECK(round_to(DType::bf16, 1 + 3 * 0x1p-8) == 1 + 0x1p-6);
  CHECK(round_to(DType::bf16, 3.0e38) == 226 * 0x1p120);            // 3e38 / 2^120 = 225.7
  CHECK(round_to(DType::bf16, 0x1.FFp127) == kInf);
  CHECK(round_to(DType::f32, 1 + 0x1p-24) == 1.0);
  CHECK(round_to(DType::f32, 1 + 0x1p-23) == 1 + 0x1p-23);
  CHECK(std::isnan(round_to(DType::f16, kNaN)));
  CHECK(round_to(DType::f64, 1 + 0x1p-40) == 1 + 0x1p-40);
  CHECK(round_to(DType::i32, 2147483648.0) == -2147483648.0);
  CHECK(round_to(DType::boolean, -3) == 1);
}

TEST_CASE("f16 and bf16 are rounded on load and on store") {
  IrBuilder b;
  auto x = b.input("x", DType::f16, {2});
  auto y = b.input("y", DType::f16, {2});
  b.output("s", b.add(OpKind::Add, DType::f16, {x, y}, {2}));
  b.output("x_loaded", x);
  // load: 1 + 2^-11 -> 1. store: 1 + 2^-10 (exact f16) + 2^-11 = 1 + 3*2^-11 -> 1 + 2^-9.
  auto outs = ref::evaluate(b.bind(), {ref::make_tensor(DType::f16, {2}, {1 + 0x1p-11, 1 + 0x1p-10}),
                                       ref::make_tensor(DType::f16, {2}, {0, 0x1p-11})});
  CHECK(outs[1].data[0] == 1.0);
  CHECK(outs[0].data[0] == 1.0);
  CHECK(outs[0].data[1] == 1 + 0x1p-9);

  IrBuilder c;
  auto p = c.input("p", DType::bf16, {1});
  auto q = c.input("q", DType::bf16, {1});
  c.output("m", c.add(OpKind::Mul, DType::bf16, {p, q}, {1}));
  // (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 -> 1 + 2^-6 in bf16
  CHECK(kiln::test::run1(c, {ref::make_tensor(DType::bf16, {1}, {1 + 0x1p-7}),
                             ref::make_tensor(DType::bf16, {1}, {1 + 0x1p-7})})
            .data[0] == 1 + 0x1p-6);
}

TEST_CASE("an f32 output is rounded to f32 but f32 intermediates keep double precision") {
  IrBuilder b;
  auto x = b.input("x", DType::f32, {1});
  auto third = b.add(OpKind::Div, DType::f32, {x, b.literal(3.0, DType::f32)}, {1});
  auto back = b.add(OpKind::Mul, DType::f32, {third, b.literal(3.0, DType::f32)}, {1});
  b.output("y", b.add(OpKind::Sub, DType::f32, {back, x}, {1}));
  b.output("t", third);
  auto outs = ref::evaluate(b.bind(), {ref::make_tensor(DType::f32, {1}, {1.0})});
  CHECK(std::fabs(outs[0].data[0]) < 1e-15);                    // (1/3)*3 - 1 in double
  CHECK(outs[1].data[0] == static_cast<double>(1.0f / 3.0f));   // the stored output is f32
}

TEST_CASE("random_inputs: ranges like torch.rand, deterministic per seed") {
  IrBuilder b;
  auto f = b.input("f", DType::f32, {1000});
  auto h = b.input("h", DType::f16, {1000});
  auto i = b.input("i", DType::i32, {1000});
  auto t = b.input("t", DType::boolean, {1000});
  auto s = b.scalar("seed", DType::u64);
  auto a = b.scalar("alpha", DType::f32);
  (void)f, (void)h, (void)i, (void)t, (void)s, (void)a;
  const auto bound = b.bind();
  const auto v1 = ref::random_inputs(bound, 7);
  const auto v2 = ref::random_inputs(bound, 7);
  const auto v3 = ref::random_inputs(bound, 8);
  REQUIRE(v1.size() == 6);
  for (double x : v1[0].tensor.data) CHECK((x >= 0 && x < 1 && ref::round_to(DType::f32, x) == x));
  for (double x : v1[1].tensor.data) CHECK((x >= 0 && x < 1 && ref::round_to(DType::f16, x) == x));
  bool saw_neg = false;
  for (double x : v1[2].tensor.data) {
    CHECK((x >= -8 && x < 8 && x == std::trunc(x)));
    saw_neg |= x < 0;
  }
  CHECK(saw_neg);
  double ones = 0;
  for (double x : v1[3].tensor.data) ones += x;
  CHECK((ones > 400 && ones < 600));
  CHECK_FALSE(v1[4].is_tensor);
  CHECK(v1[4].scalar.dtype == DType::u64);
  CHECK(v1[4].scalar.u != v3[4].scalar.u);
  CHECK((v1[5].scalar.f >= 0 && v1[5].scalar.f < 1));
  CHECK(v1[0].tensor.data == v2[0].tensor.data);
  CHECK(v1[4].scalar.u == v2[4].scalar.u);
  CHECK(v1[0].tensor.data != v3[0].tensor.data);
  CHECK(v1[0].tensor.data != v1[1].tensor.data);  // params draw from separate streams
}

TEST_CASE("random_inputs and evaluate do not depend on the thread count") {
  IrBuilder b;
  auto x = b.input("x", DType::f32, {300000});
  b.output("y", b.add(OpKind::Exp, DType::f32, {x}, {300000}));
  const auto bound = b.bind();
  setenv("KILN_REF_THREADS", "1", 1);
  const auto in1 = ref::random_inputs(bound, 3);
  const auto out1 = ref::evaluate(bound, in1);
  setenv("KILN_REF_THREADS", "5", 1);
  const auto in5 = ref::random_inputs(bound, 3);
  const auto out5 = ref::evaluate(bound, in5);
  unsetenv("KILN_REF_THREADS");
  CHECK(in1[0].tensor.data == in5[0].tensor.data);
  CHECK(out1[0].data == out5[0].data);
}

TEST_CASE("evaluate rejects wrong inputs and absurd sizes") {
  IrBuilder b;
  auto x = b.input("x", DType::f32, {2, 3});
  b.output("y", b.add(OpKind::Neg, DType::f32, {x}, {2, 3}));
  const auto bound = b.bind();
  CHECK_THROWS_AS(ref::evaluate(bound, {}), kiln::ArgumentError);
  CHECK_THROWS_AS(ref::evaluate(bound, {ref::make_tensor(DType::f32, {3, 2}, std::vector<double>(6))}),
                  kiln::ArgumentError);
  CHECK_THROWS_AS(ref::evaluate(bound, {ref::make_tensor(DType::f16, {2, 3}, std::vector<double>(6))}),
                  kiln::ArgumentError);
  CHECK_THROWS_AS(ref::evaluate(bound, {ref::make_scalar(DType::f32, 1)}), kiln::ArgumentError);

  IrBuilder big;
  auto h = big.input("h", DType::f32, {1 << 20, 1 << 20});
  big.output("y", big.add(OpKind::Neg, DType::f32, {h}, {1 << 20, 1 << 20}));
  // Refused before anything is allocated: 2^40 elements as doubles is 16 TiB.
  try {
    ref::evaluate(big.bind(), {ref::make_tensor(DType::f32, {1 << 20, 1 << 20}, {})});
    FAIL("no error");
  } catch (const kiln::ArgumentError&) {
    FAIL("wrong error type");
  } catch (const kiln::Error& e) {
    CHECK(std::string(e.what()).find("-D") != std::string::npos);
  }
  CHECK_THROWS_AS(ref::random_inputs(big.bind(), 1), kiln::Error);
  CHECK(ref::work_estimate(big.bind()) >= 0x1p40);
}
