// How many times `what` occurs in `text` (overlapping ones too): what an
// SVG chart test counts (dots, lines, labels).
#pragma once

#include <cstddef>
#include <string>

inline size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
