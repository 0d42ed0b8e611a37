"""An MCP server for ragloom-tools-mcp's tests, on the official Python SDK.

    python test_server.py stdio
    python test_server.py streamable-http PORT

Tools: `add`; `search` (nested arguments); `fail` (raises); `slow` (sleeps);
`exit_now` (the process dies mid-call); `chatty` (floods stderr, then
answers). A resource `doc://readme` and a prompt `summarize`.
"""

import os
import sys
import time
from typing import List, Optional

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("ragloom-test")


class Filter(BaseModel):
    key: str = Field(description="Metadata key.")
    values: List[str] = Field(description="Accepted values.")


class Query(BaseModel):
    text: str = Field(description="What to look for.")
    top_k: int = Field(default=3, description="How many hits.")
    filters: Optional[List[Filter]] = Field(default=None, description="Metadata filters.")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def search(query: Query) -> str:
    """Search the catalogue."""
    keys = ",".join(f.key + "=" + "|".join(f.values) for f in (query.filters or []))
    return f"{query.text}:{query.top_k}:{keys}"


@mcp.tool()
def fail(message: str) -> str:
    """Always fails."""
    raise ValueError(message)


@mcp.tool()
def slow(seconds: float) -> str:
    """Sleeps, then answers."""
    time.sleep(seconds)
    return "slept"


@mcp.tool()
def exit_now() -> str:
    """The server process dies while answering."""
    sys.stderr.write("exiting now\n")
    sys.stderr.flush()
    os._exit(3)


@mcp.tool()
def chatty(lines: int) -> str:
    """Writes many lines to stderr, then answers."""
    for i in range(lines):
        sys.stderr.write(f"log line {i} " + "x" * 200 + "\n")
    sys.stderr.flush()
    return f"wrote {lines} lines"


@mcp.resource("doc://readme")
def readme() -> str:
    """The project's read-me."""
    return "ragloom test server: tools, a resource and a prompt."


@mcp.prompt()
def summarize(topic: str) -> str:
    """Ask for a summary."""
    return f"Summarize {topic} in one sentence."


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "streamable-http":
        mcp.run(transport="streamable-http", port=int(sys.argv[2]))
    else:
        mcp.run(transport="stdio")
