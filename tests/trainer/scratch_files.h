// Files a test writes: a directory of its own per test (under GoogleTest's
// temp dir, named after the process and the test), emptied the first time
// the test asks for it, so a rerun starts clean.
#ifndef BLUR_TESTS_TRAINER_SCRATCH_FILES_H
#define BLUR_TESTS_TRAINER_SCRATCH_FILES_H

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace blur::test {

inline std::string scratch_dir() {
  static std::string emptied;  // the test whose directory was last emptied
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = std::string(info->test_suite_name()) + "_" + info->name();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("blur_" + std::to_string(getpid()) + "_" + test);
  if (emptied != test) {
    std::filesystem::remove_all(dir);
    emptied = test;
  }
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string scratch_file(const std::string& name) { return scratch_dir() + "/" + name; }

// Writes `bytes` to the file `name` in `dir`; its path.
inline std::string write_file(const std::string& dir, const std::string& name,
                              const std::string& bytes) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace blur::test

#endif  // BLUR_TESTS_TRAINER_SCRATCH_FILES_H
