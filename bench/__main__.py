"""`make bench`: every benchmark in turn, each in its own process with its issue-sized defaults.

    .venv/bin/python -m bench                      # all of them (about an hour on a 2-core box)
    .venv/bin/python -m bench --only audit draft   # a subset, by name

Each benchmark writes its own section of BENCHMARKS.md. A failing one is reported and the rest still run; the exit
status is 1 if any failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

# Order: cheap and independent first, the engine-bound ones last. The draft bench runs as BENCHMARKS.md records it:
# 4 prompts per slice, 64 tokens; the recipe's speed_ks (k=2..4) are timed side by side with no draft.
BENCHES: dict[str, list[str]] = {
    "audit": [],
    "mqtt_ingest": [],
    "opcua_rate": [],
    "engine": [],
    "reports": [],
    "narrative": [],
    "report_speed": [],
    "hostile": [],
    "draft": ["--prompts", "4", "--max-tokens", "64"],
    "llamacpp": [],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(BENCHES), help="run only these benchmarks")
    args = parser.parse_args(argv)
    failed = []
    for name in args.only or list(BENCHES):
        command = [sys.executable, "-m", f"bench.{name}", *BENCHES[name]]
        print(f"== {' '.join(command[1:])}", flush=True)
        started = time.monotonic()
        rc = subprocess.run(command, check=False).returncode
        print(f"== bench.{name}: exit {rc} after {time.monotonic() - started:.0f} s", flush=True)
        if rc:
            failed.append(name)
    if failed:
        print(f"failed: {' '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
