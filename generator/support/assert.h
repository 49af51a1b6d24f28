// Two kinds of failure, kept apart (nvFuser's NVF_CHECK / NVF_ERROR):
//   KILN_CHECK(cond, ExceptionType, fmt, args...)  the user did something wrong:
//       throws that kiln exception with a message saying what and how to fix it.
//   KILN_ASSERT(cond, fmt, args...)                 kiln itself is wrong:
//       throws kiln::InternalError("internal error in kiln: ...") naming file and line.
#pragma once

#include <fmt/format.h>

#include "kiln/kiln.h"

#define KILN_CHECK(cond, ExceptionType, ...)                 \
  do {                                                       \
    if (!(cond)) throw ExceptionType(fmt::format(__VA_ARGS__)); \
  } while (0)

#define KILN_ASSERT(cond, ...)                                                              \
  do {                                                                                      \
    if (!(cond))                                                                            \
      throw ::kiln::InternalError(fmt::format("internal error in kiln ({}:{}): {} [{}]", __FILE__, \
                                      __LINE__, fmt::format(__VA_ARGS__), #cond));          \
  } while (0)
