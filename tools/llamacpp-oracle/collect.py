# Runs lcprobe over models x settings; one JSON record per load with llama.cpp's printed buffers.
import json, re, subprocess, sys
models = {  # name -> (catalogue id, layers kept, gguf arch)
    'llama32-1b': ('llama-3.2-1b', None, 'llama'), 'qwen25-05b': ('qwen2.5-0.5b', None, 'qwen2'),
    'gemma2-2b-L4': ('gemma-2-2b', 4, 'gemma2'), 'phi3-mini-L4': ('phi-3-mini', 4, 'phi3'),
    'qwen3moe-L2': ('qwen3-30b-a3b', 2, 'qwen3moe'), 'mistral-v01-L4': ('mistral-7b-v0.1', 4, 'llama'),
    'gemma3-4b-L8': ('gemma-3-4b', 8, 'gemma3'),
    'mixtral-L1': ('mixtral-8x7b', 1, 'llama'), 'qwen2moe-L1': ('qwen2-57b-a14b', 1, 'qwen2moe'),
    'phi2-L4': ('phi-2', 4, 'phi2'), 'gemma-2b-L4': ('gemma-2b', 4, 'gemma'),
    'qwen25vl-3b-L4': ('qwen2.5-vl-3b', 4, 'qwen2vl'), 'gptoss20b-L2': ('gpt-oss-20b', 2, 'gpt-oss'),
    # DeepSeek-V2 / V3 / Kimi-K2 routing on small configs of their own (m/NAME/config.json)
    'dsv3-heavy': (None, None, 'deepseek2'), 'dsv2-tiny': (None, None, 'deepseek2'), 'kimi-tiny': (None, None, 'deepseek2'),
    'glm45air-L2': ('glm-4.5-air', 2, 'glm4moe'), 'glm-tiny-qkn': (None, None, 'glm4moe'),  # + q / k norms
    # Llama-4 on small configs: Scout-like (16 experts, every layer MoE), Maverick-like (128, every other)
    'llama4s-tiny': (None, None, 'llama4'), 'llama4m-tiny': (None, None, 'llama4'),
    'mistral3-L2': ('mistral-small-3.1-24b', 2, 'mistral3'),
    'qwen3vl8b-L4': ('qwen3-vl-8b', 4, 'qwen3vl'), 'qwen3vl4b-L4': ('qwen3-vl-4b', 4, 'qwen3vl'),  # 3 deepstack layers
    'qwen3vl30-L2': ('qwen3-vl-30b-a3b', 2, 'qwen3vlmoe'),  # Qwen3-VL MoE: 128 experts, 3 deepstack layers
    'minimax-tiny': (None, None, 'minimax-m2'), 'ernie45-L2': ('ernie-4.5-21b-a3b', 2, 'ernie4_5-moe'),
    # GPT-NeoX (StableLM-alpha-3B; the same with use_parallel_residual false) and Falcon-7B / 40B (their
    # RWForCausalLM configs with n_layer cut to 2, as configs of their own)
    'neox-L2': ('stablelm-base-alpha-3b', 2, 'gptneox'), 'neox-seq-L2': (None, None, 'gptneox'),
    'falcon7b-L2': (None, None, 'falcon'), 'falcon40b-L2': (None, None, 'falcon'),
    'ministral3-tiny': (None, None, 'mistral3'),  # Ministral-3's attention temperature tuning
    'nemoh8-L9': ('nemotron-h-8b', 9, 'nemotron_h'),  # Mamba-2, MLP and attention layers (M-M-M-M*-)
    'nano-L6': ('nemotron-3-nano-30b-a3b', 6, 'nemotron_h_moe'),  # Mamba-2, MoE and attention layers (MEMEM*)
    'graniteh-L6': ('granite-4.0-h-tiny', 6, 'granitehybrid'),  # 5 Mamba-2 layers and one attention, MoE FFNs
    # Falcon-H1: attention and Mamba-2 side by side in every layer (0.5B without, 7B with the mixer's norm)
    'falconh1-L4': ('falcon-h1-0.5b', 4, 'falcon-h1'), 'falconh1-7b-L2': ('falcon-h1-7b', 2, 'falcon-h1'),
    # Jamba on a small config of its own: Mamba-1 layers, attention at layer 4, experts every other layer
    'jamba-tiny': (None, None, 'jamba'),
    # DeepSeek sparse attention (the lightning indexer) on small configs of their own: DeepSeek-V3.2,
    # GLM-5 (every layer's own indexer) and GLM-5.2 (indexer_types: shared layers reuse the top-k)
    'ds32-tiny': (None, None, 'deepseek32'), 'glmdsa-tiny': (None, None, 'glm-dsa'), 'glmdsa52-tiny': (None, None, 'glm-dsa'),
    # Qwen3.5 on small configs of their own: gated-DeltaNet layers, every 4th gated attention (lllAlllA),
    # dense and with routed + shared experts
    'qwen35-tiny': (None, None, 'qwen35'), 'qwen35moe-tiny': (None, None, 'qwen35moe'),
    'qwen3next-tiny': (None, None, 'qwen3next'),  # Qwen3-Next: joint ssm_ba, q / k repeated to the value heads
    # Nemotron-3-Super's latent MoE on a small config of its own: experts on a 256-wide projection of 1024
    'super-tiny': (None, None, 'nemotron_h_moe'),
    # Gemma 4 on small configs of their own: a 26B-A4B-like MoE (5 sliding + 1 full layer, experts beside the
    # MLP) and a 31B-like dense one (SSSSSFSF); head_dim != global_head_dim, K=V full layers with fewer KV heads
    'gemma4moe-tiny': (None, None, 'gemma4'), 'gemma4-tiny': (None, None, 'gemma4'),
}
import sys
if len(sys.argv) > 1: models = {k: v for k, v in models.items() if k in sys.argv[1:]}
fa_name = {-1: 'auto', 0: 'off', 1: 'on'}


