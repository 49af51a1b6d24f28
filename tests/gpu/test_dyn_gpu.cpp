// `dyn` dims on the GPU (issue 20, [Note: dyn buckets] in generator/plan/plan.h): one executable
// per bucket serves every value in it, with the grid and the kernel's dims from each launch;
// an executable refuses a value outside its bucket and shapes that disagree. Values are small
// integers, so every result is exact in f32. The memory-bound family's dyn rows ([Note: dyn
// rows] in generator/plan/plan_memory.cpp) are checked against the float64 reference.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "dyn_attention_spec.h"
#include "dyn_conv_spatial_spec.h"
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

// Reductions, scans and row norms with a dyn batch B (rows), the values each is called at: every
// bucket, and both sides of each size class's thresholds on 132 SMs (softmax rows of 1000: 264
// and 1056; sums over rows of 4096 with 12 rows per B: 22 and 352; layernorm's means: 264 and
// 4224; sums and cumsums of rows of 2^18: 264; a cumsum along a middle axis of 65536 with 8 columns:
// 132, 1056 and 8448; reductions down a middle axis, split in classes 8 times apart below the rows
// that fill the GPU unsplit, one per reduce_outer variant: 16-byte columns (colsum: 2, 9, 67, 529),
// 4-byte columns (colsum5: 9, 67, 529, 4225), the 16-byte whole-row sweep (colmax_v4: 6, 45, 353)
// and the 2-byte whole-row sweep (colmean_h: 8, 60, 476)).
constexpr const char* kRowsSpec = R"(
op sm {
  dims dyn B, N = 1000
  in  x: f32[B, N]
  out y = softmax(x, axis=-1)
}
op rsum {
  dims dyn B, S = 12, N = 4096
  in  x: f32[B, S, N]
  out y = sum(x, axis=2) * 2.0
}
op csum {
  dims dyn B, N = 3000
  in  x: f32[B, N]
  out y = cumsum(x, axis=1)
}
op colsum {
  dims dyn B, R = 64, C = 1000
  in  x: f32[B, R, C]
  out y = sum(x, axis=1)
}
op colsum5 {
  dims dyn B, R = 20000, C = 5
  in  x: f32[B, R, C]
  out y = sum(x, axis=1) * 0.5
}
op colmax_v4 {
  dims dyn B, R = 512, C = 1001
  in  x: f32[B, R, C]
  out y = max(x, axis=1)
}
op colmean_h {
  dims dyn B, R = 1024, C = 700
  in  x: f16[B, R, C]
  out y = mean(x, axis=1)
}
op cs_strided {
  dims dyn B, L = 100, C = 300
  in  x: f32[B, L, C]
  out y = cumsum(x, axis=1)
}
op sm_strided {
  dims dyn B, L = 100, C = 300
  in  x: f32[B, L, C]
  out y = log_softmax(x, axis=1)
}
op layernorm {
  const eps: f32 = 1e-5
  dims dyn B, N = 4096
  in  x: f32[B, N]
  in  g: f32[B]
  let mu = mean(x, axis=1, keepdims=true)
  let d = x - mu
  let var = mean(d * d, axis=1, keepdims=true)
  out y = d * rsqrt(var + eps)
  out s = max(x, axis=1) * g
}
op lsum {
  dims dyn B, N = 262144
  in  x: f32[B, N]
  out y = sum(x, axis=1)
}
op lcs {
  dims dyn B, N = 262144
  in  x: f32[B, N]
  out y = cumsum(x, axis=1)
}
op cs_mid {
  dims dyn B, M = 65536, N = 8
  in  x: f32[B, M, N]
  out y = cumsum(x, axis=1, exclusive=true)
}
)";

const std::map<std::string, std::vector<std::int64_t>>& rows_values() {
  static const std::map<std::string, std::vector<std::int64_t>> values{
      {"sm", {1, 7, 16, 263, 264, 300, 1055, 1056, 1057, 5000}},
      {"rsum", {1, 5, 16, 351, 352, 353}},
      {"csum", {1, 7, 16, 300, 1000}},
      {"colsum", {1, 2, 3, 8, 9, 16, 40, 66, 67, 528, 529, 600}},
      {"colsum5", {1, 8, 9, 66, 67, 528, 529, 700}},
      {"colmax_v4", {1, 5, 6, 44, 45, 352, 353}},
      {"colmean_h", {1, 7, 8, 59, 60, 100}},
      {"cs_strided", {1, 5, 16, 33}},
      {"sm_strided", {1, 5, 16, 33}},
      {"layernorm", {1, 7, 16, 300, 4223, 4224, 4225}},
      {"lsum", {1, 7, 16, 263, 264, 300}},   // split under 264 rows (reduce_finish), a block per row above
      {"lcs", {1, 7, 16, 263, 264, 300}},    // the look-back scan under 264 rows
      {"cs_mid", {1, 4, 16, 131, 132, 140}}, // chunked strided scans in classes from 132 and 1056 rows
  };
  return values;
}

}  // namespace

