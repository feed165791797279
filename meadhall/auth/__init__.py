"""Who is calling: sessions (token lookup, authentication, rotation, revocation, the principal), the
security-event log they write to, the session cookie and the FastAPI identity dependencies.

The lowest identity layer: `accounts` (registration, sign-in, profile, two-factor, administration)
builds on it and `auth` imports nothing of `accounts` (docs/architecture.md, the layers)."""
