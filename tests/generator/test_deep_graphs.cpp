// Op graphs as deep as a spec's chain of lets and as wide as a DAG can be: check, bind, plan
// and emit (the path of `kiln gen`) walk them with explicit stacks, memoize shared nodes and
// never re-walk the graph per node, so none of these overflows the stack, blows up
// exponentially or takes quadratic time (issue 16). The small chain's source is a golden taken
// before the walks became iterative: the order of emitted values did not change.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "generator/emit/emit.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "generator/emit/templates.h"
#include "golden.h"
#include "memory_plan_util.h"

namespace {

using memory_plan_test::all_sources;
using memory_plan_test::plan_of_text;
using memory_plan_test::sources_of;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// `op <name> { dims ...; ins; body }`
std::string spec(const std::string& name, const std::string& dims, const std::string& ins, const std::string& body) {
  return "op " + name + " {\n  dims " + dims + "\n" + ins + body + "}\n";
}

}  // namespace

TEST_CASE("100,000 chained elementwise lets generate one kernel") {
  // `let t_i = t_{i-1} * 0.5 + 1.0`: ~8,200 of these overflowed the recursive emitter.
  constexpr int kLets = 100000;
  std::string body = "  let a0 = x * 0.5 + 1.0\n";
  body.reserve(static_cast<std::size_t>(kLets) * 30);
  for (int i = 1; i < kLets; ++i) body += "  let a" + std::to_string(i) + " = a" + std::to_string(i - 1) + " * 0.5 + 1.0\n";
  body += "  out y = a" + std::to_string(kLets - 1) + "\n";
  const auto plan = plan_of_text(spec("chain", "N = 1024", "  in x: f32[N]\n", body), "chain");
  REQUIRE(plan.kernels.size() == 1);
  const auto sources = sources_of(plan);
  REQUIRE(sources.size() == 1);
  // One named value per multiply and per add; the literals are spelled inline.
  CHECK(count(sources[0].text, " = (") == 2u * kLets);
  CHECK(contains(sources[0].text, "// line " + std::to_string(kLets + 3) + ": let a" + std::to_string(kLets - 1)));
}

TEST_CASE("100 lets of 199-term sums generate one kernel") {
  std::string body = "  let t0 = x\n";
  for (int i = 1; i <= 100; ++i) {
    body += "  let t" + std::to_string(i) + " = t" + std::to_string(i - 1);
    for (int k = 1; k < 199; ++k) body += " + t" + std::to_string(i - 1);
    body += "\n";
  }
  body += "  out y = t100\n";
  const auto plan = plan_of_text(spec("sums", "N = 1024", "  in x: f32[N]\n", body), "sums");
  REQUIRE(plan.kernels.size() == 1);
  const auto sources = sources_of(plan);
  CHECK(count(sources[0].text, " = (") == 100u * 198u);
}

TEST_CASE("wide DAGs: a value doubled 100 times feeds every kind of anchor without an exponential walk") {
  // t_i = t_{i-1} + t_{i-1}: 2^100 paths from the output to x, 101 values.
  std::string body = "  let t0 = x\n";
  for (int i = 1; i <= 100; ++i)
    body += "  let t" + std::to_string(i) + " = t" + std::to_string(i - 1) + " + t" + std::to_string(i - 1) + "\n";
  SUBCASE("elementwise, reduction, scan and softmax prologues inline it, once per value") {
    const std::string text = spec("wide", "B = 8, N = 64", "  in x: f32[B, N]\n",
                                  body + "  out e = t100 * 2.0\n  out s = sum(t100, axis=1)\n"
                                         "  out c = cumsum(t100, axis=0)\n  out m = softmax(t100, axis=1)\n");
    const auto plan = plan_of_text(text, "wide");
    for (const auto& src : sources_of(plan)) CHECK(count(src.text, " = (") <= 100u + 10u);
  }
  SUBCASE("through transposes: each value at two coordinate orders at most") {
    std::string t = "  let t0 = x\n";
    for (int i = 1; i <= 100; ++i)
      t += "  let t" + std::to_string(i) + " = t" + std::to_string(i - 1) + " + transpose(t" + std::to_string(i - 1) + ")\n";
    const auto plan = plan_of_text(spec("wide_t", "N = 64", "  in x: f32[N, N]\n",
                                        t + "  out y = t100\n  out s = sum(t100, axis=1)\n"),
                                   "wide_t");
    for (const auto& src : sources_of(plan)) CHECK(count(src.text, " = (") <= 2u * 100u + 10u);
  }
  SUBCASE("a matmul operand: stored once by an elementwise kernel") {
    const auto plan = plan_of_text(spec("wide_mm", "N = 64", "  in x: f32[N, N]\n", body + "  out y = matmul(t100, x)\n"),
                                   "wide_mm");
    REQUIRE(plan.kernels.size() == 2);
    CHECK(plan.kernels[0].template_name == "elementwise");
  }
}

