"""`meadhall doctor` (docs/operations.md, "Checking a configuration"): the checks of the configuration an
operator gets wrong, one module per class of finding, and the report with its exit code.

Each check answers `Finding`s: what was verified (`ok`) or what is wrong (`warning`, `error`) with the
variable and value or command that fixes it. Checks never raise: whatever goes wrong while checking is
itself a finding."""
