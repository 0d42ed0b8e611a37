"""Records llama-index-core 0.14.25's response evaluators on scripted model
replies: every prompt each sends and the EvaluationResult it returns, for
ragloom's evaluation tests. `python gen_response_evaluators.py > response_evaluators.json`"""

import asyncio
import json
from typing import Any, List

import llama_index.core
from llama_index.core import Settings
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.evaluation import (
    AnswerRelevancyEvaluator,
    ContextRelevancyEvaluator,
    CorrectnessEvaluator,
    FaithfulnessEvaluator,
    GuidelineEvaluator,
    PairwiseComparisonEvaluator,
    RelevancyEvaluator,
    SemanticSimilarityEvaluator,
)
from llama_index.core.llms.custom import CustomLLM


class Scripted(CustomLLM):
    """Answers from a list, recording every prompt (completion) and chat."""

    replies: List[str] = []
    calls: List[Any] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=3900, num_output=256, model_name="scripted")

    def _next(self) -> str:
        return self.replies.pop(0) if self.replies else ""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.calls.append({"prompt": prompt})
        return CompletionResponse(text=self._next())

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        text = self.complete(prompt).text
        yield CompletionResponse(text=text, delta=text)

    def chat(self, messages, **kwargs: Any) -> ChatResponse:
        self.calls.append({"messages": [{"role": m.role.value, "content": m.content} for m in messages]})
        return ChatResponse(message=ChatMessage(role="assistant", content=self._next()))

    async def achat(self, messages, **kwargs: Any) -> ChatResponse:
        return self.chat(messages)


def result_dict(r) -> dict:
    d = r.model_dump()
    return {k: d.get(k) for k in ["query", "contexts", "response", "passing", "score", "feedback",
                                  "pairwise_source", "invalid_result", "invalid_reason"]}


QUERY = "What did the White Rabbit take out of its waistcoat-pocket?"
RESPONSE = "It took a watch out of its waistcoat-pocket."
CONTEXTS = [
    "The Rabbit actually took a watch out of its waistcoat-pocket, and looked at it, and then hurried on.",
    "Alice started to her feet, for it flashed across her mind that she had never before seen a rabbit with either a waistcoat-pocket, or a watch to take out of it.",
]
REFERENCE = "A watch."


def make(kind: str, llm: Scripted):
    if kind == "faithfulness":
        return FaithfulnessEvaluator(llm=llm)
    if kind == "relevancy":
        return RelevancyEvaluator(llm=llm)
    if kind == "correctness":
        return CorrectnessEvaluator(llm=llm)
    if kind == "guideline":
        return GuidelineEvaluator(llm=llm, guidelines="The response should name the object.")
    if kind == "pairwise":
        return PairwiseComparisonEvaluator(llm=llm)
    if kind == "answer_relevancy":
        return AnswerRelevancyEvaluator(llm=llm)
    if kind == "context_relevancy":
        return ContextRelevancyEvaluator(llm=llm)
    raise ValueError(kind)


SCENARIOS = [
    ("faithfulness", ["YES"], {}),
    ("faithfulness", ["NO"], {}),
    ("faithfulness", ["Maybe"], {}),
    ("relevancy", ["YES"], {}),
    ("relevancy", ["no, it is not"], {}),
    ("correctness", ["4.5\nThe answer is right and complete."], {"reference": REFERENCE}),
    ("correctness", ["2.0\nIt names the wrong object."], {"reference": REFERENCE}),
    ("correctness", ["The answer is fine."], {"reference": REFERENCE}),
    ("correctness", ["5\nNo reference, but it answers."], {}),
    ("guideline", ['{"passing": true, "feedback": "It names the watch."}'], {}),
    ("guideline", ['{"passing": false, "feedback": "It does not."}'], {}),
    ("pairwise", ["[[A]]", "[[B]]"], {"second_response": "A clock."}),
    ("pairwise", ["[[A]]", "[[A]]"], {"second_response": "A clock."}),
    ("pairwise", ["[[C]]", "[[C]]"], {"second_response": "A clock."}),
    ("pairwise", ["I cannot say.", "[[B]]"], {"second_response": "A clock."}),
    ("answer_relevancy", ["1. yes\n2. yes\n[RESULT] 2"], {}),
    ("answer_relevancy", ["The answer is somewhat relevant.\n[RESULT] 1"], {}),
    ("answer_relevancy", ["no result here"], {}),
    ("context_relevancy", ["1. yes\n2. partly\n[RESULT] 3"], {}),
    ("context_relevancy", ["[RESULT] 4.0"], {}),
    ("context_relevancy", ["nothing"], {}),
]


async def run() -> dict:
    Settings.embed_model = MockEmbedding(embed_dim=8)
    out = []
    for kind, replies, extra in SCENARIOS:
        llm = Scripted(replies=list(replies), calls=[])
        ev = make(kind, llm)
        kwargs = dict(query=QUERY, response=RESPONSE, contexts=CONTEXTS)
        kwargs.update(extra)
        try:
            r = await ev.aevaluate(**kwargs)
            result, error = result_dict(r), None
        except Exception as e:  # noqa: BLE001 - the error is recorded
            result, error = None, f"{type(e).__name__}: {e}"
        out.append({"evaluator": kind, "replies": replies, "inputs": kwargs, "calls": llm.calls,
                    "result": result, "error": error})
    sem = SemanticSimilarityEvaluator(embed_model=MockEmbedding(embed_dim=8))
    r = await sem.aevaluate(response=RESPONSE, reference=REFERENCE)
    out.append({"evaluator": "semantic_similarity", "inputs": {"response": RESPONSE, "reference": REFERENCE},
                "result": result_dict(r), "note": "MockEmbedding: every vector is [0.5] * 8"})
    return {"llama_index_core": llama_index.core.__version__, "scenarios": out}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run()), indent=1, ensure_ascii=False))
