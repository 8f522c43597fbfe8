// Text in the project's standalone SVG charts: escaping, a width estimate
// to size a chart by its longest line (no font metrics at hand), and the
// opening every chart shares (white page, title, subtitle lines).
#pragma once

#include <string>
#include <vector>

namespace faultbench {

// `text` with &, <, > and " escaped for SVG text and attributes.
std::string EscapeSvg(const std::string& text);

// Wide enough for any sans-serif face: its average glyph is about 0.55 em.
int TextWidth(const std::string& text, int font_size);

inline constexpr int kChartFontSize = 12, kChartTitleFontSize = 15, kChartLineHeight = 18, kChartMargin = 20;

// "<svg ...>" of `width` x `height`, a white background, the title and one
// line per subtitle under it (from y = 44, kChartLineHeight apart). The
// caller appends its drawing and "</svg>\n".
std::string OpenChartSvg(int width, int height, const std::string& title, const std::vector<std::string>& subtitles);

}  // namespace faultbench
