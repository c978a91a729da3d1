"""``--golden`` with ``--golden-sample``: in blocks, the reference sees one record at
random in each group of up to 64 and the operator's outputs stay the same; each record
is tested with the stated chance, in blocks or not, and the alerts' check states it."""
import pytest

from icedtea_jupyter.agents.golden import Golden, SampledGolden
from icedtea_jupyter.agents.latency import LatencyAgent

from .chains import hosted_chain

N = 64_000


def buggy(x):
    """The planted defect: every tenth record is off by one."""
    return x + 1 if x % 10 == 0 else x


def reference(x):
    return x


class ShownGolden(SampledGolden):
    """Sampled golden, counting the records it was shown."""

    shown = 0

    def observe_outputs(self, record, outputs, seconds):
        type(self).shown += 1
        super().observe_outputs(record, outputs, seconds)


def golden_alerts(channel):
    return [m for m in channel.sent if m.get("type") == "alert" and m["source"] == "golden"]


@pytest.mark.parametrize("others", [(), (LatencyAgent,)], ids=["in blocks", "per record"])
def test_a_sample_tests_the_stated_share_of_records_and_finds_the_planted_ones(
        monkeypatch, others):
    ShownGolden.shown = 0
    golden = ShownGolden.with_options(references=(("op0", reference),), sample=0.01)
    outputs, channel = hosted_chain(monkeypatch, [("map", buggy)],
                                    agents=(golden, *others), n=N)
    assert list(outputs) == [buggy(x) for x in range(N)]
    alerts = golden_alerts(channel)
    assert {a["check"] for a in alerts} == {"op0: golden, 1% of records tested"}
    found = sum(a["count"] for a in alerts)
    # about 640 records tested, a tenth of them planted: 64 expected (± 5 sd: 25-104)
    assert 25 <= found <= 104
    sampled = [a["record"]["value"] for a in alerts if "record" in a]
    assert sampled and all(x % 10 == 0 for x in sampled)
    if not others:  # the only agent seeing outputs: a sample shown, not every record
        assert ShownGolden.shown <= N / 32


def test_every_record_is_tested_without_a_sample(monkeypatch):
    golden = Golden.with_options(references=(("op0", reference),), sample=1.0)
    outputs, channel = hosted_chain(monkeypatch, [("map", buggy)], agents=(golden,), n=N)
    assert list(outputs) == [buggy(x) for x in range(N)]
    alerts = golden_alerts(channel)
    assert {a["check"] for a in alerts} == {"op0: golden"}
    assert sum(a["count"] for a in alerts) == N // 10
