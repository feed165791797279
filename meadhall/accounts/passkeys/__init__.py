"""Passkeys (WebAuthn): registration, sign-in without a password, step-up, management (docs/passkeys.md)."""
