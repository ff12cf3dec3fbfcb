"""The real app window under Xvfb, driven through tauri-driver and WebKitWebDriver:
a new user's first turn on the demo agents (the delegates ask for approval, the
user approves, the answer streams in, the nested calls finish in the tree with
their tokens, a node's details show what the child saw) and, in a second turn,
denying one delegate and cancelling the other while the parent carries on; and an
MCP client calling a tool-agent through the app's built-in endpoint, the call live
in the tree, approved there."""

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select

from loopback import free_port, wait_for_port
from tauri_driver import WebDriverWait, alive, click_when_ready, driven, process_tree, screenshot

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "target" / "debug" / "switchboard-app"
ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.fixture()
def window():
    home = Path(tempfile.mkdtemp(prefix="switchboard-window-"))
    with launch(home) as session:
        yield session, home


@contextlib.contextmanager
def launch(home: Path, setup_wizard: bool = False, **extra_environment: str):
    """The app on its own config and data folders under `home`, behind tauri-driver.
    On a first start the setup wizard opens; it is dismissed (the demo kept) unless
    the test drives it (`setup_wizard`)."""
    assert APP.exists(), f"{APP} is missing: build it with `make app`"
    environment = dict(os.environ)
    environment.update(
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        SWITCHBOARD_CONFIG=str(home / "config" / "switchboard" / "config.json"),
        **extra_environment,
    )
    first_start = not (home / "config" / "switchboard" / "config.json").exists()
    with driven(APP, environment) as (session, _driver):
        if first_start and not setup_wizard:
            keep_the_demo_agents(session)
        yield session


def keep_the_demo_agents(session):
    """A first start opens the setup wizard; a user who wants the demo keeps it."""
    WebDriverWait(session, 20).until(
        expected_conditions.element_to_be_clickable((By.XPATH, '//button[normalize-space()="Keep the demo agents"]'))
    ).click()
    WebDriverWait(session, 10).until(
        lambda s: not s.find_elements(By.XPATH, '//button[normalize-space()="Keep the demo agents"]')
    )


def treeitem(session, name: str):
    return WebDriverWait(session, 20).until(
        expected_conditions.presence_of_element_located(
            (By.CSS_SELECTOR, f'[role="tree"] [role="treeitem"][aria-label="{name}"]')
        )
    )


def message_box(session):
    """The textbox labelled "Message", found through its label as a person would,
    and clicked into as a person does before typing (keys sent to it while another
    control, such as the agent picker just used, keeps the focus can land there)."""
    label = WebDriverWait(session, 20).until(
        expected_conditions.presence_of_element_located((By.XPATH, '//label[normalize-space()="Message"]'))
    )
    box = session.find_element(By.ID, label.get_attribute("for"))
    box.click()
    WebDriverWait(session, 5).until(lambda s: s.switch_to.active_element == box)
    return box


def click_button(session, label: str):
    click_when_ready(session, By.CSS_SELECTOR, f'button[aria-label="{label}"]')


def click_tab(session, name: str):
    click_when_ready(session, By.XPATH, f'//*[@role="tab" and normalize-space()="{name}"]')


def open_settings(session, section: str):
    """The header's Settings button, then one of the page's sections, as a person goes."""
    if not session.find_elements(By.CSS_SELECTOR, '[role="region"][aria-label="Settings"]'):
        click_when_ready(session, By.XPATH, '//header//button[normalize-space()="Settings"]')
    tab = f'//*[@aria-label="Settings"]//*[@role="tab" and normalize-space()="{section}"]'
    click_when_ready(session, By.XPATH, tab)


def close_settings(session):
    """Back to the chat from the settings page."""
    click_when_ready(session, By.XPATH, '//button[normalize-space()="← Back to chat"]')
    WebDriverWait(session, 20).until(
        lambda s: not s.find_elements(By.CSS_SELECTOR, '[role="region"][aria-label="Settings"]')
    )


def answer_text(session) -> str:
    answers = session.find_elements(By.CSS_SELECTOR, 'li[aria-label^="Answer from"] .text')
    return answers[-1].text if answers else ""


def open_new_agent_form(session) -> str:
    """Settings → Agents & tools, "Edit agents and tools…", "+ Add agent", as a
    person goes; the new agent form's XPath."""
    open_settings(session, "Agents & tools")
    WebDriverWait(session, 20).until(
        expected_conditions.element_to_be_clickable((By.XPATH, '//button[normalize-space()="Edit agents and tools…"]'))
    ).click()
    WebDriverWait(session, 20).until(
        expected_conditions.element_to_be_clickable((By.XPATH, '//button[normalize-space()="+ Add agent"]'))
    ).click()
    return '//form[@aria-label="New agent"]'


def field_in(session, form: str, label: str):
    """The field of `form` (an XPath) that the label `label` names, found through the label."""
    return session.find_element(By.XPATH, f'{form}//*[@id=({form}//label[normalize-space()="{label}"]/@for)]')


def answer_a_demo_turn(session, message: str = "How do agents call other agents as tools?") -> None:
    """One turn on the demo agents: the researcher approved once, the summariser for
    the session; returns once the answer is in."""
    box = message_box(session)
    box.send_keys(message)
    box.send_keys(Keys.ENTER)
    treeitem(session, "researcher, waiting for approval")
    click_button(session, "Approve researcher once")
    click_button(session, "Always approve summariser")
    WebDriverWait(session, 30).until(lambda s: "That is all from the demo agents." in answer_text(s))


