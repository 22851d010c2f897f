// Loads a GGUF on the CPU and creates a context: llama.cpp logs every buffer it allocates.
#include "llama.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
int main(int argc, char** argv) {
  if (argc < 6) { std::fprintf(stderr, "usage: lcprobe model n_ctx n_batch n_ubatch fa(-1,0,1) [n_seq [type_k type_v [swa_full [kv_unified]]]]\n"); return 2; }
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* m = llama_model_load_from_file(argv[1], mp);
  if (!m) { std::fprintf(stderr, "LOAD FAILED\n"); return 3; }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = std::atoi(argv[2]);
  cp.n_batch = std::atoi(argv[3]);
  cp.n_ubatch = std::atoi(argv[4]);
  const int fa = std::atoi(argv[5]);
  cp.swa_full = false;  // common_params default (llama-completion, llama-server)
  cp.flash_attn_type = fa < 0 ? LLAMA_FLASH_ATTN_TYPE_AUTO : fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  if (argc > 6) cp.n_seq_max = std::atoi(argv[6]);
  // [type_k type_v]: f16, bf16, q8_0, q4_0 (ggml_type values)
  const auto ggml_type_of = [](const char* n) {
    return std::strcmp(n, "q8_0") == 0 ? GGML_TYPE_Q8_0 : std::strcmp(n, "q4_0") == 0 ? GGML_TYPE_Q4_0
         : std::strcmp(n, "bf16") == 0 ? GGML_TYPE_BF16 : GGML_TYPE_F16;
  };
  if (argc > 8) { cp.type_k = ggml_type_of(argv[7]); cp.type_v = ggml_type_of(argv[8]); }
  if (argc > 9) cp.swa_full = std::atoi(argv[9]) != 0;    // --swa-full
  if (argc > 10) cp.kv_unified = std::atoi(argv[10]) != 0;  // -kvu
  cp.n_threads = 2;
  llama_context* c = llama_init_from_model(m, cp);
  if (!c) { std::fprintf(stderr, "CTX FAILED\n"); return 4; }
  llama_free(c);
  llama_model_free(m);
  return 0;
}
