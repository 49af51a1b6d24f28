// torch.matmul's forms beyond a product of two batched matrices:
// - '@' and torch's mm, bmm, dot, F.linear and outer: the same graph as what they stand for;
// - einsum: the graphs it writes, the float64 values against explicit compositions, one kernel
//   for a contraction of contiguous operands ([Note: reshapes alias]);
// - rank-1 operands (the checker's reshapes around a rank-2 product): shapes, values of the
//   float64 reference, the plan;
// - an operand with some of the product's batch dims (generator/plan/expand_batches.cpp, [Note:
//   matmul operands with some batch dims]): it plans (expanded and stored first) where it was
//   refused, the plan says so, the rewritten graph means what the spec wrote (the float64
//   reference of both, exactly), operands a gemm template addresses are left alone, and the units
//   compile with NVRTC for sm_80 and sm_90a.
#include <doctest/doctest.h>

#include "memory_plan_util.h"
#include "reference/reference.h"

namespace {

using memory_plan_test::contains;

// op `m` with `inputs` and one output `body`, at its declared dims.
std::string spec(const std::string& dims, const std::string& inputs, const std::string& body) {
  return "op m {\n  dims " + dims + "\n" + inputs + "  out c = " + body + "\n}\n";
}

std::shared_ptr<const kiln::ir::BoundIr> bound_of(const std::string& text) {
  return std::make_shared<const kiln::ir::BoundIr>(
      kiln::ir::bind(kiln::check_op(kiln::parse_spec(text, "m.kiln"), "m"), {}));
}

kiln::Plan plan_for(const std::string& text, const char* arch = "sm_90a") {
  return kiln::make_plan(bound_of(text), kiln::Target::for_arch(arch));
}

int count(const kiln::ir::Ir& ir, kiln::ir::OpKind kind) {
  int n = 0;
  for (const auto& node : ir.nodes) n += node.kind == kind;
  return n;
}

// The reference of the planned graph equals the spec's, bit for bit (an expand copies values).
void check_same_reference(const std::string& text, const kiln::Plan& plan) {
  const auto bound = bound_of(text);
  const auto inputs = kiln::ref::random_inputs(*bound, 5);
  const auto want = kiln::ref::evaluate(*bound, inputs);
  const auto got = kiln::ref::evaluate(*plan.bound, inputs);
  REQUIRE(want.size() == got.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CHECK(want[i].shape == got[i].shape);
    CHECK(want[i].data == got[i].data);
  }
}

const char* kDims = "B = 2, C = 3, M = 4, K = 5, N = 6";

// The reference's output of op `m` at its declared dims (and its shape).
std::vector<double> eval(const std::string& text, const std::vector<kiln::ref::HostValue>& inputs,
                         std::vector<std::int64_t>& shape) {
  const auto out = kiln::ref::evaluate(*bound_of(text), inputs);
  shape = out.at(0).shape;
  return out.at(0).data;
}

}  // namespace

TEST_CASE("'@', mm, bmm, dot, linear and outer check to the graph of what they stand for") {
  const auto ir_of = [](const std::string& inputs, const std::string& body) {
    return kiln::ir::print(*kiln::check_op(kiln::parse_spec(spec(kDims, inputs, body), "m.kiln"), "m"));
  };
  const std::string mk = "  in a: f32[M, K]\n  in b: f32[K, N]\n";
  CHECK(ir_of(mk, "a @ b") == ir_of(mk, "matmul(a, b)"));
  CHECK(ir_of(mk, "mm(a, b)") == ir_of(mk, "matmul(a, b)"));
  // '@' binds as '*' and '/' do, left to right (Python's precedence).
  CHECK(ir_of(mk, "2.0 * a @ b") == ir_of(mk, "matmul(2.0 * a, b)"));
  CHECK(ir_of(mk, "a @ b * 2.0 + 1.0") == ir_of(mk, "matmul(a, b) * 2.0 + 1.0"));
  CHECK(ir_of(mk, "-a @ b") == ir_of(mk, "matmul(-a, b)"));
  const std::string batched = "  in a: f32[B, M, K]\n  in b: f32[B, K, N]\n";
  CHECK(ir_of(batched, "bmm(a, b)") == ir_of(batched, "matmul(a, b)"));
  const std::string vectors = "  in a: f32[K]\n  in b: f32[K]\n";
  CHECK(ir_of(vectors, "dot(a, b)") == ir_of(vectors, "matmul(a, b)"));
  CHECK(ir_of(vectors, "a @ b") == ir_of(vectors, "matmul(a, b)"));
  const std::string lin = "  in x: f32[B, M, K]\n  in w: f32[N, K]\n  in bias: f32[N]\n";
  CHECK(ir_of(lin, "linear(x, w, bias)") == ir_of(lin, "matmul(x, transpose(w)) + bias"));
  CHECK(ir_of(lin, "linear(x, w, bias=bias)") == ir_of(lin, "matmul(x, transpose(w)) + bias"));
  CHECK(ir_of(lin, "linear(x, w)") == ir_of(lin, "matmul(x, transpose(w))"));
  CHECK(ir_of(lin, "linear(x, w, precision=\"tf32\")") == ir_of(lin, "matmul(x, transpose(w), precision=\"tf32\")"));
  // torch.outer: a broadcast product of a column and a row.
  const std::string two = "  in a: f32[M]\n  in b: f32[N]\n";
  CHECK(ir_of(two, "outer(a, b)") == ir_of(two, "reshape(a, [M, 1]) * reshape(b, [1, N])"));
}

