// The .kilnpack bundle: round trip, lookup, listing, and every kind of damage
// giving a kiln::Error that names the file and the problem.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "runtime/forked.h"
#include "kiln/kiln.h"
#include "runtime/pack.h"

namespace fs = std::filesystem;

namespace {

std::string pack_path(const std::string& name) {
  std::string dir = std::string(KILN_BINARY_DIR) + "/test_pack";
  fs::create_directories(dir);
  std::string path = dir + "/" + name + ".kilnpack";
  fs::remove(path);
  return path;
}

kiln::CacheEntry entry_for(const std::string& op, const std::string& bindings, const std::string& arch, std::size_t n) {
  kiln::CacheEntry e;
  for (std::size_t i = 0; i < n; ++i) e.cubin.push_back(static_cast<char>((i * 7 + op.size()) & 0xff));
  e.metadata.kernels = {"kiln_" + op};
  e.metadata.template_name = "elementwise";
  e.metadata.grid = {8, 1, 1};
  e.metadata.block = {128, 1, 1};
  e.metadata.arch = arch;
  e.metadata.compiler_id = "nvrtc 13.0 (test)";
  e.metadata.op_name = op;
  e.metadata.bindings = bindings;
  return e;
}

std::string key_for(const std::string& op, const std::string& arch) {
  return kiln::cache_key("source of " + op, "digest", "nvrtc 13.0 (test)", arch, {});
}

// Writes a pack with three entries and returns its path.
std::string write_sample(const std::string& name) {
  kiln::PackWriter w("nvrtc 13.0 (test)");
  w.add(key_for("relu", "sm_90"), "sm_90", entry_for("relu", "N=1024", "sm_90", 1500));
  w.add(key_for("relu", "sm_80"), "sm_80", entry_for("relu", "N=1024", "sm_80", 1400));
  w.add(key_for("gelu", "sm_90"), "sm_90", entry_for("gelu", "N=7", "sm_90", 900));
  w.add(key_for("gelu", "sm_90"), "sm_90", entry_for("gelu", "N=7", "sm_90", 900));   // duplicate: replaced
  CHECK(w.size() == 3);
  std::string path = pack_path(name);
  w.write(path);
  return path;
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void overwrite(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("pack: write, open, find, list") {
  std::string path = write_sample("roundtrip");
  kiln::Pack pack = kiln::Pack::open(path);
  CHECK(pack.path() == path);
  CHECK(pack.compiler_id() == "nvrtc 13.0 (test)");
  CHECK(pack.size() == 3);
  const kiln::CacheEntry* relu = pack.find(key_for("relu", "sm_80"));
  REQUIRE(relu != nullptr);
  CHECK(relu->cubin == entry_for("relu", "N=1024", "sm_80", 1400).cubin);
  CHECK(relu->metadata == entry_for("relu", "N=1024", "sm_80", 1400).metadata);
  CHECK(pack.find(key_for("silu", "sm_90")) == nullptr);
  for (const auto& item : pack.entries()) CHECK(pack.find(item.key) != nullptr);
  CHECK(pack.describe_contents() == "  gelu (N=7) sm_90\n  relu (N=1024) sm_80\n  relu (N=1024) sm_90\n");
  CHECK(pack.describe_contents(1) == "  gelu (N=7) sm_90\n  ... and 2 more\n");
  // Same entries, same bytes: packs are reproducible.
  CHECK(bytes_of(write_sample("roundtrip2")) == bytes_of(path));
}

TEST_CASE("pack: tuned picks travel in their own section, version 1 packs still load") {
  const std::string path = pack_path("tuned");
  kiln::PackWriter w("nvrtc x");
  w.add(key_for("relu", "sm_90"), "sm_90", entry_for("relu", "N=1024", "sm_90", 100));
  w.add_tuned("00ff.tune", "kiln-tuned 1\nkey 1\nop x\npick 2 128x128x64 c1 st7 k1 cl1 g8 | test\n");
  w.write(path);
  const kiln::Pack pack = kiln::Pack::open(path);
  REQUIRE(pack.tuned().size() == 1);
  CHECK(pack.tuned().at("00ff.tune").find("pick 2 128x128x64") != std::string::npos);
  CHECK(pack.find(key_for("relu", "sm_90")) != nullptr);
  // A flipped byte of the section is caught by its checksum.
  auto bytes = bytes_of(path);
  const std::string text(bytes.begin(), bytes.end());
  auto flipped = bytes;
  flipped[text.find("pick 2")] ^= 0x01;
  overwrite(path, flipped);
  CHECK_THROWS_WITH_AS(kiln::Pack::open(path), doctest::Contains("tuned section checksum mismatch"), kiln::ArgumentError);
  // Version 1 (no tuned section): the same pack without it.
  const std::string v1_path = pack_path("v1");
  kiln::PackWriter("nvrtc x").write(v1_path);   // an empty v2 pack: its tuned section is 20 bytes
  auto v1 = bytes_of(v1_path);
  const std::size_t section = 8 + 4 + 4 + std::string("nvrtc x").size();
  v1.erase(v1.begin() + static_cast<std::ptrdiff_t>(section), v1.begin() + static_cast<std::ptrdiff_t>(section + 20));
  v1[8] = 1;
  overwrite(v1_path, v1);
  const kiln::Pack old = kiln::Pack::open(v1_path);
  CHECK(old.size() == 0);
  CHECK(old.tuned().empty());
}

TEST_CASE("pack: an empty pack is valid") {
  std::string path = pack_path("empty");
  kiln::PackWriter("nvrtc x").write(path);
  kiln::Pack pack = kiln::Pack::open(path);
  CHECK(pack.size() == 0);
  CHECK(pack.describe_contents() == "  (empty pack)\n");
}

TEST_CASE("pack: damaged files are clear errors naming the file") {
  std::string path = write_sample("damaged");
  const std::vector<char> good = bytes_of(path);
  struct Case {
    const char* what;
    std::vector<char> bytes;
    const char* message;
  };
  std::vector<Case> cases;
  cases.push_back({"truncated in the blobs", {good.begin(), good.end() - 10}, "past the end"});
  cases.push_back({"truncated in the index", {good.begin(), good.begin() + 60}, "truncated"});
  cases.push_back({"truncated in the header", {good.begin(), good.begin() + 10}, "truncated header"});
  auto blob = good;
  blob[good.size() - 50] ^= 0x04;
  cases.push_back({"flipped blob byte", blob, "checksum mismatch"});
  auto index = good;
  index[70] ^= 0x04;
  cases.push_back({"flipped index byte", index, "index checksum mismatch"});
  auto magic = good;
  magic[1] = 'x';
  cases.push_back({"bad magic", magic, "not a kiln pack"});
  auto version = good;
  version[8] = 3;
  cases.push_back({"newer version", version, "pack format version 3"});
  auto trailing = good;
  trailing.push_back('!');
  cases.push_back({"trailing bytes", trailing, "after the last entry"});
  for (const auto& c : cases) {
    CAPTURE(std::string(c.what));
    overwrite(path, c.bytes);
    // ArgumentError: the file the caller named is wrong (exit code 1), not kiln.
    CHECK_THROWS_WITH_AS(kiln::Pack::open(path), doctest::Contains(c.message), kiln::ArgumentError);
    CHECK_THROWS_WITH_AS(kiln::Pack::open(path), doctest::Contains(path.c_str()), kiln::ArgumentError);
  }
  CHECK_THROWS_WITH_AS(kiln::Pack::open(path + ".absent"), doctest::Contains("cannot read the pack: no such file"),
                       kiln::ArgumentError);
}

TEST_CASE("pack: writing into an impossible place is a clear error") {
  // Root ignores permission bits, so the target's parent is a regular file instead.
  std::string blocker = pack_path("blocker");
  overwrite(blocker, {'x'});
  kiln::PackWriter w("nvrtc x");
  CHECK_THROWS_WITH_AS(w.write(blocker + "/sub/out.kilnpack"), doctest::Contains("cannot write pack"), kiln::IoError);
}

TEST_CASE("pack: a FIFO, a device or a directory is refused unread, without hanging") {
  // Before: Pack::open of a FIFO blocked in open() forever, and of /dev/zero read
  // until memory ran out (std::bad_alloc).
  const std::string dir = std::string(KILN_BINARY_DIR) + "/test_pack/non_regular";
  fs::remove_all(dir);
  fs::create_directories(dir);
  struct Case {
    const char* what;
    std::function<void(const std::string&)> make;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"FIFO", [](const std::string& p) { REQUIRE(mkfifo(p.c_str(), 0644) == 0); }, "is a FIFO, not a regular file"},
      {"/dev/zero", [](const std::string& p) { fs::create_symlink("/dev/zero", p); }, "is a character device"},
      {"directory", [](const std::string& p) { fs::create_directories(p); }, "is a directory"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.what));
    const std::string path = dir + "/" + std::to_string(&c - cases.data()) + ".kilnpack";
    c.make(path);
    auto result = kiln_test::run_forked([&] {
      try {
        kiln::Pack::open(path);
        return std::string("opened");
      } catch (const kiln::ArgumentError& e) {
        return std::string("ArgumentError: ") + e.what();
      }
    });
    REQUIRE(result.has_value());   // no hang, no crash
    CHECK(result->find("ArgumentError: kiln: " + path + ": cannot read the pack: " + c.message) == 0);
  }
}

TEST_CASE("pack: preloading a pack without the runtime's arch warns that it serves nothing here") {
  const std::string path = write_sample("other_archs");   // sm_80 and sm_90 entries
  std::vector<std::string> warnings;
  kiln::set_log_handler([&](int level, const std::string& line) {
    if (level == 1) warnings.push_back(line);
  });
  for (const char* arch : {"sm_90a", "sm_90"}) {
    warnings.clear();
    kiln::Options options;
    options.arch = arch;
    options.disk_cache = false;
    options.use_environment = false;
    kiln::Runtime rt(options);
    rt.preload(path);
    CAPTURE(arch);
    if (std::string(arch) == "sm_90a") {
      REQUIRE(warnings.size() == 1);
      CHECK(warnings[0] == path + " holds kernels for sm_80, sm_90 only, and this runtime plans for sm_90a: none of "
                                  "them will be used here (build it with `kiln build --arch sm_90a`)");
    } else {
      CHECK(warnings.empty());   // it holds sm_90 kernels
    }
  }
  kiln::set_log_handler({});
}
