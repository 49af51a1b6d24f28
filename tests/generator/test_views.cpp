// Index views (generator/ir/ir.h, [Note: index views]): reshape, flatten, squeeze/unsqueeze, pad,
// concat, gather/take_along_axis, expand/broadcast_to, and triu/tril and group_norm written with them. Located checker
// errors, the float64 reference on hand-made inputs, plan and source goldens of specs/views.kiln,
// and every unit through NVRTC for sm_80 and sm_90a.
#include <doctest/doctest.h>

#include <cmath>

#include "golden.h"
#include "memory_plan_util.h"
#include "reference/reference.h"
#include "runtime/nvrtc.h"

namespace {

using memory_plan_test::all_sources;
using memory_plan_test::Case;
using memory_plan_test::plan_of;
using memory_plan_test::sources_of;

std::string check_error(const std::string& body) {
  const std::string text = "op a {\n  dims M = 4, N = 6\n  in x: f32[M, N]\n  in i: i64[M, 2]\n" + body + "\n}";
  try {
    auto spec = kiln::parse_spec(text, "t.kiln");
    auto ir = kiln::check_op(spec, "a");
    kiln::ir::bind(ir, {});
  } catch (const kiln::SpecError& e) {
    const std::string what = e.what();
    return what.substr(0, what.find('\n'));
  } catch (const kiln::ir::BindError& e) {   // a relation checked once the dims have values
    const std::string what = e.what();
    return what.substr(0, what.find('\n'));
  }
  return "(no error)";
}

// Evaluates one op of `text` with the reference on the given inputs; returns its first output.
std::vector<double> eval(const std::string& text, const std::vector<kiln::ref::HostValue>& inputs,
                         std::vector<std::int64_t>* shape = nullptr) {
  auto spec = kiln::parse_spec(text, "t.kiln");
  auto bound = kiln::ir::bind(kiln::check_op(spec, "a"), {});
  auto out = kiln::ref::evaluate(bound, inputs);
  if (shape) *shape = out.at(0).shape;
  return out.at(0).data;
}

std::vector<double> iota_data(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) v[static_cast<std::size_t>(k)] = k;
  return v;
}

}  // namespace

