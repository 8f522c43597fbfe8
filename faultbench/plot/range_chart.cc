#include "faultbench/plot/range_chart.h"

#include <algorithm>
#include <cmath>
#include <functional>

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

constexpr int kRowHeight = 26;
constexpr int kScaleWidth = 320, kEndWidth = 70;
constexpr const char* kFirstColour = "#4e79a7";
constexpr const char* kSecondColour = "#e15759";

// A scale's end: four digits say a run's figure closely enough.
std::string Short(double v) { return svg::Short(v, 4); }

// One set of a row: its min-max line and a dot per value.
void AppendSet(std::string& svg, const std::vector<double>& values, double y, const char* colour,
               const std::function<double(double)>& x) {
  if (values.empty()) return;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  absl::StrAppendFormat(&svg, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                        x(*lo), x(*hi), y, y, colour);
  for (double v : values) {
    absl::StrAppendFormat(&svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" fill-opacity=\"0.6\"/>\n", x(v), y,
                          colour);
  }
}

}  // namespace

std::string RenderRangeChartSvg(const RangeChart& chart) {
  int label_width = 0, note_width = 0;
  for (const RangeRow& row : chart.rows) {
    label_width = std::max(label_width, TextWidth(row.label, kFontSize));
    note_width = std::max(note_width, TextWidth(row.note, kFontSize));
  }
  const int scale_left = kMargin + label_width + 10 + kEndWidth;
  const int scale_right = scale_left + kScaleWidth;
  int width = scale_right + kEndWidth + 10 + note_width + kMargin;
  width = std::max(width, TextWidth(chart.title, kTitleFontSize) + 2 * kMargin);
  for (const std::string& line : chart.subtitles) width = std::max(width, TextWidth(line, kFontSize) + 2 * kMargin);
  const std::string footer = "each row on its own scale, from its lowest to its highest value; dots: each run; "
                             "lines: min-max";
  width = std::max(width, TextWidth(footer, kFontSize) + 2 * kMargin);
  const int top = 34 + static_cast<int>(chart.subtitles.size()) * kLineHeight + kLineHeight + 10;
  const int height = top + static_cast<int>(chart.rows.size()) * kRowHeight + 2 * kLineHeight;

  std::string svg = svg::Open(width, height, chart.title, chart.subtitles);
  const int legend_y = top - 12;
  absl::StrAppendFormat(&svg,
                        "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n"
                        "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
                        scale_left, legend_y - 4, kFirstColour, scale_left + 8, legend_y, Escape(chart.first_name),
                        scale_left + 100, legend_y - 4, kSecondColour, scale_left + 108, legend_y,
                        Escape(chart.second_name));
  for (size_t r = 0; r < chart.rows.size(); ++r) {
    const RangeRow& row = chart.rows[r];
    const double mid = top + static_cast<double>(r) * kRowHeight + kRowHeight / 2.0;
    double lo = 0, hi = 0;
    bool any = false;
    for (const auto* set : {&row.first, &row.second}) {
      for (double v : *set) {
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        any = true;
      }
    }
    const double span = hi - lo;
    const auto x = [&](double v) {
      return span > 0 ? scale_left + (v - lo) / span * kScaleWidth : scale_left + kScaleWidth / 2.0;
    };
    if (r % 2 == 0) {
      absl::StrAppendFormat(&svg, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>\n", kMargin,
                            mid - kRowHeight / 2.0, width - 2 * kMargin, kRowHeight);
    }
    const char* weight = row.highlight ? " font-weight=\"bold\"" : "";
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%.1f\"%s>%s</text>\n", kMargin, mid + 4, weight,
                          Escape(row.label));
    absl::StrAppendFormat(&svg,
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%s</text>\n"
                          "<text x=\"%d\" y=\"%.1f\" fill=\"#555\">%s</text>\n",
                          scale_left - 6, mid + 4, any ? Short(lo) : "", scale_right + 6, mid + 4,
                          any ? Short(hi) : "");
    AppendSet(svg, row.first, mid - 4, kFirstColour, x);
    AppendSet(svg, row.second, mid + 4, kSecondColour, x);
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%.1f\"%s>%s</text>\n", scale_right + kEndWidth + 10, mid + 4,
                          weight, Escape(row.note));
  }
  absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" fill=\"#555\">%s</text>\n", kMargin, height - 14, footer);
  svg += "</svg>\n";
  return svg;
}

}  // namespace faultbench
