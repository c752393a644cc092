"""The Space under concurrent load, over HTTP as its page calls it: the app
(``app.py``) runs in a child process on 127.0.0.1, and each client, a thread
with its own ``gradio_client.Client``, uploads its own files to the page's
``/analyse`` endpoint, all clients at once. Each request is either valid, on
data of its own (so that every client's answer differs), or one of the invalid
uploads below; what the page should show is computed in this process by the
same function the page calls (``app.analyse``), on the same files.

Each response is classed as

- ``right``: a valid request's answer equals the one computed here (status,
  headline, warnings, signature, histogram, bins, exposed items, and the three
  report files byte for byte);
- ``typed``: an invalid request's readable message, the one computed here (the
  upload's path on the server in place of the local one);
- ``refused``: the queue is full (gradio's "Queue is full" message);
- ``wrong``: any other answer or message (another client's, or a valid upload
  refused);
- ``untyped``: a generic or raw error (gradio's "has raised an exception", a
  traceback, a dropped connection);
- ``hang``: no answer within the bound.

``benchmarks/space_load.py`` is the command; ``tests/test_space_load.py`` runs a
smaller load."""

from __future__ import annotations

import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tame_mt_metric.cache.entries import CACHE_ENV
from tame_mt_metric.space import MAX_UPLOAD_LINES

REPO = Path(__file__).resolve().parent.parent
OUTCOMES = ("right", "typed", "refused", "wrong", "untyped", "hang")
# Each way an upload can be wrong, and the upload it spoils.
INVALID = {
    "mismatched lines": "references",
    "empty file": "hypotheses",
    "binary bytes": "training targets",
    "too many lines": "test sources",
    "wrong encoding": "references",
    "not gzip": "training sources",
    "no file": "hypotheses",
}
ROLES = ("training sources", "training targets", "test sources", "references", "hypotheses")
OPTIONS = (0.7, 0.3, False, "empty")  # near, far, lowercase, zero policy: the page's defaults
GENERIC = "has raised an exception"  # gradio's message for an exception it does not show


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class App:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def up(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def serve(
    folder: Path, space: Path = REPO, python: str = sys.executable, start_s: float = 120
) -> Iterator[App]:
    """``python app.py`` from ``space`` on a free port of 127.0.0.1, its output to
    a file in ``folder`` (a pipe nobody reads would stall a talkative server),
    stopped on leaving."""
    port = free_port()
    env = {
        **os.environ,
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    log = folder / f"app-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [python, "app.py"], cwd=space, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    app = App(f"http://127.0.0.1:{port}/", process, log)
    try:
        deadline = time.monotonic() + start_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert app.up(), app.output()
                assert time.monotonic() < deadline, f"the app did not start in {start_s:g} s"
                time.sleep(0.3)
        yield app
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass(frozen=True)
class Case:
    """One request: its files (``None`` where no file is sent), what the page
    should show, and the kind (``valid`` or a key of ``INVALID``)."""

    kind: str
    files: dict[str, list[Path] | None]
    expected: tuple[Any, ...]


def _sentence(rng: random.Random, words: list[str]) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(3, 9)))


def _write(path: Path, lines: list[str], encoding: str = "utf-8") -> Path:
    path.write_bytes("".join(line + "\n" for line in lines).encode(encoding))
    return path


def make_case(folder: Path, number: int, kind: str, seed: int) -> Case:
    """Request ``number``'s files in ``folder``, each named after the request (so
    that a message names whose file it is), on data of its own: its own
    vocabulary, sizes and system."""
    rng = random.Random(f"{seed}/{number}")
    words = [f"w{number}x{i}" for i in range(rng.randint(8, 20))] + ["the", "a", "house"]
    train = [(_sentence(rng, words), _sentence(rng, words)) for _ in range(rng.randint(20, 60))]
    n = rng.randint(5, 15)
    sources = [rng.choice(train)[0] if rng.random() < 0.4 else _sentence(rng, words)]
    sources += [_sentence(rng, words) for _ in range(n - 1)]
    references = [_sentence(rng, words) for _ in range(n)]
    hypotheses = [" ".join(r.split()[: rng.randint(1, 9)]) for r in references]
    texts: dict[str, list[str]] = {
        "training sources": [s for s, _ in train],
        "training targets": [t for _, t in train],
        "test sources": sources,
        "references": references,
        "hypotheses": hypotheses,
    }
    name = {role: f"c{number:03d}-{role.replace(' ', '-')}.txt" for role in ROLES}
    paths = {role: _write(folder / name[role], texts[role]) for role in ROLES}
    if kind == "mismatched lines":
        _write(folder / name["references"], references[:-1])
    elif kind == "empty file":
        (folder / name["hypotheses"]).write_bytes(b"")
    elif kind == "binary bytes":
        (folder / name["training targets"]).write_bytes(bytes(range(256)) * 4)
    elif kind == "too many lines":
        _write(folder / name["test sources"], ["a"] * (MAX_UPLOAD_LINES + 1))
    elif kind == "wrong encoding":
        _write(folder / name["references"], [f"{r} café déjà" for r in references], "latin-1")
    elif kind == "not gzip":
        plain = paths["training sources"]
        paths["training sources"] = plain.rename(plain.with_suffix(".gz"))
    files: dict[str, list[Path] | None] = {role: [paths[role]] for role in ROLES}
    if kind == "no file":
        files["hypotheses"] = None
    return Case(kind, files, expected_of(files))


