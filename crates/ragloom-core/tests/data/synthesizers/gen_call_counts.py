"""Records how many LLM calls llama-index-core 0.14.25 makes per ResponseMode.

Input: 10 chunks of 500 cl100k tokens cut from the public-domain
`alice29.txt`, a MockLLM whose metadata says context_window=4096 and
num_output=max_tokens (MockLLM answers "text" max_tokens times). Output
(`call_counts.json`): the chunks, and per scenario the calls in order (which
template, streaming or not, prompt sha256 and token count) and the answer's
sha256, length and first characters (or the error raised).

Run: /tmp/li/bin/python gen_call_counts.py   (from this folder)
"""

import hashlib
import json
import os
import sys
from typing import Any

from llama_index.core.base.llms.types import (
    CompletionResponse,
    LLMMetadata,
)
from llama_index.core.llms.mock import MockLLM
from llama_index.core.response_synthesizers import (
    ResponseMode,
    get_response_synthesizer,
)
from llama_index.core.settings import Settings
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.core.indices.prompt_helper import PromptHelper
from llama_index.core.prompts.default_prompts import DEFAULT_TEXT_QA_PROMPT

HERE = os.path.dirname(os.path.abspath(__file__))


def corpus_file() -> str:
    """`alice29.txt` from `$RAGLOOM_CORPUS_DIR` or the nearest `shared/corpus` above."""
    env = os.environ.get("RAGLOOM_CORPUS_DIR")
    dirs = [env] if env else []
    d = HERE
    while os.path.dirname(d) != d:
        dirs.append(os.path.join(d, "shared", "corpus"))
        d = os.path.dirname(d)
    for cand in dirs:
        path = os.path.join(cand, "sources", "alice29.txt")
        if os.path.isfile(path):
            return path
    sys.exit("shared/corpus/sources/alice29.txt not found; set RAGLOOM_CORPUS_DIR")

CONTEXT_WINDOW = 4096
NUM_CHUNKS = 10
CHUNK_TOKENS = 500
QUERY = "What did Alice see when she fell down the rabbit-hole?"

from llama_index.core.utils import get_tokenizer

# LlamaIndex's tokenizer (cl100k_base from its bundled cache), as PromptHelper counts.
_tokenize = get_tokenizer()


class _Enc:
    encode = staticmethod(_tokenize)


enc = _Enc()


def make_chunks() -> list[str]:
    with open(corpus_file(), encoding="utf-8") as f:
        text = f.read()
    words = text[text.index("Alice was beginning") :].split()
    chunks, current = [], []
    for w in words:
        candidate = " ".join(current + [w])
        if len(enc.encode(candidate)) > CHUNK_TOKENS:
            chunks.append(" ".join(current))
            current = [w]
            if len(chunks) == NUM_CHUNKS:
                break
        else:
            current.append(w)
    return chunks


def kind(prompt: str) -> str:
    if prompt.startswith("Context information is below."):
        return "text_qa"
    if prompt.startswith("The original query is as follows:"):
        return "refine"
    if prompt.startswith("Context information from multiple sources is below."):
        return "summary"
    if prompt == QUERY:
        return "simple"
    return "other"


class RecordingMockLLM(MockLLM):
    """MockLLM with a 4096-token window that records every completion."""

    calls: list = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=CONTEXT_WINDOW,
            num_output=self.max_tokens or -1,
            is_chat_model=False,
        )

    def _record(self, prompt: str, stream: bool) -> None:
        type(self).calls.append(
            {
                "template": kind(prompt),
                "stream": stream,
                "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(),
                "prompt_tokens": len(enc.encode(prompt)),
            }
        )

    def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
        self._record(prompt, False)
        return super().complete(prompt, formatted, **kw)

    def stream_complete(self, prompt: str, formatted: bool = False, **kw: Any):
        self._record(prompt, True)
        return super().stream_complete(prompt, formatted, **kw)


