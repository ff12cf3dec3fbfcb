"""Memory of the real window over a long session: the release app under Xvfb, driven
through tauri-driver and WebKitWebDriver as the window tests drive it, measured idle
and after 1, 10 and 50 demo turns, beside a minimal Tauri 2 app (benches/minimal-app:
one window, a plain HTML page, the same tauri and lock file) measured in the same run.

The figure is PSS (proportional set size: a shared page counts once, split between
the processes that map it), summed over the app's process and every process below it
(WebKitWebProcess, WebKitNetworkProcess), read from /proc/PID/smaps_rollup. WebKit has
no `performance.memory` and no `window.gc`, so the page's side is hinted at by its
DOM: the count of elements. Nothing is asserted; `make bench-memory` prints figures.

Run by `make bench-memory` (under xvfb-run, with the repository's .venv); not a test,
so pytest never collects it."""

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
# A program (`make bench-memory` runs it with the venv's python), not a test: pytest's
# pythonpath (pyproject.toml) does not apply, so tests/ goes on the path here.
sys.path.insert(0, str(ROOT / "tests"))
from tauri_driver import driven, process_tree  # noqa: E402

APP = ROOT / "target" / "release" / "switchboard-app"
MINIMAL_APP = ROOT / "target" / "bench-minimal" / "release" / "minimal-app"
DEMO_END = "That is all from the demo agents."
MIB = 1024 * 1024


def same_lock_as_the_workspace() -> str:
    """The minimal app was built from a copy of the workspace's Cargo.lock, which cargo
    pruned to the packages it uses (so `--locked` cannot be passed): every package it
    kept must be at the workspace's version. Returns the tauri version both use."""

    def packages(lock: Path) -> dict[str, set[str]]:
        versions: dict[str, set[str]] = {}
        for package in tomllib.loads(lock.read_text())["package"]:
            versions.setdefault(package["name"], set()).add(package["version"])
        return versions

    workspace = packages(ROOT / "Cargo.lock")
    minimal = packages(ROOT / "benches" / "minimal-app" / "Cargo.lock")
    differing = [
        f"{name} {sorted(versions)} (workspace: {sorted(workspace.get(name, set()))})"
        for name, versions in minimal.items()
        if name != "minimal-app" and not versions <= workspace.get(name, set())
    ]
    if differing:
        sys.exit("the minimal app resolved other versions than the workspace: " + "; ".join(differing))
    return ", ".join(
        f"{name} {version}" for name in ("tauri", "wry", "webkit2gtk") for version in sorted(minimal[name])
    )


# --- memory of a process tree ------------------------------------------------------


def smaps_rollup(pid: int) -> dict[str, int]:
    """The Pss lines of a process's smaps_rollup, in bytes (empty if it has ended)."""
    fields = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name.startswith("Pss"):
                fields[name] = int(rest.split()[0]) * 1024
    return fields


def tree_memory(root: int) -> dict[str, dict[str, int]]:
    """Pss and Pss_Anon per process kind (by command name) over `root`'s tree."""
    kinds: dict[str, dict[str, int]] = {}
    for pid in process_tree(root):
        with contextlib.suppress(OSError):
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            fields = smaps_rollup(pid)
            if not fields:
                continue
            kind = kinds.setdefault(name, {"Pss": 0, "Pss_Anon": 0, "processes": 0})
            kind["Pss"] += fields.get("Pss", 0)
            kind["Pss_Anon"] += fields.get("Pss_Anon", 0)
            kind["processes"] += 1
    return kinds


def total(kinds: dict[str, dict[str, int]]) -> int:
    return sum(kind["Pss"] for kind in kinds.values())


def settled_memory(root: int, limit_s: float = 20.0) -> dict[str, dict[str, int]]:
    """The tree's memory once it has stopped moving: two samples half a second apart
    within 1 MiB of each other (WebKit frees and compacts on timers after a load or a
    turn), or the last sample after `limit_s`. This paces sampling; readiness of the
    page is established before it is called."""
    deadline = time.monotonic() + limit_s
    previous = tree_memory(root)
    while True:
        time.sleep(0.5)
        current = tree_memory(root)
        if abs(total(current) - total(previous)) < MIB or time.monotonic() > deadline:
            return current
        previous = current


# --- the window ------------------------------------------------------------------------


