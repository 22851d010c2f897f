"""Errors raise one vramplan.Error subclass per kind, with the CLI's exit code; options the command
does not have raise TypeError."""

import json
import os
import subprocess
import sys

import pytest

import vramplan
from vramplan import _core


def test_classes_mirror_the_exit_code_table():
    # planner/cli/exit_codes.cpp, as the library reports it.
    table = _core.error_exits()
    assert {k: c.exit_code for k, c in vramplan.errors.ERROR_CLASSES.items()} == table
    assert table == {"does-not-fit": 1, "usage": 2, "input-file": 3, "unknown-name": 4, "io": 5,
                     "unrecognised-log": 7, "internal": 70}
    for cls in vramplan.errors.ERROR_CLASSES.values():
        assert issubclass(cls, vramplan.Error)


def test_unknown_model_is_unknown_name(cli_json):
    with pytest.raises(vramplan.UnknownNameError) as e:
        vramplan.plan(model="no-such-model", gpu="h100-sxm-80")
    assert e.value.exit_code == 4
    assert "unknown model 'no-such-model'" in str(e.value)
    cli = cli_json("plan", "--model", "no-such-model", "--gpu", "h100-sxm-80", expected_exit=4)
    assert cli["error"]["message"] == e.value.message


def test_unknown_engine_is_unknown_name():
    with pytest.raises(vramplan.UnknownNameError) as e:
        vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", engine="no-such-engine")
    assert e.value.exit_code == 4


def test_bad_value_is_usage():
    with pytest.raises(vramplan.UsageError) as e:
        vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", batch="many")
    assert e.value.exit_code == 2


def test_missing_file_is_io(tmp_path):
    with pytest.raises(vramplan.IoError) as e:
        vramplan.inspect(model=str(tmp_path / "absent.json"))
    assert e.value.exit_code == 5


def test_malformed_file_is_input_file(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{ not json")
    with pytest.raises(vramplan.InputFileError) as e:
        vramplan.inspect(model=str(bad))
    assert e.value.exit_code == 3


def test_unrecognised_log(tmp_path):
    log = tmp_path / "engine.log"
    log.write_text("hello\nnothing an engine prints\n")
    with pytest.raises(vramplan.UnrecognisedLogError) as e:
        vramplan.reconcile(log=str(log))
    assert e.value.exit_code == 7


def test_unknown_keyword_is_type_error():
    with pytest.raises(TypeError, match="max_modl_len.*--max-modl-len"):
        vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", max_modl_len=8192)


def test_engine_flag_of_another_engine_is_type_error():
    # -ngl is llama.cpp's; vLLM's plan has no such option.
    with pytest.raises(TypeError, match="ngl"):
        vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", engine="vllm", ngl=99)


def test_flag_of_another_engine_names_this_engines_flag():
    # --max-num-seqs is vLLM's; SGLang's flag for the running-sequence cap is --max-running-requests
    # (planner/src/memory/flag_equivalents.cpp), as the CLI's error says.
    with pytest.raises(TypeError, match=r"max_num_seqs.*is a flag of vllm, not of sglang.*--max-running-requests"):
        vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", engine="sglang", max_num_seqs=64)


def test_output_options_are_type_errors():
    with pytest.raises(TypeError, match="format"):
        vramplan.plan(model="llama-3.1-8b", gpu="h100-sxm-80", format="table")


def test_switch_wants_a_bool():
    with pytest.raises(TypeError, match="limits"):
        vramplan.check(model="llama-3.1-8b", gpu="h100-sxm-80", limits="yes")


def test_data_comes_with_the_package():
    # The wheel's copy: <package>/data and <package>/models (pyproject.toml, python/CMakeLists.txt).
    package = os.path.dirname(vramplan.__file__)
    assert os.path.isfile(os.path.join(package, "data", "gpus.json"))
    assert os.path.isfile(os.path.join(package, "models", "llama-3.1-8b.json"))


def _in_fresh_interpreter(code, env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/", check=False)


def test_installed_data_is_found_from_anywhere():
    env = {k: v for k, v in os.environ.items() if k != "VRAMPLAN_DATA"}
    r = _in_fresh_interpreter("import json, vramplan; print(json.dumps(vramplan.gpus(gpu='h100-sxm-80')))", env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["schema"] == "vramplan.gpus/1"


def test_vramplan_data_overrides_as_for_the_executable(tmp_path):
    env = dict(os.environ, VRAMPLAN_DATA=str(tmp_path))
    code = ("import vramplan\n"
            "try:\n    vramplan.gpus()\n"
            "except vramplan.IoError as e:\n    print(e.exit_code, e)\n")
    r = _in_fresh_interpreter(code, env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"5 VRAMPLAN_DATA={tmp_path}: no data/ folder there")


def test_engine_that_would_not_start_is_does_not_fit():
    # simulate on a card that cannot hold the weights (70B bf16 ~ 131 GiB on a 24 GB RTX 4090):
    # the CLI exits 1 (README.md § Exit codes), the function raises DoesNotFitError.
    with pytest.raises(vramplan.DoesNotFitError) as e:
        vramplan.simulate(model="llama-3.1-70b", gpu="rtx-4090", max_model_len=8192, rate=1, requests=100)
    assert e.value.exit_code == 1
    assert "would not start" in str(e.value)
