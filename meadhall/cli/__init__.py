"""The `meadhall` command-line tool: each command is one service call as the system actor."""