namespace {

// An op's dyn dim and the values it is called at.
struct DynValues {
  std::string dim;
  std::vector<std::int64_t> values;
  std::string dim2 = "";              // a second dyn dim, its value paired with each of `values`
  std::vector<std::int64_t> values2 = {};
};

// Calls each op of `spec` at each of its values of its dyn dim through the Op call path (one
// executable per bucket and size class), outputs poisoned, against the float64 reference; then
// checks one NVRTC compile per distinct kernel source, fewer than one per value. With
// `computed_extents` (ops whose outputs have extents computed from the dyn dim: a pool's, a pad's,
// a concat's), also that the call path made one executable (a plan and an emit) per key (the dyn
// dim's class, in the plan's first line, and its key code: bucket, and a row length's alignment),
// not one per value: the Op keys those extents by nothing, not by their values.
// With `fused_oracle` (16-bit attention: [Note: the oracle of a fused 16-bit norm] in
// runtime/op_check.cpp), the reference is the graph the planner fused for sm_90a.
void check_dyn_ops(const char* spec_text, const char* file, const char* label,
                   const std::map<std::string, DynValues>& values_of, bool computed_extents = false,
                   bool fused_oracle = false) {
  Runtime rt(without_disk_cache());
  Program program = rt.load_string(spec_text, file);
  const SpecFile spec = parse_spec(spec_text, file);
  for (const auto& entry : values_of) {
    const std::string& name = entry.first;   // not a structured binding: CAPTURE's lambda reads it
    const auto& values = entry.second.values;
    const std::string& dim = entry.second.dim;
    const Op op = program.op(name);
    const auto before = rt.stats().compiles;
    const auto hits_before = rt.stats().memory_hits;
    std::set<std::string> sources, keys;
    std::size_t units = 0;   // the executables' units, over every value
    const std::string& dim2 = entry.second.dim2;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::int64_t v = values[i];
      const std::int64_t v2 = dim2.empty() ? 0 : entry.second.values2.at(i);
      CAPTURE(name);
      CAPTURE(v);
      CAPTURE(v2);
      const auto ir = check_op(spec, name);
      std::map<std::string, ir::DimValue> binding{{dim, {v, "test"}}};
      std::map<std::string, std::int64_t> dims{{dim, v}};
      if (!dim2.empty()) binding[dim2] = {v2, "test"}, dims[dim2] = v2;
      const auto bound = std::make_shared<const ir::BoundIr>(ir::bind(ir, binding));
      OpCheckOptions options;
      options.seed = static_cast<std::uint64_t>(v);
      DeviceCase c = make_device_case(*bound, options);
      c.poison();
      op(nullptr, c.args);   // the call path: one executable per bucket and size class
      synchronize();
      bool ok = true;
      // tf32 contractions are held to tf32's accuracy (the op's precision="tf32").
      std::vector<std::string> fusions;
      const auto oracle = fused_oracle ? fuse_compositions(bound, Target::for_arch("sm_90a"), fusions) : bound;
      const auto outputs = compare_outputs(*ir, c.outputs(*bound), reference_outputs(*oracle, c.inputs),
                                           runs_tf32(*ir, rt.options().precision), &ok);
      for (std::size_t o = 0; o < outputs.size(); ++o)
        std::printf("%s %s %s=%lld%s output %zu: %s, max rel error %.3g, %lld mismatches%s%s\n", label, name.c_str(),
                    dim.c_str(), static_cast<long long>(v),
                    dim2.empty() ? "" : fmt::format(" {}={}", dim2, v2).c_str(), o, outputs[o].ok ? "ok" : "WRONG",
                    outputs[o].max_rel_error,
                    static_cast<long long>(outputs[o].mismatches), outputs[o].detail.empty() ? "" : ": ",
                    outputs[o].detail.c_str());
      CHECK(ok);
      // Each kernel's unit (the executable's source is the units one after another).
      const Executable ex = op.specialize(dims);
      const std::string plan = ex.plan_text();
      // The call path's key: the plan's (bucket, class; values stripped) and the value's key code,
      // which for a row length in the bucket `general` also holds its alignment (dyn_key_code).
      keys.insert(std::regex_replace(plan.substr(0, plan.find('\n')), std::regex("=[0-9]+ \\(dyn"), " (dyn") +
                  fmt::format(" code {} {}", dyn_key_code(v, dyn_row_lengths(*ir).count(dim) > 0),
                              dim2.empty() ? 0 : dyn_key_code(v2, dyn_row_lengths(*ir).count(dim2) > 0)));
      const std::string all = ex.source();
      const std::string marker = "// Generated by kiln";
      for (std::size_t at = all.find(marker); at != std::string::npos; ++units) {
        const std::size_t next = all.find(marker, at + 1);
        sources.insert(all.substr(at, next == std::string::npos ? std::string::npos : next - at));
        at = next;
      }
    }
    const auto compiles = rt.stats().compiles - before;
    std::printf("%s %s: %zu values, %zu distinct kernel sources, %llu NVRTC compiles\n", label, name.c_str(),
                values.size(), sources.size(), static_cast<unsigned long long>(compiles));
    CHECK(compiles == sources.size());   // one compile per distinct kernel source; values of a class share it
    CHECK(compiles < units);   // fewer than one compile per value's units
    const auto made = values.size() - (rt.stats().memory_hits - hits_before);   // calls that planned and emitted
    std::printf("%s %s: %llu executables made by the call path, %zu keys\n", label, name.c_str(),
                static_cast<unsigned long long>(made), keys.size());
    if (computed_extents) CHECK(made == keys.size());
  }
}

// Matmuls with a dyn M or a dyn outermost batch dim ([Note: dyn matmul] in
// generator/plan/plan_contraction.cpp): the TMA engine (bf16, f16, tf32 a·b under swap_ab: the
// dyn M is the engine's N), the mma.sync Gemm and its split-K (3xTF32 with N = 256: no TMA), a batched product
// with a residual, weights broadcast over two batch dims, and a softmax after the product (the
// row-norm family with dyn rows). Values: the bucket one (a static plan), and both sides of
// class thresholds on 132 SMs (lin_bf16: 65, 1025, 2049, 8321; mm_tf32: 2689; lin_f32: 129, 705,
// 1025, 4097; bmm_f16: 17, 34, 132; bmm_bcast: 33; lin_softmax: the row norm's 264, 1056).
constexpr const char* kMatmulSpec = R"(
op lin_bf16 {
  dims dyn M, N = 1000, K = 512
  in  x: bf16[M, K]
  in  w: bf16[N, K]
  in  bias: bf16[N]
  out y = relu(matmul(x, transpose(w)) + bias)
}
op mm_tf32 {
  dims dyn M, N = 768, K = 200
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = matmul(a, b, precision="tf32")
}
op lin_f32 {
  dims dyn M, N = 256, K = 2048
  in  x: f32[M, K]
  in  w: f32[N, K]
  out y = matmul(x, transpose(w))
}
op bmm_f16 {
  dims dyn B, M = 200, N = 136, K = 72
  in  a: f16[B, M, K]
  in  b: f16[B, K, N]
  in  r: f16[B, M, N]
  out c = matmul(a, b) + r
}
op bmm_bcast {
  dims dyn B, H = 4, M = 64, N = 96, K = 64
  in  a: bf16[B, H, M, K]
  in  w: bf16[K, N]
  out c = matmul(a, w)
}
op lin_softmax {
  dims dyn M, N = 1000, K = 256
  in  x: f32[M, K]
  in  w: f32[N, K]
  out y = softmax(matmul(x, transpose(w), precision="tf32"), axis=-1)
}
)";

// Matmuls with a dyn N or K, or a dyn M that is A's row length ([Note: dyn matmul]), each in an
// unbatched product: N as k-major weights' rows (a bias and ReLU after), as B's and a residual's
// row length, under the TMA engine's swap_ab (tf32 a·b) and in 3xTF32 on the mma.sync Gemm (split-K
// in its bounded classes); K in bf16, f16 with a bias, 3xTF32 (split-K for a long K in any class)
// and tf32 aᵀ·bᵀ; M of a transposed f16 A. Values: the bucket one (a static plan), multiples of
// 16 (the TMA engine, 16-byte rows) and the bucket general on both sides of its row-alignment
// split ([Note: dyn row alignment] in generator/plan/plan.h: 16-byte rows, or element by element
// with no map over the dyn row length) across the classes.
constexpr const char* kMatmulNKSpec = R"(
op lin_n_bf16 {
  dims M = 333, dyn N, K = 512
  in  x: bf16[M, K]
  in  w: bf16[N, K]
  in  bias: bf16[N]
  out y = relu(matmul(x, transpose(w)) + bias)
}
op mm_n_f16 {
  dims M = 300, K = 264, dyn N
  in  a: f16[M, K]
  in  b: f16[K, N]
  in  r: f16[M, N]
  out c = matmul(a, b) + r
}
op mm_n_tf32 {
  dims M = 640, K = 200, dyn N
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = matmul(a, b, precision="tf32")
}
op mm_n_f32 {
  dims M = 128, K = 1000, dyn N
  in  a: f32[M, K]
  in  b: f32[K, N]
  out c = matmul(a, b)
}
op mm_k_bf16 {
  dims M = 256, N = 384, dyn K
  in  a: bf16[M, K]
  in  b: bf16[K, N]
  out c = matmul(a, b)
}
op lin_k_f16 {
  dims M = 200, N = 264, dyn K
  in  x: f16[M, K]
  in  w: f16[N, K]
  in  bias: f16[N]
  out y = matmul(x, transpose(w)) + bias
}
op lin_k_f32 {
  dims M = 96, N = 256, dyn K
  in  x: f32[M, K]
  in  w: f32[N, K]
  out y = matmul(x, transpose(w))
}
op mm_k_tt {
  dims M = 200, N = 136, dyn K
  in  a: f32[K, M]
  in  b: f32[N, K]
  out c = matmul(transpose(a), transpose(b), precision="tf32")
}
op mm_m_at {
  dims dyn M, N = 192, K = 128
  in  a: f16[K, M]
  in  b: f16[K, N]
  out c = matmul(transpose(a), b)
}
)";

