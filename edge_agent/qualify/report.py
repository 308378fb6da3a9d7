"""The qualification's outputs: qualification.json (every check and, beside them, every measure: recorded, never
judged), qualification.html (the same, readable), a PDF when a renderer is installed, and the detached signature of
the JSON by the audit key."""

from __future__ import annotations

import base64
import html
import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel

from edge_agent.qualify.check import Check, Measure
from edge_agent.qualify.pq import Measurements

JSON_NAME = "qualification.json"
HTML_NAME = "qualification.html"
PDF_NAME = "qualification.pdf"
SIGNATURE_NAME = "qualification.json.sig"
PDF_RENDERER = "wkhtmltopdf"


class Qualification(BaseModel):
    agent_version: str
    site: str
    host: str
    config_path: str
    config_sha256: str
    started: datetime
    finished: datetime
    passed: bool
    checks: list[Check]
    # Recorded beside the checks, with no verdict: `passed` is the checks' alone.
    measures: list[Measure]
    measurements: Measurements | None

    @property
    def failed(self) -> list[str]:
        return [c.id for c in self.checks if not c.passed]

    def json_bytes(self) -> bytes:
        return (json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()


def render_html(q: Qualification) -> str:
    e = html.escape
    rows = "\n".join(
        f'<tr class="{"pass" if c.passed else "fail"}"><td>{e(c.id)}</td><td>{"PASS" if c.passed else "FAIL"}</td>'
        f"<td>{e(c.shows)}</td><td>{e(c.criterion)}</td><td>{e(c.measured)}</td></tr>"
        for c in q.checks
    )
    measured = "\n".join(
        f"<tr><td>{e(m.id)}</td><td>{e(m.shows)}</td><td>{e(m.measured)}</td></tr>" for m in q.measures
    )
    measures = (
        "<h2>Measures</h2>\n<p>Recorded beside the checks, not judged: no criterion requires them.</p>\n"
        "<table><thead><tr><th>measure</th><th>shows</th><th>measured</th></tr></thead>\n"
        f"<tbody>\n{measured}\n</tbody></table>\n"
        if q.measures
        else ""
    )
    verdict = "PASSED" if q.passed else f"FAILED ({', '.join(q.failed)})"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Qualification of edge-agent at {e(q.site)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #999;
padding:4px 8px;vertical-align:top;text-align:left}}tr.fail td{{background:#fdd}}tr.pass td:nth-child(2){{color:#060}}
</style></head><body>
<h1>Qualification of edge-agent {e(q.agent_version)} at site {e(q.site)}: {e(verdict)}</h1>
<p>Host {e(q.host)}; config {e(q.config_path)} (sha256 {e(q.config_sha256)}); from {e(q.started.isoformat())}
to {e(q.finished.isoformat())}. The same content as {JSON_NAME}, which {SIGNATURE_NAME} signs with the audit key
and whose sha256 the audit log records as a <code>qualification</code> entry.</p>
<h2>Checks</h2>
<table><thead><tr><th>check</th><th>result</th><th>shows</th><th>criterion</th><th>measured</th></tr></thead>
<tbody>
{rows}
</tbody></table>
{measures}</body></html>
"""


def write_outputs(q: Qualification, out: Path) -> tuple[bytes, str | None]:
    """Write the JSON, the HTML and, with a renderer, the PDF; return the JSON's bytes and why no PDF (None: one
    was written)."""
    out.mkdir(parents=True, exist_ok=True)
    data = q.json_bytes()
    (out / JSON_NAME).write_bytes(data)
    (out / HTML_NAME).write_text(render_html(q), encoding="utf-8")
    renderer = shutil.which(PDF_RENDERER)
    if renderer is None:
        return data, f"no PDF: {PDF_RENDERER} is not installed ({HTML_NAME} prints to PDF from any browser)"
    subprocess.run([renderer, "--quiet", str(out / HTML_NAME), str(out / PDF_NAME)], check=True, timeout=120)
    return data, None


def signature_text(key: str, signature: bytes) -> str:
    """The detached signature file: the audit log's verifier key (as `audit pubkey` prints it), then the Ed25519
    signature of qualification.json's bytes in base64."""
    return f"{key}\n{base64.b64encode(signature).decode()}\n"
