// The attention composition pass (generator/plan/fuse_attention.cpp, [Note: attention
// compositions]): which written forms become one Attention node and one flash kernel, which do not
// and what the plan says, that the rewritten graph means what the spec wrote (the float64
// reference of both), and that the fused units compile with NVRTC for sm_90a.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "golden.h"
#include "memory_plan_util.h"
#include "reference/reference.h"

namespace {

using memory_plan_test::contains;
using memory_plan_test::sources_of;

// An op `a` with q, k, v: <dt>[B, H, S, D] and the output `body` computes.
std::string spec(const std::string& body, const std::string& dims = "B = 2, H = 3, S = 200, D = 64",
                 const std::string& dt = "f16", const std::string& extra = "") {
  return "op a {\n  dims " + dims + "\n  in q: " + dt + "[B, H, S, D]\n  in k: " + dt + "[B, H, S, D]\n  in v: " + dt +
         "[B, H, S, D]\n" + extra + body + "\n}\n";
}

kiln::Plan plan_for(const std::string& text, const char* arch = "sm_90a") {
  auto parsed = kiln::parse_spec(text, "a.kiln");
  auto bound = std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(parsed, "a"), {}));
  return kiln::make_plan(bound, kiln::Target::for_arch(arch));
}

const kiln::ir::Node* attention_node(const kiln::Plan& plan) {
  for (const auto& n : plan.bound->ir->nodes)
    if (n.kind == kiln::ir::OpKind::Attention) return &n;
  return nullptr;
}

// The plan is one flash_attention kernel and its fusions line says `fusion`; its Attention node,
// copied (the plan may be a temporary).
kiln::ir::Node check_fused(const kiln::Plan& plan, const char* fusion) {
  CAPTURE(plan.text());
  CHECK(plan.kernels.size() == 1);
  CHECK(plan.kernels.at(0).template_name == "flash_attention");
  REQUIRE(plan.fusions.size() == 1);
  CHECK(contains(plan.fusions[0], fusion));
  const auto* n = attention_node(plan);
  REQUIRE(n != nullptr);
  return *n;
}

const char* kPlain = "  out o = matmul(softmax(matmul(q, transpose(k)) * 0.125, axis=-1), v)";

}  // namespace