TEST_CASE("one value read by thousands: shared outputs, scalar inputs, side operands of an epilogue") {
  SUBCASE("5,000 outputs of one value join one elementwise kernel") {
    std::string body = "  let a = exp(x)\n";
    for (int i = 0; i < 5000; ++i) body += "  out o" + std::to_string(i) + " = a + " + std::to_string(i) + ".0\n";
    const auto plan = plan_of_text(spec("fan", "N = 64", "  in x: f32[N]\n", body), "fan");
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].stores.size() == 5000u);
    CHECK(count(sources_of(plan)[0].text, "expf(") == 1u);   // computed once, read 5,000 times
  }
  SUBCASE("a chain over 5,000 scalar inputs") {
    std::string ins = "  in x: f32[N]\n", body = "  let t0 = x * s0\n";
    for (int i = 0; i < 5000; ++i) ins += "  in s" + std::to_string(i) + ": f32\n";
    for (int i = 1; i < 5000; ++i) body += "  let t" + std::to_string(i) + " = t" + std::to_string(i - 1) + " * s" + std::to_string(i) + "\n";
    const auto plan = plan_of_text(spec("scalars", "N = 64", ins, body + "  out y = t4999\n"), "scalars");
    REQUIRE(plan.kernels.size() == 1);
    CHECK(plan.kernels[0].args.size() == 5000u + 2u);
    CHECK(contains(sources_of(plan)[0].text, " * s4999)"));
  }
  SUBCASE("a scan's epilogue of 20,000 steps, each with a side chain of its own") {
    std::string body = "  let s = cumsum(x, axis=0)\n  let u0 = x * 2.0\n  let e0 = s + u0\n";
    for (int i = 1; i < 20000; ++i) {
      const std::string n = std::to_string(i), p = std::to_string(i - 1);
      body += "  let u" + n + " = u" + p + " * 2.0\n  let e" + n + " = e" + p + " + u" + n + "\n";
    }
    const auto plan = plan_of_text(spec("epi", "N = 64", "  in x: f32[N]\n", body + "  out y = e19999\n"), "epi");
    REQUIRE(plan.kernels.size() == 1);   // the whole chain is the scan's epilogue
    CHECK(plan.kernels[0].stores[0].node == static_cast<int>(plan.ir().nodes.size()) - 1);
    CHECK(sources_of(plan).size() == 1u);
  }
}

TEST_CASE("long chains of anchors: one kernel each, planned and emitted in linear time") {
  SUBCASE("10,000 chained scans") {
    std::string body = "  let t0 = cumsum(x, axis=0)\n";
    for (int i = 1; i < 10000; ++i) body += "  let t" + std::to_string(i) + " = cumsum(t" + std::to_string(i - 1) + ", axis=0)\n";
    const auto plan = plan_of_text(spec("scans", "N = 64", "  in x: f32[N]\n", body + "  out y = t9999\n"), "scans");
    CHECK(plan.kernels.size() == 10000u);
    CHECK(sources_of(plan).size() == 10000u);
  }
  SUBCASE("20,000 chained convs: output sizes nest 40,000 deep, shared, and bind evaluates each once") {
    std::string body = "  let t0 = conv2d(x, w, padding=1)\n";
    for (int i = 1; i < 20000; ++i) body += "  let t" + std::to_string(i) + " = conv2d(t" + std::to_string(i - 1) + ", w, padding=1)\n";
    auto file = kiln::parse_spec(spec("convs", "N = 1, C = 4, H = 8, W = 8, R = 3", "  in x: f32[N, C, H, W]\n  in w: f32[C, C, R, R]\n",
                                      body + "  out y = t19999\n"),
                                 "convs.kiln");
    auto ir = kiln::check_op(file, "convs");
    const auto bound = kiln::ir::bind(ir, {});
    CHECK(bound.shape(ir->outputs[0].node) == std::vector<std::int64_t>{1, 4, 8, 8});
    const auto& deep = ir->node(ir->outputs[0].node).shape[2];
    CHECK(deep == deep);
    CHECK(deep.str().size() > 40000u);
    // Op::shape_rules' flat program of it: built without recursing, each node once, its operands
    // before it, and one loop evaluates it to the bound extent.
    const kiln::ShapeExpr flat = deep.flatten();
    CHECK(flat.nodes.size() > 40000u);
    CHECK(flat.nodes.size() < 200000u);
    std::vector<std::int64_t> values;
    for (std::size_t i = 0; i < flat.nodes.size(); ++i) {
      const auto& n = flat.nodes[i];
      using K = kiln::ShapeExpr::Kind;
      if (n.kind == K::Const || n.kind == K::Dim) {
        values.push_back(n.kind == K::Const ? n.value : bound.dims.at(n.dim));
        continue;
      }
      REQUIRE((n.lhs >= 0 && n.rhs >= 0 && static_cast<std::size_t>(n.lhs) < i && static_cast<std::size_t>(n.rhs) < i));
      const std::int64_t a = values[static_cast<std::size_t>(n.lhs)], b = values[static_cast<std::size_t>(n.rhs)];
      values.push_back(n.kind == K::Add ? a + b : n.kind == K::Sub ? a - b : n.kind == K::Mul ? a * b
                       : n.kind == K::FloorDiv ? a / b : std::min(a, b));
    }
    CHECK(values.back() == 8);
  }
  SUBCASE("5,000 chained convs beside a dyn elementwise output: each nested size node walked once") {
    // dyn_dim_of_anchor and generic_dims share their walks: quadratic would be 10^8 node visits.
    std::string body = "  let t0 = conv2d(x, w, padding=1)\n";
    for (int i = 1; i < 5000; ++i) body += "  let t" + std::to_string(i) + " = conv2d(t" + std::to_string(i - 1) + ", w, padding=1)\n";
    auto file = kiln::parse_spec(spec("convs", "N = 1, C = 4, H = 8, W = 8, R = 3, dyn M = 100",
                                      "  in x: f32[N, C, H, W]\n  in w: f32[C, C, R, R]\n  in v: f32[M]\n",
                                      body + "  out y = t4999\n  out z = v * 2.0\n"),
                                 "convs.kiln");
    auto ir = kiln::check_op(file, "convs");
    // (N, the convs' batch, is free too: [Note: dyn conv].)
    CHECK(kiln::generic_dims(*ir) == std::set<std::string>{"M", "N"});
    const auto plan = kiln::make_plan(std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(ir, {})),
                                      kiln::Target::for_arch("sm_90"));
    CHECK(plan.kernels.size() >= 5001u);
    CHECK(plan.dyn_buckets.at("M") == kiln::DynBucket::General);
  }
}