TEST_CASE("matmul of rank-1 operands: a row times a matrix, a matrix times a column, a dot product") {
  using kiln::ref::make_tensor;
  const auto a = make_tensor(kiln::DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});        // [[1 2 3] [4 5 6]]
  const auto x3 = make_tensor(kiln::DType::f32, {3}, {1, 0, -1});
  const auto x2 = make_tensor(kiln::DType::f32, {2}, {2, 1});
  std::vector<std::int64_t> shape;
  const std::string dims = "M = 2, K = 3";
  CHECK(eval(spec(dims, "  in a: f32[M, K]\n  in x: f32[K]\n", "matmul(a, x)"), {a, x3}, shape) ==
        std::vector<double>{-2, -2});
  CHECK(shape == std::vector<std::int64_t>{2});
  CHECK(eval(spec(dims, "  in a: f32[M, K]\n  in x: f32[M]\n", "matmul(x, a)"), {a, x2}, shape) ==
        std::vector<double>{6, 9, 12});
  CHECK(shape == std::vector<std::int64_t>{3});
  CHECK(eval(spec(dims, "  in x: f32[K]\n", "matmul(x, x * 2.0)"), {x3}, shape) == std::vector<double>{4});
  CHECK(shape.empty());   // a 0-d tensor, as torch.matmul of two vectors
  CHECK(eval(spec(dims, "  in x: f32[K]\n  in y: f32[M]\n", "outer(y, x)"), {x3, x2}, shape) ==
        std::vector<double>{2, 0, -2, 1, 0, -1});
  CHECK(shape == std::vector<std::int64_t>{2, 3});
  // Batched: the vector broadcasts over a's batch; the result drops the vector's dim.
  const auto ab = make_tensor(kiln::DType::f32, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 0, 0});
  CHECK(eval(spec(dims, "  in a: f32[2, M, K]\n  in x: f32[K]\n", "matmul(a, x)"), {ab, x3}, shape) ==
        std::vector<double>{-2, -2, 0, 1});
  CHECK(shape == std::vector<std::int64_t>{2, 2});
  CHECK(eval(spec(dims, "  in a: f32[2, M, K]\n  in x: f32[M]\n", "matmul(x, a)"), {ab, x2}, shape) ==
        std::vector<double>{6, 9, 12, 1, 2, 0});
  CHECK(shape == std::vector<std::int64_t>{2, 3});
  // Planned: one gemv, reading x and writing y in place ([Note: reshapes alias]).
  const kiln::Plan plan = plan_for(spec("M = 4096, K = 8192", "  in a: f32[M, K]\n  in x: f32[K]\n", "matmul(a, x)"));
  CAPTURE(plan.text());
  REQUIRE(plan.kernels.size() == 1);
  CHECK(plan.kernels[0].template_name == "gemv");
  CHECK(plan.buffers.size() == 3);   // a, x, c: no copies
  CHECK(plan.buffers.at(2).shape == std::vector<std::int64_t>{4096});
}