// Batched products with a dyn M, N or K ([Note: dyn matmul]): the batch strides that span the
// extent are read at run time (the mma.sync templates compute them, the TMA maps' scale with the
// extent). M in bf16 with a batched f32 residual (the epilogue indexes it by the dyn M), M of tf32
// a·b (the engine's N under swap_ab), N of
// k-major weights in tf32 and of a row-major B in 3xTF32 with a residual, K split into slices in
// 3xTF32 and in f16 with a transposed A, M as a transposed A's row length, and M under weights
// and a bias broadcast over two batch dims. Weights shared by every batch fold the batches into M
// ([Note: folded batches] in generator/plan/plan_contraction.cpp): bmm_m_bcast, and linear layers
// over [B, S, D] tokens with a dyn S (a per-position [S, N] and a per-batch [B, 1, N] operand: the
// epilogue splits a row by the dyn S) or a dyn B. Values: the bucket one, multiples of 16 (tensor
// maps), 16-byte rows and odd extents, across size classes.
constexpr const char* kBatchedSpec = R"(
op bmm_m_bf16 {
  dims B = 3, dyn M, K = 192, N = 136
  in  a: bf16[B, M, K]
  in  b: bf16[B, K, N]
  in  r: f32[B, M, N]
  out c = f32(matmul(a, b)) + r
}
op bmm_n_tf32 {
  dims B = 2, M = 80, K = 96, dyn N
  in  a: f32[B, M, K]
  in  w: f32[B, N, K]
  out c = relu(matmul(a, transpose(w), precision="tf32"))
}
op bmm_m_tf32 {
  dims B = 2, dyn M, K = 96, N = 128
  in  a: f32[B, M, K]
  in  b: f32[B, K, N]
  out c = matmul(a, b, precision="tf32")
}
op bmm_n_f32 {
  dims B = 2, M = 48, K = 200, dyn N
  in  a: f32[B, M, K]
  in  b: f32[B, K, N]
  in  r: f32[B, M, N]
  out c = matmul(a, b) - r
}
op bmm_k_f32 {
  dims B = 3, M = 40, dyn K, N = 72
  in  a: f32[B, M, K]
  in  b: f32[B, K, N]
  out c = matmul(a, b)
}
op bmm_k_f16 {
  dims B = 4, M = 130, dyn K, N = 72
  in  a: f16[B, K, M]
  in  b: f16[B, K, N]
  out c = matmul(transpose(a), b)
}
op bmm_m_at {
  dims B = 2, dyn M, K = 64, N = 128
  in  a: bf16[B, K, M]
  in  b: bf16[B, K, N]
  out c = matmul(transpose(a), b)
}
op bmm_m_bcast {
  dims B = 2, H = 3, dyn M, K = 64, N = 96
  in  a: f16[B, H, M, K]
  in  w: f16[K, N]
  in  bias: f16[N]
  out c = matmul(a, w) + bias
}
op tokens_s {
  dims B = 3, dyn S, D = 64, N = 96
  in  x: bf16[B, S, D]
  in  w: bf16[N, D]
  in  pos: f32[S, N]
  in  g: f32[B, 1, N]
  out y = f32(matmul(x, transpose(w))) * g + pos
}
op tokens_b {
  dims dyn B, S = 5, D = 128, N = 64
  in  x: f32[B, S, D]
  in  w: f32[N, D]
  in  pos: f32[S, N]
  out y = relu(matmul(x, transpose(w), precision="tf32") + pos)
}
)";

// A dyn batch and a dyn sequence length together ([Note: size classes of a product] in
// generator/plan/plan.h): the batches fold into M, whose two dyn factors are classed by B x S. The
// pairs cross buckets (either factor 1) and classes, and repeat products in other shapes.
constexpr const char* kTokensSpec = R"(
op tokens_bs {
  dims dyn B, dyn S, D = 256, N = 320
  in  x: bf16[B, S, D]
  in  w: bf16[N, D]
  in  pos: f32[S, N]
  in  g: f32[B, 1, N]
  out y = f32(matmul(x, transpose(w))) * g + pos
}
op tokens_bhs {
  dims dyn B, H = 3, dyn S, D = 64, N = 72
  in  x: f32[B, H, S, D]
  in  w: f32[D, N]
  in  hb: f32[H, 1, N]
  out y = relu(matmul(x, w, precision="tf32") + hb)
}
)";

