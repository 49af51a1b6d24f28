// The README's exit-code table, command by command: 0 success, 1 the user's input, 2 usage,
// 3 a kernel build (NVRTC) failure, 4 GPU, driver or I/O failure. A command that did not do
// what was asked never exits 0, and nothing it was asked to do leaves a half-written result.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tools/cli_run.h"

namespace fs = std::filesystem;
using kiln_test::run_kiln;

namespace {

const std::string kSpecs = std::string(KILN_SOURCE_DIR) + "/specs/";
const std::string kElementwise = kSpecs + "elementwise.kiln";

// A fresh directory under the temp dir, removed when the test ends.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Root ignores permission bits: a test of an unwritable directory needs another user.
bool permissions_bind() { return ::geteuid() != 0; }

#define CHECK_EXIT(run, code)         \
  do {                                \
    const auto& r_ = (run);           \
    INFO(r_.output);                  \
    CHECK_FALSE(r_.timed_out);        \
    CHECK(r_.exit_code == (code));    \
  } while (0)

}  // namespace

TEST_CASE("exit codes: kiln check") {
  TempDir t("kiln-exit-check");
  CHECK_EXIT(run_kiln("check " + kElementwise), 0);
  write(t / "bad.kiln", "op f {\n  in x: f32[N]\n  out y = sofmax(x, axis=0)\n}\n");
  CHECK_EXIT(run_kiln("check " + t / "bad.kiln"), 1);
  CHECK_EXIT(run_kiln("check " + t / "missing.kiln"), 1);
  CHECK_EXIT(run_kiln("check " + t.path.string()), 1);   // a directory is not a spec
  CHECK_EXIT(run_kiln("check " + kElementwise + " --no-such-flag"), 2);
  CHECK_EXIT(run_kiln("check " + kElementwise + " -D N"), 2);
  CHECK_EXIT(run_kiln("check " + kElementwise + " -D Q=5"), 2);   // a -D no op has
}

TEST_CASE("exit codes: kiln gen") {
  CHECK_EXIT(run_kiln("gen " + kElementwise + " --op relu_add --arch sm_80"), 0);
  CHECK_EXIT(run_kiln("gen " + kElementwise + " --op nope"), 1);
  CHECK_EXIT(run_kiln("gen " + kElementwise + " --op relu_add -D B=0"), 1);
  CHECK_EXIT(run_kiln("gen " + kElementwise + " --op relu_add --arch sm_12"), 1);
  CHECK_EXIT(run_kiln("gen " + kElementwise + " unexpected-extra-argument"), 2);
  CHECK_EXIT(run_kiln("gen " + kElementwise + " --op relu_add --precision fp16"), 2);
  // A -D that no selected op has is bad usage, as a malformed one is.
  const auto unused = run_kiln("gen " + kElementwise + " --op relu_add -D Q=5 -D R=1");
  CHECK_EXIT(unused, 2);
  CHECK(unused.output.find("-D: no selected op has a dim or const named Q, R") != std::string::npos);
  // --resources compiles; without NVRTC that is a toolchain failure.
  CHECK_EXIT(kiln_test::run_kiln_env("KILN_NVRTC_LIB=/nonexistent/libnvrtc.so",
                                     "gen " + kElementwise + " --op relu_add --resources --arch sm_80"),
             3);
}

TEST_CASE("exit codes: kiln gen honours KILN_ARCH when --arch is not given") {
  const auto r = run_kiln("gen " + kElementwise + " --op relu_add");
  const auto sm80 = kiln_test::run_kiln_env("KILN_ARCH=sm_80", "gen " + kElementwise + " --op relu_add");
  INFO(sm80.output);
  REQUIRE(sm80.exit_code == 0);
  CHECK(sm80.output.find("sm_80") != std::string::npos);
  CHECK(sm80.output != r.output);
  CHECK_EXIT(kiln_test::run_kiln_env("KILN_ARCH=sm_12", "gen " + kElementwise + " --op relu_add"), 1);
}

TEST_CASE("exit codes: KILN_SHAPES picks the dyn dims of kiln gen and kiln build, a bad value is input error 1") {
  const auto generic = kiln_test::run_kiln_env("KILN_SHAPES=generic", "gen " + kElementwise + " --op relu_add");
  INFO(generic.output);
  REQUIRE(generic.exit_code == 0);
  CHECK(generic.output.find("B=4096 (dyn, multiple of 16) N=4096 (dyn, multiple of 16)") != std::string::npos);
  const auto bad = kiln_test::run_kiln_env("KILN_SHAPES=bogus", "gen " + kElementwise + " --op relu_add");
  CHECK_EXIT(bad, 1);
  CHECK(bad.output.find("shapes 'bogus' (Options::shapes or KILN_SHAPES) is not one of declared, generic, specialized") !=
        std::string::npos);
  TempDir t("kiln-exit-shapes");
  CHECK_EXIT(kiln_test::run_kiln_env("KILN_SHAPES=bogus", "build " + kElementwise + " --arch sm_90a -o " + t / "cache"), 1);
}

