"""What a benchmark's guest measured, kept as it comes.

Each record is rewritten to RESULTS/measurements.json at once, so a guest that dies (or a host
that times it out) mid-run still leaves every finished measurement, and echoed on the console
behind a tag the host side greps for when the results folder is not readable."""

from __future__ import annotations

import json
from pathlib import Path


class MeasurementLog:
    def __init__(self, results: Path, tag: str):
        self.path = results / "measurements.json"
        self.tag = tag
        self.records: list[dict] = []

    def save(self, rec: dict) -> None:
        self.records.append(rec)
        self.path.write_text(json.dumps(self.records, indent=1))
        print(f"{self.tag} {json.dumps(rec)}", flush=True)
