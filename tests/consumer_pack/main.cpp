// Runs op `scale` (N = 1000) of the spec given as argv[1] for sm_90a with no disk cache, and asks
// for its kernels: with NVRTC unloadable (KILN_NVRTC_LIB=/nonexistent) they come only from a
// pack, the one compiled in (`embedded`) or the one preloaded from its file (`preloaded`).
// Needs no GPU. Exit 0 when every kernel came from the pack and nothing was compiled.
#include <cstdio>
#include <exception>

#include <kiln/kiln.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SPEC\n", argv[0]);
    return 2;
  }
  try {
    kiln::Options options;
    options.arch = "sm_90a";
    options.disk_cache = false;
    kiln::Runtime rt(options);
#ifdef KILN_PRELOAD
    rt.preload(SCALE_FILE_KILNPACK);
#endif
    const auto kernels = rt.load_file(argv[1]).op("scale").specialize({{"N", 1000}}).kernels();
    const kiln::Stats s = rt.stats();
    std::printf("%zu kernels, %llu from a pack, %llu compiled\n", kernels.size(),
                static_cast<unsigned long long>(s.disk_hits), static_cast<unsigned long long>(s.compiles));
    return s.compiles == 0 && s.disk_hits == kernels.size() && !kernels.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
