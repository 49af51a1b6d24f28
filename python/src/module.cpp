// kiln._kiln — the Python extension: a thin nanobind layer over the C++ API (include/kiln/kiln.h).
// Everything framework-specific (DLPack and __cuda_array_interface__ objects, output allocation,
// streams, warnings) lives in python/kiln/*.py; this file takes tensors as (pointer, dtype,
// shape) triples (the dtype as a code of DTYPE_CODES) and returns plain Python values. kiln's C++
// exceptions become the classes of kiln.errors, with their details as attributes (SpecError's
// file, line and column, CompileError's log, CudaError's call and code). NVRTC and libcuda stay dlopen'ed by the runtime, so the module
// imports, checks, plans and generates on a machine without a GPU.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/device.h"   // kiln's own device memory and synchronize, for JAX outputs

namespace nb = nanobind;

namespace {

// ---------------------------------------------------------------- errors
// kiln.errors, imported when the module loads (kiln/__init__.py imports it first). A strong
// reference kept for the process's life: a static nb::object would be released after the
// interpreter has shut down.
PyObject* g_errors = nullptr;

// Raises kiln.errors.<name>(message) with `attrs` set on the instance.
void raise_kiln(const char* name, const std::exception& e, std::initializer_list<std::pair<const char*, nb::object>> attrs) {
  nb::object type = nb::borrow(g_errors).attr(name);
  nb::object value = type(nb::str(e.what()));
  for (const auto& [key, v] : attrs) nb::setattr(value, key, v);
  PyErr_SetObject(type.ptr(), value.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const kiln::SpecError& e) {
    raise_kiln("SpecError", e, {{"file", nb::str(e.file().c_str())}, {"line", nb::int_(e.line())}, {"column", nb::int_(e.column())}});
  } catch (const kiln::CompileError& e) {
    raise_kiln("CompileError", e, {{"log", nb::str(e.log().c_str())}, {"source", nb::str(e.source().c_str())}});
  } catch (const kiln::CudaError& e) {
    raise_kiln("CudaError", e, {{"call", nb::str(e.call().c_str())}, {"code", nb::int_(e.code())},
                                {"code_name", nb::str(e.code_name().c_str())}});
  } catch (const kiln::ShapeError& e) {
    raise_kiln("ShapeError", e, {});
  } catch (const kiln::ArgumentError& e) {
    raise_kiln("ArgumentError", e, {});
  } catch (const kiln::IoError& e) {
    raise_kiln("IoError", e, {});
  } catch (const kiln::UnsupportedError& e) {
    raise_kiln("UnsupportedError", e, {});
  } catch (const kiln::InternalError& e) {
    raise_kiln("InternalError", e, {});
  } catch (const kiln::Error& e) {
    raise_kiln("Error", e, {});
  }
}

// ---------------------------------------------------------------- values
// Every dtype; a code is the enum's value (0 .. boolean).
constexpr kiln::DType kDTypes[] = {kiln::DType::f32, kiln::DType::f16, kiln::DType::bf16, kiln::DType::f64,
                                   kiln::DType::i32, kiln::DType::i64, kiln::DType::u64, kiln::DType::boolean};

// kiln.DTYPE_CODES: dtype name -> the code a tensor argument carries (DType's value).
nb::dict dtype_codes() {
  nb::dict codes;
  for (kiln::DType d : kDTypes) codes[nb::str(std::string(kiln::dtype_name(d)).c_str())] = static_cast<int>(d);
  return codes;
}

kiln::Precision precision_of(const std::string& name) {
  if (name == "fp32" || name == "fp32_accurate") return kiln::Precision::fp32_accurate;
  if (name == "ieee") return kiln::Precision::ieee;
  if (name == "tf32") return kiln::Precision::tf32;
  if (name == "3xtf32" || name == "tf32x3") return kiln::Precision::tf32x3;
  throw kiln::ArgumentError("precision '" + name + "' is not one of fp32, ieee, tf32, 3xtf32");
}

kiln::DType dtype_of_code(long code) {
  if (code < 0 || code > static_cast<long>(kiln::DType::boolean))
    throw kiln::ArgumentError("no dtype has code " + std::to_string(code));
  return static_cast<kiln::DType>(code);
}

// A tensor argument from Python: the tuple (pointer, dtype code, shape), the shape any tuple of
// ints (torch.Size is one). This is every call's hot path: raw CPython calls, no strings.
// The extents of a shape tuple of ints; false (the Python error cleared) for anything else.
bool extents_of(PyObject* shape, std::vector<std::int64_t>& extents) {
  if (!PyTuple_Check(shape)) return false;
  extents.resize(static_cast<std::size_t>(PyTuple_GET_SIZE(shape)));
  for (std::size_t d = 0; d < extents.size(); ++d) {
    extents[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, static_cast<Py_ssize_t>(d)));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
  }
  return true;
}