TEST_CASE("exit codes: kiln ref") {
  CHECK_EXIT(run_kiln("ref " + kElementwise + " --op relu_add -D B=8 -D N=8"), 0);
  CHECK_EXIT(run_kiln("ref " + kElementwise + " --op nope"), 1);
  CHECK_EXIT(run_kiln("ref " + kElementwise + " --op relu_add --max-work nan"), 2);
  CHECK_EXIT(run_kiln("ref " + kElementwise + " --op relu_add --max-work -1"), 2);
  CHECK_EXIT(run_kiln("ref " + kElementwise + " --op relu_add --bogus"), 2);
}

TEST_CASE("exit codes: kiln build, what to build") {
  TempDir t("kiln-exit-build");
  const std::string out = " -o " + t / "cache";
  CHECK_EXIT(run_kiln("build " + kElementwise + " --op relu_add --arch sm_80 --small" + out), 0);
  // Asked for nothing that exists: an unknown op, a directory, empty and comment-only files.
  const auto nope = run_kiln("build " + kElementwise + " --op nope --arch sm_80" + out);
  CHECK_EXIT(nope, 1);
  CHECK(nope.output.find("--op nope") != std::string::npos);
  CHECK_EXIT(run_kiln("build " + t.path.string() + " --arch sm_80" + out), 1);
  write(t / "empty.kiln", "");
  write(t / "comments.kiln", "# nothing but a comment\n\n");
  CHECK_EXIT(run_kiln("build " + t / "empty.kiln" + " --arch sm_80" + out), 1);
  CHECK_EXIT(run_kiln("build " + t / "comments.kiln" + " --arch sm_80" + out), 1);
  // An op without a kernel template fails the build unless the user opts to skip it.
  CHECK_EXIT(run_kiln("build " + kSpecs + "conv.kiln --op conv2d_nhwc_bias_relu --arch sm_80 --small" + out), 1);
  CHECK_EXIT(run_kiln("build " + kSpecs + "conv.kiln --op conv2d_nhwc_bias_relu --arch sm_80 --small --skip-unsupported" + out), 1);
  CHECK_EXIT(run_kiln("build " + kSpecs + "conv.kiln --arch sm_80 --small --skip-unsupported" + out), 0);
}

TEST_CASE("exit codes: kiln build, usage") {
  TempDir t("kiln-exit-build-usage");
  const std::string spec = "build " + kElementwise + " --op relu_add --arch sm_80 --small";
  CHECK_EXIT(run_kiln(spec + " -o ''"), 2);
  CHECK_EXIT(run_kiln(spec + " -o " + t / ".kilnpack"), 2);
  CHECK_EXIT(run_kiln(spec + " -j 0 -o " + t / "c"), 2);
  CHECK_EXIT(run_kiln(spec + " -j -1 -o " + t / "c"), 2);
  CHECK_EXIT(run_kiln(spec + " -j 1000000 -o " + t / "c"), 2);
  CHECK_EXIT(run_kiln(spec + " --arch sm_80 -D B=1 -D B=2 -o " + t / "c"), 2);
  CHECK_FALSE(fs::exists("/v1"));   // -o '' once wrote at the file-system root
}

