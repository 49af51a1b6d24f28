// Runs the memory-bound templates (reduce, scan, rownorm) on the CPU through cuda_emulator.h,
// on small awkward shapes (odd lengths, misaligned rows, several tiles, splits, NaN/inf), and
// compares with float64 references. This checks the index, tail, barrier and shuffle logic
// without a GPU; the GPU run of bench/standalone/memtpl_check.cu checks the same on hardware.
#include "cuda_emulator.h"   // first: compiles the templates as host code
#include "emulated_buffers.h"

#include "kiln/reduce.cuh"
#include "kiln/rownorm.cuh"
#include "kiln/scan.cuh"
#include "templates/kiln/config/reduce.h"
#include "templates/kiln/config/scan.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

struct Id {
  float operator()(float x, long long) const { return x; }
  float operator()(float x, int) const { return x; }
};
struct IdIndex {
  long long operator()(int r, int) const { return r; }
};

using emulated::Buffer;
using emulated::random_floats;

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
bool close(double out, double ref, double tol) {
  if (std::isnan(ref)) return std::isnan(out);
  if (std::isinf(ref)) return out == ref;
  return std::fabs(out - ref) <= tol;
}
double ref_min(const float* p, long long n, long long stride) {
  double m = kInf;
  for (long long i = 0; i < n; ++i) {
    const float v = p[i * stride];
    if (std::isnan(v)) return kNaN;
    m = std::min(m, double(v));
  }
  return m;
}

}  // namespace

TEST_CASE("emulated reduce_inner_warp: min over misaligned odd rows, argmax over short rows") {
  for (int offset : {0, 1, 3}) {
    const int rows = 37, len = 1023;
    Buffer in(rows * len, offset);
    const auto r = random_floats(rows * len, 1 + offset);
    std::copy(r.begin(), r.end(), in.data);
    in.data[5 * len + 0] = kNaN;            // head element
    in.data[6 * len + len - 1] = -kInf;     // tail element
    in.data[7 * len + 500] = -1.f;          // body
    std::vector<float> out(rows, -7.f);
    emu::launch({3, 1, 0}, 64, [&] {   // 6 warps for 37 rows: grid-strided
      kiln::reduce_inner_warp<64, 2, kiln::MinOp<float>>(in.data, out.data(), rows, len, Id{}, Id{});
    });
    for (int row = 0; row < rows; ++row) CHECK_MESSAGE(same(out[row], ref_min(in.data + row * len, len, 1)), "row " << row);
  }
  {
    const int rows = 64, len = 7;
    Buffer in(rows * len, 1);
    const auto r = random_floats(rows * len, 9);
    std::copy(r.begin(), r.end(), in.data);
    for (int i = 0; i < len; ++i) in.data[3 * len + i] = 0.5f;   // all tied -> 0
    in.data[4 * len + 2] = kNaN;
    in.data[4 * len + 5] = kNaN;   // first NaN -> 2
    in.data[5 * len + 6] = kInf;   // last -> 6
    std::vector<long long> out(rows, -1);
    emu::launch({4, 1, 0}, 64, [&] {
      kiln::reduce_inner_warp<64, 4, kiln::ArgMaxOp<float, int>>(in.data, out.data(), rows, len, Id{}, IdIndex{});
    });
    for (int row = 0; row < rows; ++row) {
      const float* p = in.data + row * len;
      long long best = 0;
      for (int i = 1; i < len && !std::isnan(p[best]); ++i)
        if (std::isnan(p[i]) || p[i] > p[best]) best = i;
      CHECK_MESSAGE(out[row] == best, "row " << row);
    }
    CHECK(out[3] == 0);
    CHECK(out[4] == 2);
    CHECK(out[5] == 6);
  }
}

TEST_CASE("emulated reduce_inner_block with a split row and reduce_finish") {
  const int rows = 3, len = 10003, threads = 64, unroll = 2;
  const auto split = kiln::launch::reduce_inner_split(rows, len, threads, unroll, 4, /*sm_count=*/4);
  REQUIRE(split.splits > 1);
  Buffer in(rows * len, 2);
  const auto r = random_floats(rows * len, 3);
  std::copy(r.begin(), r.end(), in.data);
  using Op = kiln::SumOp<float>;
  std::vector<float> partials(split.splits * rows, kNaN), out(rows, kNaN);
  emu::launch({unsigned(rows), unsigned(split.splits), 0}, threads, [&] {
    kiln::reduce_inner_block<threads, unroll, Op>(in.data, static_cast<float*>(nullptr), partials.data(), rows, len,
                                                  int(split.splits), int(split.chunk), Id{}, Id{});
  });
  emu::launch({1, 1, 0}, 32, [&] {
    kiln::reduce_finish<32, 1, Op>(partials.data(), out.data(), rows, int(split.splits), len, Id{});
  });
  for (int row = 0; row < rows; ++row) {
    double ref = 0;
    for (int i = 0; i < len; ++i) ref += in.data[row * len + i];
    CHECK(close(out[row], ref, 1e-5 * ref));
  }
  // Unsplit, grid-strided rows (grid of 2 blocks for 3 rows), mean.
  std::vector<float> mean(rows, kNaN);
  emu::launch({2, 1, 0}, threads, [&] {
    kiln::reduce_inner_block<threads, unroll, kiln::MeanOp<float>>(in.data, mean.data(), static_cast<float*>(nullptr),
                                                                   rows, len, 1, len, Id{}, Id{});
  });
  for (int row = 0; row < rows; ++row) {
    double ref = 0;
    for (int i = 0; i < len; ++i) ref += in.data[row * len + i];
    CHECK(close(mean[row], ref / len, 1e-5 * ref / len));
  }
}

TEST_CASE("emulated reduce_outer: scalar columns, 16-byte columns, misaligned fallback, split") {
  struct Case {
    int outer, red, inner, offset;
  };
  for (const Case c : {Case{3, 77, 45, 0}, Case{2, 50, 64, 0}, Case{2, 50, 64, 1}}) {
    const int n = c.outer * c.red * c.inner;
    Buffer in(n, c.offset);
    const auto r = random_floats(n, 5);
    std::copy(r.begin(), r.end(), in.data);
    in.data[(1 * c.red + 10) * c.inner + 7] = kNaN;
    in.data[(0 * c.red + c.red - 1) * c.inner + c.inner - 1] = -2.f;
    const int vec = kiln::launch::reduce_outer_vec(c.inner, 4);
    const int threads = 32, unroll = 4;
    const auto split = kiln::launch::reduce_outer_split(c.outer, c.red, c.inner, threads, vec, unroll, /*sm_count=*/2);
    const auto geo = kiln::launch::reduce_outer_geometry(c.outer, c.inner, split, threads, vec, 4);
    using Op = kiln::MinOp<float>;
    std::vector<float> partials(split.splits * c.outer * c.inner, -5.f), out(c.outer * c.inner, -5.f);
    emu::launch({unsigned(geo.grid.x), unsigned(geo.grid.y), 0}, threads, [&] {
      if (vec == 4)
        kiln::reduce_outer<threads, unroll, 4, Op>(in.data, out.data(), partials.data(), c.outer, c.red, c.inner,
                                                   int(split.splits), int(split.chunk), Id{}, Id{});
      else
        kiln::reduce_outer<threads, unroll, 1, Op>(in.data, out.data(), partials.data(), c.outer, c.red, c.inner,
                                                   int(split.splits), int(split.chunk), Id{}, Id{});
    });
    if (split.splits > 1)
      emu::launch({2, 1, 0}, 32, [&] {
        kiln::reduce_finish<32, 4, Op>(partials.data(), out.data(), c.outer * c.inner, int(split.splits), c.red, Id{});
      });
    INFO("outer " << c.outer << " red " << c.red << " inner " << c.inner << " offset " << c.offset << " splits "
                  << split.splits);
    for (int o = 0; o < c.outer; ++o)
      for (int col = 0; col < c.inner; ++col)
        CHECK(same(out[o * c.inner + col], ref_min(in.data + o * c.red * c.inner + col, c.red, c.inner)));
  }
}

TEST_CASE("emulated logsumexp rows: -inf, +inf, NaN, large values") {
  const int rows = 6, len = 301;
  Buffer in(rows * len, 1);
  const auto r = random_floats(rows * len, 7);
  std::copy(r.begin(), r.end(), in.data);
  for (int i = 0; i < len; ++i) in.data[0 * len + i] = -kInf;
  in.data[1 * len + 3] = kInf;
  in.data[2 * len + 300] = kNaN;
  in.data[3 * len + 100] = 90.f;
  in.data[4 * len + 1] = kInf;
  in.data[4 * len + 2] = kInf;   // inf twice: inf, not NaN
  std::vector<float> out(rows, -7.f);
  emu::launch({1, 1, 0}, 192, [&] {
    kiln::reduce_inner_warp<192, 2, kiln::LogSumExpOp<float>>(in.data, out.data(), rows, len, Id{}, Id{});
  });
  CHECK(out[0] == -kInf);
  CHECK(out[1] == kInf);
  CHECK(std::isnan(out[2]));
  CHECK(out[4] == kInf);
  for (int row : {3, 5}) {
    double m = -kInf, s = 0;
    for (int i = 0; i < len; ++i) m = std::max(m, double(in.data[row * len + i]));
    for (int i = 0; i < len; ++i) s += std::exp(double(in.data[row * len + i]) - m);
    CHECK(close(out[row], m + std::log(s), 1e-5 * std::max(1.0, m)));
  }
}

