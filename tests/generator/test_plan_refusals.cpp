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

TEST_CASE("plan-time refusals point at the expression: a batch broadcast in part, an image past 32-bit offsets") {
  CHECK(refused("  dims B = 2, C = 3, M = 4, K = 5, N = 6\n  in a: f32[B, C, M, K]\n  in b: f32[C, K, N]\n"
                "  out c = matmul(a, b)\n") ==
        "r.kiln:5:11: op r: matmul operand b broadcasts only some batch dims; the gemm templates take an operand with "
        "all of the output's batch dims or none (one batch stride an operand): write it as expand(b, [B, C, K, N]), "
        "which is stored at its full batch first");
  // A transposed operand: the expand is of the transpose, as written.
  CHECK(refused("  dims B = 2, C = 3, M = 4, K = 5, N = 6\n  in a: f32[B, C, M, K]\n  in w: f32[C, N, K]\n"
                "  out c = matmul(a, transpose(w))\n")
            .find("write it as expand(transpose(w), [B, C, K, N])") != std::string::npos);
  // The same product written with the expand plans: the operand stored at its full batch, then the GEMM.
  CHECK(refused("  dims B = 2, C = 3, M = 4, K = 5, N = 6\n  in a: f32[B, C, M, K]\n  in b: f32[C, K, N]\n"
                "  out c = matmul(a, expand(b, [B, C, K, N]))\n") == "planned");
  const std::string big = refused("  dims N = 1, C = 16, H = 12000, W = 12000, K = 8\n  in x: f32[N, C, H, W]\n"
                                  "  in w: f32[K, C, 3, 3]\n  out y = relu(conv2d(x, w, padding=1))\n",
                                  "sm_80");
  CHECK(big.rfind("r.kiln:5:16: op r: this conv2d reads images of 16 x 12000 x 12000 elements", 0) == 0);
}