kiln::TensorRef tensor_of(PyObject* item) {
  if (PyTuple_GET_SIZE(item) != 3) throw kiln::ArgumentError("a tensor argument must be (pointer, dtype code, shape)");
  const unsigned long long ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(item, 0));
  const long code = PyLong_AsLong(PyTuple_GET_ITEM(item, 1));
  PyObject* shape = PyTuple_GET_ITEM(item, 2);
  if (PyErr_Occurred() || !PyTuple_Check(shape)) {
    PyErr_Clear();
    throw kiln::ArgumentError("a tensor argument must be (pointer, dtype code, shape)");
  }
  const kiln::DType dtype = dtype_of_code(code);
  std::vector<std::int64_t> extents;
  if (!extents_of(shape, extents)) throw kiln::ArgumentError("a tensor's shape must hold integers");
  return kiln::TensorRef(reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)), dtype, std::move(extents));
}

// A call's arguments from Python: tensors as above; anything else is a scalar (bool, int or float).
std::vector<kiln::Arg> args_of(const nb::list& items) {
  std::vector<kiln::Arg> args;
  args.reserve(items.size());
  for (nb::handle h : items) {
    if (PyTuple_Check(h.ptr())) {
      args.emplace_back(tensor_of(h.ptr()));
    } else if (nb::isinstance<nb::bool_>(h)) {
      args.emplace_back(nb::cast<bool>(h));
    } else if (nb::isinstance<nb::int_>(h)) {   // i64, or u64 above its range (a seed)
      long long v;
      if (nb::try_cast(h, v)) args.emplace_back(v);
      else args.emplace_back(nb::cast<unsigned long long>(h));
    } else if (nb::isinstance<nb::float_>(h)) {
      args.emplace_back(nb::cast<double>(h));
    } else {
      throw kiln::ArgumentError("an argument is neither a tensor nor a number: " + nb::cast<std::string>(nb::repr(h)));
    }
  }
  return args;
}

// ---------------------------------------------------------------- the PyTorch fast path
// [Note: the Python fast path] in kiln/_api.py, its reads done here: a call whose every value is
// a contiguous CUDA torch.Tensor (that exact type) needing no grad check, of a dtype kiln has, or
// an exact bool, int or float. kiln/_tensors.py hands torch.Tensor, its dtypes and
// torch.empty_like over once (set_torch). Where a value is anything else the call is not taken:
// nothing is launched, a Python error met on the way is cleared (the general path meets it again
// and reports it), and the package goes its own way.
struct TorchFast {
  PyTypeObject* tensor = nullptr;
  std::vector<std::pair<PyObject*, kiln::DType>> dtypes;   // torch dtype objects (kept alive) -> kiln's
  PyObject* empty_like = nullptr;                           // torch.empty_like
  PyObject* contiguous = nullptr;                           // {"memory_format": torch.contiguous_format}
  PyObject *is_cuda = nullptr, *requires_grad = nullptr, *is_contiguous = nullptr, *dtype = nullptr,
           *data_ptr = nullptr, *shape = nullptr;           // interned attribute names
};
TorchFast g_torch;

void set_torch(nb::handle tensor_type, const nb::dict& dtype_codes, nb::handle empty_like, nb::handle contiguous) {
  g_torch.tensor = reinterpret_cast<PyTypeObject*>(nb::borrow(tensor_type).release().ptr());
  for (auto [dtype, code] : dtype_codes)
    g_torch.dtypes.emplace_back(nb::borrow(dtype).release().ptr(), dtype_of_code(nb::cast<long>(code)));
  g_torch.empty_like = nb::borrow(empty_like).release().ptr();
  nb::dict kwargs;
  kwargs["memory_format"] = contiguous;
  g_torch.contiguous = kwargs.release().ptr();
  for (auto [field, name] : {std::pair{&g_torch.is_cuda, "is_cuda"}, {&g_torch.requires_grad, "requires_grad"},
                             {&g_torch.is_contiguous, "is_contiguous"}, {&g_torch.dtype, "dtype"},
                             {&g_torch.data_ptr, "data_ptr"}, {&g_torch.shape, "shape"}})
    *field = PyUnicode_InternFromString(name);
}