namespace {
template <class Combine>
std::vector<double> ref_scan(const float* x, int len, bool exclusive, bool reverse, double identity, Combine op) {
  std::vector<double> out(len);
  double run = identity;
  for (int q = 0; q < len; ++q) {
    const int p = reverse ? len - 1 - q : q;
    if (exclusive) {
      out[p] = run;
      run = op(run, x[p]);
    } else {
      run = op(run, x[p]);
      out[p] = run;
    }
  }
  return out;
}
// known: the rows are known vectorizable (kAligned: the vector path only), else checked per launch.
template <bool kExclusive, bool kReverse, class Op>
void run_scan_block(const float* in, float* out, int rows, int len, bool known) {
  emu::launch({2, 1, 0}, 64, [&] {
    if (known)
      kiln::scan_rows_block<64, 2, kExclusive, kReverse, true, Op>(in, out, rows, len, Id{}, Id{});
    else
      kiln::scan_rows_block<64, 2, kExclusive, kReverse, false, Op>(in, out, rows, len, Id{}, Id{});
  });
}
template <bool kExclusive, bool kReverse, class Op>
void run_scan_lookback(const float* in, float* out, int rows, int len, bool known) {
  constexpr int kTile = 64 * 1 * 4;
  std::vector<unsigned long long> ws(kiln::launch::scan_lookback_workspace_bytes(rows, len, kTile, 4) / 8 + 2, 0);
  // Two stages (every stage reused many times), one block: the walker and the stores alternate.
  const auto geo = kiln::launch::scan_rows_lookback_geometry(rows, len, kTile, 64, 4, 1);
  emu::launch(
      {unsigned(geo.grid.x), 1, 0}, unsigned(geo.block.x),
      [&] {
        if (known)
          kiln::scan_rows_lookback<64, 1, 2, kExclusive, kReverse, true, Op>(in, out, ws.data(), rows, len, Id{}, Id{});
        else
          kiln::scan_rows_lookback<64, 1, 2, kExclusive, kReverse, false, Op>(in, out, ws.data(), rows, len, Id{}, Id{});
      },
      unsigned(geo.shared_bytes));
}
}  // namespace

TEST_CASE("emulated scan_rows_block and scan_rows_lookback: every direction, both paths") {
  auto sum = [](double a, double b) { return a + b; };
  auto nmax = [](double a, double b) { return (std::isnan(a) || a > b) ? a : b; };
  // 1000: 16-byte path (rows aligned), checked per launch or known (kAligned); 999: scalar; tiny rows
  for (int lookback = 0; lookback < 2; ++lookback)
    for (const auto& [len, known] : std::vector<std::pair<int, bool>>{{1000, false}, {1000, true}, {999, false},
                                                                       {1, false}, {5, false}}) {
      const int rows = 5;
      Buffer in(rows * len, 0);
      const auto r = random_floats(rows * len, 11);
      std::copy(r.begin(), r.end(), in.data);
      if (len > 600) in.data[2 * len + 600] = kNaN;   // cummax: NaN from 600 on in row 2
      for (int variant = 0; variant < 5; ++variant) {
        Buffer out(rows * len, 0);
        const bool excl = variant == 1 || variant == 3, rev = variant >= 2 && variant < 4;
        INFO("lookback " << lookback << " len " << len << " known " << known << " exclusive " << excl << " reverse "
                         << rev << (variant == 4 ? " cummax" : " cumsum"));
        if (variant == 4) {
          if (lookback) run_scan_lookback<false, false, kiln::MaxOp<float>>(in.data, out.data, rows, len, known);
          else run_scan_block<false, false, kiln::MaxOp<float>>(in.data, out.data, rows, len, known);
        } else if (lookback) {
          if (variant == 0) run_scan_lookback<false, false, kiln::SumOp<float>>(in.data, out.data, rows, len, known);
          if (variant == 1) run_scan_lookback<true, false, kiln::SumOp<float>>(in.data, out.data, rows, len, known);
          if (variant == 2) run_scan_lookback<false, true, kiln::SumOp<float>>(in.data, out.data, rows, len, known);
          if (variant == 3) run_scan_lookback<true, true, kiln::SumOp<float>>(in.data, out.data, rows, len, known);
        } else {
          if (variant == 0) run_scan_block<false, false, kiln::SumOp<float>>(in.data, out.data, rows, len, known);
          if (variant == 1) run_scan_block<true, false, kiln::SumOp<float>>(in.data, out.data, rows, len, known);
          if (variant == 2) run_scan_block<false, true, kiln::SumOp<float>>(in.data, out.data, rows, len, known);
          if (variant == 3) run_scan_block<true, true, kiln::SumOp<float>>(in.data, out.data, rows, len, known);
        }
        int bad = 0;
        for (int row = 0; row < rows; ++row) {
          const float* x = in.data + row * len;
          const auto ref = variant == 4 ? ref_scan(x, len, false, false, -kInf, nmax) : ref_scan(x, len, excl, rev, 0.0, sum);
          for (int i = 0; i < len; ++i) {
            const double tol = variant == 4 ? 0.0 : 1e-5 * (1.0 + std::fabs(ref[i]));
            const bool ok = variant == 4 ? same(out.data[row * len + i], ref[i]) : close(out.data[row * len + i], ref[i], tol);
            if (!ok && bad++ < 3) FAIL_CHECK("row " << row << " i " << i << ": " << out.data[row * len + i] << " vs " << ref[i]);
          }
        }
        CHECK(bad == 0);
      }
    }
}

namespace {
// Seeds a row of tile statuses (one row, tiles 0..n-1) and walks back from its last tile.
template <class C>
C walk_seeded(const std::vector<unsigned>& flags, const std::vector<C>& values) {
  const long long n = static_cast<long long>(flags.size());
  std::vector<unsigned long long> ws(kiln::launch::scan_lookback_workspace_bytes(1, n, 1, int(sizeof(C))) / 8, 0);
  const auto status = kiln::detail::TileStatus<C>::at(ws.data(), static_cast<unsigned long long>(n));
  for (long long k = 0; k + 1 < n; ++k)
    if (flags[k] != kiln::detail::kTileEmpty) status.publish(k, flags[k], values[k]);
  std::vector<C> got(32);
  emu::launch({1, 1, 0}, 32, [&] {
    got[threadIdx.x] = kiln::detail::lookback<kiln::SumOp<C>, C>(status, n - 1, n - 1);
  });
  for (int lane = 1; lane < 32; ++lane) CHECK(got[lane] == got[0]);   // the same value in every lane
  return got[0];
}
template <class C>
void check_walks() {
  using kiln::detail::kTileAggregate;
  using kiln::detail::kTilePrefix;
  // 300 tiles: the row's first tile has its prefix, then aggregates k; the closest prefix of the
  // last tile's walk is tile `p` (its value `base`), and only the aggregates after it count.
  for (long long p : {0LL, 100LL, 170LL, 233LL, 297LL, 298LL}) {
    INFO("closest prefix at tile " << p);
    std::vector<unsigned> flags(300, kTileAggregate);
    std::vector<C> values(300);
    for (long long k = 0; k < 300; ++k) values[k] = C(k % 7);
    flags[0] = kTilePrefix;
    values[0] = C(1000);   // older than every other prefix: never counted when p > 0
    const C base = C(5000);
    flags[p] = kTilePrefix;
    values[p] = p == 0 ? C(1000) : base;
    C want = p == 0 ? C(1000) : base;
    for (long long k = p + 1; k < 299; ++k) want += C(k % 7);
    CHECK(walk_seeded<C>(flags, values) == want);   // small integers: exact in any order
  }
}
}  // namespace

TEST_CASE("emulated look-back walk: rounds of 128 tiles, the closest prefix ends it (packed and wide statuses)") {
  static_assert(kiln::launch::scan_lookback_packed(4) && !kiln::launch::scan_lookback_packed(8));
  check_walks<float>();    // an 8-byte word a tile
  check_walks<double>();   // a flag, then the value
  check_walks<int>();
  check_walks<long long>();
}

namespace {
// Seeds the statuses of one column down 300 tiles (every other column's statuses 3 slots apart
// in between) and walks from its last tile, in one thread a lane as scan_strided_lookback does.
template <class C>
void check_column_walks() {
  using kiln::detail::kTileAggregate;
  using kiln::detail::kTilePrefix;
  const long long step = 3, rows = 300, column = 1;
  for (long long p : {0LL, 100LL, 170LL, 171LL, 296LL, 297LL, 298LL}) {
    INFO("closest prefix at row tile " << p);
    const unsigned long long slots = (unsigned long long)(step * rows);
    std::vector<unsigned long long> ws(kiln::launch::scan_lookback_workspace_bytes(1, (long long)slots, 1, int(sizeof(C))) / 8, 0);
    const auto status = kiln::detail::TileStatus<C>::at(ws.data(), slots);
    C want = C(0);
    for (long long r = 0; r + 1 < rows; ++r) {
      for (long long c = 0; c < step; ++c)   // the other columns: prefixes that must not count
        if (c != column) status.publish(r * step + c, kTilePrefix, C(7000));
      const bool prefix = r == 0 || r == p;
      const C v = r == 0 ? C(1000) : r == p ? C(5000) : C(r % 7);
      status.publish(r * step + column, prefix ? kTilePrefix : kTileAggregate, v);
      if (r >= p) want += v;   // the closest prefix and the aggregates after it
    }
    std::vector<C> got(32);
    emu::launch({1, 1, 0}, 32, [&] {
      got[threadIdx.x] = kiln::detail::column_lookback<kiln::SumOp<C>, C>(status, (rows - 1) * step + column, rows - 1, step);
    });
    for (int lane = 0; lane < 32; ++lane) CHECK(got[lane] == want);   // small integers: exact in any order
  }
}
}  // namespace

