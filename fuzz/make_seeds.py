"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/seed-*)
from the project's test data and a few hand-made inputs. Run from anywhere;
libFuzzer adds what it finds beside the seeds."""
import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
READERS = ROOT / "integrations/readers/file/tests/data"
CORE = ROOT / "crates/ragloom-core/tests/data"
BM25_FILES = [
    "params.index.json", "vocab.index.json", "data.csc.index.npy",
    "indices.csc.index.npy", "indptr.csc.index.npy",
    "nonoccurrence_array.index.npy", "corpus.jsonl", "corpus.mmindex.json",
    "retriever.json",
]
BM25_SEPARATOR = b"\n\x00--next file--\x00\n"


def seed(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data if isinstance(data, bytes) else data.encode())


def copy(target, *paths):
    for p in paths:
        seed(target, p.name, p.read_bytes())


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf(kvs, tensors=()):
    """A GGUF v3 header: metadata of strings and u32s, tensor descriptions, no data."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, value in kvs:
        out += gguf_string(key)
        if isinstance(value, str):
            out += struct.pack("<I", 8) + gguf_string(value)
        elif isinstance(value, list):
            out += struct.pack("<IIQ", 9, 8, len(value))
            for v in value:
                out += gguf_string(v)
        else:
            out += struct.pack("<II", 4, value)
    for name, dims in tensors:
        out += gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", 0, 0)  # f32, offset 0
    out += b"\x00" * (-len(out) % 32)
    return out


def main():
    if CORPUS.exists():
        for d in CORPUS.iterdir():
            for f in d.glob("seed-*"):
                f.unlink()
    copy("pdf", READERS / "two_pages.pdf", READERS / "labelled.pdf", READERS / "corrupt.pdf", READERS / "panics.pdf")
    copy("docx", READERS / "corrupt.docx")
    seed("docx", "notes.docx", (READERS / "notes.docx").read_bytes())
    copy("epub", READERS / "book.epub")
    copy("html", READERS / "page.html")
    seed("html", "nested", "<html><body><div><p>a<b>b</b></p><script>x</script><table><tr><td>1</td></tr></table></div></body></html>")
    copy("csv", READERS / "people.csv", READERS / "crlf.csv", READERS / "numbers.csv", READERS / "flags.csv")
    copy("json_reader", READERS / "data.json", READERS / "rows.jsonl")
    copy("markdown", READERS / "guide.md", READERS / "headers_only.md")
    seed("markdown", "code", "# T\n\n```python\n# not a header\n```\n## U\ntext\n")
    for i, text in enumerate([
        "Thought: I need a tool.\nAction: add\nAction Input: {\"a\": 1, \"b\": 2}",
        "Thought: I can answer.\nAnswer: 42",
        "Thought: done\nAnswer:",
        "Action: search\nAction Input: {'q': 'x',}\n",
        "plain text with no markers",
    ]):
        seed("react_output", str(i), text)
    for i, text in enumerate([
        '```json\n{"choice": 1, "reason": "r"}\n```',
        "[{choice: 2, reason: 'because'},]",
        "{'a': True, 'b': None, 'c': [1, 2,],}",
        'noise {"nested": {"deep": [1, {"x": "y"}]}} tail',
    ]):
        seed("relaxed_json", str(i), text)
    copy("persisted_json", CORE / "storage/index/docstore.json", CORE / "storage/index/index_store.json")
    seed("persisted_json", "vector_store.json", (CORE / "vector_stores/store_a.json").read_bytes())
    py = CORE / "bm25_persist/python"
    parts = [(py / f).read_bytes() if (py / f).exists() else b"" for f in BM25_FILES]
    seed("bm25_folder", "python", BM25_SEPARATOR.join(parts))
    seed("gguf", "minimal", gguf([("general.architecture", "llama")]))
    seed("gguf", "vocab", gguf([
        ("general.architecture", "llama"), ("llama.context_length", 64),
        ("tokenizer.ggml.model", "gpt2"), ("tokenizer.ggml.tokens", ["a", "b", "<s>"]),
        ("tokenizer.chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}"),
    ], tensors=[("token_embd.weight", [2, 3])]))
    alice = (ROOT / "examples/data/alice29.txt").read_bytes()[:3000]
    seed("sentence_splitter", "alice", bytes([8, 20]) + alice)
    seed("sentence_splitter", "tiny", bytes([0, 63]) + "One. Two!  Three?\n\n\nFour…  五六。".encode())
    for i, pattern in enumerate([b"\x00*.txt", b"\x01**/c.txt", b"\x01sub/**", b"\x00x[1]/*", b"\x01we*rd/**/f.txt", b"\x00[!a]*"]):
        seed("glob", str(i), pattern)
    # http_request: the first byte picks the route (see crates/ragloom-fuzz/src/http.rs).
    for name, route, payload in [
        ("query", 0, '{"query":"tea","top_k":2}'),
        ("retrieve", 1, '{"query":"tea","filters":{"filters":[{"key":"a","value":1,"operator":"=="}]}}'),
        ("chat", 2, '{"model":"docs","messages":[{"role":"user","content":"hi"}]}'),
        ("list", 3, "limit=2&cursor=1&index=docs"),
        ("upload", 4, '--B\r\nContent-Disposition: form-data; name="file"; filename="../a.txt"\r\n\r\nhello\r\n--B--\r\n'),
        ("mcp", 5, '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}'),
        ("node", 6, "hatter"),
        ("delete", 7, "hatter?index=docs"),
    ]:
        seed("http_request", name, bytes([route]) + payload.encode())


if __name__ == "__main__":
    main()