TEST_CASE("fuse_attention: the written forms plan as one flash kernel") {
  SUBCASE("scale after the product, f16") {
    const auto n = check_fused(plan_for(spec(kPlain)), "line 6: attention, 200 queries x 200 keys, head dims 64 and 64: "
                                                        "one flash attention kernel");
    CHECK(n.attention.has_scale);
    CHECK(n.attention.scale == 0.125);
    CHECK_FALSE(n.attention.causal);
    CHECK(n.operands.size() == 3);
  }
  SUBCASE("causal, the mask kept where col <= row, bf16, head dim 128") {
    const auto n = check_fused(
        plan_for(spec("  let s = matmul(q, transpose(k)) * 0.1\n"
                      "  out o = matmul(softmax(where(iota(S, S, axis=1) <= iota(S, S, axis=0), s, -3.4e38), axis=-1), v)",
                      "B = 1, H = 2, S = 300, D = 128", "bf16")),
        "head dims 128 and 128, causal: one flash attention kernel");
    CHECK(n.attention.causal);
  }
  SUBCASE("causal as the complement where(row < col, fill, s), scaled after the mask by a positive literal") {
    const auto n = check_fused(
        plan_for(spec("  let s = matmul(q, transpose(k))\n"
                      "  out o = matmul(softmax(where(iota(S, S, axis=0) < iota(S, S, axis=1), -1e9, s) * 0.5, axis=-1), v)")),
        "causal");
    CHECK(n.attention.causal);
  }
  SUBCASE("divided by a scalar argument: a kernel argument") {
    const kiln::Plan plan = plan_for(spec("  out o = matmul(softmax(matmul(q, transpose(k)) / t, axis=-1), v)",
                                          "B = 2, H = 3, S = 200, D = 64", "f16", "  in t: f16\n"));
    const auto n = check_fused(plan, "one flash attention kernel");
    CHECK(n.attention.divide);
    CHECK(n.operands.size() == 4);
    CHECK(contains(sources_of(plan)[0].text, "1.0f / static_cast<float>(t)"));
  }
  SUBCASE("heads in the middle, k broadcast over them through a reshape: maps over the inputs' own strides") {
    const kiln::Plan plan = plan_for(
        "op a {\n  dims B = 2, S = 77, H = 4, D = 64\n  in q: f16[B, S, H, D]\n  in k: f16[B, S, D]\n"
        "  in v: f16[B, S, H, D]\n"
        "  out o = matmul(softmax(matmul(permute(q, [0, 2, 1, 3]), transpose(reshape(k, [B, 1, S, D]))), axis=-1), "
        "permute(v, [0, 2, 1, 3]))\n}\n");
    check_fused(plan, "77 queries x 77 keys");
    const auto& c = std::get<kiln::AttentionConfig>(plan.kernels[0].config);
    CHECK(c.k_bcast == 2);   // the inner batch dim (heads)
    CHECK(c.q_bcast == 0);
    CHECK(c.inner == 4);
    // q's map: {D, S, H, B} with S's stride H * D elements, H's D, B's S * H * D (bytes: x 2).
    const auto& map_q = plan.kernels[0].args.at(plan.kernels[0].args.size() - 3).tensor_map;
    CHECK(map_q.dims == std::vector<std::int64_t>{64, 77, 4, 2});
    CHECK(map_q.strides == std::vector<std::int64_t>{4 * 64 * 2, 64 * 2, 77 * 4 * 64 * 2});
  }
  SUBCASE("a transpose of a permute (heads in the middle of k too): the permutes compose") {
    const kiln::Plan plan = plan_for(
        "op a {\n  dims B = 2, S = 50, H = 3\n  in q: f16[B, H, S, 128]\n  in k: f16[B, S, H, 128]\n"
        "  in v: f16[B, H, S, 128]\n"
        "  out o = matmul(softmax(matmul(q, transpose(permute(k, [0, 2, 1, 3]))), axis=-1), v)\n}\n");
    check_fused(plan, "50 queries x 50 keys");
    // k's map: {D, S, H, B}: S steps H * D elements, H steps D.
    const auto& map_k = plan.kernels[0].args.at(plan.kernels[0].args.size() - 2).tensor_map;
    CHECK(map_k.dims == std::vector<std::int64_t>{128, 50, 3, 2});
    CHECK(map_k.strides == std::vector<std::int64_t>{3 * 128 * 2, 128 * 2, 50 * 3 * 128 * 2});
  }
  SUBCASE("an epilogue after the output is fused into the store") {
    const kiln::Plan plan = plan_for(spec("  out o = relu(matmul(softmax(matmul(q, transpose(k)), axis=-1), v)) * 2.0"));
    check_fused(plan, "one flash attention kernel");
    CHECK(contains(sources_of(plan)[0].text, "struct Epilogue"));
  }
}

