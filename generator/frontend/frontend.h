// The op-spec front end: text -> parsed SpecFile -> checked ir::Ir per op.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "generator/frontend/ast.h"
#include "generator/ir/ir.h"
#include "generator/support/source.h"

namespace kiln {

struct SpecFile {                     // a parsed (not yet checked) file
  std::shared_ptr<const SourceFile> source;
  std::shared_ptr<const ast::File> ast;
  std::vector<std::string> op_names() const;   // declaration order
};

// Throws SpecError holding every parse error of the file.
SpecFile parse_spec(std::string text, std::string file_name);
// Reads the file; an unreadable file throws kiln::Error.
SpecFile load_spec_file(const std::string& path);

// Checks one op with consts substituted (defaults, overridden by `consts`;
// names that are not consts of the op are ignored). Throws SpecError; an
// unknown op name throws ArgumentError. Warnings (unused inputs) are appended
// rendered to *warnings when non-null.
std::shared_ptr<const ir::Ir> check_op(const SpecFile& spec, std::string_view op_name,
                                       const Consts& consts = {},
                                       std::vector<std::string>* warnings = nullptr);

// Checks every op, collecting all errors of all ops into one SpecError.
std::vector<std::shared_ptr<const ir::Ir>> check_all(const SpecFile& spec,
                                                     const Consts& consts = {},
                                                     std::vector<std::string>* warnings = nullptr);

}  // namespace kiln