TEST_CASE("emulated strided look-back walk: down one column, the closest prefix ends it (packed and wide statuses)") {
  check_column_walks<float>();
  check_column_walks<double>();
  check_column_walks<int>();
  check_column_walks<long long>();
}

namespace {
struct HalfToFloat {
  float operator()(__half x, int) const { return __half2float(x); }
};
struct FloatOut {
  float operator()(float y, int) const { return y; }
};
struct DoubleId {
  double operator()(double x, int) const { return x; }
};
}  // namespace

// Both staged paths of scan_rows_lookback beyond f32: 16-byte copies (len a multiple of the
// vector), 8-byte element copies (f64 rows of odd length: wide statuses too), and f16 elements
// loaded one by one (odd length), forward and reverse.
TEST_CASE("emulated scan_rows_lookback: f64 and f16 rows, whole vectors and not") {
  constexpr int kThreads = 64, kVecs = 2;
  for (int len : {1000, 999})
    for (int reverse = 0; reverse < 2; ++reverse) {
      INFO("len " << len << " reverse " << reverse);
      const int rows = 3;
      const auto r = random_floats(size_t(rows) * len, 31);
      std::vector<double> x64(r.begin(), r.end());
      std::vector<__half> x16(r.size());
      for (size_t i = 0; i < r.size(); ++i) x16[i] = __float2half(r[i]);
      std::vector<double> y64(r.size(), -1.0);
      std::vector<float> y16(r.size(), -1.f);
      auto launch = [&](auto elem_tag, auto* in, auto* out, auto pro, auto epi) {
        using T = decltype(elem_tag);
        using C = std::remove_pointer_t<decltype(out)>;
        const long long tile = kiln::launch::scan_rows_tile(kThreads, kVecs, int(sizeof(T)));
        std::vector<unsigned long long> ws(kiln::launch::scan_lookback_workspace_bytes(rows, len, tile, int(sizeof(C))) / 8 + 2, 0);
        const auto geo = kiln::launch::scan_rows_lookback_geometry(rows, len, tile, kThreads, int(sizeof(C)), 3);
        constexpr int kStages = kiln::launch::kScanLookbackStages;
        emu::launch(
            {unsigned(geo.grid.x), 1, 0}, unsigned(geo.block.x),
            [&] {
              if (reverse)
                kiln::scan_rows_lookback<kThreads, kVecs, kStages, false, true, false, kiln::SumOp<C>>(
                    in, out, ws.data(), rows, len, pro, epi);
              else
                kiln::scan_rows_lookback<kThreads, kVecs, kStages, false, false, false, kiln::SumOp<C>>(
                    in, out, ws.data(), rows, len, pro, epi);
            },
            unsigned(geo.shared_bytes));
      };
      launch(double{}, x64.data(), y64.data(), DoubleId{}, DoubleId{});
      launch(__half{}, x16.data(), y16.data(), HalfToFloat{}, FloatOut{});
      int bad = 0;
      for (int row = 0; row < rows; ++row) {
        double run64 = 0, run16 = 0;
        for (int q = 0; q < len; ++q) {
          const size_t i = size_t(row) * len + size_t(reverse ? len - 1 - q : q);
          run64 += x64[i];
          run16 += double(__half2float(x16[i]));
          if (std::fabs(y64[i] - run64) > 1e-12 * (1 + run64) && bad++ < 3) FAIL_CHECK("f64 " << i << ": " << y64[i] << " vs " << run64);
          if (std::fabs(y16[i] - run16) > 1e-5 * (1 + run16) && bad++ < 3) FAIL_CHECK("f16 " << i << ": " << y16[i] << " vs " << run16);
        }
      }
      CHECK(bad == 0);
    }
}

// The Scale a Normalize anchor's unit emits (emit_memory.cpp, write_norm_scale): rsqrt(q / len + eps).
struct MeanScale {
  float len, eps;
  float operator()(float q) const { return 1.f / std::sqrt(q / len + eps); }
};

TEST_CASE("emulated rownorm_strided: layer and RMS norms down strided columns, a tail past the unroll") {
  // [outer, len, inner] with len 17 (4 chunks of kUnroll 4, then 1) and 10 columns an outer index;
  // the values offset from 0 so that the centered and uncentered norms differ.
  const int outer = 3, len = 17, inner = 10;
  Buffer in(outer * len * inner, 1);
  const auto r = random_floats(outer * len * inner, 29);
  for (std::size_t i = 0; i < r.size(); ++i) in.data[i] = 3.f + 2.f * r[i];
  for (int centered = 0; centered < 2; ++centered) {
    INFO("centered " << centered);
    Buffer out(outer * len * inner, 0);
    const MeanScale scale{float(len), 1e-5f};
    emu::launch({2, 1, 0}, 32, [&] {
      if (centered)
        kiln::rownorm_strided<32, 4, kiln::RowNormKind::kLayerNorm, float>(in.data, out.data, outer, len, inner, Id{},
                                                                          Id{}, scale);
      else
        kiln::rownorm_strided<32, 4, kiln::RowNormKind::kRmsNorm, float>(in.data, out.data, outer, len, inner, Id{},
                                                                        Id{}, scale);
    });
    int bad = 0;
    for (int o = 0; o < outer; ++o)
      for (int c = 0; c < inner; ++c) {
        const float* x = in.data + o * len * inner + c;
        double mean = 0, q = 0;
        if (centered) {
          for (int l = 0; l < len; ++l) mean += x[l * inner];
          mean /= len;
        }
        for (int l = 0; l < len; ++l) q += (x[l * inner] - mean) * (x[l * inner] - mean);
        const double s = 1.0 / std::sqrt(q / len + 1e-5);
        for (int l = 0; l < len; ++l) {
          const double want = (x[l * inner] - mean) * s;
          if (!close(out.data[(o * len + l) * inner + c], want, 1e-5 * std::max(1.0, std::fabs(want)))) ++bad;
        }
      }
    CHECK(bad == 0);
  }
}

