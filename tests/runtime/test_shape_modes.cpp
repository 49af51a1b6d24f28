// Options::shapes (issue 20): "declared" keeps the spec's `dyn` marks, "specialized" bakes every
// dim in, "generic" also makes dyn every dim that sizes only elementwise kernels, the rows of
// memory-bound ones, the batch of a conv, or the planes of a pool. Sources only, no GPU.
#include <doctest/doctest.h>

#include <string>

#include "kiln/kiln.h"

namespace {

kiln::Runtime runtime_with(const std::string& shapes) {
  kiln::Options options;
  options.arch = "sm_90";
  options.disk_cache = false;
  options.use_environment = false;
  options.shapes = shapes;
  return kiln::Runtime(options);
}

const char* kMixed =
    "op mixed {\n"
    "  dims N = 1000, M = 64, K = 8\n"
    "  in  x: f32[N]\n"
    "  in  w: f32[M, K]\n"
    "  out y = x + 1.0\n"
    "  out s = sum(w, axis=1)\n"
    "}\n";

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

}  // namespace

TEST_CASE("shapes: declared, generic and specialized") {
  const std::string spec = std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln";
  {
    kiln::Runtime rt = runtime_with("declared");
    auto p = rt.load_file(spec);
    CHECK(!has(p.op("relu_add").specialize(kiln::Bindings{}).source(), "dim_"));
    CHECK(has(p.op("scale_cast_f16").specialize(kiln::Bindings{}).source(), "kiln::DynDim dim_N"));
  }
  {
    kiln::Runtime rt = runtime_with("specialized");
    auto p = rt.load_file(spec);
    const auto ex = p.op("scale_cast_f16").specialize(kiln::Bindings{});
    CHECK(!has(ex.source(), "dim_"));
    CHECK(!has(ex.plan_text(), "(dyn"));
  }
  {
    kiln::Runtime rt = runtime_with("generic");
    auto p = rt.load_file(spec);
    const auto ex = p.op("relu_add").specialize({{"B", 100}, {"N", 4096}});
    CHECK(has(ex.source(), "kiln::DynDim dim_B, kiln::DynDim dim_N"));
    CHECK(has(ex.plan_text(), "B=100 (dyn, general) N=4096 (dyn, multiple of 16)"));
    // An op with a reduction: K is the reduced axis and stays baked in; M counts its rows, which
    // the reduce template takes as dyn ([Note: dyn rows]).
    auto mixed = rt.load_string(kMixed, "mixed.kiln").op("mixed").specialize(kiln::Bindings{});
    CHECK(has(mixed.plan_text(), "K=8 M=64 (dyn, multiple of 16) N=1000 (dyn, general)"));
    // A matmul keeps every dim it uses.
    auto mm = rt.load_string("op mm {\n  dims M = 64, K = 8, N = 16\n  in a: f32[M, K]\n  in b: f32[K, N]\n"
                             "  out c = relu(matmul(a, b))\n}\n",
                             "mm.kiln")
                  .op("mm")
                  .specialize(kiln::Bindings{});
    CHECK(!has(mm.plan_text(), "(dyn"));
    // A dim written as a value is a literal in the kernel ([Note: dims as values]): it stays baked
    // in, and the other dims still go dyn.
    auto valued = rt.load_string("op v {\n  dims B = 100, N = 4096\n  in x: f32[B, N]\n  out y = x / N\n}\n", "v.kiln")
                      .op("v")
                      .specialize(kiln::Bindings{});
    CHECK(has(valued.plan_text(), "[B=100 (dyn, general) N=4096]"));
    CHECK(has(valued.source(), "4096.0f"));
    // A conv's batch goes dyn, the pool's after it too; the conv's channels, spatial extents and
    // filters do not, and so neither do the pool's channels (the conv's K).
    auto conv = rt.load_string("op c {\n  dims N = 8, C = 16, H = 32, W = 32, K = 24\n  in x: f32[N, C, H, W]\n"
                               "  in w: f32[K, C, 3, 3]\n  out y = max_pool2d(relu(conv2d(x, w, padding=1)), 2)\n}\n",
                               "c.kiln")
                    .op("c")
                    .specialize(kiln::Bindings{});
    CHECK(has(conv.plan_text(), "[C=16 H=32 K=24 N=8 (dyn, general, class [1, 427)) W=32]"));
    // A pool's planes go dyn, its channels too: its prologue's per-channel operand reads the
    // channel from the step's Lead (pool.cuh), computed once a step.
    auto pool = rt.load_string("op p {\n  dims N = 8, C = 16, H = 32, W = 32\n  in x: f32[N, C, H, W]\n"
                               "  in s: f32[C, 1, 1]\n  out y = relu(max_pool2d(x * s, 3, stride=2, padding=1))\n}\n",
                               "p.kiln")
                    .op("p")
                    .specialize(kiln::Bindings{});
    CHECK(has(pool.plan_text(), "[C=16 (dyn, multiple of 16) H=32 N=8 (dyn, general) W=32]"));
    CHECK(has(pool.source(), "struct Lead { Index c0, c1; };"));
    CHECK(has(pool.source(), "const Index c1 = plane % dim_C;"));
    // The executable of op `name` written in `text`, at its declared values.
    auto specialized = [&](const std::string& text, const std::string& name) {
      return rt.load_string(text, name + ".kiln").op(name).specialize(kiln::Bindings{});
    };
    // One dyn dim among a memory-bound anchor's rows: the outermost that is not `static`. Two would
    // leave the rules without size classes (a block per row for 524288 rows of 4095).
    const std::string min_last = "op m {\n  dims B = 128, M = 4096, N = 4095\n  in x: f32[B, M, N]\n"
                                 "  out y = min(x, axis=2)\n}\n";
    auto two_rows = specialized(min_last, "m");
    CHECK(has(two_rows.plan_text(), "[B=128 (dyn, multiple of 16, class >= 2) M=4096 N=4095]"));
    CHECK(has(two_rows.plan_text(), "a warp per row"));
    std::string inner_dyn = min_last;
    inner_dyn.replace(inner_dyn.find("dims B"), 6, "dims static B");
    auto second = specialized(inner_dyn, "m");
    CHECK(has(second.plan_text(), "[B=128 M=4096 (dyn, multiple of 16, class >= 33) N=4095]"));
    // A norm written out over rows longer than a block's registers fuses only with its row count
    // baked in: its rows stay static ([Note: long norm rows stay baked in under the generic
    // default]); over short rows they go dyn and the norm still fuses.
    const std::string layer_norm = "op n {\n  dims B = 16, N = 65536\n  in x: f32[B, N]\n"
                                   "  let d = x - mean(x, axis=1, keepdims=true)\n"
                                   "  out y = d * rsqrt(mean(d * d, axis=1, keepdims=true) + 1e-5)\n}\n";
    auto long_rows = specialized(layer_norm, "n");
    CHECK(has(long_rows.plan_text(), "[B=16 N=65536]"));
    CHECK(has(long_rows.plan_text(), "a split normalize, two kernels"));
    std::string short_text = layer_norm;
    short_text.replace(short_text.find("N = 65536"), 9, "N = 4096");
    auto short_rows = specialized(short_text, "n");
    CHECK(has(short_rows.plan_text(), "[B=16 (dyn, multiple of 16"));
    CHECK(has(short_rows.plan_text(), "one normalize kernel"));
    // The elementwise rest of the op is no anchor: both its dims go dyn where nothing else bakes them.
    auto ew = specialized("op e {\n  dims B = 128, M = 64, N = 32\n  in x: f32[B, M, N]\n  out y = x + 1.0\n}\n", "e");
    CHECK(has(ew.plan_text(), "B=128 (dyn, multiple of 16) M=64 (dyn, multiple of 16) N=32 (dyn, multiple of 16)"));
  }
}