// A new reference to v.name (or v.name() with `call`), or null with no Python error left.
PyObject* torch_read(PyObject* v, PyObject* name, bool call) {
  PyObject* r = call ? PyObject_CallMethodNoArgs(v, name) : PyObject_GetAttr(v, name);
  if (r == nullptr) PyErr_Clear();
  return r;
}

// v's data pointer (v.data_ptr()); false where it has none.
bool torch_pointer(PyObject* v, void** data) {
  PyObject* p = torch_read(v, g_torch.data_ptr, true);
  if (p == nullptr) return false;
  const unsigned long long ptr = PyLong_AsUnsignedLongLong(p);
  Py_DECREF(p);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  *data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr));
  return true;
}

// Appends v's argument when the fast path takes v; with `shape`, a new reference to a tensor's
// torch.Size goes there (the outputs' cache key reads it).
bool torch_fast_arg(PyObject* v, std::vector<kiln::Arg>& args, PyObject** shape = nullptr) {
  PyTypeObject* type = Py_TYPE(v);
  if (type == &PyBool_Type) {
    args.emplace_back(v == Py_True);
    return true;
  }
  if (type == &PyFloat_Type) {
    args.emplace_back(PyFloat_AS_DOUBLE(v));
    return true;
  }
  if (type == &PyLong_Type) {   // i64, or u64 above its range (a seed), as args_of takes them
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0 && !PyErr_Occurred()) {
      args.emplace_back(value);
      return true;
    }
    PyErr_Clear();
    const unsigned long long u = PyLong_AsUnsignedLongLong(v);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    args.emplace_back(u);
    return true;
  }
  if (type != g_torch.tensor || type == nullptr) return false;
  auto truth = [&](PyObject* name, bool call) {   // 1, 0, or -1 (neither, or an error)
    PyObject* r = torch_read(v, name, call);
    const int t = r == Py_True ? 1 : r == Py_False ? 0 : -1;
    Py_XDECREF(r);
    return t;
  };
  if (truth(g_torch.is_cuda, false) != 1 || truth(g_torch.requires_grad, false) != 0 ||
      truth(g_torch.is_contiguous, true) != 1)
    return false;
  PyObject* dtype_object = torch_read(v, g_torch.dtype, false);
  if (dtype_object == nullptr) return false;
  const auto known = std::find_if(g_torch.dtypes.begin(), g_torch.dtypes.end(),
                                  [&](const auto& entry) { return entry.first == dtype_object; });
  Py_DECREF(dtype_object);
  void* data = nullptr;
  if (known == g_torch.dtypes.end() || !torch_pointer(v, &data)) return false;
  PyObject* size = torch_read(v, g_torch.shape, false);
  std::vector<std::int64_t> extents;
  if (size == nullptr || !extents_of(size, extents)) {
    Py_XDECREF(size);
    return false;
  }
  args.emplace_back(kiln::TensorRef(data, known->second, std::move(extents)));
  if (shape != nullptr) *shape = size;
  else Py_DECREF(size);
  return true;
}

