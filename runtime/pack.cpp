#include "runtime/pack.h"

#include <algorithm>

#include <fmt/format.h>

#include "generator/support/file_read.h"
#include "runtime/binary_io.h"
#include "runtime/hash.h"

namespace kiln {

namespace {
constexpr std::string_view kPackMagic = "KILNPACK";
}  // namespace

PackWriter::PackWriter(std::string compiler_id) : compiler_id_(std::move(compiler_id)) {}

void PackWriter::add(const std::string& key, const std::string& arch, const CacheEntry& entry) {
  entries_[key] = {arch, entry};
}

void PackWriter::write(const std::string& path) const {
  ByteWriter index;
  std::uint64_t offset = 0;
  for (const auto& [key, value] : entries_) {
    const auto& [arch, entry] = value;
    index.str(key);
    index.str(arch);
    index.str(metadata_to_json(entry.metadata));
    index.u64(offset);
    index.u64(entry.cubin.size());
    index.u64(checksum64(entry.cubin.data(), entry.cubin.size()));
    offset += entry.cubin.size();
  }
  ByteWriter out;
  out.bytes(kPackMagic);
  out.u32(kPackFormatVersion);
  out.str(compiler_id_);
  ByteWriter tuned;
  tuned.u32(static_cast<std::uint32_t>(tuned_.size()));
  for (const auto& [name, text] : tuned_) {
    tuned.str(name);
    tuned.str(text);
  }
  out.u64(tuned.size());
  out.u64(checksum64(tuned.buffer().data(), tuned.size()));
  out.bytes(tuned.buffer());
  out.u32(static_cast<std::uint32_t>(entries_.size()));
  out.u64(index.size());
  out.u64(checksum64(index.buffer().data(), index.size()));
  out.bytes(index.buffer());
  for (const auto& [key, value] : entries_) out.bytes(value.second.cubin);
  std::string error;
  if (!write_file_atomic(path, out.buffer().data(), out.size(), &error))
    throw IoError(fmt::format("kiln: cannot write pack {}: {}", path, error));
}

Pack Pack::open(const std::string& path) {
  // A damaged pack is the caller's input that is wrong (ArgumentError); a read that
  // fails is an I/O error. A FIFO or a device is refused unread.
  auto fail = [&](const std::string& what) { return ArgumentError(fmt::format("kiln: {}: {}", path, what)); };
  FileRead file = try_read_regular_file(path, kMaxPackBytes);
  if (file.status == ReadStatus::io_error) throw IoError(fmt::format("kiln: {}: cannot read the pack: {}", path, file.reason));
  if (!file.ok()) throw fail("cannot read the pack: " + file.reason);
  return parse(file.data, path);
}

Pack Pack::parse(const std::string& bytes, const std::string& path) {
  auto fail = [&](const std::string& what) { return ArgumentError(fmt::format("kiln: {}: {}", path, what)); };
  ByteReader in(bytes.data(), bytes.size());
  if (in.bytes(kPackMagic.size()) != kPackMagic)
    throw fail("not a kiln pack (bad magic); packs are written by `kiln build -o FILE.kilnpack`");
  std::uint32_t version = in.u32();
  if (!in.ok()) throw fail("truncated header");
  if (version != 1 && version != kPackFormatVersion)
    throw fail(fmt::format("pack format version {}, this kiln reads versions 1 and {}; rebuild the pack", version,
                           kPackFormatVersion));
  Pack pack;
  pack.path_ = path;
  pack.compiler_id_ = in.str();
  if (version >= 2) {
    const std::uint64_t length = in.u64(), checksum = in.u64();
    if (!in.ok()) throw fail("truncated header");
    std::string_view section = in.bytes(length);
    if (!in.ok()) throw fail(fmt::format("truncated: the tuned section needs {} bytes, {} remain", length, in.remaining()));
    if (checksum64(section.data(), section.size()) != checksum) throw fail("tuned section checksum mismatch (corrupted)");
    ByteReader t(section.data(), section.size());
    const std::uint32_t n = t.u32();
    for (std::uint32_t i = 0; i < n && t.ok(); ++i) {
      std::string name = t.str(), text = t.str();
      if (t.ok()) pack.tuned_[std::move(name)] = std::move(text);
    }
    if (!t.ok() || t.remaining() != 0) throw fail("tuned section is malformed (corrupted)");
  }
  std::uint32_t count = in.u32();
  std::uint64_t index_length = in.u64();
  std::uint64_t index_checksum = in.u64();
  if (!in.ok()) throw fail("truncated header");
  std::string_view index_bytes = in.bytes(index_length);
  if (!in.ok()) throw fail(fmt::format("truncated: the index needs {} bytes, {} remain", index_length, in.remaining()));
  if (checksum64(index_bytes.data(), index_bytes.size()) != index_checksum) throw fail("index checksum mismatch (corrupted)");
  std::size_t blob_start = in.pos();
  std::uint64_t blob_region = in.remaining();

  ByteReader index(index_bytes.data(), index_bytes.size());
  std::uint64_t blob_end = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    PackItem item;
    item.key = index.str();
    item.arch = index.str();
    std::string meta = index.str();
    std::uint64_t offset = index.u64();
    std::uint64_t length = index.u64();
    std::uint64_t checksum = index.u64();
    if (!index.ok()) throw fail(fmt::format("index record {} of {} is truncated", i + 1, count));
    if (offset > blob_region || length > blob_region - offset)
      throw fail(fmt::format("entry {} ({}) lies past the end of the file (truncated)", i + 1, item.key));
    const char* blob = bytes.data() + blob_start + offset;
    if (checksum64(blob, length) != checksum)
      throw fail(fmt::format("entry {} ({}) checksum mismatch (corrupted)", i + 1, item.key));
    CacheEntry entry;
    try {
      entry.metadata = metadata_from_json(meta);
    } catch (const Error& e) {
      throw fail(fmt::format("entry {} ({}): {}", i + 1, item.key, e.what()));
    }
    entry.cubin.assign(blob, blob + length);
    item.cubin_bytes = length;
    item.metadata = entry.metadata;
    blob_end = std::max(blob_end, offset + length);
    if (!pack.by_key_.emplace(item.key, std::move(entry)).second)
      throw fail(fmt::format("entry {} repeats key {}", i + 1, item.key));
    pack.items_.push_back(std::move(item));
  }
  if (index.remaining() != 0) throw fail("index has trailing bytes (corrupted)");
  if (blob_end != blob_region)
    throw fail(fmt::format("{} bytes after the last entry (corrupted or concatenated)", blob_region - blob_end));
  std::sort(pack.items_.begin(), pack.items_.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return pack;
}

const CacheEntry* Pack::find(const std::string& key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &it->second;
}

std::string Pack::describe_contents(std::size_t max_lines) const {
  std::vector<std::string> lines;
  for (const auto& item : items_)
    lines.push_back(fmt::format("{} ({}) {}", item.metadata.op_name, item.metadata.bindings, item.arch));
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < max_lines; ++i) out += "  " + lines[i] + "\n";
  if (lines.size() > max_lines) out += fmt::format("  ... and {} more\n", lines.size() - max_lines);
  if (lines.empty()) out = "  (empty pack)\n";
  return out;
}

}  // namespace kiln