TEST_CASE("100,000 chained convs check, and their nested sizes are freed without recursing") {
  std::string body = "  let t0 = conv2d(x, w, padding=1)\n";
  for (int i = 1; i < 100000; ++i) body += "  let t" + std::to_string(i) + " = conv2d(t" + std::to_string(i - 1) + ", w, padding=1)\n";
  auto ir = kiln::check_op(kiln::parse_spec(spec("convs", "N = 1, C = 4, H = 8, W = 8, R = 3",
                                                 "  in x: f32[N, C, H, W]\n  in w: f32[C, C, R, R]\n",
                                                 body + "  out y = t99999\n"),
                                            "convs.kiln"),
                           "convs");
  CHECK(ir->nodes.size() > 100000u);
  ir.reset();   // the last node's size expression is 200,000 deep: ~DimExpr frees it level by level
}

TEST_CASE("an operand stored for an anchor runs after the kernels it reads") {
  // e reads softmax(x), which is stored by the rownorm kernel; e must not join the earlier
  // elementwise kernel of the same shape (it did: kernel 0 read s2 before kernel 1 wrote it).
  const auto plan = plan_of_text(R"(op f {
  dims M = 64, K = 64
  in x: f32[M, K]
  in w: f32[K, K]
  out a = x * 2.0
  let s = softmax(x, axis=1)
  out s2 = s
  let e = s * 3.0
  out y = matmul(e, w)
}
)", "f");
  REQUIRE(plan.kernels.size() == 4);
  CHECK(plan.kernels[0].stores.size() == 1);   // a only
  CHECK(plan.kernels[1].template_name == "rownorm");
  CHECK(plan.kernels[2].template_name == "elementwise");
  CHECK(plan.buffers[static_cast<std::size_t>(plan.kernels[2].stores[0].buffer)].name == "e");
  CHECK(plan.kernels[3].template_name == "gemm");
}

TEST_CASE("a small chain's source is what the recursive emitter wrote") {
  // Broadcasting, a transpose view, a scalar, a literal read twice and a value read twice:
  // the order of values and their numbering are part of the golden.
  const auto plan = plan_of_text(R"(op small_chain {
  dims N = 8
  in x: f32[N, N]
  in b: f32[N]
  in sq: f32[N, N]
  in alpha: f32
  let t = x * alpha + b
  let u = t * t - 2.0
  let v = exp(u) + sq + transpose(sq)
  out y = v * 2.0 + relu(t)
  out r = sum(v, axis=1)
}
)", "small_chain");
  kiln::testing::check_golden("source/small_chain.cu", all_sources(sources_of(plan)));
}
