#include "runtime/nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "generator/support/assert.h"
#include "runtime/log.h"

namespace kiln {

namespace {

// NVRTC entry points, resolved by name from the dlopen'ed library. nvrtc.h is
// used for the types only; nothing links against libnvrtc.
struct NvrtcApi {
  void* handle = nullptr;
  std::string library_path;   // the real file loaded, for compiler_id()
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
  decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) ptx = nullptr;
  std::string id;
  std::string include_dir;   // holds cuda_fp16.h; empty when none was found
  bool minimal = false;      // takes -minimal (NVRTC 12.4 on)
};

// NVRTC 13 does not resolve <cuda_fp16.h> / <cuda_bf16.h> by itself ("no
// directories in search list"), so the toolkit's include directory is added.
// The one beside the loaded library comes first: its headers match its version.
std::string find_cuda_include_dir(const std::string& library_path) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  fs::path lib_dir = fs::path(library_path).parent_path();
  candidates.push_back(lib_dir / ".." / "include");
  candidates.push_back(lib_dir / ".." / ".." / "include");   // targets/<triple>/lib -> include
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env); v != nullptr && *v != '\0') candidates.push_back(fs::path(v) / "include");
  candidates.push_back("/usr/local/cuda/include");
  for (const auto& dir : candidates) {
    std::error_code ec;
    if (fs::exists(dir / "cuda_fp16.h", ec)) {
      auto real = fs::canonical(dir, ec);
      return ec ? dir.string() : real.string();
    }
  }
  return {};
}

std::vector<std::string> candidate_libraries() {
  if (const char* env = std::getenv("KILN_NVRTC_LIB"); env != nullptr && *env != '\0') return {env};
  return {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
}

template <class Fn>
void resolve(void* handle, const char* name, Fn& out, const std::string& lib) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  KILN_CHECK(out != nullptr, CompileError, "kiln: NVRTC library '{}' lacks the symbol {}; it is too old or not NVRTC",
             lib, name);
}

NvrtcApi load_api() {
  NvrtcApi api;
  std::string tried;
  for (const auto& name : candidate_libraries()) {
    api.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (api.handle != nullptr) {
      api.library_path = name;
      break;
    }
    const char* err = dlerror();
    tried += fmt::format("\n  {}: {}", name, err != nullptr ? err : "not found");
  }
  KILN_CHECK(api.handle != nullptr, CompileError,
             "kiln: cannot load NVRTC, which compiles kernels at run time. Tried:{}\n"
             "Install the CUDA toolkit's NVRTC (or set KILN_NVRTC_LIB to its path); without NVRTC, "
             "kiln can still run pre-built cubins from a .kilnpack (`kiln build -o FILE.kilnpack`) "
             "or a filled cache directory.",
             tried);
  const std::string& lib = api.library_path;
  resolve(api.handle, "nvrtcVersion", api.version, lib);
  resolve(api.handle, "nvrtcGetErrorString", api.error_string, lib);
  resolve(api.handle, "nvrtcCreateProgram", api.create_program, lib);
  resolve(api.handle, "nvrtcDestroyProgram", api.destroy_program, lib);
  resolve(api.handle, "nvrtcCompileProgram", api.compile_program, lib);
  resolve(api.handle, "nvrtcGetProgramLogSize", api.log_size, lib);
  resolve(api.handle, "nvrtcGetProgramLog", api.log, lib);
  resolve(api.handle, "nvrtcGetCUBINSize", api.cubin_size, lib);
  resolve(api.handle, "nvrtcGetCUBIN", api.cubin, lib);
  resolve(api.handle, "nvrtcGetPTXSize", api.ptx_size, lib);
  resolve(api.handle, "nvrtcGetPTX", api.ptx, lib);

  // The file actually loaded (through symlinks) names the exact build, e.g.
  // libnvrtc.so.13.0.88: two toolkits of one minor version can differ in code.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(api.version), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    auto real = std::filesystem::canonical(info.dli_fname, ec);
    api.library_path = ec ? std::string(info.dli_fname) : real.string();
  }
  int major = 0, minor = 0;
  api.version(&major, &minor);
  // nvrtcVersion gives only major.minor and the library file is often named just
  // libnvrtc.so.13, so its size stands in for the build: two builds of one
  // version practically never have the same size.
  std::error_code ec;
  auto size = std::filesystem::file_size(api.library_path, ec);
  // [Note: -minimal] NVRTC 12.4 on leaves out, with -minimal, what no kiln template uses
  // (textures and surfaces, the device runtime, launches from device code, the runtime API's
  // types): the front end then reads a smaller implicit header, 20-30 ms less of a GEMM's
  // 400 ms cold compile on a 2-core machine. The code is the same: every spec's 420 kernels
  // (--small, sm_80 and sm_90a) gave byte-identical ELF with and without it (2026-12-07). So it
  // is not in compile_options() (the cache key); the NVRTC version is, in compiler_id(). A
  // template of one's own (KILN_TEMPLATE_PATH) that uses one of those features fails to compile
  // with NVRTC's error naming it.
  api.minimal = major > 12 || (major == 12 && minor >= 4);
  api.id = fmt::format("nvrtc {}.{} ({}, {} bytes)", major, minor,
                       std::filesystem::path(api.library_path).filename().string(), ec ? 0 : size);
  api.include_dir = find_cuda_include_dir(api.library_path);
  if (api.include_dir.empty())
    log_warning("no CUDA include directory with cuda_fp16.h found (set CUDA_HOME); kernels using f16/bf16 "
                "will not compile");
  log_debug(fmt::format("loaded {} from {}", api.id, api.library_path));
  return api;
}

