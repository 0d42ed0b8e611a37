"""Records question generation on scripted model replies: llama-index-core
0.14.25's DatasetGenerator (prompts sent, questions kept, answers) and
llama-index-finetuning's generate_qa_embedding_pairs, for ragloom's tests.

    python gen_question_generation.py COMMON_PY > question_generation.json

COMMON_PY is llama_index/finetuning/embeddings/common.py from the
llama-index-finetuning 0.4.2 wheel (`pip download llama-index-finetuning==0.4.2
--no-deps`, then unzip): it is loaded on its own, because the package's
__init__ imports torch."""

import asyncio
import importlib.util
import json
import os
import sys
import tempfile
import warnings
from typing import Any, List

import llama_index.core
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.evaluation import DatasetGenerator
from llama_index.core.llms.custom import CustomLLM
from llama_index.core.schema import TextNode

warnings.simplefilter("ignore")


class Scripted(CustomLLM):
    """Answers from a list, recording every prompt."""

    replies: List[str] = []
    calls: List[Any] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=3900, num_output=256, model_name="scripted")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.calls.append(prompt)
        return CompletionResponse(text=self.replies.pop(0) if self.replies else "")

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        text = self.complete(prompt).text
        yield CompletionResponse(text=text, delta=text)

    def chat(self, messages, **kwargs: Any) -> ChatResponse:
        raise AssertionError("not a chat model")


NODES = [
    TextNode(id_="n1", text="Alice was beginning to get very tired of sitting by her sister on the bank.",
             metadata={"file_name": "alice29.txt"}),
    TextNode(id_="n2", text="The Rabbit actually took a watch out of its waistcoat-pocket.",
             metadata={"file_name": "alice29.txt"}),
]
GEN_REPLIES = [
    "1. Who was Alice sitting by?\n2) Where was she sitting?\n\n3 Why was she tired?\nExtra line",
    "  1. What did the Rabbit take out?  \n",
]


async def dataset_generator(num, with_answers):
    replies = list(GEN_REPLIES)
    if with_answers:
        replies += [f"Answer {i}." for i in range(1, 6)]
    llm = Scripted(replies=replies, calls=[])
    gen = DatasetGenerator(nodes=NODES, llm=llm, num_questions_per_chunk=3)
    if with_answers:
        ds = await gen.agenerate_dataset_from_nodes(num=num)
        questions = ds.questions
        answers = [ds.responses[k] for k in ds.queries]
    else:
        questions = await gen.agenerate_questions_from_nodes(num=num)
        answers = None
    return {"num": num, "with_answers": with_answers, "calls": llm.calls,
            "questions": questions, "answers": answers}


def qa_pairs(common_py: str) -> list:
    spec = importlib.util.spec_from_file_location("ft_common", common_py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = []
    for replies, per_chunk in [(list(GEN_REPLIES), 2), (["1. Only one?", "no numbers here\n\n"], 2)]:
        llm = Scripted(replies=replies, calls=[])
        with tempfile.TemporaryDirectory() as d:
            ds = mod.generate_qa_embedding_pairs(
                nodes=NODES, llm=llm, num_questions_per_chunk=per_chunk,
                output_path=os.path.join(d, "qa.json"), verbose=False)
        out.append({"num_questions_per_chunk": per_chunk, "replies": replies, "calls": llm.calls,
                    "questions": list(ds.queries.values()),
                    "relevant_docs": [ds.relevant_docs[k] for k in ds.queries],
                    "corpus": ds.corpus, "mode": ds.mode,
                    "keys": sorted(ds.model_dump().keys())})
    return out


async def run(common_py: str) -> dict:
    gens = []
    for num, with_answers in [(None, False), (2, False), (None, True)]:
        gens.append(await dataset_generator(num, with_answers))
    return {"llama_index_core": llama_index.core.__version__, "llama_index_finetuning": "0.4.2",
            "dataset_generator": gens, "qa_embedding_pairs": qa_pairs(common_py)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(sys.argv[1])), indent=1, ensure_ascii=False))