// Op.call_torch: the call on the fast path, or None where it is not taken. With `out` (a tensor,
// or a tuple or list of `outputs` of them) it returns `out`; without, the outputs come from the
// templates cached under the key (id(op), dtype code, torch.Size, ... of the tensor inputs: what
// Op._key builds), torch.empty_like of each, returned as one tensor or a tuple; a key not cached
// yet is not taken (the package makes its templates).
nb::object call_torch(const kiln::Op& op, std::uintptr_t op_id, const nb::tuple& inputs, nb::handle out,
                      const nb::dict& templates, std::uintptr_t stream, std::size_t outputs) {
  std::vector<kiln::Arg> args;
  args.reserve(inputs.size() + outputs);
  if (!out.is_none()) {
    const bool several = PyTuple_Check(out.ptr()) || PyList_Check(out.ptr());
    const nb::object outs = several ? nb::borrow(out) : nb::object(nb::make_tuple(out));
    if (nb::len(outs) != outputs) return nb::none();
    for (nb::handle v : inputs)
      if (!torch_fast_arg(v.ptr(), args)) return nb::none();
    for (nb::handle v : outs)
      if (Py_TYPE(v.ptr()) != g_torch.tensor || !torch_fast_arg(v.ptr(), args)) return nb::none();
    nb::gil_scoped_release release;
    op(reinterpret_cast<kiln::Stream>(stream), args);
    return nb::borrow(out);
  }
  nb::list key;
  key.append(nb::int_(op_id));
  for (nb::handle v : inputs) {
    PyObject* shape = nullptr;
    if (!torch_fast_arg(v.ptr(), args, &shape)) return nb::none();
    if (shape != nullptr) {
      key.append(nb::int_(static_cast<int>(args.back().tensor().dtype)));
      key.append(nb::steal(shape));
    }
  }
  PyObject* made = PyDict_GetItem(templates.ptr(), nb::tuple(key).ptr());   // borrowed; no error raised
  if (made == nullptr || !PyList_Check(made)) return nb::none();
  nb::list results;
  for (nb::handle entry : nb::borrow<nb::list>(made)) {   // (template, dtype code, shape)
    nb::object o = nb::steal(PyObject_Call(g_torch.empty_like, nb::make_tuple(entry[0]).ptr(), g_torch.contiguous));
    if (!o.is_valid()) throw nb::python_error();
    void* data = nullptr;
    std::vector<std::int64_t> extents;
    if (!torch_pointer(o.ptr(), &data) || !extents_of(nb::object(entry[2]).ptr(), extents))
      throw kiln::InternalError("kiln: a new output from torch.empty_like has no data pointer or shape");
    args.emplace_back(kiln::TensorRef(data, dtype_of_code(nb::cast<long>(entry[1])), std::move(extents)));
    results.append(o);
  }
  {
    nb::gil_scoped_release release;
    op(reinterpret_cast<kiln::Stream>(stream), args);
  }
  return results.size() == 1 ? nb::object(results[0]) : nb::object(nb::tuple(results));
}

kiln::Consts consts_of(const nb::dict& d) {
  kiln::Consts consts;
  for (auto [k, v] : d) {
    const std::string name = nb::cast<std::string>(k);
    if (nb::isinstance<nb::bool_>(v)) consts[name] = nb::cast<bool>(v);
    else if (nb::isinstance<nb::int_>(v)) consts[name] = nb::cast<long long>(v);
    else if (nb::isinstance<nb::float_>(v)) consts[name] = nb::cast<double>(v);
    else throw kiln::ArgumentError("const '" + name + "' must be a bool, an int or a float");
  }
  return consts;
}

// One argument as Python reads it: {"name", "is_tensor", "is_output", "dtype", "shape"}.
nb::dict argument_dict(const std::string& name, bool is_tensor, bool is_output, kiln::DType dtype, nb::object shape) {
  nb::dict d;
  d["name"] = name;
  d["is_tensor"] = is_tensor;
  d["is_output"] = is_output;
  d["dtype"] = std::string(kiln::dtype_name(dtype));
  d["shape"] = shape;
  return d;
}

nb::list arguments_list(const std::vector<kiln::ArgumentInfo>& infos) {
  nb::list out;
  for (const auto& a : infos) out.append(argument_dict(a.name, a.is_tensor, a.is_output, a.dtype, nb::tuple(nb::cast(a.shape))));
  return out;
}

// A ShapeExpr as Python reads it (kiln/torch.py, _evaluate): a list of (kind, value, dim, lhs,
// rhs) tuples, operands first, the value the last one's.
nb::list shape_expr(const kiln::ShapeExpr& e) {
  static const char* const kinds[] = {"const", "dim", "add", "sub", "mul", "floordiv", "min"};
  nb::list nodes;
  for (const auto& n : e.nodes)
    nodes.append(nb::make_tuple(kinds[static_cast<int>(n.kind)], n.value, n.dim, n.lhs, n.rhs));
  return nodes;
}

