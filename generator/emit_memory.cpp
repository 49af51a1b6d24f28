// Emission of the memory template family (placeholder until it lands).
#include "generator/emitter.h"

namespace kiln {

const AnchorEmitter* memory_bound_emitter(const std::string& template_name) {
  (void)template_name;
  return nullptr;
}

}  // namespace kiln
