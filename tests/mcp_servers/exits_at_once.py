"""An MCP server that cannot start: it says why on stderr and exits before reading anything."""

import sys

print("mock server: the configuration file is missing", file=sys.stderr)
sys.exit(3)