// Convs with a dyn batch ([Note: dyn conv] in generator/plan/plan_contraction.cpp). On sm_90a:
// conv_bias takes WgConvNchw under 73 images and the TMA engine (3xTF32, its copy of x sized by
// the launch) from 73; conv_tma in tf32 the TMA engine from 6; ConvNchw f16 with a residual side
// operand, a grouped bf16 conv1d, a strided transposed conv3d; a stride-1 transposed conv (the
// TMA engine as a forward conv from 7); DepthwiseDirect; NHWC on the TMA engine, x read in place
// and copied image by image (C = 10); big_image crosses the streaming-store class (from 11).
// Pools with dyn planes ([Note: dyn pool planes] in generator/plan/plan_pool.cpp): a max pool with
// a prologue and an epilogue, an f16 3-d average pool. Values: the bucket one (a static plan) and
// both sides of the classes.
constexpr const char* kConvSpec = R"(
op conv_bias {
  dims dyn N, C = 32, H = 20, W = 20, K = 64
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  in  b: f32[K, 1, 1]
  out y = relu(conv2d(x, w, padding=1) + b)
}
op conv_tf32 {
  dims dyn N, C = 16, H = 33, W = 17, K = 40
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 5]
  out y = conv2d(x, w, stride=[2, 1], padding=[1, 2], precision="tf32")
}
op conv_tma {
  dims dyn N, C = 32, H = 64, W = 60, K = 96
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  in  b: f32[K, 1, 1]
  out y = conv2d(x, w, padding=1, precision="tf32") * 0.5 + b
}
op nhwc {
  dims dyn N, H = 40, W = 40, C = 64, K = 64
  in  x: f32[N, H, W, C]
  in  w: f32[K, C, 3, 3]
  in  b: f32[K]
  out y = relu(conv2d(x, w, padding=[1, 1], layout="NHWC") + b)
}
op nhwc_c10 {
  dims dyn N, H = 50, W = 45, C = 10, K = 48
  in  x: f32[N, H, W, C]
  in  w: f32[K, C, 3, 3]
  out y = conv2d(x, w, stride=2, padding=[1, 1], layout="NHWC", precision="tf32")
}
op conv_res_f16 {
  dims dyn N, C = 24, H = 18, W = 18, K = 48
  in  x: f16[N, C, H, W]
  in  w: f16[K, C, 3, 3]
  in  r: f16[N, K, H, W]
  out y = conv2d(x, w, padding=1) + r
}
op conv1d_g {
  dims dyn N, C = 16, L = 100, K = 32
  in  x: bf16[N, C, L]
  in  w: bf16[K, 4, 5]
  out y = conv1d(x, w, groups=4, stride=2)
}
op conv3d_t {
  dims dyn N, C = 8, D = 5, H = 7, W = 9, K = 12
  in  x: f32[N, C, D, H, W]
  in  w: f32[C, K, 3, 3, 3]
  out y = conv_transpose3d(x, w, stride=2, padding=1, output_padding=1)
}
op convt_s1 {
  dims dyn N, C = 64, H = 48, W = 48, K = 64
  in  x: f32[N, C, H, W]
  in  w: f32[C, K, 3, 3]
  out y = conv_transpose2d(x, w, padding=1, precision="tf32")
}
op depthwise {
  dims dyn N, C = 32, H = 30, W = 30
  in  x: f32[N, C, H, W]
  in  w: f32[C, 1, 3, 3]
  out y = conv2d(x, w, padding=1, groups=32)
}
op big_image {
  dims dyn N, C = 4, H = 256, W = 256, K = 16
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  out y = conv2d(x, w, padding=1, precision="tf32")
}
op max_pool {
  dims dyn N, C = 16, H = 64, W = 64
  in  x: f32[N, C, H, W]
  in  s: f32[C, 1, 1]
  out y = relu(max_pool2d(x * s, 3, stride=2, padding=1))
}
op avg_pool {
  dims dyn B, C = 8, D = 10, H = 20, W = 20
  in  x: f16[B, C, D, H, W]
  out y = avg_pool3d(x, 3, stride=2, padding=1)
}
)";

// Reductions, scans and row norms over a dyn length L ([Note: dyn lengths] in
// generator/plan/plan_memory.cpp): sums over contiguous rows (a warp per row up to 2048, a block
// above, never split), with a prologue reading w[L] and an epilogue; an f16 argmax; means and sums
// down a middle axis (reduce_outer, 4-byte and 16-byte columns); a max over two axes (H dyn, W
// = 4); softmax over rows that fill the GPU with warps (classes doubling from 128 to 16384, each
// planned at its longest row; past 16384 the block's two passes), an f16 log_softmax with a bias
// over L on few rows (a block per row), a strided softmax; scans along rows (a block per row, the
// specialized plan's look-back at 10^5) and down a middle axis (one pass); a layer norm written as
// a composition (not fused: its reductions over L); and both rows and length dyn. Values: the
// bucket one, both sides of class thresholds, odd lengths (misaligned rows).
constexpr const char* kLenSpec = R"(
op rs {
  dims B = 64, dyn L
  in  x: f32[B, L]
  out y = sum(x, axis=1) * 2.0
}
op rs_fused {
  dims B = 64, dyn L
  in  x: f32[B, L]
  in  w: f32[L]
  in  g: f32[B]
  out y = sum(x * w, axis=1) * g
}
op amax {
  dims B = 300, dyn L
  in  x: f16[B, L]
  out y = argmax(x, axis=1)
}
op colmean {
  dims B = 16, dyn L, C = 7
  in  x: f32[B, L, C]
  out y = mean(x, axis=1)
}
op colsum_v {
  dims B = 4, dyn L, C = 256
  in  x: f32[B, L, C]
  out y = sum(x, axis=1)
}
op hw {
  dims B = 32, dyn L, W = 4
  in  x: f32[B, L, W]
  out y = max(x, axis=[1, 2])
}
op sm {
  dims B = 1200, dyn L
  in  x: f32[B, L]
  out y = softmax(x, axis=-1)
}
op sm_few {
  dims B = 16, dyn L
  in  x: f16[B, L]
  in  bias: f16[L]
  out y = log_softmax(x + bias, axis=-1)
}
op sm_strided {
  dims B = 8, dyn L, C = 300
  in  x: f32[B, L, C]
  out y = softmax(x, axis=1)
}
op cs {
  dims B = 100, dyn L
  in  x: f32[B, L]
  out y = cumsum(x, axis=1, exclusive=true)
}
op cs_few {
  dims B = 2, dyn L
  in  x: f32[B, L]
  out y = cumsum(x, axis=1, reverse=true)
}
op cmax_few {
  dims B = 3, dyn L
  in  x: f16[B, L]
  out y = cummax(x, axis=1)
}
op cs_strided {
  dims B = 4, dyn L, C = 100
  in  x: f32[B, L, C]
  out y = cumsum(x, axis=1)
}
op layernorm {
  const eps: f32 = 1e-5
  dims B = 64, dyn L
  in  x: f32[B, L]
  let mu = mean(x, axis=1, keepdims=true)
  let d = x - mu
  let var = mean(d * d, axis=1, keepdims=true)
  out y = d * rsqrt(var + eps)
}
op ln_many {
  dims B = 2048, dyn L
  in  x: f32[B, L]
  in  g: f32[L]
  in  b: f32[L]
  let d = x - mean(x, axis=1, keepdims=true)
  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5) * g + b
}
op rms_many {
  dims B = 300, dyn L
  in  x: f16[B, L]
  out y = x * rsqrt(mean(x * x, axis=1, keepdims=true) + 1e-6)
}
op both {
  dims dyn B = 3000, dyn L
  in  x: f32[B, L]
  out y = softmax(x, axis=1)
}
)";

}  // namespace

// A row operand broadcast over a dyn innermost extent ([Note: row vectors checked at launch] in
// templates/kiln/config/elementwise.h): in the bucket "general" one kernel takes row vectors where
// a launch's N is a multiple of the vector width (4 floats, 8 halves) and scalars elsewhere.
constexpr const char* kBiasRowsSpec = R"(
op bias_f32 {
  dims B = 6, dyn N = 1000
  in  x: f32[B, N]
  in  b: f32[N]
  in  s: f32[B, 1]
  out y = relu(x + b) * s
}
op bias_f16 {
  dims B = 5, dyn N = 1000
  in  x: f16[B, N]
  in  b: f16[N]
  out y = x * b + b
}
)";

