"""HTTP plumbing shared by every domain's routes: error rendering, middleware, rate-limit helpers."""
