"""`edge-agent model import`: a Hugging Face causal-LM directory becomes a verified model directory with our
manifest; pickled, incomplete, truncated and tampered inputs are refused with the documented messages."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.cli import main
from edge_agent.llm.importer import (
    ModelImportError,
    PickleRefused,
    default_name,
    import_model,
    read_safetensors_header,
)
from edge_agent.llm.manifest import manifest_sha256, read_manifest, verify
from edge_agent.llm.types import ModelVerificationError
from tests.fixtures.tiny_model import (
    TINY_HIDDEN,
    TINY_LAYERS,
    TINY_VOCAB,
    write_tiny_source,
)


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random Llama in the Hugging Face layout, built once for the module (read-only to tests)."""
    return write_tiny_source(tmp_path_factory.mktemp("tiny-src") / "tiny-llama")


@pytest.fixture()
def source(tiny_source: Path, tmp_path: Path) -> Path:
    """A private copy of the tiny source that a test may break."""
    return Path(shutil.copytree(tiny_source, tmp_path / "tiny-llama"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class TestImportModel:
    def test_imported_directory_verifies(self, tiny_source: Path, tmp_path: Path) -> None:
        """The imported directory passes the engine's manifest check and is of kind model."""
        result = import_model(tiny_source, tmp_path / "model", show_progress=False)
        assert verify(tmp_path / "model") == result.manifest
        assert result.manifest.kind == "model"

    def test_manifest_records_architecture_shape_and_license(self, tiny_source: Path, tmp_path: Path) -> None:
        """The manifest's source names the architecture, the sizes and the licence file and id."""
        manifest = import_model(tiny_source, tmp_path / "model", show_progress=False).manifest
        assert manifest.source == {
            "origin": "imported",
            "architecture": "LlamaForCausalLM",
            "model_type": "llama",
            "hidden_size": TINY_HIDDEN,
            "num_hidden_layers": TINY_LAYERS,
            "vocab_size": TINY_VOCAB,
            "license": {"file": "LICENSE", "id": "apache-2.0"},
        }

    def test_every_file_is_copied_byte_for_byte(self, tiny_source: Path, tmp_path: Path) -> None:
        """Each source file is in the manifest with the sha256 of the source's bytes."""
        manifest = import_model(tiny_source, tmp_path / "model", show_progress=False).manifest
        expected = {p.name: sha256(p) for p in tiny_source.iterdir()}
        assert {rel: entry.sha256 for rel, entry in manifest.files.items()} == expected

    def test_name_option_is_the_manifest_name(self, tiny_source: Path, tmp_path: Path) -> None:
        """--name overrides the name taken from the source directory."""
        manifest = import_model(tiny_source, tmp_path / "model", name="plant-8b", show_progress=False).manifest
        assert manifest.name == "plant-8b"

    def test_cache_snapshot_of_links_is_followed_and_named(self, tiny_source: Path, tmp_path: Path) -> None:
        """A Hugging Face cache snapshot (symlinks into blobs) imports its files under the repository's name."""
        snapshot = tmp_path / "models--acme--Tiny-Llama-Instruct" / "snapshots" / "0123abcd"
        blobs = tmp_path / "models--acme--Tiny-Llama-Instruct" / "blobs"
        snapshot.mkdir(parents=True)
        blobs.mkdir()
        for path in tiny_source.iterdir():
            blob = blobs / sha256(path)
            shutil.copyfile(path, blob)
            (snapshot / path.name).symlink_to(blob)
        manifest = import_model(snapshot, tmp_path / "model", show_progress=False).manifest
        assert manifest.name == "Tiny-Llama-Instruct"
        assert not any(p.is_symlink() for p in (tmp_path / "model").iterdir())
        assert manifest.files["model.safetensors"].sha256 == sha256(tiny_source / "model.safetensors")

    def test_hidden_directories_are_left_out(self, source: Path, tmp_path: Path) -> None:
        """.git and .cache are not part of the model and are not copied."""
        (source / ".git").mkdir()
        (source / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (source / ".cache").mkdir()
        (source / ".cache" / "lock").write_text("")
        manifest = import_model(source, tmp_path / "model", show_progress=False).manifest
        assert not any(rel.startswith(".") for rel in manifest.files)
        assert not (tmp_path / "model" / ".git").exists()

    def test_sharded_weights_with_an_index_are_imported(self, source: Path, tmp_path: Path) -> None:
        """An index naming its shards imports; every shard is in the manifest."""
        weights = source / "model.safetensors"
        shard = source / "model-00001-of-00001.safetensors"
        weights.rename(shard)
        names = list(read_safetensors_header(shard))
        index = {"metadata": {}, "weight_map": {name: shard.name for name in names}}
        (source / "model.safetensors.index.json").write_text(json.dumps(index))
        manifest = import_model(source, tmp_path / "model", show_progress=False).manifest
        assert {"model-00001-of-00001.safetensors", "model.safetensors.index.json"} <= manifest.files.keys()


class TestRefused:
    @pytest.mark.parametrize("name", ["pytorch_model.bin", "consolidated.00.pt", "original/consolidated.00.pth"])
    def test_pickled_weights_are_refused_naming_the_file(self, source: Path, tmp_path: Path, name: str) -> None:
        """Any pickle-based checkpoint refuses the import, naming the file and why; nothing is written."""
        (source / name).parent.mkdir(exist_ok=True)
        (source / name).write_bytes(b"\x80\x04\x95pickle")
        with pytest.raises(PickleRefused, match=rf"pickled weights are refused \({name}\): loading a pickle can run"):
            import_model(source, tmp_path / "model", show_progress=False)
        assert not (tmp_path / "model").exists()

    def test_no_chat_template_is_named(self, source: Path, tmp_path: Path) -> None:
        """Without a chat template the import says the engine needs one."""
        (source / "chat_template.jinja").unlink()
        with pytest.raises(ModelImportError, match="no chat template .* the engine renders every request"):
            import_model(source, tmp_path / "model", show_progress=False)

    def test_template_inside_tokenizer_config_is_enough(self, source: Path, tmp_path: Path) -> None:
        """A chat template carried in tokenizer_config.json counts as the model's template."""
        template = (source / "chat_template.jinja").read_text()
        (source / "chat_template.jinja").unlink()
        config = json.loads((source / "tokenizer_config.json").read_text())
        (source / "tokenizer_config.json").write_text(json.dumps(config | {"chat_template": template}))
        assert import_model(source, tmp_path / "model", show_progress=False).manifest.kind == "model"

    def test_no_tokenizer_is_named(self, source: Path, tmp_path: Path) -> None:
        """Without tokenizer.json or tokenizer.model the import names both."""
        (source / "tokenizer.json").unlink()
        with pytest.raises(ModelImportError, match=r"no tokenizer \(tokenizer.json or tokenizer.model\)"):
            import_model(source, tmp_path / "model", show_progress=False)

    def test_no_weights_is_named(self, source: Path, tmp_path: Path) -> None:
        """Without safetensors weights the import says so."""
        (source / "model.safetensors").unlink()
        with pytest.raises(ModelImportError, match="no safetensors weights"):
            import_model(source, tmp_path / "model", show_progress=False)

    def test_truncated_weights_are_refused(self, source: Path, tmp_path: Path) -> None:
        """A safetensors file cut short names the tensor that no longer fits."""
        weights = source / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:-100])
        with pytest.raises(ModelImportError, match="model.safetensors: tensor .* truncated or corrupt"):
            import_model(source, tmp_path / "model", show_progress=False)

    def test_embedding_disagreeing_with_config_names_both(self, source: Path, tmp_path: Path) -> None:
        """A config whose vocab_size the embedding does not have names both shapes."""
        config = json.loads((source / "config.json").read_text())
        (source / "config.json").write_text(json.dumps(config | {"vocab_size": 32000}))
        with pytest.raises(ModelImportError, match=r"shape \[49152, 64\], config.json says .* \[32000, 64\]"):
            import_model(source, tmp_path / "model", show_progress=False)

    def test_not_a_causal_lm_is_refused(self, source: Path, tmp_path: Path) -> None:
        """An encoder's config names its architectures as not a causal language model."""
        config = json.loads((source / "config.json").read_text())
        (source / "config.json").write_text(json.dumps(config | {"architectures": ["BertModel"]}))
        with pytest.raises(ModelImportError, match=r"architectures \['BertModel'\] name no causal language model"):
            import_model(source, tmp_path / "model", show_progress=False)

    def test_existing_output_is_refused(self, tiny_source: Path, tmp_path: Path) -> None:
        """An --out that already holds files is never overwritten."""
        (tmp_path / "model").mkdir()
        (tmp_path / "model" / "keep.txt").write_text("mine")
        with pytest.raises(ModelImportError, match="already exists and is not empty"):
            import_model(tiny_source, tmp_path / "model", show_progress=False)
        assert (tmp_path / "model" / "keep.txt").read_text() == "mine"

    def test_tampered_import_fails_verification(self, tiny_source: Path, tmp_path: Path) -> None:
        """A byte changed after import is named by the engine's manifest check."""
        import_model(tiny_source, tmp_path / "model", show_progress=False)
        config = tmp_path / "model" / "config.json"
        config.write_text(config.read_text().replace('"hidden_act": "silu"', '"hidden_act": "gelu"'))
        with pytest.raises(ModelVerificationError, match=r"config.json: sha256 [0-9a-f]{64} != manifest"):
            verify(tmp_path / "model")


class TestDefaultName:
    def test_plain_directory_gives_its_own_name(self, tmp_path: Path) -> None:
        """Outside a Hugging Face cache the directory's name is the model's."""
        assert default_name(tmp_path / "Llama-3.1-8B-Instruct") == "Llama-3.1-8B-Instruct"

    def test_cache_snapshot_gives_the_repository_name(self, tmp_path: Path) -> None:
        """models--org--name/snapshots/<rev> is named after the repository, not the revision."""
        path = tmp_path / "models--meta-llama--Llama-3.1-8B-Instruct" / "snapshots" / "0e9e39f2"
        assert default_name(path) == "Llama-3.1-8B-Instruct"


def write_safetensors(path: Path, header: dict, data: bytes) -> None:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)


