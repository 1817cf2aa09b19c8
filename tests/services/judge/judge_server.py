"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the judge tests.

It serves /v1/chat/completions, /v1/files, /v1/files/{id}/content and /v1/batches with
answers computed from the prompt by an oracle, counts every request, and misbehaves on
demand: 429 with Retry-After, 500, slow replies (client timeouts), malformed JSON, 401,
any JSON body as a 200 reply.
"""

from __future__ import annotations

import email.parser
import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def oracle(prompt: str) -> dict[str, Any]:
    """Deterministic, valid judge output for any of the shipped prompts.

    trace: relevant = document sentences whose key ends in 'a'; utilized = the first
    document sentence; every response sentence supported by the first document
    sentence except sentence 'b' (unsupported).
    """
    blocks = re.findall(r"```\n(.*?)\n```", prompt, re.S)
    doubtful = "DOUBT EVERYTHING" in prompt  # a second prompt: nothing supported, nothing used
    doc_keys = re.findall(r"^(\d+[a-z]+)\. ", prompt, re.M)
    if "all_relevant_sentence_keys" in prompt:
        resp_keys = re.findall(r"^([a-z]+)\. ", blocks[2], re.M)
        info = [
            {
                "response_sentence_key": k,
                "explanation": "…",
                "supporting_sentence_keys": [] if k == "b" or doubtful else [doc_keys[0]],
                "fully_supported": k != "b" and not doubtful,
            }
            for k in resp_keys
        ]
        return {
            "relevance_explanation": "…",
            "all_relevant_sentence_keys": [k for k in doc_keys if k.endswith("a")],
            "overall_supported_explanation": "…",
            "overall_supported": "b" not in resp_keys,
            "sentence_support_information": info,
            "all_utilized_sentence_keys": [] if doubtful else doc_keys[:1],
        }
    if '"idk"' in prompt:  # the last fenced block is the response
        return {"explanation": "…", "idk": "yes" if "don't know" in blocks[-1] else "no"}
    if '"rejected"' in prompt:
        return {
            "explanation": "…",
            "rejected": "insufficient information" in blocks[-1],
            "error_detected": "factual errors" in blocks[-1],
        }
    if '"facts"' in prompt:
        block = prompt.rsplit("Atomic facts (key. text):", 1)[1]
        keys = re.findall(r"^(f\d+)\. ", block, re.M)
        if keys:
            return {"facts": [{"key": k, "text": "", "label": "S"} for k in keys]}
        resp = re.findall(r"^([a-z]+)\. (.*)$", blocks[2], re.M)
        return {
            "facts": [
                {"key": None, "text": text, "sentence": k, "label": "NS" if k == "b" else "S"}
                for k, text in resp
            ]
        }
    raise AssertionError("the oracle does not know this prompt")


@dataclass
class Rule:
    """Misbehave ``times`` times on chat requests whose prompt contains ``match``."""

    fault: str  # 429 | 500 | slow | malformed | 401 | bad-json-body | reply
    match: str = ""
    times: int = 1
    retry_after: str | None = None
    delay: float = 0.0
    echo_auth: bool = False
    body: Any = None  # "reply": this JSON, with HTTP 200, whatever its shape
    message: str | None = None  # the error message of a 429/500/401 (default "injected …")


@dataclass
class State:
    rules: list[Rule] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)  # every request seen
    chat_prompts: list[str] = field(default_factory=list)  # first message of each chat call
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    hold_after: int | None = None  # chat calls after this many wait for ``release``
    release: threading.Event = field(default_factory=threading.Event)
    # replaces the oracle: (prompt, how many times this prompt was asked before) -> reply
    answer: Any = None

    def chat_count(self) -> int:
        return sum(1 for r in self.requests if r["path"].endswith("/chat/completions"))


# log-probabilities the server gives, per token; every other token gets -0.01
TOKEN_LOGPROBS = {"true": -0.25, "false": -1.5, "yes": -0.75, "no": -2.0}


def token_logprobs(content: str) -> dict[str, Any]:
    """The ``logprobs`` of a choice: the content cut into word, space and punctuation
    tokens (which spell it exactly), each with a fixed log-probability."""
    tokens = re.findall(r"\w+|\s+|[^\w\s]", content)
    return {
        "content": [
            {"token": t, "logprob": TOKEN_LOGPROBS.get(t, -0.01), "bytes": list(t.encode()),
             "top_logprobs": []}
            for t in tokens
        ]
    }  # fmt: skip


def completion(model: str, content: str, prompt: str, logprobs: bool = False) -> dict[str, Any]:
    p_tok, c_tok = len(prompt) // 4, len(content) // 4
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": "stop",
    }
    if logprobs:
        choice["logprobs"] = token_logprobs(content)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": p_tok,
            "completion_tokens": c_tok,
            "total_tokens": p_tok + c_tok,
        },
    }


class Handler(BaseHTTPRequestHandler):
    state: State
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _log(self, body: bytes) -> None:
        with self.state.lock:
            self.state.requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "auth": self.headers.get("Authorization"),
                    "at": time.monotonic(),
                    "body": body,
                }
            )

    def do_GET(self) -> None:  # noqa: N802
        self._log(b"")
        m = re.fullmatch(r"/v1/files/([^/]+)/content", self.path)
        if m and m.group(1) in self.state.files:
            self._send(200, self.state.files[m.group(1)])
            return
        m = re.fullmatch(r"/v1/batches/([^/]+)", self.path)
        if m and m.group(1) in self.state.batches:
            self._send(200, self.state.batches[m.group(1)])
            return
        self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self._log(body)
        if self.path.endswith("/chat/completions"):
            self._chat(json.loads(body))
        elif self.path == "/v1/files":
            self._upload(body)
        elif self.path == "/v1/batches":
            self._create_batch(json.loads(body))
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _rule(self, prompt: str) -> Rule | None:
        with self.state.lock:
            for rule in self.state.rules:
                if rule.times > 0 and rule.match in prompt:
                    rule.times -= 1
                    return rule
        return None

    def _chat(self, req: dict[str, Any]) -> None:
        prompt = req["messages"][0]["content"]
        with self.state.lock:
            self.state.chat_prompts.append(prompt)
            held = self.state.hold_after is not None and (
                len(self.state.chat_prompts) > self.state.hold_after
            )
        if held:
            self.state.release.wait(30)
        rule = self._rule(prompt)
        if rule is not None:
            if rule.fault == "slow":
                time.sleep(rule.delay)
            elif rule.fault in ("429", "500", "401"):
                headers = {"Retry-After": rule.retry_after} if rule.retry_after else {}
                message = rule.message or f"injected {rule.fault}"
                if rule.echo_auth:  # a careless server repeating the credentials
                    message += f" for {self.headers.get('Authorization')}"
                self._send(int(rule.fault), {"error": {"message": message}}, headers)
                return
            elif rule.fault == "bad-json-body":  # a broken proxy: HTTP 200, not JSON
                self._send(200, b'{"id": "chatcmpl-1", "choices": [')
                return
            elif rule.fault == "reply":
                self._send(200, rule.body)
                return
            elif rule.fault == "malformed":
                self._send(200, completion(req["model"], "Sure! {not json", prompt))
                return
        if self.state.answer is not None:
            with self.state.lock:
                asked = self.state.chat_prompts[:-1].count(prompt)
            content = json.dumps(self.state.answer(prompt, asked))
        else:
            content = json.dumps(oracle(prompt))
        self._send(200, completion(req["model"], content, prompt, bool(req.get("logprobs"))))

    def _upload(self, body: bytes) -> None:
        head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser().parsebytes(head + body)
        parts = {
            p.get_param("name", header="content-disposition"): p for p in message.get_payload()
        }
        data = parts["file"].get_payload(decode=True)
        with self.state.lock:
            file_id = f"file-{len(self.state.files) + 1}"
            self.state.files[file_id] = data
        self._send(
            200,
            {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": 0,
                "filename": parts["file"].get_filename(),
                "purpose": parts["purpose"].get_payload(),
                "status": "processed",
            },
        )

    def _create_batch(self, req: dict[str, Any]) -> None:
        with self.state.lock:
            batch_id = f"batch-{len(self.state.batches) + 1}"
            batch = {
                "id": batch_id,
                "object": "batch",
                "endpoint": req["endpoint"],
                "completion_window": req["completion_window"],
                "created_at": 0,
                "input_file_id": req["input_file_id"],
                "status": "validating",
                "metadata": req.get("metadata"),
            }
            self.state.batches[batch_id] = batch
        self._send(200, batch)


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (the CLI after a refusal, a retry that gave up) is no
    error of the server's: socketserver would print its traceback to stderr, which the
    CLI tests that run in this process read as the CLI's own."""

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class JudgeServer:
    def __init__(self) -> None:
        self.state = State()
        handler = type("BoundHandler", (Handler,), {"state": self.state})
        self.httpd = _QuietServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def inject(self, fault: str, match: str = "", times: int = 1, **kw: Any) -> None:
        with self.state.lock:
            self.state.rules.append(Rule(fault, match, times, **kw))

    def complete_batches(self, status: str = "completed", drop: str | None = None) -> None:
        """Run every submitted batch through the oracle (and the injected rules); with
        ``drop``, requests whose prompt contains it get no output line (as when a batch
        expires half done)."""
        for batch in self.state.batches.values():
            lines, errors = [], []
            for raw in self.state.files[batch["input_file_id"]].splitlines():
                item = json.loads(raw)
                prompt = item["body"]["messages"][0]["content"]
                if drop is not None and drop in prompt:
                    continue
                rule = self._rule_for(prompt)
                if rule is not None and rule.fault == "500":
                    errors.append(
                        {
                            "id": "r",
                            "custom_id": item["custom_id"],
                            "response": None,
                            "error": {"code": "server_error", "message": "injected"},
                        }
                    )
                    continue
                content = "not json" if rule is not None else json.dumps(oracle(prompt))
                body = completion(
                    item["body"]["model"], content, prompt, bool(item["body"].get("logprobs"))
                )
                lines.append(
                    {
                        "id": "r",
                        "custom_id": item["custom_id"],
                        "error": None,
                        "response": {"status_code": 200, "request_id": "q", "body": body},
                    }
                )
            out_id, err_id = f"file-out-{batch['id']}", f"file-err-{batch['id']}"
            self.state.files[out_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
            self.state.files[err_id] = "".join(json.dumps(x) + "\n" for x in errors).encode()
            batch.update(
                status=status, output_file_id=out_id, error_file_id=err_id if errors else None
            )

    def _rule_for(self, prompt: str) -> Rule | None:
        for rule in self.state.rules:
            if rule.times > 0 and rule.match in prompt:
                rule.times -= 1
                return rule
        return None

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.state.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
