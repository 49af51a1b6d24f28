// Reference interpreter: reductions, scans, softmax / log_softmax, dropout.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ref_builder.h"
#include "templates/kiln/philox.cuh"

using kiln::DType;
using kiln::ir::OpKind;
using kiln::test::Dims;
using kiln::test::IrBuilder;
namespace ref = kiln::ref;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

ref::HostTensor reduce(OpKind kind, const Dims& shape, const std::vector<double>& x, std::vector<int> axes,
                       bool keepdims, const Dims& out_shape, DType out_dtype = DType::f64) {
  IrBuilder b;
  auto in = b.input("x", DType::f64, shape);
  auto r = b.add(kind, out_dtype, {in}, out_shape);
  b.last().axes = std::move(axes);
  b.last().keepdims = keepdims;
  b.output("y", r);
  return kiln::test::run1(b, {ref::make_tensor(DType::f64, shape, x)});
}

ref::HostTensor scan(OpKind kind, const Dims& shape, const std::vector<double>& x, int axis, bool exclusive,
                     bool reverse, DType dtype = DType::f64) {
  IrBuilder b;
  auto in = b.input("x", dtype, shape);
  auto s = b.add(kind, dtype, {in}, shape);
  b.last().axis = axis;
  b.last().exclusive = exclusive;
  b.last().reverse = reverse;
  b.output("y", s);
  return kiln::test::run1(b, {ref::make_tensor(dtype, shape, x)});
}

ref::HostTensor rownorm(OpKind kind, const Dims& shape, const std::vector<double>& x, int axis) {
  IrBuilder b;
  auto in = b.input("x", DType::f64, shape);
  auto s = b.add(kind, DType::f64, {in}, shape);
  b.last().axis = axis;
  b.output("y", s);
  return kiln::test::run1(b, {ref::make_tensor(DType::f64, shape, x)});
}

}  // namespace

TEST_CASE("reductions over several axes, with and without keepdims") {
  // x[i][j][k] = 100 i + 10 j + k, shape [2, 3, 4]; reduce over axes {0, 2}.
  std::vector<double> x;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) x.push_back(100 * i + 10 * j + k);
  // For each j: values {10j + k, 100 + 10j + k}, k in 0..3: sum = 8*10j + 2*6 + 400 = 80j + 412
  auto s = reduce(OpKind::Sum, {2, 3, 4}, x, {0, 2}, false, {3});
  CHECK(s.shape == Dims{3});
  CHECK(s.data == std::vector<double>{412, 492, 572});
  auto sk = reduce(OpKind::Sum, {2, 3, 4}, x, {0, 2}, true, {1, 3, 1});
  CHECK(sk.shape == Dims{1, 3, 1});
  CHECK(sk.data == s.data);
  CHECK(reduce(OpKind::Mean, {2, 3, 4}, x, {0, 2}, false, {3}).data == std::vector<double>{51.5, 61.5, 71.5});
  CHECK(reduce(OpKind::Min, {2, 3, 4}, x, {0, 2}, false, {3}).data == std::vector<double>{0, 10, 20});
  CHECK(reduce(OpKind::Max, {2, 3, 4}, x, {0, 2}, true, {1, 3, 1}).data == std::vector<double>{103, 113, 123});
  // Over axis 1 only: [2, 4]
  CHECK(reduce(OpKind::Max, {2, 3, 4}, x, {1}, false, {2, 4}).data ==
        std::vector<double>{20, 21, 22, 23, 120, 121, 122, 123});
  // Over every axis: a 0-d result.
  auto all = reduce(OpKind::Sum, {2, 3, 4}, x, {0, 1, 2}, false, {});
  CHECK(all.shape.empty());
  CHECK(all.data == std::vector<double>{412 + 492 + 572});
  CHECK(reduce(OpKind::Prod, {2, 3}, {1, 2, 3, 4, 5, 6}, {1}, false, {2}).data == std::vector<double>{6, 120});
  // argmax over axes {0, 2}: index into the reduced block, row-major over (i, k).
  CHECK(reduce(OpKind::Argmax, {2, 3, 4}, x, {0, 2}, false, {3}, DType::i64).data == std::vector<double>{7, 7, 7});
  CHECK(reduce(OpKind::Argmin, {2, 3, 4}, x, {0, 2}, false, {3}, DType::i64).data == std::vector<double>{0, 0, 0});
}

