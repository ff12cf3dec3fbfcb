"""A session exported as Markdown from the real window, through the system's save
dialog (GTK's file chooser, opened by Rust: the window holds no file or dialog
permission): after one demo turn, the session's export button opens the dialog
suggesting the session's title as the file name; the path is typed into it as a
person would (xdotool), and the file holds the message, who answered, the answer
and its calls; a turn's events go out as JSON through the same dialog. Cancelling
the dialog writes nothing."""

import json
import re
import subprocess
import time

from selenium.webdriver.common.by import By

from tauri_driver import WebDriverWait, screenshot
from test_window import ARTIFACTS, answer_a_demo_turn, answer_text, launch


def words(text: str) -> list[str]:
    """`text`'s words, Markdown's emphasis and code marks taken out."""
    return re.sub(r"[*`]", "", text).split()


def dialog_window(title: str, wait: float = 30) -> str:
    """The X window id of the dialog titled `title`, once it is mapped."""
    deadline = time.monotonic() + wait
    while True:
        found = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", title], capture_output=True, text=True, timeout=10
        )
        if found.stdout.split():
            return found.stdout.split()[0]
        assert time.monotonic() < deadline, f"no window titled {title!r} within {wait} s"
        time.sleep(0.1)


def answer_dialog(window: str, keys: list[list[str]]) -> None:
    """Focuses the dialog and sends it `keys` (xdotool argument lists: type/key)."""
    subprocess.run(["xdotool", "windowfocus", "--sync", window], check=True, timeout=10)
    for arguments in keys:
        subprocess.run(["xdotool", *arguments], check=True, timeout=10)


def test_a_session_is_exported_as_markdown_where_the_user_picks_in_the_save_dialog(tmp_path):
    home = tmp_path / "app"
    target = tmp_path / "picked" / "otters.md"
    target.parent.mkdir()
    with launch(home, HOME=str(tmp_path)) as session:
        answer_a_demo_turn(session)
        # What the chat shows of the answer: every step of it, in order.
        shown = words(answer_text(session))
        export = 'button[aria-label^="Export "][aria-label$=" as Markdown"]'
        label = session.find_element(By.CSS_SELECTOR, export).get_attribute("aria-label")
        title = label.removeprefix("Export ").removesuffix(" as Markdown")

        # Cancelled: nothing is written, nothing is said.
        session.execute_script("arguments[0].click()", session.find_element(By.CSS_SELECTOR, export))
        answer_dialog(dialog_window("Export as Markdown"), [["key", "Escape"]])
        WebDriverWait(session, 10).until(
            lambda s: s.execute_script("return document.querySelector('.exported') === null")
        )

        session.execute_script("arguments[0].click()", session.find_element(By.CSS_SELECTOR, export))
        dialog = dialog_window("Export as Markdown")
        screenshot(ARTIFACTS / "window-export-dialog.png")
        answer_dialog(dialog, [["key", "ctrl+a"], ["type", "--delay", "5", str(target)], ["key", "Return"]])
        WebDriverWait(session, 30).until(lambda _: target.exists() and target.stat().st_size > 0)
        status = WebDriverWait(session, 10).until(lambda s: s.find_elements(By.CSS_SELECTOR, ".exported[role=status]"))[
            0
        ]
        assert str(target) in status.get_attribute("textContent")
        # A turn's events as JSON, through the same dialog.
        session.execute_script(
            "arguments[0].click()", session.find_element(By.XPATH, '//button[normalize-space()="Export JSON…"]')
        )
        events_file = tmp_path / "picked" / "turn.json"
        answer_dialog(
            dialog_window("Export as JSON"),
            [["key", "ctrl+a"], ["type", "--delay", "5", str(events_file)], ["key", "Return"]],
        )
        WebDriverWait(session, 30).until(lambda _: events_file.exists() and events_file.stat().st_size > 0)
        # "Exported to …" is news of that export: a new chat does not carry it.
        session.find_element(By.XPATH, '//button[normalize-space()="New chat"]').click()
        WebDriverWait(session, 10).until(
            lambda s: s.execute_script("return document.querySelector('.exported') === null")
        )
    events = json.loads(events_file.read_text())
    assert events[0]["type"] == "call_started" and events[-1]["type"] == "call_finished", events[-1]
    assert any(event["agent"] == "researcher" for event in events)
    markdown = target.read_text()
    assert markdown.startswith(f"# {title}\n"), markdown
    assert "## You\n\nHow do agents call other agents as tools?\n\n## assistant\n" in markdown, markdown
    assert "That is all from the demo agents." in markdown
    # The export holds what the chat showed, word for word, in the same order
    # (its Markdown marks and list numbers aside).
    exported = [word for word in words(markdown) if not re.fullmatch(r"\d+\.", word)]
    runs = [exported[start : start + len(shown)] for start in range(len(exported))]
    assert shown in runs, f"the chat showed {' '.join(shown)!r}; the export holds:\n{markdown}"
    assert "Calls:\n\n- researcher: ok, " in markdown and "- summariser: ok, " in markdown, markdown
    assert not list(tmp_path.glob("*.md")), "cancelling wrote nothing"
