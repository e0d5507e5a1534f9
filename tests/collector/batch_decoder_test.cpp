#include "ingest/batch_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kat.h"
#include "kat_report_batch.inc"    // kKatReportBatch: tests/vectors/report_batch.kat
#include "kat_sfp_wire_forms.inc"  // kKatSfpWireForms: tests/vectors/sfp_wire_forms.kat

namespace {

using blur::collector::Batch;
using blur::collector::decode_batch;

std::vector<uint8_t> first_vector() {
  std::vector<uint8_t> bytes;
  blur_test::for_each_kat(kKatReportBatch, [&](const blur_test::KatBatch& v) {
    if (bytes.empty()) bytes.assign(v.encoding, v.encoding + v.encoding_size);
  });
  return bytes;
}

// `batch` is what the known-answer vector `v` encodes.
void expect_known_answer(const blur_test::KatBatch& v, const Batch& batch) {
  EXPECT_EQ(batch.sdk_version, v.sdk_version);
  EXPECT_EQ(batch.device_nonce, v.device_nonce);
  ASSERT_EQ(batch.reports.size(), v.report_count);
  for (size_t i = 0; i < v.report_count; ++i) {
    EXPECT_EQ(batch.reports[i].report_id, v.reports[i].report_id);
    EXPECT_EQ(batch.reports[i].metric_id, v.reports[i].metric_id);
    EXPECT_EQ(batch.reports[i].mechanism, v.reports[i].mechanism);
    EXPECT_EQ(batch.reports[i].epsilon_micros, v.reports[i].epsilon_micros);
    EXPECT_EQ(batch.reports[i].domain_size, v.reports[i].domain_size);
    using blur::PayloadKind;
    const uint32_t mechanism = v.reports[i].mechanism;
    EXPECT_EQ(batch.reports[i].payload, mechanism == 1    ? PayloadKind::kBit
                                        : mechanism == 2  ? PayloadKind::kIndex
                                        : mechanism == 5  ? PayloadKind::kNumber
                                        : mechanism == 10 ? PayloadKind::kBloom
                                        : mechanism >= 8  ? PayloadKind::kLocalHash
                                                          : PayloadKind::kBits);
    EXPECT_EQ(batch.reports[i].number, v.reports[i].number);
    EXPECT_EQ(batch.reports[i].hash_a, v.reports[i].hash_a);
    EXPECT_EQ(batch.reports[i].hash_b, v.reports[i].hash_b);
    EXPECT_EQ(batch.reports[i].bits, std::string(reinterpret_cast<const char*>(v.reports[i].bits),
                                                 v.reports[i].bit_bytes));
    EXPECT_EQ(batch.reports[i].value, v.reports[i].value);
  }
}

// The collector decodes exactly what Google's encoder produced.
TEST(BatchDecoder, DecodesKnownAnswers) {
  const size_t vectors = blur_test::for_each_kat(kKatReportBatch, [](const blur_test::KatBatch& v) {
    Batch batch;
    std::string error;
    ASSERT_TRUE(decode_batch(v.encoding, v.encoding_size, &batch, &error))
        << v.name << ": " << error;
    expect_known_answer(v, batch);
  });
  EXPECT_GE(vectors, 2u);
}

// The decoder reuses its wire struct per thread: after a batch of 64
// reports, and after a refused one, a smaller batch decodes to exactly its
// own reports (nothing left over from the one before).
TEST(BatchDecoder, EachBatchDecodesAloneAfterLargerAndRefusedOnes) {
  std::vector<uint8_t> large = first_vector();
  const std::vector<uint8_t> report(large.begin() + 12, large.end());  // tag 0x1A + report
  for (int i = 0; i < 63; ++i) large.insert(large.end(), report.begin(), report.end());
  const size_t vectors = blur_test::for_each_kat(kKatReportBatch, [&](const blur_test::KatBatch& v) {
    Batch batch;
    std::string error;
    ASSERT_TRUE(decode_batch(large.data(), large.size(), &batch, &error)) << error;
    ASSERT_EQ(batch.reports.size(), 64u);
    // Cut inside its last report: refused, after decoding 63 of them.
    EXPECT_FALSE(decode_batch(large.data(), large.size() - 3, &batch, &error));
    ASSERT_TRUE(decode_batch(v.encoding, v.encoding_size, &batch, &error))
        << v.name << ": " << error;
    expect_known_answer(v, batch);
  });
  EXPECT_GE(vectors, 2u);
}

// Every proper prefix of a valid batch is either refused or (when it ends
// exactly between top-level fields) decodes to fewer fields; none crashes,
// and a prefix that cuts a report is always refused.
// The look before decoding finds the nonce where every known-answer
// encoding has it, and nothing in bytes that do not start that way.
// sfp arrives in its own message (this SDK) or packed into local_hash
// (reports earlier SDKs queued): both decode to the same report, the
// fields packed as IncomingReport keeps them.
TEST(BatchDecoder, SfpDecodesAlikeFromBothWireForms) {
  Batch forms[2];
  const char* names[2] = {"local_hash_form", "fragment_puzzle_form"};
  for (int f = 0; f < 2; ++f) {
    SCOPED_TRACE(names[f]);
    uint8_t bytes[128];
    const size_t size = blur_test::named_hex_vector(kKatSfpWireForms, names[f], bytes, sizeof bytes);
    ASSERT_GT(size, 0u);
    std::string error;
    ASSERT_TRUE(decode_batch(bytes, size, &forms[f], &error)) << error;
    ASSERT_EQ(forms[f].reports.size(), 1u);
    const auto& r = forms[f].reports[0];
    EXPECT_EQ(r.report_id, 12u);
    EXPECT_EQ(r.mechanism, 12u);
    EXPECT_EQ(r.epsilon_micros, 4000000u);
    EXPECT_EQ(r.domain_size, 16u);
    ASSERT_TRUE(r.has_payload);
    EXPECT_EQ(r.payload, blur::PayloadKind::kLocalHash);
    EXPECT_EQ(r.hash_a, 3u << 10 | 517u);   // position, fragment seed
    EXPECT_EQ(r.hash_b, 700u);              // word seed
    EXPECT_EQ(r.value, 9u << 8 | 33u);      // fragment bucket, word bucket
  }
}

// A fragment_puzzle field too wide for its packing is refused, not folded
// into a neighbouring field: fragment_seed 1024 (the table has 1024 seeds).
TEST(BatchDecoder, SfpFieldsOutOfRangeAreRefused) {
  uint8_t bytes[128];
  const size_t size =
      blur_test::named_hex_vector(kKatSfpWireForms, "fragment_puzzle_form", bytes, sizeof bytes);
  ASSERT_GT(size, 0u);
  // fragment_seed (field 4, varint 517 = 85 04) is the payload's 4th field.
  const uint8_t seed_517[] = {0x20, 0x85, 0x04};
  uint8_t* at = std::search(bytes, bytes + size, seed_517, seed_517 + 3);
  ASSERT_NE(at, bytes + size);
  at[2] = 0x08;  // 0x85 0x08: 5 + (8 << 7) = 1029
  Batch batch;
  std::string error;
  EXPECT_FALSE(decode_batch(bytes, size, &batch, &error));
  EXPECT_NE(error.find("fragment_puzzle"), std::string::npos) << error;
}

TEST(BatchDecoder, LeadingDeviceNonceOfEncodedBatches) {
  using blur::collector::device_nonce_offset;
  using blur::collector::leading_device_nonce;
  blur_test::for_each_kat(kKatReportBatch, [](const blur_test::KatBatch& v) {
    EXPECT_EQ(leading_device_nonce(v.encoding, v.encoding_size), v.device_nonce) << v.name;
    const size_t offset = device_nonce_offset(v.encoding, v.encoding_size);
    for (size_t cut = 0; cut < offset + 8; ++cut) {  // truncated before its last byte
      EXPECT_EQ(leading_device_nonce(v.encoding, cut), std::nullopt) << v.name << " " << cut;
    }
  });
  // Without field 1 (sdk_version 0 is not encoded): field 2 first.
  const uint8_t bare[] = {0x11, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(leading_device_nonce(bare, sizeof bare), 0x0807060504030201ull);
  const uint8_t other_first[] = {0x1a, 0x00, 0x11, 1, 2, 3, 4, 5, 6, 7, 8};  // field 3 first
  EXPECT_EQ(leading_device_nonce(other_first, sizeof other_first), std::nullopt);
  uint8_t long_varint[30] = {0x08};  // a field 1 "varint" of 11 bytes
  for (int i = 1; i <= 11; ++i) long_varint[i] = 0x80;
  long_varint[12] = 0x11;
  EXPECT_EQ(device_nonce_offset(long_varint, sizeof long_varint), 0u);
}

TEST(BatchDecoder, TruncatedInputIsRefusedWithAMessage) {
  const std::vector<uint8_t> bytes = first_vector();
  ASSERT_FALSE(bytes.empty());
  for (size_t length = 0; length < bytes.size(); ++length) {
    Batch batch;
    batch.sdk_version = 12345;  // must stay untouched on error
    std::string error;
    const bool decoded = decode_batch(bytes.data(), length, &batch, &error);
    if (length < 12) {  // the header alone is incomplete: required fields missing
      EXPECT_FALSE(decoded) << length;
    }
    if (length > 12) {  // inside the only report
      EXPECT_FALSE(decoded) << length;
    }
    if (!decoded) {
      EXPECT_FALSE(error.empty());
      EXPECT_EQ(batch.sdk_version, 12345u);
    }
  }
}

TEST(BatchDecoder, WrongWireTypesAreRefused) {
  // Field 1 (sdk_version, varint) sent as length-delimited.
  const uint8_t wrong_type[] = {0x0A, 0x01, 0x00, 0x11, 1, 2, 3, 4, 5, 6, 7, 8};
  // Field 3 (reports, message) sent as a varint.
  const uint8_t report_as_varint[] = {0x08, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x18, 0x05};
  // A report whose length runs past the end of the body.
  const uint8_t overlong[] = {0x08, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1A, 0x7F, 0x08};
  for (const auto& input :
       {std::vector<uint8_t>(std::begin(wrong_type), std::end(wrong_type)),
        std::vector<uint8_t>(std::begin(report_as_varint), std::end(report_as_varint)),
        std::vector<uint8_t>(std::begin(overlong), std::end(overlong))}) {
    Batch batch;
    std::string error;
    EXPECT_FALSE(decode_batch(input.data(), input.size(), &batch, &error));
    EXPECT_NE(error.find("malformed protobuf"), std::string::npos) << error;
  }
}

TEST(BatchDecoder, MissingRequiredFieldsAreRefused) {
  // sdk_version only: device_nonce is required.
  const uint8_t header_only[] = {0x08, 0x01};
  Batch batch;
  std::string error;
  EXPECT_FALSE(decode_batch(header_only, sizeof header_only, &batch, &error));
  EXPECT_NE(error.find("missing required field"), std::string::npos) << error;
}

TEST(BatchDecoder, TooManyReportsAreRefused) {
  std::vector<uint8_t> bytes = first_vector();
  const std::vector<uint8_t> report(bytes.begin() + 12, bytes.end());  // tag 0x1A + report
  for (int i = 0; i < 64; ++i) bytes.insert(bytes.end(), report.begin(), report.end());
  Batch batch;
  std::string error;
  EXPECT_FALSE(decode_batch(bytes.data(), bytes.size(), &batch, &error));  // 65 reports
  EXPECT_NE(error.find("malformed protobuf"), std::string::npos) << error;
}

TEST(BatchDecoder, OversizedBodiesAreRefusedBeforeDecoding) {
  std::vector<uint8_t> bytes(blur::collector::max_encoded_batch_size() + 1, 0);
  Batch batch;
  std::string error;
  EXPECT_FALSE(decode_batch(bytes.data(), bytes.size(), &batch, &error));
  EXPECT_NE(error.find("exceeds the largest valid batch"), std::string::npos) << error;
}

// The operator's documentation states the batch limit the server enforces
// (docs/collector.md, the POST /v1/reports row): it drifted once.
TEST(BatchDecoder, TheDocumentedBatchLimitIsTheEnforcedOne) {
  std::ifstream file(std::string(BLUR_SOURCE_DIR) + "/docs/collector.md");
  ASSERT_TRUE(file) << "docs/collector.md";
  std::stringstream text;
  text << file.rdbuf();
  const std::string docs = text.str();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(docs, match, std::regex(R"(POST /v1/reports` \(`application/x-protobuf`, ≤ ([0-9,]+) bytes)")));
  std::string digits = match[1].str();
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  EXPECT_EQ(std::stoul(digits), blur::collector::max_encoded_batch_size());
}

}  // namespace
