"""The desktop habits on the real window under Xvfb, through tauri-driver: while the
demo's delegates wait for approval the native window title counts them (read back
with xwininfo), the Calls tab says so and the sidebar counts the running first turn; a
call's output copies through the webview's clipboard (pasted back into the message
box); the window opens at the size and place it was left at
(tauri-plugin-window-state's file); and with the window in the background a waiting
call is a desktop notification, received by a stand-in notification server on a
private session bus, whose click selects the call in the window; and the window
draws without WebKit's accelerated compositing unless SWITCHBOARD_COMPOSITING=on."""

import contextlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tauri_driver import WebDriverWait, process_tree, screenshot
from test_window import ARTIFACTS, answer_text, click_button, click_tab, launch, message_box, treeitem


def native_window(title: str) -> str | None:
    """The geometry ("1280x800+0+0") of the app's X window with this title, as a task
    bar would show it; None when there is none (xwininfo reads the UTF-8 title)."""
    tree = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True).stdout
    for line in tree.splitlines():
        match = re.search(r'"(.*)": \("switchboard-app" .*?\)\s+(\d+x\d+[+-]\d+[+-]\d+)', line)
        if match and match.group(1) == title:
            return match.group(2)
    return None


def test_waiting_calls_are_counted_in_the_title_and_the_output_copies(tmp_path):
    with launch(tmp_path) as session:
        box = message_box(session)
        box.send_keys("How do agents call agents?")
        box.send_keys(Keys.ENTER)
        treeitem(session, "researcher, waiting for approval")
        treeitem(session, "summariser, waiting for approval")
        WebDriverWait(session, 10).until(lambda s: s.title == "Switchboard — 2 waiting")
        WebDriverWait(session, 10).until(lambda _: native_window("Switchboard — 2 waiting"))
        tab = session.find_element(By.ID, "tab-calls")
        assert tab.get_attribute("aria-label") == "Calls, 2 waiting"
        # The running first turn is counted in the sidebar (not "0 turns").
        listed = session.find_element(By.CSS_SELECTOR, '[aria-label="Session list"]').get_attribute("textContent")
        assert "1 turn" in listed and "0 turns" not in listed, listed
        screenshot(ARTIFACTS / "window-waiting-count.png")

        click_button(session, "Approve researcher once")
        WebDriverWait(session, 10).until(lambda s: s.title == "Switchboard — 1 waiting")
        click_button(session, "Approve summariser once")
        WebDriverWait(session, 30).until(lambda s: "That is all from the demo agents." in answer_text(s))
        WebDriverWait(session, 10).until(lambda _: native_window("Switchboard"))
        assert session.find_element(By.ID, "tab-calls").get_attribute("aria-label") is None

        # A call's output, copied in the webview, pastes back as it was.
        treeitem(session, "researcher, ok").click()
        click_button(session, "Copy the output of researcher")
        button = session.find_element(By.CSS_SELECTOR, 'button[aria-label="Copy the output of researcher"]')
        WebDriverWait(session, 5).until(lambda _: button.text in ("Copied", "Copy failed"))
        assert button.text == "Copied", "the webview refused both the Clipboard API and the copy command"
        output = session.find_element(By.CSS_SELECTOR, 'pre[aria-label="Streamed output"]').get_attribute("textContent")
        box = message_box(session)
        box.click()
        box.send_keys(Keys.CONTROL, "v")
        WebDriverWait(session, 5).until(lambda _: box.get_attribute("value") == output)


def test_the_window_opens_where_and_as_large_as_it_was_left(tmp_path):
    state = tmp_path / "config" / "dev.switchboard.desktop" / ".window-state.json"
    state.parent.mkdir(parents=True)
    saved = {
        "width": 1000,
        "height": 640,
        "x": 40,
        "y": 30,
        "prev_x": 40,
        "prev_y": 30,
        "maximized": False,
        "visible": True,
        "decorated": True,
        "fullscreen": False,
    }
    state.write_text(json.dumps({"main": saved}))
    with launch(tmp_path) as session:
        WebDriverWait(session, 10).until(lambda s: s.execute_script("return window.innerWidth") == 1000)
        assert session.execute_script("return window.innerHeight") == 640
        WebDriverWait(session, 10).until(lambda _: native_window("Switchboard") == "1000x640+40+30")
        # Moved and resized by the user: written once it settles, so even a killed app comes back so.
        session.set_window_rect(x=60, y=50, width=1100, height=700)
        # The plugin rewrites the file in place: a read may catch it empty or half written.
        WebDriverWait(session, 10, ignored_exceptions=(json.JSONDecodeError, KeyError)).until(
            lambda _: (
                {key: json.loads(state.read_text())["main"][key] for key in ("width", "height", "x", "y")}
                == {"width": 1100, "height": 700, "x": 60, "y": 50}
            )
        )
    with launch(tmp_path) as session:
        WebDriverWait(session, 10).until(lambda _: native_window("Switchboard") == "1100x700+60+50")
        screenshot(ARTIFACTS / "window-restored-size.png")


