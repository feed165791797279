"""Accounts and sign-in: registration, sessions, step-up, TOTP, backup codes, profile."""