// Loaded once per process; a failure is remembered and rethrown (with the same
// message) on every later use, without retrying dlopen.
const NvrtcApi& api() {
  static std::once_flag once;
  static NvrtcApi loaded;
  static std::exception_ptr failure;
  std::call_once(once, [] {
    try {
      loaded = load_api();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
  return loaded;
}

void check_nvrtc(nvrtcResult result, const char* call) {
  if (result == NVRTC_SUCCESS) return;
  throw CompileError(fmt::format("kiln: {} failed: {}", call, api().error_string(result)));
}

// RAII for one nvrtcProgram.
class NvrtcProgram {
 public:
  NvrtcProgram(const CompileRequest& req) {
    std::vector<const char*> headers, names;
    if (req.templates != nullptr) {
      for (const auto& f : req.templates->files()) {
        headers.push_back(f.contents.c_str());
        names.push_back(f.name.c_str());
      }
    }
    check_nvrtc(api().create_program(&prog_, req.source.c_str(), req.file_name.c_str(),
                                     static_cast<int>(headers.size()), headers.data(), names.data()),
                "nvrtcCreateProgram");
  }
  ~NvrtcProgram() { api().destroy_program(&prog_); }
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;

  nvrtcResult compile(const std::vector<std::string>& options) {
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    return api().compile_program(prog_, static_cast<int>(argv.size()), argv.data());
  }

  std::string log() const {
    size_t size = 0;
    check_nvrtc(api().log_size(prog_, &size), "nvrtcGetProgramLogSize");
    std::string text(size, '\0');
    if (size > 0) check_nvrtc(api().log(prog_, text.data()), "nvrtcGetProgramLog");
    while (!text.empty() && text.back() == '\0') text.pop_back();
    return text;
  }

  std::vector<char> cubin() const {
    size_t size = 0;
    check_nvrtc(api().cubin_size(prog_, &size), "nvrtcGetCUBINSize");
    std::vector<char> bytes(size);
    if (size > 0) check_nvrtc(api().cubin(prog_, bytes.data()), "nvrtcGetCUBIN");
    return bytes;
  }

  std::string ptx() const {
    size_t size = 0;
    check_nvrtc(api().ptx_size(prog_, &size), "nvrtcGetPTXSize");
    std::string text(size, '\0');
    if (size > 0) check_nvrtc(api().ptx(prog_, text.data()), "nvrtcGetPTX");
    while (!text.empty() && text.back() == '\0') text.pop_back();
    return text;
  }

 private:
  nvrtcProgram prog_ = nullptr;
};

bool valid_arch(const std::string& arch) {
  static const std::regex pattern("sm_[0-9]{2,3}a?");
  return std::regex_match(arch, pattern);
}

// The first line of the log that says "error", for the exception summary.
std::string first_error(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find("error") != std::string::npos) return line;
  return log.empty() ? "(empty log)" : log.substr(0, log.find('\n'));
}

int to_int(const std::string& digits) {
  long v = std::strtol(digits.c_str(), nullptr, 10);
  return static_cast<int>(std::min<long>(v, INT_MAX));
}

}  // namespace

std::string compiler_id() { return api().id; }

bool nvrtc_available(std::string* why) {
  try {
    api();
    return true;
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
}

std::vector<std::string> compile_options(const std::string& arch, const std::vector<std::string>& extra) {
  KILN_CHECK(valid_arch(arch), ArgumentError,
             "kiln: unknown GPU architecture '{}'; expected sm_XX or sm_XXa, e.g. sm_80, sm_90, sm_90a", arch);
  // No --use_fast_math: kiln's results are compared with an fp64 reference and
  // PyTorch, which do not flush denormals or use approximate transcendentals.
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "-std=c++17", "-default-device",
                                      "--ptxas-options=-v"};
  options.insert(options.end(), extra.begin(), extra.end());
  return options;
}

std::vector<KernelResources> parse_ptxas_report(const std::string& log) {
  static const std::regex entry_re(R"(Compiling entry function '([^']+)')");
  static const std::regex props_re(R"(Function properties for (\S+))");
  static const std::regex stack_re(R"((\d+) bytes stack frame)");
  static const std::regex stores_re(R"((\d+) bytes spill stores)");
  static const std::regex loads_re(R"((\d+) bytes spill loads)");
  static const std::regex regs_re(R"(Used (\d+) registers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");

  std::vector<KernelResources> out;
  KernelResources* current = nullptr;     // the entry being compiled ("Used N registers" follows)
  KernelResources* properties = nullptr;  // the entry the next stack/spill line belongs to
  bool properties_of_other = false;       // a non-entry device function's properties
  std::istringstream in(log);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry_re)) {
      out.push_back({m[1].str()});
      current = &out.back();
      properties = nullptr;
      continue;
    }
    if (std::regex_search(line, m, props_re)) {
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& r) { return r.kernel == m[1].str(); });
      properties = it != out.end() ? &*it : nullptr;
      properties_of_other = properties == nullptr;
      continue;
    }
    if (std::regex_search(line, m, stack_re)) {
      KernelResources* target = properties != nullptr ? properties : (properties_of_other ? nullptr : current);
      if (target != nullptr) {
        target->stack_bytes = to_int(m[1].str());
        if (std::regex_search(line, m, stores_re)) target->spill_stores = to_int(m[1].str());
        if (std::regex_search(line, m, loads_re)) target->spill_loads = to_int(m[1].str());
      }
      properties = nullptr;
      properties_of_other = false;
      continue;
    }
    if (current != nullptr && std::regex_search(line, m, regs_re)) {
      current->registers = to_int(m[1].str());
      current->shared_bytes = std::regex_search(line, m, smem_re) ? to_int(m[1].str()) : 0;
    }
  }
  return out;
}

