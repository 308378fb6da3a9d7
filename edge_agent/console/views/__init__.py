"""The console's read pages, one module per page: Now, Reports (a report, the records behind its facts), Alarms,
Audit and Health. Each view renders `templates/<page>.html` and serves the same data as JSON at `<path>.json`."""
