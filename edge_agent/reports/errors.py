"""One exception root for the report subsystem."""

from __future__ import annotations


class ReportError(Exception):
    """Root of every report failure."""


class RequestError(ReportError):
    """A request that cannot be served; `field` names the offending field (dotted path) for the error reply."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class TemplateError(ReportError):
    """A prompt template file that is missing or malformed."""


class ReportNotFound(ReportError):
    def __init__(self, report_id: str) -> None:
        self.report_id = report_id
        super().__init__(f"no report {report_id!r}")


class SignoffError(ReportError):
    """A sign-off that is refused: unknown report, not authorised, already decided. `code` is the short reason an
    audit `report.signoff_refused` entry and the metrics carry (docs/reports.md, "Sign-off")."""

    def __init__(self, message: str, code: str = "refused") -> None:
        super().__init__(message)
        self.code = code


class WindowTooLarge(ReportError):
    """A report window holding more records or bytes than `reports.max_window_rows` / `max_window_bytes`."""

    def __init__(self, rows: int, size: int, max_rows: int, max_bytes: int) -> None:
        self.rows, self.size, self.max_rows, self.max_bytes = rows, size, max_rows, max_bytes
        super().__init__(
            f"window too large: {rows} records, {size} bytes (limits: reports.max_window_rows = {max_rows},"
            f" reports.max_window_bytes = {max_bytes}); ask for a shorter window"
        )
