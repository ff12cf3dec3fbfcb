"""Twenty `switchboard ask --session same` at once: each turn gets an id of its
own, and the session's log holds every question with its answer and its own
call tree (the app and the CLI share sessions, so this is what two windows
and a terminal do)."""

import json
import os
import pathlib
import subprocess
from collections import Counter

from hostile_common import demo_config

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"
TURNS = 20


def test_twenty_concurrent_turns_in_one_session_keep_their_own_ids_and_records(tmp_path):
    config = demo_config(tmp_path)
    base = [str(BINARY), "--config", str(config), "--data-dir", str(tmp_path / "data")]
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    subprocess.run(
        [*base, "ask", "--session", "same", "first"], check=True, capture_output=True, env=environment, timeout=60
    )
    asks = [
        subprocess.Popen(
            [*base, "ask", "--session", "same", f"question {n}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=environment,
        )
        for n in range(TURNS)
    ]
    for process in asks:
        assert process.wait(timeout=120) == 0, process.stderr.read()
    shown = subprocess.run(
        [*base, "sessions", "show", "same", "--json"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=True,
    )
    records = json.loads(shown.stdout)
    records = records.get("records", records) if isinstance(records, dict) else records
    asked = {record["turn_id"]: record for record in records if record.get("type") == "user_message"}
    ended = Counter(record["turn_id"] for record in records if record.get("type") == "turn_ended")
    assert len(asked) == TURNS + 1, sorted(asked)
    assert sorted(record["text"] for record in asked.values()) == sorted(
        ["first", *(f"question {n}" for n in range(TURNS))]
    )
    assert all(ended[turn] == 1 for turn in asked), ended
    started = Counter(
        (record["turn_id"], record["event"]["call_id"])
        for record in records
        if record.get("type") == "event" and record["event"]["type"] == "call_started"
    )
    assert all(count == 1 for count in started.values()), "a call id appears twice in one turn"
    assert {turn for turn, _ in started} == set(asked)
