# Conformance checks of `ragloom serve`'s MCP server (Streamable HTTP or stdio),
# driven by the official `mcp` Python SDK's ClientSession.
"""Prints one line per check; exits 1 on the first failure, 2 on a usage error.

    python mcp_client.py http URL KEY               URL like http://127.0.0.1:PORT/mcp
    python mcp_client.py stdio RAGLOOM_BIN ARGS...  spawns `RAGLOOM_BIN ARGS...`

RAGLOOM_TEST_QUESTION is the question (default "Who is Alice?");
RAGLOOM_TEST_TIMEOUT (seconds, default 300) bounds each request.
"""

import json
import os
import sys
import traceback

import anyio
import httpx2
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import INVALID_PARAMS, PaginatedRequestParams, TextContent, TextResourceContents

USAGE = __doc__.split("\n\n")[1]
EXPECTED_TOOLS = {"query", "retrieve", "list_documents"}


class CheckFailed(Exception):
    pass


def texts(result):
    """The text blocks of a tool result."""
    return [block.text for block in result.content if isinstance(block, TextContent)]


def items_of(value, keys):
    """The list inside a tool's structured (or JSON text) output: the value itself
    when it is a list, else the first of `keys` (or the only list field) it has."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), list):
                return value[key]
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
    return None


def structured_items(result, keys):
    """(items, where) from structured_content, else from a text block holding JSON, else
    (None, None): a tool may also answer in prose (or wrap it as {"result": "..."})."""
    items = items_of(result.structured_content, keys)
    if items is not None:
        return items, "structured_content"
    for text in texts(result):
        try:
            items = items_of(json.loads(text), keys)
        except ValueError:
            continue
        if items is not None:
            return items, "JSON text"
    return None, None


def assert_ok_result(result, what):
    assert not result.is_error, f"{what} came back with is_error: {texts(result)!r}"
    joined = "".join(texts(result))
    assert joined.strip(), f"{what} has no text content: {result.content!r}"
    return joined


async def expect_tool_error(session, name, arguments):
    """A bad call must be refused as an is_error result or a JSON-RPC error, not a dropped connection."""
    try:
        result = await session.call_tool(name, arguments)
    except MCPError as err:
        assert err.code == INVALID_PARAMS, (
            f"{name}({arguments!r}) raised MCPError {err.code} ({err.message}); "
            f"expected an is_error result or invalid params ({INVALID_PARAMS})"
        )
        return f"MCPError {err.code}: {err.message}"
    assert result.is_error, f"{name}({arguments!r}) should fail, got {result!r}"
    return f"is_error: {''.join(texts(result))[:80]!r}"


async def run_checks(session, question):
    state = {"files": set()}

    async def initialize():
        result = await session.initialize()
        assert result.server_info.name, f"no server name in {result!r}"
        caps = result.capabilities
        assert caps.tools is not None, f"the server does not declare the tools capability: {caps!r}"
        assert caps.resources is not None, f"the server does not declare the resources capability: {caps!r}"
        return f"{result.server_info.name} {result.server_info.version}, protocol {result.protocol_version}"

    async def list_tools():
        tools, cursor = [], None
        while True:
            page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        names = {tool.name for tool in tools}
        missing = EXPECTED_TOOLS - names
        assert not missing, f"missing tools {sorted(missing)}; listed {sorted(names)}"
        for tool in tools:
            if tool.name in EXPECTED_TOOLS:
                schema = tool.input_schema
                assert isinstance(schema, dict) and schema.get("type") == "object", (
                    f"tool {tool.name!r} has no object input schema: {schema!r}"
                )
        return ", ".join(sorted(names))

    async def list_documents():
        result = await session.call_tool("list_documents", {})
        text = assert_ok_result(result, "list_documents")
        docs, where = structured_items(result, ("documents",))
        if docs is None:
            return f"{len(text)} chars of text"
        assert docs, f"list_documents names no document ({where}): {docs!r}"
        for doc in docs:
            assert isinstance(doc, dict) and isinstance(doc.get("file"), str) and doc["file"], (
                f"a document without a file name ({where}): {doc!r}"
            )
            state["files"].add(doc["file"])
        return f"{len(docs)} document(s) in {where}"

    async def retrieve():
        result = await session.call_tool("retrieve", {"query": question, "top_k": 2})
        text = assert_ok_result(result, "retrieve")
        passages, where = structured_items(result, ("nodes", "passages", "sources"))
        if passages is None:
            # Plain text only: it should at least name one of the listed files.
            if state["files"]:
                assert any(f in text for f in state["files"]), (
                    f"the text names none of the documents {sorted(state['files'])}: {text[:300]!r}"
                )
            return f"{len(text)} chars of text"
        assert 1 <= len(passages) <= 2, f"expected 1 or 2 passages with top_k 2 ({where}), got {len(passages)}"
        for passage in passages:
            assert isinstance(passage, dict) and isinstance(passage.get("file"), str) and passage["file"], (
                f"a passage without a file ({where}): {passage!r}"
            )
        return f"{len(passages)} passage(s) in {where}: " + ", ".join(p["file"] for p in passages)

    async def query():
        result = await session.call_tool("query", {"question": question})
        text = assert_ok_result(result, "query")
        return f"{len(text)} chars"

    async def resources():
        first = await session.list_resources()
        listed = list(first.resources)
        assert listed, "list_resources returned no resource"
        pages = 1
        if first.next_cursor:
            second = await session.list_resources(params=PaginatedRequestParams(cursor=first.next_cursor))
            assert second.resources, f"the page after cursor {first.next_cursor!r} is empty"
            listed.extend(second.resources)
            pages = 2
        uri = listed[0].uri
        read = await session.read_resource(uri)
        assert read.contents, f"read_resource({uri!r}) returned no contents"
        body = "".join(c.text for c in read.contents if isinstance(c, TextResourceContents))
        assert body.strip(), f"read_resource({uri!r}) returned no text: {read.contents!r}"
        return f"{len(listed)} resource(s) over {pages} page(s); {uri} has {len(body)} chars"

    async def bad_arguments():
        a = await expect_tool_error(session, "retrieve", {"query": question, "top_k": "many"})
        b = await expect_tool_error(session, "retrieve", {})
        c = await expect_tool_error(session, "no_such_tool", {})
        again = await session.list_tools()
        assert again.tools, "list_tools after the bad calls returned no tools"
        return f"top_k 'many' -> {a}; no arguments -> {b}; unknown tool -> {c}; session still answers"

    checks = [
        ("initialize", initialize),
        ("list_tools has query, retrieve, list_documents", list_tools),
        ("call list_documents", list_documents),
        ("call retrieve (top_k 2)", retrieve),
        ("call query", query),
        ("list and read resources", resources),
        ("bad arguments are errors, not a dropped session", bad_arguments),
    ]
    for name, check in checks:
        try:
            detail = await check()
        except AssertionError as err:
            print(f"FAIL {name}: {err}", flush=True)
            raise CheckFailed() from None
        except Exception as err:
            print(f"FAIL {name}: unexpected {type(err).__name__}: {err}", flush=True)
            traceback.print_exc()
            raise CheckFailed() from None
        print(f"ok   {name}" + (f" ({detail})" if detail else ""), flush=True)
    print(f"all {len(checks)} MCP client checks passed", flush=True)


async def check_http_bad_key(url, timeout):
    """Without a valid key the endpoint must answer 401 and the SDK must refuse to initialize.
    (mcp 2.x turns a bare 401 into MCPError -32603, so the status is read off the HTTP client.)"""
    name = "http: a bad key gets 401 and cannot initialize"
    statuses = []

    async def record(response):
        statuses.append(response.status_code)

    try:
        async with httpx2.AsyncClient(
            headers={"Authorization": "Bearer not-a-ragloom-key"},
            timeout=httpx2.Timeout(30, read=timeout),
            event_hooks={"response": [record]},
        ) as http:
            with anyio.fail_after(60):
                async with streamable_http_client(url, http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1], read_timeout_seconds=30) as session:
                        await session.initialize()
    except TimeoutError:
        print(f"FAIL {name}: no answer within 60 s", flush=True)
        raise CheckFailed() from None
    except Exception as err:
        leaf = unwrap(err)
        if not isinstance(leaf, MCPError) or 401 not in statuses:
            print(f"FAIL {name}: expected a 401 and an MCPError, got HTTP {statuses} and "
                  f"{type(leaf).__name__}: {leaf}", flush=True)
            raise CheckFailed() from None
        print(f"ok   {name} (HTTP {statuses}; MCPError {leaf.code}: {leaf.message})", flush=True)
        return
    print(f"FAIL {name}: initialize succeeded with a wrong key (HTTP {statuses})", flush=True)
    raise CheckFailed()


async def main(argv):
    question = os.environ.get("RAGLOOM_TEST_QUESTION", "Who is Alice?")
    timeout = float(os.environ.get("RAGLOOM_TEST_TIMEOUT", "300"))
    mode = argv[1] if len(argv) > 1 else ""
    if mode == "http" and len(argv) == 4:
        url, key = argv[2], argv[3]
        await check_http_bad_key(url, timeout)
        # mcp 2.x takes headers through the httpx2 client it is given.
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30, read=timeout)
        ) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1], read_timeout_seconds=timeout) as session:
                    await run_checks(session, question)
    elif mode == "stdio" and len(argv) >= 3:
        server = StdioServerParameters(command=argv[2], args=argv[3:], env=dict(os.environ))
        async with stdio_client(server) as streams:
            async with ClientSession(streams[0], streams[1], read_timeout_seconds=timeout) as session:
                await run_checks(session, question)
    else:
        print(USAGE, file=sys.stderr)
        return 2
    return 0


def unwrap(err):
    """The first leaf of an exception group (task groups wrap what their tasks raise)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


if __name__ == "__main__":
    try:
        code = anyio.run(main, sys.argv)
    except BaseException as err:  # noqa: BLE001 - report every way out as a failure
        leaf = unwrap(err)
        if isinstance(leaf, CheckFailed):
            sys.exit(1)
        if isinstance(leaf, (SystemExit, KeyboardInterrupt)):
            raise
        print(f"FAIL the session broke: {type(leaf).__name__}: {leaf}", flush=True)
        traceback.print_exception(leaf)
        sys.exit(1)
    sys.exit(code)
