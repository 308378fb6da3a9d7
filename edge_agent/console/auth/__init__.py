"""The console's people: one-time enrolment links, passkeys (WebAuthn) and their table, sessions and lock-out."""