class TestSafetensorsHeader:
    def test_hand_written_file_is_read(self, tmp_path: Path) -> None:
        """Two tensors back to back: dtypes and shapes as written."""
        header = {
            "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
            "b": {"dtype": "BF16", "shape": [4], "data_offsets": [24, 32]},
            "__metadata__": {"format": "pt"},
        }
        write_safetensors(tmp_path / "w.safetensors", header, bytes(32))
        tensors = read_safetensors_header(tmp_path / "w.safetensors")
        assert {k: (v.dtype, v.shape) for k, v in tensors.items()} == {"a": ("F32", (2, 3)), "b": ("BF16", (4,))}

    def test_header_length_beyond_the_file_is_refused(self, tmp_path: Path) -> None:
        """A length prefix larger than the file is named with both sizes."""
        (tmp_path / "w.safetensors").write_bytes(struct.pack("<Q", 1000) + b"{}")
        with pytest.raises(ModelImportError, match="header length 1000 exceeds the file \\(10 bytes\\)"):
            read_safetensors_header(tmp_path / "w.safetensors")

    def test_offsets_that_disagree_with_the_shape_are_refused(self, tmp_path: Path) -> None:
        """A tensor whose byte span is not dtype size × shape is refused."""
        header = {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}}
        write_safetensors(tmp_path / "w.safetensors", header, bytes(24))
        with pytest.raises(ModelImportError, match=r"tensor 'a' \(F32 \[2, 3\]\) spans bytes 0..20 of 24"):
            read_safetensors_header(tmp_path / "w.safetensors")

    @settings(max_examples=300)  # each example writes a file
    @given(data=st.binary(max_size=300))
    def test_any_bytes_give_tensors_or_a_clear_error(
        self, data: bytes, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        """Whatever a file holds, reading its header returns tensors or raises ModelImportError, nothing else."""
        path = tmp_path_factory.mktemp("st") / "w.safetensors"
        path.write_bytes(data)
        try:
            read_safetensors_header(path)
        except ModelImportError:
            pass

    @settings(max_examples=300)
    @given(
        header=st.dictionaries(
            st.text(min_size=1, max_size=8).filter(lambda k: k != "__metadata__"),
            st.fixed_dictionaries(
                {
                    "dtype": st.sampled_from(["F32", "F16", "BF16", "I64", "BOOL", "X9"]),
                    "shape": st.lists(st.integers(-1, 4), max_size=3),
                    "data_offsets": st.lists(st.integers(-2, 80), min_size=0, max_size=3),
                }
            ),
            max_size=4,
        ),
        data_size=st.integers(0, 80),
    )
    def test_any_json_header_gives_tensors_or_a_clear_error(
        self, header: dict, data_size: int, tmp_path_factory: pytest.TempPathFactory
    ) -> None:
        """A JSON header of any tensor entries is accepted exactly when every span fits its dtype and shape."""
        path = tmp_path_factory.mktemp("st") / "w.safetensors"
        write_safetensors(path, header, bytes(data_size))
        sizes = {"F32": 4, "F16": 2, "BF16": 2, "I64": 8, "BOOL": 1}

        def fits(entry: dict) -> bool:  # naive reference, straight from the format's definition
            shape, offsets = entry["shape"], entry["data_offsets"]
            if entry["dtype"] not in sizes or any(d < 0 for d in shape) or len(offsets) != 2:
                return False
            count = 1
            for d in shape:
                count *= d
            return (
                0 <= offsets[0] <= offsets[1] <= data_size and offsets[1] - offsets[0] == sizes[entry["dtype"]] * count
            )

        if all(fits(entry) for entry in header.values()):
            assert set(read_safetensors_header(path)) == set(header)
        else:
            with pytest.raises(ModelImportError):
                read_safetensors_header(path)


class TestCli:
    def test_import_prints_the_manifest_hash(
        self, tiny_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`model import` exits 0 and prints the new directory's manifest sha256."""
        code = main(["model", "import", str(tiny_source), "--out", str(tmp_path / "model"), "--no-progress"])
        out = capsys.readouterr().out
        printed = json.loads(out[out.index("{\n") :])  # after the structured log line
        assert code == 0
        assert printed["manifest_sha256"] == manifest_sha256(tmp_path / "model")
        assert printed["kind"] == "model"

    def test_pickled_source_exits_1_with_the_message(
        self, source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A pickled file makes the command exit 1 with the refusal on stderr."""
        (source / "pytorch_model.bin").write_bytes(b"\x80\x04")
        with pytest.raises(SystemExit) as exit_info:
            main(["model", "import", str(source), "--out", str(tmp_path / "model"), "--no-progress"])
        err = capsys.readouterr().err
        assert exit_info.value.code == 1
        assert err.startswith(
            f"edge-agent: model import failed: {source}: pickled weights are refused (pytorch_model.bin)"
        )

    def test_verify_accepts_the_imported_directory(
        self, tiny_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`model verify` on an imported directory reports ok with the manifest's name."""
        import_model(tiny_source, tmp_path / "model", name="tiny", show_progress=False)
        capsys.readouterr()
        assert main(["model", "verify", str(tmp_path / "model")]) == 0
        assert json.loads(capsys.readouterr().out)["name"] == read_manifest(tmp_path / "model").name == "tiny"
