"""One alert stream: every tool's alerts as a DataFrame and in groups (sidebar, panel)."""
import json

import pandas as pd

from icedtea_jupyter.session.agent_results import AgentResults
from icedtea_jupyter.ui.panel import alert_group_html

ALERTS = [
    {"source": "check", "check": "clean: row >= 0", "operator": "clean", "partition": 0,
     "level": "warning", "count": 1, "message": "row failed",
     "record": {"repr": "-7", "value": -7, "type": "int"}},
    {"source": "check", "check": "clean: row >= 0", "operator": "clean", "partition": 1,
     "level": "warning", "count": 40, "message": "40 more records failed (not sampled)"},
    {"source": "tolerate", "check": "--tolerate 3", "operator": "parse", "partition": 2,
     "level": "error", "message": "quarantined: ValueError: bad",
     "record": {"repr": "'x'", "value": "x", "type": "str"}},
    {"source": "Broken", "level": "error", "operator": "clean", "partition": 0,
     "message": "agent 'Broken' failed in observe_record", "traceback": "Traceback..."},
]


class Alerts(AgentResults):
    def _alert_list(self):
        return ALERTS


def test_alerts_are_a_dataframe_with_their_tool_check_record_and_count():
    frame = Alerts().alerts()
    assert list(frame["tool"]) == ["check", "check", "tolerate", "Broken"]
    assert frame.groupby("check")["count"].sum().to_dict() == {"--tolerate 3": 1,
                                                               "clean: row >= 0": 41}
    assert frame.loc[0, "record"] == "-7" and frame.loc[0, "value"] == -7
    assert frame.loc[3, "traceback"] == "Traceback..." and frame.loc[3, "count"] == 1


def test_alerts_group_by_tool_check_and_operator_with_their_records():
    groups = Alerts().alert_groups()
    assert [(g["tool"], g["count"], g["alerts"]) for g in groups] == [
        ("check", 41, 2), ("tolerate", 1, 1), ("Broken", 1, 1)]
    assert groups[0]["records"] == [{"repr": "-7", "partition": 0, "message": "row failed"}]
    assert groups[1]["level"] == "error"
    html = alert_group_html(groups[0])
    assert "clean: row &gt;= 0 on clean" in html and "×41" in html and "<code>-7</code>" in html


def test_an_alerts_time_is_a_utc_timestamp_in_the_frame_and_epoch_seconds_elsewhere():
    class Timed(AgentResults):
        def _alert_list(self):
            return [dict(ALERTS[0], time=1764625000.25), dict(ALERTS[3])]  # one without

    frame = Timed().alerts()
    assert str(frame["time"].dtype) == "datetime64[ns, UTC]"
    assert frame.loc[0, "time"] == pd.Timestamp("2025-12-01 21:36:40.25", tz="UTC")
    assert pd.isna(frame.loc[1, "time"])
    assert frame["time"].dt.tz_convert("Europe/Berlin")[0].hour == 22  # as any datetime
    assert str(Alerts().alerts()["time"].dtype) == "datetime64[ns, UTC]"  # none has one
    assert Timed()._alert_list()[0]["time"] == 1764625000.25  # the comm's and store's
    json.dumps(Timed().alert_groups())  # the sidebar's groups stay JSON
