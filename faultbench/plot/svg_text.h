// What every chart of plot/ writes the same way: escaped text, a width for
// it that fits any sans-serif face, round axis steps and short numbers.
#pragma once

#include <string>

namespace faultbench::svg {

inline constexpr int kFontSize = 12, kTitleFontSize = 15, kLineHeight = 18, kMargin = 20;

std::string Escape(const std::string& text);

// Wide enough for any sans-serif face: its average glyph is about 0.55 em.
int TextWidth(const std::string& text, int font_size);

// 1, 2, 2.5 or 5 times a power of ten, the smallest such step that covers
// `top` in five steps.
double AxisStep(double top);

// 1.5M, 250k, 12.5: %g drops the zeros a round value does not need.
std::string Short(double value, int precision);

// The <svg> element's opening, a white background and the title line.
std::string Open(int width, int height, const std::string& title);

}  // namespace faultbench::svg
