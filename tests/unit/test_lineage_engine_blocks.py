"""A DuckDB trace step joins positions with links by (partition, block of positions):
links whose ranges cross block boundaries, or span many blocks, give what a plain range
join gives (an oracle over the links, by hand)."""
import random

import pyarrow as pa

from icedtea_jupyter.executor.lineage import link_types
from icedtea_jupyter.lineage.engine import BLOCK_BITS, DuckEngine
from icedtea_jupyter.lineage.tables import connect

BLOCK = 1 << BLOCK_BITS


def links_table(rows):
    names = ["op", "part"] + [name for name, _ in link_types(pa)]
    types = dict([("op", pa.int32()), ("part", pa.int32())] + link_types(pa))
    return pa.table({name: pa.array([row[i] for row in rows], types[name])
                     for i, name in enumerate(names)})


def flatmap_like(rng, op, part, inputs):
    """One row an input: input k to its run of outputs (none for some), as a flatMap's."""
    rows, out = [], 0
    for k in range(inputs):
        n = rng.choice([0, 1, 3, 7, 40, 700, 2500])
        if n:
            rows.append((op, part, out, n, 0, part, k, 1, True))
        out += n
    return rows, out


def oracle_back(rows, op, positions):
    found = {}
    for (o, part, out_start, out_count, source, in_part, in_start, in_count, cross) in rows:
        if o != op:
            continue
        for pos in positions.get(part, ()):
            if out_start <= pos < out_start + out_count:
                hits = range(in_start, in_start + in_count) if cross else \
                    [in_start + pos - out_start]
                found.setdefault(source, {}).setdefault(in_part, set()).update(hits)
    return found


def oracle_forward(rows, op, source, positions):
    found = {}
    for (o, part, out_start, out_count, src, in_part, in_start, in_count, cross) in rows:
        if o != op or src != source:
            continue
        for pos in positions.get(in_part, ()):
            if in_start <= pos < in_start + in_count:
                hits = range(out_start, out_start + out_count) if cross else \
                    [out_start + pos - in_start]
                found.setdefault(part, set()).update(hits)
    return found


def test_steps_across_block_boundaries_match_a_plain_range_join():
    rng = random.Random(12)
    rows = []
    outputs = {}
    for part in range(3):
        flat, outputs[part] = flatmap_like(rng, 1, part, 400)
        rows += flat
    # op 2: a one-to-one run over many blocks, a filter's runs, and a closing output
    # linked with every input of its partition (an Operator's close)
    rows += [(2, 0, 0, 5000, 0, 0, 100, 5000, False),
             (2, 1, 0, 1500, 0, 1, 0, 1500, False), (2, 1, 1500, 900, 0, 1, 2000, 900, False),
             (2, 1, 2400, 2, 0, 1, 0, 2900, True)]
    engine = DuckEngine(connect(links_table(rows)))
    wanted = {part: set(rng.sample(range(outputs[part]), 300)) | {BLOCK - 1, BLOCK, 3 * BLOCK}
              for part in range(3)}
    assert engine.back(1, wanted) == oracle_back(rows, 1, wanted)
    wanted2 = {0: {0, BLOCK - 1, BLOCK, 4999, 5000}, 1: {1023, 1024, 1499, 1500, 2400, 2401}}
    assert engine.back(2, wanted2) == oracle_back(rows, 2, wanted2)
    inputs = {part: set(rng.sample(range(400), 50)) for part in range(3)}
    assert engine.forward(1, 0, inputs) == oracle_forward(rows, 1, 0, inputs)
    across = {0: {99, 100, BLOCK, 5099, 5100}, 1: {0, 1023, 1024, 2000, 2899, 2900}}
    assert engine.forward(2, 0, across) == oracle_forward(rows, 2, 0, across)
    assert engine.forward(2, 0, across)[1] >= {2400, 2401}  # the closing outputs
