"""EAGLE-3 / EAGLE-3.1 draft heads: the module, its training, export to vLLM's format and the benchmark."""

from training.draft.export import ExportError, TrainingRecord, export_draft, load_exported
from training.draft.model import DraftConfig, Eagle3Draft

__all__ = ["DraftConfig", "Eagle3Draft", "ExportError", "TrainingRecord", "export_draft", "load_exported"]
