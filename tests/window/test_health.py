"""Health up front and the chat's agent picker, on the real window and backend: a
config with an agent CLI whose program is missing and an HTTP agent whose server
is down (beside the demo agents). The Agents & tools list flags both in words
before any call; in the chat, picking the dead HTTP agent for this chat shows that
it would fail and why, and the message sent goes to it (its error names the
unreachable server), while the demo primary would answer."""

import json
import socket
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select

from tauri_driver import WebDriverWait, screenshot
from test_window import ARTIFACTS, close_settings, launch, message_box, open_settings, write_config


def dead_url() -> str:
    """A loopback URL where nothing listens (the port was just freed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_the_agent_list_and_the_picker_say_which_agent_would_fail_before_a_call(tmp_path):
    home = tmp_path
    path = home / "config" / "switchboard" / "config.json"
    dead = dead_url()
    with launch(home) as session:
        config = json.loads(path.read_text())
        config["agents"] += [
            {"name": "coder-cli", "provider": "aider-cli", "command": str(Path("/nonexistent/aider"))},
            {"name": "offline", "provider": "local", "url": dead, "model": "m"},
        ]
        write_config(path, config)
        open_settings(session, "Agents & tools")
        WebDriverWait(session, 20).until(
            expected_conditions.element_to_be_clickable(
                (By.XPATH, '//button[normalize-space()="Edit agents and tools…"]')
            )
        ).click()
        agents = '//ul[@aria-label="Configured agents"]'
        WebDriverWait(session, 30).until(
            lambda s: (
                "nothing answers at" in s.find_element(By.XPATH, agents).text
                and "/nonexistent/aider is not on PATH" in s.find_element(By.XPATH, agents).text
            )
        )
        flagged = [
            note.get_attribute("aria-label") for note in session.find_elements(By.XPATH, f'{agents}//*[@role="note"]')
        ]
        assert sorted(flagged) == ["coder-cli would fail now", "offline would fail now"], flagged
        screenshot(ARTIFACTS / "window-health-agents.png")
        session.find_element(By.XPATH, '//button[@aria-label="Close agents and tools"]').click()
        close_settings(session)

        picker = WebDriverWait(session, 20).until(expected_conditions.element_to_be_clickable((By.ID, "chat-agent")))
        who = '//*[@role="group" and @aria-label="Who answers"]'
        WebDriverWait(session, 20).until(
            lambda s: s.find_elements(By.XPATH, f'{who}//*[@role="img" and starts-with(@aria-label, "can answer")]')
        )
        Select(picker).select_by_value("offline")
        WebDriverWait(session, 20).until(
            lambda s: s.find_elements(By.XPATH, f'{who}//*[@role="img" and starts-with(@aria-label, "would fail")]')
        )
        screenshot(ARTIFACTS / "window-health-picker.png")
        # (textContent: WebKitWebDriver's displayedness skips text in a shrinking flex item.)
        problem = session.find_element(By.XPATH, f'{who}//*[contains(@class, "problem") and not(@role)]')
        problem = problem.get_attribute("textContent")
        assert problem == f"nothing answers at {dead}", problem
        box = message_box(session)
        box.send_keys("Are you there?")
        box.send_keys(Keys.ENTER)
        WebDriverWait(session, 30).until(
            lambda s: any(
                dead.removesuffix("/v1") in item.text
                for item in s.find_elements(By.CSS_SELECTOR, 'li[aria-label^="Answer from"]')
            )
        )
