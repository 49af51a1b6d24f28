// The C interface returns the CLI's exit codes (kiln_capi.h, the README's table): each
// code is reached through the interface itself, with a message in err.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/capi/kiln_capi.h"

namespace {

const std::string kElementwise = std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln";

struct Runtime {
  kiln_runtime* rt = nullptr;
  char err[512] = {};
  Runtime() { REQUIRE(kiln_runtime_new("sm_80", "", &rt, err, sizeof err) == KILN_OK); }
  ~Runtime() { kiln_runtime_free(rt); }
};

}  // namespace

TEST_CASE("C interface: success is KILN_OK and every failure has its code") {
  Runtime r;
  kiln_op* op = nullptr;
  CHECK(kiln_op_load(r.rt, kElementwise.c_str(), "relu_add", "fp32", &op, r.err, sizeof r.err) == KILN_OK);
  REQUIRE(op != nullptr);

  // The user's input: an unknown op, a missing file, a spec error, an unknown precision.
  kiln_op* other = nullptr;
  CHECK(kiln_op_load(r.rt, kElementwise.c_str(), "nope", "fp32", &other, r.err, sizeof r.err) == KILN_ERROR_INPUT);
  CHECK(std::string(r.err).find("nope") != std::string::npos);
  CHECK(kiln_op_load(r.rt, "/nonexistent/spec.kiln", "f", "fp32", &other, r.err, sizeof r.err) == KILN_ERROR_INPUT);
  const auto bad = std::filesystem::temp_directory_path() / "kiln-capi-bad.kiln";
  std::ofstream(bad) << "op f {\n  in x: f32[N]\n  out y = x +\n}\n";
  CHECK(kiln_op_load(r.rt, bad.c_str(), "f", "fp32", &other, r.err, sizeof r.err) == KILN_ERROR_INPUT);
  std::filesystem::remove(bad);
  CHECK(kiln_op_load(r.rt, kElementwise.c_str(), "relu_add", "fp8", &other, r.err, sizeof r.err) == KILN_ERROR_INPUT);
  CHECK(kiln_op_with_const(op, "nope", 1.0, &other, r.err, sizeof r.err) == KILN_ERROR_INPUT);

  // Usage: NULL where a value is needed, a dtype code out of range.
  CHECK(kiln_op_load(nullptr, kElementwise.c_str(), "relu_add", "fp32", &other, r.err, sizeof r.err) == KILN_ERROR_USAGE);
  CHECK(kiln_op_load(r.rt, nullptr, "relu_add", "fp32", &other, r.err, sizeof r.err) == KILN_ERROR_USAGE);
  CHECK(kiln_runtime_new("sm_80", "", nullptr, r.err, sizeof r.err) == KILN_ERROR_USAGE);
  const int is_tensor[1] = {0};
  const int bad_dtype[1] = {99};
  const double f[1] = {0};
  const uint64_t u[1] = {0};
  CHECK(kiln_op_call(op, nullptr, 1, is_tensor, nullptr, bad_dtype, nullptr, nullptr, f, u, r.err, sizeof r.err) ==
        KILN_ERROR_USAGE);

  // A wrong argument count is the caller's input.
  const int dtypes[1] = {0};
  CHECK(kiln_op_call(op, nullptr, 1, is_tensor, nullptr, dtypes, nullptr, nullptr, f, u, r.err, sizeof r.err) ==
        KILN_ERROR_INPUT);

  // An unknown arch is the caller's input.
  kiln_runtime* rt2 = nullptr;
  CHECK(kiln_runtime_new("sm_12", "", &rt2, r.err, sizeof r.err) == KILN_ERROR_INPUT);
  kiln_op_free(op);
}
