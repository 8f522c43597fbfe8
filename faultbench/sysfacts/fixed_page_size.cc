#include "faultbench/sysfacts/fixed_page_size.h"

#include "absl/strings/str_cat.h"
#include "pmstore/base/units.h"

namespace faultbench {

std::string FixedPageSize::What(const std::string& path) const {
  using pmstore::base::FormatBytes;
  if (devdax) return absl::StrCat("device DAX ", path, " (align ", FormatBytes(page_size), ")");
  if (hugetlbfs) return absl::StrCat("hugetlbfs ", hugetlbfs->mount_point, " (pagesize ", FormatBytes(page_size), ")");
  return "";
}

FixedPageSize ReadFixedPageSize(const std::string& path) {
  FixedPageSize fixed;
  if ((fixed.devdax = ReadDevDaxFactsOfPath(path))) {
    fixed.page_size = fixed.devdax->align;
  } else if ((fixed.hugetlbfs = ReadHugetlbfsFacts(path))) {
    fixed.page_size = fixed.hugetlbfs->page_size;
  }
  return fixed;
}

}  // namespace faultbench
