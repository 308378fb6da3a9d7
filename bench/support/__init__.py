"""Helper modules of the benches: a bench's data, expected figures or report writing, split from its command-line
module (bench/*.py, each a registered bench of bench/__main__.py)."""
