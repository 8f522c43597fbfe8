#include "faultbench/plot/line_chart.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/plot/svg_text.h"

namespace faultbench {
namespace {

using svg::Escape;
using svg::kFontSize;
using svg::kLineHeight;
using svg::kMargin;
using svg::kTitleFontSize;
using svg::TextWidth;

constexpr int kPlotWidth = 480, kPlotHeight = 260, kAxisWidth = 60;
constexpr const char* kColours[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b"};

}  // namespace

std::string RenderLineChartSvg(const LineChart& chart) {
  double x_max = 0, y_max = 0;
  for (const LineSeries& s : chart.series) {
    for (const LinePoint& p : s.points) {
      x_max = std::max(x_max, p.x);
      y_max = std::max(y_max, p.median);
      for (double v : p.values) y_max = std::max(y_max, v);
    }
  }
  const double y_step = svg::AxisStep(y_max > 0 ? y_max : 1);
  const double y_top = std::max(y_step, y_step * static_cast<double>(static_cast<int>(y_max / y_step + 0.999)));
  const double x_top = std::max(1.0, x_max);
  int width = kMargin + kAxisWidth + kPlotWidth + 2 * kMargin;
  width = std::max(width, TextWidth(chart.title, kTitleFontSize) + 2 * kMargin);
  for (const std::string& line : chart.subtitles) width = std::max(width, TextWidth(line, kFontSize) + 2 * kMargin);
  width = std::max(width, TextWidth(chart.footer, kFontSize) + 2 * kMargin);
  const int top = 34 + static_cast<int>(chart.subtitles.size()) * kLineHeight + 2 * kLineHeight;
  const int left = kMargin + kAxisWidth, bottom = top + kPlotHeight;
  const int height = bottom + 3 * kLineHeight + (chart.footer.empty() ? 0 : kLineHeight);
  auto x_of = [&](double x) { return left + (x_top > 0 ? x / x_top : 0) * kPlotWidth; };
  auto y_of = [&](double y) { return bottom - y / y_top * kPlotHeight; };

  std::string svg = svg::Open(width, height, chart.title, chart.subtitles);
  // Axes, the y grid and labels, an x tick at every point's x.
  absl::StrAppendFormat(&svg, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left, bottom,
                        left + kPlotWidth, bottom);
  absl::StrAppendFormat(&svg, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left, top, left,
                        bottom);
  for (double y = 0; y <= y_top + y_step / 2; y += y_step) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                          left, y_of(y), left + kPlotWidth, y_of(y), left - 6, y_of(y) + 4, svg::Short(y, 3));
  }
  std::vector<double> ticks;
  for (const LineSeries& s : chart.series) {
    for (const LinePoint& p : s.points) ticks.push_back(p.x);
  }
  std::sort(ticks.begin(), ticks.end());
  ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
  for (double x : ticks) {
    absl::StrAppendFormat(&svg, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x_of(x),
                          bottom + kLineHeight, svg::Short(x, 4));
  }
  absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", left + kPlotWidth / 2,
                        bottom + 2 * kLineHeight, Escape(chart.x_label));
  // The y axis' label on a row of its own, the legend on the row under it.
  absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\">%s</text>\n", kMargin, top - 26, Escape(chart.y_label));
  // Each series: its line through the medians, a whisker and dots per point, and its legend entry.
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const LineSeries& s = chart.series[i];
    const char* colour = kColours[i % std::size(kColours)];
    std::string path;
    for (const LinePoint& p : s.points) {
      absl::StrAppendFormat(&path, "%s%.1f,%.1f", path.empty() ? "" : " ", x_of(p.x), y_of(p.median));
    }
    absl::StrAppendFormat(&svg, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", path,
                          colour);
    for (const LinePoint& p : s.points) {
      if (!p.values.empty()) {
        const auto [lo, hi] = std::minmax_element(p.values.begin(), p.values.end());
        absl::StrAppendFormat(&svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                              x_of(p.x), y_of(*lo), x_of(p.x), y_of(*hi), colour);
      }
      for (double v : p.values) {
        absl::StrAppendFormat(&svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.6\"/>\n",
                              x_of(p.x), y_of(v), colour);
      }
    }
    const int legend_x = left + 10 + static_cast<int>(i) * 140;
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>"
                          "<text x=\"%d\" y=\"%d\">%s</text>\n",
                          legend_x, top - 10, legend_x + 20, top - 10, colour, legend_x + 26, top - 6, Escape(s.name));
  }
  if (!chart.footer.empty()) {
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\">%s</text>\n", kMargin, bottom + 3 * kLineHeight,
                          Escape(chart.footer));
  }
  absl::StrAppend(&svg, "</svg>\n");
  return svg;
}

}  // namespace faultbench
