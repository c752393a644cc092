"""The Space (``app.py``) under concurrent load on 127.0.0.1: N clients at once,
each its own ``gradio_client.Client`` uploading its own files to the page's
``/analyse`` endpoint, every other request valid (data of its own, so that each
client's answer differs) and the others invalid uploads (mismatched line counts,
an empty file, binary bytes, more lines than the Space reads, Latin-1 text, a
``.gz`` that is not gzip, a missing file). Each answer is checked against the
page's own function run here on the same files; each request has a time bound.
Then one more valid request, to see that the app still answers. Prints the
Markdown table of the run (and each request that was not right or typed).

    python benchmarks/space_load.py [--clients 30] [--requests-per-client 1] [--seed 0]

The classes and the app's start are in ``tests/space_load.py``, which the test
(``tests/test_space_load.py``) runs with fewer clients."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.space_load import HEADER, run_load  # the repository's root, just added


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=30, help="clients at once (30)")
    parser.add_argument(
        "--requests-per-client", type=int, default=1, help="requests each, in turn (1)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every client's data (0)")
    parser.add_argument("--bound", type=float, default=120, help="seconds a request may take (120)")
    args = parser.parse_args()
    if args.clients < 1 or args.requests_per_client < 1:
        parser.error("--clients and --requests-per-client must be at least 1")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    result, output = run_load(args.clients, args.requests_per_client, args.seed, args.bound)
    print(HEADER)
    print(result.row())
    slowest = max(o.seconds for o in result.outcomes)
    print(f"\nslowest request {slowest:.1f} s; after the load: {result.after}")
    for o in result.outcomes:
        if o.outcome not in ("right", "typed"):
            print(f"request {o.number} ({o.kind}): {o.outcome}: {o.detail}")
    tracebacks = output.count("Traceback")
    if tracebacks:
        print(f"\nthe app's output holds {tracebacks} traceback(s):\n{output[-4000:]}")
    counts = result.counts()
    bad = counts["wrong"] + counts["untyped"] + counts["hang"]
    return 0 if bad == 0 and result.up_after and result.after == "right" else 1


if __name__ == "__main__":
    sys.exit(main())
