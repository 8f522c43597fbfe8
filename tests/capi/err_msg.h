// The error message a failing C call leaves in *errmsg, owned and freed
// by the test.
#pragma once

#include <string>

#include "pmstore/c.h"

struct ErrMsg {
  char* text = nullptr;
  ~ErrMsg() { pmstore_free(text); }
  char** out() { return &text; }
  std::string str() const { return text == nullptr ? "" : text; }
};
