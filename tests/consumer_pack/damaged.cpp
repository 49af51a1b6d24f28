// A damaged pack compiled into the program (what a corrupted binary would hold): constructing a
// Runtime throws ArgumentError naming it. Exit 0 when it did, with the name in the message.
#include <cstdio>
#include <string>

#include <kiln/kiln.h>

namespace {
const unsigned char kGarbage[] = {'n', 'o', 't', ' ', 'a', ' ', 'p', 'a', 'c', 'k'};
const bool kRegistered = kiln::register_embedded_pack("garbage", kGarbage, sizeof kGarbage);
}  // namespace

int main() {
  if (!kRegistered) return 1;
  try {
    kiln::Runtime rt;
  } catch (const kiln::ArgumentError& e) {
    std::printf("%s\n", e.what());
    return std::string(e.what()).find("<embedded pack garbage>") == std::string::npos ? 1 : 0;
  }
  std::printf("no error\n");
  return 1;
}
