// The strided-axis scan (scan_strided_totals + scan_strided), the strided look-back, the
// look-back scan with every combiner, and chained reductions over non-adjacent axes, run on the CPU through
// cuda_emulator.h on odd shapes, every scan kind and direction, one and several chunks, with
// NaN and +-inf, against float64 references that follow docs/semantics.md.
#include "cuda_emulator.h"   // first: compiles the templates as host code

#include "kiln/reduce.cuh"
#include "kiln/scan.cuh"
#include "templates/kiln/config/scan.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

struct Pass {
  float operator()(float x, long long) const { return x; }
  float operator()(float x, int) const { return x; }
};

enum class Kind { kSum, kProd, kMax, kMin };

double identity_of(Kind k) {
  switch (k) {
    case Kind::kSum: return 0;
    case Kind::kProd: return 1;
    case Kind::kMax: return -kInf;
    case Kind::kMin: return kInf;
  }
  return 0;
}

// docs/semantics.md: cummax/cummin propagate NaN from the first NaN on.
double combine(Kind k, double a, double b) {
  switch (k) {
    case Kind::kSum: return a + b;
    case Kind::kProd: return a * b;
    case Kind::kMax: return (std::isnan(a) || a > b) ? a : b;
    case Kind::kMin: return (std::isnan(a) || a < b) ? a : b;
  }
  return 0;
}

// float64 scan of x viewed as [outer, len, inner] along len.
std::vector<double> ref_scan(const std::vector<float>& x, int outer, int len, int inner, Kind kind, bool exclusive,
                             bool reverse) {
  std::vector<double> out(x.size());
  for (int o = 0; o < outer; ++o)
    for (int c = 0; c < inner; ++c) {
      double run = identity_of(kind);
      for (int q = 0; q < len; ++q) {
        const int p = reverse ? len - 1 - q : q;
        const std::size_t i = (std::size_t(o) * len + p) * inner + c;
        if (exclusive) {
          out[i] = run;
          run = combine(kind, run, x[i]);
        } else {
          run = combine(kind, run, x[i]);
          out[i] = run;
        }
      }
    }
  return out;
}

bool matches(double out, double ref, Kind kind) {
  if (std::isnan(ref)) return std::isnan(out);
  if (std::isinf(ref)) return out == ref;
  if (kind == Kind::kMax || kind == Kind::kMin) return out == ref;   // exact: a selected input
  return std::fabs(out - ref) <= 1e-5 * (1.0 + std::fabs(ref));
}

std::vector<float> inputs(std::size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

constexpr int kThreads = 32, kUnroll = 4;

// Runs the strided scan the way the planner does: totals first when the axis is chunked.
template <bool kExclusive, bool kReverse, class Op>
void run_strided(const std::vector<float>& in, std::vector<float>& out, int outer, int len, int inner, int chunks) {
  const int chunk = int(kiln::launch::ceil_div(len, chunks));
  const int n_chunks = int(kiln::launch::ceil_div(len, chunk));
  const kiln::launch::ScanChunks s{n_chunks, chunk};
  const auto geo = kiln::launch::scan_strided_geometry(outer, inner, s, kThreads, 4);
  std::vector<float> totals(std::size_t(n_chunks) * outer * inner, kNaN);   // poisoned
  const emu::Dim grid{unsigned(geo.grid.x), unsigned(geo.grid.y), 0};
  if (n_chunks > 1)
    emu::launch(grid, kThreads, [&] {
      kiln::scan_strided_totals<kThreads, kUnroll, kReverse, Op>(in.data(), totals.data(), outer, len, inner, chunk,
                                                                 Pass{});
    });
  emu::launch(grid, kThreads, [&] {
    kiln::scan_strided<kThreads, kUnroll, kExclusive, kReverse, Op>(
        in.data(), out.data(), n_chunks > 1 ? totals.data() : static_cast<float*>(nullptr), outer, len, inner, chunk,
        Pass{}, Pass{});
  });
}

template <class Op>
void run_strided_any(bool exclusive, bool reverse, const std::vector<float>& in, std::vector<float>& out, int outer,
                     int len, int inner, int chunks) {
  if (!exclusive && !reverse) run_strided<false, false, Op>(in, out, outer, len, inner, chunks);
  if (exclusive && !reverse) run_strided<true, false, Op>(in, out, outer, len, inner, chunks);
  if (!exclusive && reverse) run_strided<false, true, Op>(in, out, outer, len, inner, chunks);
  if (exclusive && reverse) run_strided<true, true, Op>(in, out, outer, len, inner, chunks);
}

void run_kind(Kind kind, bool exclusive, bool reverse, const std::vector<float>& in, std::vector<float>& out, int outer,
              int len, int inner, int chunks) {
  switch (kind) {
    case Kind::kSum: run_strided_any<kiln::SumOp<float>>(exclusive, reverse, in, out, outer, len, inner, chunks); break;
    case Kind::kProd: run_strided_any<kiln::ProdOp<float>>(exclusive, reverse, in, out, outer, len, inner, chunks); break;
    case Kind::kMax: run_strided_any<kiln::MaxOp<float>>(exclusive, reverse, in, out, outer, len, inner, chunks); break;
    case Kind::kMin: run_strided_any<kiln::MinOp<float>>(exclusive, reverse, in, out, outer, len, inner, chunks); break;
  }
}

const char* kind_name(Kind k) {
  static const char* names[] = {"cumsum", "cumprod", "cummax", "cummin"};
  return names[int(k)];
}

}  // namespace