TEST_CASE("expand_matmul_batches: an operand with some of the batch dims is expanded, stored, then multiplied") {
  SUBCASE("w [C, K, N] against a [B, C, M, K]") {
    const std::string text = spec(kDims, "  in a: f32[B, C, M, K]\n  in w: f32[C, K, N]\n", "matmul(a, w)");
    const kiln::Plan plan = plan_for(text);
    CAPTURE(plan.text());
    CHECK(count(*plan.bound->ir, kiln::ir::OpKind::Expand) == 1);
    REQUIRE(plan.fusions.size() == 1);
    CHECK(plan.fusions[0] == "line 5: matmul operand b (3 x 5 x 6) has only some of the product's batch dims: "
                             "expanded to [B, C, K, N] and stored first (one elementwise kernel), as torch.matmul does");
    REQUIRE(plan.kernels.size() == 2);
    CHECK(plan.kernels[0].template_name == "elementwise");
    CHECK(plan.kernels[1].template_name == "gemv");   // the product (M = 4 rows)
    check_same_reference(text, plan);
  }
  SUBCASE("a transposed input: the expand of the transpose, stored row-major") {
    const std::string text = spec(kDims, "  in a: f32[B, C, M, K]\n  in w: f32[C, N, K]\n", "matmul(a, transpose(w))");
    const kiln::Plan plan = plan_for(text);
    CAPTURE(plan.text());
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], "operand b (3 x 5 x 6)"));   // the transpose's extents
    CHECK(contains(plan.fusions[0], "expanded to [B, C, K, N]"));
    check_same_reference(text, plan);
  }
  SUBCASE("both operands, each with extents of 1 among its batch dims, in an epilogue") {
    const std::string text = spec(kDims, "  in a: bf16[B, 1, M, K]\n  in w: bf16[1, C, K, N]\n",
                                  "relu(matmul(a, w)) + 1.0");
    const kiln::Plan plan = plan_for(text);
    CAPTURE(plan.text());
    CHECK(count(*plan.bound->ir, kiln::ir::OpKind::Expand) == 2);
    REQUIRE(plan.fusions.size() == 2);
    CHECK(contains(plan.fusions[0], "operand a (2 x 1 x 4 x 5)"));
    CHECK(contains(plan.fusions[0], "expanded to [B, C, M, K]"));
    CHECK(contains(plan.fusions[1], "operand b (1 x 3 x 5 x 6)"));
    check_same_reference(text, plan);
  }
  SUBCASE("numpy's right alignment: [B, 1] against [B] is a [B, B] batch, both operands expanded") {
    const std::string text = spec(kDims, "  in a: f32[B, 1, M, K]\n  in w: f32[B, K, N]\n", "matmul(a, w)");
    const kiln::Plan plan = plan_for(text, "sm_80");
    CAPTURE(plan.text());
    REQUIRE(plan.fusions.size() == 2);
    CHECK(contains(plan.fusions[0], "operand a (2 x 1 x 4 x 5)"));
    CHECK(contains(plan.fusions[0], "expanded to [B, B, M, K]"));
    CHECK(contains(plan.fusions[1], "operand b (2 x 5 x 6)"));
    CHECK(contains(plan.fusions[1], "expanded to [B, B, K, N]"));
    check_same_reference(text, plan);
  }
  SUBCASE("a computed operand: its producer evaluated at the expanded coordinates") {
    const std::string text = spec(kDims, "  in a: f32[B, C, M, K]\n  in w: f32[C, K, N]\n", "matmul(a, w * 2.0)");
    const kiln::Plan plan = plan_for(text);
    CAPTURE(plan.text());
    REQUIRE(plan.fusions.size() == 1);
    check_same_reference(text, plan);
  }
}

TEST_CASE("expand_matmul_batches: operands one batch stride addresses are read in place") {
  for (const char* inputs : {"  in a: f32[B, C, M, K]\n  in w: f32[K, N]\n",             // no batch: stride 0
                             "  in a: f32[B, C, M, K]\n  in w: f32[1, 1, K, N]\n",       // every batch dim 1
                             "  in a: f32[B, C, M, K]\n  in w: f32[B, C, K, N]\n",       // all of them
                             "  in a: f32[M, K]\n  in w: f32[B, C, K, N]\n",           // a without batch
                             "  in a: f32[1, C, M, K]\n  in w: f32[C, K, N]\n"}) {     // leading extents of 1
    CAPTURE(inputs);
    const kiln::Plan plan = plan_for(spec(kDims, inputs, "matmul(a, w)"));
    CHECK(plan.fusions.empty());
    CHECK(count(*plan.bound->ir, kiln::ir::OpKind::Expand) == 0);
    CHECK(plan.kernels.size() == 1);
  }
  // The pass returns the same graph when it has nothing to do.
  std::vector<std::string> fusions;
  const auto bound = bound_of(spec(kDims, "  in a: f32[B, C, M, K]\n  in w: f32[K, N]\n", "matmul(a, w)"));
  CHECK(kiln::expand_matmul_batches(bound, fusions) == bound);
  CHECK(fusions.empty());
}