TEST_CASE("gpu: a dyn row bias takes vectors where each launch's extent allows, against the float64 reference") {
  KILN_REQUIRE_GPU();
  // 1000, 4100: multiples of 4 (f32 vectors); 1002: of 2 only; 1001, 7: odd; 1004: of 4, not of 8
  // (f16 scalars); 1008: of 8, not 16 (f16 vectors); 16 and 4096: the bucket "multiple of 16"; 1.
  const std::vector<std::int64_t> values = {1000, 1001, 1002, 7, 4100, 1004, 1008, 16, 4096, 1};
  check_dyn_ops(kBiasRowsSpec, "bias.kiln", "dyn row bias", {{"bias_f32", {"N", values}}, {"bias_f16", {"N", values}}});
}

TEST_CASE("gpu: dyn rows of reductions, scans and row norms, against the float64 reference") {
  KILN_REQUIRE_GPU();
  std::map<std::string, DynValues> values;
  for (const auto& entry : rows_values()) values[entry.first] = {"B", entry.second};
  check_dyn_ops(kRowsSpec, "rows.kiln", "dyn rows", values);
}

TEST_CASE("gpu: dyn matmuls (M, batches) against the float64 reference, one compile per size class") {
  KILN_REQUIRE_GPU();
  // M (or B): 1 (the bucket one: a static plan), and values on both sides of class thresholds.
  check_dyn_ops(kMatmulSpec, "mm.kiln", "dyn matmul",
                {{"lin_bf16", {"M", {1, 3, 64, 65, 1000, 1024, 1025, 2049, 3001}}},
                 {"mm_tf32", {"M", {1, 7, 200, 2688, 2689, 3000}}},
                 {"lin_f32", {"M", {1, 2, 128, 129, 704, 705, 1024, 1025, 2100}}},
                 {"bmm_f16", {"B", {1, 3, 16, 17, 33, 34, 131, 132, 140}}},
                 {"bmm_bcast", {"B", {1, 2, 32, 33, 200}}},
                 {"lin_softmax", {"M", {1, 5, 263, 264, 1000, 2049}}}});
}

TEST_CASE("gpu: dyn matmul N and K against the float64 reference, one compile per bucket and size class") {
  KILN_REQUIRE_GPU();
  // (Multiples of 8 but not 16, such as 1000 and 1032, are the bucket general's aligned side.)
  const std::vector<std::int64_t> n{1, 3, 16, 17, 100, 1000, 1001, 1008, 1032, 2689, 3344, 4099, 4100};
  const std::vector<std::int64_t> k{1, 7, 16, 40, 1000, 1009, 1024, 1032, 1100, 4096, 20000, 20001, 20008};
  check_dyn_ops(kMatmulNKSpec, "mmnk.kiln", "dyn matmul",
                {{"lin_n_bf16", {"N", n}}, {"mm_n_f16", {"N", n}}, {"mm_n_tf32", {"N", n}}, {"mm_n_f32", {"N", n}},
                 {"mm_k_bf16", {"K", k}}, {"lin_k_f16", {"K", k}}, {"lin_k_f32", {"K", k}}, {"mm_k_tt", {"K", k}},
                 {"mm_m_at", {"M", {1, 5, 16, 24, 64, 65, 80, 1000, 1008, 1032, 4224, 4225}}}});
}

TEST_CASE("gpu: dyn M, N and K of batched matmuls against the float64 reference, one compile per bucket and class") {
  KILN_REQUIRE_GPU();
  const std::vector<std::int64_t> mn{1, 3, 16, 17, 64, 65, 100, 1000, 1001, 1008, 1025, 2049};
  const std::vector<std::int64_t> k{1, 7, 16, 40, 1000, 1009, 1024, 4096, 20001, 20008};
  check_dyn_ops(kBatchedSpec, "bmm.kiln", "dyn batched matmul",
                {{"bmm_m_bf16", {"M", mn}}, {"bmm_m_tf32", {"M", mn}}, {"bmm_n_tf32", {"N", mn}},
                 {"bmm_n_f32", {"N", mn}},
                 {"bmm_k_f32", {"K", k}}, {"bmm_k_f16", {"K", k}}, {"bmm_m_at", {"M", mn}},
                 {"bmm_m_bcast", {"M", mn}}, {"tokens_s", {"S", mn}},
                 {"tokens_b", {"B", {1, 2, 3, 16, 17, 100, 1000, 1001}}}});
}

TEST_CASE("gpu: a dyn batch and a dyn M of folded batches against the float64 reference, one compile per class") {
  KILN_REQUIRE_GPU();
  const std::vector<std::int64_t> b{1, 2, 3, 4, 8, 16, 17, 5, 64, 2, 1, 33};
  const std::vector<std::int64_t> s{1, 1, 7, 100, 50, 25, 1, 13, 16, 1000, 300, 129};
  check_dyn_ops(kTokensSpec, "tokens.kiln", "dyn folded matmul",
                {{"tokens_bs", {"B", b, "S", s}}, {"tokens_bhs", {"B", b, "S", s}}});
}

TEST_CASE("gpu: dyn conv batches and pool planes against the float64 reference, one compile per size class") {
  KILN_REQUIRE_GPU();
  check_dyn_ops(kConvSpec, "conv.kiln", "dyn conv",
                {{"conv_bias", {"N", {1, 2, 16, 33, 72, 73, 80}}},
                 {"conv_tf32", {"N", {1, 5, 16, 19}}},
                 {"conv_tma", {"N", {1, 2, 5, 6, 9}}},
                 {"nhwc", {"N", {1, 2, 16, 23}}},
                 {"nhwc_c10", {"N", {1, 3, 16, 40}}},
                 {"conv_res_f16", {"N", {1, 3, 16, 21}}},
                 {"conv1d_g", {"N", {1, 7, 32, 200}}},
                 {"conv3d_t", {"N", {1, 2, 16, 3}}},
                 {"convt_s1", {"N", {1, 2, 6, 7, 9}}},
                 {"depthwise", {"N", {1, 6, 16, 37}}},
                 {"big_image", {"N", {1, 2, 10, 11, 12}}},
                 {"max_pool", {"N", {1, 3, 16, 50}}},
                 {"avg_pool", {"B", {1, 2, 16, 33}}}});
}

// Dyn pooled axes ([Note: dyn pooled axes] in plan_pool.cpp): one dim each (a square image's
// side S for two axes), planes static or dyn, fused epilogues that read the output's coordinates.
constexpr const char* kPoolAxesSpec = R"(
op max_sq {
  dims N = 2, C = 16, dyn S = 64
  in  x: f32[N, C, S, S]
  in  s: f32[C, 1, 1]
  out y = relu(max_pool2d(x * s, 3, stride=2, padding=1)) + s
}
op max_rows_w {
  dims N = 2, C = 3, H = 40, dyn W = 64
  in  x: f32[N, C, H, W]
  out y = max_pool2d(x, 4, stride=1, padding=1)
}
op max_rows_h {
  dims N = 2, C = 3, dyn H = 40, W = 64
  in  x: f32[N, C, H, W]
  out y = max_pool2d(x, 4, stride=1, padding=1)
}
op avg_ceil_f16 {
  dims dyn N = 2, C = 5, dyn S = 33
  in  x: f16[N, C, S, S]
  out y = avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=true, count_include_pad=false)
}
op max1d_dil {
  dims N = 2, C = 3, dyn L = 4099
  in  x: f32[N, C, L]
  out y = max_pool1d(x, 4, stride=1, padding=2, dilation=3)
}
op avg3d {
  dims N = 1, C = 2, dyn D = 10, H = 12, W = 16
  in  x: f32[N, C, D, H, W]
  out y = avg_pool3d(x, 2)
}
op planes_and_w_f64 {
  dims dyn S = 100
  in  x: f64[S, S]
  out y = max_pool1d(x, 2)
}
)";

