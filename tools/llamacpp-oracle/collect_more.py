# --swa-full, -kvu with -np 4, and micro-batches of 1024 / 2048 on the iSWA and plain models.
import json, re, subprocess, sys
names = sys.argv[1:]
sys.argv = [sys.argv[0]]
exec(open('collect.py').read().split('settings = [')[0])  # `models`
models['olmo3-tiny'] = (None, None, 'olmo2')
fa_name = {-1: 'auto', 0: 'off', 1: 'on'}
for name in names or ('gemma3-4b-L8', 'gemma2-2b-L4', 'llama32-1b', 'olmo3-tiny'):
    cat, layers, arch = models[name]
    c0 = 1024 if cat is None else 4096
    for c, ub, fa, np_, swa_full, kvu in ((c0, 512, -1, 1, 1, 0), (c0, 512, 0, 1, 1, 0), (2 * c0, 512, -1, 4, 0, 1),
                                          (2 * c0, 512, 0, 4, 0, 1), (c0, 1024, -1, 1, 0, 0), (2 * c0, 2048, 0, 1, 0, 0)):
        out = subprocess.run(['./lcprobe', f'm/{name}/{name}.gguf', str(c), '2048', str(ub), str(fa), str(np_), 'f16', 'f16',
                              str(swa_full), str(kvu)], capture_output=True, text=True).stderr
        g = lambda pat: [float(x) for x in re.findall(pat, out)]
        rec = {'id': f'lco-{name}-c{c}-ub{ub}-fa{fa_name[fa]}-np{np_}' + ('-swafull' if swa_full else '') + ('-kvu' if kvu else ''),
               'layers': layers, 'gguf_arch': arch, 'file_type': 'F16', 'n_ctx': c, 'n_batch': 2048, 'n_ubatch': ub,
               'flash_attn': fa_name[fa], 'n_seq_max': np_, 'swa_full': bool(swa_full), 'kv_unified': bool(kvu),
               'model_buffer_mib': g(r'CPU_Mapped model buffer size = +([0-9.]+) MiB')[0],
               'kv_buffer_mib': sum(g(r'CPU KV buffer size = +([0-9.]+) MiB')),
               'output_buffer_mib': g(r'CPU +output buffer size = +([0-9.]+) MiB')[0],
               'compute_buffer_mib': g(r'CPU compute buffer size = +([0-9.]+) MiB')[0],
               'log_excerpt': [l.strip() for l in out.splitlines() if re.search(r'buffer size|llama_kv_cache: size|n_ubatch +=|kv_unified', l)]}
        if cat: rec['catalogue_model'] = cat
        else: rec['config'] = json.load(open(f'm/{name}/config.json'))
        print(json.dumps(rec), flush=True)