TEST_CASE("argmin / argmax: first index on ties, the first NaN wins") {
  const Dims shape{4, 5};
  const std::vector<double> x = {3, 1, 3, 1, 0,         // min tie? no: 0 at 4; max 3 at 0 (first)
                                 2, 2, 2, 2, 2,         // all equal: index 0
                                 1, kNaN, 5, kNaN, -1,  // first NaN: 1 for both
                                 -kInf, 4, -kInf, kInf, kInf};
  auto amax = reduce(OpKind::Argmax, shape, x, {1}, false, {4}, DType::i64);
  auto amin = reduce(OpKind::Argmin, shape, x, {1}, false, {4}, DType::i64);
  CHECK(amax.data == std::vector<double>{0, 0, 1, 3});
  CHECK(amin.data == std::vector<double>{4, 0, 1, 0});
  // keepdims over axis 0 (a strided reduction)
  auto col = reduce(OpKind::Argmax, shape, x, {0}, true, {1, 5}, DType::i64);
  CHECK(col.shape == Dims{1, 5});
  CHECK(col.data == std::vector<double>{0, 2, 2, 2, 3});
}

TEST_CASE("min / max reductions propagate NaN") {
  auto mn = reduce(OpKind::Min, {2, 3}, {1, kNaN, 0, 4, 5, 6}, {1}, false, {2});
  auto mx = reduce(OpKind::Max, {2, 3}, {kNaN, 9, 0, 4, 5, 6}, {1}, false, {2});
  CHECK(std::isnan(mn.data[0]));
  CHECK(mn.data[1] == 4);
  CHECK(std::isnan(mx.data[0]));
  CHECK(mx.data[1] == 6);
}

TEST_CASE("logsumexp matches the naive formula and handles infinities") {
  const auto x = kiln::test::noise(3 * 7, 5, -4, 4);
  auto l = reduce(OpKind::Logsumexp, {3, 7}, x, {1}, false, {3});
  for (int r = 0; r < 3; ++r) {
    double s = 0;
    for (int j = 0; j < 7; ++j) s += std::exp(x[static_cast<std::size_t>(r * 7 + j)]);
    CHECK(l.data[static_cast<std::size_t>(r)] == doctest::Approx(std::log(s)).epsilon(1e-14));
  }
  // Large values: the shift by the max avoids overflow.
  CHECK(reduce(OpKind::Logsumexp, {2}, {1000, 1000}, {0}, false, {}).data[0] ==
        doctest::Approx(1000 + std::log(2.0)).epsilon(1e-15));
  CHECK(reduce(OpKind::Logsumexp, {2}, {-kInf, -kInf}, {0}, false, {}).data[0] == -kInf);
  CHECK(reduce(OpKind::Logsumexp, {2}, {kInf, 1}, {0}, false, {}).data[0] == kInf);
  CHECK(reduce(OpKind::Logsumexp, {2}, {-kInf, 0}, {0}, false, {}).data[0] == 0);
  // Over axes {0, 1} of a [2, 3]: one value.
  const std::vector<double> y = {0, 1, 2, 3, 4, 5};
  double s = 0;
  for (double v : y) s += std::exp(v);
  CHECK(reduce(OpKind::Logsumexp, {2, 3}, y, {0, 1}, true, {1, 1}).data[0] == doctest::Approx(std::log(s)));
}