TEST_CASE("exit codes: kiln build, where the output cannot be stored") {
  TempDir t("kiln-exit-build-output");
  const std::string spec = "build " + kElementwise + " --op relu_add --arch sm_80 --small -o ";
  // A regular file where the directory should be.
  write(t / "file", "x");
  auto r = run_kiln(spec + t / "file");
  CHECK_EXIT(r, 4);
  CHECK(r.output.find("not a directory") != std::string::npos);
  CHECK(r.output.find("kiln build: 1 specializations") == std::string::npos);   // no success summary
  // DIR/v1 is a file.
  fs::create_directories(t / "v1file");
  write(t / "v1file/v1", "x");
  CHECK_EXIT(run_kiln(spec + t / "v1file"), 4);
  // The entry's own path is a directory: compiled, but not stored.
  const auto first = run_kiln(spec + t / "entrydir");
  REQUIRE(first.exit_code == 0);
  std::string entry;
  for (const auto& e : fs::recursive_directory_iterator(t / "entrydir"))
    if (e.path().extension() == ".cubin") entry = e.path().string();
  REQUIRE(!entry.empty());
  fs::remove(entry);
  fs::create_directories(entry + "/blocker");
  r = run_kiln(spec + t / "entrydir");
  CHECK_EXIT(r, 4);
  CHECK(r.output.find("could not be stored") != std::string::npos);
  // A pack where a directory is.
  fs::create_directories(t / "dir.kilnpack");
  CHECK_EXIT(run_kiln(spec + t / "dir.kilnpack"), 4);
  if (permissions_bind()) {
    fs::create_directories(t / "readonly");
    fs::permissions(t / "readonly", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_EXIT(run_kiln(spec + t / "readonly"), 4);
    CHECK_EXIT(run_kiln(spec + t / "readonly/k.kilnpack"), 4);
  }
}

TEST_CASE("exit codes: kiln build -o with a bare pack name writes into the current directory") {
  TempDir t("kiln-exit-build-bare");
  const auto r = kiln_test::run_kiln_in(t.path.string(), "build " + kElementwise +
                                                             " --op relu_add --arch sm_80 --small -o bare.kilnpack");
  CHECK_EXIT(r, 0);
  CHECK(fs::is_regular_file(t / "bare.kilnpack"));
}

TEST_CASE("exit codes: kiln build, a kernel that does not compile") {
  // A template library whose elementwise template does not compile: NVRTC rejects the unit.
  TempDir t("kiln-exit-build-nvrtc");
  fs::create_directories(t / "templates/kiln");
  write(t / "templates/kiln/elementwise.cuh", "#error kiln test: this template does not compile\n");
  const auto r = kiln_test::run_kiln_env("KILN_TEMPLATE_PATH=" + t / "templates",
                                         "build " + kElementwise + " --op relu_add --arch sm_80 --small -o " +
                                             t / "k.kilnpack");
  CHECK_EXIT(r, 3);
  CHECK_FALSE(fs::exists(t / "k.kilnpack"));   // a failed build writes no pack
  // NVRTC cannot be loaded at all.
  CHECK_EXIT(kiln_test::run_kiln_env("KILN_NVRTC_LIB=/nonexistent/libnvrtc.so",
                                     "build " + kElementwise + " --op relu_add --arch sm_80 --small -o " + t / "c"),
             3);
}

TEST_CASE("exit codes: kiln run and kiln bench without a GPU") {
  if (kiln_test::run_kiln("run " + kElementwise + " --op relu_add --small --check").exit_code == 0) {
    MESSAGE("a GPU is present: the no-GPU exit code is not testable here");
    return;
  }
  CHECK_EXIT(kiln_test::run_kiln_env("KILN_CUDA_DRIVER_LIB=/nonexistent/libcuda.so.1",
                                     "run " + kElementwise + " --op relu_add --small --check"),
             4);
  CHECK_EXIT(kiln_test::run_kiln_env("KILN_CUDA_DRIVER_LIB=/nonexistent/libcuda.so.1",
                                     "bench " + kElementwise + " --op relu_add"),
             4);
  CHECK_EXIT(run_kiln("run " + kElementwise + " --iters 0"), 2);
  CHECK_EXIT(kiln_test::run_kiln_env("KILN_CUDA_DRIVER_LIB=/nonexistent/libcuda.so.1",
                                     "tune " + kElementwise + " --op relu_add"),
             4);
  CHECK_EXIT(run_kiln("tune " + kElementwise + " --op relu_add --budget 0"), 2);
  CHECK_EXIT(run_kiln("tune " + kElementwise + " --op relu_add --iters -3"), 2);
  CHECK_EXIT(run_kiln("tune " + kElementwise), 2);   // --op is required
  // The input is checked before the GPU is asked for: a shapes line naming no dim of the op.
  {
    TempDir t("kiln-exit-tune");
    std::ofstream(t / "shapes.txt") << "relu_add B=64 Q=3\n";
    auto r = run_kiln("tune " + kElementwise + " --op relu_add --shapes " + t / "shapes.txt");
    CHECK_EXIT(r, 1);
    CHECK(r.output.find("shapes.txt:1: Q=3: op relu_add has no dim or const named 'Q'") != std::string::npos);
    std::ofstream(t / "other.txt") << "gelu B=64\n";
    r = run_kiln("tune " + kElementwise + " --op relu_add --shapes " + t / "other.txt");
    CHECK_EXIT(r, 1);
    CHECK(r.output.find("has no line for op relu_add") != std::string::npos);
  }
  // A bad KILN_TUNING is the user's input, for every command that makes a runtime.
  CHECK_EXIT(kiln_test::run_kiln_env("KILN_TUNING=always", "gen " + kElementwise + " --op relu_add"), 1);
}

TEST_CASE("exit codes: non-regular files never hang or exhaust memory") {
  TempDir t("kiln-exit-fifo");
  REQUIRE(::mkfifo((t / "fifo.kiln").c_str(), 0600) == 0);
  auto r = run_kiln("check " + t / "fifo.kiln", 30);
  CHECK_EXIT(r, 1);
  CHECK(r.output.find("FIFO") != std::string::npos);
  CHECK_EXIT(run_kiln("build " + t / "fifo.kiln" + " --arch sm_80 -o " + t / "c", 30), 1);
  CHECK_EXIT(run_kiln("gen " + t / "fifo.kiln", 30), 1);
  r = run_kiln("check /dev/zero", 30);
  CHECK_EXIT(r, 1);
  CHECK(r.output.find("character device") != std::string::npos);
  fs::create_symlink("/dev/zero", t / "zero.kiln");
  CHECK_EXIT(run_kiln("build " + t / "zero.kiln" + " --arch sm_80 -o " + t / "c", 30), 1);
  CHECK_EXIT(run_kiln("build " + kElementwise + " --arch sm_80 --shapes /dev/zero -o " + t / "c", 30), 1);
  CHECK_EXIT(run_kiln("build " + kElementwise + " --arch sm_80 --shapes " + t / "fifo.kiln" + " -o " + t / "c", 30), 1);
}

TEST_CASE("exit codes: names of the longest allowed length build through NVRTC") {
  TempDir t("kiln-exit-long-names");
  const std::string op(255, 'o'), in(255, 'i');
  write(t / "long.kiln", "op " + op + " {\n  dims N = 8\n  in " + in + ": f32[N]\n  out y = " + in + " * 2.0\n}\n");
  CHECK_EXIT(run_kiln("build " + t / "long.kiln" + " --arch sm_80 -o " + t / "c"), 0);
  write(t / "longer.kiln", "op " + std::string(1000000, 'o') + " {\n  dims N = 8\n  in x: f32[N]\n  out y = x\n}\n");
  const auto r = run_kiln("build " + t / "longer.kiln" + " --arch sm_80 -o " + t / "c");
  CHECK_EXIT(r, 1);
  CHECK(r.output.find("longer.kiln:1:4: error: a name of 1000000 characters; names are at most 255") != std::string::npos);
}

TEST_CASE("exit codes: --shapes lines that name no op or no dim are errors, not ignored") {
  TempDir t("kiln-exit-shapes");
  const std::string build = "build " + kElementwise + " --op relu_add --arch sm_80 -o " + t / "c" + " --shapes ";
  write(t / "op.txt", "# a typo in the op name\nrelu_ad B=5 N=5\n");
  auto r = run_kiln(build + t / "op.txt");
  CHECK_EXIT(r, 1);
  CHECK(r.output.find("op.txt:2: no op named 'relu_ad'") != std::string::npos);
  CHECK(r.output.find("did you mean 'relu_add'?") != std::string::npos);
  write(t / "dim.txt", "relu_add B=5 Q=5\n");
  r = run_kiln(build + t / "dim.txt");
  CHECK_EXIT(r, 1);
  CHECK(r.output.find("dim.txt:1: Q=5: op relu_add has no dim or const named 'Q'") != std::string::npos);
  // A line for another op of the file, left out by --op, is skipped.
  write(t / "other.txt", "axpby N=8\nrelu_add B=5 N=5\n");
  CHECK_EXIT(run_kiln(build + t / "other.txt"), 0);
}

TEST_CASE("exit codes: a dyn dim a template cannot take is located at its declaration") {
  TempDir t("kiln-exit-dyn");
  // A dyn N of a batched product is taken (its batch strides are read at run time) ...
  write(t / "dyn.kiln", "op mm {\n  dims M = 8, K = 4, dyn N = 5\n  in a: f32[2, M, K]\n  in b: f32[2, K, N]\n"
                        "  out c = matmul(a, b)\n}\n");
  CHECK_EXIT(run_kiln("gen " + t / "dyn.kiln" + " --arch sm_80"), 0);
  // ... a dyn inner batch dim is not.
  write(t / "inner.kiln", "op mm {\n  dims M = 8, K = 4, dyn H = 5\n  in a: f32[2, H, M, K]\n  in b: f32[2, H, K, 8]\n"
                          "  out c = matmul(a, b)\n}\n");
  const auto r = run_kiln("gen " + t / "inner.kiln" + " --arch sm_80");
  CHECK_EXIT(r, 1);
  CHECK(r.output.find("inner.kiln:2:26: op mm: dim 'H' is dyn, but the gemm template (for line 5) takes a dyn batch "
                      "dim only as the outermost one (here axis 1)") != std::string::npos);
}