TEST_CASE("emulated scan_strided: every kind and direction, odd shapes, one and several chunks, NaN and inf") {
  struct Shape {
    int outer, len, inner, chunks;
  };
  // inner 45 spans two blocks of 32 (a partial tile); len 37 is not a multiple of kUnroll; chunks
  // that do not divide len; a single step; a chunk per step.
  const Shape shapes[] = {{3, 37, 45, 1}, {3, 37, 45, 4}, {1, 1, 2, 1}, {2, 100, 33, 7}, {1, 9, 3, 9}, {2, 64, 32, 3}};
  for (const Shape& sh : shapes)
    for (Kind kind : {Kind::kSum, Kind::kProd, Kind::kMax, Kind::kMin}) {
      const std::size_t n = std::size_t(sh.outer) * sh.len * sh.inner;
      // cumprod on [0.5, 1.5) stays well inside float's range over 100 steps.
      std::vector<float> in = inputs(n, 7 + unsigned(sh.len), kind == Kind::kProd ? 0.5f : -1.f, 1.5f);
      if (sh.len > 10 && sh.inner > 5) {
        auto at = [&](int o, int p, int c) -> float& { return in[(std::size_t(o) * sh.len + p) * sh.inner + c]; };
        at(0, sh.len / 2, 1) = kNaN;        // propagates from here on (or before, in reverse)
        at(sh.outer - 1, 3, 4) = kInf;      // cumsum: inf after it; cummax: inf
        at(sh.outer - 1, 5, 4) = -kInf;     // cumsum: inf + -inf = NaN
        at(0, sh.len - 1, 5) = -kInf;       // last element: first in reverse
      }
      for (int variant = 0; variant < 4; ++variant) {
        const bool exclusive = variant & 1, reverse = variant & 2;
        std::vector<float> out(n, -12345.f);   // poisoned: an unwritten element fails
        run_kind(kind, exclusive, reverse, in, out, sh.outer, sh.len, sh.inner, sh.chunks);
        const auto ref = ref_scan(in, sh.outer, sh.len, sh.inner, kind, exclusive, reverse);
        INFO(std::string(kind_name(kind)) << " [" << sh.outer << ", " << sh.len << ", " << sh.inner << "] chunks " << sh.chunks
                             << " exclusive " << exclusive << " reverse " << reverse);
        int bad = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (!matches(out[i], ref[i], kind) && bad++ < 3) FAIL_CHECK("element " << i << ": " << out[i] << " vs " << ref[i]);
        CHECK(bad == 0);
      }
    }
}