def _arguments(files: dict[str, list[Path] | None], wrap: Any) -> list[Any]:
    """The page's inputs in ``analyse``'s order; references as a list, every other
    upload a single file."""
    from app import UPLOAD

    def one(role: str) -> Any:
        paths = files[role]
        return None if paths is None else wrap(paths[0])

    refs = files["references"]
    references = None if refs is None else [wrap(p) for p in refs]
    return [
        UPLOAD,
        one("training sources"),
        one("training targets"),
        one("test sources"),
        references,
        one("hypotheses"),
        *OPTIONS,
    ]


def expected_of(files: dict[str, list[Path] | None]) -> tuple[Any, ...]:
    """What the page shows for these files, computed here by the page's own
    function, with the report files read."""
    from app import analyse

    page: Callable[..., tuple[Any, ...]] = analyse  # with no gradio event: no progress bar
    shown = page(*_arguments(files, str), progress=lambda *_, **__: None)
    return _comparable(shown)


def _comparable(shown: tuple[Any, ...] | list[Any]) -> tuple[Any, ...]:
    """The outputs as values to compare: the histogram as its rows, a report file
    as its bytes."""
    out: list[Any] = list(shown[:4])
    histogram = shown[4]
    if histogram is None:
        out.append(None)
    elif isinstance(histogram, dict):  # as the client receives it
        out.append((list(histogram["columns"]), [list(r) for r in histogram["data"]]))
    else:  # a DataFrame
        out.append((list(histogram.columns), histogram.values.tolist()))
    out += shown[5:7]
    out += [None if f is None else Path(f).read_bytes() for f in shown[7:10]]
    return tuple(out)


def _unplaced(text: Any, case: Case) -> Any:
    """A message with each of the case's files named by its name alone, not by
    the folder it lies in (here a temporary one, on the server gradio's cache)."""
    if not isinstance(text, str):
        return text
    for paths in case.files.values():
        for path in paths or []:
            text = re.sub(r"/[^\s:]*/" + re.escape(path.name), path.name, text)
    return text


def classify(case: Case, answer: tuple[Any, ...] | None, error: BaseException | None) -> str:
    """The outcome of one request (see the module's doc)."""
    if isinstance(error, TimeoutError):
        return "hang"
    if error is not None:
        if "Queue is full" in str(error):
            return "refused"
        return "untyped"
    assert answer is not None
    texts = [a for a in answer if isinstance(a, str)]
    if any("Traceback" in t or GENERIC in t for t in texts):
        return "untyped"
    if case.kind == "valid":
        return "right" if answer == case.expected else "wrong"
    if answer[1:] != case.expected[1:]:  # an invalid request shows nothing but the message
        return "wrong"
    same = _unplaced(answer[0], case) == _unplaced(case.expected[0], case)
    return "typed" if same and str(answer[0]).startswith("**Could not score:**") else "wrong"