TEST_CASE("views: located errors for every misuse") {
  CHECK(check_error("  out y = reshape(x, [5, 5])") ==
        "t.kiln:5:22: error: op a: reshape() of f32[M, N] to [5, 5]: the sizes must multiply out to the same count "
        "(25 but (M * N) = 24)");
  CHECK(check_error("  out y = reshape(x, [-1, -1])") == "t.kiln:5:27: error: reshape() takes at most one -1 in its shape");
  CHECK(check_error("  out y = reshape(x, [0, -1])") ==
        "t.kiln:5:23: error: a dim in the shape of reshape() must be >= 1 (or -1 once), got 0");
  CHECK(check_error("  out y = reshape(x, [N / 2, -M])") ==
        "t.kiln:5:30: error: the shape of reshape() can combine dims with + - * and / only");
  CHECK(check_error("  out y = reshape(x, [N / 0, 4])") == "t.kiln:5:25: error: division by zero in the shape of reshape()");
  CHECK(check_error("  out y = reshape(x, [N / 4, 4])") ==
        "t.kiln:5:22: error: op a: reshape() of f32[M, N] to [(N / 4), 4]: the sizes must multiply out to the same count "
        "(((N / 4) * 4) = 4 but (M * N) = 24)");
  CHECK(check_error("  out y = reshape(x, M)") == "t.kiln:5:22: error: reshape() expects its shape as a non-empty list, e.g. reshape(x, [N, -1])");
  CHECK(check_error("  out y = squeeze(x, axis=0)") ==
        "t.kiln:5:27: error: squeeze() drops an axis of extent 1; axis 0 of f32[M, N] is M");
  CHECK(check_error("  out y = flatten(x, start_dim=1, end_dim=0)") == "t.kiln:5:11: error: flatten() needs start_dim <= end_dim, got 1 > 0");
  CHECK(check_error("  out y = pad(x, [1, -2])") == "t.kiln:5:22: error: pad() pads must be >= 0, got -2 (PyTorch's negative pads, which crop, are not supported)");
  CHECK(check_error("  out y = pad(x, [1, 2, 3])") ==
        "t.kiln:5:18: error: pad() takes a list of 2 to 4 pads (before and after, the last axis first) for f32[M, N], got 3");
  CHECK(check_error("  out y = pad(x, [1, 1], mode=\"wrap\")") ==
        "t.kiln:5:31: error: pad() mode= expects \"constant\", \"reflect\" or \"replicate\", got \"wrap\"");
  CHECK(check_error("  out y = pad(x, [1, 1], mode=\"reflect\", value=2)") ==
        "t.kiln:5:48: error: pad() takes value= in constant mode only, not \"reflect\"");
  CHECK(check_error("  out y = pad(x, [6, 0], mode=\"reflect\")") ==
        "t.kiln:5:18: error: op a: pad() in reflect mode needs each pad < the extent: axis 1 is N, pad 6 "
        "(min(N, 7) = 6 but 7)");
  CHECK(check_error("  out y = concat([x, i], axis=0)") ==
        "t.kiln:5:22: error: concat() joins tensors of one type: f32 and i64; cast one, e.g. f32(x)");
  CHECK(check_error("  out y = concat([x, f32(i)], axis=0)") ==
        "t.kiln:5:22: error: concat() along axis 0: f32[M, N] and f32[M, 2] differ on axis 1");
  CHECK(check_error("  out y = concat(x, axis=0)") == "t.kiln:5:18: error: concat() expects a list of tensors, e.g. concat([a, b], axis=1)");
  CHECK(check_error("  out y = gather(x, f32(i), axis=1)") == "t.kiln:5:21: error: gather() needs an integer index (i32, i64), got f32");
  CHECK(check_error("  out y = gather(x, i)") == "t.kiln:5:11: error: gather() needs axis=");
  CHECK(check_error("  out y = gather(x, sum(i, axis=1), axis=0)") ==
        "t.kiln:5:21: error: gather() needs an index of x's rank: x is f32[M, N], index is i64[M]");
  CHECK(check_error("  out y = gather(sum(x, axis=0, keepdims=true), i, axis=1)") ==
        "t.kiln:5:49: error: op a: gather() needs index extents <= x's off the axis: axis 0 of index is M, of x 1 "
        "(min(1, M) = 1 but M = 4)");
  CHECK(check_error("  out y = gather(x, permute(i, [1, 0]), axis=1)") == "(no error)");   // 2 <= M at bind
  CHECK(check_error("  out y = expand(x, [N])") ==
        "t.kiln:5:21: error: expand() cannot drop dims: x is f32[M, N], the shape has 1 entries");
  CHECK(check_error("  out y = expand(x, [M, 2 * N])") ==
        "t.kiln:5:27: error: expand() broadcasts only dims of extent 1: x's dim 1 is N, not 1, and the shape asks for (N * 2)");
  CHECK(check_error("  out y = expand(x, [M, M])") ==
        "t.kiln:5:25: error: expand() broadcasts only dims of extent 1: x's dim 1 is N, not 1, and the shape asks for M");
  CHECK(check_error("  out y = expand(sum(x, axis=0), [-1, N])") ==
        "t.kiln:5:35: error: -1 in the shape of expand() keeps a dim of x; a new leading dim needs its extent");
  CHECK(check_error("  out y = broadcast_to(x, [0, M, N])") ==
        "t.kiln:5:28: error: a dim in the shape of broadcast_to() must be >= 1 (or -1), got 0");
  CHECK(check_error("  out y = expand(x, M)") ==
        "t.kiln:5:21: error: expand() expects its shape as a non-empty list, e.g. expand(x, [B, N])");
  CHECK(check_error("  out y = triu(sum(x, axis=1))") == "t.kiln:5:16: error: triu() needs rank >= 2, got f32[M]");
  CHECK(check_error("  out y = tril(x, 1, diagonal=1)") ==
        "t.kiln:5:22: error: tril() needs its diagonal once: as the second argument or as diagonal=");
  CHECK(check_error("  out y = triu(x, 1.5)") == "t.kiln:5:19: error: the diagonal of triu() expects an integer, got 1.5");
  CHECK(check_error("  out y = group_norm(x, 4)") ==
        "t.kiln:5:11: error: op a: group_norm(): channels N must be a multiple of groups 4 (((N / 4) * 4) = 4 but N = 6)");
  CHECK(check_error("  out y = group_norm(x, 2, weight=x)") == "t.kiln:5:35: error: group_norm() weight= must be [C] = [N], got f32[M, N]");
  CHECK(check_error("  out y = group_norm(i, 2)") ==
        "t.kiln:5:11: error: group_norm() needs a float type (f32, f16, bf16, f64), got i64; cast first, e.g. f32(x)");
}