TEST_CASE("fuse_attention: what does not fuse, and what the plan says") {
  auto refused = [](const kiln::Plan& plan, const char* why) {
    CAPTURE(plan.text());
    REQUIRE(plan.fusions.size() == 1);
    CHECK(contains(plan.fusions[0], ": not fused, "));
    CHECK(contains(plan.fusions[0], why));
    CHECK(attention_node(plan) == nullptr);
  };
  SUBCASE("a target without wgmma") { refused(plan_for(spec(kPlain), "sm_80"), "needs sm_90a"); }
  SUBCASE("f32") { refused(plan_for(spec(kPlain, "B = 2, H = 3, S = 200, D = 64", "f32")), "f32 attention has no fused kernel"); }
  SUBCASE("a head dim the kernel does not take") {
    refused(plan_for(spec(kPlain, "B = 2, H = 3, S = 200, D = 80")), "head dims 80 and 80");
  }
  SUBCASE("the scores read elsewhere") {
    refused(plan_for(spec("  let s = matmul(q, transpose(k))\n  out m = max(s, axis=-1)\n"
                          "  out o = matmul(softmax(s, axis=-1), v)")),
            "the scores are read elsewhere");
  }
  SUBCASE("a mask that is not causal") {
    refused(plan_for(spec("  let s = matmul(q, transpose(k))\n"
                          "  out o = matmul(softmax(where(iota(S, S, axis=1) < iota(S, S, axis=0), s, -1e9), axis=-1), v)")),
            "is not a causal mask");
  }
  SUBCASE("a fill that is not -inf in the dtype") {
    refused(plan_for(spec("  let s = matmul(q, transpose(k))\n"
                          "  out o = matmul(softmax(where(iota(S, S, axis=1) <= iota(S, S, axis=0), s, -100.0), axis=-1), v)")),
            "is not a causal mask");
  }
  SUBCASE("the mask below a scale that is a run-time argument") {
    refused(plan_for(spec("  let s = where(iota(S, S, axis=1) <= iota(S, S, axis=0), matmul(q, transpose(k)), -1e9)\n"
                          "  out o = matmul(softmax(s * t, axis=-1), v)",
                          "B = 2, H = 3, S = 200, D = 64", "f16", "  in t: f16\n")),
            "the mask is applied before a scale");
  }
  SUBCASE("an additive bias between the product and the softmax") {
    refused(plan_for(spec("  in bias: f16[S, S]\n  out o = matmul(softmax(matmul(q, transpose(k)) + bias, axis=-1), v)")),
            "is not a scale or a causal mask");
  }
  SUBCASE("k stored transposed (kᵀ not a view with the head dim contiguous)") {
    refused(plan_for("op a {\n  dims B = 2, S = 64, D = 64\n  in q: f16[B, S, D]\n  in kt: f16[B, D, S]\n"
                     "  in v: f16[B, S, D]\n  out o = matmul(softmax(matmul(q, kt), axis=-1), v)\n}\n"),
            "is not a view of an input with the head dim contiguous");
  }
}

TEST_CASE("fuse_attention: the rewritten graph means what the spec wrote (float64 reference of both)") {
  // Each 16-bit spec against itself in f32 (the same input values): the fused node rounds only its
  // output, so it is within the output's rounding of the f32 composition; the 16-bit composition
  // rounds the scores and P as well, and is held to the dtype's tolerance only.
  struct Case {
    std::string body, dims, dt, extra;
  };
  const Case cases[] = {
      {kPlain, "B = 1, H = 2, S = 33, D = 64", "f16", ""},
      {"  let s = matmul(q, transpose(k)) * 0.125\n"
       "  out o = matmul(softmax(where(iota(S, S, axis=1) <= iota(S, S, axis=0), s, -3.4e38), axis=-1), v)",
       "B = 2, H = 1, S = 7, D = 64", "bf16", ""},
      {"  out o = matmul(softmax(matmul(q, transpose(k)) / t, axis=-1), v)", "B = 1, H = 3, S = 20, D = 128", "f16",
       "  in t: f16\n"},
  };
  auto bind = [](const std::string& text) {
    auto parsed = kiln::parse_spec(text, "t.kiln");
    return std::make_shared<const kiln::ir::BoundIr>(kiln::ir::bind(kiln::check_op(parsed, "a"), {}));
  };
  for (const auto& c : cases) {
    const std::string text = spec(c.body, c.dims, c.dt, c.extra);
    std::string extra32 = c.extra;
    if (!extra32.empty()) extra32 = "  in t: f32\n";
    CAPTURE(text);
    const auto bound = bind(text), bound32 = bind(spec(c.body, c.dims, "f32", extra32));
    const kiln::Plan plan = kiln::make_plan(bound, kiln::Target::for_arch("sm_90a"));
    REQUIRE(attention_node(plan) != nullptr);
    auto inputs = kiln::ref::random_inputs(*bound, 11);
    for (auto& in : inputs) {
      if (!in.is_tensor && c.dt == "f16") in.scalar.f = 2.0 + in.scalar.f;   // a temperature of 2..3
      in.scalar.f = kiln::ref::round_to(in.scalar.dtype, in.scalar.f);
    }
    auto inputs32 = inputs;
    for (auto& in : inputs32) (in.is_tensor ? in.tensor.dtype : in.scalar.dtype) = kiln::DType::f32;
    const auto composed16 = kiln::ref::evaluate(*bound, inputs);
    const auto fused = kiln::ref::evaluate(*plan.bound, inputs);
    const auto composed32 = kiln::ref::evaluate(*bound32, inputs32);
    double worst_fused = 0, worst_composed = 0, scale = 0;
    for (std::size_t i = 0; i < composed32[0].data.size(); ++i) {
      worst_fused = std::max(worst_fused, std::fabs(fused[0].data[i] - composed32[0].data[i]));
      worst_composed = std::max(worst_composed, std::fabs(composed16[0].data[i] - composed32[0].data[i]));
      scale = std::max(scale, std::fabs(composed32[0].data[i]));
    }
    CHECK(scale > 0.01);
    CHECK(worst_fused <= scale * (c.dt == "bf16" ? 0x1p-8 : 0x1p-11));   // half an ulp of the largest output
    CHECK(worst_composed < 3e-2);
  }
}