TEST_CASE("emulated rownorm_split_stats/apply: rows over leading and trailing segments, short last chunks, gangs, "
          "both block orders") {
  // x viewed as [lead, outer, len]: row r normalized over its lead segments of len. Chunks of 24
  // (whole vectors of 4) leave a last chunk of 3 or 4 vectors (len 100) or of one scalar tail
  // (len 99, scalar); the grid (3 blocks) strides over the chunks. gang > 1 takes whole short
  // segments a chunk (splits 1, chunk len): 7 segments in gangs of 3, 3 and 1 (vectors of 12),
  // scalar segments of 9, and one misaligned gang of every segment.
  struct Case {
    int lead, outer, len, chunk, offset, gang;
  };
  for (const Case k : {Case{1, 3, 100, 24, 0, 1}, Case{3, 2, 100, 24, 0, 1}, Case{2, 3, 99, 24, 1, 1},
                       Case{4, 1, 33, 40, 0, 1}, Case{7, 3, 12, 12, 0, 3}, Case{5, 2, 9, 9, 0, 2},
                       Case{6, 2, 8, 8, 1, 6}}) {
    const int n = k.lead * k.outer * k.len, splits = (k.len + k.chunk - 1) / k.chunk;
    const auto blocks = kiln::launch::rownorm_split_blocks(k.lead, k.gang, k.outer, splits);
    Buffer in(n, k.offset);
    const auto r = random_floats(n, 31);
    for (int i = 0; i < n; ++i) in.data[i] = 3.f + 2.f * r[i];
    // known: every chunk whole aligned vectors (kAligned), where the case's are
    const bool whole = k.offset == 0 && k.len % 4 == 0 && (k.gang > 1 || k.chunk % 4 == 0);
    for (int known = 0; known < (whole ? 2 : 1); ++known)
      for (int centered = 0; centered < 2; ++centered)
      for (int fast = 0; fast < 2; ++fast) {   // the block order: chunks fastest, or rows fastest
        INFO("lead " << k.lead << " outer " << k.outer << " len " << k.len << " gang " << k.gang << " known " << known
                     << " centered " << centered << " rows fastest " << fast);
        std::vector<kiln::WelfordAcc<float>> partials(static_cast<std::size_t>(blocks),
                                                      kiln::WelfordAcc<float>{kNaN, kNaN, kNaN});
        Buffer out(n, k.offset);
        const MeanScale scale{float(k.lead * k.len), 1e-5f};
        using kiln::RowNormKind;
        auto both = [&](auto kind, auto aligned, auto order) {
          constexpr RowNormKind kKind = decltype(kind)::value;
          constexpr bool kAligned = decltype(aligned)::value, kRowsFastest = decltype(order)::value;
          emu::launch({3, 1, 0}, 32, [&] {
            kiln::rownorm_split_stats<32, kKind, float, kAligned, kRowsFastest>(in.data, partials.data(), k.outer,
                                                                                k.lead, k.len, k.gang, splits, k.chunk,
                                                                                Id{});
          });
          emu::launch({3, 1, 0}, 32, [&] {
            kiln::rownorm_split_apply<32, kKind, float, kAligned, kRowsFastest>(
                in.data, out.data, partials.data(), k.outer, k.lead, k.len, k.gang, splits, k.chunk, Id{}, Id{}, scale);
          });
        };
        using Ln = std::integral_constant<RowNormKind, RowNormKind::kLayerNorm>;
        using Rms = std::integral_constant<RowNormKind, RowNormKind::kRmsNorm>;
        auto in_order = [&](auto order) {
          if (centered && known) both(Ln{}, std::true_type{}, order);
          if (centered && !known) both(Ln{}, std::false_type{}, order);
          if (!centered && known) both(Rms{}, std::true_type{}, order);
          if (!centered && !known) both(Rms{}, std::false_type{}, order);
        };
        if (fast) in_order(std::true_type{});
        else in_order(std::false_type{});
        int bad = 0;
        for (int row = 0; row < k.outer; ++row) {
          const auto at = [&](int l, int i) { return (l * k.outer + row) * k.len + i; };
          double mean = 0, q = 0;
          if (centered) {
            for (int l = 0; l < k.lead; ++l)
              for (int i = 0; i < k.len; ++i) mean += in.data[at(l, i)];
            mean /= k.lead * k.len;
          }
          for (int l = 0; l < k.lead; ++l)
            for (int i = 0; i < k.len; ++i) q += (in.data[at(l, i)] - mean) * (in.data[at(l, i)] - mean);
          const double sc = 1.0 / std::sqrt(q / (k.lead * k.len) + 1e-5);
          for (int l = 0; l < k.lead; ++l)
            for (int i = 0; i < k.len; ++i) {
              const double want = (in.data[at(l, i)] - mean) * sc;
              if (!close(out.data[at(l, i)], want, 1e-5 * std::max(1.0, std::fabs(want))) && bad++ < 3)
                FAIL_CHECK("row " << row << " segment " << l << " i " << i << ": " << out.data[at(l, i)] << " vs " << want);
            }
        }
        CHECK(bad == 0);
        CHECK(out.storage.back() == -12345.f);   // nothing written past the end
      }
  }
}

TEST_CASE("emulated rownorm: warp and block groups, registers and two-pass, strided") {
  auto ref_row = [](const float* x, long long n, long long stride, bool log, std::vector<double>& out) {
    double m = -kInf, s = 0;
    for (long long i = 0; i < n; ++i) m = std::max(m, double(x[i * stride]));
    for (long long i = 0; i < n; ++i) s += std::exp(double(x[i * stride]) - m);
    out.resize(n);
    for (long long i = 0; i < n; ++i) out[i] = log ? (x[i * stride] - m) - std::log(s) : std::exp(x[i * stride] - m) / s;
  };
  for (int len : {100, 999, 1000, 250, 1001}) {
    const int rows = 9;
    Buffer in(rows * len, 0);
    const auto r = random_floats(rows * len, 13);
    std::copy(r.begin(), r.end(), in.data);
    // known: the rows are known whole aligned vectors (kAligned), where len is a multiple of 4
    for (int known = 0; known < (len % 4 == 0 ? 2 : 1); ++known)
      for (int log = 0; log < 2; ++log)
        for (int block = 0; block < 2; ++block) {
          Buffer out(rows * len, 0);
          INFO("len " << len << " known " << known << " log " << log << " block " << block);
          emu::launch({2, 1, 0}, 64, [&] {
            using kiln::RowNormKind;
            auto run = [&](auto group, auto kind) {
              constexpr int kGroup = decltype(group)::value;
              constexpr RowNormKind kKind = decltype(kind)::value;
              if (known) kiln::rownorm_rows<64, kGroup, 4, kKind, float, true>(in.data, out.data, rows, len, Id{}, Id{});
              else kiln::rownorm_rows<64, kGroup, 4, kKind, float, false>(in.data, out.data, rows, len, Id{}, Id{});
            };
            using Block = std::integral_constant<int, 64>;
            using Warp = std::integral_constant<int, 32>;
            using Sm = std::integral_constant<RowNormKind, RowNormKind::kSoftmax>;
            using Lsm = std::integral_constant<RowNormKind, RowNormKind::kLogSoftmax>;
            if (block && log) run(Block{}, Lsm{});
            if (block && !log) run(Block{}, Sm{});
            if (!block && log) run(Warp{}, Lsm{});
            if (!block && !log) run(Warp{}, Sm{});
          });
          std::vector<double> ref;
          int bad = 0;
          for (int row = 0; row < rows; ++row) {
            ref_row(in.data + row * len, len, 1, log, ref);
            for (int i = 0; i < len; ++i)
              if (!close(out.data[row * len + i], ref[i], 1e-5 * std::max(log ? 1.0 : 0.0, std::fabs(ref[i])) + 1e-9)) ++bad;
          }
          CHECK(bad == 0);
        }
  }
  const int outer = 3, len = 17, inner = 10;
  Buffer in(outer * len * inner, 1), out(outer * len * inner, 0);
  const auto r = random_floats(outer * len * inner, 17);
  std::copy(r.begin(), r.end(), in.data);
  emu::launch({1, 1, 0}, 32, [&] {
    kiln::rownorm_strided<32, 4, kiln::RowNormKind::kSoftmax, float>(in.data, out.data, outer, len, inner, Id{}, Id{});
  });
  std::vector<double> ref;
  int bad = 0;
  for (int o = 0; o < outer; ++o)
    for (int c = 0; c < inner; ++c) {
      ref_row(in.data + o * len * inner + c, len, inner, false, ref);
      for (int l = 0; l < len; ++l)
        if (!close(out.data[(o * len + l) * inner + c], ref[l], 1e-5 * ref[l] + 1e-9)) ++bad;
    }
  CHECK(bad == 0);
}

namespace {
// A store with the lanes form ([Note: flat lanes] in kiln/common.cuh): y = 2 r + flat % 7 either
// way; the lanes calls count themselves and any whose `first` is not a multiple of N.
struct LanesStore {
  static constexpr bool kFlatLanes = true;
  std::atomic<int>* calls;
  std::atomic<int>* misaligned;
  template <class I>
  float operator()(float r, I flat) const { return 2.f * r + float(flat % 7); }
  template <int N, class I>
  void lanes(const float (&r)[N], I first, float (&y)[N]) const {
    ++*calls;
    if (first % N != 0) ++*misaligned;
    for (int j = 0; j < N; ++j) y[j] = 2.f * r[j] + float((first + j) % 7);
  }
};
struct ElementStore {
  template <class I>
  float operator()(float r, I flat) const { return 2.f * r + float(flat % 7); }
};
}  // namespace

TEST_CASE("emulated rownorm: a store's lanes form gets N adjacent outputs from a multiple of N, same values") {
  // Rows in registers (whole vectors where len % 4 == 0, elements otherwise) and rows streamed in
  // two passes (len over 64 * 4 * 4): the lanes form where the template holds whole aligned vectors,
  // each call's `first` a multiple of 4; the same outputs as the element form everywhere.
  for (int len : {1000, 999, 4096, 4099, 8}) {
    const int rows = 5;
    Buffer in(rows * len, 0), with_lanes(rows * len, 0), per_element(rows * len, 0);
    const auto r = random_floats(rows * len, 29);
    std::copy(r.begin(), r.end(), in.data);
    std::atomic<int> calls{0}, misaligned{0};
    emu::launch({2, 1, 0}, 64, [&] {
      kiln::rownorm_rows<64, 64, 4, kiln::RowNormKind::kSoftmax, float>(in.data, with_lanes.data, rows, len, Id{},
                                                                         LanesStore{&calls, &misaligned});
    });
    emu::launch({2, 1, 0}, 64, [&] {
      kiln::rownorm_rows<64, 64, 4, kiln::RowNormKind::kSoftmax, float>(in.data, per_element.data, rows, len, Id{},
                                                                         ElementStore{});
    });
    INFO("len " << len);
    CHECK(misaligned.load() == 0);
    CHECK((calls.load() > 0) == (len % 4 == 0));   // whole vectors only
    CHECK(std::equal(with_lanes.data, with_lanes.data + rows * len, per_element.data));
  }
}

namespace {
// LanesStore counting the calls of 4 lanes apart (a scan's rows of whole vectors take N = 4, its
// element-wise rows N = 1).
struct WideLanesStore {
  static constexpr bool kFlatLanes = true;
  std::atomic<int>* wide;
  std::atomic<int>* misaligned;
  template <class I>
  float operator()(float r, I flat) const { return 2.f * r + float(flat % 7); }
  template <int N, class I>
  void lanes(const float (&r)[N], I first, float (&y)[N]) const {
    if (N == 4) ++*wide;
    if (first % N != 0) ++*misaligned;
    for (int j = 0; j < N; ++j) y[j] = 2.f * r[j] + float((first + j) % 7);
  }
};
}  // namespace

