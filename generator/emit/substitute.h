// Strict placeholder substitution for entry templates.
//
// Placeholders are `${name}` (name: [A-Za-z_][A-Za-z0-9_]*). Unlike CUTLASS's
// generator, which leaves an unknown `${x}` behind, every failure is an error:
// a placeholder with no value, a value that no placeholder uses, or a malformed
// `${`. `$$` writes a literal `$`.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace kiln {

// Throws kiln::Error naming the template and the offending key.
std::string substitute(std::string_view template_name, std::string_view text,
                       const std::map<std::string, std::string>& values);

}  // namespace kiln
