# Conformance checks of `ragloom serve`'s OpenAI-compatible routes, driven by the
# official `openai` Python client: python openai_client.py BASE_URL MODEL KEY [QUESTION]
"""Prints one line per check; exits 1 on the first failure, 2 on a usage error.

BASE_URL is like http://127.0.0.1:PORT/v1, MODEL an index name the server
serves, KEY a valid API key. QUESTION defaults to "Who is Alice?".
RAGLOOM_TEST_TIMEOUT (seconds, default 120) bounds each request.
"""

import os
import sys
import traceback

import openai

USAGE = "usage: python openai_client.py BASE_URL MODEL KEY [QUESTION]"


def extra(obj, key):
    """A field outside OpenAI's schema (ragloom's `sources`), or None when absent."""
    fields = getattr(obj, "model_extra", None) or {}
    if key in fields:
        return fields[key]
    return obj.to_dict().get(key)


def as_dict(item):
    return item if isinstance(item, dict) else item.to_dict()


def assert_sources(sources, where):
    assert isinstance(sources, list) and sources, f"{where}: `sources` should be a non-empty list, got {sources!r}"
    for i, passage in enumerate(sources):
        passage = as_dict(passage)
        for field in ("file", "node_id"):
            assert isinstance(passage.get(field), str) and passage[field], (
                f"{where}: sources[{i}] should have a non-empty string {field!r}, got {passage!r}"
            )


def assert_usage(usage, where):
    assert usage is not None, f"{where}: no `usage`"
    total = usage.prompt_tokens + usage.completion_tokens
    assert usage.total_tokens == total, (
        f"{where}: usage.total_tokens {usage.total_tokens} != prompt {usage.prompt_tokens} "
        f"+ completion {usage.completion_tokens}"
    )
    assert usage.total_tokens > 0, f"{where}: usage.total_tokens should be > 0, got {usage!r}"


def expect_error(call, error_class, status, code, err_type):
    """Runs `call`, which must raise `error_class` carrying ragloom's error envelope."""
    try:
        result = call()
    except error_class as err:
        assert err.status_code == status, f"status {err.status_code}, expected {status}"
        body = err.body
        assert isinstance(body, dict), f"err.body should be the envelope's `error` object, got {body!r}"
        envelope = err.response.json()
        assert isinstance(envelope.get("error"), dict), f"no `error` object in the body: {envelope!r}"
        assert isinstance(envelope["error"].get("code"), str), f"error.code should be a string: {envelope!r}"
        assert isinstance(body.get("message"), str) and body["message"], f"error.message should be a non-empty string: {body!r}"
        assert err.code == code, f"error.code {err.code!r}, expected {code!r} ({envelope!r})"
        assert err.type == err_type, f"error.type {err.type!r}, expected {err_type!r} ({envelope!r})"
        return f"{status} {err.code}"
    except openai.APIStatusError as err:
        raise AssertionError(
            f"expected {error_class.__name__} ({status}), got {type(err).__name__} "
            f"({err.status_code}): {err.response.text!r}"
        ) from None
    raise AssertionError(f"expected {error_class.__name__} ({status}), the call succeeded: {result!r}")