@contextlib.contextmanager
def launch(application: Path, home: Path, extra_environment: dict[str, str]):
    """`application` behind tauri-driver on its own config and data folders under
    `home` (and `extra_environment`); yields the WebDriver session and the
    application's process id."""
    assert application.exists(), f"{application} is missing: run `make bench-memory`"
    environment = dict(os.environ) | extra_environment
    environment.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        SWITCHBOARD_CONFIG=str(home / "config" / "switchboard" / "config.json"),
    )
    # The minimal app outlives its WebDriver session (nothing tells it to quit):
    # `driven` ends it, so that no run measures the previous one's processes.
    with driven(application, environment) as (session, driver_process):
        target = application.resolve()
        app_pid = next(
            pid for pid in process_tree(driver_process.pid) if os.path.realpath(f"/proc/{pid}/exe") == str(target)
        )
        yield session, app_pid


def dom_elements(session) -> int:
    return session.execute_script("return document.getElementsByTagName('*').length")


def message_box(session):
    label = WebDriverWait(session, 30).until(
        lambda s: s.find_elements(By.XPATH, '//label[normalize-space()="Message"]')
    )[0]
    return session.find_element(By.ID, label.get_attribute("for"))


def ended_turns(home: Path) -> int:
    """Turns whose end is in the session logs (written before the window hears of it)."""
    return sum(log.read_text().count('"type":"turn_ended"') for log in (home / "data").rglob("sessions/*.jsonl"))


def run_turn(session, home: Path, number: int) -> None:
    """Sends a demo question and waits until the turn has ended in the log and in the
    window; a delegate that asks for approval is approved always (the first turn)."""
    box = message_box(session)
    box.send_keys(f"Question {number}: how do agents call other agents as tools?")
    box.send_keys(Keys.ENTER)

    def finished(s) -> bool:
        for button in s.find_elements(By.CSS_SELECTOR, 'button[aria-label^="Always approve "]'):
            with contextlib.suppress(WebDriverException):
                button.click()
        return (
            ended_turns(home) >= number
            and not s.find_elements(By.XPATH, '//button[normalize-space()="Stop"]')
            and bool(
                s.find_elements(By.XPATH, f'//li[starts-with(@aria-label, "Answer from")][contains(., "{DEMO_END}")]')
            )
        )

    WebDriverWait(session, 120, poll_frequency=0.1).until(finished, f"turn {number} did not finish")


# --- one run ---------------------------------------------------------------------------


def measure_minimal(application: Path, environment: dict[str, str]) -> dict:
    folder = tempfile.TemporaryDirectory(prefix="switchboard-bench-minimal-", ignore_cleanup_errors=True)
    with folder, launch(application, Path(folder.name), environment) as (session, app_pid):
        WebDriverWait(session, 30).until(lambda s: s.execute_script("return document.readyState") == "complete")
        WebDriverWait(session, 30).until(lambda s: "memory baseline" in s.find_element(By.TAG_NAME, "body").text)
        return {"kinds": settled_memory(app_pid), "dom": dom_elements(session)}


def measure_app(application: Path, checkpoints: list[int], environment: dict[str, str]) -> dict[str, dict]:
    figures = {}
    folder = tempfile.TemporaryDirectory(prefix="switchboard-bench-memory-", ignore_cleanup_errors=True)
    with folder, launch(application, Path(folder.name), environment) as (session, app_pid):
        home = Path(folder.name)
        # A first start opens the setup wizard: the demo agents are kept, as a new user would.
        keep = '//button[normalize-space()="Keep the demo agents"]'
        WebDriverWait(session, 30).until(lambda s: s.find_elements(By.XPATH, keep))[0].click()
        WebDriverWait(session, 10).until(lambda s: not s.find_elements(By.XPATH, keep))
        message_box(session)
        figures["idle"] = {"kinds": settled_memory(app_pid), "dom": dom_elements(session)}
        done = 0
        for checkpoint in checkpoints:
            while done < checkpoint:
                done += 1
                run_turn(session, home, done)
            figures[f"{checkpoint} turns"] = {"kinds": settled_memory(app_pid), "dom": dom_elements(session)}
            print(f"  {checkpoint} turns: {total(figures[f'{checkpoint} turns']['kinds']) / MIB:.0f} MiB", flush=True)
    return figures


# --- report ------------------------------------------------------------------------------


