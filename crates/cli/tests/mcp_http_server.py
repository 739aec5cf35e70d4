"""A streamable-HTTP MCP server for `agent_mcp.rs`, on the `mcp` SDK that
`mcp-server-time` brings: one tool, `add`, on 127.0.0.1 at the port given."""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("math")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
