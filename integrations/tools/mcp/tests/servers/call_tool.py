"""Calls one tool of a Streamable HTTP MCP server with the official Python
client and prints `is_error` and the text: python call_tool.py URL TOOL JSON_ARGS"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, tool: str, arguments: dict) -> None:
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            result = await session.call_tool(tool, arguments)
            text = "\n".join(c.text for c in result.content if hasattr(c, "text"))
            print(result.is_error, text)


asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
