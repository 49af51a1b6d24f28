// Loads a spec through the public API and prints the generated source: needs no GPU.
#include <cstdio>

#include <kiln/kiln.h>

int main() {
  kiln::Options options;
  options.arch = "sm_90";
  options.disk_cache = false;
  kiln::Runtime rt(options);
  kiln::Program p = rt.load_string("op scale {\n  dims N = 1000\n  in x: f32[N]\n  out y = 2.0 * x\n}\n", "scale.kiln");
  kiln::Executable e = p.op("scale").specialize({{"N", 1000}});
  const std::string src = e.source();
  std::printf("%s", src.c_str());
  return src.find("extern \"C\" __global__") == std::string::npos ? 1 : 0;
}