def test_first_turn_shows_a_nested_call_with_its_details(window):
    session, home = window
    open_settings(session, "Agents & tools")
    WebDriverWait(session, 20).until(
        lambda s: "researcher" in s.find_element(By.CSS_SELECTOR, '[aria-label="Agents"]').text
    )
    close_settings(session)
    click_tab(session, "Calls")
    assert (home / "config" / "switchboard" / "config.json").exists(), "first start writes the demo config"

    box = message_box(session)
    box.send_keys("How do agents call other agents as tools?")
    box.send_keys(Keys.ENTER)

    # The delegates wait for approval (confirm by default): approve them from the chat prompt.
    treeitem(session, "researcher, waiting for approval")
    prompt = WebDriverWait(session, 10).until(
        expected_conditions.presence_of_element_located(
            (By.CSS_SELECTOR, '[role="alertdialog"][aria-label="researcher waits for approval"]')
        )
    )
    assert "Find the key facts about: How do agents call other agents as tools?" in prompt.text
    click_button(session, "Approve researcher once")
    treeitem(session, "researcher, running")
    click_button(session, "Always approve summariser")
    partial = WebDriverWait(session, 20).until(lambda s: answer_text(s) or None, "the answer streams in")
    researcher = treeitem(session, "researcher, ok")
    treeitem(session, "summariser, ok")
    WebDriverWait(session, 30).until(lambda s: "That is all from the demo agents." in answer_text(s))
    assert len(partial) < len(answer_text(session)), "the answer grew while it streamed"
    root = treeitem(session, "assistant, ok")
    assert root.get_attribute("aria-expanded") == "true"
    assert "tok" in researcher.text and "– / –" not in researcher.text, researcher.text

    # Selecting the node shows what the child saw and what the parent received.
    researcher.click()
    details = WebDriverWait(session, 10).until(
        expected_conditions.presence_of_element_located(
            (By.CSS_SELECTOR, 'section[aria-label="Details of researcher"]')
        )
    )
    assert "Find the key facts about: How do agents call other agents as tools?" in details.text
    assert "AGENT_RESULT" in details.text and "untrusted data" in details.text
    screenshot(ARTIFACTS / "window.png")

    # The delegation report, read by the backend from the session logs, counts the turn's two calls.
    click_tab(session, "Usage")
    rows = '//table[@aria-label="Delegations per tool-agent"]//tr'
    WebDriverWait(session, 20).until(lambda s: len(s.find_elements(By.XPATH, f"{rows}[td]")) == 2)
    report = {
        row.find_elements(By.TAG_NAME, "td")[0].get_attribute("textContent"): [
            cell.get_attribute("textContent") for cell in row.find_elements(By.TAG_NAME, "td")[1:3]
        ]
        for row in session.find_elements(By.XPATH, f"{rows}[td]")
    }
    assert report == {"researcher": ["1", "1 ok"], "summariser": ["1", "1 ok"]}, report
    multiple = session.find_element(By.CSS_SELECTOR, '[data-testid="report-multiple"]').get_attribute("textContent")
    assert multiple.startswith("assistant: 1 delegating turn, 0 plain turns"), multiple


def test_a_finished_call_runs_again_with_a_sharper_request_beside_the_first(window):
    """Run again from a call's details on the real engine: the re-run is a turn of
    the session the chat and the tree follow, its approval is asked and answered in
    the tree like any call's, and the two runs then show side by side."""
    session, home = window
    box = message_box(session)
    box.send_keys("What is a telephone switchboard?")
    box.send_keys(Keys.ENTER)
    click_button(session, "Approve researcher once")
    click_button(session, "Always approve summariser")
    WebDriverWait(session, 30).until(lambda s: "That is all from the demo agents." in answer_text(s))
    treeitem(session, "researcher, ok").click()
    click_button(session, "Run researcher again")
    request = WebDriverWait(session, 10).until(
        expected_conditions.presence_of_element_located(
            (By.CSS_SELECTOR, 'form[aria-label="Run researcher again"] textarea')
        )
    )
    assert "telephone switchboard" in request.get_attribute("value"), request.get_attribute("value")
    request.clear()
    request.send_keys("Only the year the first switchboard opened")
    session.find_element(
        By.XPATH, '//form[@aria-label="Run researcher again"]//button[normalize-space()="Run again"]'
    ).click()
    # The same approval as the first run: the entry says ask.
    treeitem(session, "researcher, waiting for approval")
    click_button(session, "Approve researcher once")
    comparison = WebDriverWait(session, 30).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, 'section[aria-label="researcher run again"]'))
    )
    table = comparison.find_element(By.TAG_NAME, "table").get_attribute("textContent")
    assert table.count("ok") >= 2, table
    answers = comparison.find_element(By.CSS_SELECTOR, ".diff").get_attribute("textContent")
    assert "Only the year the first switchboard opened" in answers, answers
    chat = session.find_element(By.CSS_SELECTOR, "main").get_attribute("textContent")
    assert "Run again: researcher (call c2 of turn" in chat, chat
    assert not session.find_elements(By.CSS_SELECTOR, 'button[aria-label="Retry the last message"]'), (
        "a call run again is not the user's message to retry"
    )
    screenshot(ARTIFACTS / "window-rerun.png")
    logs = list((home).rglob("sessions/*.jsonl"))
    assert any('"type":"rerun"' in log.read_text() for log in logs), logs


def test_a_running_delegate_is_steered_from_the_tree_and_turns(tmp_path):
    """Steering on the real engine: a worker (an HTTP agent on aimock) that calls
    its search tool at every step until it reads "stop and summarise" is sent that
    message from its node's details while its search runs; the search (a command,
    which says why it cannot be steered) waits on a FIFO, so the message is in
    before the worker's next step (no timing). The worker then summarises, the
    boss answers, and the node shows the message as taken."""
    from aimock_peer import aimock

    fixtures = {
        "fixtures": [
            {
                "match": {"model": "boss-m", "hasToolResult": False},
                "response": {
                    "toolCalls": [
                        {"id": "b1", "name": "agent_worker", "arguments": {"request": "find why the build broke"}}
                    ]
                },
            },
            {"match": {"model": "boss-m", "hasToolResult": True}, "response": {"content": "The worker reported back."}},
            {
                "match": {"model": "worker-m", "userMessage": "stop and summarise"},
                "response": {"content": "Summary: nothing found."},
            },
            {
                "match": {"model": "worker-m"},
                "response": {
                    "toolCalls": [{"id": "w1", "name": "agent_search", "arguments": {"request": "build logs"}}]
                },
            },
        ]
    }
    fifo = tmp_path / "search-may-answer"
    os.mkfifo(fifo)
    with aimock(fixtures) as model:

        def http(name: str) -> dict:
            return {"name": name, "provider": "local", "url": model, "model": f"{name}-m", "timeout_secs": 120}

        boss, worker = http("boss"), http("worker")
        boss["tools"] = [{"agent": "worker", "description": "Digs into a problem.", "approval": "auto"}]
        worker["tools"] = [{"agent": "search", "description": "Searches.", "approval": "auto"}]
        search = {
            "name": "search",
            "provider": "subprocess",
            "command": "/bin/sh",
            "args": ["-c", f"read line < '{fifo}'; echo nothing relevant"],
        }
        config = {"primary": "boss", "agents": [boss, worker, search], "limits": {"max_depth": 2}}
        path = tmp_path / "config" / "switchboard" / "config.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(config))
        with launch(tmp_path) as session:
            box = message_box(session)
            box.send_keys("Why did the build break?")
            box.send_keys(Keys.ENTER)
            treeitem(session, "search, running").click()
            why = WebDriverWait(session, 20).until(
                expected_conditions.presence_of_element_located((By.CSS_SELECTOR, '[aria-label="Not steerable"]'))
            )
            assert "runs its own loop" in why.get_attribute("textContent"), why.get_attribute("textContent")
            treeitem(session, "worker, running").click()
            form = '//form[@aria-label="Steer worker"]'
            message = WebDriverWait(session, 20).until(
                expected_conditions.presence_of_element_located((By.XPATH, f"{form}//textarea"))
            )
            message.send_keys("stop and summarise")
            session.find_element(By.XPATH, f'{form}//button[normalize-space()="Send"]').click()
            sent = '//ul[@aria-label="Messages sent into the call"]'
            WebDriverWait(session, 20).until(
                lambda s: "waiting for its next step" in s.find_element(By.XPATH, sent).get_attribute("textContent")
            )
            with open(fifo, "w") as search_may_answer:
                search_may_answer.write("go\n")
            treeitem(session, "worker, ok").click()
            WebDriverWait(session, 30).until(lambda s: "The worker reported back." in answer_text(s))
            details = session.find_element(By.CSS_SELECTOR, 'section[aria-label="Details of worker"]')
            WebDriverWait(session, 20).until(lambda s: "taken, from the user" in details.get_attribute("textContent"))
            text = details.get_attribute("textContent")
            assert "Summary: nothing found." in text, text
            assert not session.find_elements(By.XPATH, form), "a finished call has no steer box"
            steered = treeitem(session, "worker, ok").get_attribute("textContent")
            assert "steered" in steered, steered
            searches = session.find_elements(By.CSS_SELECTOR, '[role="treeitem"][aria-label^="search,"]')
            assert len(searches) == 1, "one search, then the summary"
            screenshot(ARTIFACTS / "window-steer.png")
    logs = list(tmp_path.rglob("sessions/*.jsonl"))
    assert any('"type":"call_steered"' in log.read_text() for log in logs), logs