TEST_CASE("emulated scans: a store's lanes form gets N adjacent outputs from a multiple of N, same values") {
  // Block per row and look-back, forward and reverse: rows of whole vectors (len % 4 == 0) store
  // through lanes<4>, each `first` a multiple of 4 (reverse: the vector's last element); the same
  // outputs as the element form everywhere.
  for (int lookback = 0; lookback < 2; ++lookback)
    for (int len : {1000, 999, 8})
      for (int reverse = 0; reverse < 2; ++reverse) {
        const int rows = 3;
        Buffer in(rows * len, 0), with_lanes(rows * len, 0), per_element(rows * len, 0);
        const auto r = random_floats(rows * len, 41);
        std::copy(r.begin(), r.end(), in.data);
        std::atomic<int> wide{0}, misaligned{0};
        auto run = [&](float* out, auto store) {
          using Sum = kiln::SumOp<float>;
          if (lookback) {
            constexpr int kTile = 64 * 1 * 4;
            std::vector<unsigned long long> ws(kiln::launch::scan_lookback_workspace_bytes(rows, len, kTile, 4) / 8 + 2,
                                               0);
            const auto geo = kiln::launch::scan_rows_lookback_geometry(rows, len, kTile, 64, 4, 1);
            emu::launch(
                {unsigned(geo.grid.x), 1, 0}, unsigned(geo.block.x),
                [&] {
                  if (reverse) kiln::scan_rows_lookback<64, 1, 2, false, true, false, Sum>(in.data, out, ws.data(), rows,
                                                                                          len, Id{}, store);
                  else kiln::scan_rows_lookback<64, 1, 2, false, false, false, Sum>(in.data, out, ws.data(), rows, len,
                                                                                   Id{}, store);
                },
                unsigned(geo.shared_bytes));
          } else {
            emu::launch({2, 1, 0}, 64, [&] {
              if (reverse) kiln::scan_rows_block<64, 2, false, true, false, Sum>(in.data, out, rows, len, Id{}, store);
              else kiln::scan_rows_block<64, 2, false, false, false, Sum>(in.data, out, rows, len, Id{}, store);
            });
          }
        };
        run(with_lanes.data, WideLanesStore{&wide, &misaligned});
        run(per_element.data, ElementStore{});
        INFO("lookback " << lookback << " len " << len << " reverse " << reverse);
        CHECK(misaligned.load() == 0);
        CHECK((wide.load() > 0) == (len % 4 == 0));
        CHECK(std::equal(with_lanes.data, with_lanes.data + rows * len, per_element.data));
      }
}

namespace {
// f16 rows scanned to f32: counts the lanes calls of 8 (whole 16-byte vectors of halves, whose 8
// f32 results are stored as two 16-byte pieces), y = the sum.
struct HalfLanesStore {
  static constexpr bool kFlatLanes = true;
  std::atomic<int>* wide;
  template <class I>
  float operator()(float r, I) const { return r; }
  template <int N, class I>
  void lanes(const float (&r)[N], I, float (&y)[N]) const {
    if (N == 8) ++*wide;
    for (int j = 0; j < N; ++j) y[j] = r[j];
  }
};
}  // namespace

TEST_CASE("emulated scans of f16 rows to f32: the vector path with the output 16-byte but not 32-byte aligned") {
  // 8 f32 results of a vector of halves take 32 bytes, stored as two 16-byte pieces
  // (store_vec_bits, kVecStoreAlign): a row of out 16 bytes past a 32-byte boundary takes the
  // vector path (checked per launch, and known: kAligned), with the element form's sums.
  const int rows = 3, len = 1000;
  const auto r = random_floats(size_t(rows) * len, 43);
  std::vector<__half> x(r.size());
  for (size_t i = 0; i < r.size(); ++i) x[i] = __float2half(r[i]);
  std::vector<float> storage(r.size() + 16);
  float* out = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(storage.data()) + 31) & ~std::uintptr_t(31)) + 4;
  for (int lookback = 0; lookback < 2; ++lookback)
    for (int known = 0; known < 2; ++known) {
      INFO("lookback " << lookback << " known " << known);
      std::fill(storage.begin(), storage.end(), -1.f);
      std::atomic<int> wide{0};
      const HalfLanesStore store{&wide};
      using Sum = kiln::SumOp<float>;
      if (lookback) {
        constexpr int kThreads = 64, kVecs = 1;
        const long long tile = kiln::launch::scan_rows_tile(kThreads, kVecs, 2);
        std::vector<unsigned long long> ws(kiln::launch::scan_lookback_workspace_bytes(rows, len, tile, 4) / 8 + 2, 0);
        const auto geo = kiln::launch::scan_rows_lookback_geometry(rows, len, tile, kThreads, 4, 1);
        emu::launch(
            {unsigned(geo.grid.x), 1, 0}, unsigned(geo.block.x),
            [&] {
              if (known) kiln::scan_rows_lookback<kThreads, kVecs, 2, false, false, true, Sum>(x.data(), out, ws.data(),
                                                                                              rows, len, HalfToFloat{},
                                                                                              store);
              else kiln::scan_rows_lookback<kThreads, kVecs, 2, false, false, false, Sum>(x.data(), out, ws.data(),
                                                                                         rows, len, HalfToFloat{},
                                                                                         store);
            },
            unsigned(geo.shared_bytes));
      } else {
        emu::launch({2, 1, 0}, 64, [&] {
          if (known) kiln::scan_rows_block<64, 2, false, false, true, Sum>(x.data(), out, rows, len, HalfToFloat{}, store);
          else kiln::scan_rows_block<64, 2, false, false, false, Sum>(x.data(), out, rows, len, HalfToFloat{}, store);
        });
      }
      CHECK(wide.load() > 0);   // the vector path
      int bad = 0;
      for (int row = 0; row < rows; ++row) {
        double run = 0;
        for (int q = 0; q < len; ++q) {
          run += double(__half2float(x[size_t(row) * len + q]));
          if (!close(out[row * len + q], run, 1e-4 * (1.0 + std::fabs(run))) && bad++ < 3)
            FAIL_CHECK("row " << row << " q " << q << ": " << out[row * len + q] << " vs " << run);
        }
      }
      CHECK(bad == 0);
      CHECK(storage.back() == -1.f);   // nothing past the rows
    }
}

TEST_CASE("emulated rownorm_split_apply: the lanes form only at flat indices that are multiples of 4, also on bases "
          "misaligned alike") {
  // Rows of 99 in chunks of 24: with x and y both one element past a 16-byte boundary, row 1's first
  // chunk (flat 99) has aligned pointers and whole vectors, but 99 is not a multiple of 4, so it
  // must take the element form; rows of 100 on aligned bases take the lanes form.
  struct Case {
    int outer, len, chunk, offset;
    bool lanes;
  };
  for (const Case k : {Case{2, 99, 24, 1, false}, Case{3, 100, 24, 0, true}}) {
    const int n = k.outer * k.len, splits = (k.len + k.chunk - 1) / k.chunk;
    const auto blocks = kiln::launch::rownorm_split_blocks(1, 1, k.outer, splits);
    Buffer in(n, k.offset), with_lanes(n, k.offset), per_element(n, k.offset);
    const auto r = random_floats(n, 37);
    std::copy(r.begin(), r.end(), in.data);
    std::vector<kiln::WelfordAcc<float>> partials(static_cast<std::size_t>(blocks));
    emu::launch({3, 1, 0}, 32, [&] {
      kiln::rownorm_split_stats<32, kiln::RowNormKind::kLayerNorm, float>(in.data, partials.data(), k.outer, 1, k.len, 1,
                                                                          splits, k.chunk, Id{});
    });
    const MeanScale scale{float(k.len), 1e-5f};
    std::atomic<int> calls{0}, misaligned{0};
    emu::launch({3, 1, 0}, 32, [&] {
      kiln::rownorm_split_apply<32, kiln::RowNormKind::kLayerNorm, float>(in.data, with_lanes.data, partials.data(),
                                                                          k.outer, 1, k.len, 1, splits, k.chunk, Id{},
                                                                          LanesStore{&calls, &misaligned}, scale);
    });
    emu::launch({3, 1, 0}, 32, [&] {
      kiln::rownorm_split_apply<32, kiln::RowNormKind::kLayerNorm, float>(in.data, per_element.data, partials.data(),
                                                                          k.outer, 1, k.len, 1, splits, k.chunk, Id{},
                                                                          ElementStore{}, scale);
    });
    INFO("len " << k.len << " offset " << k.offset);
    CHECK(misaligned.load() == 0);
    CHECK((calls.load() > 0) == k.lanes);
    CHECK(std::equal(with_lanes.data, with_lanes.data + n, per_element.data));
  }
}