TEST_CASE("scans: hand values of every variant") {
  const std::vector<double> x = {1, 2, 3, 4};
  CHECK(scan(OpKind::Cumsum, {4}, x, 0, false, false).data == std::vector<double>{1, 3, 6, 10});
  CHECK(scan(OpKind::Cumsum, {4}, x, 0, true, false).data == std::vector<double>{0, 1, 3, 6});
  CHECK(scan(OpKind::Cumsum, {4}, x, 0, false, true).data == std::vector<double>{10, 9, 7, 4});
  CHECK(scan(OpKind::Cumsum, {4}, x, 0, true, true).data == std::vector<double>{9, 7, 4, 0});
  CHECK(scan(OpKind::Cumprod, {4}, x, 0, false, false).data == std::vector<double>{1, 2, 6, 24});
  CHECK(scan(OpKind::Cumprod, {4}, x, 0, true, false).data == std::vector<double>{1, 1, 2, 6});
  CHECK(scan(OpKind::Cumprod, {4}, x, 0, true, true).data == std::vector<double>{24, 12, 4, 1});
  const std::vector<double> y = {2, 1, 3, 0};
  CHECK(scan(OpKind::Cummax, {4}, y, 0, false, false).data == std::vector<double>{2, 2, 3, 3});
  CHECK(scan(OpKind::Cummax, {4}, y, 0, true, false).data == std::vector<double>{-kInf, 2, 2, 3});
  CHECK(scan(OpKind::Cummin, {4}, y, 0, false, false).data == std::vector<double>{2, 1, 1, 0});
  CHECK(scan(OpKind::Cummin, {4}, y, 0, true, true).data == std::vector<double>{0, 0, 0, kInf});
  // Integer exclusive cummax/cummin start at the dtype's lowest / highest value.
  CHECK(scan(OpKind::Cummax, {2}, {5, 1}, 0, true, false, DType::i32).data == std::vector<double>{-2147483648.0, 5});
  CHECK(scan(OpKind::Cummin, {2}, {5, 1}, 0, true, false, DType::i32).data == std::vector<double>{2147483647.0, 5});
  // NaN, once seen, stays (PyTorch's cummax / cummin).
  auto nan_scan = scan(OpKind::Cummax, {4}, {1, kNaN, 5, 2}, 0, false, false).data;
  CHECK(nan_scan[0] == 1);
  CHECK(std::isnan(nan_scan[1]));
  CHECK(std::isnan(nan_scan[3]));
}

TEST_CASE("scan identities along an inner and an outer axis") {
  const Dims shape{3, 5, 4};
  const auto x = kiln::test::noise(60, 11, -1, 2);
  for (int axis : {0, 1, 2}) {
    for (bool reverse : {false, true}) {
      for (OpKind kind : {OpKind::Cumsum, OpKind::Cumprod, OpKind::Cummax, OpKind::Cummin}) {
        CAPTURE(axis);
        CAPTURE(reverse);
        auto inc = scan(kind, shape, x, axis, false, reverse).data;
        auto exc = scan(kind, shape, x, axis, true, reverse).data;
        for (std::size_t i = 0; i < x.size(); ++i) {
          double combined = 0;
          switch (kind) {
            case OpKind::Cumsum: combined = exc[i] + x[i]; break;
            case OpKind::Cumprod: combined = exc[i] * x[i]; break;
            case OpKind::Cummax: combined = std::max(exc[i], x[i]); break;
            default: combined = std::min(exc[i], x[i]); break;
          }
          CHECK(combined == doctest::Approx(inc[i]).epsilon(1e-13));  // exclusive (op) x == inclusive
        }
      }
      // reverse cumsum == flip(cumsum(flip(x))) along the axis
      if (!reverse) continue;
      const int len = static_cast<int>(shape[static_cast<std::size_t>(axis)]);
      const int inner = axis == 2 ? 1 : (axis == 1 ? 4 : 20);
      auto flip = [&](const std::vector<double>& v) {
        std::vector<double> f(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
          const int k = static_cast<int>(i) / inner % len;
          f[i + static_cast<std::size_t>((len - 1 - 2 * k) * inner)] = v[i];
        }
        return f;
      };
      auto rev = scan(OpKind::Cumsum, shape, x, axis, false, true).data;
      auto via_flip = flip(scan(OpKind::Cumsum, shape, flip(x), axis, false, false).data);
      for (std::size_t i = 0; i < x.size(); ++i) CHECK(rev[i] == doctest::Approx(via_flip[i]).epsilon(1e-14));
    }
  }
}

