// Runner for the bare-metal GoogleTest subset; output mimics GoogleTest's.
#include <stdio.h>
#include <stdlib.h>

#include "gtest/gtest.h"

namespace testing {

TestInfo*& test_list() {
  static TestInfo* head = nullptr;
  return head;
}

bool& current_test_failed() {
  static bool failed = false;
  return failed;
}

int RunAllTests() {
  int total = 0;
  int failed = 0;
  for (TestInfo* t = test_list(); t != nullptr; t = t->next) ++total;
  printf("[==========] Running %d tests.\n", total);
  for (TestInfo* t = test_list(); t != nullptr; t = t->next) {
    printf("[ RUN      ] %s.%s\n", t->suite, t->name);
    current_test_failed() = false;
    t->body();
    if (current_test_failed()) {
      ++failed;
      printf("[  FAILED  ] %s.%s\n", t->suite, t->name);
    } else {
      printf("[       OK ] %s.%s\n", t->suite, t->name);
    }
  }
  printf("[==========] %d tests ran.\n[  PASSED  ] %d tests.\n", total, total - failed);
  if (failed > 0) printf("[  FAILED  ] %d tests.\n", failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace testing

int main() {
  // exit() rather than return: picolibc's semihosting exit carries the code
  // to QEMU's exit status.
  exit(testing::RunAllTests());
}
