// How a plan shows a kernel's TMA tensor-map arguments (KernelArg::Kind::TensorMap): the
// reads line names the mapped buffer with its box and swizzle, a map the kernel stores
// through gets a writes line, and a plan without maps reads as before (the plan goldens).
#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "generator/plan/plan.h"
#include "generator/memory_plan_util.h"

namespace {

const char* kScale = "op scale {\n  dims M = 256, K = 64\n  in a: bf16[M, K]\n  in s: f32\n  out y = a * bf16(s)\n}\n";

kiln::KernelArg tensor_map_arg(int buffer, const kiln::Plan& plan, bool writes) {
  kiln::KernelArg arg;
  arg.kind = kiln::KernelArg::Kind::TensorMap;
  arg.buffer = buffer;
  arg.dtype = plan.buffers[static_cast<std::size_t>(buffer)].dtype;
  arg.writes = writes;
  arg.name = "tmap_" + plan.buffers[static_cast<std::size_t>(buffer)].name;
  arg.tensor_map.dims = {64, 256};
  arg.tensor_map.strides = {128};
  arg.tensor_map.box = {64, 128};
  arg.tensor_map.swizzle = 128;
  return arg;
}

int buffer_named(const kiln::Plan& plan, const std::string& name) {
  for (std::size_t b = 0; b < plan.buffers.size(); ++b)
    if (plan.buffers[b].name == name) return static_cast<int>(b);
  FAIL("no buffer " << name);
  return -1;
}

}  // namespace

TEST_CASE("plan text: tensor-map arguments") {
  kiln::Plan plan = memory_plan_test::plan_of_text(kScale, "scale");
  REQUIRE(plan.kernels.size() == 1);
  const std::string before = plan.text();
  CHECK(before.find("tensor map") == std::string::npos);
  const int a = buffer_named(plan, "a");
  const int y = buffer_named(plan, "y");
  // The planner of a TMA kernel passes `a` as a map and stores `y` through one.
  auto& args = plan.kernels[0].args;
  for (auto& arg : args)
    if (arg.kind == kiln::KernelArg::Kind::Buffer && arg.buffer == a) arg = tensor_map_arg(a, plan, false);
  args.push_back(tensor_map_arg(y, plan, true));
  const std::string text = plan.text();
  INFO(text);
  // Listed where the buffers and scalars it reads are, in argument order.
  CHECK(text.find(fmt::format("      reads tensor map #{} a (box 64x128, swizzle 128), scalar s\n", a)) !=
        std::string::npos);
  CHECK(text.find(fmt::format("      writes tensor map #{} y (box 64x128, swizzle 128)\n", y)) != std::string::npos);
  // Nothing else changes.
  auto strip = [](std::string s) {
    for (const char* line : {"      reads", "      writes"}) {
      for (std::size_t at; (at = s.find(line)) != std::string::npos;) s.erase(at, s.find('\n', at) + 1 - at);
    }
    return s;
  };
  CHECK(strip(text) == strip(before));
}
