// ast::OpDecl -> ir::Ir: names, types, shapes and attribute values.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "generator/frontend/ast.h"
#include "generator/support/diagnostics.h"
#include "generator/ir/ir.h"

namespace kiln {

// Checks one op with its consts substituted: a value in `consts` overrides the
// const's default (names that are not consts of this op are ignored, so one
// -D list can serve every op of a file). Errors and warnings go to
// `diagnostics`; the result is null when this op had errors.
std::shared_ptr<ir::Ir> check(const ast::OpDecl& op, std::shared_ptr<const SourceFile> source,
                              const Consts& consts, Diagnostics& diagnostics);

}  // namespace kiln