def main(argv):
    if len(argv) not in (4, 5):
        print(USAGE, file=sys.stderr)
        return 2
    base_url, model, key = argv[1], argv[2], argv[3]
    question = argv[4] if len(argv) == 5 else "Who is Alice?"
    timeout = float(os.environ.get("RAGLOOM_TEST_TIMEOUT", "120"))
    # No retries: a retried 429 or 500 would hide what the server answered.
    client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=timeout)
    bad_key_client = openai.OpenAI(base_url=base_url, api_key="not-a-ragloom-key", max_retries=0, timeout=timeout)
    user = [{"role": "user", "content": question}]
    state = {}

    def models_list():
        ids = [m.id for m in client.models.list()]
        assert model in ids, f"{model!r} not among the listed models {ids!r}"
        return f"{len(ids)} model(s)"

    def chat_non_streaming():
        resp = client.chat.completions.create(model=model, messages=user)
        assert resp.object == "chat.completion", f"object {resp.object!r}"
        assert len(resp.choices) == 1, f"expected one choice, got {resp.choices!r}"
        choice = resp.choices[0]
        assert choice.message.role == "assistant", f"role {choice.message.role!r}"
        content = choice.message.content
        assert isinstance(content, str) and content.strip(), f"empty answer: {content!r}"
        assert choice.finish_reason == "stop", f"finish_reason {choice.finish_reason!r}"
        assert_usage(resp.usage, "response")
        assert_sources(extra(resp, "sources"), "response")
        state["answer"] = content
        return f"{len(content)} chars, {len(extra(resp, 'sources'))} source(s), {resp.usage.total_tokens} tokens"

    def chat_streaming():
        stream = client.chat.completions.create(
            model=model, messages=user, stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
        assert chunks, "the stream had no chunks"
        for chunk in chunks:
            assert chunk.object == "chat.completion.chunk", f"chunk object {chunk.object!r}"
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert content.strip(), "the concatenated deltas are empty"
        stops = [i for i, c in enumerate(chunks) if c.choices and c.choices[0].finish_reason == "stop"]
        assert len(stops) == 1, f"expected exactly one chunk with finish_reason 'stop', got {len(stops)}"
        last = chunks[-1]
        assert last.choices == [], f"the last chunk should have choices == [], got {last.choices!r}"
        assert stops[0] < len(chunks) - 1, "the usage chunk should follow the 'stop' chunk"
        assert_usage(last.usage, "last chunk")
        with_sources = [extra(c, "sources") for c in chunks if extra(c, "sources") is not None]
        assert with_sources, "no chunk carries `sources`"
        for sources in with_sources:
            assert_sources(sources, "chunk")
        return f"{len(chunks)} chunks, {len(content)} chars"

    def chat_two_turns():
        previous = state.get("answer") or "Alice is someone in the documents."
        messages = user + [
            {"role": "assistant", "content": previous},
            {"role": "user", "content": "Tell me more about that."},
        ]
        resp = client.chat.completions.create(model=model, messages=messages)
        content = resp.choices[0].message.content
        assert isinstance(content, str) and content.strip(), f"empty answer: {content!r}"
        assert resp.choices[0].finish_reason == "stop", f"finish_reason {resp.choices[0].finish_reason!r}"
        return f"{len(content)} chars"

    def bad_key():
        a = expect_error(
            lambda: bad_key_client.models.list(),
            openai.AuthenticationError, 401, "invalid_api_key", "authentication_error",
        )
        b = expect_error(
            lambda: bad_key_client.chat.completions.create(model=model, messages=user),
            openai.AuthenticationError, 401, "invalid_api_key", "authentication_error",
        )
        return f"models: {a}; chat: {b}"

    def bad_body():
        a = expect_error(
            lambda: client.chat.completions.create(model=model, messages=[]),
            openai.BadRequestError, 400, "bad_request", "invalid_request_error",
        )
        b = expect_error(
            lambda: client.chat.completions.create(model=model, messages=[{"role": "banana", "content": question}]),
            openai.BadRequestError, 400, "bad_request", "invalid_request_error",
        )
        return f"no messages: {a}; role 'banana': {b}"

    def unknown_model():
        return expect_error(
            lambda: client.chat.completions.create(model=model + "-no-such-index", messages=user),
            openai.NotFoundError, 404, "model_not_found", "not_found_error",
        )

    checks = [
        ("models.list contains the model", models_list),
        ("chat completion", chat_non_streaming),
        ("streamed chat completion with usage", chat_streaming),
        ("two-turn conversation", chat_two_turns),
        ("bad key -> AuthenticationError", bad_key),
        ("bad body -> BadRequestError", bad_body),
        ("unknown model -> NotFoundError", unknown_model),
    ]
    for name, check in checks:
        try:
            detail = check()
        except AssertionError as err:
            print(f"FAIL {name}: {err}", flush=True)
            return 1
        except Exception:
            print(f"FAIL {name}: unexpected exception", flush=True)
            traceback.print_exc()
            return 1
        print(f"ok   {name}" + (f" ({detail})" if detail else ""), flush=True)
    print(f"all {len(checks)} OpenAI client checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