def run(mode: ResponseMode, max_tokens: int, chunks: list[str], **opts: Any) -> dict:
    RecordingMockLLM.calls = []
    llm = RecordingMockLLM(max_tokens=max_tokens)
    # NoText and ContextOnly take no LLM and would otherwise resolve OpenAI.
    Settings.llm = llm
    synth = get_response_synthesizer(llm=llm, response_mode=mode, **opts)
    nodes = [NodeWithScore(node=TextNode(text=c, id_=f"n{i}")) for i, c in enumerate(chunks)]
    out: dict = {"mode": mode.value, "max_tokens": max_tokens, "options": opts}
    try:
        response = synth.synthesize(QUERY, nodes)
        if opts.get("streaming") and hasattr(response, "response_gen"):
            text = "".join(response.response_gen)
        else:
            text = response.response
        # Answers run to 10,000 words; a digest and the start say enough.
        out["response_sha256"] = hashlib.sha256(text.encode()).hexdigest()
        out["response_chars"] = len(text)
        out["response_head"] = text[:60]
    except Exception as e:  # noqa: BLE001 - the error is the expectation
        out["error"] = str(e)
    out["calls"] = RecordingMockLLM.calls
    if mode == ResponseMode.SIMPLE_SUMMARIZE:
        # SimpleSummarize formats the truncated chunk *list* into the prompt
        # (its Python repr); record the prompt with the text itself too.
        helper = PromptHelper.from_llm_metadata(llm.metadata)
        qa = DEFAULT_TEXT_QA_PROMPT.partial_format(query_str=QUERY)
        truncated = helper.truncate(qa, ["\n".join(chunks)])
        text_prompt = qa.format(context_str=truncated[0])
        out["text_prompt_sha256"] = hashlib.sha256(text_prompt.encode()).hexdigest()
    return out


def main() -> None:
    chunks = make_chunks()
    assert len(chunks) == NUM_CHUNKS
    scenarios = []
    for max_tokens in (256, 1000):
        for mode in ResponseMode:
            scenarios.append(run(mode, max_tokens, chunks))
        for mode in (
            ResponseMode.REFINE,
            ResponseMode.COMPACT,
            ResponseMode.TREE_SUMMARIZE,
            ResponseMode.SIMPLE_SUMMARIZE,
            ResponseMode.GENERATION,
            ResponseMode.ACCUMULATE,
        ):
            scenarios.append(run(mode, max_tokens, chunks, streaming=True))
        for mode in (ResponseMode.TREE_SUMMARIZE, ResponseMode.ACCUMULATE,
                     ResponseMode.COMPACT_ACCUMULATE):
            scenarios.append(run(mode, max_tokens, chunks, use_async=True))
        for mode in (ResponseMode.REFINE, ResponseMode.COMPACT):
            # MockLLM's "text text ..." is not JSON: every structured answer
            # fails to parse and is dropped, so each chunk is asked with the QA prompt.
            scenarios.append(run(mode, max_tokens, chunks, structured_answer_filtering=True))

    from llama_index.core.prompts import default_prompt_selectors as sel
    from llama_index.core.prompts.default_prompts import DEFAULT_SIMPLE_INPUT_PROMPT

    def chat_form(selector) -> list:
        chat = selector.conditionals[-1][1]
        return [[m.role.value, m.content] for m in chat.message_templates]

    prompts = {
        "text_qa_template": {
            "default": sel.DEFAULT_TEXT_QA_PROMPT_SEL.default_template.template,
            "chat": chat_form(sel.DEFAULT_TEXT_QA_PROMPT_SEL),
        },
        "refine_template": {
            "default": sel.DEFAULT_REFINE_PROMPT_SEL.default_template.template,
            "chat": chat_form(sel.DEFAULT_REFINE_PROMPT_SEL),
        },
        "summary_template": {
            "default": sel.DEFAULT_TREE_SUMMARIZE_PROMPT_SEL.default_template.template,
            "chat": chat_form(sel.DEFAULT_TREE_SUMMARIZE_PROMPT_SEL),
        },
        "simple_template": {"default": DEFAULT_SIMPLE_INPUT_PROMPT.template, "chat": None},
    }

    data = {
        "default_prompts": prompts,
        "generator": "gen_call_counts.py, llama-index-core 0.14.25",
        "context_window": CONTEXT_WINDOW,
        "query": QUERY,
        "chunks": chunks,
        "chunk_tokens": [len(enc.encode(c)) for c in chunks],
        "scenarios": scenarios,
    }
    with open(os.path.join(HERE, "call_counts.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    for s in scenarios:
        print(s["mode"], s["max_tokens"], s["options"], len(s["calls"]),
              [c["template"] for c in s["calls"]], s.get("error", ""))


if __name__ == "__main__":
    main()
