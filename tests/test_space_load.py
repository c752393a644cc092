"""The Space under load: 20 clients at once on 127.0.0.1, every other one
uploading valid files of its own and the others each kind of invalid upload;
each gets its own right answer or its own readable message, none a wrong
answer, a raw error or no answer, and the app still answers afterwards
(``tests/space_load.py``; ``benchmarks/space_load.py`` runs more)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.space_load import INVALID, OUTCOMES, kind_of, make_case, run_load


def test_twenty_clients_at_once_each_get_their_own_answer_and_the_app_stays_up() -> None:
    result, output = run_load(clients=20, seed=7, bound_s=60)
    counts = result.counts()
    not_right = [o for o in result.outcomes if o.outcome not in ("right", "typed")]
    assert not not_right, not_right
    assert counts["right"] == 10 and counts["typed"] == 10
    assert {o.kind for o in result.outcomes} == {"valid", *INVALID}
    assert result.up_after and result.after == "right", output[-4000:]
    assert "Traceback" not in output
    assert set(counts) <= set(OUTCOMES)


def test_each_request_has_data_of_its_own_and_each_invalid_one_a_message_naming_its_upload(
    tmp_path: Path,
) -> None:
    """No app: what the load expects. Valid requests' answers differ from one
    another, and each invalid request's message names the upload it spoils by
    its role and by the request's own file."""
    valid, messages = [], {}
    for number in range(2 * len(INVALID)):
        folder = tmp_path / str(number)
        folder.mkdir()
        case = make_case(folder, number, kind_of(number), seed=7)
        if case.kind == "valid":
            valid.append(case.expected)
        else:
            messages[case.kind] = (number, case.expected[0])
    assert len({answer[3] for answer in valid}) == len(valid)  # signatures: corpora differ
    assert len({answer[7] for answer in valid}) == len(valid)  # reports
    assert set(messages) == set(INVALID)
    for kind, (number, message) in messages.items():
        assert message.startswith("**Could not score:**"), (kind, message)
        role = INVALID[kind]
        assert re.search(rf"\b{role}\b", message), (kind, message)
        if kind not in ("mismatched lines", "no file", "empty file"):
            assert f"c{number:03d}-" in message, (kind, message)
