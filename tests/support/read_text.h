// The whole of a file as a string ("" when it cannot be read), for tests
// that check what a run wrote.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