def test_a_remote_a2a_task_is_steered_from_the_tree_with_a_message_on_it(tmp_path):
    """An A2A agent (the a2a-sdk test agent, on the SDK's LegacyRequestHandler) digs
    until a message on its task says "stop and summarise": sent from its node's
    details, the message goes on the task at once, the node shows it taken on the
    task, and the answer ends with the agent's summary."""
    port = free_port()
    server = ROOT / "tests" / "a2a" / "a2a_server.py"
    environment = dict(os.environ, PORT=str(port), HANDLER="legacy", A2A_LOG=str(tmp_path / "a2a.log"))
    agent = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "python"), str(server)], env=environment, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, agent, "the A2A agent", 30)
        scout = {"name": "scout", "provider": "a2a", "url": f"http://127.0.0.1:{port}", "timeout_secs": 120}
        path = tmp_path / "config" / "switchboard" / "config.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"primary": "scout", "agents": [scout]}))
        with launch(tmp_path) as session:
            box = message_box(session)
            box.send_keys("dig into the Thames")
            box.send_keys(Keys.ENTER)
            treeitem(session, "scout, running").click()
            form = '//form[@aria-label="Steer scout"]'
            hint = WebDriverWait(session, 20).until(
                expected_conditions.presence_of_element_located((By.XPATH, f"{form}//span"))
            )
            assert "as a message on the task" in hint.get_attribute("textContent")
            details = session.find_element(By.CSS_SELECTOR, 'section[aria-label="Details of scout"]')
            WebDriverWait(session, 20).until(lambda s: "chunk2" in details.get_attribute("textContent"))
            session.find_element(By.XPATH, f"{form}//textarea").send_keys("stop and summarise")
            session.find_element(By.XPATH, f'{form}//button[normalize-space()="Send"]').click()
            WebDriverWait(session, 30).until(lambda s: "then stopped as asked." in answer_text(s))
            treeitem(session, "scout, ok").click()
            details = session.find_element(By.CSS_SELECTOR, 'section[aria-label="Details of scout"]')
            WebDriverWait(session, 20).until(
                lambda s: "taken on its task, from the user" in details.get_attribute("textContent")
            )
            screenshot(ARTIFACTS / "window-steer-a2a.png")
    finally:
        agent.terminate()
        agent.wait(timeout=30)
    assert "steered " in (tmp_path / "a2a.log").read_text(), "the message went on the task"


def test_cancelling_a_running_call_lets_the_parent_finish(window):
    session, _ = window
    box = message_box(session)
    box.send_keys("Please research the history of telephone switchboards in detail")
    box.send_keys(Keys.ENTER)
    click_button(session, "Approve researcher once")
    click_button(session, "Deny summariser")
    treeitem(session, "summariser, denied")
    treeitem(session, "researcher, running").click()
    cancel = WebDriverWait(session, 10).until(
        expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, 'button[aria-label="Cancel researcher"]'))
    )
    cancel.click()
    treeitem(session, "researcher, cancelled")
    treeitem(session, "assistant, ok")
    WebDriverWait(session, 30).until(lambda s: "That is all from the demo agents." in answer_text(s))
    assert "cancelled" in answer_text(session) and "denied" in answer_text(session)