def kind_of(number: int) -> str:
    """Every other request valid, the others each kind of invalid upload in turn."""
    invalid = list(INVALID)
    return "valid" if number % 2 == 0 else invalid[(number // 2) % len(invalid)]


@dataclass
class Outcome:
    number: int
    kind: str
    outcome: str
    seconds: float
    detail: str = ""


def request(client: Any, case: Case, bound_s: float) -> tuple[str, str]:
    """One request to ``/analyse`` with the case's files, its answer classed; the
    detail says what came back when it is not the expected."""
    from gradio_client import handle_file

    job = client.submit(*_arguments(case.files, lambda p: handle_file(str(p))), api_name="/analyse")
    answer: tuple[Any, ...] | None = None
    error: BaseException | None = None
    try:
        answer = _comparable(job.result(timeout=bound_s))
    except TimeoutError as exc:
        job.cancel()
        error = exc
    except Exception as exc:  # what the client raises is what is classed
        error = exc
    outcome = classify(case, answer, error)
    if outcome in ("right", "typed"):
        return outcome, ""
    shown = answer[0] if answer is not None else f"{type(error).__name__}: {error}"
    return outcome, str(shown)[:300]


@dataclass
class Load:
    clients: int
    requests: int
    outcomes: list[Outcome]
    wall_s: float
    up_after: bool
    after: str  # the outcome of a valid request once the load is over

    def counts(self) -> Counter[str]:
        return Counter(o.outcome for o in self.outcomes)

    def row(self) -> str:
        c = self.counts()
        cells = [self.clients, self.requests, *(c[k] for k in OUTCOMES)]
        up = "yes" if self.up_after and self.after == "right" else "no"
        return "| " + " | ".join(map(str, cells)) + f" | {up} | {self.wall_s:.1f} s |"


HEADER = (
    "| clients | requests | right | typed error | refused | wrong | untyped | hang "
    "| up after | wall time |\n"
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: |"
)


def _client(url: str, folder: Path) -> Any:
    from gradio_client import Client

    return Client(url, verbose=False, download_files=str(folder))


def load(
    app: App,
    folder: Path,
    clients: int = 30,
    requests_per_client: int = 1,
    seed: int = 0,
    bound_s: float = 120,
) -> Load:
    """``clients`` threads, each with its own client, started together, each
    sending ``requests_per_client`` requests in turn; then one more valid request
    on a fresh client, to see that the app still answers."""
    total = clients * requests_per_client
    cases = []
    for number in range(total + 1):
        own = folder / f"request-{number:03d}"
        own.mkdir()
        cases.append(make_case(own, number, "valid" if number == total else kind_of(number), seed))
    outcomes: list[Outcome] = []
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)

    def one_client(index: int) -> None:
        downloads = folder / f"downloads-{index:03d}"
        downloads.mkdir()
        client, failure = None, ""
        try:
            client = _client(app.url, downloads)
        except Exception as exc:  # a client that cannot connect: each of its requests fails
            failure = f"{type(exc).__name__}: {exc}"
        finally:
            start.wait()
        try:
            for j in range(requests_per_client):
                number = index * requests_per_client + j
                began = time.monotonic()
                if client is None:
                    outcome, detail = "untyped", failure
                else:
                    outcome, detail = request(client, cases[number], bound_s)
                done = Outcome(
                    number, cases[number].kind, outcome, time.monotonic() - began, detail
                )
                with lock:
                    outcomes.append(done)
        finally:
            if client is not None:
                client.close()

    threads = [threading.Thread(target=one_client, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.monotonic()
    for thread in threads:
        thread.join(bound_s * requests_per_client + 60)
    wall = time.monotonic() - began
    answered = {o.number for o in outcomes}
    outcomes += [
        Outcome(n, cases[n].kind, "hang", wall, "no answer: the client did not finish")
        for n in range(total)
        if n not in answered
    ]
    up = app.up()
    after = "untyped"
    if up:
        downloads = folder / "downloads-after"
        downloads.mkdir()
        client = _client(app.url, downloads)
        try:
            after = request(client, cases[total], bound_s)[0]
        finally:
            client.close()
    return Load(clients, total, sorted(outcomes, key=lambda o: o.number), wall, up, after)


def run_load(
    clients: int, requests_per_client: int = 1, seed: int = 0, bound_s: float = 120
) -> tuple[Load, str]:
    """Start the app, load it, stop it: the load and the app's output. The app
    and this process share a cache folder of the run's own, so that an answer
    that came from the cache (one the expected answer left there) is seen."""
    old = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory(prefix="tame-mt-space-load-") as tmp:
        folder = Path(tmp)
        os.environ[CACHE_ENV] = str(folder / "cache")
        try:
            with serve(folder) as app:
                result = load(app, folder, clients, requests_per_client, seed, bound_s)
                return result, app.output()
        finally:
            if old is None:
                del os.environ[CACHE_ENV]
            else:
                os.environ[CACHE_ENV] = old
