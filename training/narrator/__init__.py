"""The narrator: the default model fine-tuned to write each report section from its facts.

`corpus` draws the (section prompt → reference text) pairs from simulated plant days.
"""

from training.narrator.corpus import (
    TEST_SEEDS,
    TRAIN_SEEDS,
    NarratorSample,
    build_samples,
    read_corpus,
    write_corpus,
)

__all__ = ["TEST_SEEDS", "TRAIN_SEEDS", "NarratorSample", "build_samples", "read_corpus", "write_corpus"]
