#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blur/binary_randomized_response.h"
#include "blur/discrete_laplace.h"
#include "blur/generalized_randomized_response.h"
#include "blur/hadamard_response.h"
#include "blur/rng.h"
#include "kat_randomizer_outputs.inc"  // kKatRandomizerOutputs
#include "sim_port.h"

namespace {

using blur::Status;

constexpr char kPersonalization[] = "blur-device-sim/randomize";

struct Vector {
  uint32_t mechanism, epsilon_micros, domain, input, count;
  uint64_t seed;
  int64_t outputs[256];
};

bool parse(const char* line, size_t length, Vector* v) {
  char buffer[2048];
  if (length == 0 || line[0] == '#' || length >= sizeof buffer) return false;
  memcpy(buffer, line, length);
  buffer[length] = '\0';
  char* end = buffer;
  v->mechanism = static_cast<uint32_t>(strtoul(end, &end, 10));
  v->epsilon_micros = static_cast<uint32_t>(strtoul(end, &end, 10));
  v->domain = static_cast<uint32_t>(strtoul(end, &end, 10));
  v->seed = strtoull(end, &end, 10);
  v->input = static_cast<uint32_t>(strtoul(end, &end, 10));
  v->count = static_cast<uint32_t>(strtoul(end, &end, 10));
  if (v->count > 256) return false;
  for (uint32_t i = 0; i < v->count; ++i) {
    v->outputs[i] = strtoll(end + (i == 0 ? 0 : 1), &end, 10);
  }
  return true;
}

template <typename Mechanism>
void check(const Mechanism& mechanism, const Vector& v) {
  blur::sim::SimPort port(v.seed);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), reinterpret_cast<const uint8_t*>(kPersonalization),
                     sizeof kPersonalization - 1),
            Status::kOk);
  static int64_t actual[256];
  uint32_t mismatches = 0;
  for (uint32_t i = 0; i < v.count; ++i) {
    if constexpr (Mechanism::kPayload == blur::PayloadKind::kNumber) {
      ASSERT_EQ(mechanism.randomize(rng, v.input, &actual[i]), Status::kOk);
    } else {
      uint32_t out = 0;
      ASSERT_EQ(mechanism.randomize(rng, v.input, &out), Status::kOk);
      actual[i] = out;
    }
    mismatches += actual[i] != v.outputs[i];
  }
  EXPECT_EQ(mismatches, 0u) << "mechanism " << v.mechanism << " seed " << v.seed;
  if (mismatches != 0) {  // what this platform produced, in the file's format
    printf("actual:");
    for (uint32_t i = 0; i < v.count; ++i) {
      printf("%s%ld", i == 0 ? " " : ",", static_cast<long>(actual[i]));
    }
    printf("\n");
  }
}

// Every platform reproduces the recorded outputs exactly.
TEST(RandomizerKnownAnswers, OutputsAgreeBitForBit) {
  static Vector v;
  size_t vectors = 0;
  for (const char* text = kKatRandomizerOutputs; *text != '\0';) {
    const char* end = strchr(text, '\n');
    const size_t length = end ? static_cast<size_t>(end - text) : strlen(text);
    if (parse(text, length, &v)) {
      ++vectors;
      if (v.mechanism == 1) {
        const auto rr = blur::BinaryRandomizedResponse::create(v.epsilon_micros);
        ASSERT_TRUE(rr.ok());
        check(rr.value(), v);
      } else if (v.mechanism == 7) {
        const auto hr = blur::HadamardResponse::create(v.epsilon_micros, v.domain);
        ASSERT_TRUE(hr.ok());
        check(hr.value(), v);
      } else if (v.mechanism == 5) {
        const auto laplace = blur::DiscreteLaplace::create(v.epsilon_micros, v.domain);
        ASSERT_TRUE(laplace.ok());
        check(laplace.value(), v);
      } else {
        const auto grr = blur::GeneralizedRandomizedResponse::create(v.epsilon_micros, v.domain);
        ASSERT_TRUE(grr.ok());
        check(grr.value(), v);
      }
    }
    text += length + (end ? 1 : 0);
  }
  EXPECT_GE(vectors, 4u);
}

}  // namespace
