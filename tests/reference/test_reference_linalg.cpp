// Reference interpreter: matmul (batched, broadcast, through permute views) and conv2d
// (checked against an im2col + matmul written here, independently of the direct loops).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>

#include "ref_builder.h"

using kiln::DType;
using kiln::ir::OpKind;
using kiln::test::Dims;
using kiln::test::IrBuilder;
namespace ref = kiln::ref;

namespace {

std::int64_t numel(const Dims& d) {
  std::int64_t n = 1;
  for (auto v : d) n *= v;
  return n;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
  }
}

ref::HostTensor matmul(const Dims& sa, const std::vector<double>& a, const Dims& sb, const std::vector<double>& b,
                       const Dims& so) {
  IrBuilder g;
  auto x = g.input("a", DType::f64, sa);
  auto y = g.input("b", DType::f64, sb);
  g.output("c", g.add(OpKind::Matmul, DType::f64, {x, y}, so));
  return kiln::test::run1(g, {ref::make_tensor(DType::f64, sa, a), ref::make_tensor(DType::f64, sb, b)});
}

}  // namespace

TEST_CASE("matmul: hand values, rank-1 operands") {
  // [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  auto c = matmul({2, 3}, {1, 2, 3, 4, 5, 6}, {3, 2}, {7, 8, 9, 10, 11, 12}, {2, 2});
  CHECK(c.data == std::vector<double>{58, 64, 139, 154});
  CHECK(matmul({3}, {1, 2, 3}, {3, 2}, {7, 8, 9, 10, 11, 12}, {2}).data == std::vector<double>{58, 64});
  CHECK(matmul({2, 3}, {1, 2, 3, 4, 5, 6}, {3}, {1, 0, -1}, {2}).data == std::vector<double>{-2, -2});
  CHECK(matmul({3}, {1, 2, 3}, {3}, {4, 5, 6}, {}).data == std::vector<double>{32});
}

TEST_CASE("batched matmul broadcasts batch dims") {
  // a: [2, 1, M, K], b: [3, K, N] -> [2, 3, M, N]; M, K, N odd and larger than a tile.
  const std::int64_t M = 13, K = 9, N = 517;
  const Dims sa{2, 1, M, K}, sb{3, K, N}, so{2, 3, M, N};
  const auto a = kiln::test::noise(numel(sa), 1), b = kiln::test::noise(numel(sb), 2);
  auto c = matmul(sa, a, sb, b, so);
  std::vector<double> want(static_cast<std::size_t>(numel(so)));
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t m = 0; m < M; ++m)
        for (std::int64_t n = 0; n < N; ++n) {
          double s = 0;
          for (std::int64_t k = 0; k < K; ++k)
            s += a[static_cast<std::size_t>((i * M + m) * K + k)] * b[static_cast<std::size_t>((j * K + k) * N + n)];
          want[static_cast<std::size_t>(((i * 3 + j) * M + m) * N + n)] = s;
        }
  check_close(c.data, want);
}