TEST_CASE("softmax rows sum to 1, log_softmax == log(softmax)") {
  const Dims shape{4, 6};
  auto x = kiln::test::noise(24, 3, -5, 5);
  x[0] = 700;  // exp(700 - max) must not overflow: the row max is subtracted
  for (int axis : {0, 1}) {
    auto sm = rownorm(OpKind::Softmax, shape, x, axis).data;
    auto lsm = rownorm(OpKind::LogSoftmax, shape, x, axis).data;
    for (std::size_t i = 0; i < sm.size(); ++i) {
      CHECK(std::isfinite(lsm[i]));
      if (sm[i] > 1e-300) CHECK(lsm[i] == doctest::Approx(std::log(sm[i])).epsilon(1e-12));
    }
    const int rows = axis == 1 ? 4 : 6, len = axis == 1 ? 6 : 4;
    for (int r = 0; r < rows; ++r) {
      double s = 0;
      for (int k = 0; k < len; ++k) s += sm[static_cast<std::size_t>(axis == 1 ? r * 6 + k : k * 6 + r)];
      CHECK(s == doctest::Approx(1.0).epsilon(1e-14));
    }
  }
  auto two = rownorm(OpKind::Softmax, {2}, {0, std::log(3.0)}, 0).data;
  CHECK(two[0] == doctest::Approx(0.25));
  CHECK(two[1] == doctest::Approx(0.75));
  auto all_neg_inf = rownorm(OpKind::Softmax, {2}, {-kInf, -kInf}, 0).data;
  CHECK(std::isnan(all_neg_inf[0]));  // as PyTorch: 0/0
}

TEST_CASE("dropout: the Philox mask, scaling, keep rate, seeds") {
  const Dims shape{100, 1000};
  const double p = 0.2;
  auto run = [&](std::uint64_t seed, const std::vector<double>& x) {
    IrBuilder b;
    auto in = b.input("x", DType::f32, shape);
    auto s = b.scalar("seed", DType::u64);
    auto d = b.add(OpKind::Dropout, DType::f32, {in, s}, shape);
    b.last().p = p;
    b.output("y", d);
    auto out = kiln::test::run1(b, {ref::make_tensor(DType::f32, shape, x), ref::make_scalar_bits(DType::u64, seed)});
    return out.data;
  };
  std::vector<double> x(100000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1 + static_cast<double>(i % 7);
  const std::uint64_t seed = 0xfedcba9876543210ull;
  auto a = run(seed, x);
  auto a2 = run(seed, x);
  auto other = run(seed + 1, x);
  CHECK(a == a2);
  CHECK(a != other);
  std::size_t kept = 0, same_as_other = 0;
  const unsigned threshold = kiln::dropout_threshold(p);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const bool keep = kiln::dropout_keep(seed, i, threshold);
    kept += keep;
    same_as_other += (a[i] != 0) == (other[i] != 0);
    // kept values are x * (1 / (1 - p)), rounded to the f32 output
    CHECK(a[i] == (keep ? ref::round_to(DType::f32, x[i] * (1.0 / (1.0 - p))) : 0.0));
  }
  const double rate = static_cast<double>(kept) / static_cast<double>(x.size());
  CHECK(rate == doctest::Approx(0.8).epsilon(0.01));  // 0.8 +- 0.008: ~6 sigma
  CHECK(same_as_other < 0.75 * static_cast<double>(x.size()));  // independent masks agree ~68%
  // p = 0 keeps everything, unscaled
  IrBuilder b;
  auto in = b.input("x", DType::f64, {5});
  auto s = b.scalar("seed", DType::u64);
  b.output("y", b.add(OpKind::Dropout, DType::f64, {in, s}, {5}));
  b.last().p = 0;
  // (last() is the Dropout node: output() adds no node)
  CHECK(kiln::test::run1(b, {ref::make_tensor(DType::f64, {5}, {1, 2, 3, 4, 5}), ref::make_scalar_bits(DType::u64, 1)})
            .data == std::vector<double>{1, 2, 3, 4, 5});
}
