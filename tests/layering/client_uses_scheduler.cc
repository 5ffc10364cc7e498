// Deliberately breaks the layering: a client-layer program that calls into
// the skeleton owner (loader/bpf). It links loehle_client only, the way
// client code is linked, and must fail to link; the ctest
// layering-client-cannot-use-bpf checks that it does. Never built with
// the rest (EXCLUDE_FROM_ALL).
#include <cstdio>
#include <string>
#include <vector>

#include "loader/bpf/scheduler.h"

int main() {
  const std::vector<std::string> names = loehle::KfuncVariantNames(0);
  std::printf("%zu\n", names.size());
  return 0;
}