TEST_CASE("matmul through transpose / permute views, thread count independent") {
  // y = matmul(x, transpose(w)) with x [B, IN], w [OUT, IN]; plus permute of a 3-D batch.
  const std::int64_t B = 37, IN = 23, OUT = 41;
  IrBuilder g;
  auto x = g.input("x", DType::f64, {B, IN});
  auto w = g.input("w", DType::f64, {OUT, IN});
  auto wt = g.add(OpKind::Permute, DType::f64, {w}, {IN, OUT});
  g.last().perm = {1, 0};
  g.output("y", g.add(OpKind::Matmul, DType::f64, {x, wt}, {B, OUT}));
  auto z = g.input("z", DType::f64, {IN, 2, B});  // permuted to [2, B, IN]
  auto zp = g.add(OpKind::Permute, DType::f64, {z}, {2, B, IN});
  g.last().perm = {1, 2, 0};
  g.output("u", g.add(OpKind::Matmul, DType::f64, {zp, wt}, {2, B, OUT}));
  const auto xv = kiln::test::noise(B * IN, 3), wv = kiln::test::noise(OUT * IN, 4),
             zv = kiln::test::noise(IN * 2 * B, 5);
  const std::vector<ref::HostValue> in = {ref::make_tensor(DType::f64, {B, IN}, xv),
                                          ref::make_tensor(DType::f64, {OUT, IN}, wv),
                                          ref::make_tensor(DType::f64, {IN, 2, B}, zv)};
  auto outs = ref::evaluate(g.bind(), in);
  std::vector<double> y(static_cast<std::size_t>(B * OUT)), u(static_cast<std::size_t>(2 * B * OUT));
  for (std::int64_t i = 0; i < B; ++i)
    for (std::int64_t o = 0; o < OUT; ++o) {
      double s = 0;
      for (std::int64_t k = 0; k < IN; ++k) s += xv[static_cast<std::size_t>(i * IN + k)] * wv[static_cast<std::size_t>(o * IN + k)];
      y[static_cast<std::size_t>(i * OUT + o)] = s;
      for (std::int64_t t = 0; t < 2; ++t) {
        double s2 = 0;
        for (std::int64_t k = 0; k < IN; ++k)
          s2 += zv[static_cast<std::size_t>((k * 2 + t) * B + i)] * wv[static_cast<std::size_t>(o * IN + k)];
        u[static_cast<std::size_t>((t * B + i) * OUT + o)] = s2;
      }
    }
  check_close(outs[0].data, y);
  check_close(outs[1].data, u);
  setenv("KILN_REF_THREADS", "1", 1);
  auto serial = ref::evaluate(g.bind(), in);
  unsetenv("KILN_REF_THREADS");
  CHECK(serial[0].data == outs[0].data);  // bit-identical: each element has one fixed summation order
  CHECK(serial[1].data == outs[1].data);
}

namespace {

struct ConvCase {
  std::int64_t N, C, H, W, K, R, S;
  std::int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups;
};

Dims conv_out(const ConvCase& c) {
  const std::int64_t P = (c.H + 2 * c.pad_h - c.dil_h * (c.R - 1) - 1) / c.stride_h + 1;
  const std::int64_t Q = (c.W + 2 * c.pad_w - c.dil_w * (c.S - 1) - 1) / c.stride_w + 1;
  return {c.N, c.K, P, Q};
}

// conv2d as im2col + a matmul per (n, group): cols[(c, r, s)][(p, q)], then
// y[k][(p,q)] = sum over (c,r,s) of w[k][(c,r,s)] * cols[(c,r,s)][(p,q)].
std::vector<double> conv_im2col(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w) {
  const Dims o = conv_out(c);
  const std::int64_t P = o[2], Q = o[3], Cg = c.C / c.groups, Kg = c.K / c.groups;
  const std::int64_t rows = Cg * c.R * c.S, cols_n = P * Q;
  std::vector<double> y(static_cast<std::size_t>(numel(o)), 0.0);
  std::vector<double> cols(static_cast<std::size_t>(rows * cols_n));
  for (std::int64_t n = 0; n < c.N; ++n)
    for (std::int64_t g = 0; g < c.groups; ++g) {
      for (std::int64_t cc = 0; cc < Cg; ++cc)
        for (std::int64_t r = 0; r < c.R; ++r)
          for (std::int64_t s = 0; s < c.S; ++s)
            for (std::int64_t p = 0; p < P; ++p)
              for (std::int64_t q = 0; q < Q; ++q) {
                const std::int64_t ih = p * c.stride_h - c.pad_h + r * c.dil_h;
                const std::int64_t iw = q * c.stride_w - c.pad_w + s * c.dil_w;
                const bool inside = ih >= 0 && ih < c.H && iw >= 0 && iw < c.W;
                const std::int64_t ch = g * Cg + cc;
                cols[static_cast<std::size_t>(((cc * c.R + r) * c.S + s) * cols_n + p * Q + q)] =
                    inside ? x[static_cast<std::size_t>(((n * c.C + ch) * c.H + ih) * c.W + iw)] : 0.0;
              }
      for (std::int64_t kk = 0; kk < Kg; ++kk) {
        const std::int64_t k = g * Kg + kk;
        for (std::int64_t row = 0; row < rows; ++row) {
          const double wv = w[static_cast<std::size_t>(k * rows + row)];
          for (std::int64_t j = 0; j < cols_n; ++j)
            y[static_cast<std::size_t>((n * c.K + k) * cols_n + j)] += wv * cols[static_cast<std::size_t>(row * cols_n + j)];
        }
      }
    }
  return y;
}

ref::HostTensor conv_ref(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                         kiln::ir::Layout layout) {
  const bool nhwc = layout == kiln::ir::Layout::NHWC;
  const Dims xs = nhwc ? Dims{c.N, c.H, c.W, c.C} : Dims{c.N, c.C, c.H, c.W};
  const Dims ws{c.K, c.C / c.groups, c.R, c.S};
  const Dims o = conv_out(c);
  const Dims os = nhwc ? Dims{o[0], o[2], o[3], o[1]} : o;
  IrBuilder g;
  auto xi = g.input("x", DType::f64, xs);
  auto wi = g.input("w", DType::f64, ws);
  auto y = g.add(OpKind::Conv, DType::f64, {xi, wi}, os);
  auto& attrs = g.last().conv;
  attrs.stride[0] = c.stride_h, attrs.stride[1] = c.stride_w;
  attrs.padding[0] = c.pad_h, attrs.padding[1] = c.pad_w;
  attrs.dilation[0] = c.dil_h, attrs.dilation[1] = c.dil_w;
  attrs.groups = c.groups;
  attrs.layout = layout;
  g.output("y", y);
  return kiln::test::run1(g, {ref::make_tensor(DType::f64, xs, x), ref::make_tensor(DType::f64, ws, w)});
}

// [N, C, H, W] <-> [N, H, W, C]
std::vector<double> nchw_to_nhwc(const std::vector<double>& v, std::int64_t N, std::int64_t C, std::int64_t H,
                                 std::int64_t W) {
  std::vector<double> out(v.size());
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w)
          out[static_cast<std::size_t>(((n * H + h) * W + w) * C + c)] = v[static_cast<std::size_t>(((n * C + c) * H + h) * W + w)];
  return out;
}

}  // namespace

