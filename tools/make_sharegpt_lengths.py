#!/usr/bin/env python3
"""Builds data/workloads/sharegpt.json: histograms of ShareGPT prompt and output token counts.

Input: a requests.jsonl of per-request token counts (input_toks, output_toks), e.g. the
LLMServingSim real-vLLM ShareGPT replay RTX4090_Llama-3.1-8B/requests.jsonl (see
data/workloads/README.md for its provenance). Run by hand when the source changes; the build
and the tests read only the JSON this writes.

Bins: a zero-weight first bin from 1 up to just below the generator's minimum (the replay kept
only turns with >= 256 prompt and >= 512 output tokens), then fixed-width bins (64 prompt
tokens, 32 output tokens) up to the largest sample. The weights are sample counts. A sample drawn
from the histogram is uniform inside its bin, so the histogram's mean differs from the samples'
mean by the within-bin offsets; both are written, and the tests check the first against the second.

usage: make_sharegpt_lengths.py REQUESTS_JSONL > data/workloads/sharegpt.json
"""
import json
import sys


def histogram(values, floor, width):
    top = max(values)
    edges = [floor - 1]
    while edges[-1] < top:
        edges.append(edges[-1] + width)
    weights = [0] * len(edges)
    for v in values:
        i = 0 if v <= edges[0] else (v - edges[0] - 1) // width + 1
        weights[i] += 1
    lows = [1] + [e + 1 for e in edges[:-1]]
    hist_mean = sum(w * (lo + hi) / 2 for w, lo, hi in zip(weights, lows, edges)) / len(values)
    return {
        "count": len(values),
        "mean": round(sum(values) / len(values), 3),
        "histogram_mean": round(hist_mean, 3),
        "min": min(values),
        "max": max(values),
        "bin_width": width,
        "upper_edges": edges,
        "weights": weights,
    }


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    doc = {
        "name": "sharegpt",
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
        "input": histogram([r["input_toks"] for r in rows], 256, 64),
        "output": histogram([r["output_toks"] for r in rows], 512, 32),
    }
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
