#include "faultbench/plot/heatmap.h"

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

constexpr int kCellPadding = 10, kMinCell = 110;

// From #eef3fa (zero) to #1f4e8c (the panel's highest); text turns white
// past the middle.
std::string Shade(double t) {
  const auto mix = [&](int lo, int hi) { return static_cast<int>(lo + (hi - lo) * t + 0.5); };
  return absl::StrFormat("#%02x%02x%02x", mix(0xee, 0x1f), mix(0xf3, 0x4e), mix(0xfa, 0x8c));
}

struct Layout {
  int label_width = 0;  // the row labels' column
  int cell_width = kMinCell;
  int cell_height = 0;
  int width = 0;
};

Layout LayOut(const Heatmap& h) {
  Layout l;
  size_t lines = 1;
  int text = std::max(TextWidth(h.title, kTitleFontSize), TextWidth(h.footer, kFontSize));
  for (const std::string& s : h.subtitles) text = std::max(text, TextWidth(s, kFontSize));
  size_t columns = 1;
  for (const HeatmapPanel& p : h.panels) {
    text = std::max(text, TextWidth(p.title, kFontSize));
    columns = std::max(columns, p.column_labels.size());
    for (const std::string& s : p.row_labels) l.label_width = std::max(l.label_width, TextWidth(s, kFontSize));
    text = std::max(text, TextWidth(p.AxisLine(), kFontSize));
    for (const std::string& s : p.column_labels) l.cell_width = std::max(l.cell_width, TextWidth(s, kFontSize) + 2 * kCellPadding);
    for (const auto& row : p.cells) {
      for (const HeatmapCell& c : row) {
        lines = std::max(lines, c.lines.size());
        for (const std::string& s : c.lines) l.cell_width = std::max(l.cell_width, TextWidth(s, kFontSize) + 2 * kCellPadding);
      }
    }
  }
  l.label_width += kCellPadding;
  l.cell_height = static_cast<int>(lines) * kLineHeight + 2 * kCellPadding;
  l.width = std::max(kMargin + l.label_width + static_cast<int>(columns) * l.cell_width, text + kMargin) + kMargin;
  return l;
}

// Draws one panel with its top at `top`; returns the y below it.
int DrawPanel(const HeatmapPanel& p, const Layout& l, int top, std::string& svg) {
  absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", kMargin, top + kFontSize,
                        Escape(p.title));
  top += kLineHeight + 4;
  const int x0 = kMargin + l.label_width;
  absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" fill=\"#555\">%s</text>\n", kMargin, top + kFontSize,
                        Escape(p.AxisLine()));
  top += kLineHeight;
  for (size_t c = 0; c < p.column_labels.size(); ++c) {
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                          x0 + static_cast<int>(c) * l.cell_width + l.cell_width / 2, top + kFontSize,
                          Escape(p.column_labels[c]));
  }
  top += kLineHeight + 2;
  double hi = 0;
  for (const auto& row : p.cells) {
    for (const HeatmapCell& c : row) hi = std::max(hi, c.value);
  }
  for (size_t r = 0; r < p.cells.size(); ++r) {
    const int y = top + static_cast<int>(r) * l.cell_height;
    if (r < p.row_labels.size()) {
      absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\">%s</text>\n", kMargin, y + l.cell_height / 2 + 4,
                            Escape(p.row_labels[r]));
    }
    for (size_t c = 0; c < p.cells[r].size(); ++c) {
      const HeatmapCell& cell = p.cells[r][c];
      const double t = hi > 0 ? std::clamp(cell.value / hi, 0.0, 1.0) : 0;
      const int x = x0 + static_cast<int>(c) * l.cell_width;
      absl::StrAppendFormat(&svg,
                            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"%s\" "
                            "stroke-width=\"%d\"/>\n",
                            x, y, l.cell_width, l.cell_height, Shade(t), cell.flagged ? "#d62728" : "white",
                            cell.flagged ? 3 : 1);
      for (size_t i = 0; i < cell.lines.size(); ++i) {
        absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\"%s>%s</text>\n",
                              x + l.cell_width / 2, y + kCellPadding + kFontSize + static_cast<int>(i) * kLineHeight,
                              t > 0.5 ? "white" : "black", i == 0 ? " font-weight=\"bold\"" : "",
                              Escape(cell.lines[i]));
      }
    }
  }
  return top + static_cast<int>(p.cells.size()) * l.cell_height + kLineHeight;
}

}  // namespace

std::string RenderHeatmapSvg(const Heatmap& h) {
  const Layout l = LayOut(h);
  int height = 34 + static_cast<int>(h.subtitles.size()) * kLineHeight + 12;
  for (const HeatmapPanel& p : h.panels) {
    height += 3 * kLineHeight + 6 + static_cast<int>(p.cells.size()) * l.cell_height + kLineHeight;
  }
  height += kLineHeight + 10;
  std::string out = svg::Open(l.width, height, h.title, h.subtitles);
  int top = 34 + static_cast<int>(h.subtitles.size()) * kLineHeight + 12;
  for (const HeatmapPanel& p : h.panels) top = DrawPanel(p, l, top, out);
  absl::StrAppendFormat(&out, "<text x=\"%d\" y=\"%d\" fill=\"#555\">%s</text>\n", kMargin, height - 14,
                        Escape(h.footer));
  out += "</svg>\n";
  return out;
}

}  // namespace faultbench
