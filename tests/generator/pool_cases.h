// Shared by test_pool.cpp (the planner, the reference: kiln.h) and test_pool_emulated.cpp (the
// templates compiled as host code), which cannot share a translation unit: kiln.h and the
// templates both define names in namespace kiln.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
struct PoolConfig;   // templates/kiln/config/pool.h
}

// test_pool_emulated.cpp's settings, each with the config it runs pool.cuh with; test_pool.cpp
// checks the planner gives these configs.
struct EmulatedPoolCase {
  const kiln::PoolConfig* config;
  std::string shape, expr;   // `out y = <expr>` over x: f32[<shape>]
  std::vector<std::int64_t> dims;
};
const std::vector<EmulatedPoolCase>& emulated_pool_cases();

// test_pool.cpp: the float64 reference of `out y = <expr>` over x: f32[<shape>] holding `values`.
std::vector<double> pool_reference(const std::string& shape, const std::string& expr,
                                   const std::vector<std::int64_t>& dims, const std::vector<double>& values);