nb::dict shape_rules_dict(const kiln::ShapeRules& rules) {
  nb::list arguments;
  for (const auto& a : rules.arguments) {
    nb::list shape;
    for (const auto& e : a.shape) shape.append(shape_expr(e));
    arguments.append(argument_dict(a.name, a.is_tensor, a.is_output, a.dtype, shape));
  }
  nb::list equal;
  for (const auto& q : rules.equal) equal.append(nb::make_tuple(shape_expr(q.lhs), shape_expr(q.rhs), q.message));
  nb::dict out;
  out["arguments"] = arguments;
  out["defaults"] = nb::cast(rules.defaults);
  out["equal"] = equal;
  return out;
}

nb::list kernels_list(const std::vector<kiln::KernelInfo>& infos) {
  nb::list out;
  for (const auto& k : infos) {
    nb::dict d;
    d["name"] = k.name;
    d["template"] = k.template_name;
    d["grid"] = nb::make_tuple(k.grid.x, k.grid.y, k.grid.z);
    d["block"] = nb::make_tuple(k.block.x, k.block.y, k.block.z);
    d["shared_bytes"] = k.shared_bytes;
    d["registers"] = k.registers;
    d["spill_bytes"] = k.spill_bytes;
    d["compile_ms"] = k.compile_ms;
    out.append(d);
  }
  return out;
}

kiln::Stream stream_of(std::uintptr_t handle) { return reinterpret_cast<kiln::Stream>(handle); }

// Runs `launch` in the calling thread's current context (device -1), or with device `device`'s
// primary context made current for it (a call's device=; the guard switches only when that
// context is not already current).
template <class F>
void on_device(int device, F&& launch) {
  if (device < 0) return launch();
  kiln::DeviceGuard guard(device);
  launch();
}

// ---------------------------------------------------------------- logging
// kiln's diagnostics go to a Python callable (kiln/__init__.py passes the `kiln` logger's log
// method) with Python's levels; None gives them back to stderr. The handler may run on any thread:
// it takes the GIL. Every entry point below that can block on the runtime's locks releases the
// GIL first, so a thread that logs while holding one of those locks never waits for a thread that
// holds the GIL while it waits for that lock.
PyObject* g_log = nullptr;   // a strong reference, kept until replaced

// Options::scratch from Python (kiln.Options(scratch=...)): an object with allocate(nbytes, stream)
// returning a device address and deallocate(ptr, nbytes, stream), stream the CUstream as an int.
// A launch calls it with the GIL released, so each call takes it. An exception from allocate
// reaches the caller (nanobind carries it through the launch); one from deallocate, which must
// not throw, is reported as unraisable.
struct PyScratch final : kiln::ScratchAllocator {
  nb::object allocator;
  explicit PyScratch(nb::object a) : allocator(std::move(a)) {}
  ~PyScratch() override {
    if (!Py_IsInitialized()) {
      (void)allocator.release();   // the interpreter is gone: nothing to release it to
      return;
    }
    nb::gil_scoped_acquire gil;
    allocator.reset();
  }
  void* allocate(std::size_t bytes, kiln::Stream stream) override {
    nb::gil_scoped_acquire gil;
    nb::object address = allocator.attr("allocate")(bytes, reinterpret_cast<std::uintptr_t>(stream));
    if (!nb::isinstance<nb::int_>(address))
      throw kiln::ArgumentError("Options.scratch.allocate returned " + nb::cast<std::string>(nb::repr(address)) +
                                ", not a device address (int)");
    return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(address));
  }
  void deallocate(void* ptr, std::size_t bytes, kiln::Stream stream) noexcept override {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    try {
      allocator.attr("deallocate")(reinterpret_cast<std::uintptr_t>(ptr), bytes,
                                   reinterpret_cast<std::uintptr_t>(stream));
    } catch (nb::python_error& e) {
      e.discard_as_unraisable("kiln.Options.scratch.deallocate");
    } catch (...) {
    }
  }
};

void route_logs(nb::object log) {
  if (log.is_none()) {
    kiln::set_log_handler({});
    return;
  }
  PyObject* previous = g_log;
  g_log = log.release().ptr();
  Py_XDECREF(previous);
  kiln::set_log_handler([](int level, const std::string& message) {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    const int py_level = level <= 1 ? 30 : level == 2 ? 20 : 10;   // WARNING, INFO, DEBUG
    try {
      nb::handle log(g_log);
      log(py_level, "%s", message);   // (the message is an argument, not a format)
    } catch (nb::python_error& e) {
      e.discard_as_unraisable("kiln's log handler");
    }
  });
}

