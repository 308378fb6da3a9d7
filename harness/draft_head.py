"""A randomly initialised EAGLE-3.1 draft head in vLLM's format: the speculative tests load it, and bench.engine
measures with it when no trained head is shipped."""

from __future__ import annotations

import json
from pathlib import Path


def export_random_head(out: Path, *, eagle31: bool = True, seed: int = 0) -> Path:
    """A randomly initialised draft head in vLLM's format (SPECULATIVE's exporter). Greedy output must not change
    whatever the head proposes. `eagle31=False` writes an old EAGLE-3 head: no fc_norm/norm_output keys at all, and
    no manifest (heads exported before manifests existed)."""
    # torch and training load here, not at the top: every test session loads this module (tests/fixtures/engine.py)
    # and most never export a head.
    import torch

    from training.draft.export import export_draft
    from training.draft.model import DraftConfig, Eagle3Draft

    torch.manual_seed(seed)
    model = Eagle3Draft(DraftConfig(fc_norm=eagle31, norm_output=eagle31))
    export_draft(model, out, dtype="float32", name="random-eagle31" if eagle31 else "random-eagle3")
    if not eagle31:
        config_path = out / "config.json"
        config = json.loads(config_path.read_text())
        del config["fc_norm"], config["norm_output"]
        config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        (out / "manifest.json").unlink()
    return out
