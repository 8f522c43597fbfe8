#include "faultbench/sysfacts/read_file.h"

namespace faultbench {

std::string SelectedChoice(const std::string& line) {
  const size_t open = line.find('[');
  const size_t close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return line;
  return line.substr(open + 1, close - open - 1);
}

}  // namespace faultbench
