"""Files: uploads, attachments, avatars and server images, and serving them safely (API.md 0.11, 2.17, 3.9)."""
