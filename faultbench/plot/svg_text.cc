#include "faultbench/plot/svg_text.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace faultbench {

std::string EscapeSvg(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

int TextWidth(const std::string& text, int font_size) {
  return static_cast<int>(std::ceil(static_cast<double>(text.size()) * font_size * 0.6));
}

std::string OpenChartSvg(int width, int height, const std::string& title, const std::vector<std::string>& subtitles) {
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
      "font-size=\"%d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%d\" y=\"24\" font-size=\"%d\">%s</text>\n",
      width, height, kChartFontSize, kChartMargin, kChartTitleFontSize, EscapeSvg(title));
  for (size_t i = 0; i < subtitles.size(); ++i) {
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" fill=\"#333\">%s</text>\n", kChartMargin,
                          44 + static_cast<int>(i) * kChartLineHeight, EscapeSvg(subtitles[i]));
  }
  return svg;
}

}  // namespace faultbench