def test_a_session_survives_a_restart(tmp_path):
    with launch(tmp_path) as session:
        box = message_box(session)
        # A command before the first message: its note is kept with the session it starts.
        box.send_keys("/agent switch researcher")
        box.send_keys(Keys.ENTER)
        WebDriverWait(session, 20).until(
            lambda s: s.find_elements(By.CSS_SELECTOR, '[aria-label="Command /agent switch researcher"]')
        )
        box.send_keys("/agent switch assistant")
        box.send_keys(Keys.ENTER)
        WebDriverWait(session, 20).until(
            lambda s: s.find_elements(By.CSS_SELECTOR, '[aria-label="Command /agent switch assistant"]')
        )
        # A message to an agent picked in "Answered by" (nothing typed but the text).
        Select(session.find_element(By.ID, "chat-agent")).select_by_value("summariser")
        box = message_box(session)  # the picker keeps the focus: clicked back into the box
        box.send_keys("no tools please, just summarise switchboards")
        box.send_keys(Keys.ENTER)
        WebDriverWait(session, 30).until(lambda s: "Summary:" in answer_text(s))
        # The turn has ended when the composer offers Send again (not Stop).
        WebDriverWait(session, 30).until(
            lambda s: s.find_elements(By.XPATH, '//form//button[@type="submit" and normalize-space()="Send"]')
        )
        Select(session.find_element(By.ID, "chat-agent")).select_by_value("")
        box = message_box(session)
        box.send_keys("Remember this conversation across a restart")
        box.send_keys(Keys.ENTER)
        click_button(session, "Always approve researcher")
        click_button(session, "Approve summariser once")
        WebDriverWait(session, 30).until(lambda s: "That is all from the demo agents." in answer_text(s))
        sent = [item.text for item in session.find_elements(By.CSS_SELECTOR, 'li[aria-label="You"]')]
        theme = session.execute_script("return document.documentElement.dataset.theme")
        toggled = "light" if theme == "dark" else "dark"
        Select(session.find_element(By.CSS_SELECTOR, 'select[aria-label="Theme"]')).select_by_value(toggled)
        WebDriverWait(session, 5).until(
            lambda s: s.execute_script("return document.documentElement.dataset.theme") == toggled
        )
        # The preference is written before the app stops (read back from the file, not waited for).
        WebDriverWait(session, 10).until(
            lambda _: (
                (prefs := next((tmp_path / "data").rglob("prefs.json"), None)) is not None
                and json.loads(prefs.read_text() or "{}").get("theme") == toggled
            )
        )
    logs = list((tmp_path / "data").rglob("sessions/*.jsonl"))
    assert len(logs) == 1, f"one session log in the app data folder: {logs}"

    with launch(tmp_path) as session:
        # The last session opens again, from its log: messages and the call tree;
        # the theme comes back from the preferences the app keeps.
        WebDriverWait(session, 20).until(lambda s: "That is all from the demo agents." in answer_text(s))
        WebDriverWait(session, 5).until(
            lambda s: s.execute_script("return document.documentElement.dataset.theme") == toggled
        )
        screenshot(ARTIFACTS / "window-restarted.png")
        # textContent: WebKit's visible text leaves out a title cut by an ellipsis.
        listed = session.find_element(By.CSS_SELECTOR, '[aria-label="Session list"]').get_attribute("textContent")
        assert "no tools please, just summarise" in listed
        # The messages read as they were typed: no @agent that nobody typed.
        shown = [item.text for item in session.find_elements(By.CSS_SELECTOR, 'li[aria-label="You"]')]
        assert shown == sent and shown[0].startswith("no tools please"), (shown, sent)
        treeitem(session, "researcher, ok")
        treeitem(session, "assistant, ok")
        # The commands' notes come back where they were, before the first message.
        notes = session.find_elements(By.CSS_SELECTOR, '[aria-label^="Command /agent switch"]')
        assert [note.get_attribute("aria-label") for note in notes] == [
            "Command /agent switch researcher",
            "Command /agent switch assistant",
        ]
        assert "researcher is now the primary agent" in notes[0].get_attribute("textContent")

        # "Approve always" outlives the restart: only the summariser asks again.
        box = message_box(session)
        box.send_keys("A second question after the restart")
        box.send_keys(Keys.ENTER)
        treeitem(session, "summariser, waiting for approval")
        assert not session.find_elements(
            By.CSS_SELECTOR, '[role="treeitem"][aria-label="researcher, waiting for approval"]'
        )
        click_button(session, "Deny summariser")
        WebDriverWait(session, 30).until(lambda s: "denied" in answer_text(s))


def test_a_turn_killed_with_the_app_is_resumed_without_asking_again_what_had_finished(tmp_path):
    """The app is killed (SIGKILL) while a turn waits on a slow delegate after a fast
    one answered; started again, the chat shows the turn interrupted, with what had
    finished and what was running, and Resume finishes it: the fast agent's program
    (which counts its runs) is not run again, the slow one runs."""
    runs, flag, pid_file = tmp_path / "fast.runs", tmp_path / "slow.may-finish", tmp_path / "slow.pid"
    fast = f"echo run >> {runs}; echo fast answer"
    slow = f"if [ -e {flag} ]; then echo slow answer; else sleep 60 & echo $! > {pid_file}; wait; fi"
    config = {
        "primary": "planner",
        "agents": [
            {"name": "planner", "provider": "demo", "model": "demo-planner"},
            {"name": "fast", "provider": "subprocess", "command": "sh", "args": ["-c", fast]},
            {"name": "slow", "provider": "subprocess", "command": "sh", "args": ["-c", slow]},
        ],
        "agent_tools": [
            {"agent": "fast", "description": "Answers at once.", "approval": "auto"},
            {"agent": "slow", "description": "Takes its time.", "approval": "auto"},
        ],
    }
    path = tmp_path / "config" / "switchboard" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(config))
    with launch(tmp_path) as session:
        box = message_box(session)
        box.send_keys("compare the two")
        box.send_keys(Keys.ENTER)
        treeitem(session, "fast, ok")
        WebDriverWait(session, 30).until(lambda _: pid_file.exists() and pid_file.read_text().strip())
        slow_pid = int(pid_file.read_text())
        app = the_app()
        os.kill(app, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while (alive(slow_pid) or alive(app)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(slow_pid), "the slow agent outlived the killed app"
    flag.write_text("")
    with launch(tmp_path) as session:
        reply = WebDriverWait(session, 30).until(
            lambda s: s.find_element(By.XPATH, '//*[contains(., "Finished: fast. Was running:")][@role="alert"]')
        )
        assert "slow" in reply.text, reply.text
        screenshot(ARTIFACTS / "window-interrupted.png")
        click_button(session, "Resume the interrupted turn")
        WebDriverWait(session, 30).until(lambda s: "fast answer" in answer_text(s) and "slow answer" in answer_text(s))
        treeitem(session, "slow, ok")
        assert runs.read_text().count("run") == 1, "the fast agent ran again"
        assert not session.find_elements(By.XPATH, '//button[normalize-space()="Resume"]')


def test_handoff_and_escalation_show_who_answered(window):
    session, _ = window
    box = message_box(session)
    box.send_keys("@summariser no tools please, just summarise switchboards and operators")
    box.send_keys(Keys.ENTER)
    # The handoff goes to the summariser itself: it answers as the root (the demo
    # agents answer directly when told "no tools").
    WebDriverWait(session, 30).until(lambda s: "Summary:" in answer_text(s))
    WebDriverWait(session, 10).until(
        lambda s: len(s.find_elements(By.CSS_SELECTOR, 'li[aria-label="Answer from summariser"]')) == 1
    )
    treeitem(session, "summariser, ok")

    box = message_box(session)
    box.send_keys("escalate: this needs the expert")
    box.send_keys(Keys.ENTER)
    WebDriverWait(session, 30).until(lambda s: "As the escalation expert" in answer_text(s))
    expert = WebDriverWait(session, 10).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, 'li[aria-label="Answer from expert"]'))
    )
    assert expert.find_element(By.CSS_SELECTOR, ".who").text.startswith("expert")
    treeitem(session, "expert, ok")
    # The primary that handed over says so where its output would be, not "…".
    treeitem(session, "assistant, ok").click()
    output = WebDriverWait(session, 10).until(
        expected_conditions.visibility_of_element_located(
            (By.CSS_SELECTOR, 'section[aria-label="Details of assistant"] pre[aria-label="Streamed output"]')
        )
    )
    assert "handed the turn to expert" in output.text, output.text


