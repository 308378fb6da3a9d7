"""Model training, kept out of the installed agent: the narrator's LoRA adapter and the EAGLE-3 / 3.1 draft heads
(corpora, training, export, vocabulary, acceptance and benchmark, their recipes).

It imports the runtime (`edge_agent`); the runtime never imports it, and the wheel does not ship it. Its commands run
from a checkout: `python -m training narrator|draft ...`.
"""