namespace {
struct IdAny {
  template <class R> R operator()(R r, int) const { return r; }
};
// One launch of `body(partials)` on a reduce_outer geometry (tiles of kThreads*cols columns),
// then reduce_finish when split; `out` is poisoned first.
template <int kThreads, class Op, class Out, class Body>
void run_outer_split(const kiln::launch::OuterSplit& split, int cols, std::vector<Out>& out, int outer, int red,
                     int inner, Body body) {
  const auto geo = kiln::launch::reduce_outer_geometry(outer, inner, split, kThreads, cols, sizeof(typename Op::Acc));
  std::vector<typename Op::Acc> partials(split.splits * outer * inner, Op::identity());
  out.assign(outer * inner, Out(-5));
  emu::launch({unsigned(geo.grid.x), unsigned(geo.grid.y), 0}, kThreads, [&] { body(partials.data()); });
  if (split.splits > 1)
    emu::launch({3, 1, 0}, 64, [&] {
      kiln::reduce_finish<64, 8, Op>(partials.data(), out.data(), outer * inner, int(split.splits), red, IdAny{});
    });
}
// One launch of reduce_outer_rows (+ reduce_finish when split) with the planner's split rule.
template <int kThreads, int kCols, int kUnroll, class Op, class Out>
void run_outer_rows(const float* in, std::vector<Out>& out, int outer, int red, int inner, int sm_count) {
  const auto split = kiln::launch::reduce_outer_rows_split(outer, red, inner, kThreads, kCols, sm_count);
  run_outer_split<kThreads, Op>(split, kCols, out, outer, red, inner, [&](typename Op::Acc* partials) {
    kiln::reduce_outer_rows<kThreads, kCols, kUnroll, Op>(in, out.data(), partials, outer, red, inner,
                                                         int(split.splits), int(split.chunk), Id{}, IdAny{});
  });
}
}  // namespace

TEST_CASE("emulated reduce_outer_rows: whole-row sweeps, partial tiles, splits, NaN/inf, argmin ties") {
  struct Case {
    int outer, red, inner, offset, sm_count;
  };
  // inner 255 < one tile of 32*8; 301: two tiles, the second partial; 64*8 = 512 exactly one tile;
  // 1000 threads*cols tiles with splits from a large SM count; offset 1 and 3: misaligned rows.
  for (const Case c : {Case{3, 77, 255, 0, 1}, Case{2, 50, 301, 1, 4}, Case{1, 64, 256, 3, 16}, Case{4, 33, 257, 2, 64},
                       Case{1, 500, 37, 1, 8}}) {
    const int n = c.outer * c.red * c.inner;
    Buffer in(n, c.offset);
    const auto r = random_floats(n, 19);
    std::copy(r.begin(), r.end(), in.data);
    in.data[(0 * c.red + 10) * c.inner + 7] = kNaN;                           // column (0, 7): NaN
    in.data[(0 * c.red + 20) * c.inner + 7] = -kInf;                          // NaN still wins
    in.data[(0 * c.red + c.red - 1) * c.inner + c.inner - 1] = -2.f;          // last row, last column
    in.data[((c.outer - 1) * c.red + 0) * c.inner + 0] = -kInf;               // first row of the last slice
    in.data[((c.outer - 1) * c.red + c.red / 2) * c.inner + 1] = -3.f;        // ties for argmin in column 1:
    in.data[((c.outer - 1) * c.red + c.red - 1) * c.inner + 1] = -3.f;        // the first (middle row) wins
    INFO("outer " << c.outer << " red " << c.red << " inner " << c.inner << " offset " << c.offset << " sms "
                  << c.sm_count << " splits "
                  << kiln::launch::reduce_outer_rows_split(c.outer, c.red, c.inner, 32, 8, c.sm_count).splits);
    std::vector<float> mins;
    run_outer_rows<32, 8, 2, kiln::MinOp<float>>(in.data, mins, c.outer, c.red, c.inner, c.sm_count);
    std::vector<float> mins1;
    run_outer_rows<64, 4, 1, kiln::MinOp<float>>(in.data, mins1, c.outer, c.red, c.inner, c.sm_count);
    std::vector<long long> args;
    run_outer_rows<32, 8, 3, kiln::ArgMinOp<float, int>>(in.data, args, c.outer, c.red, c.inner, c.sm_count);
    int bad = 0;
    for (int o = 0; o < c.outer; ++o)
      for (int col = 0; col < c.inner; ++col) {
        const float* p = in.data + o * c.red * c.inner + col;
        const double ref = ref_min(p, c.red, c.inner);
        long long best = 0;
        for (int i = 1; i < c.red && !std::isnan(p[best * c.inner]); ++i)
          if (std::isnan(p[i * c.inner]) || p[i * c.inner] < p[best * c.inner]) best = i;
        const int j = o * c.inner + col;
        if (!same(mins[j], ref) || !same(mins1[j], ref) || args[j] != best) {
          if (bad++ < 3) FAIL_CHECK("o " << o << " col " << col << ": " << mins[j] << " / " << mins1[j] << " / " << args[j]
                                         << " vs " << ref << " / " << best);
        }
      }
    CHECK(bad == 0);
    CHECK(std::isnan(mins[7]));
    CHECK(args[(c.outer - 1) * c.inner + 1] == c.red / 2);
  }
  // The split rule: the seed shape gets 4 splits of 1024 rows (512 blocks, one wave of 4 per SM).
  const auto seed = kiln::launch::reduce_outer_rows_split(128, 4096, 4095, 256, 16, 132);
  CHECK(seed.splits == 4);
  CHECK(seed.chunk == 1024);
}

namespace {
// A prologue that depends on the flat index it is given (checks the index the template passes).
struct ShiftByFlat {
  float operator()(float x, int flat) const { return x + float(flat % 7); }
};
// One launch of reduce_outer_rows_v4 (+ reduce_finish when split), `splits` forced (0: the planner's rule).
template <int kThreads, int kUnroll, class Op, class Out, class Pro = Id>
void run_outer_v4(const float* in, std::vector<Out>& out, int outer, int red, int inner, int splits, int sm_count,
                  Pro pro = {}) {
  auto split = kiln::launch::reduce_outer_v4_split(outer, red, inner, kThreads, kiln::launch::kOuterV4Waves, sm_count);
  if (splits > 0) {
    const int chunk = (red + splits - 1) / splits;
    split = {(red + chunk - 1) / chunk, chunk};
  }
  run_outer_split<kThreads, Op>(split, 4, out, outer, red, inner, [&](typename Op::Acc* partials) {
    kiln::reduce_outer_rows_v4<kThreads, kUnroll, Op>(in, out.data(), partials, outer, red, inner, int(split.splits),
                                                     int(split.chunk), pro, IdAny{});
  });
}
}  // namespace