TEST_CASE("emulated scan_strided: the planner's chunk rule on a narrow, long axis") {
  // 2 x 4 columns cannot fill 132 SMs: the rule cuts the axis, and the chunked scan equals the
  // one-pass scan's semantics.
  const auto s = kiln::launch::scan_strided_chunks(2, 1000, 4, kThreads, kUnroll, 132);
  CHECK(s.chunks > 1);
  CHECK(s.chunks <= 128);
  CHECK(s.chunk * s.chunks >= 1000);
  CHECK(s.chunk * (s.chunks - 1) < 1000);
  // Enough columns: one pass.
  CHECK(kiln::launch::scan_strided_chunks(128, 1000, 4096, 256, 8, 132).chunks == 1);   // 2048 blocks >= 1056
  const int outer = 2, len = 1000, inner = 4;
  auto in = inputs(std::size_t(outer) * len * inner, 3, 0.f, 1.f);
  std::vector<float> out(in.size(), kNaN);
  run_kind(Kind::kSum, true, false, in, out, outer, len, inner, int(s.chunks));
  const auto ref = ref_scan(in, outer, len, inner, Kind::kSum, true, false);
  int bad = 0;
  for (std::size_t i = 0; i < in.size(); ++i) bad += !matches(out[i], ref[i], Kind::kSum);
  CHECK(bad == 0);
}

namespace {
// The strided look-back as the planner launches it (its rows rule at 32 threads: 64 rows a tile),
// its statuses zeroed; `offset` elements shifts the input off 16-byte alignment (element copies
// instead of 16-byte ones).
template <bool kExclusive, bool kReverse, class Op>
void run_strided_lookback(const std::vector<float>& in, std::vector<float>& out, int outer, int len, int inner,
                          int offset) {
  constexpr int kLookThreads = 32;
  constexpr int kRows = kiln::launch::scan_strided_lookback_rows(kLookThreads, 4, 4);
  const auto geo = kiln::launch::scan_strided_lookback_geometry(outer, len, inner, kLookThreads, kRows, 4);
  CHECK(geo.zero_workspace);
  std::vector<unsigned long long> statuses(std::size_t(geo.workspace_bytes / 8), 0ull);
  std::vector<float> shifted(in.size() + 8);
  std::copy(in.begin(), in.end(), shifted.begin() + offset);
  emu::launch({unsigned(geo.grid.x), 1, 0}, kLookThreads, [&] {
    kiln::scan_strided_lookback<kLookThreads, kRows, kExclusive, kReverse, Op>(
        shifted.data() + offset, out.data(), statuses.data(), outer, len, inner, Pass{}, Pass{});
  });
  // Every column of every tile ends with its prefix (a column past `inner` publishes nothing).
  const int col_tiles = int(kiln::launch::ceil_div(inner, kLookThreads));
  for (long long t = 0; t < geo.grid.x; ++t)
    for (int c = 0; c < kLookThreads; ++c) {
      const bool column = (t % col_tiles) * kLookThreads + c < inner;
      CHECK(unsigned(statuses[std::size_t(t * kLookThreads + c)]) ==
            (column ? unsigned(kiln::detail::kTilePrefix) : unsigned(kiln::detail::kTileEmpty)));
    }
}

template <bool kExclusive, bool kReverse, class Op>
void run_lookback(const std::vector<float>& in, std::vector<float>& out, int rows, int len) {
  constexpr int kLookThreads = 64, kVecs = 1, kTile = kLookThreads * kVecs * 4;
  // Zeroed, as the runtime's cuMemsetD32Async does before every launch.
  std::vector<unsigned long long> ws(kiln::launch::scan_lookback_workspace_bytes(rows, len, kTile, 4) / 8 + 2, 0);
  // Two blocks: the first claims every tile (the emulator runs blocks one after another), the
  // second claims none and its walker stops at once.
  const auto geo = kiln::launch::scan_rows_lookback_geometry(rows, len, kTile, kLookThreads, 4, 2);
  CHECK(geo.zero_workspace);
  emu::launch(
      {unsigned(geo.grid.x), 1, 0}, unsigned(geo.block.x),
      [&] {
        kiln::scan_rows_lookback<kLookThreads, kVecs, kiln::launch::kScanLookbackStages, kExclusive, kReverse, false, Op>(
            in.data(), out.data(), ws.data(), rows, len, Pass{}, Pass{});
      },
      unsigned(geo.shared_bytes));
}
}  // namespace

