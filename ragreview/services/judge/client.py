"""Talking to an OpenAI-compatible endpoint: configuration, the key, retries with backoff.

The openai client's own retries are switched off (``max_retries=0``) so that backoff,
jitter and ``Retry-After`` are ours, visible and tested. The API key lives only in the
client object: it is never put in a ``JudgeConfig`` field that could be stored or printed.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
NO_KEY = "no-key"  # local servers (llama.cpp, Ollama, vLLM) accept any key


class JudgeAbort(Exception):
    """The whole run must stop (bad key, unknown model): every record would fail alike."""


class RequestFailed(Exception):
    """One request failed for good (retries ran out, or the server refused it)."""


@dataclass
class JudgeConfig:
    model: str
    base_url: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    task: str = "auto"
    concurrency: int = 4
    max_retries: int = 5
    timeout: float = 120.0
    templates: dict[str, str] = field(default_factory=dict)  # task -> prompt template
    only_missing: bool = False
    use_cache: bool = True
    temperature: float = 0.0
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    retry_after_max: float = 120.0  # a server asking for longer gets this (and is told)
    price_in: float = 0.0  # per million prompt tokens
    price_out: float = 0.0  # per million completion tokens
    logprobs: bool = False  # ask for token log-probabilities (stored per verdict)
    # more for the run to record (a repeat's first run, an align run's folds)
    extra_params: dict[str, object] = field(default_factory=dict)

    def params(self) -> dict[str, object]:
        """What a run records of how it asked (never the key, its variable or headers)."""
        return {
            "task": self.task,
            "temperature": self.temperature,
            "logprobs": self.logprobs,
            "only_missing": self.only_missing,
            "use_cache": self.use_cache,
            **self.extra_params,
        }


@dataclass
class Stats:
    total: int = 0  # records in scope
    done: int = 0
    requests: int = 0  # HTTP attempts, including failed ones
    cached: int = 0
    labelled: int = 0
    errors: int = 0
    skipped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0  # requests tried again (a 429, a 500, a timeout, a malformed reply)
    # why, as the progress shows it: {"429": 2, "500": 1, "timeout": 1}
    retried: dict[str, int] = field(default_factory=dict)

    def retry_summary(self) -> str:
        """``3 retries (429 ×2, 500 ×1)``; empty without retries."""
        if not self.retries:
            return ""
        why = ", ".join(f"{k} ×{n}" for k, n in sorted(self.retried.items()))
        return f"{self.retries} {'retry' if self.retries == 1 else 'retries'} ({why})"

    def cost(self, config: JudgeConfig) -> float:
        return (
            self.prompt_tokens * config.price_in + self.completion_tokens * config.price_out
        ) / 1e6

    def as_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if isinstance(v, int)}


def api_key(config: JudgeConfig) -> str:
    key = os.environ.get(config.api_key_env)
    if key:
        return key
    if config.base_url:
        return NO_KEY
    raise JudgeAbort(
        f"no API key: set {config.api_key_env}"
        + (
            ""
            if config.api_key_env != DEFAULT_KEY_ENV
            else " (or choose a variable with --api-key-env)"
        )
    )


def async_client(config: JudgeConfig) -> Any:
    import openai

    return openai.AsyncOpenAI(
        api_key=api_key(config),
        base_url=config.base_url or None,
        max_retries=0,
        timeout=config.timeout,
    )


def sync_client(config: JudgeConfig) -> Any:
    import openai

    return openai.OpenAI(
        api_key=api_key(config),
        base_url=config.base_url or None,
        max_retries=config.max_retries,
        timeout=config.timeout,
    )


def retry_after(headers: Any) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, then ``retry-after``
    (seconds or an HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def backoff_delay(
    attempt: int,
    server_wait: float | None,
    config: JudgeConfig,
    rng: Callable[[float, float], float] = random.uniform,
) -> float:
    """How long to wait before retry number ``attempt + 1``.

    With ``Retry-After`` we wait at least that long (plus up to 10 % so that many
    workers told the same time do not return together), but never past
    ``retry_after_max``: ``Retry-After: 100000`` would otherwise stall a record for a
    day. Otherwise exponential backoff with equal jitter: between half and all of
    ``base * 2**attempt``, capped.
    """
    if server_wait is not None:
        wait = min(server_wait, config.retry_after_max)
        return min(wait + rng(0.0, wait * 0.1), config.retry_after_max)
    ceiling = min(config.backoff_max, config.backoff_base * 2**attempt)
    return rng(ceiling / 2, ceiling)


def scrub(text: str, config: JudgeConfig) -> str:
    """Server-supplied text with our key masked, should a server echo it back: error
    messages are stored and printed, the key must never be."""
    key = os.environ.get(config.api_key_env)
    return text.replace(key, "***") if key and len(key) >= 4 else text


def _cause(err: Exception) -> str:
    """A retry's cause in a word: the HTTP status, else ``timeout`` / ``connection`` /
    ``malformed``."""
    code = getattr(err, "status_code", None)
    if isinstance(code, int):
        return str(code)
    name = type(err).__name__
    if "Timeout" in name:
        return "timeout"
    if "Connection" in name:
        return "connection"
    return "malformed"


def _classify(err: Exception) -> tuple[str, float | None, str]:
    """(retry | fail | abort, server wait, description) for an openai exception."""
    import openai

    if isinstance(err, openai.APITimeoutError):
        return "retry", None, "timed out"
    if isinstance(err, openai.APIConnectionError):
        return "retry", None, f"connection failed ({err})"
    if isinstance(err, openai.APIStatusError):
        code = err.status_code
        wait = retry_after(err.response.headers)
        text = f"HTTP {code}: {_brief(err)}"
        if code in (408, 409, 429) or code >= 500:
            return "retry", wait, text
        if code in (401, 403, 404):
            return "abort", None, text
        return "fail", None, text
    if isinstance(err, MalformedReply):
        return "retry", None, f"malformed reply from the server: {err}"
    if isinstance(err, (openai.APIResponseValidationError, ValueError)):
        # HTTP 200 whose body is not a chat completion (a proxy's error page, a cut-off
        # body): the client raises the JSON decoder's error. Transient: try again.
        return "retry", None, f"unreadable response from the server ({type(err).__name__})"
    raise err


def _brief(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:200]
    return str(getattr(err, "message", err))[:200]


class MalformedReply(ValueError):
    """HTTP 200 whose JSON is not a chat completion (``"choices": "oops"``, a null
    message, content that is not text)."""


def _tokens(value: Any) -> int:
    """A token count as the server gave it, or 0 when it is not a sensible number
    (a string, null, NaN: Python's JSON parser accepts ``NaN`` and ``Infinity``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if math.isfinite(value) and value > 0 else 0


def reply_parts(resp: Any) -> tuple[str | None, int, int]:
    """(content, prompt tokens, completion tokens) of a chat completion. The openai
    client does not validate replies, so every level is checked here; a reply of the
    wrong shape raises ``MalformedReply``. No choice at all is an empty reply (None)."""
    usage = getattr(resp, "usage", None)
    p_tok = _tokens(getattr(usage, "prompt_tokens", 0))
    c_tok = _tokens(getattr(usage, "completion_tokens", 0))
    choices = getattr(resp, "choices", None)
    if choices is None or choices == []:
        return None, p_tok, c_tok
    if not isinstance(choices, list):
        raise MalformedReply("choices is not a list")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise MalformedReply("choices[0] has no message")
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        raise MalformedReply("the message content is not text")
    return content, p_tok, c_tok


Tokens = list[tuple[str, float]]  # (token text, log-probability) of a reply, in order


def token_logprobs(choice: Any) -> Tokens | None:
    """The reply's tokens with their log-probabilities, from a choice's ``logprobs``
    (an object from the openai client or a dict from a batch file); None when the
    endpoint gave none or gave them in a shape we do not know."""
    lp = choice.get("logprobs") if isinstance(choice, dict) else getattr(choice, "logprobs", None)
    content = lp.get("content") if isinstance(lp, dict) else getattr(lp, "content", None)
    if not isinstance(content, list) or not content:
        return None
    out: Tokens = []
    for item in content:
        get = item.get if isinstance(item, dict) else (lambda k, i=item: getattr(i, k, None))
        token, logprob = get("token"), get("logprob")
        if not isinstance(token, str) or isinstance(logprob, bool):
            return None
        if not isinstance(logprob, (int, float)) or not math.isfinite(logprob):
            return None
        out.append((token, float(logprob)))
    return out


Waiting = Callable[[float, str], None]  # (seconds, why): a long wait is shown, not silent
SHOWN_WAIT = 2.0  # seconds; shorter back-offs pass unannounced


async def chat(
    client: Any,
    config: JudgeConfig,
    messages: list[dict[str, str]],
    stats: Stats,
    on_wait: Waiting | None = None,
) -> tuple[str | None, int, int, Tokens | None]:
    """One chat completion with retries. Returns (content, prompt tokens, completion
    tokens, token log-probabilities when asked for and given).

    ``on_wait`` hears of every wait of ``SHOWN_WAIT`` seconds or more before a retry."""
    attempt = 0
    while True:
        stats.requests += 1
        try:
            extra = {"logprobs": True} if config.logprobs else {}
            resp = await client.chat.completions.create(
                model=config.model, messages=messages, temperature=config.temperature, **extra
            )
            content, p_tok, c_tok = reply_parts(resp)
        except Exception as err:  # noqa: BLE001 - classified below, unknown ones re-raised
            action, wait, text = _classify(err)
            text = scrub(text, config)
            if action == "abort":
                raise JudgeAbort(
                    f"{config.base_url or 'OpenAI'} refused the request: {text}"
                ) from None
            if action == "fail" or attempt >= config.max_retries:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise RequestFailed(f"{text}{tries}") from None
            stats.retries += 1
            cause = _cause(err)
            stats.retried[cause] = stats.retried.get(cause, 0) + 1
            delay = backoff_delay(attempt, wait, config)
            if on_wait is not None and delay >= SHOWN_WAIT:
                on_wait(delay, text)
            await asyncio.sleep(delay)
            attempt += 1
            continue
        stats.prompt_tokens += p_tok
        stats.completion_tokens += c_tok
        tokens = token_logprobs(resp.choices[0]) if config.logprobs and content else None
        return content, p_tok, c_tok, tokens
