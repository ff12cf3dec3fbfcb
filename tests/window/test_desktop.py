"""The desktop habits on the real window under Xvfb, through tauri-driver: while the
demo's delegates wait for approval the native window title counts them (read back
with xwininfo), the Calls tab says so and the sidebar counts the running first turn; a
call's output copies through the webview's clipboard (pasted back into the message
box); and the window opens at the size and place it was left at
(tauri-plugin-window-state's file)."""

import json
import re
import subprocess

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from test_window import ARTIFACTS, answer_text, click_button, launch, message_box, treeitem


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
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        session.save_screenshot(str(ARTIFACTS / "window-waiting-count.png"))

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
    saved = {"width": 1000, "height": 640, "x": 40, "y": 30, "prev_x": 40, "prev_y": 30,
             "maximized": False, "visible": True, "decorated": True, "fullscreen": False}
    state.write_text(json.dumps({"main": saved}))
    with launch(tmp_path) as session:
        WebDriverWait(session, 10).until(lambda s: s.execute_script("return window.innerWidth") == 1000)
        assert session.execute_script("return window.innerHeight") == 640
        WebDriverWait(session, 10).until(lambda _: native_window("Switchboard") == "1000x640+40+30")
        session.save_screenshot(str(ARTIFACTS / "window-restored-size.png"))