// A DLPack object (anything nanobind's ndarray accepts: __dlpack__ or a capsule) as the
// (pointer, dtype, shape, strides, device type, device id) the Python layer checks and passes on.
nb::tuple dlpack_info(nb::ndarray<> a) {
  const auto dt = a.dtype();
  std::string name;
  using Code = nb::dlpack::dtype_code;
  if (dt.lanes != 1) name = "?";
  else if (dt.code == uint8_t(Code::Float) && dt.bits == 32) name = "f32";
  else if (dt.code == uint8_t(Code::Float) && dt.bits == 16) name = "f16";
  else if (dt.code == uint8_t(Code::Float) && dt.bits == 64) name = "f64";
  else if (dt.code == uint8_t(Code::Bfloat) && dt.bits == 16) name = "bf16";
  else if (dt.code == uint8_t(Code::Int) && dt.bits == 32) name = "i32";
  else if (dt.code == uint8_t(Code::Int) && dt.bits == 64) name = "i64";
  else if (dt.code == uint8_t(Code::UInt) && dt.bits == 64) name = "u64";
  else if (dt.code == uint8_t(Code::Bool) && dt.bits == 8) name = "bool";
  else name = "code " + std::to_string(dt.code) + " of " + std::to_string(dt.bits) + " bits";
  std::vector<std::int64_t> shape, strides;
  for (std::size_t i = 0; i < a.ndim(); ++i) {
    shape.push_back(a.shape(i));
    strides.push_back(a.stride(i));
  }
  return nb::make_tuple(reinterpret_cast<std::uintptr_t>(a.data()), name, shape, strides, a.device_type(), a.device_id());
}

// A new device array for a framework kiln does not allocate through (JAX): kiln's own memory in the
// current context (device 0's primary one when none is current). Returns (DLPack capsule, address,
// device); the buffer is freed when the framework that consumes the capsule lets go of it.
nb::tuple device_empty(const std::vector<std::int64_t>& shape, int code) {
  const kiln::DType dtype = dtype_of_code(code);
  using Code = nb::dlpack::dtype_code;
  const std::uint8_t bits = static_cast<std::uint8_t>(kiln::dtype_size(dtype) * 8);
  const Code type = dtype == kiln::DType::bf16                                          ? Code::Bfloat
                    : dtype == kiln::DType::boolean                                     ? Code::Bool
                    : dtype == kiln::DType::i32 || dtype == kiln::DType::i64            ? Code::Int
                    : dtype == kiln::DType::u64                                         ? Code::UInt
                                                                                        : Code::Float;
  std::size_t numel = 1;
  for (auto e : shape) numel *= static_cast<std::size_t>(e);
  auto* buffer = new kiln::DeviceBuffer(std::max<std::size_t>(numel * kiln::dtype_size(dtype), 16));
  nb::capsule owner(buffer, [](void* p) noexcept { delete static_cast<kiln::DeviceBuffer*>(p); });
  int device = 0;
  kiln::current_context(&device);
  std::vector<std::size_t> extents(shape.begin(), shape.end());
  nb::ndarray<> array(buffer->data(), extents.size(), extents.data(), owner, nullptr,
                      nb::dlpack::dtype{static_cast<std::uint8_t>(type), bits, 1}, nb::device::cuda::value, device);
  return nb::make_tuple(nb::cast(array), reinterpret_cast<std::uintptr_t>(buffer->data()), device);
}

}  // namespace

