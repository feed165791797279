"""Instance administration (docs/admin.md): users, bans, sessions, soft deletion, servers, media
limits, the instance audit log with its CSV export, and statistics. Every route needs an instance
administrator (`require_admin`); the domain sits above voice, social, guilds and accounts, whose
services it calls with the administrator as the actor."""
