# Quantized KV caches: the collect.py models at -c 4096 (1024 for the OLMo-2 configs) with q8_0 / q4_0 caches.
import json, re, subprocess, sys
names = sys.argv[1:]
sys.argv = [sys.argv[0]]
exec(open('collect.py').read().split('settings = [')[0])  # `models`
models['olmo2-tiny'] = (None, None, 'olmo2'); models['olmo3-tiny'] = (None, None, 'olmo2')
fa_name = {-1: 'auto', 0: 'off', 1: 'on'}
for name, (cat, layers, arch) in models.items():
    if names and name not in names: continue
    c = 1024 if cat is None else 4096
    for tk, tv, fa in (('q8_0', 'q8_0', 1), ('q4_0', 'q4_0', 1), ('q8_0', 'f16', 0)):
        out = subprocess.run(['./lcprobe', f'm/{name}/{name}.gguf', str(c), '2048', '512', str(fa), '1', tk, tv],
                             capture_output=True, text=True).stderr
        g = lambda pat: [float(x) for x in re.findall(pat, out)]
        rec = {'id': f'lco-{name}-c{c}-ub512-fa{fa_name[fa]}-np1-{tk}-{tv}', 'layers': layers, 'gguf_arch': arch,
               'file_type': 'F16', 'n_ctx': c, 'n_batch': 2048, 'n_ubatch': 512, 'flash_attn': fa_name[fa],
               'n_seq_max': 1, 'swa_full': False, 'type_k': tk, 'type_v': tv}
        if cat: rec['catalogue_model'] = cat
        else: rec['config'] = json.load(open(f'm/{name}/config.json'))
        if 'CTX FAILED' in out:
            rec['refusal'] = re.search(r'llama_init_from_model: (.*)', out).group(1).strip()
        else:
            rec.update({'model_buffer_mib': g(r'CPU_Mapped model buffer size = +([0-9.]+) MiB')[0],
                        'kv_buffer_mib': sum(g(r'CPU KV buffer size = +([0-9.]+) MiB')),
                        **({'rs_buffer_mib': sum(g(r'CPU RS buffer size = +([0-9.]+) MiB'))} if 'RS buffer' in out else {}),
                        'output_buffer_mib': g(r'CPU +output buffer size = +([0-9.]+) MiB')[0],
                        'compute_buffer_mib': g(r'CPU compute buffer size = +([0-9.]+) MiB')[0]})
        rec['log_excerpt'] = [l.strip() for l in out.splitlines()
                              if re.search(r'buffer size|llama_kv_cache: size|llama_memory_recurrent: size|attn_rot|flash_attn +=|does not divide', l)]
        print(json.dumps(rec), flush=True)
