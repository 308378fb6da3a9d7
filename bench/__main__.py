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

# Order: cheap and independent first, the engine-bound ones last. Each entry: the module and its arguments, as the
# section in BENCHMARKS.md records them. The draft bench runs twice: the general head (configs/draft.toml, 4 prompts
# per slice, 64 tokens; the recipe's speed_ks timed side by side with no draft) and the report specialist's head.
BENCHES: dict[str, tuple[str, list[str]]] = {
    "bandwidth": ("bandwidth", []),
    "audit": ("audit", []),
    "mqtt_ingest": ("mqtt_ingest", []),
    "opcua_rate": ("opcua_rate", []),
    "sparkplug": ("sparkplug", []),
    "ask": ("ask", []),
    "console": ("console", []),
    "engine": ("engine", []),
    "reports": ("reports", []),
    "narrative": ("narrative", []),
    "ask_planner": ("ask_planner", []),
    "report_speed": ("report_speed", ["--other-mode"]),
    "hostile": ("hostile", []),
    "draft": ("draft", ["--prompts", "4", "--max-tokens", "64"]),
    "draft-narrator": ("draft", ["--config", "configs/draft-narrator.toml", "--prompts", "8"]),
    "llamacpp": ("llamacpp", ["--prompts", "4", "--max-tokens", "64"]),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(BENCHES), help="run only these benchmarks")
    args = parser.parse_args(argv)
    failed = []
    for name in args.only or list(BENCHES):
        module, arguments = BENCHES[name]
        command = [sys.executable, "-m", f"bench.{module}", *arguments]
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
