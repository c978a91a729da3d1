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


def long_task_shares(profile: dict, trace: dict, over_ms: float = 100) -> list[tuple[str, float]]:
    """The CPU samples inside the main thread's tasks longer than ``over_ms``, by who ran
    them: Playwright's injected script (the bench's own polling), Vega, IcedTea's
    sidebar (by its outermost function) or the browser (ms)."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    long = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("ph") == "X"
            and e.get("name") == "RunTask" and (e["pid"], e["tid"]) in main
            and e.get("dur", 0) > over_ms * 1000]
    frames = {n["id"]: n["callFrame"] for n in profile["nodes"]}
    parent = {child: n["id"] for n in profile["nodes"] for child in n.get("children", [])}
    spent: Counter[str] = Counter()
    at = profile["startTime"]
    for sample, delta in zip(profile["samples"], profile["timeDeltas"]):
        at += delta
        if any(start <= at <= end for start, end in long):
            spent[_who(sample, frames, parent)] += delta / 1000
    return spent.most_common()


def _who(node: int, frames: dict, parent: dict) -> str:
    stack = []
    while node in frames:
        stack.append(frames[node])
        node = parent.get(node, -1)
    names = {f["functionName"] for f in stack}
    if names & {"ariaSnapshotForExpectFailure", "generateAriaTree", "expect"}:
        return "playwright"
    ours = [f["functionName"] for f in stack if "lib_index" in f["url"]]
    if any("vega" in f["url"] for f in stack):
        return "vega" + (f" (from {ours[-1] or '(anonymous)'})" if ours else "")
    if ours:
        return f"icedtea {ours[-1]}"
    return f"browser {stack[0]['functionName'] or '(anonymous)'}" if stack else "?"


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
        trace = json.load(source)
    for name, ms in main_thread_tasks(trace, args.top):
        print(f"{ms:9.0f} ms  {name}")
    print("\nInside the main thread's tasks over 100 ms:")
    with open(f"{args.prefix}.cpuprofile") as source:
        for name, ms in long_task_shares(json.load(source), trace)[:args.top]:
            print(f"{ms:9.0f} ms  {name}")


if __name__ == "__main__":
    main()