def test_a_link_in_a_reply_opens_outside_and_the_window_stays(tmp_path, monkeypatch):
    monkeypatch.delenv("WEBKIT_DISABLE_COMPOSITING_MODE", raising=False)
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    # It records the link, and whether the app's WebKit switch reached it (it should not).
    browser.write_text(
        f'#!/bin/sh\nprintf "%s %s\\n" "$1" "${{WEBKIT_DISABLE_COMPOSITING_MODE:-unset}}" >> "{opened}"\n'
    )
    browser.chmod(0o755)
    with launch(tmp_path, SWITCHBOARD_OPEN_LINKS_WITH=str(browser)) as session:
        app_url = session.current_url
        box = message_box(session)
        box.send_keys("@summariser no tools please, just summarise [the spec](https://example.com/spec) for me")
        box.send_keys(Keys.ENTER)
        WebDriverWait(session, 30).until(lambda s: "Summary:" in answer_text(s))
        click_when_ready(
            session, By.CSS_SELECTOR, 'li[aria-label="Answer from summariser"] a[href="https://example.com/spec"]'
        )
        WebDriverWait(session, 10).until(lambda _: opened.exists() and opened.read_text().strip())
        assert opened.read_text().splitlines() == ["https://example.com/spec unset"], (
            "the link went to the browser, once"
        )
        # The guard decides before it opens the link, so by now a navigation would
        # have been let through or cancelled: no waiting needed.
        assert session.current_url == app_url, f"the window navigated away to {session.current_url}"
        assert "Summary:" in answer_text(session), "the chat is still there"


def test_quitting_the_app_ends_a_kept_mcp_server_even_a_stubborn_one(tmp_path):
    """The runner cache keeps an MCP stdio server between calls, and an app that quits
    drops nothing on its way out: the exit itself ends every group still alive, even a
    server that ignores SIGTERM and its closed stdin (SIGKILL after the grace period)."""
    log = tmp_path / "remote.log"
    server = ROOT / "tests" / "mcp" / "remote_server.py"
    python = str(ROOT / ".venv" / "bin" / "python")
    remote = {
        "name": "remote",
        "provider": "mcp",
        "command": python,
        "args": [str(server)],
        "tool": "research",
        "env": {"REMOTE_LOG": str(log), "REMOTE_STUBBORN": "1"},
    }
    config = {
        "primary": "assistant",
        "agents": [{"name": "assistant", "provider": "demo", "model": "demo-planner"}, remote],
        "agent_tools": [{"agent": "remote", "description": "A remote agent.", "approval": "auto"}],
    }
    path = tmp_path / "config" / "switchboard" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(config))
    with launch(tmp_path) as session:
        box = message_box(session)
        box.send_keys("How do otters sleep?")
        box.send_keys(Keys.ENTER)
        treeitem(session, "remote, ok")
        WebDriverWait(session, 30).until(lambda _: "That is all from the demo agents." in answer_text(session))
        pid = int(log.read_text().split("stubborn pid=")[1].split()[0])
        assert alive(pid), "the server is kept between calls"
        # Ended as a logout or `kill` ends it: SIGTERM to the app.
        app = the_app()
        os.kill(app, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while (alive(pid) or alive(app)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(app), "the app ended on SIGTERM"
        assert not alive(pid), "the MCP server outlived the app"


def the_app() -> int:
    """The one `switchboard-app` process this test runs (below tauri-driver)."""
    apps = [
        found
        for found in process_tree(os.getpid())
        if Path(f"/proc/{found}/comm").exists() and Path(f"/proc/{found}/comm").read_text().strip() == "switchboard-app"
    ]
    assert len(apps) == 1, apps
    return apps[0]


def mcp_on_a_free_port(home: Path) -> None:
    """Port 0 in the app's preferences: the endpoint takes a free port (the default,
    8765, may be in use here)."""
    preferences = home / "data" / "dev.switchboard.desktop" / "prefs.json"
    preferences.parent.mkdir(parents=True)
    preferences.write_text(json.dumps({"mcpPort": 0}))


def switch_on_mcp(session) -> tuple[str, str]:
    """Switches the built-in MCP endpoint on in Settings → MCP; its address, and
    the bearer token shown that once."""
    open_settings(session, "MCP")
    WebDriverWait(session, 20).until(
        expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, '[data-testid="mcp-switch"]'))
    ).click()
    shown = lambda css: (  # noqa: E731
        WebDriverWait(session, 20)
        .until(expected_conditions.visibility_of_element_located((By.CSS_SELECTOR, css)))
        .text.strip()
    )
    return shown('[data-testid="mcp-url"]'), shown('[data-testid="mcp-token"]')


def approve_the_researcher_in_mcp_calls(session, wait: float) -> None:
    """Opens the "MCP calls" session once a call has made it (within `wait` s), and
    approves the researcher waiting there in the tree (the entry says ask)."""
    WebDriverWait(session, wait).until(
        expected_conditions.element_to_be_clickable(
            (By.XPATH, '//nav[@aria-label="Sessions"]//button[.//*[normalize-space()="MCP calls"]]')
        )
    ).click()
    click_tab(session, "Calls")
    treeitem(session, "researcher, waiting for approval")
    click_button(session, "Approve researcher once")
    treeitem(session, "researcher, ok")


def call_through_mcp(url: str, token: str, outcome: dict) -> None:
    """A real MCP client (the Python `mcp` package) calling a tool-agent at `url`
    with the endpoint's token; it declares elicitation and would accept any
    approval put to it (the window's user answers, not a client)."""
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    outcome["elicitations"] = []

    async def accept(_context, params):
        outcome["elicitations"].append(params.message)
        return types.ElicitResult(action="accept", content={})

    async def call():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy", read_timeout_seconds=120, elicitation_callback=accept) as client:
            outcome["tools"] = [tool.name for tool in (await client.list_tools()).tools]
            outcome["result"] = await client.call_tool("agent_researcher", {"request": "otters in rivers"})

    try:
        asyncio.run(call())
    except Exception as error:  # reported by the test, which waits for this thread
        outcome["error"] = repr(error)


