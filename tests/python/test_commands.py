"""Each function returns the dict the CLI prints with --json for the same options."""

import vramplan


def test_plan_equals_cli_json(cli_json):
    got = vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", engine="vllm", max_model_len=8192)
    assert got == cli_json("plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "vllm",
                           "--max-model-len", "8192")


def test_plan_schema_and_weights():
    got = vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", engine="vllm", max_model_len=8192)
    assert got["schema"] == "vramplan.plan/1"
    assert got["fits"] is True


def test_check_fits_equals_cli_json(cli_json):
    got = vramplan.check(model="llama-3.1-8b", gpu="h100-sxm-80", engine="vllm", max_model_len=8192)
    # 8B bf16 is ~15 GiB of weights on a 79.2 GiB card: FITS (README's check example line).
    assert got["verdict"] == "FITS"
    assert got == cli_json("check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "vllm",
                           "--max-model-len", "8192")


def test_check_does_not_fit_is_a_result_not_an_error(cli_json):
    # 70B bf16 needs ~131 GiB of weights alone (70.6e9 params x 2 bytes); an RTX 4090 has 24 GB. The
    # CLI exits 1 with the verdict; the function returns the same dict.
    got = vramplan.check(model="llama-3.1-70b", gpu="rtx-4090", max_model_len=8192)
    assert got["verdict"] == "DOES NOT FIT"
    assert got == cli_json("check", "--model", "llama-3.1-70b", "--gpu", "rtx-4090", "--max-model-len", "8192",
                           expected_exit=1)


def test_check_switches(cli_json):
    got = vramplan.check(model="llama-3.1-8b", gpu="l40s", max_model_len=8192, limits=True, batch_range=False)
    assert got == cli_json("check", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--limits")


def test_sweep_list_is_comma_joined(cli_json):
    got = vramplan.sweep(model="llama-3.1-8b", gpu=["l40s", "h100-sxm-80"], context=8192, batch=[1, 16])
    assert got["schema"] == "vramplan.sweep/1"
    assert got == cli_json("sweep", "--model", "llama-3.1-8b", "--gpu", "l40s,h100-sxm-80", "--context", "8192",
                           "--batch", "1,16")


def test_simulate_equals_cli_json(cli_json):
    got = vramplan.simulate(model="llama-3.1-8b", gpu="l40s", engine="vllm", max_model_len=8192, rate=5,
                            requests=200, seed=7)
    assert got["schema"] == "vramplan.simulate/1"
    assert got == cli_json("simulate", "--model", "llama-3.1-8b", "--gpu", "l40s", "--engine", "vllm",
                           "--max-model-len", "8192", "--rate", "5", "--requests", "200", "--seed", "7")


def test_inspect_equals_cli_json(cli_json):
    got = vramplan.inspect(model="llama-3.1-8b")
    assert got == cli_json("inspect", "--model", "llama-3.1-8b")


def test_inspect_weight_bytes_by_hand():
    # Llama-3.1-8B (models/llama-3.1-8b.json): embed + untied lm_head 2 x 128256 x 4096 = 1,050,673,152;
    # per layer q,o 2 x 4096^2 + k,v 2 x 4096 x 1024 + mlp 3 x 4096 x 14336 + 2 norms x 4096
    # = 218,112,000, x 32 layers = 6,979,584,000; final norm 4096: 8,030,261,248 params (Meta's 8.03B),
    # x 2 bytes (bf16) = 16,060,522,496.
    got = vramplan.inspect(model="llama-3.1-8b")
    assert got["weight_bytes"] == 16_060_522_496


def test_engine_flags_follow_the_engine(cli_json):
    # llama.cpp's own flags (-c, -ngl) exist once engine="llamacpp" is given.
    got = vramplan.plan(model="llama-3.1-8b", gpu="rtx-4090", engine="llamacpp", weights="gguf:Q4_K_M", c=8192, ngl=99)
    assert got == cli_json("plan", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llamacpp",
                           "--weights", "gguf:Q4_K_M", "-c", "8192", "-ngl", "99")


def test_repeatable_option_is_repeated(cli_json):
    got = vramplan.models(feature=["moe", "mla"])
    assert got == cli_json("models", "--feature", "moe", "--feature", "mla")
    assert "deepseek-v3" in [m["id"] for m in got["models"]]


def test_run_takes_any_command(cli_json):
    assert vramplan.run("gpus", min_memory="80GB") == cli_json("gpus", "--min-memory", "80GB")
    assert vramplan.version()["schema"] == cli_json("version")["schema"]


def test_library_prints_nothing(capfd):
    vramplan.check(model="llama-3.1-8b", gpu="h100-sxm-80", max_model_len=8192)
    try:
        vramplan.plan(model="no-such-model", gpu="h100-sxm-80")
    except vramplan.UnknownNameError:
        pass
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_float_option(cli_json):
    got = vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", gpu_memory_utilization=0.85)
    assert got == cli_json("plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--gpu-memory-utilization", "0.85")
