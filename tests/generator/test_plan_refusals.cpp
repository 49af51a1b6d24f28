// A valid spec that no kernel template serves is refused when planned (kiln::UnsupportedError,
// exit 1), located as the checker's errors are: "file:line:col: op NAME: ...", the column of the
// expression that has no template (Ir::where).
#include <doctest/doctest.h>

#include <string>

#include "memory_plan_util.h"

namespace {

std::string refused(const std::string& body, const std::string& arch = "sm_90a") {
  return memory_plan_test::refusal_of("op r {\n" + body + "}\n", "r.kiln", "r", {}, arch);
}

}  // namespace

TEST_CASE("plan-time refusals point at the expression: integer and f64 matmuls and convs") {
  CHECK(refused("  dims M = 4, K = 3, N = 5\n  in a: i32[M, K]\n  in b: i32[K, N]\n  out c = matmul(a, b)\n") ==
        "r.kiln:5:11: op r: matmul of i32 has no gemm template (f32, f16, bf16; cast first, e.g. f32(x))");
  CHECK(refused("  dims M = 4, K = 3, N = 5\n  in a: f64[M, K]\n  in b: f64[K, N]\n  out c = 2 * matmul(a, b)\n") ==
        "r.kiln:5:15: op r: matmul of f64 has no gemm template (f32, f16, bf16; cast first, e.g. f32(x))");
  CHECK(refused("  dims N = 2, C = 4, L = 16, K = 8\n  in x: f64[N, C, L]\n  in w: f64[K, C, 3]\n"
                "  out y = conv1d(x, w)\n") ==
        "r.kiln:5:11: op r: conv1d of f64 has no conv template (f32, f16, bf16; cast first, e.g. f32(x))");
}

TEST_CASE("plan-time refusals point at the expression: an image past 32-bit offsets") {
  const std::string big = refused("  dims N = 1, C = 16, H = 12000, W = 12000, K = 8\n  in x: f32[N, C, H, W]\n"
                                  "  in w: f32[K, C, 3, 3]\n  out y = relu(conv2d(x, w, padding=1))\n",
                                  "sm_80");
  CHECK(big.rfind("r.kiln:5:16: op r: this conv2d reads images of 16 x 12000 x 12000 elements", 0) == 0);
}