def test_an_mcp_client_calls_through_the_apps_endpoint_and_the_call_shows_live(tmp_path):
    mcp_on_a_free_port(tmp_path)
    with launch(tmp_path) as session:
        url, token = switch_on_mcp(session)
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        screenshot(ARTIFACTS / "window-mcp-settings.png")
        # Without the token, nothing reaches the protocol.
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=20)
        assert refused.value.code == 401

        outcome: dict = {}
        client = threading.Thread(target=call_through_mcp, args=(url, token, outcome), daemon=True)
        client.start()
        # The call is a turn of the "MCP calls" session: open it; the delegate waits
        # for approval in the tree (the entry says ask), and the user approves it there.
        approve_the_researcher_in_mcp_calls(session, wait=30)
        client.join(timeout=60)
        assert not client.is_alive(), "the MCP client got no answer"
        assert "error" not in outcome, outcome.get("error")
        assert "agent_researcher" in outcome["tools"]
        result = outcome["result"]
        assert not result.is_error and result.structured_content["status"] == "ok", result
        assert result.structured_content["usage"]["total_tokens"] > 0
        assert outcome["elicitations"] == [], "the client was asked to approve"
        chat = session.find_element(By.CSS_SELECTOR, "main").text
        assert "MCP client" in chat and "agent_researcher" in chat, chat
        screenshot(ARTIFACTS / "window-mcp-call.png")


