// Early-return helpers for absl::Status / absl::StatusOr.
//
// Debian 12's Abseil (20220623) has no RETURN_IF_ERROR or ASSIGN_OR_RETURN,
// so the project keeps its own two macros here; nothing else should invent
// a third way to propagate errors.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PMSTORE_CONCAT_INNER_(a, b) a##b
#define PMSTORE_CONCAT_(a, b) PMSTORE_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the calling
// function when it is not OK.
#define PMSTORE_RETURN_IF_ERROR(expr)                 \
  do {                                                \
    ::absl::Status pmstore_status_ = (expr);          \
    if (!pmstore_status_.ok()) return pmstore_status_; \
  } while (0)

// `lhs = value of expr` where expr is an absl::StatusOr<T>; returns the
// error from the calling function when expr holds one.
#define PMSTORE_ASSIGN_OR_RETURN(lhs, expr) \
  PMSTORE_ASSIGN_OR_RETURN_IMPL_(PMSTORE_CONCAT_(pmstore_or_, __LINE__), lhs, expr)

#define PMSTORE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()