def record(name, cat, layers, arch, c, ub, fa, np_):
    """One load of m/NAME/NAME.gguf at -c C -ub UB -fa FA -np NP: its printed buffers as a record."""
    out = subprocess.run(['./lcprobe', f'm/{name}/{name}.gguf', str(c), '2048', str(ub), str(fa), str(np_)],
                         capture_output=True, text=True).stderr
    def grab(pat):
        return [float(x) for x in re.findall(pat, out)]
    rec = {'id': f'lco-{name}-c{c}-ub{ub}-fa{fa_name[fa]}-np{np_}', 'layers': layers,
           'gguf_arch': arch, 'file_type': 'F16', 'n_ctx': c, 'n_batch': 2048, 'n_ubatch': ub,
           'flash_attn': fa_name[fa], 'n_seq_max': np_, 'swa_full': False,
           'model_buffer_mib': grab(r'CPU_Mapped model buffer size = +([0-9.]+) MiB')[0],
           'kv_buffer_mib': sum(grab(r'CPU KV buffer size = +([0-9.]+) MiB')),
           **({'rs_buffer_mib': sum(grab(r'CPU RS buffer size = +([0-9.]+) MiB'))} if 'RS buffer' in out else {}),
           'output_buffer_mib': grab(r'CPU +output buffer size = +([0-9.]+) MiB')[0],
           'compute_buffer_mib': grab(r'CPU compute buffer size = +([0-9.]+) MiB')[0],
           'log_excerpt': [l.strip() for l in out.splitlines()
                           if re.search(r'buffer size|llama_kv_cache: size|llama_memory_recurrent: size|flash_attn +=|Flash Attention|n_ctx +=', l)]}
    if cat: rec['catalogue_model'] = cat
    else: rec['config'] = json.load(open(f'm/{name}/config.json'))
    return rec


settings = [(4096, 512, -1, 1), (4096, 512, 0, 1), (8192, 512, -1, 1), (2048, 512, 0, 1), (4096, 256, -1, 1),
            (8192, 512, 0, 4), (32768, 512, 1, 1)]
for name, (cat, layers, arch) in models.items():
    for c, ub, fa, np_ in settings:
        print(json.dumps(record(name, cat, layers, arch, c, ub, fa, np_)), flush=True)
