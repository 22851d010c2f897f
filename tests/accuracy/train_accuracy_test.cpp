// `vramplan train` against measured peaks: the LitGPT records of
// ../shared/groundtruth/train_measured.jsonl (copied with their sources to
// tests/accuracy/data/train_measured_litgpt.jsonl). Every one of them is torch.cuda.max_memory_allocated()
// (LitGPT finetune scripts print it / 1e9; peak_gib is converted), so they compare with vramplan's
// allocated peak. Generates docs/accuracy-train.md:
//   VRAMPLAN_WRITE_ACCURACY_DOC=1 vramplan_tests --gtest_filter='TrainAccuracy.*'
//
// How a LitGPT record becomes a request (LitGPT's own settings, not fitted):
//   precision bf16-true -> bf16 params, grads and torch optimizer states; the loss takes the bf16
//     logits in chunks of 128 tokens (litgpt/utils.py chunked_cross_entropy, chunk_size=128);
//   LoRA: lora_dropout 0.05 in every config_hub/finetune/*/lora.yaml -> --lora-dropout; targets as
//     the record names them (query,value / query,key,value,projection,mlp);
//   QLoRA: quantize bnb.nf4 (nf4-dq where the record says double quant), bnb PagedAdamW (32-bit);
//   single device: no activation checkpointing (strategy auto); several devices: FSDPStrategy with
//     activation_checkpointing_policy={Block}, FULL_SHARD;
//   attention: SDPA (flash / memory-efficient kernels), except with attention logit softcapping
//     (Gemma-2): litgpt/model.py CausalSelfAttention.scaled_dot_product_attention ("with softcapping
//     we cannot use SDPA", @916a84ca, the commit that added the Gemma-2 rows) computes the s x s scores
//     eagerly: AttentionImpl::Eager (the tanh output it also keeps, 2 B per score, is not modelled);
//   lm_head: its own Linear even for tied checkpoints (convert_hf_checkpoint copies the embedding
//     into lm_head.weight): untie_head;
//   QLoRA: Fabric's BitsandbytesPrecision replaces every nn.Linear, lm_head included
//     (quantize_head), and quantizes an fp16 copy of each weight, so MatMul4Bit dequantizes to fp16
//     and casts to bf16 (dequant_via_fp16): the lm_head's two dequantized copies are the largest
//     transient (lightning/fabric/plugins/precision/bitsandbytes.py _Linear4bit._quantize_weight).
//   LoRA on q / k / v: LitGPT's one fused `attn` Linear, LoRAQKVLinear with one lora_dropout for all
//     parts (fused_qkv_dropout);
//   the loop (litgpt/finetune/lora.py fit) keeps `logits` — and through its grad_fn the previous
//     iteration's graph — until the next forward returns: holds_previous_graph. bitsandbytes keeps
//     each quantized linear's input as ctx.tensors, which backward does not release. The previous
//     micro-batch: config_hub runs (Alpaca2k: 2,000 x (1 - 0.03847 validation) = 1,923 samples
//     truncated at 512; 481 iterations at micro-batch 4 for one epoch, 3,846 at 2 for four) as long
//     as the peak one (two consecutive batches at the cap: the upper bound); the resource-table runs'
//     peak is their one longest Alpaca sample, after a typical one: 110 tokens, "the median length
//     of the samples in Alpaca" (LitGPT tutorials/oom.md).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "accuracy/accuracy_doc.hpp"
#include "accuracy/train_frameworks.hpp"
#include "accuracy/vllm_records.hpp"
#include "support/sanitizer.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/plan/train_limits.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::test {
namespace {

// HF id -> catalogue id, for the models the catalogue has.
const std::map<std::string, std::string> kCatalogue = {
    {"meta-llama/Llama-3.2-1B", "llama-3.2-1b"}, {"meta-llama/Llama-3.2-3B", "llama-3.2-3b"},
    {"meta-llama/Llama-3.1-8B", "llama-3.1-8b"}, {"meta-llama/Llama-2-7b-hf", "llama-2-7b"},
    {"meta-llama/Llama-2-13b-hf", "llama-2-13b"}, {"mistralai/Mistral-7B-v0.1", "mistral-7b-v0.1"},
    {"microsoft/phi-2", "phi-2"}, {"microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"},
    {"google/gemma-2-9b", "gemma-2-9b"}, {"tiiuae/falcon-7b", "falcon-7b"},
    {"TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T", "tinyllama-1.1b"}, {"google/gemma-2b", "gemma-2b"},
    {"google/gemma-7b", "gemma-7b"}, {"stabilityai/stablelm-base-alpha-3b", "stablelm-base-alpha-3b"},
    {"microsoft/phi-1_5", "phi-1.5"},
};
// "the median length of the samples in Alpaca is 110 tokens" (Lightning-AI/litgpt tutorials/oom.md).
constexpr std::uint64_t kAlpacaMedianTokens = 110;
const std::map<std::string, std::string> kGpus = {{"A10G 24GB", "a10g"}, {"A100-SXM4-40GB", "a100-sxm-40"}};

// Records kept in the table but left out of the summary, each with its reason.
const std::map<std::string, std::string> kExcluded = {
    {"lg-llama32-1b-full",
     "physically inconsistent with one GPU: bf16 AdamW full fine-tuning keeps 4 x 2 B x 1.236 B params = 9.21 GiB of "
     "model states (weights, gradients, exp_avg, exp_avg_sq), more than the 8.10 GiB measured peak; the run's device "
     "count is not in the record (LitGPT's full.py switches to FSDP when devices > 1)"},
    {"lg-llama32-3b-full", "the same: 4 x 2 B x 3.213 B = 23.94 GiB of model states > 15.38 GiB measured"},
    {"lg-phi3-full", "the same: 4 x 2 B x 3.821 B = 28.47 GiB of model states > 15.84 GiB measured"},
    {"lg-rt-llama2-7b-lora-mb1-2gpu",
     "per-GPU peak on 2 GPUs with FSDP (20.66 GiB) is above the 1-GPU run of the same configuration (19.84 GiB, "
     "lg-rt-llama2-7b-lora-mb1): what FSDP kept unsharded in this LitGPT version is not established"},
    {"lg-rt-llama2-7b-lora-mb4-2gpu", "FSDP multi-GPU LoRA run, as lg-rt-llama2-7b-lora-mb1-2gpu"},
    {"lg-rt-llama2-13b-lora-mb1-4gpu",
     "per-GPU peak on 4 GPUs (33.13 GiB) close to the 1-GPU run (35.50 GiB): as lg-rt-llama2-7b-lora-mb1-2gpu"},
};

struct Row {
  std::string id, trust, excluded;
  double measured = 0, predicted = 0;
  std::string setup;
  double err() const { return pct(predicted, measured); }
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<Row> predict_all() {
  std::vector<Row> rows;
  std::ifstream in(accuracy_data() / "train_measured_litgpt.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto r = nlohmann::json::parse(line);
    Row row{r.at("id"), r.at("trust"), "", r.at("peak_gib").get<double>(), 0, ""};
    const auto model = kCatalogue.find(r.at("model").get<std::string>());
    if (model == kCatalogue.end()) {
      row.excluded = "model not in the catalogue (" + r.at("model").get<std::string>() + ")";
      rows.push_back(row);
      continue;
    }
    train::TrainRequest q;
    q.model = model->second;
    q.gpu = kGpus.at(r.at("gpu").get<std::string>());
    const std::string method = lower(r.at("method"));
    q.method = method == "full" ? train::Method::Full : method == "qlora" ? train::Method::Qlora : train::Method::Lora;
    q.precision = train::PrecisionRecipe::PureBf16;
    q.loss = train::LossImpl::Bf16;
    q.untie_head = true;
    if (q.model == "gemma-2-9b") q.attention = train::AttentionImpl::Eager;  // softcapping: no SDPA (see the header)
    q.micro_batch = r.at("micro_batch");
    q.seq_len = r.at("seq_len");
    q.loss_chunks = (q.micro_batch * q.seq_len + 127) / 128;
    q.holds_previous_graph = true;
    if (r.at("source").get<std::string>().find("resource-tables.md") != std::string::npos)
      q.previous_tokens = q.micro_batch * kAlpacaMedianTokens;
    q.optimizer = lower(r.at("optimizer")).find("paged") != std::string::npos ? train::Optimizer::PagedAdamW
                                                                                : train::Optimizer::AdamW;
    const std::uint64_t gpus = r.at("n_gpus");
    q.parallel.gpus = gpus;
    if (gpus > 1) {
      q.sharding = train::Sharding::Zero3;
      q.recompute = train::Recompute::Full;
    }
    if (q.method != train::Method::Full) {
      q.adapter.rank = r.at("lora_rank");
      // "query,key,value,projection,mlp,head (all)": LitGPT's lora_* switches, all on.
      std::string targets = r.at("lora_targets");
      if (const auto all = targets.find(" (all)"); all != std::string::npos) targets.erase(all);
      q.adapter.targets = targets;
      q.adapter.dropout = true;
      q.adapter.fused_qkv_dropout = true;
      if (q.method == train::Method::Qlora) {
        q.adapter.base_format = lower(r.at("base_precision")).find("double quant") != std::string::npos ? "nf4-dq" : "nf4";
        q.adapter.quantize_head = true;
        q.adapter.dequant_via_fp16 = true;
      }
    }
    row.setup = q.model + " " + std::string(train::method_name(q.method)) + " mb " + std::to_string(q.micro_batch) +
                " x " + std::to_string(q.seq_len) + (gpus > 1 ? " fsdp x" + std::to_string(gpus) : "");
    const auto plan = train::plan_training(q, DataRoot{source_dir()});
    row.predicted = plan.peak_allocated.gib();
    rows.push_back(row);
  }
  return rows;
}

constexpr const char* kTrainFindings =
    "What the records show:\n\n"
    "- LoRA on a bf16 base is predicted 0.5-6 % under (median 2.9 %): frozen weights, adapters with their AdamW "
    "states, and the activations of the adapted linears (a frozen linear keeps no input) with LoRA dropout's copies; "
    "LitGPT adapts q / k / v through one fused `attn` Linear (LoRAQKVLinear, one lora_dropout for all parts), so a "
    "catalogue model with separate q / k / v keeps one dropped copy (Llama-2-7B at 2 x 512: -0.38 GiB).\n"
    "- LitGPT keeps its own lm_head for a tied checkpoint (convert_hf_checkpoint copies the embedding into "
    "lm_head.weight): Llama-3.2-1B / 3B carry a second vocab x hidden matrix (0.49 / 0.73 GiB in bf16).\n"
    "- LitGPT's loop holds the previous graph: fit() (litgpt/finetune/lora.py) keeps `logits = model(...)` until the "
    "next forward returns, and bitsandbytes' MatMul4Bit keeps each quantized linear's input as ctx.tensors (an "
    "attribute, not save_for_backward: backward does not free it; bnb/autograd/_functions.py 0.41-0.43). During the "
    "next forward the previous micro-batch's bnb inputs and logits are alive: 1.42 GiB for Llama-2-7B at 2 x 512 "
    "(2 B x (h + q + h + I) = 46,592 B per token and layer x 32 layers x 1,024 tokens). With it the config_hub QLoRA "
    "rows went from 9-18 % under to 1-7 % under (the 1-3 GiB gap of the last revision); the previous micro-batch is "
    "taken as long as the peak one there (481-3,846 iterations over Alpaca2k truncated at 512: the upper bound). "
    "The resource-table runs peak at their one longest sample (1,304 tokens), after a typical one: 110 tokens, "
    "Alpaca's median (LitGPT tutorials/oom.md). Fabric's BitsandbytesPrecision also quantizes the lm_head from an "
    "fp16 copy: two dequantized vocab x hidden copies at its matmuls (1.96 GiB for Llama-3.1-8B); Gemma-2-9B's eager "
    "softcapping attention keeps the s x s scores, and its blocks have four RMSNorms, not two (LitGPT's "
    "post_attention_norm / post_mlp_norm, transformers Gemma2DecoderLayer): counting all four moved lg-gemma2-9b-qlora "
    "from -5.85 % to -1.43 % (2 x 21,508 B per token and layer x 42 layers x 512 tokens = 0.86 GiB).\n"
    "- lg-phi2-lora was 26.3 % over, now +8.6 %: Phi-2 (HF PhiDecoderLayer and LitGPT shared_attention_norm) runs "
    "attention and MLP in parallel off one input_layernorm, a torch LayerNorm, which keeps its bf16 input with mean "
    "and rstd (2h + 8 = 5,128 B per token and layer) where vramplan counted two RMSNorm-style norms (fp32 input + "
    "normalised output, 30,728 B): -1.56 GiB at 4 x 512; LitGPT's fused q / k / v dropout: -0.94 GiB. Falcon-7B has "
    "the same single LayerNorm (-0.69 GiB at 512 tokens). Two over-counts that autograd's rules show are not applied: "
    "an adapted frozen linear's own input is counted beside the dropped copy LoRA's A keeps, and a frozen norm "
    "weight keeps no normalised output; removing them moves every bf16 LoRA record 3-8 % under, with the missing "
    "0.6-0.7 GiB not identified (LitGPT's fused qkv output, alive through the v view SDPA saves, is one candidate).\n"
    "- The FSDP multi-GPU and the single-GPU full fine-tuning records of these tables are excluded below, with the "
    "arithmetic that makes them inconsistent with the stated setup.\n"
    "- The models added for these records on 2026-12-05 (TinyLlama, Gemma-1, StableLM-Alpha, phi-1.5; 15 records): "
    "the QLoRA rows are within 7 % (gemma-2b +0.1 %, gemma-7b -2.0 %, tinyllama -2.0 %, stablelm -6.1 %), and so "
    "are gemma-2b-lora (-1.8 %), the StableLM LoRA rows (-2.9 / -4.9 %) and phi-1.5's QLoRA (-7.8 %). Off: "
    "tinyllama-full -21 % and tinyllama-lora +12 % at micro-batch 4 / 8 (every batch is taken as 512 tokens "
    "long; shorter real batches would lower the prediction, a candidate for the over-prediction only), phi-1.5 "
    "LoRA -11 % (micro-batch 1) and -20 % (micro-batch 4) at its longest Alpaca sample, and the FSDP full runs "
    "stablelm3b-full-2gpu -14 % and gemma-2b-full-4gpu -32 % (16.23 GiB per GPU, near an unsharded copy of the "
    "weights and gradients, as in the excluded FSDP LoRA runs). Not excluded, since no record-specific "
    "arithmetic rules them out.\n";

constexpr const char* kFrameworkFindings =
    "What these records show:\n\n"
    "- The torchtune LoRA tutorial runs were 7-9 % under (~1 GiB over a 12.55 GiB bf16 base) and Yi-34B at 4096 "
    "tokens 7.8 % under; all three are variable-length runs, and the gap was the caching allocator's "
    "fragmentation over many steps of different lengths (train/step_replay.hpp): a step longer than those before "
    "finds only smaller freed blocks (best fit, every tensor of 10 MiB or more in its own segment) and cudaMallocs "
    "new segments while the old ones stay cached. Replaying 200 steps x 5 seeds of the step's tensors through the "
    "allocator (batch lengths log-normal: alpaca_cleaned from Alpaca's median 110 and longest 1,304 of 52,002 "
    "samples, sigma 0.579; cls-fudan-news-zh from its mean 3,234.4 and deviation 2,547.5, sigma 0.695) adds the "
    "median reserved - allocated: Llama-2-7B r8 q / v +1.14 GiB (seeds 0.48-2.17 GiB), -7.0 -> +0.9 %; the four "
    "torchtune records now -1.1 .. +0.9 %, Yi-34B 4096 -7.8 -> -4.4 %, Yi-34B 512 (nearly every sample longer "
    "than 512: fixed length, intra-step fragmentation only) -2.3 -> -1.9 %. The spread over seeds (the order of "
    "lengths) is ~+-0.9 GiB here, so a single run can land 5 % either side. The tutorial's model-init line "
    "(13.96 GB allocated, 0.45 GiB above weights and adapters) stays unexplained; the reserved figure does not "
    "need it. torchtitan on 8 GPUs (-8.0 %, fixed-length C4) is not a variable-length run: FSDP2's per-layer "
    "reduce-scatter buffers of the sharded fp32 gradients (109 MB per layer on 8 GPUs, 7 MB on 128) are freed by "
    "zero_grad before the next forward and are smaller than the forward's 128-448 MiB activations, a likely "
    "candidate for the 8-vs-128-GPU difference (measured 15.4 GiB, predicted 10.5 GiB) not modelled here.\n"
    "- tt-tut-qlora-7b is 44 % under, with a stated mechanism: the tutorial reports 9.13 GB reserved at model "
    "init, above the predicted training peak; torchtune quantizes the bf16 checkpoint to NF4 on the GPU, and the "
    "segments of that loading peak stay reserved through training (no empty_cache). Model loading is not "
    "modelled.\n"
    "- tt-flags-3b-packed compares torchtune's peak active bytes (= allocated on one stream) with the peak "
    "allocated: -4.9 %.\n"
    "- 88 records are excluded below; most because the measured quantity is not stated (torchtune README "
    "tables), because torch.compile / Float8 / optimizer-in-backward shaped the run, or because `train` does not "
    "size the model (Qwen-1 and Baichuan2: docs/models.md; BERT, an encoder).\n"
    "- ms-swift's Qwen-1 records stay excluded (branch train-models adds the architecture; it predicts them 2-56 % "
    "under, median 30 %, so QWenLMHeadModel stays unsupported: docs/models.md). Read at ms-swift 97e4d198b, the commit that wrote the table (2024-01-02): the figure is "
    "max_memory_reserved(); defaults --gradient_checkpointing true --use_flash_attn true --max_length 2048 "
    "--batch_size 1 --gradient_accumulation_steps 16, on a dataset of 3,234 tokens on average (nearly every sample "
    "fills max_length); the loss is Qwen-1's own (QWenLMHeadModel.forward: bf16 logits, a shifted .contiguous() "
    "copy, CrossEntropyLoss) and swift's compute_loss (swift/trainers/trainers.py) adds only an argmax accuracy. On "
    "train-models' predictions the LoRA gap at 512 tokens is the same for Qwen-1.8B, 7B and 14B (2.46 / 2.38 / 2.40 "
    "GiB, hidden 2,048 / 4,096 / 5,120) and at 2,048 tokens the same with and without gradient checkpointing (8.46 / "
    "8.95 GiB): not in the blocks, but ~4.2-4.8 MiB per token up to 2,048 tokens, ~30 B per token and entry of "
    "Qwen-1's 151,936 vocabulary — a logits-path term found neither in swift's nor in Qwen's code, so not modelled.\n";

// Capacity boundaries (tests/accuracy/data/train_capacity_boundaries.jsonl, copied from
// ../shared/groundtruth with their sources): an OOM must be predicted not to fit; a "max context
// that fit = N" must not be predicted above N (a planner that promises more context than the run
// had fails on the user's GPU).
struct Boundary {
  std::string id;
  std::optional<train::TrainRequest> request;  //!< nullopt: excluded (reason in `note`)
  std::optional<std::uint64_t> max_context;     //!< the measured max context; nullopt for an OOM
  std::string note;
};

train::TrainRequest litgpt(std::string model, std::string gpu, train::Method method, std::uint64_t batch,
                           std::uint64_t seq, std::string targets = "query,value") {
  train::TrainRequest q;
  q.model = std::move(model);
  q.gpu = std::move(gpu);
  q.method = method;
  q.micro_batch = batch;
  q.seq_len = seq;
  q.loss = train::LossImpl::Bf16;
  q.loss_chunks = (batch * seq + 127) / 128;
  q.adapter.rank = 8;
  q.adapter.targets = std::move(targets);
  q.adapter.dropout = true;
  q.adapter.fused_qkv_dropout = true;
  q.untie_head = true;
  q.holds_previous_graph = true;  // the evaluated OOM records are resource-table runs (see the header)
  q.previous_tokens = batch * kAlpacaMedianTokens;
  if (method == train::Method::Qlora) {
    q.adapter.base_format = "nf4";
    q.adapter.quantize_head = true;
    q.adapter.dequant_via_fp16 = true;
    q.optimizer = train::Optimizer::PagedAdamW;
  }
  return q;
}

// HF transformers + PEFT + bitsandbytes with flash-attention-2, QLoRA r 32 on all linear layers,
// batch 1 (Unsloth's baseline column). "12 GB VRAM" is taken as 12 GiB usable — more than any card
// of that size reports, so the predicted max context is if anything too long (the strict side).
// Gradient checkpointing is not stated; without it not even
// the 12 GB row's 932 tokens fit in vramplan's model, so it is taken as on.
train::TrainRequest unsloth_hf(std::string model, std::string gpu) {
  train::TrainRequest q;
  q.model = std::move(model);
  q.gpu = std::move(gpu);
  q.method = train::Method::Qlora;
  q.adapter.rank = 32;
  q.adapter.targets = "all-linear";
  q.adapter.base_format = "nf4-dq";
  q.recompute = train::Recompute::Full;
  // The table came with Llama 3.1 (July 2024): transformers <= 4.45 (fp32 logits from the model,
  // shifted copy in the loss) and the standard QLoRA recipe's prepare_model_for_kbit_training.
  q.loss = train::LossImpl::HfLegacy;
  q.adapter.upcast_unquantized = true;
  // HF Trainer bf16=True is autocast over fp32 parameters (the `amp` recipe, docs/training.md):
  // PEFT keeps the LoRA weights of a 4-bit base in fp32, with fp32 gradients and AdamW states.
  q.precision = train::PrecisionRecipe::AmpFp32Params;
  // "Fits" on a card of that size: PyTorch's reserved peak + the CUDA context <= the card
  // (--fit-on device), not the allocated peak.
  q.fit_on_device = true;
  return q;
}

std::vector<Boundary> boundaries() {
  using M = train::Method;
  // Unsloth's "fits" is a real out-of-memory: judged on the device view (peak reserved + the CUDA
  // context, --fit-on device) with PEFT's fp32 hidden states and fp32 adapters (unsloth_hf above).
  const std::string kUnslothDevice =
      "device view: peak reserved + 0.5 GiB CUDA context <= the card; PEFT's fp32 hidden states (block inputs "
      "kept under recomputation 4 B wide) and fp32 LoRA weights with fp32 AdamW states (HF Trainer bf16=True); "
      "autocast's bf16 copy of PEFT's fp32 lm_head, saved for backward (0.98 GiB for Llama-3.1-8B: it took the "
      "12 / 16 GB cards from +27 / +5 % above the measured context to 8-12 % below)";
  const std::string kLitgptFsdp =
      "not evaluated: LitGPT's FSDP runs of these tables use more per GPU than its single-GPU runs (see the excluded "
      "FSDP records above) and vramplan's FSDP model would call this one a fit; what LitGPT keeps unsharded is not "
      "established";
  std::vector<Boundary> b = {
      {"lg-oom-llama2-7b-lora-mb4", litgpt("llama-2-7b", "a100-sxm-40", M::Lora, 4, 1304), std::nullopt, ""},
      {"lg-oom-llama2-13b-lora-mb2", litgpt("llama-2-13b", "a100-sxm-40", M::Lora, 2, 1304), std::nullopt, ""},
      {"lg-oom-falcon40b-qlora-mb1", litgpt("falcon-40b", "a100-sxm-40", M::Qlora, 1, 1304), std::nullopt,
       "length: the table's Alpaca longest sample, 1304 tokens"},
      {"lg-oom-llama2-13b-lora-2gpu", std::nullopt, std::nullopt, kLitgptFsdp},
      {"lg-oom-llama2-7b-full-4xa10g", std::nullopt, std::nullopt, kLitgptFsdp},
      {"lg-oom-llama3-8b-full-4xa10g", std::nullopt, std::nullopt, kLitgptFsdp},
      // config_hub/finetune/gemma-7b/lora.yaml: r 16 on every lora_* switch incl. the head, max_seq_length 512.
      {"lg-oom-gemma-7b-lora-1xa10g", [&] {
         auto q = litgpt("gemma-7b", "a10g", M::Lora, 1, 512, "query,key,value,projection,mlp,head");
         q.adapter.rank = 16;
         return q;
       }(), std::nullopt, ""},
      {"swift-qwen72b-lora-4096-oom", std::nullopt, std::nullopt,
       "excluded: Qwen-72B-Chat (QWenLMHeadModel) is not supported (docs/models.md), and device_map layer splitting "
       "is not modelled"},
  };
  const std::vector<std::pair<std::string, std::uint64_t>> unsloth = {
      {"12gb", 932}, {"16gb", 2551}, {"24gb", 5789}, {"40gb", 12264}, {"48gb", 15502}, {"80gb", 28454}};
  for (const auto& [size, ctx] : unsloth)
    b.push_back({"unsloth-hf-fa2-llama31-8b-qlora-" + size,
                 unsloth_hf("llama-3.1-8b-instruct", "custom:" + size.substr(0, size.size() - 2) + "GiB"), ctx,
                 kUnslothDevice});
  b.push_back({"unsloth-hf-fa2-llama33-70b-qlora-80gb", unsloth_hf("llama-3.3-70b", "a100-sxm-80"), 6916, kUnslothDevice});
  return b;
}

struct BoundaryResult {
  std::string id, observed, predicted;
  bool right_side = false, evaluated = false;
  std::string note;
};

std::vector<BoundaryResult> evaluate_boundaries() {
  std::vector<BoundaryResult> out;
  for (const auto& b : boundaries()) {
    BoundaryResult r{b.id, b.max_context ? "max context " + std::to_string(*b.max_context) : "OOM", "-", false, false, b.note};
    if (b.request) {
      r.evaluated = true;
      // The limits `vramplan train` reports (plan/train_limits.hpp): the longest sequence at the
      // record's batch; for an OOM, the largest micro-batch at the record's length.
      if (b.max_context) {
        const auto ctx = plan::train_max_seq_len(*b.request, DataRoot{source_dir()}).value;
        r.predicted = "max context " + std::to_string(ctx);
        r.right_side = ctx <= *b.max_context;
      } else {
        const auto plan = train::plan_training(*b.request, DataRoot{source_dir()});
        const auto batch = plan::train_max_micro_batch(*b.request, DataRoot{source_dir()}).value;
        r.predicted = (plan.fits ? "fits, " : "OOM, ") + f2(plan.peak_allocated.gib()) + " of " + f2(plan.capacity.gib()) +
                      " GiB; max micro-batch " + std::to_string(batch);
        r.right_side = batch < b.request->micro_batch;
      }
    }
    out.push_back(r);
  }
  return out;
}

void render_boundaries(std::ostringstream& md, const std::vector<BoundaryResult>& rows) {
  md << "\n## Capacity boundaries\n\n"
        "An OOM must be predicted not to fit; a measured max context must not be exceeded by the predicted one.\n\n"
        "| record | observed | predicted | right side | note |\n|---|---|---|---|---|\n";
  for (const auto& r : rows)
    md << "| " << r.id << " | " << r.observed << " | " << r.predicted << " | "
       << (!r.evaluated ? "excluded" : r.right_side ? "yes" : "no") << " | " << r.note << " |\n";
}

double percentile_abs(std::vector<double> v, double p) {
  for (auto& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v[static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1];
}

TEST(TrainAccuracy, LitgptAllocatedPeaks) {
  VRAMPLAN_SKIP_FIGURES_UNDER_ASAN();
  const auto rows = predict_all();
  ASSERT_EQ(rows.size(), 45u);
  std::vector<double> errs;
  std::ostringstream md, excluded;
  md << "# Accuracy: `vramplan train` against measured training peaks\n\n"
        "Generated by tests/accuracy/train_accuracy_test.cpp. Two sets: the LitGPT records (this first part) and "
        "the torchtune / torchtitan / ms-swift / transformers-docs records (the last part, compared with the quantity "
        "each measured: allocated or reserved).\n\n"
        "LitGPT: tests/accuracy/data/train_measured_litgpt.jsonl "
        "(LitGPT `config_hub/finetune` tables: `torch.cuda.max_memory_allocated()`, converted to GiB). Predicted: "
        "vramplan's peak allocated with LitGPT's own settings (see the test's header). Error = (predicted - "
        "measured) / measured.\n\n"
        "| record | trust | setup | measured GiB | predicted GiB | error |\n|---|---|---|---|---|---|\n";
  std::vector<double> lora_errs;
  for (const auto& r : rows) {
    if (!r.excluded.empty()) {
      excluded << "- " << r.id << ": " << r.excluded << "\n";
      continue;
    }
    const auto why = kExcluded.find(r.id);
    md << "| " << r.id << " | " << r.trust << " | " << r.setup << " | " << f2(r.measured) << " | " << f2(r.predicted)
       << " | " << signed_pct(r.err()) << (why != kExcluded.end() ? " (excluded)" : "") << " |\n";
    if (why != kExcluded.end()) {
      excluded << "- " << r.id << " (in the table, not in the summary): " << why->second << "\n";
      continue;
    }
    errs.push_back(r.err());
    if (r.setup.find(" lora ") != std::string::npos) lora_errs.push_back(r.err());
  }
  const double median = median_abs(errs), p90 = percentile_abs(errs, 0.9);
  md << "\nSummary over " << errs.size() << " records: median |error| " << f2(median) << " %, 90th percentile "
     << f2(p90) << " %; bf16-base LoRA alone (" << lora_errs.size() << " records): median |error| "
     << f2(median_abs(lora_errs)) << " %.\n\n" << kTrainFindings << "\nExcluded:\n\n" << excluded.str();
  render_boundaries(md, evaluate_boundaries());
  md << train_frameworks::render_frameworks(train_frameworks::predict_framework_records(), kFrameworkFindings);
  write_accuracy_doc_if_asked("accuracy-train.md", md.str());
  // Regression guards: the achieved figures (this commit: 39 records, 4.15 % median, 90th percentile 14.34 %,
  // 3.17 % for the bf16-base LoRA records, none over 32.3 % (gemma-2b-full-4gpu); before the TinyLlama / Gemma-1 /
  // StableLM-Alpha / phi-1.5 entries: 24 records, 3.84 %, 6.75 %, 2.93 %, none over 9 %; before the previous graph,
  // Phi-2's single LayerNorm and LitGPT's fused q / k / v dropout: 3.33 %, 15.51 %, 1.02 %, phi-2 LoRA +26.3 %);
  // a change that makes them worse must say why.
  EXPECT_EQ(errs.size(), 39u);
  EXPECT_LE(median, 4.16) << md.str();
  EXPECT_LE(p90, 14.35) << md.str();
  EXPECT_LE(median_abs(lora_errs), 3.18) << md.str();
  for (double e : errs) EXPECT_LE(std::abs(e), 32.3) << md.str();
}

TEST(TrainAccuracy, CapacityBoundariesOnTheRightSide) {
  // Regression guard: the records on the right side today stay there; the wrong-side ones carry
  // their mechanism in the note (and in docs/accuracy-train.md).
  std::size_t right = 0;
  for (const auto& r : evaluate_boundaries()) {
    if (r.evaluated && r.right_side) ++right;
    if (r.evaluated && !r.right_side) {
      EXPECT_TRUE(r.note.rfind("wrong side: ", 0) == 0) << r.id;
    }
    if (r.id.rfind("lg-oom-", 0) == 0 && r.evaluated) {
      EXPECT_TRUE(r.right_side) << r.id << ": " << r.predicted;
    }
  }
  // This commit: 11 of 11 (10 before gemma-7b joined the catalogue, 8 before autocast's lm_head copy, 3 before
  // the device view).
  EXPECT_EQ(right, 11u);
}

TEST(TrainAccuracy, FrameworkRecordsMatchTheirMeasuredQuantity) {
  const auto rows = train_frameworks::predict_framework_records();
  ASSERT_EQ(rows.size(), 98u);  // every non-LitGPT record of train_measured.jsonl, predicted or excluded
  std::size_t predicted = 0;
  for (const auto& r : rows) {
    EXPECT_NE(r.excluded, "no setup") << r.id << ": neither predicted nor excluded with a reason";
    if (r.excluded.empty()) ++predicted;
  }
  const auto s = train_frameworks::summarize_frameworks(rows);
  std::ostringstream all;
  for (const auto& r : rows)
    if (r.excluded.empty()) all << r.id << " " << f2(r.measured) << " " << f2(r.predicted) << " " << signed_pct(r.err()) << "\n";
  EXPECT_EQ(predicted, 10u) << all.str();
  if (VRAMPLAN_UNDER_ASAN) return;  // a 20-step replay there (kReplaySteps): figures not asserted
  // Regression guards at the achieved figures (this commit: median 2.20 %, 90th percentile 8.00 %, one
  // record over 25 %: tt-tut-qlora-7b, whose reserved peak was set at model init — see the findings);
  // the targets (5 % / 12 %) are met.
  EXPECT_LE(s.median, 2.25) << all.str();
  EXPECT_LE(s.p90, 8.05) << all.str();
  EXPECT_LE(s.over25, 1u) << all.str();
}

}  // namespace
}  // namespace vramplan::test
