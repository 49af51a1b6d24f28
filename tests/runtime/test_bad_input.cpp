// Bad input at the public API, on a machine with no GPU: dims over 2^31 are
// accepted and switch the generated index type to 64 bits; zero and negative
// dims, and arguments that do not fit the op, are ArgumentErrors that name what
// is wrong. Argument checks run before anything touches the driver, so none of
// this needs a GPU (the pointers below are never dereferenced).
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace {

constexpr std::int64_t kBig = 3'000'000'000;   // over 2^31 - 1 and over 2^31 too
constexpr const char* kIndex64 = "using Index = long long;";
constexpr const char* kIndex32 = "using Index = int;";

// axpby: x, y0: f32[N] -> y. relu_add: a: f32[B, N], b: f32[N] -> y: f32[B, N].
kiln::Program program(kiln::Runtime& rt) {
  return rt.load_file(std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln");
}

kiln::Runtime make_runtime() {
  kiln::Options options;
  options.arch = "sm_90";   // no device query: source() works anywhere
  options.disk_cache = false;
  options.use_environment = false;
  options.shapes = "declared";   // the spec's marks: these cases check specialized executables and dyn N alone
  return kiln::Runtime(options);
}

// A fake, 256-byte aligned device address: argument checks read the value only.
void* fake_pointer(std::uintptr_t offset = 0) { return reinterpret_cast<void*>(std::uintptr_t{1} << 20 | offset); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kiln::ArgumentError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not an ArgumentError: ") + e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("bad input: a dim of 3e9 binds and the elementwise kernel indexes with int64") {
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("axpby");
  kiln::Executable big = op.specialize({{"N", kBig}});
  REQUIRE(big.arguments().size() == 3);
  CHECK(big.arguments()[2].shape == std::vector<std::int64_t>{kBig});
  const std::string source = big.source();
  CAPTURE(source);
  // 3e9 elements do not fit an int index: the source must say long long, and the
  // element count must appear whole (not wrapped to a negative int).
  CHECK(source.find(kIndex64) != std::string::npos);
  CHECK(source.find(kIndex32) == std::string::npos);
  CHECK(source.find("3000000000") != std::string::npos);
  CHECK(big.plan_text().find("int64") != std::string::npos);
  // The same op at a small size keeps 32-bit indexing (the choice is per specialization).
  CHECK(op.specialize({{"N", 1024}}).source().find(kIndex32) != std::string::npos);
}

TEST_CASE("bad input: 2^31 elements from dims that each fit in int32 still index with int64") {
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("relu_add");
  // 65536 x 32768 = 2^31 elements exactly: past the largest int index.
  CHECK(op.specialize({{"B", 65536}, {"N", 32768}}).source().find(kIndex64) != std::string::npos);
  // 32768 x 65535 = 2^31 - 32768 (KernelBench level 1's 38): under 2^31, but a grid-stride step past
  // its end would not be, so it indexes with int64 too (the limit keeps 2^18 of headroom).
  CHECK(op.specialize({{"B", 32768}, {"N", 65535}}).source().find(kIndex64) != std::string::npos);
  // The limit itself, 2^31 - 2^18 - 1 elements, is 32-bit; one more is 64-bit.
  const std::int64_t limit = (std::int64_t{1} << 31) - (std::int64_t{1} << 18) - 1;
  CHECK(op.specialize({{"B", 1}, {"N", limit}}).source().find(kIndex32) != std::string::npos);
  CHECK(op.specialize({{"B", 1}, {"N", limit + 1}}).source().find(kIndex64) != std::string::npos);
}

TEST_CASE("bad input: extents that do not match a 3e9 specialization are clear errors") {
  kiln::Runtime rt = make_runtime();
  kiln::Executable big = program(rt).op("axpby").specialize({{"N", kBig}});
  auto launch_with = [&](std::int64_t x_extent) {
    return error_of([&] {
      big.launch(nullptr, {kiln::TensorRef(fake_pointer(), kiln::f32, {x_extent}),
                           kiln::TensorRef(fake_pointer(), kiln::f32, {kBig}),
                           kiln::TensorRef(fake_pointer(), kiln::f32, {kBig})});
    });
  };
  CHECK(launch_with(kBig - 1) ==
        "axpby: 'x' has shape 2999999999, but this executable was specialized for 3000000000");
  // The low 32 bits of 3e9 + 2^32 equal those of 3e9: a truncating check would pass it.
  CHECK(launch_with(kBig + (std::int64_t{1} << 32)) ==
        "axpby: 'x' has shape 7294967296, but this executable was specialized for 3000000000");
}

TEST_CASE("bad input: zero and negative dims in Bindings name the dim") {
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("relu_add");
  // Located at the dim's declaration in the spec, like a spec error.
  CHECK(error_of([&] { op.specialize({{"N", 0}}); }).find(
            "specs/elementwise.kiln:14:18: error: op relu_add: dim N is 0 from specialize(N=0); dims must be >= 1 "
            "(empty tensors are not supported)\n") != std::string::npos);
  CHECK(error_of([&] { op.specialize({{"B", -3}}); }).find(
            "specs/elementwise.kiln:14:8: error: op relu_add: dim B is -3 from specialize(B=-3); dims must be >= 1 "
            "(empty tensors are not supported)\n") != std::string::npos);
  CHECK(error_of([&] { op.specialize({{"B", INT64_MIN}}); }).find("dim B is -9223372036854775808") !=
        std::string::npos);
}

TEST_CASE("bad input: zero and negative extents in TensorRef shapes name the tensor and the dim") {
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("relu_add");
  auto call_with = [&](std::vector<std::int64_t> x_shape) {
    return error_of([&] {
      op(nullptr, {kiln::TensorRef(fake_pointer(), kiln::f32, std::move(x_shape)),
                   kiln::TensorRef(fake_pointer(), kiln::f32, {8}),
                   kiln::TensorRef(fake_pointer(), kiln::f32, {4, 8})});
    });
  };
  CHECK(call_with({4, 0}) == "relu_add: 'a' has extent 0 in dim 1; every extent must be >= 1");
  CHECK(call_with({-4, 8}) == "relu_add: 'a' has extent -4 in dim 0; every extent must be >= 1");
  // The same check guards a specialized executable's launch.
  kiln::Executable exe = op.specialize({{"B", 4}, {"N", 8}});
  CHECK(error_of([&] {
          exe.launch(nullptr, {kiln::TensorRef(fake_pointer(), kiln::f32, {4, 8}),
                               kiln::TensorRef(fake_pointer(), kiln::f32, {-8}),
                               kiln::TensorRef(fake_pointer(), kiln::f32, {4, 8})});
        }) == "relu_add: 'b' has extent -8 in dim 0; every extent must be >= 1");
}

TEST_CASE("bad input: wrong argument count, kind, dtype, rank, null and misaligned pointers") {
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("axpby");
  const kiln::TensorRef good(fake_pointer(), kiln::f32, {8});
  CHECK(error_of([&] { op(nullptr, {good, good}); }) ==
        "axpby: got 2 arguments, expected 3 (axpby(x: f32[N], y0: f32[N]) -> y: f32[N])");
  CHECK(error_of([&] { op(nullptr, {good, 2.0, good}); }) ==
        "axpby: argument 1 ('y0') must be a tensor (kiln::TensorRef)");
  CHECK(error_of([&] { op(nullptr, {good, kiln::TensorRef(fake_pointer(), kiln::f16, {8}), good}); }) ==
        "axpby: 'y0' has dtype f16, expected f32");
  CHECK(error_of([&] { op(nullptr, {good, good, kiln::TensorRef(fake_pointer(), kiln::f32, {2, 4})}); }) ==
        "axpby: 'y' has rank 2, expected 1");
  CHECK(error_of([&] { op(nullptr, {kiln::TensorRef(static_cast<void*>(nullptr), kiln::f32, {8}), good, good}); }) ==
        "axpby: 'x' is a null pointer");
  CHECK(error_of([&] { op(nullptr, {good, kiln::TensorRef(fake_pointer(2), kiln::f32, {8}), good}); })
            .find("axpby: 'y0' at 0x100002 is not aligned to its element size (4 bytes)") != std::string::npos);
}

TEST_CASE("bad input: an Executable refuses a pointer that is not 16-byte aligned, before any launch") {
  // An Executable is planned for 16-byte aligned tensors (docs/design-notes.md, "Alignment"): its
  // kernels load and store 16-byte vectors unchecked. A pointer aligned to its element only is an
  // ArgumentError naming it; an Op call plans for the pointers it is given instead.
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("relu_add");
  kiln::Executable exe = op.specialize({{"B", 4}, {"N", 8}});
  CHECK(error_of([&] {
          exe.launch(nullptr, {kiln::TensorRef(fake_pointer(), kiln::f32, {4, 8}),
                               kiln::TensorRef(fake_pointer(0x1004), kiln::f32, {8}),
                               kiln::TensorRef(fake_pointer(0x2000), kiln::f32, {4, 8})});
        }) == "relu_add: 'b' at 0x101004 is not 16-byte aligned, but this executable was specialized for 16-byte "
              "aligned tensors (its kernels use 16-byte vector loads and stores); call the op, which plans for "
              "the pointers it is given");
  CHECK(error_of([&] {
          exe.launch(nullptr, {kiln::TensorRef(fake_pointer(), kiln::f32, {4, 8}),
                               kiln::TensorRef(fake_pointer(0x1000), kiln::f32, {8}),
                               kiln::TensorRef(fake_pointer(0x2008), kiln::f32, {4, 8})});
        }).find("'y' at 0x102008 is not 16-byte aligned") != std::string::npos);
}

TEST_CASE("Op::arguments_for: the outputs' shapes from the inputs', the inputs checked as a call checks them") {
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("relu_add");
  const auto args = op.arguments_for({kiln::TensorRef(fake_pointer(), kiln::f32, {5, 7}),
                                      kiln::TensorRef(fake_pointer(), kiln::f32, {7})});
  REQUIRE(args.size() == 3);
  CHECK((args[2].name == "y" && args[2].is_output && args[2].dtype == kiln::f32));
  CHECK(args[2].shape == std::vector<std::int64_t>{5, 7});
  CHECK((args[0].name == "a" && !args[0].is_output && args[0].shape == std::vector<std::int64_t>{5, 7}));
  CHECK(error_of([&] { op.arguments_for({kiln::TensorRef(fake_pointer(), kiln::f32, {5, 7})}); }) ==
        "relu_add: got 1 inputs, expected 2 (relu_add(a: f32[B, N], b: f32[N]) -> y: f32[B, N])");
  CHECK(error_of([&] {
          op.arguments_for({kiln::TensorRef(fake_pointer(), kiln::f16, {5, 7}), kiln::TensorRef(fake_pointer(), kiln::f32, {7})});
        }) == "relu_add: 'a' has dtype f16, expected f32");
  CHECK(error_of([&] {
          op.arguments_for({kiln::TensorRef(fake_pointer(), kiln::f32, {5, 7}), kiln::TensorRef(fake_pointer(), kiln::f32, {6})});
        }).find("dim N is 7 from a.shape[1] but 6 from b.shape[0]") != std::string::npos);
}

TEST_CASE("bad input: rank, extent and dim-binding errors are ShapeErrors (an ArgumentError), a dtype is not") {
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("relu_add");
  auto ref = [](std::vector<std::int64_t> shape, kiln::DType dtype = kiln::f32) {
    return kiln::TensorRef(fake_pointer(), dtype, std::move(shape));
  };
  CHECK_THROWS_AS(op.arguments_for({ref({5, 7}), ref({6})}), kiln::ShapeError);        // N bound twice
  CHECK_THROWS_AS(op.arguments_for({ref({5, 7}), ref({1, 7})}), kiln::ShapeError);     // rank
  CHECK_THROWS_AS(op(nullptr, {ref({4, 0}), ref({8}), ref({4, 8})}), kiln::ShapeError);   // extent 0
  CHECK_THROWS_AS(op.specialize({{"N", 0}}), kiln::ShapeError);                         // a dim below 1
  kiln::Executable exe = op.specialize({{"B", 4}, {"N", 8}});
  CHECK_THROWS_AS(exe.launch(nullptr, {ref({4, 8}), ref({9}), ref({4, 8})}), kiln::ShapeError);
  CHECK_NOTHROW(op.arguments_for({ref({5, 7}), ref({7})}));
  try {
    op.arguments_for({ref({5, 7}, kiln::f16), ref({7})});
    FAIL("a wrong dtype was accepted");
  } catch (const kiln::ShapeError&) {
    FAIL("a wrong dtype is not a ShapeError");
  } catch (const kiln::ArgumentError&) {
  }
}

TEST_CASE("bad input: an output that overlaps another argument is refused, naming both") {
  kiln::Runtime rt = make_runtime();
  kiln::Op op = program(rt).op("relu_add");
  auto ref = [](std::uintptr_t offset, std::vector<std::int64_t> shape) {
    return kiln::TensorRef(fake_pointer(offset), kiln::f32, std::move(shape));
  };
  // y (4x8 f32 = 128 bytes at +0) is a: in place is refused too.
  CHECK(error_of([&] { op(nullptr, {ref(0, {4, 8}), ref(4096, {8}), ref(0, {4, 8})}); }) ==
        "relu_add: output 'y' overlaps input 'a' in memory; outputs must not alias other arguments");
  // b (32 bytes at +96) ends inside y's last row.
  CHECK(error_of([&] { op(nullptr, {ref(4096, {4, 8}), ref(96, {8}), ref(0, {4, 8})}); }) ==
        "relu_add: output 'y' overlaps input 'b' in memory; outputs must not alias other arguments");
  // Adjacent ranges do not overlap: that call gets past the checks (to the driver, absent here).
  CHECK(error_of([&] { op(nullptr, {ref(4096, {4, 8}), ref(128, {8}), ref(0, {4, 8})}); }).find("overlaps") ==
        std::string::npos);
}

TEST_CASE("bad input: a dyn executable checks each launch's bucket and shapes before the driver") {
  kiln::Runtime rt = make_runtime();
  kiln::Program p = rt.load_string("op rows {\n  dims dyn N = 64, C = 8\n  in x: f32[N, C]\n  in z: f32[N]\n"
                                   "  out y = x * 2.0\n  out w = z + 1.0\n}\n",
                                   "rows.kiln");
  kiln::Executable exe = p.op("rows").specialize({{"N", 1024}});
  auto launch = [&](std::int64_t nx, std::int64_t nz, std::int64_t c) {
    return error_of([&] {
      exe.launch(nullptr, {kiln::TensorRef(fake_pointer(), kiln::f32, {nx, c}), kiln::TensorRef(fake_pointer(1 << 12), kiln::f32, {nz}),
                           kiln::TensorRef(fake_pointer(1 << 16), kiln::f32, {nx, c}),
                           kiln::TensorRef(fake_pointer(1 << 18), kiln::f32, {nz})});
    });
  };
  CHECK(launch(1000, 1000, 8) ==
        "rows: dyn dim N=1000 is outside this executable's bucket (N: multiple of 16); specialize another value, or "
        "call the op, which keeps one executable per bucket");
  CHECK(launch(32, 48, 8) == "rows: dim N is 32 from x.shape[0] but 48 from z.shape[0]");   // as binding says it
  CHECK(launch(32, 32, 9) == "rows: 'x' has shape 32x9, expected 32x8 (C=8 N=32)");
}
