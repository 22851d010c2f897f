# -np values that do not divide -ub: graph_reserve rounds the micro-batch up to a multiple of the
# sequences (513 tokens for -np 3 -ub 512) and keeps n_ubatch output rows.
import json, re, subprocess, sys
names = sys.argv[1:]
sys.argv = [sys.argv[0]]
exec(open('collect.py').read().split('settings = [')[0])  # `models`
fa_name = {-1: 'auto', 0: 'off', 1: 'on'}
for name in names or ('llama32-1b', 'nemoh8-L9'):
    cat, layers, arch = models[name]
    for c, ub, fa, np_ in ((4096, 512, -1, 3), (4096, 512, 0, 5)):
        out = subprocess.run(['./lcprobe', f'm/{name}/{name}.gguf', str(c), '2048', str(ub), str(fa), str(np_)],
                             capture_output=True, text=True).stderr
        g = lambda pat: [float(x) for x in re.findall(pat, out)]
        rec = {'id': f'lco-{name}-c{c}-ub{ub}-fa{fa_name[fa]}-np{np_}', 'layers': layers, 'gguf_arch': arch,
               'file_type': 'F16', 'n_ctx': c, 'n_batch': 2048, 'n_ubatch': ub, 'flash_attn': fa_name[fa],
               'n_seq_max': np_, 'swa_full': False,
               'model_buffer_mib': g(r'CPU_Mapped model buffer size = +([0-9.]+) MiB')[0],
               'kv_buffer_mib': sum(g(r'CPU KV buffer size = +([0-9.]+) MiB')),
               **({'rs_buffer_mib': sum(g(r'CPU RS buffer size = +([0-9.]+) MiB'))} if 'RS buffer' in out else {}),
               'output_buffer_mib': g(r'CPU +output buffer size = +([0-9.]+) MiB')[0],
               'compute_buffer_mib': g(r'CPU compute buffer size = +([0-9.]+) MiB')[0],
               'log_excerpt': [l.strip() for l in out.splitlines()
                               if re.search(r'buffer size|llama_kv_cache: size|llama_memory_recurrent: size|n_ctx +=', l)]}
        if cat: rec['catalogue_model'] = cat
        else: rec['config'] = json.load(open(f'm/{name}/config.json'))
        print(json.dumps(rec), flush=True)