TEST_CASE("emulated scan_rows_lookback: cumprod, cummin and cummax in every direction, NaN and inf") {
  const int rows = 2;
  for (int len : {1027, 1024}) {   // scalar path (odd length) and 16-byte path
    auto in = inputs(std::size_t(rows) * len, 5, 0.9f, 1.1f);
    in[300] = kNaN;
    in[len + 700] = -kInf;
    for (Kind kind : {Kind::kProd, Kind::kMin, Kind::kMax})
      for (int variant = 0; variant < 4; ++variant) {
        const bool exclusive = variant & 1, reverse = variant & 2;
        std::vector<float> out(in.size(), -12345.f);
        auto go = [&](auto op) {
          using Op = decltype(op);
          if (variant == 0) run_lookback<false, false, Op>(in, out, rows, len);
          if (variant == 1) run_lookback<true, false, Op>(in, out, rows, len);
          if (variant == 2) run_lookback<false, true, Op>(in, out, rows, len);
          if (variant == 3) run_lookback<true, true, Op>(in, out, rows, len);
        };
        if (kind == Kind::kProd) go(kiln::ProdOp<float>{});
        if (kind == Kind::kMin) go(kiln::MinOp<float>{});
        if (kind == Kind::kMax) go(kiln::MaxOp<float>{});
        const auto ref = ref_scan(in, rows, len, 1, kind, exclusive, reverse);
        INFO(std::string(kind_name(kind)) << " len " << len << " exclusive " << exclusive << " reverse " << reverse);
        int bad = 0;
        for (std::size_t i = 0; i < in.size(); ++i)
          if (!(kind == Kind::kProd && std::isfinite(ref[i])
                    ? std::fabs(out[i] - ref[i]) <= 1e-4 * (1 + std::fabs(ref[i]))   // 1000 factors of 1 +- 10%
                    : matches(out[i], ref[i], kind)) &&
              bad++ < 3)
            FAIL_CHECK("element " << i << ": " << out[i] << " vs " << ref[i]);
        CHECK(bad == 0);
      }
  }
}

TEST_CASE("emulated scan_strided_lookback: every kind and direction, partial tiles, element and 16-byte copies") {
  struct Shape {
    int outer, len, inner, offset;
  };
  // 200 rows: 4 tiles of 64 down a column, the last partial; 45 columns: two tiles of 32, the
  // second partial, and rows that are not whole vectors (element copies); 64 columns with a
  // 16-byte aligned input (16-byte copies) and the same off alignment; a single row.
  const Shape shapes[] = {{2, 200, 45, 0}, {1, 130, 64, 0}, {1, 130, 64, 1}, {3, 1, 40, 0}};
  for (const Shape& sh : shapes)
    for (Kind kind : {Kind::kSum, Kind::kProd, Kind::kMax, Kind::kMin}) {
      const std::size_t n = std::size_t(sh.outer) * sh.len * sh.inner;
      std::vector<float> in = inputs(n, 11 + unsigned(sh.len), kind == Kind::kProd ? 0.9f : -1.f, 1.1f);
      if (sh.len > 100) {
        auto at = [&](int o, int p, int c) -> float& { return in[(std::size_t(o) * sh.len + p) * sh.inner + c]; };
        at(0, sh.len / 2, 1) = kNaN;
        at(sh.outer - 1, 70, 33) = kInf;   // the second tile down column 33
        at(sh.outer - 1, 5, 4) = -kInf;
      }
      for (int variant = 0; variant < 4; ++variant) {
        const bool exclusive = variant & 1, reverse = variant & 2;
        std::vector<float> out(n, -12345.f);
        auto go = [&](auto op) {
          using Op = decltype(op);
          if (variant == 0) run_strided_lookback<false, false, Op>(in, out, sh.outer, sh.len, sh.inner, sh.offset);
          if (variant == 1) run_strided_lookback<true, false, Op>(in, out, sh.outer, sh.len, sh.inner, sh.offset);
          if (variant == 2) run_strided_lookback<false, true, Op>(in, out, sh.outer, sh.len, sh.inner, sh.offset);
          if (variant == 3) run_strided_lookback<true, true, Op>(in, out, sh.outer, sh.len, sh.inner, sh.offset);
        };
        if (kind == Kind::kSum) go(kiln::SumOp<float>{});
        if (kind == Kind::kProd) go(kiln::ProdOp<float>{});
        if (kind == Kind::kMax) go(kiln::MaxOp<float>{});
        if (kind == Kind::kMin) go(kiln::MinOp<float>{});
        const auto ref = ref_scan(in, sh.outer, sh.len, sh.inner, kind, exclusive, reverse);
        INFO(std::string(kind_name(kind)) << " [" << sh.outer << ", " << sh.len << ", " << sh.inner << "] offset "
                                          << sh.offset << " exclusive " << exclusive << " reverse " << reverse);
        int bad = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (!(kind == Kind::kProd && std::isfinite(ref[i]) ? std::fabs(out[i] - ref[i]) <= 1e-4 * (1 + std::fabs(ref[i]))
                                                              : matches(out[i], ref[i], kind)) &&
              bad++ < 3)
            FAIL_CHECK("element " << i << ": " << out[i] << " vs " << ref[i]);
        CHECK(bad == 0);
      }
    }
}