def claude_through_mcp(url: str, token: str, folder: Path, model: str, outcome: dict) -> None:
    """The real Claude Code (from tests/peers) calling `agent_researcher` at `url`,
    set up by `switchboard mcp connect claude-code --url … --write` in `folder`,
    its model on aimock at `model`."""
    peers = ROOT / "tests" / "peers" / "node_modules" / ".bin"
    home = folder / "claude-home"
    home.mkdir(exist_ok=True)
    environment = {
        "PATH": f"{peers}:{os.environ['PATH']}",
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": model,
        "ANTHROPIC_API_KEY": "test-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "SWITCHBOARD_MCP_TOKEN": token,
    }
    connect = subprocess.run(
        [
            str(ROOT / "target" / "debug" / "switchboard"),
            *("mcp", "connect", "claude-code", "--url", url, "--token-env", "SWITCHBOARD_MCP_TOKEN", "--write"),
        ],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    outcome["connect"] = connect.returncode
    finished = subprocess.run(
        [
            "claude",
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-code-m",
            "--allowedTools",
            "mcp__switchboard__agent_researcher",
            "--",
            "Ask the researcher about otters.",
        ],
        cwd=folder,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    events = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    outcome["result"] = next((event.get("result") for event in events if event.get("type") == "result"), None)
    outcome["stdout"] = finished.stdout[-3000:]


def test_claude_code_calls_through_the_apps_endpoint_and_the_call_shows_in_its_tree(tmp_path):
    from aimock_peer import aimock

    fixtures = {
        "fixtures": [
            {
                "match": {"model": "claude-code-m", "toolResultContains": "AGENT_RESULT"},
                "response": {"content": "The researcher answered."},
            },
            {"match": {"model": "claude-code-m", "hasToolResult": True}, "response": {"content": "NO ANSWER"}},
            {
                "match": {"model": "claude-code-m", "hasToolResult": False},
                "response": {
                    "toolCalls": [
                        {
                            "id": "c1",
                            "name": "mcp__switchboard__agent_researcher",
                            "arguments": {"request": "otters in rivers"},
                        }
                    ]
                },
            },
        ]
    }
    mcp_on_a_free_port(tmp_path)
    with aimock(fixtures) as model, launch(tmp_path) as session:
        url, token = switch_on_mcp(session)
        outcome: dict = {}
        client = threading.Thread(target=claude_through_mcp, args=(url, token, tmp_path, model, outcome), daemon=True)
        client.start()
        try:
            # Claude Code takes a few seconds to start before it calls.
            approve_the_researcher_in_mcp_calls(session, wait=60)
        except Exception:
            client.join(timeout=60)
            raise AssertionError(f"no call waited for approval in the tree: {outcome}")
        client.join(timeout=120)
        assert not client.is_alive(), "Claude Code got no answer"
        assert outcome.get("connect") == 0
        assert outcome["result"] == "The researcher answered.", outcome.get("stdout")
        chat = session.find_element(By.CSS_SELECTOR, "main").text
        assert "MCP client" in chat and "agent_researcher" in chat, chat


def write_config(path: Path, config: dict) -> None:
    """As an editor saves: a new file renamed over the old one."""
    staging = path.with_suffix(".json.new")
    staging.write_text(json.dumps(config, indent=2))
    os.replace(staging, path)


def wait_in_page_for(session, css: str, text: str):
    """Starts watching the page for an element `css` whose text holds `text`; returns
    a function that waits for it and gives the wall-clock ms at which the page saw it."""
    session.execute_script(
        """
        const [css, text] = arguments;
        window.__seenAt = null;
        const check = () => {
          if (window.__seenAt === null
              && [...document.querySelectorAll(css)].some((e) => e.textContent.includes(text))) {
            window.__seenAt = Date.now();
          }
        };
        new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true });
        check();
        """,
        css,
        text,
    )

    def seen() -> float:
        return WebDriverWait(session, 20).until(lambda s: s.execute_script("return window.__seenAt"))

    return seen


def test_the_app_follows_the_config_file_and_shows_a_broken_one_until_it_is_fixed(window, capsys):
    """A hand edit shows in the settings without a restart (the time it took is
    printed in the suite's output, not asserted); a broken file is a banner naming
    file, line and column while the last good config stays in force; the fix brings
    everything back, the chat's @agent completion included; a misspelt field is a
    warning beside its agent in the Agents & tools sheet."""
    session, home = window
    path = home / "config" / "switchboard" / "config.json"
    open_settings(session, "Agents & tools")
    WebDriverWait(session, 20).until(
        lambda s: "researcher" in s.find_element(By.CSS_SELECTOR, '[aria-label="Agents"]').text
    )
    config = json.loads(path.read_text())
    config["agents"].append({"name": "otter-scout", "provider": "demo", "model": "demo-researcher"})

    figures = []
    for attempt in range(3):
        name = f"otter-scout-{attempt}"
        config["agents"][-1]["name"] = name
        seen = wait_in_page_for(session, '[aria-label="Agents"]', name)
        written_ms = time.time() * 1000
        write_config(path, config)
        figures.append(seen() - written_ms)
    figures.sort()
    with capsys.disabled():
        runs = ", ".join(f"{figure:.0f}" for figure in figures)
        print(f"\nconfig edit on disk -> visible in the window: median {figures[1]:.0f} ms (runs: {runs})")

    good = path.read_text()
    path.write_text(good[: good.index('"agents"')] + '"agents": [ ,\n')
    # Said in the header whatever is open, and where and why in Settings → General.
    broken_notice = '//header//button[@aria-label="The config file is not in force: show why"]'
    WebDriverWait(session, 20).until(expected_conditions.visibility_of_element_located((By.XPATH, broken_notice)))
    open_settings(session, "General")
    banner = WebDriverWait(session, 20).until(
        expected_conditions.visibility_of_element_located((By.XPATH, '//*[@role="alert"][contains(., "not in force")]'))
    )
    assert str(path) in session.find_element(By.CSS_SELECTOR, '[aria-label="Settings"]').text, "the file is named"
    assert "line" in banner.text and "column" in banner.text, banner.text
    open_settings(session, "Agents & tools")
    assert "otter-scout-2" in session.find_element(By.CSS_SELECTOR, '[aria-label="Agents"]').text, (
        "the last good config stays"
    )
    screenshot(ARTIFACTS / "window-config-broken.png")

    # A switch flipped while the file is broken is refused with the file's error;
    # the file restored exactly as it was (so the same version) ends the refusal.
    click_when_ready(session, By.XPATH, '//button[normalize-space()="Edit agents and tools…"]')
    click_tab(session, "Tool-agents")
    switch = '//*[@role="switch" and @aria-label="researcher enabled"]'
    click_when_ready(session, By.XPATH, switch)
    refusal = '//p[contains(@class, "refusal")][contains(., "config.json")]'
    WebDriverWait(session, 20).until(expected_conditions.visibility_of_element_located((By.XPATH, refusal)))
    path.write_text(good)
    WebDriverWait(session, 20).until(lambda s: not s.find_elements(By.XPATH, broken_notice))
    WebDriverWait(session, 20).until(lambda s: not s.find_elements(By.XPATH, refusal))
    session.find_element(By.XPATH, '//button[@aria-label="Close agents and tools"]').click()

    config["agents"][-1]["name"] = "otter-fixed"
    config["agents"][-1]["temprature"] = 0.2  # misspelt: kept, and warned about beside the agent
    write_config(path, config)
    WebDriverWait(session, 20).until(
        lambda s: "otter-fixed" in s.find_element(By.CSS_SELECTOR, '[aria-label="Agents"]').text
    )
    WebDriverWait(session, 20).until(lambda s: not s.find_elements(By.XPATH, broken_notice))
    close_settings(session)
    box = message_box(session)
    box.send_keys("@otter")
    WebDriverWait(session, 10).until(lambda s: s.find_element(By.ID, "chat-completions").text.strip() == "@otter-fixed")
    box.send_keys(Keys.ESCAPE)
    open_settings(session, "Agents & tools")
    WebDriverWait(session, 10).until(
        expected_conditions.element_to_be_clickable((By.XPATH, '//button[normalize-space()="Edit agents and tools…"]'))
    ).click()
    listed = WebDriverWait(session, 10).until(
        expected_conditions.presence_of_element_located(
            (
                By.XPATH,
                '//ul[@aria-label="Configured agents"]/li[.//span[contains(@class, "name") and .="otter-fixed"]]',
            )
        )
    )
    WebDriverWait(session, 10).until(lambda _: "unknown field `temprature`" in listed.text)


def test_a_remote_a2a_agent_asks_a_question_answered_in_the_tree(tmp_path):
    """An A2A agent (the a2a-sdk test server) stops in input-required: the tree
    shows its question with an answer box; the answer continues the remote task,
    whose result comes back into the turn."""
    port = free_port()
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "tests" / "a2a" / "a2a_server.py")],
        env=dict(os.environ, PORT=str(port)),
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server, "the A2A agent")
        config_path = tmp_path / "config" / "switchboard" / "config.json"
        config_path.parent.mkdir(parents=True)
        config_path.write_text(
            json.dumps(
                {
                    "primary": "assistant",
                    "agents": [
                        {"name": "assistant", "provider": "demo", "model": "demo-planner", "delay_ms": 5},
                        {"name": "scout", "provider": "a2a", "url": f"http://127.0.0.1:{port}"},
                    ],
                    "agent_tools": [{"agent": "scout", "description": "Finds facts about rivers.", "approval": "auto"}],
                }
            )
        )
        with launch(tmp_path) as session:
            box = message_box(session)
            box.send_keys("Ask the scout, who needs input about rivers")
            box.send_keys(Keys.ENTER)
            scout = treeitem(session, "scout, asks a question")
            assert "remote" in scout.text, "the remote badge shows"
            prompt = WebDriverWait(session, 20).until(
                expected_conditions.visibility_of_element_located(
                    (By.CSS_SELECTOR, '[role="alertdialog"][aria-label="scout asks a question"]')
                )
            )
            assert "Which river?" in prompt.text, prompt.text
            # Answered in the call's details, opened from the tree.
            scout.click()
            details = WebDriverWait(session, 20).until(
                expected_conditions.presence_of_element_located(
                    (By.CSS_SELECTOR, 'section[aria-label="Details of scout"]')
                )
            )
            assert "scout asks: Which river?" in details.text, details.text
            answer = WebDriverWait(session, 20).until(
                expected_conditions.element_to_be_clickable(
                    (By.CSS_SELECTOR, 'section[aria-label="Details of scout"] input[aria-label="Your answer to scout"]')
                )
            )
            answer.send_keys("the Rhine")
            screenshot(ARTIFACTS / "window-a2a-question.png")
            click_button_in(session, 'section[aria-label="Details of scout"]', "Send the answer to scout")
            treeitem(session, "scout, ok")
            WebDriverWait(session, 20).until(lambda s: "Facts about the Rhine." in details.text)
            assert "answered by the user" in details.text and "the Rhine" in details.text, details.text
            treeitem(session, "assistant, ok")
            screenshot(ARTIFACTS / "window-a2a-answered.png")
    finally:
        server.terminate()
        server.wait(timeout=30)


def click_button_in(session, scope: str, label: str):
    click_when_ready(session, By.CSS_SELECTOR, f'{scope} button[aria-label="{label}"]')