TEST_CASE("emulated reduce_outer_rows_v4: aligned vectors + shuffles over misaligned rows, tiles, splits, ties") {
  struct Case {
    int outer, red, inner, offset, splits;
  };
  // Rows of 4095/1001/513/4097 start at every residue mod 4; red 7, 13, 33 are not multiples of
  // the unroll; 64 threads give several tiles (the last partial), 1024 one tile a row (the seed
  // shape's choice); offset 1: base not 16-byte aligned, the scalar fallback; splits 3 and 2.
  for (const Case c : {Case{2, 7, 4095, 0, 1}, Case{3, 13, 1001, 0, 3}, Case{2, 33, 513, 0, 0}, Case{1, 9, 4097, 0, 2},
                       Case{2, 13, 1001, 1, 2}}) {
    const int n = c.outer * c.red * c.inner;
    Buffer in(n, c.offset);
    const auto r = random_floats(n, 23);
    std::copy(r.begin(), r.end(), in.data);
    // The padding after the tensor is -12345: any read past the end that got folded would win.
    in.data[(0 * c.red + 3) * c.inner + 7] = kNaN;                        // column (0, 7): NaN
    in.data[(0 * c.red + 5) * c.inner + 7] = -kInf;                       // NaN still wins
    in.data[(0 * c.red + 4) * c.inner + 8] = -kInf;                       // column (0, 8): -inf
    in.data[(0 * c.red + c.red - 1) * c.inner + c.inner - 1] = -2.f;      // last row, last column
    in.data[((c.outer - 1) * c.red + 0) * c.inner + 0] = -kInf;           // first element of the last slice
    in.data[((c.outer - 1) * c.red + c.red / 2) * c.inner + 1] = -3.f;    // argmin ties in column 1:
    in.data[((c.outer - 1) * c.red + c.red - 1) * c.inner + 1] = -3.f;    // the first (middle row) wins
    in.data[n - 1] = -7.f;                                                // the tensor's last element
    INFO("outer " << c.outer << " red " << c.red << " inner " << c.inner << " offset " << c.offset << " splits "
                  << c.splits);
    std::vector<float> m64, m1024, shifted;
    std::vector<long long> args;
    run_outer_v4<64, 2, kiln::MinOp<float>>(in.data, m64, c.outer, c.red, c.inner, c.splits, 8);
    run_outer_v4<1024, 4, kiln::MinOp<float>>(in.data, m1024, c.outer, c.red, c.inner, c.splits, 8);
    run_outer_v4<32, 3, kiln::ArgMinOp<float, int>>(in.data, args, c.outer, c.red, c.inner, c.splits, 8);
    run_outer_v4<96, 1, kiln::MinOp<float>>(in.data, shifted, c.outer, c.red, c.inner, c.splits, 8, ShiftByFlat{});
    int bad = 0;
    for (int o = 0; o < c.outer; ++o)
      for (int col = 0; col < c.inner; ++col) {
        const int f0 = o * c.red * c.inner + col;
        const float* p = in.data + f0;
        const double ref = ref_min(p, c.red, c.inner);
        double ref_shift = kInf;
        bool nan = false;
        for (int i = 0; i < c.red; ++i) {
          const float v = ShiftByFlat{}(p[i * c.inner], f0 + i * c.inner);
          nan |= std::isnan(v);
          ref_shift = std::min(ref_shift, double(v));
        }
        if (nan) ref_shift = kNaN;
        long long best = 0;
        for (int i = 1; i < c.red && !std::isnan(p[best * c.inner]); ++i)
          if (std::isnan(p[i * c.inner]) || p[i * c.inner] < p[best * c.inner]) best = i;
        const int j = o * c.inner + col;
        if (!same(m64[j], ref) || !same(m1024[j], ref) || !same(shifted[j], ref_shift) || args[j] != best) {
          if (bad++ < 3)
            FAIL_CHECK("o " << o << " col " << col << ": " << m64[j] << " / " << m1024[j] << " / " << shifted[j]
                            << " / " << args[j] << " vs " << ref << " / " << ref_shift << " / " << best);
        }
      }
    CHECK(bad == 0);
    CHECK(std::isnan(m64[7]));
    CHECK(m64[8] == -kInf);
    CHECK(m64[c.outer * c.inner - 1] == -7.f);
    CHECK(args[(c.outer - 1) * c.inner + 1] == c.red / 2);
  }
  // The planner's rule for the seed shape [128, 4096, 4095]: 1024 threads, one tile a row, one split.
  CHECK(kiln::launch::reduce_outer_use_v4(4095, 4, true));
  CHECK_FALSE(kiln::launch::reduce_outer_use_v4(4095, 4, false));
  CHECK_FALSE(kiln::launch::reduce_outer_use_v4(4096, 4, true));
  CHECK_FALSE(kiln::launch::reduce_outer_use_v4(4095, 8, true));
  CHECK_FALSE(kiln::launch::reduce_outer_use_v4(511, 4, true));
  CHECK(kiln::launch::reduce_outer_v4_threads(4095) == 1024);
  CHECK(kiln::launch::reduce_outer_v4_threads(1001) == 256);
  CHECK(kiln::launch::reduce_outer_v4_threads(4097) == 544);   // two balanced tiles
  CHECK(kiln::launch::reduce_outer_v4_threads(9999) == 864);
  // About 4096 threads per SM, counted in threads: 1024-thread blocks ~4 per SM; 256-thread blocks
  // of rows of 1001, 512 of them (~1000 threads per SM), split 4 ways (2026-12-04-h200-run1: 64% of copy speed unsplit).
  CHECK(kiln::launch::reduce_outer_v4_split(128, 4096, 4095, 1024, 2, 132).splits == 4);
  CHECK(kiln::launch::reduce_outer_v4_split(512, 1024, 1001, 256, 2, 132).splits == 4);
  CHECK(kiln::launch::reduce_outer_v4_split(4096, 1024, 1001, 256, 2, 132).splits == 1);   // 8 blocks an SM already
}

TEST_CASE("emulated rownorm: NaN, +inf, all -inf and leading -inf rows on every path") {
  // Semantics (docs/semantics.md): NaN or +inf anywhere -> the whole row NaN; all -inf -> NaN;
  // -inf elements beside finite ones -> 0 (softmax) / -inf (log_softmax).
  auto ref_row = [](const float* x, int n, bool log, std::vector<double>& out) {
    double m = -kInf;
    bool poison = false;
    for (int i = 0; i < n; ++i) {
      poison |= std::isnan(x[i]) || x[i] == kInf;
      m = std::max(m, double(x[i]));
    }
    out.assign(n, kNaN);
    if (poison || m == -kInf) return;
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::exp(double(x[i]) - m);
    for (int i = 0; i < n; ++i) out[i] = log ? (x[i] - m) - std::log(s) : std::exp(x[i] - m) / s;
  };
  for (int len : {600, 1000, 333, 2000, 400, 512}) {   // 64*8 = 512 in registers: 333 (scalar), 400/512 (16-byte
    // when aligned); 600/1000/2000 take the two-pass path (16-byte or scalar by alignment)
    const int rows = 8;
    for (int offset : {0, 1}) {
      Buffer in(rows * len, offset);
      const auto r = random_floats(rows * len, 23);
      for (int i = 0; i < rows * len; ++i) in.data[i] = 40.f * r[i] - 1020.f;   // large negative logits
      in.data[0 * len + len / 2] = kNaN;
      in.data[1 * len + 3] = kInf;
      for (int i = 0; i < len; ++i) in.data[2 * len + i] = -kInf;
      for (int i = 0; i < len / 2 + 7; ++i) in.data[3 * len + i] = -kInf;   // leading -inf, then finite
      for (int i = 0; i < len; i += 3) in.data[4 * len + i] = -kInf;        // -inf scattered
      in.data[5 * len + len - 1] = 80.f;                                     // a max far above the rest
      for (int log = 0; log < 2; ++log) {
        Buffer out(rows * len, offset);
        INFO("len " << len << " offset " << offset << " log " << log);
        emu::launch({3, 1, 0}, 64, [&] {
          constexpr auto kSm = kiln::RowNormKind::kSoftmax, kLsm = kiln::RowNormKind::kLogSoftmax;
          if (log) kiln::rownorm_rows<64, 64, 8, kLsm, float>(in.data, out.data, rows, len, Id{}, Id{});
          else kiln::rownorm_rows<64, 64, 8, kSm, float>(in.data, out.data, rows, len, Id{}, Id{});
        });
        std::vector<double> ref;
        int bad = 0;
        for (int row = 0; row < rows; ++row) {
          ref_row(in.data + row * len, len, log, ref);
          for (int i = 0; i < len; ++i) {
            const double tol = log ? 1e-5 * std::max(1.0, std::fabs(ref[i])) : 1e-5 * std::fabs(ref[i]) + 1e-12;
            if (!close(out.data[row * len + i], ref[i], tol) && bad++ < 3)
              FAIL_CHECK("row " << row << " i " << i << ": " << out.data[row * len + i] << " vs " << ref[i]);
          }
        }
        CHECK(bad == 0);
      }
    }
  }
  // Warp groups, two-pass, with a lane that sees only -inf while the row max is -1000:
  // the combine must not compute 0 * exp(+1000).
  const int rows = 2, len = 1500;
  Buffer in(rows * len, 0), out(rows * len, 0);
  for (int i = 0; i < rows * len; ++i) in.data[i] = -kInf;
  in.data[0 * len + 5] = -1000.f;
  in.data[1 * len + 1499] = -1000.f;
  in.data[1 * len + 1400] = -1001.f;
  emu::launch({1, 1, 0}, 64, [&] {
    kiln::rownorm_rows<64, 32, 4, kiln::RowNormKind::kSoftmax, float>(in.data, out.data, rows, len, Id{}, Id{});
  });
  CHECK(out.data[5] == 1.f);
  CHECK(out.data[6] == 0.f);
  {   // strided: a +inf makes its column NaN, an all -inf column is NaN, -inf beside finite gives 0
    const int so = 2, sl = 9, si = 5;
    Buffer sin(so * sl * si, 1), sout(so * sl * si, 0);
    const auto sr = random_floats(so * sl * si, 29);
    std::copy(sr.begin(), sr.end(), sin.data);
    sin.data[(0 * sl + 4) * si + 1] = kInf;                               // column (0, 1)
    for (int l = 0; l < sl; ++l) sin.data[(1 * sl + l) * si + 2] = -kInf;  // column (1, 2)
    sin.data[(1 * sl + 3) * si + 3] = -kInf;                              // column (1, 3): one -inf
    emu::launch({1, 1, 0}, 32, [&] {
      kiln::rownorm_strided<32, 4, kiln::RowNormKind::kSoftmax, float>(sin.data, sout.data, so, sl, si, Id{}, Id{});
    });
    for (int l = 0; l < sl; ++l) {
      CHECK(std::isnan(sout.data[(0 * sl + l) * si + 1]));
      CHECK(std::isnan(sout.data[(1 * sl + l) * si + 2]));
    }
    CHECK(sout.data[(1 * sl + 3) * si + 3] == 0.f);
    CHECK(sout.data[(1 * sl + 4) * si + 3] > 0.f);
  }
  CHECK(close(out.data[len + 1499], 1.0 / (1.0 + std::exp(-1.0)), 1e-6));
  CHECK(close(out.data[len + 1400], std::exp(-1.0) / (1.0 + std::exp(-1.0)), 1e-6));
}

namespace {
// A norm's Scale as fuse_norms' emitter writes it: rsqrt(q / len + eps) for a mean, rsqrt(q + eps)
// for a sum.
struct NormScale {
  float len, eps;
  float operator()(float q) const { return 1.f / std::sqrt(q / len + eps); }
};
// The composition in float64: mean, deviations, mean of their squares, times rsqrt(... + eps).
void ref_norm_row(const float* x, int n, bool centered, double eps, std::vector<double>& out) {
  double mean = 0, q = 0;
  if (centered) {
    for (int i = 0; i < n; ++i) mean += x[i];
    mean /= n;
  }
  for (int i = 0; i < n; ++i) q += (x[i] - mean) * (x[i] - mean);
  const double s = 1.0 / std::sqrt(q / n + eps);
  out.resize(n);
  for (int i = 0; i < n; ++i) out[i] = (x[i] - mean) * s;
}
}  // namespace

