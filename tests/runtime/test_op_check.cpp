// The reference side of a GPU check (runtime/op_check.h), on the CPU: what the float64 reference
// gives a comparison, and the tolerance each output is held to. No GPU is involved.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "generator/frontend/frontend.h"
#include "reference/reference.h"
#include "runtime/op_check.h"

namespace {

const char* kSpec = R"(op linear_softmax {
  dims B = 3, K = 4000, N = 5
  in  x: f32[B, K]
  in  w: f32[N, K]
  out y = softmax(matmul(x, transpose(w)), axis=1)
  out l = log_softmax(matmul(x, transpose(w)), axis=1)
  out s = sum(matmul(x, transpose(w)), axis=1)
}
op conv_softmax {
  dims N = 1, C = 8, H = 6, W = 6, K = 4
  in  x: f32[N, C, H, W]
  in  w: f32[K, 4, 3, 3]
  out y = softmax(conv2d(x, w, groups=2), axis=1)
}
op plain_softmax {
  dims B = 3, N = 5
  in  x: f32[B, N]
  out y = softmax(x, axis=1)
}
)";

struct Case {
  std::shared_ptr<const kiln::ir::Ir> ir;
  std::shared_ptr<const kiln::ir::BoundIr> bound;
  std::vector<kiln::ref::HostValue> inputs;
};

Case make_case(const std::string& op) {
  Case c;
  c.ir = kiln::check_op(kiln::parse_spec(kSpec, "t.kiln"), op);
  c.bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(c.ir, {}));
  c.inputs = kiln::ref::random_inputs(*c.bound, 7);
  return c;
}

double max_abs(const kiln::ref::HostTensor& t) {
  double m = 0;
  for (double v : t.data) m = std::max(m, std::fabs(v));
  return m;
}

}  // namespace

TEST_CASE("reference_outputs: a softmax over a contraction carries 2 u sqrt(K) max|logit|, other outputs none") {
  const Case c = make_case("linear_softmax");
  const kiln::Expected e = kiln::reference_outputs(*c.bound, c.inputs);
  REQUIRE(e.outputs.size() == 3);
  REQUIRE(e.contraction_error.size() == 3);
  const auto plain = kiln::ref::evaluate(*c.bound, c.inputs);   // the logits are not among the outputs
  for (std::size_t o = 0; o < plain.size(); ++o) {
    CHECK(e.outputs[o].shape == plain[o].shape);
    CHECK(e.outputs[o].data == plain[o].data);
  }
  // The logits, computed on their own: the matmul as the op's only output.
  const auto logits_ir = kiln::check_op(kiln::parse_spec(R"(op z {
  dims B = 3, K = 4000, N = 5
  in  x: f32[B, K]
  in  w: f32[N, K]
  out z = matmul(x, transpose(w))
})", "z.kiln"), "z");
  const auto logits = kiln::ref::evaluate(kiln::ir::bind(logits_ir, {}), c.inputs);
  const double want = 2.0 / 16777216.0 * std::sqrt(4000.0) * max_abs(logits[0]);
  CHECK(want > 0);
  CHECK(e.contraction_error[0] == doctest::Approx(want).epsilon(1e-12));   // softmax
  CHECK(e.contraction_error[1] == doctest::Approx(want).epsilon(1e-12));   // log_softmax
  CHECK(e.contraction_error[2] == 0);                                      // a sum: the table's bound
}

TEST_CASE("reference_outputs: a conv's terms are (C / groups) x kernel positions, and no contraction gives none") {
  const Case conv = make_case("conv_softmax");
  const kiln::Expected e = kiln::reference_outputs(*conv.bound, conv.inputs);
  REQUIRE(e.contraction_error.size() == 1);
  const auto conv_ir = kiln::check_op(kiln::parse_spec(R"(op z {
  dims N = 1, C = 8, H = 6, W = 6, K = 4
  in  x: f32[N, C, H, W]
  in  w: f32[K, 4, 3, 3]
  out z = conv2d(x, w, groups=2)
})", "z.kiln"), "z");
  const auto logits = kiln::ref::evaluate(kiln::ir::bind(conv_ir, {}), conv.inputs);
  // 4 channels a group x 3 x 3 positions: 36 terms an output.
  CHECK(e.contraction_error[0] == doctest::Approx(2.0 / 16777216.0 * 6.0 * max_abs(logits[0])).epsilon(1e-12));
  const Case plain = make_case("plain_softmax");
  const kiln::Expected p = kiln::reference_outputs(*plain.bound, plain.inputs);
  CHECK(p.outputs.size() == 1);
  CHECK(p.contraction_error.empty());
}

TEST_CASE("compare_outputs widens a contraction's softmax by its error, and only where it is not tf32") {
  const Case c = make_case("linear_softmax");
  const kiln::Expected e = kiln::reference_outputs(*c.bound, c.inputs);
  const double widen = e.contraction_error[0];
  REQUIRE(widen > 1e-4);   // K = 4000 with uniform inputs: logits of tens
  // Every softmax output off by half the widened relative bound; log_softmax off by half its
  // widened absolute bound; the sum exact.
  std::vector<kiln::ref::HostTensor> got = e.outputs;
  for (double& v : got[0].data) v *= 1 + 0.5 * (1e-4 + widen);
  for (double& v : got[1].data) v += 0.5 * (1e-4 + widen);
  bool ok = true;
  auto cmp = kiln::compare_outputs(*c.ir, got, e, /*tf32=*/false, &ok);
  CHECK(ok);
  // The same values against the table's bound alone (no contraction error given): outside.
  kiln::Expected table = e;
  table.contraction_error.clear();
  ok = true;
  cmp = kiln::compare_outputs(*c.ir, got, table, false, &ok);
  CHECK_FALSE(ok);
  CHECK_FALSE(cmp[0].ok);
  CHECK_FALSE(cmp[1].ok);
  CHECK(cmp[2].ok);
  // Twice the widened bound is outside it: the widening is a bound, not a pass.
  for (double& v : got[0].data) v *= 1 + 2 * (1e-4 + widen);
  ok = true;
  cmp = kiln::compare_outputs(*c.ir, got, e, false, &ok);
  CHECK_FALSE(cmp[0].ok);
}
