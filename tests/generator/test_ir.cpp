#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "generator/frontend/frontend.h"
#include "golden.h"

namespace {

using kiln::ir::DimExpr;

std::vector<std::filesystem::path> spec_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(KILN_SOURCE_DIR) / "specs"))
    if (entry.path().extension() == ".kiln") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("DimExpr: folding and structural equality") {
  DimExpr h = DimExpr::dim("H");
  auto c = [](std::int64_t v) { return DimExpr::constant(v); };
  CHECK((c(2) + c(3)).as_constant() == 5);
  CHECK((h + c(0)) == h);
  CHECK((h * c(1)) == h);
  CHECK((h * c(0)).as_constant() == 0);
  CHECK(floor_div(h, c(1)) == h);
  CHECK(floor_div(c(-7), c(2)).as_constant() == -4);   // floor, not truncation
  CHECK((h - h).as_constant() == 0);
  // (H + 0 - 2 - 1) / 1 + 1 == H - 2: the 3x3 conv output size
  DimExpr ho = floor_div(h + c(0) - c(1) * (c(3) - c(1)) - c(1), c(1)) + c(1);
  CHECK(ho == h - c(2));
  CHECK(ho.str() == "(H - 2)");
  CHECK((c(3) + h).str() == "(H + 3)");   // constants move right
  CHECK((c(2) * h * c(3)).str() == "(H * 6)");
  // A constant multiplies through a trailing constant: a transposed conv's output size and 2 * H agree.
  CHECK(((h - c(1)) * c(2) + c(2)) == c(2) * h);
  CHECK(((h + c(3)) * c(2)).str() == "((H * 2) + 6)");
  CHECK(floor_div(h - c(1), c(2)).str() == "((H - 1) / 2)");
  CHECK(DimExpr::dim("H") != DimExpr::dim("W"));
  CHECK((h + c(1)) != (h + c(2)));
  std::map<std::string, std::int64_t> dims{{"H", 512}};
  CHECK((floor_div(h - c(1), c(2)) + c(1)).evaluate(dims) == 256);
  CHECK_THROWS_WITH_AS(DimExpr::dim("W").evaluate(dims), "dim W has no value", kiln::ArgumentError);
  // Folding never overflows: the overflowing sum stays symbolic and evaluate() reports it.
  DimExpr big = c(INT64_MAX) + c(1);
  CHECK(!big.as_constant());
  CHECK_THROWS_AS(big.evaluate(dims), kiln::ArgumentError);
}

TEST_CASE("DimExpr::flatten: operands before users, shared nodes once, the value last") {
  using K = kiln::ShapeExpr::Kind;
  const DimExpr h = DimExpr::dim("H") - DimExpr::constant(2);
  const DimExpr e = min(floor_div(h * h, DimExpr::constant(3)), h + DimExpr::dim("W"));
  const kiln::ShapeExpr flat = e.flatten();
  std::vector<K> kinds;
  for (const auto& n : flat.nodes) kinds.push_back(n.kind);
  // H and 2 once: the copies of (H - 2) share them.
  CHECK(std::count(kinds.begin(), kinds.end(), K::Dim) == 2);
  CHECK(std::count(kinds.begin(), kinds.end(), K::Const) == 2);
  CHECK(kinds.back() == K::Min);
  for (std::size_t i = 0; i < flat.nodes.size(); ++i) {
    const auto& n = flat.nodes[i];
    const bool leaf = n.kind == K::Const || n.kind == K::Dim;
    CHECK(leaf == (n.lhs < 0));
    if (!leaf) CHECK((static_cast<std::size_t>(n.lhs) < i && static_cast<std::size_t>(n.rhs) < i));
  }
  CHECK(DimExpr::constant(7).flatten().nodes.size() == 1);
  CHECK(DimExpr::dim("N").flatten().nodes.at(0).dim == "N");
}

TEST_CASE("op kinds: names and classes") {
  using kiln::ir::OpKind;
  CHECK(std::string(kiln::ir::op_kind_name(OpKind::LogSoftmax)) == "log_softmax");
  CHECK(std::string(kiln::ir::op_kind_name(OpKind::Conv)) == "conv");
  CHECK(kiln::ir::is_elementwise(OpKind::Where));
  CHECK(kiln::ir::is_elementwise(OpKind::Cast));
  CHECK(kiln::ir::is_elementwise(OpKind::Dropout));
  CHECK(!kiln::ir::is_elementwise(OpKind::Matmul));
  CHECK(kiln::ir::is_reduction(OpKind::Logsumexp));
  CHECK(!kiln::ir::is_reduction(OpKind::Cumsum));
  CHECK(kiln::ir::is_scan(OpKind::Cummin));
  CHECK(kiln::ir::is_rownorm(OpKind::Softmax));
}

TEST_CASE("IR: signature and lookups") {
  auto spec = kiln::load_spec_file(std::string(KILN_SOURCE_DIR) + "/specs/linear_dropout_softmax.kiln");
  auto ir = kiln::check_op(spec, "linear_dropout_softmax");
  CHECK(ir->signature() ==
        "linear_dropout_softmax(x: f32[B, IN], w: f32[OUT, IN], b: f32[OUT], seed: u64) -> y: f32[B, OUT]");
  REQUIRE(ir->find_dim("OUT") != nullptr);
  CHECK(ir->find_dim("OUT")->default_value == 16384);
  CHECK(ir->find_dim("Q") == nullptr);
  CHECK(ir->params[3].is_tensor == false);
  CHECK(ir->consts[0].value.to_double() == doctest::Approx(0.2));
}

TEST_CASE("IR: the five seed ops exist with their benchmark shapes") {
  std::map<std::string, std::string> want = {
      {"cumsum_exclusive", "B=32768 N=32768"},
      {"min_reduce", "B=128 M=4096 N=4095"},
      {"conv2d_3x3", "N=8 C=64 H=512 W=1024 K=128"},
      {"linear_dropout_softmax", "B=128 IN=16384 OUT=16384"},
      {"matmul_small_k", "M=32768 N=32768 K=64"},
  };
  for (const auto& [name, dims] : want) {
    auto spec = kiln::load_spec_file(std::string(KILN_SOURCE_DIR) + "/specs/" + name + ".kiln");
    auto ir = kiln::check_op(spec, name);
    std::string got;
    for (const auto& d : ir->dims) got += (got.empty() ? "" : " ") + d.name + "=" + std::to_string(*d.default_value);
    CHECK(got == dims);
  }
}

TEST_CASE("IR: print goldens for every op in specs/, symbolic and bound at default dims") {
  int ops = 0;
  for (const auto& file : spec_files()) {
    auto spec = kiln::load_spec_file(file.string());
    for (const auto& ir : kiln::check_all(spec)) {
      CAPTURE(ir->op_name);
      std::string text = kiln::ir::print(*ir) + "\n" + kiln::ir::print(kiln::ir::bind(ir, {}));
      check_golden("ir/" + ir->op_name + ".txt", text);
      // Printing is a pure function of the IR: twice gives the same bytes.
      CHECK(kiln::ir::print(*ir) == kiln::ir::print(*kiln::check_op(spec, ir->op_name)));
      ++ops;
    }
  }
  CHECK(ops >= 20);
}
