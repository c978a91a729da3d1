"""Where the page's time went during ``bench/skew_live_ui.py`` with ``SKEW_PROFILE``:
self time per JavaScript function (the ``.cpuprofile``) and per Chromium task kind on
the renderer's main thread (the ``.trace.json``: layout, style, paint, script).

    python bench/skew_profile.py /tmp/skew-profile
"""
from __future__ import annotations

import argparse
import json
from collections import Counter


def functions(profile: dict, top: int) -> list[tuple[str, float]]:
    """The ``top`` functions by self time (ms), named ``function (file:line)``."""
    names = {}
    for node in profile["nodes"]:
        frame = node["callFrame"]
        where = frame["url"].rsplit("/", 1)[-1]
        names[node["id"]] = f"{frame['functionName'] or '(anonymous)'} ({where}:{frame['lineNumber']})"
    spent: Counter[str] = Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"]):
        spent[names[sample]] += delta / 1000
    return spent.most_common(top)


def main_thread_tasks(trace: dict, top: int) -> list[tuple[str, float]]:
    """The renderer main thread's complete events by name, their total duration (ms)."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    spent: Counter[str] = Counter()
    for event in events:
        if event.get("ph") == "X" and (event.get("pid"), event.get("tid")) in main:
            spent[event["name"]] += event.get("dur", 0) / 1000
    return spent.most_common(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("prefix")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    with open(f"{args.prefix}.cpuprofile") as source:
        for name, ms in functions(json.load(source), args.top):
            print(f"{ms:9.0f} ms  {name}")
    print()
    with open(f"{args.prefix}.trace.json") as source:
        for name, ms in main_thread_tasks(json.load(source), args.top):
            print(f"{ms:9.0f} ms  {name}")


if __name__ == "__main__":
    main()
