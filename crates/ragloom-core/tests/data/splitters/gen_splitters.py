"""Records what llama-index-core 0.14.25 (nltk 3.10.4, tiktoken) produces, as
test data for ragloom's tokenizer, Punkt port and splitters.

Run from anywhere with the reference interpreter:

    /tmp/li/bin/python crates/ragloom-core/tests/data/splitters/gen_splitters.py

The corpus is looked up in the nearest ancestor folder holding
`shared/corpus` (or $RAGLOOM_CORPUS_DIR). The essay's text is never written
out: only offsets, token counts and sha256 digests of chunks.
"""

import hashlib
import json
import os
import random
import sys
import unicodedata
from pathlib import Path

from llama_index.core import Document
from llama_index.core.node_parser import SentenceSplitter, TokenTextSplitter
from llama_index.core.schema import TextNode
from llama_index.core.utils import get_tokenizer
from nltk.tokenize.punkt import PunktSentenceTokenizer

HERE = Path(__file__).resolve().parent


def corpus_dir() -> Path:
    env = os.environ.get("RAGLOOM_CORPUS_DIR")
    if env:
        return Path(env)
    for parent in HERE.parents:
        cand = parent / "shared" / "corpus"
        if cand.is_dir():
            return cand
    sys.exit("corpus folder shared/corpus not found; set RAGLOOM_CORPUS_DIR")


CORPUS = corpus_dir()


