// A host application embedding kiln: its own device memory (driver API), its own
// stream, two ops from a spec, results checked on the host.
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include <kiln/kiln.h>

#define CU(call)                                                                   \
  do {                                                                             \
    CUresult r_ = (call);                                                          \
    if (r_ != CUDA_SUCCESS) {                                                      \
      const char* name = nullptr;                                                  \
      cuGetErrorName(r_, &name);                                                   \
      std::fprintf(stderr, "%s failed: %s\n", #call, name ? name : "?");         \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

int main(int argc, char** argv) {
  const char* spec = argc > 1 ? argv[1] : "examples/host_app/app.kiln";
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  CUstream stream;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  const int rows = 1000, cols = 777;
  std::vector<float> x(rows * cols), bias(cols);
  for (int i = 0; i < rows * cols; ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (int j = 0; j < cols; ++j) bias[j] = 0.25f * static_cast<float>(j % 5);
  CUdeviceptr dx, db, dy, dz;
  CU(cuMemAlloc(&dx, x.size() * 4));
  CU(cuMemAlloc(&db, bias.size() * 4));
  CU(cuMemAlloc(&dy, x.size() * 4));
  CU(cuMemAlloc(&dz, x.size() * 4));
  CU(cuMemcpyHtoD(dx, x.data(), x.size() * 4));
  CU(cuMemcpyHtoD(db, bias.data(), bias.size() * 4));

  try {
    kiln::Runtime rt;   // cache in ~/.cache/kiln (or $KILN_CACHE_DIR)
    kiln::Program program = rt.load_file(spec);
    kiln::Op bias_relu = program.op("bias_relu");
    kiln::Op scale = program.op("scale");
    auto* s = reinterpret_cast<kiln::Stream>(stream);
    bias_relu(s, {kiln::TensorRef(reinterpret_cast<void*>(dx), kiln::f32, {rows, cols}),
                  kiln::TensorRef(reinterpret_cast<void*>(db), kiln::f32, {cols}),
                  kiln::TensorRef(reinterpret_cast<void*>(dy), kiln::f32, {rows, cols})});
    scale(s, {kiln::TensorRef(reinterpret_cast<void*>(dy), kiln::f32, {rows, cols}), 3.0f,
              kiln::TensorRef(reinterpret_cast<void*>(dz), kiln::f32, {rows, cols})});
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "kiln: %s\n", e.what());
    return 1;
  }
  CU(cuStreamSynchronize(stream));
  std::vector<float> z(x.size());
  CU(cuMemcpyDtoH(z.data(), dz, z.size() * 4));
  int bad = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const float expect = 3.0f * std::fmax(x[i * cols + j] + bias[j], 0.0f);
      if (std::fabs(z[i * cols + j] - expect) > 1e-6f * (1 + std::fabs(expect))) ++bad;
    }
  std::printf("host_app: %d of %d elements wrong\n", bad, rows * cols);
  cuMemFree(dx), cuMemFree(db), cuMemFree(dy), cuMemFree(dz);
  cuStreamDestroy(stream);
  cuDevicePrimaryCtxRelease(dev);
  return bad == 0 ? 0 : 1;
}
