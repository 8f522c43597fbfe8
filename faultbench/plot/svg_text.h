// Text in the project's standalone SVG charts: escaping, and a width
// estimate to size a chart by its longest line (no font metrics at hand).
#pragma once

#include <string>

namespace faultbench {

// `text` with &, <, > and " escaped for SVG text and attributes.
std::string EscapeSvg(const std::string& text);

// Wide enough for any sans-serif face: its average glyph is about 0.55 em.
int TextWidth(const std::string& text, int font_size);

}  // namespace faultbench
