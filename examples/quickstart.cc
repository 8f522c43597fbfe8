// The smallest program linked against an installed pmstore.
#include <cstdio>
#include <string>

#include <pmstore/version.h>

int main() {
  std::printf("pmstore %s\n", std::string(pmstore::Version()).c_str());
  return 0;
}
