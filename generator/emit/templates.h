// The kernel template library: the .cuh files under templates/, embedded at build
// time, plus an optional user directory that adds or overrides files by name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct EmbeddedTemplate {
  std::string_view name;       // "kiln/elementwise.cuh"
  std::string_view contents;
};

// Built into the library (generated from templates/ by cmake/embed_templates.cmake).
const std::vector<EmbeddedTemplate>& embedded_templates();

struct TemplateFile {
  std::string name;
  std::string contents;
};

// The library as NVRTC sees it: embedded files, then every *.cuh, *.h and *.cu.in under
// `user_dir` (recursively, by relative name) replacing or adding. Sorted by name.
class TemplateLibrary {
 public:
  explicit TemplateLibrary(const std::string& user_dir = "");
  const std::vector<TemplateFile>& files() const { return files_; }
  const TemplateFile* find(std::string_view name) const;
  // A stable digest of every name and contents: part of the disk-cache key.
  const std::string& digest() const { return digest_; }

 private:
  std::vector<TemplateFile> files_;
  std::string digest_;
};

}  // namespace kiln