namespace {
// The last stage of a chained mean, as emit_reduce_chain writes it: the sum divided by the
// count of every stage's reduced elements.
template <long long kCount>
struct ChainMeanOp : kiln::SumOp<float> {
  template <class J> static float finalize(float a, J) { return a / float(kCount); }
};
}  // namespace

TEST_CASE("emulated chained reduction over non-adjacent axes: sum, mean, max, logsumexp") {
  // [A, B, C] reduced over (0, 2): stage 1 reduce_inner_warp over C -> [A, B]; stage 2
  // reduce_outer over A -> [B], as the planner chains them.
  constexpr int A = 5, B = 7, C = 33;
  auto x = inputs(std::size_t(A) * B * C, 9, -2.f, 2.f);
  x[(0 * B + 2) * C + 4] = kNaN;                         // column b = 2: NaN for max and logsumexp
  for (int c = 0; c < C; ++c) x[(1 * B + 3) * C + c] = -kInf;   // a whole inner group of b = 3 is -inf
  for (int a = 0; a < A; ++a)
    for (int c = 0; c < C; ++c) x[(a * B + 4) * C + c] = -kInf;  // b = 4: all -inf -> -inf
  x[(3 * B + 5) * C + 7] = kInf;                          // b = 5: +inf
  auto chain = [&](auto op1, auto op2) {
    using Op1 = decltype(op1);
    using Op2 = decltype(op2);
    std::vector<float> mid(A * B, kNaN), out(B, kNaN);
    emu::launch({2, 1, 0}, 64, [&] { kiln::reduce_inner_warp<64, 2, Op1>(x.data(), mid.data(), A * B, C, Pass{}, Pass{}); });
    emu::launch({1, 1, 0}, 32, [&] {
      kiln::reduce_outer<32, 8, 1, Op2>(mid.data(), out.data(), static_cast<typename Op2::Acc*>(nullptr), 1, A, B, 1, A,
                                        Pass{}, Pass{});
    });
    return out;
  };
  const auto sum = chain(kiln::SumOp<float>{}, kiln::SumOp<float>{});
  const auto mean = chain(kiln::SumOp<float>{}, ChainMeanOp<A * C>{});
  const auto mx = chain(kiln::MaxOp<float>{}, kiln::MaxOp<float>{});
  const auto lse = chain(kiln::LogSumExpOp<float>{}, kiln::LogSumExpOp<float>{});
  for (int b = 0; b < B; ++b) {
    double s = 0, m = -kInf;
    for (int a = 0; a < A; ++a)
      for (int c = 0; c < C; ++c) {
        const double v = x[(a * B + b) * C + c];
        s += v;
        m = (std::isnan(m) || m > v) ? m : v;
      }
    double l;
    if (std::isnan(m) || std::isinf(m)) {
      l = m;
    } else {
      double e = 0;
      for (int a = 0; a < A; ++a)
        for (int c = 0; c < C; ++c) e += std::exp(double(x[(a * B + b) * C + c]) - m);
      l = m + std::log(e);
    }
    INFO("b " << b);
    CHECK(matches(sum[b], s, Kind::kSum));
    CHECK(matches(mean[b], s / (A * C), Kind::kSum));
    CHECK(matches(mx[b], m, Kind::kMax));
    CHECK(matches(lse[b], l, Kind::kSum));
  }
  CHECK(lse[4] == -kInf);
  CHECK(lse[5] == kInf);
  CHECK(std::isnan(lse[2]));
}