TEST_CASE("gpu: dyn pooled axes against the float64 reference, one compile per bucket and size class") {
  KILN_REQUIRE_GPU();
  // Values on both sides of the classes (an output extent of 2, 4, 8), odd, multiples of 4 and of 16.
  const std::vector<std::int64_t> side{1, 2, 3, 5, 7, 8, 14, 15, 16, 17, 33, 61, 64, 100, 224};
  check_dyn_ops(kPoolAxesSpec, "pool_axes.kiln", "dyn pooled axes",
                {{"max_sq", {"S", side}},
                 {"max_rows_w", {"W", {3, 4, 5, 6, 7, 9, 10, 16, 17, 64, 65, 100, 1000}}},
                 {"max_rows_h", {"H", {3, 4, 5, 6, 7, 9, 10, 16, 17, 64, 65, 100}}},
                 {"avg_ceil_f16", {"S", {1, 2, 3, 4, 5, 8, 15, 16, 17, 32, 33, 99}}},
                 {"max1d_dil", {"L", {6, 7, 8, 11, 16, 17, 100, 4096, 4099, 65536}}},
                 {"avg3d", {"D", {2, 3, 4, 5, 8, 15, 16, 17, 33}}},
                 {"planes_and_w_f64", {"S", {2, 3, 4, 5, 8, 9, 16, 17, 100, 128}}}},
                /*computed_extents=*/true);
}

// Dyn spatial extents of convs ([Note: dyn conv spatial extents] in plan_contraction.cpp): the ops
// of tests/dyn_conv_spatial_spec.h (on the TMA engine, WgConvNchw, ConvNchw, DepthwiseDirect).
// Values: odd, multiples of 4 and of 16 (the TMA engine's copy of x by 16-byte vectors), tiny and
// past a CTA's pixel tile; the bucket one (a static plan) for the square side.
TEST_CASE("gpu: dyn spatial extents of convs against the float64 reference, one compile per bucket") {
  KILN_REQUIRE_GPU();
  const std::vector<std::int64_t> h{3, 4, 5, 16, 17, 31, 64, 97, 130, 224};
  const std::vector<std::int64_t> w{3, 7, 16, 5, 33, 64, 31, 100, 127, 224};
  check_dyn_ops(kiln_test::kDynConvSpatialSpec, "conv_spatial.kiln", "dyn conv spatial",
                {{"conv_hw", {"H", h, "W", w}},
                 {"conv_s2_f16", {"S", {1, 2, 3, 16, 17, 33, 64, 101, 250}}},
                 {"conv_res", {"H", {3, 4, 9, 16, 17, 100, 513}}},
                 {"grouped", {"H", h, "W", w}},
                 {"depthwise", {"H", h, "W", w}},
                 {"dw_nhwc", {"H", h, "W", w}},
                 {"conv1d_bf16", {"L", {13, 16, 17, 100, 1000, 4099}}},
                 // (no padding, dilation 2: H and W from 5)
                 {"valid_tf32", {"H", {5, 6, 9, 16, 17, 40, 131, 300}, "W", {5, 8, 7, 21, 16, 64, 129, 301}}},
                 {"conv1d_tf32", {"L", {5, 6, 8, 13, 100, 769, 4099, 20000}}},
                 {"tma_tf32", {"H", h, "W", w}},
                 // (a 1-d conv with 64 channels on the TMA engine: L's classes from 130 and 4096)
                 {"conv1d_tma", {"L", {1, 2, 7, 129, 130, 1000, 4095, 4096, 20001}}},
                 // (32 channels in tf32: WgConvNchw under 58255 of N*H*W, the TMA engine from it;
                 // the batch 2: 97 x 301 and 224 x 224 past it, 227 x 128 and 228 x 128 its two
                 // sides, 58112 and 58368)
                 {"small_tf32", {"H", {3, 5, 17, 97, 130, 224, 227, 228}, "W", {7, 16, 33, 301, 127, 224, 128, 128}}}},
                /*computed_extents=*/true);
}

// Extents that are sums of dyn dims (pad's and concat's outputs): the elementwise kernels index
// them, and find a concat's parts, through expressions of the launch's dims (ExprEmitter::extent,
// concat_end), never the value planned: one source per bucket.
constexpr const char* kSumExtentsSpec = R"(
op pad_dyn {
  dims B = 5, dyn N = 64
  in  x: f32[B, N, 8]
  out c = pad(x, [1, 2, 0, 1], value=-1.5)
  out r = pad(x, [3, 2], mode="reflect")
}
op concat_dyn {
  dims B = 6, dyn N = 64, M = 24
  in  a: f32[B, N]
  in  b: f32[B, M]
  out y = concat([a, relu(b), a * 2.0], axis=1)
}
)";

TEST_CASE("gpu: extents summed from dyn dims (pad, concat) against the float64 reference") {
  KILN_REQUIRE_GPU();
  const std::vector<std::int64_t> n{4, 5, 16, 17, 64, 65, 100, 1000, 1001};
  check_dyn_ops(kSumExtentsSpec, "sums.kiln", "dyn sum extents", {{"pad_dyn", {"N", n}}, {"concat_dyn", {"N", n}}},
                /*computed_extents=*/true);
}

TEST_CASE("gpu: an executable with dyn rows refuses a value of another size class") {
  KILN_REQUIRE_GPU();
  Runtime rt(without_disk_cache());
  Executable exe = rt.load_string(kRowsSpec, "rows.kiln").op("sm").specialize({{"B", 300}});
  DeviceBuffer x(5000 * 1000 * 4), y(5000 * 1000 * 4);
  auto launch = [&](std::int64_t b) {
    exe.launch(nullptr, {TensorRef(x.data(), DType::f32, {b, 1000}), TensorRef(y.data(), DType::f32, {b, 1000})});
  };
  launch(1055);   // the same class, [264, 1056)
  check(driver().ctx_synchronize(), "cuCtxSynchronize");
  for (std::int64_t b : {263, 1057})
    CHECK_THROWS_WITH_AS(launch(b), doctest::Contains(fmt::format(
                                        "dyn dim B={} is outside this executable's size class (B in [264, 1056))", b)
                                                          .c_str()),
                         ShapeError);
}

