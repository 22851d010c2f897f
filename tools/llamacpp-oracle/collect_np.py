# -np values that do not divide -ub: graph_reserve rounds the micro-batch up to a multiple of the
# sequences (513 tokens for -np 3 -ub 512) and keeps n_ubatch output rows.
import json, sys
names = sys.argv[1:]
sys.argv = [sys.argv[0]]
exec(open('collect.py').read().split('settings = [')[0])  # `models` and `record`
for name in names or ('llama32-1b', 'nemoh8-L9'):
    cat, layers, arch = models[name]
    for c, ub, fa, np_ in ((4096, 512, -1, 3), (4096, 512, 0, 5)):
        print(json.dumps(record(name, cat, layers, arch, c, ub, fa, np_)), flush=True)
