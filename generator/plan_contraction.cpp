// Planning of the contraction template family (placeholder until it lands).
#include "generator/planner.h"

namespace kiln {

const AnchorRule* contraction_rule(ir::OpKind kind) {
  (void)kind;
  return nullptr;
}

}  // namespace kiln
