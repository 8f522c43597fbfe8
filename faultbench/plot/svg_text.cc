#include "faultbench/plot/svg_text.h"

#include <cmath>

#include "absl/strings/str_replace.h"

namespace faultbench {

std::string EscapeSvg(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

int TextWidth(const std::string& text, int font_size) {
  return static_cast<int>(std::ceil(static_cast<double>(text.size()) * font_size * 0.6));
}

}  // namespace faultbench
