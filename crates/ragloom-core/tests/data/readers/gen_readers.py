"""Records what llama-index-core 0.14.25's SimpleDirectoryReader gives on the
folder described by layout.json, into expected.json (read by tests/readers.rs).

Run: /tmp/li/bin/python gen_readers.py   (from this directory)
"""

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from llama_index.core import SimpleDirectoryReader
from llama_index.core.readers.base import BaseReader
from llama_index.core.schema import Document

HERE = Path(__file__).resolve().parent
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

EXCLUDE_PATTERNS = [
    "*.md", "sub", "sub/*", "sub/**", "**/deep/*", "node_modules", "*", "?.txt",
    "[ab].*", "[!a]*.txt", "**/*.md", "docs/**/*.txt", "*.TXT", "sub/deep",
    "nonexistent", "a.txt", "sub/d.txt", "**", "[a-c].txt", "*/*.md", "deep",
    "[z-a]*", "*[!t]", "a*", "./sub//deep",
]


class TwoPartReader(BaseReader):
    """File extractor used in one config: two documents per file."""

    def load_data(self, file, extra_info=None):
        text = Path(file).read_text(encoding="utf-8")
        return [
            Document(text=f"part{i}:{text}", metadata=dict(extra_info or {}))
            for i in range(2)
        ]


def build(root: Path, layout: dict) -> None:
    for f in layout["files"]:
        p = root / f["path"]
        p.parent.mkdir(parents=True, exist_ok=True)
        data = bytes.fromhex(f["hex"]) if "hex" in f else f["text"].encode("utf-8")
        p.write_bytes(data)
        mtime = f.get("mtime", layout["default_mtime"])
        os.utime(p, (mtime, mtime))
    for s in layout["symlinks"]:
        os.symlink(s["target"], root / s["path"])


def configs():
    out = [
        {"name": "default"},
        {"name": "recursive", "recursive": True},
        {"name": "recursive_with_hidden", "recursive": True, "exclude_hidden": False},
        {"name": "exclude_empty", "exclude_empty": True},
        {"name": "required_exts", "recursive": True, "required_exts": [".txt", ".md"]},
        {"name": "filename_as_id", "recursive": True, "filename_as_id": True},
        {"name": "input_files", "input_files": ["sub/d.txt", "a.txt", "link.txt", "a.txt"],
         "filename_as_id": True},
        {"name": "file_extractor", "recursive": True, "filename_as_id": True,
         "file_extractor": ".md"},
        {"name": "exclude_many", "recursive": True, "exclude": ["*.md", "node_modules"]},
    ]
    for pat in EXCLUDE_PATTERNS:
        for rec in (False, True):
            out.append({"name": f"exclude {pat!r} recursive={rec}", "recursive": rec,
                        "exclude": [pat], "files_only": True})
    return out


def rel(s: str, root: str) -> str:
    return s.replace(root, "<root>")


def run(root: Path, cfg: dict) -> dict:
    skip = ("name", "input_files", "file_extractor", "files_only")
    kwargs = {k: v for k, v in cfg.items() if k not in skip}
    if "file_extractor" in cfg:
        kwargs["file_extractor"] = {cfg["file_extractor"]: TwoPartReader()}
    try:
        if "input_files" in cfg:
            reader = SimpleDirectoryReader(
                input_files=[str(root / p) for p in cfg["input_files"]], **kwargs)
        else:
            reader = SimpleDirectoryReader(str(root), **kwargs)
        files = reader.list_resources()
        docs = [] if cfg.get("files_only") else reader.load_data()
    except Exception as e:  # recorded: the Rust side must fail too
        return {"error": rel(f"{type(e).__name__}: {e}", str(root))}
    out_docs = []
    for d in docs:
        meta = {}
        for k, v in d.metadata.items():
            if k == "creation_date":
                assert DATE.match(v), v
                v = "<date>"
            meta[k] = rel(v, str(root)) if isinstance(v, str) else v
        out_docs.append({
            "id": rel(d.id_, str(root)) if cfg.get("filename_as_id") else None,
            "text": d.text,
            "metadata": meta,
            "excluded_embed_metadata_keys": d.excluded_embed_metadata_keys,
            "excluded_llm_metadata_keys": d.excluded_llm_metadata_keys,
        })
    out = {"files": [rel(f, str(root)) for f in files]}
    if not cfg.get("files_only"):
        out["docs"] = out_docs
    return out


def corpus() -> None:
    """Hashes and lengths (never text) of the shared corpus as LlamaIndex loads it."""
    # `shared/corpus` beside the repository (or beside the worktree folder).
    root = next(p / "shared/corpus" for p in HERE.parents if (p / "shared/corpus").is_dir())
    reader = SimpleDirectoryReader(str(root), recursive=True, required_exts=[".txt"],
                                   filename_as_id=True)
    docs = []
    for d in reader.load_data():
        docs.append({
            "id": d.id_.replace(str(root), "<corpus>"),
            "chars": len(d.text),
            "text_sha256": hashlib.sha256(d.text.encode("utf-8")).hexdigest(),
            "file_size": d.metadata["file_size"],
            "file_type": d.metadata["file_type"],
        })
    (HERE / "corpus_expected.json").write_text(json.dumps(docs, indent=1) + "\n",
                                               encoding="utf-8")


def main() -> None:
    layout = json.loads((HERE / "layout.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        build(root, layout)
        cases = []
        for cfg in configs():
            cases.append({"config": cfg, "result": run(root, cfg)})
    # One case per line keeps the file small and its diffs readable.
    lines = ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases)
    (HERE / "expected.json").write_text(
        '{"generator": "llama-index-core 0.14.25", "cases": [\n' + lines + "\n]}\n",
        encoding="utf-8")


if __name__ == "__main__":
    main()
    corpus()
