#include "faultbench/plot/svg_text.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace faultbench::svg {

std::string Escape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

int TextWidth(const std::string& text, int font_size) {
  return static_cast<int>(std::ceil(static_cast<double>(text.size()) * font_size * 0.6));
}

double AxisStep(double top) {
  const double raw = top / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 2.5, 5.0}) {
    if (raw <= factor * magnitude * (1 + 1e-9)) return factor * magnitude;
  }
  return 10 * magnitude;
}

std::string Short(double value, int precision) {
  if (std::fabs(value) >= 1e6) return absl::StrFormat("%.*gM", precision, value / 1e6);
  if (std::fabs(value) >= 1e3) return absl::StrFormat("%.*gk", precision, value / 1e3);
  return absl::StrFormat("%.*g", precision, value);
}

std::string Open(int width, int height, const std::string& title, const std::vector<std::string>& subtitles) {
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
      "font-size=\"%d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%d\" y=\"24\" font-size=\"%d\">%s</text>\n",
      width, height, kFontSize, kMargin, kTitleFontSize, Escape(title));
  for (size_t i = 0; i < subtitles.size(); ++i) {
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" fill=\"#333\">%s</text>\n", kMargin,
                          44 + static_cast<int>(i) * kLineHeight, Escape(subtitles[i]));
  }
  return svg;
}

}  // namespace faultbench::svg
