// LoRA / DoRA / QLoRA adapters (train/adapters.hpp). Counts checked against the figures PEFT's
// print_trainable_parameters() shows for these models (widely reproduced): Llama-2-7B r 8 on
// q_proj, v_proj -> 4,194,304; Llama-3.1-8B r 16 all-linear -> 41,943,040.
#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/catalogue_counts.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/train/adapters.hpp"

namespace vramplan::train {
namespace {

const ModelSpec& model(const std::string& id) { return test::cached_catalogue_model(id); }

AdapterPlan plan(const std::string& id, AdapterSetup s) { return adapter_plan(model(id), s, test::quant_formats(), 2); }

TEST(TrainAdapters, LoraOnQueryAndValue) {
  // 32 layers x (8 x (4096 + 4096) for q + the same for v) = 4,194,304.
  AdapterSetup s;
  s.rank = 8;
  s.targets = "q_proj,v_proj";
  const auto p = plan("llama-2-7b", s);
  EXPECT_EQ(p.adapter_params, 4'194'304u);
  EXPECT_EQ(p.targeted_modules, 64u);
  EXPECT_TRUE(p.saved.qkv);
  EXPECT_FALSE(p.saved.o);
  EXPECT_FALSE(p.saved.down);
  // The same modules in torchtune's and LitGPT's spelling.
  s.targets = "query,value";
  EXPECT_EQ(plan("llama-2-7b", s).adapter_params, 4'194'304u);
}

TEST(TrainAdapters, FusedQkvSharesOneDropoutCopy) {
  // Phi-2 (separate q / k / v in the catalogue), r 8, dropout: per adapted module r x 2 B + the
  // dropped input 2560 x (2 B + 1 B mask) = 7,696 B per token. Three modules: 23,088; LitGPT's
  // fused LoRAQKVLinear drops the input once: 7,696 + 2 x 16 = 7,728.
  AdapterSetup s;
  s.rank = 8;
  s.targets = "query,key,value";
  s.dropout = true;
  EXPECT_EQ(plan("phi-2", s).adapter_bytes_per_token_layer, 23'088u);
  s.fused_qkv_dropout = true;
  EXPECT_EQ(plan("phi-2", s).adapter_bytes_per_token_layer, 7'728u);
}

TEST(TrainAdapters, AllLinearOnGqaModel) {
  // per layer 16 x (2 x (4096 + 4096) + 2 x (4096 + 1024) + 3 x (4096 + 14336)) = 1,310,720; x 32.
  AdapterSetup s;
  s.rank = 16;
  s.targets = "all-linear";
  EXPECT_EQ(plan("llama-3.1-8b", s).adapter_params, 41'943'040u);
  s.targets = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
  EXPECT_EQ(plan("llama-3.1-8b", s).adapter_params, 41'943'040u);
}

TEST(TrainAdapters, DoraAddsOneMagnitudePerOutputFeature) {
  // q and v outputs: 32 x (4096 + 4096) = 262,144 more than LoRA.
  AdapterSetup s;
  s.method = Method::Dora;
  EXPECT_EQ(plan("llama-2-7b", s).adapter_params, 4'194'304u + 262'144u);
}

TEST(TrainAdapters, QloraDoubleQuantizedBase) {
  // Llama-3.1-8B: block linears 32 x 218,103,808 = 6,979,321,856 values in NF4 with double quant:
  // n/2 + n/64 (uint8 absmax) + 4 n / 16384 (fp32 per 256 blocks) = 3,600,416,768 B; the rest
  // (embedding, lm_head, norms: 1,050,939,392 values) bf16 = 2,101,878,784 B.
  AdapterSetup s;
  s.method = Method::Qlora;
  s.base_format = "nf4-dq";
  s.targets = "all-linear";
  const auto p = plan("llama-3.1-8b", s);
  std::uint64_t frozen = 0;
  for (const auto& t : p.tensors)
    if (!t.trainable) frozen += t.frozen_bytes;
  EXPECT_EQ(frozen, 3'600'416'768ull + 2'101'878'784ull);
  EXPECT_EQ(p.dequant_buffer, 14336ull * 4096 * 2);  // the largest linear (gate/up/down) in bf16
}

TEST(TrainAdapters, PeftKbitPreparationUpcastsTheUnquantizedParameters) {
  // prepare_model_for_kbit_training: embedding, lm_head and norms (1,050,939,392 values) in fp32
  // = 4,203,757,568 B, next to the same 3,600,416,768 B of NF4 linears.
  AdapterSetup s;
  s.method = Method::Qlora;
  s.base_format = "nf4-dq";
  s.targets = "all-linear";
  s.upcast_unquantized = true;
  std::uint64_t frozen = 0;
  for (const auto& t : plan("llama-3.1-8b", s).tensors)
    if (!t.trainable) frozen += t.frozen_bytes;
  EXPECT_EQ(frozen, 3'600'416'768ull + 4'203'757'568ull);
}

TEST(TrainAdapters, FabricQuantizesTheHeadAndDequantizesThroughFp16) {
  // Lightning Fabric (LitGPT --quantize bnb.nf4): lm_head {128256, 4096} quantized too, and
  // dequantized to fp16 then cast to bf16: 128,256 x 4,096 x (2 + 2) B = 2,101,346,304 B.
  AdapterSetup s;
  s.method = Method::Qlora;
  s.base_format = "nf4";
  s.targets = "query,value";
  EXPECT_EQ(plan("llama-3.1-8b", s).dequant_buffer, 14336ull * 4096 * 2);  // transformers: block linears, one copy
  s.quantize_head = true;
  s.dequant_via_fp16 = true;
  const auto p = plan("llama-3.1-8b", s);
  EXPECT_EQ(p.dequant_buffer, 2'101'346'304ull);
  for (const auto& t : p.tensors)
    if (t.name.find("lm_head") != std::string::npos && !t.trainable) {
      EXPECT_LT(t.frozen_bytes, 128256ull * 4096);  // NF4: about 0.5 B per value, not bf16
    }
}

TEST(TrainAdapters, TorchtuneQuantizesOnlyTheTargets) {
  AdapterSetup s;
  s.method = Method::Qlora;
  s.base_format = "nf4-dq";
  s.targets = "q_proj,v_proj";
  s.quantize_targets_only = true;
  EXPECT_EQ(plan("llama-3.1-8b", s).dequant_buffer, 4096ull * 4096 * 2);  // q_proj is the largest target
}

TEST(TrainAdapters, DropoutKeepsACopyOfEachAdaptedInput) {
  // per token, layer 0: q and v: 2 x (rank 8 x 2 B + 4096 x (2 B copy + 1 B mask)) = 24,608.
  AdapterSetup s;
  s.dropout = true;
  EXPECT_EQ(plan("llama-2-7b", s).adapter_bytes_per_token_layer, 24'608u);
}

TEST(TrainAdapters, QueryAndValueOnAFusedQkvProjection) {
  // Falcon-7B fuses q (71 heads x 64 = 4544) with one KV head (64 + 64). LitGPT's LoRAQKVLinear
  // with enable_q, enable_v: A {2 x 32, 4544}, B {4544 + 64, 32} = 290,816 + 147,456 per layer, x 32.
  AdapterSetup s;
  s.rank = 32;
  s.targets = "query,value";
  const auto p = plan("falcon-7b", s);
  EXPECT_EQ(p.adapter_params, 32u * (290'816u + 147'456u));
  EXPECT_TRUE(p.saved.qkv);
  EXPECT_FALSE(p.saved.down);
}

TEST(TrainAdapters, FalconFortyBMatchesLitgptsPrintedCount) {
  // LitGPT tutorials/resource-tables.md (Lightning-AI/litgpt@26857050): Falcon 40B, bnb.nf4,
  // "12,042,240" trainable. 60 layers x (A {2 x 8, 8192} + B {8192 + 512, 8}) = 60 x 200,704.
  AdapterSetup s;
  s.targets = "query,value";
  EXPECT_EQ(plan("falcon-40b", s).adapter_params, 12'042'240u);
}

TEST(TrainAdapters, BitsandbytesBaseKeepsEveryQuantizedLinearsInput) {
  // MatMul4Bit saves its input whenever it needs an input gradient: with a bnb NF4 base every
  // block linear's input is kept, though only q and v carry adapters.
  AdapterSetup s;
  s.method = Method::Qlora;
  s.base_format = "nf4";
  const auto p = plan("llama-2-7b", s);
  EXPECT_TRUE(p.saved.qkv && p.saved.o && p.saved.gate_up && p.saved.down);
}

TEST(TrainAdapters, UnknownTargetsAreRefusedWithTheKnownNames) {
  const auto msg = test::error_message([] { lora_target_roles("qproj"); }, ErrorKind::Usage);
  EXPECT_NE(msg.find("all-linear"), std::string::npos) << msg;
}

}  // namespace
}  // namespace vramplan::train