TEST_CASE("gpu: an executable of folded batches refuses a product of another size class") {
  KILN_REQUIRE_GPU();
  Runtime rt(without_disk_cache());
  Executable exe = rt.load_string(kTokensSpec, "tokens.kiln").op("tokens_bs").specialize({{"B", 4}, {"S", 100}});
  const std::string plan = exe.plan_text();
  const auto at = plan.find(" B*S (class ");
  REQUIRE(at != std::string::npos);
  const std::size_t start = at + 12, end = plan.find("] for", start);   // " B*S (class [65, 1025))] for sm_90a"
  const std::string klass = plan.substr(start, end - 1 - start);
  DeviceBuffer x(64 * 4000 * 256 * 2), w(320 * 256 * 2), pos(4000 * 320 * 4), g(64 * 320 * 4),
      y(64 * 4000 * 320 * 4);
  auto launch = [&](std::int64_t b, std::int64_t s) {
    exe.launch(nullptr, {TensorRef(x.data(), DType::bf16, {b, s, 256}), TensorRef(w.data(), DType::bf16, {320, 256}),
                         TensorRef(pos.data(), DType::f32, {s, 320}), TensorRef(g.data(), DType::f32, {b, 1, 320}),
                         TensorRef(y.data(), DType::f32, {b, s, 320})});
  };
  launch(8, 50);   // the same product: the same class
  launch(2, 200);
  check(driver().ctx_synchronize(), "cuCtxSynchronize");
  // The same buckets (B and S general), a product past the class:
  CHECK_THROWS_WITH_AS(launch(4, 1000), doctest::Contains(fmt::format(
      "dyn extent B*S=4000 is outside this executable's size class (B*S in {})", klass).c_str()), ShapeError);
}

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
  CHECK_THROWS_WITH_AS(launch(2048, 1024, 2048), doctest::Contains("dim N is 2048 from x.shape[0] but 1024 from z.shape[0]"), ShapeError);
  CHECK(rt.stats().compiles == 1);
  // A matmul's dyn K in the bucket general is split by 16-byte rows ([Note: dyn row alignment]):
  // an executable made at K = 1000 (a multiple of 8 bf16) refuses K = 1001 before any launch.
  Program mm = rt.load_string(kMatmulNKSpec, "mmnk.kiln");
  Executable at1000 = mm.op("mm_k_bf16").specialize({{"K", 1000}});
  DeviceBuffer a(256 * 1001 * 2), b(1001 * 384 * 2), c(256 * 384 * 2);
  CHECK_THROWS_WITH_AS(at1000.launch(nullptr, {TensorRef(a.data(), DType::bf16, {256, 1001}),
                                               TensorRef(b.data(), DType::bf16, {1001, 384}),
                                               TensorRef(c.data(), DType::bf16, {256, 384})}),
                       doctest::Contains("dyn dim K=1001 is outside this executable's row alignment (K a multiple of 8)"),
                       ShapeError);
}

// The Op call path keys an output extent computed from dyn dims (a pool's) by nothing: two image
// sizes of one bucket and class share an executable, and a wrong computed extent is refused at the
// launch, naming the output (ExecutableImpl::launch_dims), not served by the cached executable.
TEST_CASE("gpu: an Op shares one executable across a pool's image sizes and refuses a wrong output extent") {
  KILN_REQUIRE_GPU();
  Runtime rt(without_disk_cache());
  const Op op = rt.load_string(kPoolAxesSpec, "pool_axes.kiln").op("max_sq");
  DeviceBuffer x(2 * 16 * 80 * 80 * 4), sc(16 * 4), y(2 * 16 * 41 * 41 * 4);
  auto call = [&](std::int64_t side, std::int64_t out_side) {
    op(nullptr, {TensorRef(x.data(), DType::f32, {2, 16, side, side}), TensorRef(sc.data(), DType::f32, {16, 1, 1}),
                 TensorRef(y.data(), DType::f32, {2, 16, out_side, out_side})});
    check(driver().ctx_synchronize(), "cuCtxSynchronize");
  };
  call(64, 32);
  const Stats first = rt.stats();
  call(80, 40);   // the bucket `multiple of 16` and the class of 64: the same executable
  const Stats second = rt.stats();
  CHECK(second.memory_hits == first.memory_hits + 1);
  CHECK(second.compiles == first.compiles);
  CHECK_THROWS_WITH_AS(call(80, 41), doctest::Contains("'y' has shape 2x16x41x41, expected 2x16x40x40"), ShapeError);
  CHECK(rt.stats().memory_hits == second.memory_hits + 1);   // served by the key, refused at the launch
}

TEST_CASE("gpu: dyn lengths of reductions, scans and row norms against the float64 reference, one compile per class") {
  KILN_REQUIRE_GPU();
  check_dyn_ops(kLenSpec, "len.kiln", "dyn length",
                {{"rs", {"L", {1, 7, 16, 100, 2048, 2049, 5001, 100000}}},
                 {"rs_fused", {"L", {1, 33, 1000, 3000}}},
                 {"amax", {"L", {1, 5, 2049, 4001}}},
                 {"colmean", {"L", {1, 3, 1000}}},
                 {"colsum_v", {"L", {1, 17, 3000}}},
                 {"hw", {"L", {1, 3, 512, 513, 601}}},
                 {"sm", {"L", {1, 7, 16, 100, 128, 129, 1000, 1024, 1025, 1037, 2049, 5000, 16384, 16385, 40001}}},
                 {"sm_few", {"L", {1, 100, 256, 257, 3001, 20000}}},
                 {"sm_strided", {"L", {1, 5, 100, 1000}}},
                 {"cs", {"L", {1, 7, 16, 3001, 6144, 6145, 12289, 100000, 1 << 20}}},
                 {"cs_few", {"L", {1, 6145, 1000003, 1500007, (1 << 22) + 3}}},
                 {"cmax_few", {"L", {5, 12289, 1000003, 1572864, 1 << 21}}},
                 {"cs_strided", {"L", {1, 5, 1000}}},
                 {"layernorm", {"L", {1, 7, 100, 3001}}},
                 {"ln_many", {"L", {1, 5, 640, 1000, 3000, 3073, 16384, 16385, 40000}}},
                 {"rms_many", {"L", {1, 8, 1000, 2049, 9000, 30001}}},
                 {"both", {"L", {1, 100, 1000, 5000}}}});
}

