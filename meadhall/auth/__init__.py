"""Request authentication: who is calling (session principal) and the per-request global limit."""
