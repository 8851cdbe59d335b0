"""One call to the parameter per host (docs/behaviour.md §9.1, "At fleet scale"): readers in
several processes of one host, given the same `parameter_share` folder, call the parameter once
per `parameter_refresh` between them; a damaged or unusable share makes a reader call itself."""

from __future__ import annotations

import json
import multiprocessing
import threading

import pytest

from capacity_admission import BulkFactorReader
from capacity_admission.host_share import HostShare
from published import NOW, document


class _Counting:
    label = "a counted parameter"

    def __init__(self):
        self.calls = 0
        self._lock = threading.Lock()

    def fetch(self):
        with self._lock:
            self.calls += 1
        return ("document", document(0.0, state="critical"))


def test_threads_with_their_own_share_call_once_between_them(tmp_path):
    channel = _Counting()
    answers = []
    shares = [HostShare(str(tmp_path), "ssm:/capacity/state") for _ in range(16)]
    threads = [threading.Thread(target=lambda s=s: answers.append(s.fetch(channel, younger_than=30))) for s in shares]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert channel.calls == 1
    assert sum(called for _, called in answers) == 1 and all(fetched[0] == "document" for fetched, _ in answers)


def _one_process(parameter: str, share: str, out) -> None:
    with BulkFactorReader(parameter=parameter, parameter_share=share, refresh=0, parameter_refresh=30,
                          clock=lambda: NOW) as reader:
        readings = [reader.read() for _ in range(5)]
        out.put((reader.counters().parameter_calls, [r.factor for r in readings]))


def test_processes_of_one_host_call_the_parameter_once_per_refresh(tmp_path):
    parameter = tmp_path / "parameter.json"
    parameter.write_text(document(0.0, state="critical"))
    share = tmp_path / "share"
    share.mkdir()
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    processes = [context.Process(target=_one_process, args=(str(parameter), str(share), out)) for _ in range(6)]
    for p in processes:
        p.start()
    results = [out.get(timeout=60) for _ in processes]
    for p in processes:
        p.join(timeout=30)
    assert sum(calls for calls, _ in results) == 1, results
    assert all(factors == [0.0] * 5 for _, factors in results), results
    written = json.loads(next(share.glob("parameter-*.json")).read_text())
    assert written["tag"] == "document" and '"critical"' in written["text"]


def test_a_damaged_or_old_share_is_not_used(tmp_path):
    channel = _Counting()
    now = [1000.0]
    share = HostShare(str(tmp_path), "ssm:/capacity/state", clock=lambda: now[0])
    share.path.write_text("{not json")
    assert share.fetch(channel, younger_than=30) == (("document", document(0.0, state="critical")), True)
    assert share.fetch(channel, younger_than=30)[1] is False
    now[0] += 30  # as old as the refresh: called again
    assert share.fetch(channel, younger_than=30)[1] is True
    assert channel.calls == 2


@pytest.mark.parametrize("value, says", [(5, "expected the path of a folder"), ("", "expected the path of a folder"),
                                         ("/nonexistent/capacity-share", "is not a folder")])
def test_a_share_that_is_not_a_folder_is_refused_when_the_reader_is_built(value, says):
    with pytest.raises(ValueError, match=f"parameter_share: .*{says}"):
        BulkFactorReader(parameter="ssm:/capacity/state", parameter_share=value)