CompileResult compile(const CompileRequest& req) {
  CompileResult result;
  result.options = compile_options(req.arch, req.extra_options);
  // The include path is machine-specific, so it is not in compile_options()
  // (the cache key); its headers belong to the NVRTC build in compiler_id().
  if (!api().include_dir.empty()) result.options.push_back("--include-path=" + api().include_dir);
  if (api().minimal) result.options.push_back("-minimal");   // [Note: -minimal]
  auto start = std::chrono::steady_clock::now();
  {
    NvrtcProgram prog(req);
    nvrtcResult status = prog.compile(result.options);
    result.log = prog.log();
    if (status != NVRTC_SUCCESS) {
      throw CompileError(fmt::format("kiln: NVRTC failed to compile {} for {}: {}", req.file_name, req.arch,
                                     first_error(result.log)),
                         result.log, result.options, req.source);
    }
    result.cubin = prog.cubin();
  }
  result.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  result.resources = parse_ptxas_report(result.log);

  if (req.want_ptx) {
    // A compile for a real sm_XX yields no PTX, so PTX comes from a second
    // compile for the matching virtual arch (compute_XX), same other options.
    std::vector<std::string> ptx_options = result.options;
    ptx_options[0] = "--gpu-architecture=compute_" + req.arch.substr(3);
    ptx_options.erase(std::remove(ptx_options.begin(), ptx_options.end(), "--ptxas-options=-v"), ptx_options.end());
    NvrtcProgram prog(req);
    nvrtcResult status = prog.compile(ptx_options);
    if (status != NVRTC_SUCCESS) {
      std::string log = prog.log();
      throw CompileError(fmt::format("kiln: NVRTC failed to compile {} to PTX for {}: {}", req.file_name,
                                     req.arch, first_error(log)),
                         log, ptx_options, req.source);
    }
    result.ptx = prog.ptx();
  }
  return result;
}

std::vector<CompileResult> compile_all(const std::vector<CompileRequest>& reqs, int jobs) {
  std::vector<CompileResult> results(reqs.size());
  std::vector<std::exception_ptr> errors(reqs.size());
  if (reqs.empty()) return results;
  api();   // load once up front, so a missing NVRTC fails before any thread starts
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  int workers = jobs > 0 ? jobs : std::max(1, hw);
  workers = std::min<int>(workers, static_cast<int>(reqs.size()));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < reqs.size(); i = next++) {
      try {
        results[i] = compile(reqs[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

}  // namespace kiln
