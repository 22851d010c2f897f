#include "vramplan/calib/rehearsal.hpp"

#include <functional>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::calib {
namespace {

RehearsalInput llama8b_plan() {
  RehearsalInput in;
  in.label = "llama3-8b bf16, 4 x 8192 tokens";
  in.weights = Bytes(16'060'522'496);
  in.kv_block = Bytes(2'097'152);  // 16 tokens x 32 layers x 2 (K,V) x 8 heads x 128 x 2 B
  in.kv_blocks = 2048;
  in.activation_workspace = Bytes(1'073'741'824);
  in.gemms = {{"qkv_proj", "bf16", 8192, 6144, 4096}, {"down_proj", "bf16", 8192, 4096, 14336}};
  in.predicted_peak = Bytes(21'500'000'000);
  return in;
}

TEST(Rehearsal, TotalIsWeightsPlusKvPlusActivations) {
  // 16,060,522,496 + 2,097,152 x 2048 (= 4,294,967,296) + 1,073,741,824 = 21,429,231,616
  EXPECT_EQ(llama8b_plan().total().count(), 21'429'231'616u);
}

TEST(Rehearsal, RoundTripsThroughAFile) {
  test::ScratchDir dir;
  const auto path = dir.path() / "plan.json";
  write_rehearsal(llama8b_plan(), path);
  const RehearsalInput back = load_rehearsal(path);
  EXPECT_EQ(rehearsal_to_json(back), rehearsal_to_json(llama8b_plan()));
  EXPECT_EQ(back.gemms[1].k, 14336u);
  EXPECT_EQ(back.predicted_peak->count(), 21'500'000'000u);
}

TEST(Rehearsal, WriterRefusesImpossiblePlans) {
  auto plan = llama8b_plan();
  plan.gemms[0].dtype = "int3";
  EXPECT_THROW(rehearsal_to_json(plan), Error);
  plan = llama8b_plan();
  plan.gemms[0].m = 0;
  EXPECT_THROW(rehearsal_to_json(plan), Error);
  plan = llama8b_plan();
  plan.kv_blocks = std::uint64_t{1} << 60;  // x 2 MiB overflows 64 bits
  EXPECT_THROW(rehearsal_to_json(plan), Error);
}

TEST(Rehearsal, LoaderNamesFileAndField) {
  auto doc = rehearsal_to_json(llama8b_plan());
  doc["gemms"][1]["dtype"] = "fp4";
  try {
    rehearsal_from_json(doc, "plan.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("plan.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("/gemms/1/dtype"), std::string::npos) << msg;
  }
  doc = rehearsal_to_json(llama8b_plan());
  doc.erase("weights_bytes");
  EXPECT_THROW(rehearsal_from_json(doc, "plan.json"), Error);
  doc = rehearsal_to_json(llama8b_plan());
  doc["gemms"][0]["k"] = 0;
  EXPECT_THROW(rehearsal_from_json(doc, "plan.json"), Error);
}

TEST(Rehearsal, DtypeBytes) {
  EXPECT_EQ(rehearsal_dtype_bytes("bf16"), 2u);
  EXPECT_EQ(rehearsal_dtype_bytes("fp8_e4m3"), 1u);
  EXPECT_THROW(rehearsal_dtype_bytes("fp32"), Error);
}

}  // namespace
}  // namespace vramplan::calib
