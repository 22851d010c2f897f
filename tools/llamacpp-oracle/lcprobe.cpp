// Loads a GGUF on the CPU and creates a context: llama.cpp logs every buffer it allocates.
#include "llama.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
int main(int argc, char** argv) {
  if (argc < 6) { std::fprintf(stderr, "usage: lcprobe model n_ctx n_batch n_ubatch fa(-1,0,1) [n_seq]\n"); return 2; }
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
  cp.flash_attn_type = fa < 0 ? LLAMA_FLASH_ATTN_TYPE_AUTO : fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  if (argc > 6) cp.n_seq_max = std::atoi(argv[6]);
  cp.n_threads = 2;
  cp.swa_full = false;  // common_params default (llama-completion, llama-server)
  llama_context* c = llama_init_from_model(m, cp);
  if (!c) { std::fprintf(stderr, "CTX FAILED\n"); return 4; }
  llama_free(c);
  llama_model_free(m);
  return 0;
}
