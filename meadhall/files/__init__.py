"""Files: uploads, attachments, avatars and server images, and serving them safely (docs/files.md)."""