TEST_CASE("expand_matmul_batches: the units compile with NVRTC for sm_80 and sm_90a") {
  if (!memory_plan_test::nvrtc_or_skip()) return;
  const std::string text = spec(kDims, "  in a: bf16[B, C, M, K]\n  in w: bf16[C, N, K]\n", "matmul(a, transpose(w))");
  int units = 0;
  for (const char* arch : {"sm_80", "sm_90a"}) units += memory_plan_test::check_units_compile(plan_for(text, arch), arch);
  CHECK(units == 4);
}

TEST_CASE("einsum: one or two operands as permutes, sums, products and matmuls") {
  const auto ir_of = [](const std::string& inputs, const std::string& body) {
    return kiln::ir::print(*kiln::check_op(kiln::parse_spec(spec(kDims, inputs, body), "m.kiln"), "m"));
  };
  const std::string mk = "  in a: f32[M, K]\n  in b: f32[K, N]\n";
  CHECK(ir_of(mk, "einsum(\"mk,kn->mn\", a, b)") == ir_of(mk, "matmul(a, b)"));
  CHECK(ir_of(mk, "einsum(\"mk,kn\", a, b)") == ir_of(mk, "matmul(a, b)"));   // implicit: once-only letters, sorted
  CHECK(ir_of(mk, "einsum(\"mk -> km\", a)") == ir_of(mk, "permute(a, [1, 0])"));
  CHECK(ir_of(mk, "einsum(\"mk->\", a)") == ir_of(mk, "sum(a, axis=[0, 1])"));
  CHECK(ir_of(mk, "einsum(\"mk->m\", a)") == ir_of(mk, "sum(a, axis=1)"));
  const std::string batched = "  in a: f32[B, M, K]\n  in b: f32[B, K, N]\n";
  CHECK(ir_of(batched, "einsum(\"bmk,bkn->bmn\", a, b)") == ir_of(batched, "matmul(a, b)"));
  const std::string nt = "  in a: f32[M, K]\n  in b: f32[N, K]\n";
  CHECK(ir_of(nt, "einsum(\"mk,nk->mn\", a, b)") == ir_of(nt, "matmul(a, permute(b, [1, 0]))"));

  // Values: the float64 reference against compositions written out.
  using kiln::ref::make_tensor;
  const auto values_of = [](const std::string& text, std::uint64_t seed) {
    const auto bound = bound_of(text);
    return kiln::ref::evaluate(*bound, kiln::ref::random_inputs(*bound, seed)).at(0);
  };
  const auto same_values = [&](const std::string& inputs, const std::string& einsum, const std::string& written) {
    CAPTURE(einsum);
    const auto got = values_of(spec(kDims, inputs, einsum), 3), want = values_of(spec(kDims, inputs, written), 3);
    REQUIRE(got.shape == want.shape);
    for (std::size_t i = 0; i < got.data.size(); ++i) CHECK(got.data[i] == doctest::Approx(want.data[i]).epsilon(1e-12));
  };
  // KernelBench level 1's 11: a 4-d tensor times a matrix over its last axis.
  same_values("  in a: f32[B, C, M, K]\n  in w: f32[K, N]\n", "einsum(\"bcmk,kn->bcmn\", a, w)", "matmul(a, w)");
  // Heads from [B, S, H, D] (attention scores without the permutes written).
  same_values("  in q: f32[B, M, C, K]\n  in k: f32[B, N, C, K]\n", "einsum(\"bmck,bnck->bcmn\", q, k)",
              "matmul(permute(q, [0, 2, 1, 3]), permute(k, [0, 2, 3, 1]))");
  // Two summed letters, a letter summed out of one operand first, an output order of its own.
  same_values("  in a: f32[M, K, C]\n  in b: f32[C, K, N, B]\n", "einsum(\"mkc,cknb->nm\", a, b)",
              "permute(matmul(reshape(a, [M, K * C]), reshape(permute(sum(b, axis=3), [1, 0, 2]), [K * C, N])), [1, 0])");
  // No summed letter: a broadcast product.
  same_values("  in a: f32[M, K]\n  in b: f32[K, N]\n", "einsum(\"mk,kn->kmn\", a, b)",
              "reshape(permute(a, [1, 0]), [K, M, 1]) * reshape(b, [K, 1, N])");

  // A contraction of contiguous operands is one kernel: the reshapes read and write in place.
  const kiln::Plan plan = plan_for(spec("B = 16, I = 64, J = 64, L = 256, K = 768",
                                        "  in a: f32[B, I, J, L]\n  in b: f32[L, K]\n", "einsum(\"bijl,lk->bijk\", a, b)"));
  CAPTURE(plan.text());
  CHECK(plan.kernels.size() == 1);
  CHECK(plan.buffers.size() == 3);
}