def test_a_new_user_sets_up_an_http_agent_and_a_tool_agent_without_touching_json(tmp_path):
    """From nothing to a working config in the setup wizard, on a first start: the
    wizard finds an OpenAI-compatible server (aimock, listed in
    SWITCHBOARD_LOCAL_SERVERS), offers its models as agents, the user names two,
    makes one the primary and the other a tool-agent; the config on disk is what
    was chosen, and the first message is answered through the delegate."""
    from aimock_peer import aimock, delegating_fixtures

    fixtures = delegating_fixtures(
        "primary-m", "agent_helper", "Find the river facts", "The lead summarised the helper."
    )
    fixtures["fixtures"].append({"match": {"model": "helper-m"}, "response": {"content": "The helper's finding."}})
    with (
        aimock(fixtures) as model_url,
        launch(tmp_path, setup_wizard=True, SWITCHBOARD_LOCAL_SERVERS=model_url) as session,
    ):
        base = f"{model_url}/v1"
        WebDriverWait(session, 30).until(
            expected_conditions.visibility_of_element_located((By.XPATH, f'//legend[contains(., "{base}")]'))
        )
        for model, name in (("primary-m", "lead"), ("helper-m", "helper")):
            session.find_element(
                By.XPATH, f'//fieldset[.//legend[contains(., "{base}")]]//label[normalize-space()="{model}"]/input'
            ).click()
            field = session.find_element(By.CSS_SELECTOR, f'input[aria-label="Agent name for {model} on Server"]')
            field.clear()
            field.send_keys(name)
        screenshot(ARTIFACTS / "window-setup-servers.png")
        next_button = '//footer//button[normalize-space()="Next"]'
        session.find_element(By.XPATH, next_button).click()
        WebDriverWait(session, 10).until(
            expected_conditions.element_to_be_clickable(
                (By.XPATH, '//label[contains(@class, "role")][starts-with(normalize-space(), "lead")]/input')
            )
        ).click()
        session.find_element(By.XPATH, next_button).click()
        WebDriverWait(session, 10).until(
            expected_conditions.element_to_be_clickable(
                (By.XPATH, '//ul[contains(@class, "tools")]//label[normalize-space()="helper"]/input')
            )
        ).click()
        description = session.find_element(By.XPATH, '//label[contains(., "Description of helper")]/textarea')
        assert "helper-m" in description.get_attribute("value"), "the description comes prefilled"
        description.clear()
        description.send_keys("Finds river facts.")
        session.find_element(By.XPATH, next_button).click()
        WebDriverWait(session, 10).until(
            expected_conditions.element_to_be_clickable(
                (By.XPATH, '//footer//button[normalize-space()="Write the config"]')
            )
        ).click()
        WebDriverWait(session, 20).until(
            lambda s: not s.find_elements(By.XPATH, '//h2[normalize-space()="Set up Switchboard"]')
        )

        written = json.loads((tmp_path / "config" / "switchboard" / "config.json").read_text())
        agents = {agent["name"]: agent for agent in written["agents"]}
        assert sorted(agents) == ["helper", "lead"], written
        assert agents["lead"]["url"] == base and agents["lead"]["model"] == "primary-m", agents["lead"]
        assert written["primary"] == "lead"
        assert [(entry["agent"], entry["description"]) for entry in written["agent_tools"]] == [
            ("helper", "Finds river facts.")
        ]

        box = message_box(session)
        box.send_keys("Find the river facts")
        box.send_keys(Keys.ENTER)
        click_button(session, "Approve helper once")
        treeitem(session, "helper, ok")
        treeitem(session, "lead, ok")
        WebDriverWait(session, 30).until(lambda s: "The lead summarised the helper." in answer_text(s))
        screenshot(ARTIFACTS / "window-setup-first-answer.png")


def test_an_agent_added_in_the_form_is_tested_written_and_a_conflict_is_settled(window):
    """The Agents & tools sheet on the real backend: a new HTTP agent's connection
    test reaches the server (aimock), the agent is written to the file; then the
    file changes on disk while the agent's form is being edited, and saving shows
    the conflict, settled with "Keep mine"."""
    from aimock_peer import aimock

    session, home = window
    path = home / "config" / "switchboard" / "config.json"
    fixtures = {"fixtures": [{"match": {"model": "writer-m"}, "response": {"content": "ok"}}]}
    with aimock(fixtures) as model_url:
        form = open_new_agent_form(session)

        def by_label(label):
            return field_in(session, form, label)

        for label, value in (("Name", "writer"), ("URL", f"{model_url}/v1"), ("Model", "writer-m")):
            by_label(label).send_keys(value)
        session.find_element(By.XPATH, f'{form}//button[normalize-space()="Test connection"]').click()
        status = WebDriverWait(session, 30).until(
            expected_conditions.visibility_of_element_located((By.XPATH, f'{form}//*[@role="status"]'))
        )
        steps = session.find_element(By.XPATH, f'{form}//ol[@aria-label="Connection test steps"]').text
        assert "1 model(s)" in steps and 'answered "ok"' in steps, steps
        section = session.find_element(By.XPATH, f'{form}//section[@aria-label="Connection test"]').text
        assert "writer-m" in section, section
        assert "fail" not in status.get_attribute("class"), status.text
        screenshot(ARTIFACTS / "window-agent-form.png")
        session.find_element(By.XPATH, f'{form}//button[normalize-space()="Add agent"]').click()
        WebDriverWait(session, 20).until(
            lambda s: "writer" in [a["name"] for a in json.loads(path.read_text())["agents"]]
        )
        written = next(a for a in json.loads(path.read_text())["agents"] if a["name"] == "writer")
        assert written == {"name": "writer", "provider": "local", "url": f"{model_url}/v1", "model": "writer-m"}, (
            written
        )

        # Mine: a new model, typed in the form. Theirs: a new URL, saved by an editor.
        WebDriverWait(session, 20).until(
            expected_conditions.element_to_be_clickable(
                (By.XPATH, '//ul[@aria-label="Configured agents"]//button[starts-with(normalize-space(), "writer")]')
            )
        ).click()
        form = '//form[@aria-label="Agent writer"]'
        model = WebDriverWait(session, 20).until(lambda s: by_label("Model"))
        model.clear()
        model.send_keys("writer-m2")
        config = json.loads(path.read_text())
        next(a for a in config["agents"] if a["name"] == "writer")["url"] = "http://127.0.0.1:9/v1"
        write_config(path, config)
        WebDriverWait(session, 20).until(
            lambda s: "The file changed on disk while you were editing" in s.find_element(By.XPATH, form).text
        )
        session.find_element(By.XPATH, f'{form}//button[normalize-space()="Save"]').click()
        conflict = WebDriverWait(session, 20).until(
            expected_conditions.visibility_of_element_located((By.XPATH, '//*[@aria-labelledby="conflict-title"]'))
        )
        assert "writer-m2" in conflict.text and "127.0.0.1:9" in conflict.text, conflict.text
        screenshot(ARTIFACTS / "window-config-conflict.png")
        conflict.find_element(By.XPATH, './/button[normalize-space()="Keep mine"]').click()
        WebDriverWait(session, 20).until(
            lambda s: (
                next(a for a in json.loads(path.read_text())["agents"] if a["name"] == "writer")["model"] == "writer-m2"
            )
        )
