"""Where an attachment or emoji image of an export may come from: a local file inside one of the folders given
on the command line. The exporter writes, with `--media`, a path relative to the JSON file (often URL-escaped);
anything else (a URL, an absolute path elsewhere, a path climbing out with `..`, a link pointing out, a file
that is not there) is refused with a reason, and nothing is ever fetched."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote


def local_path(url: str, folder: Path, roots: list[Path]) -> tuple[Path | None, str | None]:
    """(the file, None) or (None, reason): `remote_url`, `outside_export`, `missing_file`."""
    if not url or "://" in url or url.startswith("//") or url.lower().startswith(("data:", "mailto:")):
        return None, "remote_url"
    found = None
    for candidate in dict.fromkeys((url, unquote(url))):
        path = Path(candidate)
        path = path if path.is_absolute() else folder / path
        # resolve() follows links, so a link inside the export pointing out of it is outside too.
        resolved = path.resolve()
        if not any(resolved.is_relative_to(root) for root in roots):
            return None, "outside_export"
        if resolved.is_file():
            found = resolved
            break
    if found is None:
        return None, "missing_file"
    return found, None