NB_MODULE(_kiln, m) {
  m.doc() = "kiln's C++ runtime (use the kiln package, not this module)";
  g_errors = nb::module_::import_("kiln.errors").release().ptr();
  // Runtimes, programs and ops live as long as the process: kiln's runtime cache holds them, and
  // so do operators registered with torch.library. nanobind would report them as leaks at exit.
  nb::set_leak_warnings(false);
  nb::register_exception_translator(translate);

  m.attr("__version__") = KILN_VERSION;
  m.attr("DTYPE_CODES") = dtype_codes();
  m.def("dlpack_info", &dlpack_info, nb::arg("array"));
  m.def("device_empty", &device_empty, nb::arg("shape"), nb::arg("dtype_code"));
  m.def("device_count", [] { return kiln::device_count(); });
  m.def("synchronize", [] {
    nb::gil_scoped_release release;
    kiln::synchronize();
  });
  m.def("route_logs", &route_logs, nb::arg("log").none());
  m.def("set_torch", &set_torch, nb::arg("tensor_type"), nb::arg("dtype_codes"), nb::arg("empty_like"),
        nb::arg("contiguous_format"));
  m.def(
      "set_log_level",
      [](const std::string& name) {
        if (!kiln::set_log_level_name(name))
          throw kiln::ArgumentError("log level '" + name + "' is not one of quiet, warning, info, debug");
      },
      nb::arg("name"));
  using release = nb::call_guard<nb::gil_scoped_release>;

  nb::class_<kiln::Runtime>(m, "Runtime")
      .def(
          "__init__",
          [](kiln::Runtime* self, const std::string& cache_dir, bool disk_cache, const std::string& arch,
             const std::string& precision, const std::string& template_dir, bool use_environment,
             const std::string& shapes, const std::string& tuning, nb::object scratch) {
            kiln::Options o;
            if (!scratch.is_none()) {
              if (!nb::hasattr(scratch, "allocate") || !nb::hasattr(scratch, "deallocate"))
                throw kiln::ArgumentError("Options.scratch must have allocate(nbytes, stream) and "
                                          "deallocate(ptr, nbytes, stream), not be " +
                                          nb::cast<std::string>(nb::repr(scratch)));
              o.scratch = std::make_shared<PyScratch>(scratch);
            }
            o.cache_dir = cache_dir;
            o.disk_cache = disk_cache;
            o.arch = arch;
            o.precision = precision_of(precision);
            o.template_dir = template_dir;
            o.use_environment = use_environment;
            o.shapes = shapes;
            o.tuning = tuning;
            new (self) kiln::Runtime(o);
          },
          nb::arg("cache_dir"), nb::arg("disk_cache"), nb::arg("arch"), nb::arg("precision"), nb::arg("template_dir"),
          nb::arg("use_environment"), nb::arg("shapes"), nb::arg("tuning") = "",
          nb::arg("scratch").none() = nb::none())
      .def("load_file", &kiln::Runtime::load_file, nb::arg("path"), release())
      .def("load_string", &kiln::Runtime::load_string, nb::arg("text"), nb::arg("name"), release())
      .def("preload", &kiln::Runtime::preload, nb::arg("pack_path"), release())
      .def("arch", &kiln::Runtime::arch)
      .def("stats", [](const kiln::Runtime& rt) {
        const kiln::Stats s = rt.stats();
        nb::dict d;
        d["memory_hits"] = s.memory_hits;
        d["disk_hits"] = s.disk_hits;
        d["compiles"] = s.compiles;
        d["launches"] = s.launches;
        return d;
      });

  nb::class_<kiln::Program>(m, "Program")
      .def("op", &kiln::Program::op, nb::arg("name"), release())
      .def("op_names", &kiln::Program::op_names)
      .def("file", &kiln::Program::file)
      .def("warnings", &kiln::Program::warnings);

  nb::class_<kiln::Op>(m, "Op")
      .def("name", &kiln::Op::name)
      .def("signature", &kiln::Op::signature)
      .def("dim_names", &kiln::Op::dim_names)
      .def("const_names", &kiln::Op::const_names)
      .def(
          "with_consts",
          [](const kiln::Op& op, const nb::dict& consts) {
            const kiln::Consts c = consts_of(consts);
            nb::gil_scoped_release unlocked;
            return op.with_consts(c);
          },
          nb::arg("consts"))
      .def(
          "with_precision",
          [](const kiln::Op& op, const std::string& p) {
            const kiln::Precision precision = precision_of(p);
            nb::gil_scoped_release unlocked;
            return op.with_precision(precision);
          },
          nb::arg("precision"))
      .def(
          "specialize",
          [](const kiln::Op& op, const std::map<std::string, std::int64_t>& dims, const nb::dict& consts) {
            kiln::Bindings b;
            b.dims = dims;
            b.consts = consts_of(consts);
            nb::gil_scoped_release unlocked;
            return op.specialize(b);
          },
          nb::arg("dims"), nb::arg("consts"))
      .def(
          "tune",
          [](const kiln::Op& op, const std::map<std::string, std::int64_t>& dims, const nb::dict& consts,
             double budget_s, int iters, bool store) {
            kiln::Bindings b;
            b.dims = dims;
            b.consts = consts_of(consts);
            kiln::TuneOptions o;
            o.budget_s = budget_s;
            o.iters = iters;
            o.store = store;
            kiln::TuneResult r;
            {
              nb::gil_scoped_release unlocked;
              r = op.tune(b, o);
            }
            nb::list products;
            for (const auto& p : r.products) {
              nb::list candidates;
              for (const auto& c : p.candidates) {
                nb::dict d;
                d["config"] = c.config;
                d["heuristic"] = c.heuristic;
                d["correct"] = c.correct;
                d["median_ms"] = c.median_ms >= 0 ? nb::cast(c.median_ms) : nb::none();
                d["note"] = c.note;
                candidates.append(d);
              }
              nb::dict d;
              d["what"] = p.what;
              d["heuristic"] = p.heuristic;
              d["heuristic_ms"] = p.heuristic_ms;
              d["best"] = p.best;
              d["best_ms"] = p.best_ms;
              d["candidates"] = candidates;
              products.append(d);
            }
            nb::dict out;
            out["op"] = r.op;
            out["bindings"] = r.bindings;
            out["device"] = r.device;
            out["arch"] = r.arch;
            out["checked_against"] = r.checked_against;
            out["stored_path"] = r.stored_path.empty() ? nb::none() : nb::cast(r.stored_path);
            out["products"] = products;
            return out;
          },
          nb::arg("dims"), nb::arg("consts"), nb::arg("budget_s"), nb::arg("iters"), nb::arg("store"))
      .def("shape_rules", [](const kiln::Op& op) { return shape_rules_dict(op.shape_rules()); })
      .def("call_torch", &call_torch, nb::arg("op_id"), nb::arg("inputs"), nb::arg("out").none(), nb::arg("templates"),
           nb::arg("stream"), nb::arg("outputs"))
      .def(
          "arguments_for",
          [](const kiln::Op& op, const nb::list& inputs) {
            const std::vector<kiln::Arg> args = args_of(inputs);
            std::vector<kiln::ArgumentInfo> infos;
            {
              nb::gil_scoped_release unlocked;
              infos = op.arguments_for(args);
            }
            return arguments_list(infos);
          },
          nb::arg("inputs"))
      .def(
          "call",
          [](const kiln::Op& op, std::uintptr_t stream, const nb::list& items, int device) {
            const std::vector<kiln::Arg> args = args_of(items);
            nb::gil_scoped_release release;   // compiles and launches without holding the GIL
            on_device(device, [&] { op(stream_of(stream), args); });
          },
          nb::arg("stream"), nb::arg("arguments"), nb::arg("device") = -1)
      .def(
          "reference",
          [](const kiln::Op& op, const nb::list& items) {
            const std::vector<kiln::Arg> args = args_of(items);
            nb::gil_scoped_release release;
            op.reference(args);
          },
          nb::arg("host_arguments"));

  nb::class_<kiln::Executable>(m, "Executable")
      .def("plan_text", &kiln::Executable::plan_text, release())
      .def("source", &kiln::Executable::source, release())
      .def("ptx", [](const kiln::Executable& e) {
        nb::gil_scoped_release release;
        return e.ptx();
      })
      .def("sass", [](const kiln::Executable& e) {
        nb::gil_scoped_release release;
        return e.sass();
      })
      .def("kernels", [](const kiln::Executable& e) {
        std::vector<kiln::KernelInfo> infos;
        {
          nb::gil_scoped_release release;
          infos = e.kernels();
        }
        return kernels_list(infos);
      })
      .def("arguments", [](const kiln::Executable& e) { return arguments_list(e.arguments()); })
      .def("signature", &kiln::Executable::signature)
      .def(
          "launch",
          [](const kiln::Executable& e, std::uintptr_t stream, const nb::list& items, int device) {
            const std::vector<kiln::Arg> args = args_of(items);
            nb::gil_scoped_release release;
            on_device(device, [&] { e.launch(stream_of(stream), args); });
          },
          nb::arg("stream"), nb::arg("arguments"), nb::arg("device") = -1)
      .def(
          "reference",
          [](const kiln::Executable& e, const nb::list& items) {
            const std::vector<kiln::Arg> args = args_of(items);
            nb::gil_scoped_release release;
            e.reference(args);
          },
          nb::arg("host_arguments"));
}