// A dyn inner extent ([Note: dyn inner extents] in generator/plan/plan_memory.cpp): strided
// reductions whose columns are a dyn C. Sums with a broadcast epilogue over 64 rows of 1000 (split
// at each launch as the rule at its C, at least 2 ways, into partial states each launch sizes):
// odd widths (no vectors; the v4 sweep from 512), multiples of 4 and of 16 (16-byte columns), the
// top classes; an f16 max (the whole-row sweep for widths that are not multiples of 8), NaN-free
// random halves; an argmax over C x 4 columns; a mean of few rows with the rows dyn too (the
// generic default); a max down the first axis (no rows); strided scans (a reverse cummax of 2
// rows, cut into chunks below the full width; a cumsum of 64 rows; an exclusive cumsum with the
// rows dyn too, chunked per launch); a log_softmax down a strided axis with a bias over C (one
// class). Values: both sides of class thresholds, the bucket one.
constexpr const char* kInnerSpec = R"(
op colsum {
  dims R = 1000, dyn C
  in  x: f32[64, R, C]
  in  b: f32[C]
  out y = sum(x, axis=1) * b
}
op colmax_h {
  dims R = 4096, dyn C
  in  x: f16[4, R, C]
  out y = max(x, axis=1)
}
op argmax4 {
  dims R = 512, dyn C
  in  x: f32[4, R, C, 4]
  out y = argmax(x, axis=1)
}
op colmean_few {
  dims dyn B = 2, R = 100000, dyn C
  in  x: f32[B, R, C]
  out y = mean(x, axis=1)
}
op first {
  dims R = 300, dyn C
  in  x: f32[R, C]
  out y = max(x, axis=0) + 1.0
}
op cs_few {
  dims R = 3000, dyn C
  in  x: f32[2, R, C]
  out y = cummax(x, axis=1, reverse=true)
}
op cs {
  dims R = 1000, dyn C
  in  x: f32[64, R, C]
  out y = cumsum(x, axis=1) * 2.0
}
op sm_strided {
  dims L = 100, dyn C
  in  x: f32[8, L, C]
  in  b: f32[C]
  out y = log_softmax(x + b, axis=1)
}
op cs_rows {
  dims dyn B, R = 500, dyn C
  in  x: f32[B, R, C]
  out y = cumsum(x, axis=1, exclusive=true)
}
)";

TEST_CASE("gpu: dyn inner extents of strided reductions against the float64 reference, one compile per class") {
  KILN_REQUIRE_GPU();
  check_dyn_ops(kInnerSpec, "inner.kiln", "dyn inner",
                {{"colsum", {"C", {1, 7, 31, 33, 100, 128, 129, 511, 512, 1001, 1024, 2049, 4096, 8195}}},
                 {"colmax_h", {"C", {1, 5, 7, 64, 257, 999, 1000, 1001, 3001, 10000}}},
                 {"argmax4", {"C", {1, 3, 32, 33, 500}}},
                 {"first", {"C", {1, 3, 2049, 65537}}},
                 {"cs_few", {"C", {1, 7, 31, 100, 300, 511, 5000, 70001}}},
                 {"cs", {"C", {1, 33, 40, 1000, 1001}}},
                 {"sm_strided", {"C", {1, 3, 300, 4099}}}});
  // cs_rows: chunked per launch ([Note: chunks per launch]); 1200 x 100 fills the GPU unchunked
  // (the totals kernel not launched), 2 x 1000 and 1 x 129 take the most chunks.
  check_dyn_ops(kInnerSpec, "inner.kiln", "dyn inner and rows",
                {{"colmean_few", {"C", {1, 4, 100, 1001}, "B", {2, 2, 5, 1}}},
                 {"cs_rows", {"C", {1000, 129, 100, 100, 33, 4099, 1}, "B", {2, 1, 3, 1200, 40, 7, 5}}}});
}

// Fused attention with dyn dims ([Note: dyn attention] in generator/plan/plan_contraction.cpp),
// the ops of tests/dyn_attention_spec.h. One kernel serves every value of the bucket general;
// S = 1 and B = 1 are the bucket one. Values: under, at and past the 128-row blocks and 128- or
// 64-key tiles.
using kiln_test::kDynAttentionSpec;

TEST_CASE("gpu: dyn batches and sequence lengths of fused attention against the float64 reference, one compile") {
  KILN_REQUIRE_GPU();
  KILN_REQUIRE_SM90A("the fused attention kernel's tests");
  check_dyn_ops(kDynAttentionSpec, "attention.kiln", "dyn attention",
                {{"att", {"S", {1, 5, 127, 128, 129, 300, 1000}, "B", {2, 3, 1, 2, 5, 2, 3}}},
                 {"att_causal", {"S", {1, 2, 64, 129, 257, 1000}}},
                 {"att_bshd", {"S", {3, 128, 200, 777}, "B", {2, 1, 3, 2}}},
                 {"att_d256", {"T", {1, 63, 64, 65, 500}, "BH", {6, 2, 3, 7, 2}}},
                 {"att_epi", {"S", {7, 130, 256}, "B", {2, 3, 2}}},
                 {"att_heads", {"S", {5, 200, 129}, "H", {3, 2, 8}}},
                 {"att_bcast", {"S", {1, 100, 300}, "B", {2, 4, 3}}}},
                false, true);
}

// [Note: launch memo] in runtime/runtime.cpp: an executable keeps its last launch's state (dims,
// grids, scratch layout, dim arguments) by the arguments' extents. Launches that repeat extents,
// alternate between two values of one bucket and class (a look-back scan, whose grid and zeroed
// workspace follow the length, and a row softmax), and fail between good ones, are each checked
// against the float64 reference, through an Executable and through the Op.
TEST_CASE("gpu: launches that repeat, alternate and fail between extents each compute with their own (launch memo)") {
  KILN_REQUIRE_GPU();
  Runtime rt(without_disk_cache());
  Program program = rt.load_string(kLenSpec, "len.kiln");
  const SpecFile spec = parse_spec(kLenSpec, "len.kiln");
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> sequences = {
      {"cs_few", {1000003, 1000003, 1500007, 1000003, 1500007, 1500007}},
      {"sm", {3001, 3003, 3001, 3001, 3003}}};
  for (const auto& [name, values] : sequences) {
    const Op op = program.op(name);
    const Executable ex = op.specialize({{"L", values[0]}});
    const auto ir = check_op(spec, name);
    for (int path = 0; path < 2; ++path) {   // 0: the Executable, 1: the Op
      for (std::size_t i = 0; i < values.size(); ++i) {
        const std::int64_t v = values[i];
        CAPTURE(name);
        CAPTURE(v);
        CAPTURE(path);
        const auto bound = std::make_shared<const ir::BoundIr>(ir::bind(ir, {{"L", {v, "test"}}}));
        OpCheckOptions options;
        options.seed = static_cast<std::uint64_t>(v + 17 * i);
        DeviceCase c = make_device_case(*bound, options);
        c.poison();
        if (path == 0) ex.launch(nullptr, c.args);
        else op(nullptr, c.args);
        synchronize();
        bool ok = true;
        compare_outputs(*ir, c.outputs(*bound), reference_outputs(*bound, c.inputs), false, &ok);
        std::printf("launch memo %s path %d L=%lld: %s\n", name.c_str(), path, static_cast<long long>(v),
                    ok ? "ok" : "WRONG");
        CHECK(ok);
        if (i == 2) {   // a launch refused between good ones: its input and output disagree on L
          std::vector<Arg> bad = c.args;
          bad[1] = TensorRef(c.args[1].tensor().data, DType::f32, {c.args[1].tensor().shape[0], v - 1});
          if (path == 0) CHECK_THROWS_AS(ex.launch(nullptr, bad), ShapeError);
          else CHECK_THROWS_AS(op(nullptr, bad), ShapeError);
        }
      }
    }
  }
  // Each op's values share one executable: one compile per kernel of it, no more.
  CHECK(rt.stats().compiles == program.op("cs_few").specialize({{"L", 1000003}}).kernels().size() +
                                   program.op("sm").specialize({{"L", 3001}}).kernels().size());
}

}  // namespace kiln::test