TEST_CASE("conv2d: direct loops equal im2col + matmul, NHWC equals NCHW permuted") {
  const ConvCase cases[] = {
      {2, 3, 7, 9, 4, 3, 3, 1, 1, 0, 0, 1, 1, 1},   // plain 3x3, valid
      {1, 4, 10, 11, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1},  // stride 2, padding 1
      {2, 2, 12, 13, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1},  // dilation 2, padding 2
      {2, 6, 8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 6},    // depthwise: groups == C == K
      {1, 4, 9, 10, 6, 2, 3, 2, 1, 1, 0, 1, 2, 2},   // groups 2, non-square kernel, mixed attrs
      {1, 2, 5, 5, 2, 1, 1, 3, 3, 0, 0, 1, 1, 1},    // 1x1, stride 3
      {1, 1, 3, 3, 1, 3, 3, 1, 1, 3, 3, 1, 1, 1},    // padding larger than the image edge
  };
  for (const auto& c : cases) {
    CAPTURE(c.stride_h);
    CAPTURE(c.groups);
    const Dims o = conv_out(c);
    const auto x = kiln::test::noise(c.N * c.C * c.H * c.W, 10 + c.C);
    const auto w = kiln::test::noise(c.K * (c.C / c.groups) * c.R * c.S, 20 + c.K);
    auto direct = conv_ref(c, x, w, kiln::ir::Layout::NCHW);
    REQUIRE(direct.shape == o);
    check_close(direct.data, conv_im2col(c, x, w));
    auto nhwc = conv_ref(c, nchw_to_nhwc(x, c.N, c.C, c.H, c.W), w, kiln::ir::Layout::NHWC);
    REQUIRE(nhwc.shape == Dims({o[0], o[2], o[3], o[1]}));
    CHECK(nhwc.data == nchw_to_nhwc(direct.data, o[0], o[1], o[2], o[3]));
  }
  // Hand value: 1 channel 3x3 ones, 2x2 kernel of ones, padding 1 -> 4x4 of window counts.
  ConvCase ones{1, 1, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1};
  auto y = conv_ref(ones, std::vector<double>(9, 1.0), std::vector<double>(4, 1.0), kiln::ir::Layout::NCHW);
  CHECK(y.data == std::vector<double>{1, 2, 2, 1, 2, 4, 4, 2, 2, 4, 4, 2, 1, 2, 2, 1});
}
