// What every chart of plot/ writes the same way: escaped text, a width for
// it that fits any sans-serif face (no font metrics at hand: a chart is
// sized by its longest line), round axis steps, short numbers, and the
// opening every chart shares (white page, title, subtitle lines).
#pragma once

#include <string>
#include <vector>

namespace faultbench::svg {

inline constexpr int kFontSize = 12, kTitleFontSize = 15, kLineHeight = 18, kMargin = 20;

// `text` with &, <, > and " escaped for SVG text and attributes.
std::string Escape(const std::string& text);

// Wide enough for any sans-serif face: its average glyph is about 0.55 em.
int TextWidth(const std::string& text, int font_size);

// 1, 2, 2.5 or 5 times a power of ten, the smallest such step that covers
// `top` in five steps.
double AxisStep(double top);

// 1.5M, 250k, 12.5, -2.5k: %g drops the zeros a round value does not need.
std::string Short(double value, int precision);

// "<svg ...>" of `width` x `height`, a white background, the title and one
// line per subtitle under it (from y = 44, kLineHeight apart). The caller
// appends its drawing and "</svg>\n".
std::string Open(int width, int height, const std::string& title, const std::vector<std::string>& subtitles = {});

}  // namespace faultbench::svg
