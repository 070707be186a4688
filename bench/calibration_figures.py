"""What the spot-check and calibration figures cost on a large history (the Metrics page reads them once per view).

Fills a fresh SQLite file with N seeded runs as `bench/metrics_dashboard.py` does (person reviews in slot C,
fix rejections and escalations resolved by people among them), then times `desk.calibration.figures`: the label
reads, the models' verdicts on labelled rounds, and the pure figures. Prints the figures; asserts nothing.

    python bench/calibration_figures.py [--runs 10000] [--seed 1] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from metrics_dashboard import BATCH, BY_NAME, TABLE_ORDER, History, creation_times, setup_catalog  # noqa: E402
from sqlalchemy import insert  # noqa: E402
from sqlmodel import Session  # noqa: E402

from desk.calibration import figures  # noqa: E402
from storage.labels import LabelStore  # noqa: E402
from storage.runs import RunStore  # noqa: E402
from storage.startup import init_db  # noqa: E402


def timed(fn, repeat: int) -> tuple[float, object]:
    """The median seconds of `repeat` calls, and the last answer."""
    spent, answer = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        answer = fn()
        spent.append(time.perf_counter() - t0)
    return statistics.median(spent), answer


def fill(engine, catalog, runs: int, seed: int, now: datetime) -> None:
    """The dashboard bench's simulated history, its rows only: these figures read no metric facts."""
    rng = random.Random(seed)
    history, times = History(rng, catalog, now), creation_times(rng, runs, now)
    for first in range(0, runs, BATCH):
        for i in range(first, min(runs, first + BATCH)):
            history.add_run(i + 1, times[i])
        rows, _ = history.take()
        with Session(engine) as s, s.begin():
            for name in TABLE_ORDER:
                if rows[name]:
                    s.execute(insert(BY_NAME[name]), rows[name])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine = init_db(f"sqlite:///{Path(tmp) / 'bench.db'}")
        store = RunStore(engine)
        fill(engine, setup_catalog(store), args.runs, args.seed, datetime.now(UTC))
        labels_s, labels = timed(lambda: LabelStore(store).labels(), args.repeat)
        rounds = {(label.run_id, label.round_no) for label in labels}
        verdicts_s, verdicts = timed(lambda: LabelStore(store).model_verdicts(rounds), args.repeat)
        whole_s, doc = timed(lambda: figures(store), args.repeat)
        print(
            f"{args.runs:,} runs: {len(labels):,} labels on {len(rounds):,} rounds, {len(verdicts):,} model verdicts, "
            f"{len(doc.calibration.rows):,} calibration rows"
        )
        print(
            f"labels {labels_s * 1000:.0f} ms · model verdicts {verdicts_s * 1000:.0f} ms · "
            f"all figures {whole_s * 1000:.0f} ms (median of {args.repeat})"
        )


if __name__ == "__main__":
    main()