def read(rel: str) -> str:
    # newline="" keeps "\r\n" as it is on disk, as Rust's read_to_string does.
    if rel.startswith("data:"):
        path = HERE / rel[len("data:") :]
    else:
        path = CORPUS / rel
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def sha(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def dump(name: str, value) -> None:
    with open(HERE / name, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print("wrote", name)


TEXTS = [
    "paul_graham_essay.txt",
    "sources/alice29.txt",
    "sources/asyoulik.txt",
    "sources/lcet10.txt",
    "sources/plrabn12.txt",
    "data:multilingual.txt",
]

# Hand-written cases that exercise each branch of Punkt.
PUNKT_CASES = [
    "",
    "   ",
    "Hello world.",
    "  Leading space. Trailing space.   ",
    "Very bad acting!!! I promise.",
    "(Sent1.) Sent2.",
    '"Quoted." Next one. \'Single.\' Last.',
    "He said “Hi.” Then ‘bye.’ «Fin.» Done.",
    "J. R. R. Tolkien wrote it. A. b. c.",
    "See p. 12. It is on page 3. and more. 4. Item",
    "It costs 3.50. The end. 1998. Was good. 12. then",
    "Wait... what? Really... Yes. . . . Okay.",
    "Ellipsis.. two. And.... four.",
    "End of line.\nNew line. \n\nNew para.\r\nCRLF line.",
    "Question? Exclamation! Mixed?! Yes.",
    "A sentence -- with dashes. --Another.",
    "Mr. Smith met Dr. Jones at 5 p.m. on Jan. 3. They talked.",
    "U.S.A. is big. e.g. this. i.e. that.",
    "Brackets [a.] {b.} (c.) d.",
    "Text.) More.] Even.} Done.",
    "No end punctuation here",
    "Dots...in...words. Next.",
    "Numbers 1. 2. 3. four. Five.",
    "x.\ty.\u00a0z.\u2003w.\u3000v. u.",
    "Unit sep.\x1fNext.\x1c Third.",
    "Quote at end.\"",
    "Tail.\" \" ",
    '"Hello." "World." ',
    "A.\n\n\nB.\n\n\n\nC.",
    "Ünïcödé. Ärger. élan. Øre. İstanbul. ß.",
    "東京の朝は早い。駅のホーム. Hi. 明日? はい!",
    "Emoji 🚀. Next 😺! Then?",
    "a. b. c. d. e.",
    "I. A. Richards. X. y.",
    "..Start dots. .Dot start.",
    "!!! ??? Hmm. ?",
    "Ends with. ",
    "— Dash. – Dash.",
    "1.5. 2,000. -3. .5. Next.",
    "Foo.\u2019 Bar.\u201d Baz.\u00bb Qux.",
    "Open.( Close.) Star.* At.@ Colon.: Semi.;",
    "'Tis. 'Twas.",
    "Multiple   spaces.   Here.",
]


def fuzz_cases(n: int, seed: int) -> list:
    rng = random.Random(seed)
    alphabet = (
        list("abcXYZé.?!.,;:--'\"()[]{}*@&#`\u2018\u2019\u201c\u201d\u00ab\u00bb")
        + ["1", "2", "0", "I", "A", "J", "Ö"]
        + [" ", " ", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\u00a0", "\x1f", "...", ". . .", "--"]
        + ["Hello", "world", "Mr", "the", "End", "é", "東京", "。", "🚀"]
    )
    out = []
    for _ in range(n):
        k = rng.randint(1, 40)
        out.append("".join(rng.choice(alphabet) for _ in range(k)))
    return out


def gen_punkt():
    tok = PunktSentenceTokenizer()
    files = {}
    for name in TEXTS:
        text = read(name)
        files[name] = {
            "chars": len(text),
            "sha256": sha(text),
            "spans": [list(s) for s in tok.span_tokenize(text)],
        }
    cases = [{"text": t, "spans": [list(s) for s in tok.span_tokenize(t)]} for t in PUNKT_CASES]
    fuzz = [
        {"text": t, "spans": [list(s) for s in tok.span_tokenize(t)]}
        for t in fuzz_cases(600, 20251122)
    ]
    dump("punkt_spans.json", {"files": files, "cases": cases, "fuzz": fuzz})


TOKEN_STRINGS = [
    "",
    "hello world",
    "Hello, world! <|endoftext|> after the special token",
    "<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>",
    "<|endofprompt|>",
    "   leading and trailing   ",
    "\n\n\n\n",
    "a" * 300,
    " " * 1000,
    "東京の朝は早い。駅のホームには、通勤客が静かに並んでいる。",
    "Emoji 🚀😺🌸 and ☃️",
    "Le marché du samedi ouvre à 7 h. « Vous avez goûté ? »",
    "Die Bäckerei: 3,50 €, „Guten Morgen!“",
    "x\r\ny\r\n\r\nz",
    "12345678901234567890 3.14159 1e10",
    "def f(x):\n    return x ** 2  # comment",
]


def gen_tokens():
    enc = get_tokenizer()
    out = [{"text": s, "tokens": list(enc(s))} for s in TOKEN_STRINGS]
    for name in TEXTS:
        out.append({"file": name, "count": len(enc(read(name)))})
    dump("token_counts.json", out)


def chunk_record(nodes):
    return [
        [n.start_char_idx, n.end_char_idx, len(n.text), sha(n.text)] for n in nodes
    ]


def id_func(i, doc):
    return f"{doc.id_}-{i}"


def make_doc(spec):
    text = read(spec["file"])
    return Document(
        id_=spec.get("id", "doc"),
        text=text,
        metadata=spec.get("metadata", {}),
        excluded_embed_metadata_keys=spec.get("excluded_embed", []),
        excluded_llm_metadata_keys=spec.get("excluded_llm", []),
    )


LONG_TITLE = (
    "What I Worked On: a long essay about writing, programming, painting, "
    "Lisp, Viaweb, Y Combinator and the many detours in between, as told "
    "by its author"
)

SENTENCE_CASES = [
    {"name": "essay_256_20", "file": "paul_graham_essay.txt", "chunk_size": 256, "chunk_overlap": 20},
    {"name": "essay_default", "file": "paul_graham_essay.txt"},
    {"name": "essay_512_50", "file": "paul_graham_essay.txt", "chunk_size": 512, "chunk_overlap": 50},
    {"name": "lcet10_512_50", "file": "sources/lcet10.txt", "chunk_size": 512, "chunk_overlap": 50},
    {"name": "alice_512_50", "file": "sources/alice29.txt", "chunk_size": 512, "chunk_overlap": 50},
    {"name": "asyoulik_128_0", "file": "sources/asyoulik.txt", "chunk_size": 128, "chunk_overlap": 0},
    {"name": "plrabn12_256_20", "file": "sources/plrabn12.txt", "chunk_size": 256, "chunk_overlap": 20},
    {"name": "multilingual_512_50", "file": "data:multilingual.txt", "chunk_size": 512, "chunk_overlap": 50, "full": True},
    {"name": "multilingual_64_8", "file": "data:multilingual.txt", "chunk_size": 64, "chunk_overlap": 8, "full": True},
    {"name": "multilingual_20_5", "file": "data:multilingual.txt", "chunk_size": 20, "chunk_overlap": 5},
    {"name": "multilingual_10_0_sep", "file": "data:multilingual.txt", "chunk_size": 10, "chunk_overlap": 0,
     "paragraph_separator": "\n\n", "separator": "\u3002"},
    {"name": "multilingual_24_4_customregex", "file": "data:multilingual.txt", "chunk_size": 24, "chunk_overlap": 4,
     "secondary_chunking_regex": "[^,、，。]+[,、，。]?"},
    {"name": "multilingual_30_10_noregex", "file": "data:multilingual.txt", "chunk_size": 30, "chunk_overlap": 10,
     "secondary_chunking_regex": None, "full": True},
    {
        "name": "essay_metadata_256_20",
        "file": "paul_graham_essay.txt",
        "chunk_size": 256,
        "chunk_overlap": 20,
        "metadata": {"file_name": "paul_graham_essay.txt", "title": LONG_TITLE, "year": 2024},
        "excluded_llm": ["title"],
        "excluded_embed": ["file_name"],
    },
    {
        "name": "multilingual_metadata_80_10",
        "file": "data:multilingual.txt",
        "chunk_size": 80,
        "chunk_overlap": 10,
        "metadata": {"file_name": "multilingual.txt", "title": "Märkte, Bäckereien und 東京の朝 🌸", "pages": [1, 2]},
        "excluded_llm": ["file_name"],
        "full": True,
    },
    {
        "name": "multilingual_metadata_warn",
        "file": "data:multilingual.txt",
        "chunk_size": 64,
        "chunk_overlap": 4,
        "metadata": {"title": LONG_TITLE},
        "full": True,
    },
    {
        "name": "multilingual_no_meta_no_rel",
        "file": "data:multilingual.txt",
        "chunk_size": 64,
        "chunk_overlap": 8,
        "metadata": {"file_name": "multilingual.txt"},
        "include_metadata": False,
        "include_prev_next_rel": False,
        "full": True,
    },
]

TOKEN_CASES = [
    {"name": "essay_256_20", "file": "paul_graham_essay.txt", "chunk_size": 256, "chunk_overlap": 20},
    {"name": "essay_default", "file": "paul_graham_essay.txt"},
    {"name": "lcet10_512_50", "file": "sources/lcet10.txt", "chunk_size": 512, "chunk_overlap": 50},
    {"name": "multilingual_64_8", "file": "data:multilingual.txt", "chunk_size": 64, "chunk_overlap": 8, "full": True},
    {"name": "multilingual_16_4_keep", "file": "data:multilingual.txt", "chunk_size": 16, "chunk_overlap": 4,
     "keep_whitespaces": True},
    {"name": "multilingual_12_3_nobackup", "file": "data:multilingual.txt", "chunk_size": 12, "chunk_overlap": 3,
     "backup_separators": []},
    {
        "name": "essay_metadata_256_20",
        "file": "paul_graham_essay.txt",
        "chunk_size": 256,
        "chunk_overlap": 20,
        "metadata": {"file_name": "paul_graham_essay.txt", "title": LONG_TITLE},
        "excluded_embed": ["title"],
    },
]

SENTENCE_KEYS = ["chunk_size", "chunk_overlap", "separator", "paragraph_separator",
                 "secondary_chunking_regex", "include_metadata", "include_prev_next_rel"]
TOKEN_KEYS = ["chunk_size", "chunk_overlap", "separator", "backup_separators",
              "keep_whitespaces", "include_metadata", "include_prev_next_rel"]


def run_cases(cls, keys, cases):
    out = []
    for case in cases:
        params = {k: case[k] for k in keys if k in case}
        splitter = cls(id_func=id_func, **params)
        doc = make_doc(case)
        nodes = splitter.get_nodes_from_documents([doc])
        rec = {
            "name": case["name"],
            "file": case["file"],
            "params": params,
            "metadata": case.get("metadata", {}),
            "excluded_embed": case.get("excluded_embed", []),
            "excluded_llm": case.get("excluded_llm", []),
            "settings": splitter.to_dict(),
            "count": len(nodes),
            "chunks": chunk_record(nodes),
        }
        if case.get("full"):
            rec["nodes"] = [n.to_dict() for n in nodes]
        out.append(rec)
    return out


def gen_errors():
    """Error and edge cases: messages and the nodes Python gives."""
    out = {}
    too_long = Document(id_="d", text="Some text. More text.", metadata={"title": "word " * 300})
    for cls in (SentenceSplitter, TokenTextSplitter):
        try:
            cls(chunk_size=256, chunk_overlap=10).get_nodes_from_documents([too_long])
            out[cls.__name__ + "_metadata_too_long"] = None
        except ValueError as e:
            out[cls.__name__ + "_metadata_too_long"] = str(e)
        try:
            cls(chunk_size=10, chunk_overlap=11)
            out[cls.__name__ + "_overlap"] = None
        except ValueError as e:
            out[cls.__name__ + "_overlap"] = str(e)
    try:
        SentenceSplitter(chunk_size=1, chunk_overlap=0).split_text("東京🚀 x")
        out["single_token"] = None
    except ValueError as e:
        out["single_token"] = str(e)
    out["token_splitter_tiny"] = TokenTextSplitter(chunk_size=1, chunk_overlap=0).split_text("東京🚀 x")
    edge = {}
    for label, text in [("empty", ""), ("spaces", "   \n\n  "), ("one_word", "word")]:
        for cls in (SentenceSplitter, TokenTextSplitter):
            nodes = cls(id_func=id_func).get_nodes_from_documents([Document(id_="e", text=text)])
            edge[f"{cls.__name__}_{label}"] = [n.to_dict() for n in nodes]
    out["edge"] = edge
    out["default_settings"] = {
        "SentenceSplitter": SentenceSplitter().to_dict(),
        "TokenTextSplitter": TokenTextSplitter().to_dict(),
    }
    dump("errors.json", out)


def gen_two_level():
    """Chunks of chunks: the second parse sees TextNodes with a Source."""
    doc = make_doc({"file": "data:multilingual.txt", "id": "root", "metadata": {"lang": "mixed"}})
    first = SentenceSplitter(chunk_size=128, chunk_overlap=16, id_func=id_func).get_nodes_from_documents([doc])
    second = TokenTextSplitter(chunk_size=32, chunk_overlap=4, id_func=id_func).get_nodes_from_documents(first)
    dump("two_level.json", {"first": [n.to_dict() for n in first], "second": [n.to_dict() for n in second]})


def gen_two_docs():
    """Two documents in one call: prev/next never crosses documents."""
    docs = [
        Document(id_="a", text="First document. It has two sentences.", metadata={"k": "a"}),
        Document(id_="b", text="Second document here. Also two sentences. And three.", metadata={"k": "b"}),
    ]
    nodes = SentenceSplitter(chunk_size=8, chunk_overlap=2, id_func=id_func).get_nodes_from_documents(docs)
    dump("two_docs.json", [n.to_dict() for n in nodes])


def gen_charclasses():
    """The character classes Punkt's regexes and str methods use, as ranges,
    so the Rust predicates can be checked against every code point."""
    import regex

    def ranges(pred):
        out, start = [], None
        for cp in range(0x110000):
            ok = not (0xD800 <= cp <= 0xDFFF) and pred(chr(cp))
            if ok and start is None:
                start = cp
            if not ok and start is not None:
                out.append([start, cp - 1])
                start = None
        if start is not None:
            out.append([start, 0x10FFFF])
        return out

    space = regex.compile(r"\s")
    word_nondigit = regex.compile(r"[^\W\d]")
    digit = regex.compile(r"\d")
    classes = {
        "regex_s": ranges(lambda c: space.match(c) is not None),
        "py_isspace": ranges(str.isspace),
        "regex_word_nondigit": ranges(lambda c: word_nondigit.match(c) is not None),
        "regex_d": ranges(lambda c: digit.match(c) is not None),
        "py_isupper": ranges(str.isupper),
        "py_islower": ranges(str.islower),
    }
    dump("charclasses.json", classes)

    # The classes whose Unicode version differs between the reference and
    # Rust's own tables become static tables in the Punkt module.
    tables = [
        ("WORD_NON_DIGIT", "regex_word_nondigit", "`[^\\W\\d]` of the `regex` module (letters and marks)"),
        ("DECIMAL_DIGIT", "regex_d", "`\\d` of the `regex` module"),
        ("UPPERCASE", "py_isupper", "Python's `str.isupper` on one character"),
        ("LOWERCASE", "py_islower", "Python's `str.islower` on one character"),
    ]
    lines = [
        "//! Character classes exactly as the Python reference sees them (Python",
        f"//! {sys.version.split()[0]} str methods, Unicode {unicodedata.unidata_version}; `regex` {regex.__version__}).",
        "//!",
        "//! Generated by tests/data/splitters/gen_splitters.py; do not edit. Rust's",
        "//! own tables follow another Unicode version and would classify characters",
        "//! assigned in recent versions differently from nltk.",
        "",
    ]
    for const, key, what in tables:
        lines.append(f"/// Inclusive code point ranges of {what}.")
        lines.append("#[rustfmt::skip]")
        lines.append(f"pub(super) static {const}: &[(u32, u32)] = &[")
        row = []
        for lo, hi in classes[key]:
            row.append(f"(0x{lo:x}, 0x{hi:x}),")
            if len(row) == 6:
                lines.append("    " + " ".join(row))
                row = []
        if row:
            lines.append("    " + " ".join(row))
        lines.append("];")
        lines.append("")
    out = HERE.parents[2] / "src" / "node_parser" / "punkt_tables.rs"
    out.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    print("wrote", out)


def gen_split_fuzz(n: int, seed: int):
    """Random mixed-script texts at small chunk sizes: both splitters'
    chunks and offsets."""
    rng = random.Random(seed)
    words = ["Hello", "world.", "Mr.", "the", "End!", "é", "東京", "。", "🚀", "U.S.", "e.g.",
             "12.5", "1,000", "Dr.", "Straße", "?", "—", "--", '"quoted."', "(paren.)",
             "a", "b", "c,", "d;", "x", "<|endoftext|>"]
    seps = [" ", " ", " ", "  ", "\n", "\n\n", "\n\n\n", "\t", "\r\n", "\u3000", ""]
    out = []
    for _ in range(n):
        text = "".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(1, 100)))
        if rng.random() < 0.2:
            text = "  " + text
        size = rng.randint(6, 60)
        overlap = rng.randint(0, size // 2)
        rec = {"text": text, "chunk_size": size, "chunk_overlap": overlap}
        for cls in (SentenceSplitter, TokenTextSplitter):
            nodes = cls(chunk_size=size, chunk_overlap=overlap).get_nodes_from_documents(
                [Document(text=text, id_="d")]
            )
            rec[cls.__name__] = [[n.text, n.start_char_idx, n.end_char_idx] for n in nodes]
        out.append(rec)
    dump("split_fuzz.json", out)


if __name__ == "__main__":
    gen_charclasses()
    gen_tokens()
    gen_punkt()
    dump("sentence_splitter.json", run_cases(SentenceSplitter, SENTENCE_KEYS, SENTENCE_CASES))
    dump("token_splitter.json", run_cases(TokenTextSplitter, TOKEN_KEYS, TOKEN_CASES))
    gen_errors()
    gen_two_level()
    gen_two_docs()
    gen_split_fuzz(150, 20251123)