TEST_CASE("views: the reference follows PyTorch's definitions") {
  using kiln::ref::make_tensor;
  const auto x = make_tensor(kiln::DType::f32, {2, 3}, iota_data(6));   // [[0 1 2] [3 4 5]]
  const std::string head = "op a {\n  dims M = 2, N = 3\n  in x: f32[M, N]\n";
  std::vector<std::int64_t> shape;
  SUBCASE("reshape keeps row-major order; unsqueeze and flatten") {
    CHECK(eval(head + "  out y = reshape(x, [3, -1])\n}", {x}, &shape) == iota_data(6));
    CHECK(shape == std::vector<std::int64_t>{3, 2});
    CHECK(eval(head + "  out y = permute(reshape(x, [3, 2]), [1, 0])\n}", {x}) == std::vector<double>{0, 2, 4, 1, 3, 5});
    eval(head + "  out y = unsqueeze(x, axis=-1)\n}", {x}, &shape);
    CHECK(shape == std::vector<std::int64_t>{2, 3, 1});
    eval(head + "  out y = flatten(x)\n}", {x}, &shape);
    CHECK(shape == std::vector<std::int64_t>{6});
    // Entries may be arithmetic of dims, as a declared shape's ('/' floors).
    CHECK(eval(head + "  out y = reshape(x, [N / 3, M * N - 3 + 3])\n}", {x}, &shape) == iota_data(6));
    CHECK(shape == std::vector<std::int64_t>{1, 6});
  }
  SUBCASE("pad in the three modes (F.pad's order, the last axis first)") {
    CHECK(eval(head + "  out y = pad(x, [1, 2], value=-1)\n}", {x}) ==
          std::vector<double>{-1, 0, 1, 2, -1, -1, -1, 3, 4, 5, -1, -1});
    CHECK(eval(head + "  out y = pad(x, [2, 2], mode=\"reflect\")\n}", {x}) ==
          std::vector<double>{2, 1, 0, 1, 2, 1, 0, 5, 4, 3, 4, 5, 4, 3});
    CHECK(eval(head + "  out y = pad(x, [1, 0, 0, 1], mode=\"replicate\")\n}", {x}, &shape) ==
          std::vector<double>{0, 0, 1, 2, 3, 3, 4, 5, 3, 3, 4, 5});
    CHECK(shape == std::vector<std::int64_t>{3, 4});
  }
  SUBCASE("concat along each axis") {
    CHECK(eval(head + "  out y = concat([x, x * 10.0], axis=1)\n}", {x}) ==
          std::vector<double>{0, 1, 2, 0, 10, 20, 3, 4, 5, 30, 40, 50});
    CHECK(eval(head + "  out y = cat([x, x], axis=0)\n}", {x}) == std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  }
  SUBCASE("gather: negative indices count from the end, out-of-range ones clamp") {
    const auto i = make_tensor(kiln::DType::i64, {2, 4}, {0, 2, -1, 7, 1, -3, -9, 1});
    CHECK(eval(head + "  in i: i64[M, 4]\n  out y = gather(x, i, axis=1)\n}", {x, i}) ==
          std::vector<double>{0, 2, 2, 2, 4, 3, 3, 4});
    const auto r = make_tensor(kiln::DType::i32, {1, 3}, {1, 0, 1});
    CHECK(eval(head + "  in r: i32[1, N]\n  out y = take_along_axis(x, r, axis=0)\n}", {x, r}) ==
          std::vector<double>{3, 1, 5});
  }
  SUBCASE("expand and broadcast_to: numpy's broadcasting, as torch.expand") {
    CHECK(eval(head + "  out y = expand(x, [2, M, N])\n}", {x}, &shape) ==
          std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
    CHECK(shape == std::vector<std::int64_t>{2, 2, 3});
    CHECK(eval(head + "  out y = expand(sum(x, axis=1, keepdims=true), [-1, 4])\n}", {x}, &shape) ==
          std::vector<double>{3, 3, 3, 3, 12, 12, 12, 12});
    CHECK(shape == std::vector<std::int64_t>{2, 4});
    CHECK(eval(head + "  out y = broadcast_to(sum(x, axis=0, keepdims=true), [3, M, N]) - x\n}", {x}) ==
          std::vector<double>{3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2});
    CHECK(eval(head + "  out y = expand(x, [M, N])\n}", {x}) == iota_data(6));   // the same shape: x itself
  }
  SUBCASE("triu and tril with a diagonal") {
    CHECK(eval(head + "  out y = triu(x, diagonal=1)\n}", {x}) == std::vector<double>{0, 1, 2, 0, 0, 5});
    CHECK(eval(head + "  out y = triu(x, 1)\n}", {x}) == std::vector<double>{0, 1, 2, 0, 0, 5});   // torch.triu(x, 1)
    CHECK(eval(head + "  out y = tril(x, -1)\n}", {x}) == std::vector<double>{0, 0, 0, 3, 0, 0});
    CHECK(eval(head + "  out y = tril(x)\n}", {x}) == std::vector<double>{0, 0, 0, 3, 4, 0});
  }
  SUBCASE("group_norm: each group normalized by its own mean and biased variance") {
    const auto g = make_tensor(kiln::DType::f32, {1, 4, 2}, {1, 3, 5, 7, 10, 10, 20, 40});
    const auto w = make_tensor(kiln::DType::f32, {4}, {1, 2, 1, 1});
    const auto b = make_tensor(kiln::DType::f32, {4}, {0, 0, 0, 1});
    const auto y = eval("op a {\n  in x: f32[1, 4, 2]\n  in w: f32[4]\n  in b: f32[4]\n"
                        "  out y = group_norm(x, 2, weight=w, bias=b, eps=0)\n}",
                        {g, w, b});
    // group 0: 1 3 5 7 (mean 4, variance 5); group 1: 10 10 20 40 (mean 20, variance 150)
    const double s0 = 1 / std::sqrt(5.0), s1 = 1 / std::sqrt(150.0);
    const std::vector<double> want = {-3 * s0, -1 * s0, 2 * s0, 6 * s0, -10 * s1, -10 * s1, 1, 20 * s1 + 1};
    REQUIRE(y.size() == want.size());
    for (std::size_t k = 0; k < y.size(); ++k) CHECK(y[k] == doctest::Approx(want[k]).epsilon(1e-6));
  }
}

TEST_CASE("views: no copies, plan and source goldens of specs/views.kiln") {
  const Case cases[] = {
      {"views", "reshape_rows", "odd", {{"B", 3}, {"N", 7}}, {}},
      {"views", "pad_modes", "odd", {{"B", 3}, {"N", 5}}, {}},
      {"views", "concat_parts", "odd", {{"B", 3}, {"N", 5}, {"M", 2}}, {}},
      {"views", "gather_rows", "odd", {{"B", 3}, {"N", 5}, {"K", 2}}, {}},
      {"views", "cross_entropy", "default", {}, {}},
      {"views", "triangles", "odd", {{"B", 2}, {"M", 3}, {"N", 5}}, {}},
      {"views", "group_norm_affine", "odd", {{"N", 2}, {"H", 3}, {"W", 5}}, {}},
      {"views", "expand_batch", "odd", {{"B", 2}, {"H", 3}, {"M", 5}, {"K", 7}, {"N", 6}}, {}},
      {"views", "matmul_head_broadcast", "odd", {{"B", 2}, {"H", 3}, {"M", 5}, {"K", 7}, {"N", 6}}, {}},
      {"views", "matmul_vectors", "odd", {{"B", 3}, {"M", 5}, {"K", 7}}, {}},
      {"views", "einsum_forms", "odd", {{"B", 2}, {"I", 3}, {"J", 5}, {"L", 7}, {"K", 6}, {"S", 5}, {"H", 3}, {"D", 4}}, {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.op);
    const kiln::Plan plan = plan_of(c);
    check_golden("source/" + c.op + "_" + c.tag + ".cu", plan.text() + "\n" + all_sources(sources_of(plan)));
  }
  // A view is never a buffer of its own: pad_modes stores its three outputs from x alone.
  const kiln::Plan pads = plan_of(Case{"views", "pad_modes", "", {}, {}});
  CHECK(pads.kernels.size() == 3);
  CHECK(pads.buffers.size() == 4);
  // A reduction over a reshape streams x itself: the Load functor uses the loaded element.
  const kiln::Plan rows = plan_of(Case{"views", "reshape_rows", "", {}, {}});
  const auto sources = sources_of(rows);
  bool streamed = false;
  for (const auto& s : sources) streamed = streamed || s.text.find("= elem;") != std::string::npos;
  CHECK(streamed);
  // Cross entropy: the row softmax, then one reduction whose prologue gathers the target's entry.
  const kiln::Plan ce = plan_of(Case{"views", "cross_entropy", "", {}, {}});
  REQUIRE(ce.kernels.size() >= 2);
  CHECK(ce.kernels[0].template_name == "rownorm");
  CHECK(ce.kernels[1].template_name == "reduce_inner");
  // expand: the product's operand stored first at its full batch (an elementwise kernel), then
  // read by the batched GEMM; the broadcast row read in place by the elementwise output.
  const kiln::Plan ex = plan_of(Case{"views", "expand_batch", "", {}, {}});
  REQUIRE(ex.kernels.size() == 3);
  CHECK(ex.kernels[0].template_name == "elementwise");
  CHECK(ex.kernels[1].template_name.rfind("gemm", 0) == 0);
  CHECK(ex.kernels[2].template_name == "elementwise");
}

TEST_CASE("views: every unit compiles with NVRTC for sm_80 and sm_90a") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC not loadable (" << why << ")");
    return;
  }
  int compiled = 0;
  for (const char* op : {"reshape_rows", "pad_modes", "concat_parts", "gather_rows", "cross_entropy", "triangles",
                         "group_norm_affine", "expand_batch", "matmul_head_broadcast", "matmul_vectors", "einsum_forms"})
    for (const char* arch : {"sm_80", "sm_90a"}) {
      CAPTURE(op);
      CAPTURE(arch);
      const kiln::Plan plan = plan_of(Case{"views", op, "", {{"B", 5}}, {}}, arch);
      for (const auto& src : sources_of(plan)) {
        const auto result = kiln::compile(memory_plan_test::compile_request(src, arch));
        CHECK(!result.cubin.empty());
        ++compiled;
      }
    }
  CHECK(compiled > 20);
}

TEST_CASE("views: a concat along a dyn axis reads its parts' offsets from the launch's extents") {
  const std::string text = R"(op cat_dyn {
  dims B = 6, dyn N, M = 24
  in  a: f32[B, N]
  in  b: f32[B, M]
  out y = concat([a, relu(b), a * 2.0], axis=1)
}
)";
  auto source_at = [&](std::int64_t n, const std::string& arch = "sm_90a") {
    return all_sources(sources_of(memory_plan_test::plan_text_at(text, "t.kiln", "cat_dyn", {{"N", n}}, arch)));
  };
  // One source for every N of a bucket: no offset (64, 88) or part end is the planned value.
  const std::string at64 = source_at(64);
  CHECK(source_at(80) == at64);
  CHECK(source_at(4096) == at64);
  CHECK(at64.find("c1 < (Index(dim_N))") != std::string::npos);
  CHECK(at64.find("Index(c1 - (Index(dim_N) + 24))") != std::string::npos);
  CHECK(at64.find("88") == std::string::npos);
  CHECK(source_at(1001) == source_at(1003));   // the bucket general, odd rows
  if (!memory_plan_test::nvrtc_or_skip()) return;
  for (const char* arch : {"sm_80", "sm_90a"})
    for (std::int64_t n : {64, 1001})
      memory_plan_test::check_units_compile(memory_plan_test::plan_text_at(text, "t.kiln", "cat_dyn", {{"N", n}}, arch),
                                            arch);
}
