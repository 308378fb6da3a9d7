#!/usr/bin/env bash
# The air-gapped install, from the unpacked `make dist` archive: `sudo ./install.sh` (DESTDIR=/some/root stages it,
# as `make install` does). Every file is checked against SHA256SUMS first; then systemd/install.sh runs with the
# archive's wheelhouse and prepared models and no network: the same six steps as `make install`.
set -euo pipefail
cd "$(dirname "$0")"

fail() { printf 'edge-agent install: error: %s\n' "$*" >&2; exit 1; }

sha256sum --check --quiet --strict SHA256SUMS || fail "files differ from SHA256SUMS: copy the archive again"
# shellcheck source=/dev/null
. ./BUILD
PYTHON=${PYTHON:-python3}
have=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || fail "no $PYTHON on this host"
[ "$have" = "$PYTHON_VERSION" ] || fail "this archive's wheels are for Python $PYTHON_VERSION, $PYTHON is $have"
[ "$(uname -m)" = "$ARCH" ] || fail "this archive's wheels are for $ARCH, this host is $(uname -m)"

WHEELHOUSE="$PWD/wheels" MODEL_FROM="$PWD/models" EXTRA="$EXTRA" PYTHON="$PYTHON" exec bash systemd/install.sh