TEST_CASE("fuse_attention: every fused unit compiles with NVRTC for sm_90a, and sm_80 plans it unfused") {
  const std::string texts[] = {
      spec(kPlain),
      spec("  let s = matmul(q, transpose(k)) * 0.0625\n"
           "  out o = matmul(softmax(where(iota(S, S, axis=1) <= iota(S, S, axis=0), s, -3.4e38), axis=-1), v)",
           "B = 1, H = 2, S = 300, D = 256", "bf16"),
      spec("  out o = matmul(softmax(matmul(q, transpose(k)) / t, axis=-1), v) + 1.0", "B = 2, H = 3, S = 200, D = 128",
           "f16", "  in t: f16\n"),
  };
  for (const auto& text : texts) {
    CAPTURE(text);
    CHECK(memory_plan_test::check_units_compile(plan_for(text), "sm_90a") == 1);
    const kiln::Plan unfused = plan_for(text, "sm_80");
    CHECK(attention_node(unfused) == nullptr);
    CHECK(memory_plan_test::check_units_compile(unfused, "sm_80") == static_cast<int>(unfused.kernels.size()));
  }
}

TEST_CASE("fuse_attention: plan text and generated source goldens of specs/attention.kiln") {
  // sm_90a, where each op is one flash kernel; the benchmark's shape for the first (batch 32 x 32
  // heads x 4096 x 128), and the others at their defaults.
  const memory_plan_test::Case cases[] = {
      {"attention", "attention_f16", "bench", {{"B", 32}, {"H", 32}, {"S", 4096}, {"T", 4096}}, {}},
      {"attention", "attention_causal_bf16", "default", {}, {}},
      {"attention", "attention_bshd_f16", "default", {}, {}},
      {"attention", "attention_causal_d256", "default", {}, {}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.op);
    const kiln::Plan plan = memory_plan_test::plan_of(c, "sm_90a");
    REQUIRE(attention_node(plan) != nullptr);
    check_golden("source/" + c.op + "_" + c.tag + "_sm90a.cu",
                 plan.text() + "\n" + memory_plan_test::all_sources(sources_of(plan)));
  }
}

TEST_CASE("fuse_attention: the unit order covers every block once, each batch's longest first") {
  // [Note: the attention unit order] (config/attention.h).
  for (const long long blocks : {1LL, 3LL, 32LL}) {
    const long long batches = 5;
    std::vector<int> seen(static_cast<std::size_t>(blocks * batches), 0);
    for (long long u = 0; u < blocks * batches; ++u) {
      const auto a = kiln::attention_unit(blocks, u);
      REQUIRE(a.batch >= 0);
      REQUIRE(a.batch < batches);
      REQUIRE(a.block >= 0);
      REQUIRE(a.block < blocks);
      if (u % blocks == 0) CHECK(a.block == blocks - 1);
      ++seen[static_cast<std::size_t>(a.batch * blocks + a.block)];
    }
    CHECK(std::count(seen.begin(), seen.end(), 1) == blocks * batches);
  }
  // The counter is a zeroed workspace of the kernel.
  const kiln::Plan plan = plan_for(spec(kPlain));
  REQUIRE(plan.kernels.size() == 1);
  REQUIRE(plan.kernels[0].zero_before.size() == 1);
  CHECK(plan.buffers.at(static_cast<std::size_t>(plan.kernels[0].zero_before[0])).bytes == 4);
}
