#include "generator/emit/templates.h"

#include <algorithm>
#include <filesystem>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "generator/support/file_read.h"

namespace kiln {

namespace fs = std::filesystem;

TemplateLibrary::TemplateLibrary(const std::string& user_dir) {
  for (const auto& t : embedded_templates()) files_.push_back({std::string(t.name), std::string(t.contents)});
  if (!user_dir.empty() && fs::is_directory(user_dir)) {
    for (const auto& entry : fs::recursive_directory_iterator(user_dir)) {
      const std::string file = entry.path().filename().string();
      const bool is_template = entry.path().extension() == ".cuh" || entry.path().extension() == ".h" || (file.size() > 6 && file.compare(file.size() - 6, 6, ".cu.in") == 0);
      if (!entry.is_regular_file() || !is_template) continue;
      std::string text = read_regular_file(entry.path().string(), kMaxSourceBytes, "template");
      std::string name = fs::relative(entry.path(), user_dir).generic_string();
      auto it = std::find_if(files_.begin(), files_.end(), [&](const auto& f) { return f.name == name; });
      if (it != files_.end()) it->contents = std::move(text);
      else files_.push_back({name, std::move(text)});
    }
  }
  std::sort(files_.begin(), files_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (const auto& f : files_) {
    std::uint64_t sizes[2] = {f.name.size(), f.contents.size()};
    XXH3_128bits_update(state, sizes, sizeof sizes);
    XXH3_128bits_update(state, f.name.data(), f.name.size());
    XXH3_128bits_update(state, f.contents.data(), f.contents.size());
  }
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  digest_ = hex;
}

const TemplateFile* TemplateLibrary::find(std::string_view name) const {
  for (const auto& f : files_)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace kiln