TEST_CASE("shapes: the default is generic, and KILN_SHAPES or Options::shapes picks another") {
  kiln::Runtime rt = runtime_with("");   // no environment: the built-in default
  CHECK(rt.options().shapes == "generic");
  auto ex = rt.load_file(std::string(KILN_SOURCE_DIR) + "/specs/elementwise.kiln").op("relu_add").specialize({{"B", 100}, {"N", 4096}});
  CHECK(has(ex.plan_text(), "B=100 (dyn, general) N=4096 (dyn, multiple of 16)"));
  CHECK(runtime_with("declared").options().shapes == "declared");
  // `static` keeps a dim baked in under the generic default; the other dims still go dyn.
  auto fixed = rt.load_string("op s {\n  dims static B = 100, N = 4096\n  in x: f32[B, N]\n  out y = x * 2.0\n}\n",
                              "s.kiln")
                   .op("s")
                   .specialize(kiln::Bindings{});
  CHECK(has(fixed.plan_text(), "[B=100 N=4096 (dyn, multiple of 16)]"));
  CHECK(!has(fixed.source(), "dim_B"));
}

TEST_CASE("shapes: an unknown mode is an ArgumentError naming the choices") {
  CHECK_THROWS_WITH_AS(runtime_with("dynamic"),
                       "shapes 'dynamic' (Options::shapes or KILN_SHAPES) is not one of declared, generic, specialized",
                       kiln::ArgumentError);
}
