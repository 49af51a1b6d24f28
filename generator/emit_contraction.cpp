// Emission of the contraction template family (placeholder until it lands).
#include "generator/emitter.h"

namespace kiln {

const AnchorEmitter* contraction_emitter(const std::string& template_name) {
  (void)template_name;
  return nullptr;
}

}  // namespace kiln