def web_process_environments() -> list[dict[str, str]]:
    """The environments of the WebKit web processes running below this test."""
    found = []
    for pid in process_tree(os.getpid()):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip().startswith("WebKitWebProces"):
                pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                found.append(dict(pair.decode(errors="replace").split("=", 1) for pair in pairs if b"=" in pair))
    return found


@pytest.mark.parametrize(
    ("asked", "switch"),
    [({}, "1"), ({"SWITCHBOARD_COMPOSITING": "on"}, None)],
    ids=["default-no-compositing", "compositing-on-when-asked"],
)
def test_the_window_draws_without_accelerated_compositing_unless_asked(tmp_path, monkeypatch, asked, switch):
    """WebKitGTK reads WEBKIT_DISABLE_COMPOSITING_MODE when the web view is made; its
    web process inherits the app's environment, so what the app chose shows there."""
    monkeypatch.delenv("WEBKIT_DISABLE_COMPOSITING_MODE", raising=False)
    monkeypatch.delenv("SWITCHBOARD_COMPOSITING", raising=False)
    with launch(tmp_path, **asked) as session:
        click_tab(session, "Usage")
        environments = web_process_environments()
        assert environments, "no WebKitWebProcess below the test"
        assert {environment.get("WEBKIT_DISABLE_COMPOSITING_MODE") for environment in environments} == {switch}


@contextlib.contextmanager
def notification_server():
    """A private session bus with the stand-in notification server on it: yields the
    bus address and the server process (its stdout: one JSON line per notification)."""
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE, text=True
    )
    address = bus.stdout.readline().strip()
    server = subprocess.Popen(
        ["/usr/bin/python3", str(Path(__file__).with_name("notification_server.py"))],
        env={"DBUS_SESSION_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert json.loads(server.stdout.readline()).get("ready"), "the notification server did not start"
        yield address, server
    finally:
        server.kill()
        bus.kill()
        server.wait(timeout=10)
        bus.wait(timeout=10)


def test_a_call_waiting_in_the_background_is_a_notification_whose_click_shows_it(tmp_path):
    with notification_server() as (address, server), launch(tmp_path, DBUS_SESSION_BUS_ADDRESS=address) as session:
        # Another window has the focus (under Xvfb nothing else can take it).
        session.execute_script("document.hasFocus = () => false")
        box = message_box(session)
        box.send_keys("How do agents call agents?")
        box.send_keys(Keys.ENTER)
        notifications = [json.loads(server.stdout.readline()) for _ in range(2)]
        by_title = {notification["summary"]: notification for notification in notifications}
        assert set(by_title) == {"researcher waits for your approval", "summariser waits for your approval"}, by_title
        summariser = by_title["summariser waits for your approval"]
        assert summariser["body"].startswith("Summarise"), summariser
        # A click on the notification is reported (the plugin offers the action "default").
        assert "default" in summariser["actions"], summariser
        row = treeitem(session, "summariser, waiting for approval")
        assert row.get_attribute("aria-selected") != "true"

        server.stdin.write(f"click {summariser['id']}\n")
        server.stdin.flush()
        WebDriverWait(session, 10).until(lambda _: row.get_attribute("aria-selected") == "true")
        session.find_element(By.CSS_SELECTOR, '[aria-label="Details of summariser"]')
        screenshot(ARTIFACTS / "window-notification-clicked.png")
        click_button(session, "Approve researcher once")
        click_button(session, "Approve summariser once")
        WebDriverWait(session, 30).until(lambda s: "That is all from the demo agents." in answer_text(s))