TEST_CASE("emulated rownorm layer and RMS norms: warp and block groups, registers and two-pass, odd and misaligned rows, "
          "NaN and inf") {
  // 64 threads x 8 items = 512 in a block's registers, 32 x 8 = 256 in a warp's; longer rows take
  // the two-pass path (Chan-combined chunks). Offset 1 misaligns the rows: scalar loads.
  for (int len : {1, 7, 33, 256, 333, 512, 1000, 2000, 4099})
    for (int offset : {0, 1})
      for (int centered = 0; centered < 2; ++centered)
        for (int block = 0; block < 2; ++block) {
          const int rows = 6;
          Buffer in(rows * len, offset), out(rows * len, offset);
          const auto r = random_floats(rows * len, 31 + len);
          // A large common offset: E[x^2] - E[x]^2 would lose every digit; Chan's combine keeps them.
          for (int i = 0; i < rows * len; ++i) in.data[i] = 1000.f + 4.f * r[i];
          if (len > 8) {
            in.data[3 * len + len / 3] = kNaN;
            in.data[4 * len + 5] = kInf;
          }
          const NormScale scale{float(len), 1e-5f};
          emu::launch({4, 1, 0}, 64, [&] {
            constexpr auto kLn = kiln::RowNormKind::kLayerNorm, kRms = kiln::RowNormKind::kRmsNorm;
            if (block && centered) kiln::rownorm_rows<64, 64, 8, kLn, float>(in.data, out.data, rows, len, Id{}, Id{}, scale);
            if (block && !centered) kiln::rownorm_rows<64, 64, 8, kRms, float>(in.data, out.data, rows, len, Id{}, Id{}, scale);
            if (!block && centered) kiln::rownorm_rows<64, 32, 8, kLn, float>(in.data, out.data, rows, len, Id{}, Id{}, scale);
            if (!block && !centered) kiln::rownorm_rows<64, 32, 8, kRms, float>(in.data, out.data, rows, len, Id{}, Id{}, scale);
          });
          INFO("len " << len << " offset " << offset << " centered " << centered << " block " << block);
          std::vector<double> ref;
          int bad = 0;
          for (int row = 0; row < rows; ++row) {
            ref_norm_row(in.data + row * len, len, centered, 1e-5, ref);
            for (int i = 0; i < len; ++i) {
              // Layer norm's outputs are O(1) (deviations from 1000 in f32 carry ~6e-5 absolute, the mean as much);
              // RMS norm's are ~1 with relative f32 rounding.
              const double tol = centered ? 2e-4 * std::max(1.0, std::fabs(ref[i])) : 1e-5 * std::fabs(ref[i]) + 1e-6;
              if (!close(out.data[row * len + i], ref[i], tol) && bad++ < 3)
                FAIL_CHECK("row " << row << " i " << i << ": " << out.data[row * len + i] << " vs " << ref[i]);
            }
          }
          CHECK(bad == 0);
        }
}

// rownorm_rows over a dyn length's class from kMinLen on, 64 threads of 8 items, kGroup a row.
template <int kGroup, long long kMinLen>
void rownorm_dyn_len(int kind, const float* in, float* out, int rows, int len, const NormScale& scale) {
  using kiln::RowNormKind;
  if (kind == 0) kiln::rownorm_rows<64, kGroup, 8, RowNormKind::kSoftmax, float, false, kMinLen>(in, out, rows, len, Id{}, Id{});
  if (kind == 1)
    kiln::rownorm_rows<64, kGroup, 8, RowNormKind::kLogSoftmax, float, false, kMinLen>(in, out, rows, len, Id{}, Id{});
  if (kind == 2)
    kiln::rownorm_rows<64, kGroup, 8, RowNormKind::kLayerNorm, float, false, kMinLen>(in, out, rows, len, Id{}, Id{}, scale);
  if (kind == 3)
    kiln::rownorm_rows<64, kGroup, 8, RowNormKind::kRmsNorm, float, false, kMinLen>(in, out, rows, len, Id{}, Id{}, scale);
}

TEST_CASE("emulated rownorm_rows over a dyn length (kDynMinLen): every row of the class in registers, whole vectors "
          "or not") {
  // [Note: dyn lengths]: no two-pass path beside the register one; rows that are not whole aligned
  // vectors (odd lengths, misaligned tensors) load an element at a time in the vectors' layout,
  // the last slot cut at the row's end. 64 x 8 = 512 elements in a block's registers, 32 x 8 = 256
  // in a warp's. Each length runs in the class from 1 and in a class from a lowest length below
  // it (257 for a block, 100 for a warp), whose slots below that length are not bound-checked.
  auto ref_softmax = [](const float* x, int n, bool log, std::vector<double>& out) {
    double m = -kInf, s = 0;
    for (int i = 0; i < n; ++i) m = std::max(m, double(x[i]));
    for (int i = 0; i < n; ++i) s += std::exp(double(x[i]) - m);
    out.resize(n);
    for (int i = 0; i < n; ++i) out[i] = log ? (x[i] - m) - std::log(s) : std::exp(x[i] - m) / s;
  };
  for (int block = 0; block < 2; ++block)
    for (int len : {1, 3, 4, 7, 100, 255, 256, 257, 333, 509, 512}) {
      if (!block && len > 256) continue;
      for (int high = 0; high < 2; ++high) {
      if (high && len < (block ? 257 : 100)) continue;
      for (int offset : {0, 1, 2})
        for (int kind = 0; kind < 4; ++kind) {
          const int rows = 5;
          Buffer in(rows * len, offset), out(rows * len, offset);
          const auto r = random_floats(rows * len, 7 + len + offset);
          for (int i = 0; i < rows * len; ++i) in.data[i] = (kind >= 2 ? 10.f : 0.f) + 3.f * r[i];
          const NormScale scale{float(len), 1e-5f};
          emu::launch({3, 1, 0}, 64, [&] {
            if (block) (high ? rownorm_dyn_len<64, 257> : rownorm_dyn_len<64, 1>)(kind, in.data, out.data, rows, len, scale);
            else (high ? rownorm_dyn_len<32, 100> : rownorm_dyn_len<32, 1>)(kind, in.data, out.data, rows, len, scale);
          });
          INFO("len " << len << " offset " << offset << " kind " << kind << " block " << block << " high " << high);
          std::vector<double> ref;
          int bad = 0;
          for (int row = 0; row < rows; ++row) {
            if (kind < 2) ref_softmax(in.data + row * len, len, kind == 1, ref);
            else ref_norm_row(in.data + row * len, len, kind == 2, 1e-5, ref);
            for (int i = 0; i < len; ++i)
              if (!close(out.data[row * len + i], ref[i], 2e-5 * std::max(1.0, std::fabs(ref[i]))) && bad++ < 3)
                FAIL_CHECK("row " << row << " i " << i << ": " << out.data[row * len + i] << " vs " << ref[i]);
          }
          CHECK(bad == 0);
          CHECK(out.data[rows * len] == -12345.f);   // nothing written past the end
          if (offset > 0) CHECK(out.data[-1] == -12345.f);   // nor before the start
        }
      }
    }
}

TEST_CASE("DynExtent divides every 32-bit index exactly, as the division it replaces") {
  // [Note: dividing by a dyn extent] in kiln/common.cuh: the same multiplier and shift on the
  // device (__umulhi, __clz); here the host formula. Divisors: small ones, powers of two and
  // their neighbours, large ones up to 2^31 - 1; numerators: the edges and random ones.
  std::vector<int> divisors;
  for (int d = 1; d <= 300; ++d) divisors.push_back(d);
  for (int k = 2; k < 31; ++k)
    for (int delta : {-1, 0, 1}) divisors.push_back((1 << k) + delta);
  for (int d : {1000, 1023, 4095, 65537, 1000003, 46341, 2147483646, 2147483647}) divisors.push_back(d);
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> any(0, 2147483647);
  long long wrong = 0, checked = 0;
  for (int d : divisors) {
    const kiln::DynExtent<int> e(d);
    std::vector<int> numerators{0, 1, d - 1, d, d < 2147483647 ? d + 1 : d, 2147483647, 2147483646, 2147483647 - d};
    for (int i = 0; i < 2000; ++i) numerators.push_back(any(gen));
    for (int q = 1; q < 50; ++q)
      if (static_cast<long long>(q) * d < 2147483647LL) numerators.push_back(q * d), numerators.push_back(q * d - 1);
    for (int n : numerators) {
      if (n < 0) continue;
      ++checked;
      wrong += (n / e) != n / d || (n % e) != n % d;
    }
    CHECK(static_cast<int>(e) == d);
  }
  CHECK(wrong == 0);
  MESSAGE(checked << " divisions checked");
  // 64-bit indices divide as usual.
  const kiln::DynExtent<long long> big(3000000000LL);
  CHECK((9000000001LL / big) == 3);
  CHECK((9000000001LL % big) == 1);
}
