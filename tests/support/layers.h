// The layer rule of faultbench/LAYERS and pmstore/LAYERS, for the tests
// that enforce it: a file includes headers of its own folder and of folders
// listed below it, never of one listed above.
//
// A LAYERS file lists folders top first, one a line ('#' starts a
// comment): a bare name is a folder of the tree the file lies in ("run" in
// faultbench/LAYERS is faultbench/run), a name with a slash a path from the
// root of the repository ("pmstore/base"). An include of a public header of
// the store, <pmstore/NAME.h>, names pmstore/include/pmstore/NAME.h.
#pragma once

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace pmstore::testing {

inline std::string ReadLayersText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The layers of a LAYERS file of folder `tree` ("faultbench", "pmstore"),
// as path prefixes from the repository's root, top first.
inline std::vector<std::string> ParseLayers(const std::string& text, const std::string& tree) {
  std::vector<std::string> layers;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty() || line[0] == '#') continue;
    layers.push_back(line.find('/') == std::string::npos ? tree + "/" + line : line);
  }
  return layers;
}

// Position of the layer that holds `path` (a source path or an include
// path, from the repository's root): 0 is the top; -1 when none does.
inline int LayerOf(const std::vector<std::string>& layers, const std::string& path) {
  for (size_t i = 0; i < layers.size(); ++i) {
    if (path.starts_with(layers[i] + "/")) return static_cast<int>(i);
  }
  return -1;
}

// Where an include path lies in the tree: a public header of the store
// (pmstore/NAME.h, a file of pmstore/include/pmstore/) is named by its
// place there; every other path is its own.
inline std::string IncludedFile(const std::string& included, const std::filesystem::path& root) {
  if (included.starts_with("pmstore/") && included.find('/', 8) == std::string::npos &&
      std::filesystem::exists(root / "pmstore/include" / included)) {
    return "pmstore/include/" + included;
  }
  return included;
}

// What the layering forbids in file `path` with contents `text`, one line
// each; empty when every include points down. `name` names the LAYERS
// file in the messages ("pmstore/LAYERS").
inline std::vector<std::string> LayerViolations(const std::vector<std::string>& layers, const std::string& name,
                                                const std::filesystem::path& root, const std::string& path,
                                                const std::string& text) {
  std::vector<std::string> found;
  const int own = LayerOf(layers, path);
  if (own < 0) return {path + ": not in a folder that " + name + " lists"};
  static const std::regex kInclude(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::smatch match;
    if (!std::regex_search(line, match, kInclude)) continue;
    const std::string included = match[1];
    // Only the project's own trees are layered; Abseil, libc and the rest are below everything.
    if (!included.starts_with("faultbench/") && !included.starts_with("pmstore/")) continue;
    const std::string file = IncludedFile(included, root);
    const std::string where = path + ":" + std::to_string(number) + ": includes " + included;
    const int target = LayerOf(layers, file);
    if (target < 0) {
      found.push_back(where + ", which no layer of " + name + " holds");
    } else if (target < own) {
      found.push_back(where + " from " + layers[target] + ", which " + name + " puts above " + layers[own]);
    }
  }
  return found;
}

inline bool IsLayeredSource(const std::filesystem::path& path) {
  return path.extension() == ".h" || path.extension() == ".cc" || path.extension() == ".c";
}

}  // namespace pmstore::testing
