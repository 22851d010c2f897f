# llama-quantize's file types: quantize each F16 file of collect.py's models (names on the command
# line, else all) to each TYPE and print one record of the model buffers llama.cpp loads from it
# (tests/accuracy/data/llamacpp_oracle_quantized.jsonl). The quantized copies are deleted after use.
import json, os, re, subprocess, sys
names = sys.argv[1:]
sys.argv = [sys.argv[0]]
exec(open('collect.py').read().split('settings = [')[0])  # `models`
TYPES = os.environ.get('TYPES', 'Q4_K_M Q8_0 Q4_0 Q6_K Q3_K_M Q5_K_S Q2_K').split()
QUANTIZE = os.environ.get('QUANTIZE', 'lcbuild/bin/llama-quantize')
for name, (cat, layers, arch) in models.items():
    if names and name not in names: continue
    for t in TYPES:
        src, dst = f'm/{name}/{name}.gguf', f'm/{name}/{name}-{t}.gguf'
        subprocess.run([QUANTIZE, src, dst, t, '2'], capture_output=True, check=True)
        out = subprocess.run(['./lcprobe', dst, '4096', '2048', '512', '-1'], capture_output=True, text=True).stderr
        os.remove(dst)
        bufs = {m.group(1): float(m.group(2))
                for m in re.finditer(r'(CPU_Mapped|CPU_REPACK) model buffer size = +([0-9.]+) MiB', out)}
        rec = {'id': f'lcq-{name}-{t}', 'layers': layers, 'file_type': t,
               'quantized_by': 'llama-quantize (same tree) from the F16 file of llamacpp_oracle_loads.jsonl, nthreads 2',
               'n_ctx': 4096, 'n_ubatch': 512, 'flash_attn': 'auto', 'model_buffers_mib': bufs}
        if cat: rec['catalogue_model'] = cat
        else: rec['config'] = json.load(open(f'm/{name}/config.json'))
        print(json.dumps(rec), flush=True)
