#include "faultbench/plot/svg_plot.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/plot/svg_text.h"

namespace faultbench {
namespace {

using svg::AxisStep;
using svg::Escape;
using svg::kFontSize;
using svg::kLineHeight;
using svg::kMargin;
using svg::kTitleFontSize;
using svg::Short;
using svg::TextWidth;

constexpr int kLeft = 80, kPlotHeight = 300, kMinSlot = 100, kMaxBarWidth = 80;

}  // namespace

std::string RenderBarChartSvg(const BarChart& chart) {
  const int bar_count = std::max<int>(1, static_cast<int>(chart.bars.size()));
  int text_width = TextWidth(chart.title, kTitleFontSize);
  for (const std::string& line : chart.subtitles) text_width = std::max(text_width, TextWidth(line, kFontSize));
  const std::string footer = "bars: median; whiskers: min-max across repeats; dots: each repeat";
  text_width = std::max(text_width, TextWidth(footer, kFontSize));
  const int plot_width = std::max(bar_count * kMinSlot, text_width - kLeft + kMargin);
  const int width = kLeft + plot_width + kMargin;
  const int slot = plot_width / bar_count;
  const int bar_width = std::min(kMaxBarWidth, slot * 3 / 5);

  const int top = 34 + static_cast<int>(chart.subtitles.size()) * kLineHeight + 16;
  const int height = top + kPlotHeight + 3 * kLineHeight + 28;
  double highest = 0;
  for (const PlotBar& b : chart.bars) {
    highest = std::max({highest, b.max, b.median});
    for (double p : b.points) highest = std::max(highest, p);
  }
  if (highest <= 0) highest = 1;
  const double step = AxisStep(highest * 1.05);
  const double axis_top = std::ceil(highest * 1.05 / step) * step;
  auto y = [&](double v) { return top + kPlotHeight - v / axis_top * kPlotHeight; };

  std::string svg = svg::Open(width, height, chart.title, chart.subtitles);
  const int ticks = static_cast<int>(std::lround(axis_top / step));
  for (int i = 0; i <= ticks; ++i) {
    const double v = step * i;
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                          kLeft, kLeft + plot_width, y(v), y(v), kLeft - 6, y(v) + 4, Short(v, 6));
  }
  absl::StrAppendFormat(&svg, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\">%s</text>\n",
                        top + kPlotHeight / 2, top + kPlotHeight / 2, Escape(chart.unit));
  static const char* const kColours[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#76b7b2", "#b07aa1"};
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const PlotBar& b = chart.bars[i];
    const int mid = kLeft + static_cast<int>(i) * slot + slot / 2;
    const int x = mid - bar_width / 2;
    absl::StrAppendFormat(&svg, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>\n", x,
                          y(b.median), bar_width, top + kPlotHeight - y(b.median), kColours[i % 6]);
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
                          "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                          mid, mid, y(b.min), y(b.max), mid - 8, mid + 8, y(b.min), y(b.min), mid - 8, mid + 8,
                          y(b.max), y(b.max));
    // Dots spread across the middle half of the bar, so equal values stay apart.
    for (size_t p = 0; p < b.points.size(); ++p) {
      const double offset = b.points.size() == 1 ? 0.0
                                                 : (static_cast<double>(p) / static_cast<double>(b.points.size() - 1) - 0.5) *
                                                       bar_width / 2;
      absl::StrAppendFormat(&svg,
                            "<circle class=\"repeat\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"white\" "
                            "stroke=\"black\"/>\n",
                            mid + offset, y(b.points[p]));
    }
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", mid,
                          y(b.max) - 6, Short(b.median, 3));
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", mid,
                          top + kPlotHeight + kLineHeight, Escape(b.label));
    if (!b.note.empty()) {
      absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s</text>\n", mid,
                            top + kPlotHeight + 2 * kLineHeight, Escape(b.note));
    }
  }
  absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" fill=\"#555\">%s</text>\n", kMargin, height - 14, footer);
  svg += "</svg>\n";
  return svg;
}

}  // namespace faultbench