def median_figure(samples: list[dict]) -> dict:
    names = sorted({name for sample in samples for name in sample["kinds"]})
    kinds = {
        name: {
            field: statistics.median(sample["kinds"].get(name, {}).get(field, 0) for sample in samples)
            for field in ("Pss", "Pss_Anon", "processes")
        }
        for name in names
    }
    return {
        "kinds": kinds,
        "total": statistics.median(total(sample["kinds"]) for sample in samples),
        "anonymous": statistics.median(
            sum(kind["Pss_Anon"] for kind in sample["kinds"].values()) for sample in samples
        ),
        "dom": statistics.median(sample["dom"] for sample in samples),
    }


def report(minimal: dict, app: dict[str, dict], runs: int) -> None:
    how = f"median of {runs} runs" if runs > 1 else "one run"
    print(f"\nPSS of the process tree (app + WebKit processes), MiB, {how}:")
    baseline, idle = minimal["total"], app["idle"]["total"]
    # The anonymous part (heaps, the JS heap, the layers' GL buffers) is the program's
    # own; the file-backed part (libwebkit2gtk and friends) is split between every
    # process mapping it, so it shrinks while other WebKit programs run on the machine.
    print(
        f"{'':<22}{'PSS':>8}{'vs idle':>10}{'vs minimal':>12}{'over idle':>11}"
        f"{'anonymous':>11}{'over idle':>11}{'DOM elements':>14}"
    )
    rows = [("minimal Tauri app", minimal)] + [(f"app, {name}", figure) for name, figure in app.items()]
    idle_anonymous = app["idle"]["anonymous"]
    for name, figure in rows:
        print(
            f"{name:<22}{figure['total'] / MIB:>8.0f}{figure['total'] / idle:>9.2f}x"
            f"{figure['total'] / baseline:>11.2f}x"
            f"{(figure['total'] - idle) / MIB:>+10.0f} {figure['anonymous'] / MIB:>10.0f}"
            f"{(figure['anonymous'] - idle_anonymous) / MIB:>+10.0f} {figure['dom']:>13.0f}"
        )
    print("\nPer process kind: PSS (anonymous part), MiB")
    for name, figure in rows:
        parts = ", ".join(
            f"{kind} {values['Pss'] / MIB:.0f} ({values['Pss_Anon'] / MIB:.0f})"
            + (f" x{values['processes']:.0f}" if values["processes"] > 1 else "")
            for kind, values in sorted(figure["kinds"].items(), key=lambda item: -item[1]["Pss"])
        )
        print(f"  {name:<20} {parts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--turns", default="1,10,50", help="checkpoints, comma-separated")
    parser.add_argument("--app", type=Path, default=APP)
    parser.add_argument("--minimal-app", type=Path, default=MINIMAL_APP)
    parser.add_argument(
        "--compositing",
        action="store_true",
        help="both apps with WebKit's accelerated compositing on (WebKitGTK's default, and the app's with "
        "SWITCHBOARD_COMPOSITING=on): what the layers' buffers cost, which under Xvfb are software GL "
        "buffers in WebKitWebProcess",
    )
    arguments = parser.parse_args()
    # Like for like: both apps draw the same way. By default as Switchboard ships (compositing
    # off; the minimal app is told with WebKit's own switch), or both with WebKit's default.
    for name in ("WEBKIT_DISABLE_COMPOSITING_MODE", "SWITCHBOARD_COMPOSITING"):
        os.environ.pop(name, None)
    environment = (
        {"SWITCHBOARD_COMPOSITING": "on"} if arguments.compositing else {"WEBKIT_DISABLE_COMPOSITING_MODE": "1"}
    )
    how = (
        "on (WebKitGTK's default, SWITCHBOARD_COMPOSITING=on)"
        if arguments.compositing
        else "off (as Switchboard ships)"
    )
    print(f"accelerated compositing {how} in both apps", flush=True)
    checkpoints = sorted(int(turns) for turns in arguments.turns.split(","))
    print(f"both apps on {same_lock_as_the_workspace()}", flush=True)
    minimal_samples, app_samples = [], []
    for run in range(1, arguments.runs + 1):
        print(f"run {run} of {arguments.runs}", flush=True)
        minimal_samples.append(measure_minimal(arguments.minimal_app, environment))
        print(f"  minimal app: {total(minimal_samples[-1]['kinds']) / MIB:.0f} MiB", flush=True)
        app_samples.append(measure_app(arguments.app, checkpoints, environment))
    minimal = median_figure(minimal_samples)
    app = {name: median_figure([sample[name] for sample in app_samples]) for name in app_samples[0]}
    report(minimal, app, arguments.runs)


if __name__ == "__main__":
    sys.exit(main())
