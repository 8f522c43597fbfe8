#include "faultbench/compare/svg_plot.h"

#include <algorithm>
#include <cerrno>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "pmstore/base/errno_status.h"

namespace faultbench {
namespace {

std::string Escape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

std::string Short(double value) {
  if (value >= 1e6) return absl::StrFormat("%.2fM", value / 1e6);
  if (value >= 1e3) return absl::StrFormat("%.1fk", value / 1e3);
  return absl::StrFormat("%.1f", value);
}

}  // namespace

std::string RenderBarChartSvg(const std::string& title, const std::string& unit, const std::vector<PlotBar>& bars) {
  const int bar_width = 60, gap = 40, left = 80, top = 50, height = 300, bottom = 70;
  const int width = left + static_cast<int>(bars.size()) * (bar_width + gap) + gap;
  double top_value = 0;
  for (const PlotBar& b : bars) top_value = std::max({top_value, b.max, b.median});
  if (top_value <= 0) top_value = 1;
  top_value *= 1.1;
  auto y = [&](double v) { return top + height - v / top_value * height; };

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%d\" y=\"24\" font-size=\"15\">%s</text>\n",
      width, top + height + bottom, left, Escape(title));
  // Axis with five gridlines.
  for (int i = 0; i <= 5; ++i) {
    const double v = top_value * i / 5;
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                          left, width - gap / 2, y(v), y(v), left - 6, y(v) + 4, Short(v));
  }
  absl::StrAppendFormat(&svg, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\">%s</text>\n",
                        top + height / 2, top + height / 2, Escape(unit));
  static const char* const kColours[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#76b7b2", "#b07aa1"};
  for (size_t i = 0; i < bars.size(); ++i) {
    const PlotBar& b = bars[i];
    const int x = left + gap + static_cast<int>(i) * (bar_width + gap);
    const int mid = x + bar_width / 2;
    absl::StrAppendFormat(&svg, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>\n", x,
                          y(b.median), bar_width, top + height - y(b.median), kColours[i % 6]);
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                          mid, mid, y(b.min), y(b.max), mid - 8, mid + 8, y(b.min), y(b.min), mid - 8, mid + 8,
                          y(b.max), y(b.max));
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", mid,
                          y(b.max) - 6, Short(b.median));
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", mid,
                          top + height + 18, Escape(b.label));
  }
  absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" fill=\"#555\">bars: median; whiskers: min-max across repeats</text>\n",
                        left, top + height + bottom - 12);
  svg += "</svg>\n";
  return svg;
}

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return pmstore::base::ErrnoStatus(errno, "open", path);
  out << text;
  out.close();
  if (!out) return pmstore::base::ErrnoStatus(errno, "write", path);
  return absl::OkStatus();
}

}  // namespace faultbench
