// What the facade, the tools and the tests need from the device beyond
// runtime/driver.h: the current device's properties, stream-ordered scratch,
// disassembly, synchronization.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "generator/plan/plan.h"   // Target
#include "runtime/driver.h"

namespace kiln {

int current_device();                                   // the current context's device (-1: no GPU)
int device_sm_count(int device);
// A device's own target: its arch and SM count ([Note: several devices] in runtime/runtime.cpp).
Target device_target(int device, Precision precision);
// Scratch from kiln's stream-ordered pool of `device` ([Note: the scratch pool] in device.cpp);
// a CudaError naming the size on failure.
unsigned long long allocate_async(std::size_t bytes, CUstream stream, int device);
void free_async(unsigned long long ptr, CUstream stream) noexcept;
std::string disassemble(const std::vector<char>& cubin);  // cuobjdump -sass, or a sentence saying it is absent
void synchronize();                                     // the current context

}  // namespace kiln
