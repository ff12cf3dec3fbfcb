"""An HTTP agent's API key in the system keyring, on the real window: a real Secret
Service (gnome-keyring, unlocked, on a private session bus) is the keyring; a new
user adds a hosted model in the agent form with its key, the connection test and
a chat turn reach a loopback model server with that key as their bearer token, and
`secret-tool` reads it back from the keyring. The key is in neither the config file,
the session log, anything else the app wrote, nor the page (the server echoes it in
its answer: redacted). A key changed with `switchboard agent key set` is the next
step's bearer."""

import contextlib
import json
import os
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select

from tauri_driver import WebDriverWait, screenshot
from test_window import (
    ARTIFACTS,
    ROOT,
    answer_text,
    close_settings,
    field_in,
    launch,
    mcp_on_a_free_port,
    message_box,
    open_new_agent_form,
    switch_on_mcp,
)

CLI = ROOT / "target" / "debug" / "switchboard"
KEY = "sk-test-kept-in-the-keyring-7f3a9c"
NEW_KEY = "sk-test-set-from-the-terminal-41d2"
# The sheet's primary-agent select, found by its label as a person finds it.
PRIMARY_SELECT = '//dialog[@open]//label[normalize-space()="Primary"]/following-sibling::select[1]'


@contextlib.contextmanager
def secret_service(folder: Path):
    """A private session bus with gnome-keyring's Secret Service on it, its login
    keyring created and unlocked with a password given on stdin (its files under
    `folder`); yields the environment a client of it needs."""
    folder.mkdir(parents=True)
    runtime = folder / "run"
    runtime.mkdir(mode=0o700)
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE, text=True
    )
    address = bus.stdout.readline().strip()
    environment = {
        "DBUS_SESSION_BUS_ADDRESS": address,
        "HOME": str(folder),
        "XDG_DATA_HOME": str(folder / "data"),
        "XDG_RUNTIME_DIR": str(runtime),
        "PATH": "/usr/bin:/bin",
    }
    keyring = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--components=secrets", "--unlock"],
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    keyring.stdin.write(b"the-test-keyring-password")
    keyring.stdin.close()
    try:
        deadline = time.monotonic() + 30
        while not owns_the_secret_service(environment):
            assert keyring.poll() is None, "gnome-keyring-daemon exited before it was on the bus"
            assert time.monotonic() < deadline, "gnome-keyring-daemon was not on the bus within 30 s"
            time.sleep(0.05)
        yield environment
    finally:
        for process in (keyring, bus):
            process.kill()
            process.wait(timeout=10)


def owns_the_secret_service(environment: dict) -> bool:
    asked = subprocess.run(
        ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
         "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"],
        env=environment, capture_output=True, text=True, timeout=10,
    )  # fmt: skip
    return "boolean true" in asked.stdout


@contextlib.contextmanager
def recording_model_server():
    """An OpenAI-compatible server on loopback that keeps each request's
    Authorization header and answers with what it was sent as a key (a hostile
    echo: the app must take it out)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append(self.headers.get("Authorization", ""))
            self.reply(200, "application/json", json.dumps({"object": "list", "data": [{"id": "gpt-test"}]}))

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            authorization = self.headers.get("Authorization", "")
            seen.append(authorization)
            text = f"Hello. You sent me {authorization.removeprefix('Bearer ')} as your key."
            chunks = [
                {"choices": [{"index": 0, "delta": {"content": text}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}},
            ]  # fmt: skip
            body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
            self.reply(200, "text/event-stream", body)

        def reply(self, status: int, kind: str, body: str):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def files_holding(folder: Path, text: str) -> list[str]:
    return [
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and text.encode() in path.read_bytes()
    ]


@pytest.mark.skipif(not CLI.exists(), reason="needs the switchboard CLI: cargo build -p switchboard-cli")
def test_a_key_typed_in_the_form_lands_in_the_keyring_and_reaches_the_server_and_nowhere_else(tmp_path):
    home, keyring_home = tmp_path / "app", tmp_path / "keyring"
    path = home / "config" / "switchboard" / "config.json"
    mcp_on_a_free_port(home)
    with (
        secret_service(keyring_home) as bus,
        recording_model_server() as (model_url, seen),
        launch(home, DBUS_SESSION_BUS_ADDRESS=bus["DBUS_SESSION_BUS_ADDRESS"]) as session,
    ):
        form = open_new_agent_form(session)

        def by_label(label):
            return field_in(session, form, label)

        for label, value in (("Name", "hosted"), ("URL", model_url), ("Model", "gpt-test")):
            by_label(label).send_keys(value)
        Select(by_label("API key")).select_by_value("keyring")
        key_field = WebDriverWait(session, 10).until(lambda s: by_label("Key"))
        assert key_field.get_attribute("type") == "password"
        key_field.send_keys(KEY)
        session.find_element(By.XPATH, f'{form}//button[normalize-space()="Test connection"]').click()
        WebDriverWait(session, 30).until(
            lambda s: (
                "stream a reply" in s.find_element(By.XPATH, f'{form}//section[@aria-label="Connection test"]').text
            )
        )
        steps = session.find_element(By.XPATH, f'{form}//ol[@aria-label="Connection test steps"]').text
        assert "1 model(s)" in steps and "[redacted]" in steps and KEY not in steps, steps
        assert seen and all(header == f"Bearer {KEY}" for header in seen), seen
        screenshot(ARTIFACTS / "window-keyring-form.png")
        session.find_element(By.XPATH, f'{form}//button[normalize-space()="Add agent"]').click()
        WebDriverWait(session, 20).until(
            lambda s: "hosted" in [agent["name"] for agent in json.loads(path.read_text())["agents"]]
        )
        written = next(agent for agent in json.loads(path.read_text())["agents"] if agent["name"] == "hosted")
        assert written == {
            "name": "hosted",
            "provider": "local",
            "url": model_url,
            "model": "gpt-test",
            "api_key_keyring": "hosted",
        }, written
        lookup = ["secret-tool", "lookup", "service", "switchboard", "username", "hosted"]
        stored = subprocess.run(lookup, env=bus, capture_output=True, text=True, timeout=10)
        assert stored.stdout == KEY, (stored.stdout, stored.stderr)

        # The hosted model answers the chat: its key is its bearer, its echo redacted.
        WebDriverWait(session, 20).until(
            expected_conditions.element_to_be_clickable((By.XPATH, PRIMARY_SELECT))
        )  # fmt: skip
        Select(session.find_element(By.XPATH, PRIMARY_SELECT)).select_by_value("hosted")
        WebDriverWait(session, 20).until(lambda s: json.loads(path.read_text()).get("primary") == "hosted")
        session.find_element(By.XPATH, '//button[@aria-label="Close agents and tools"]').click()
        close_settings(session)
        box = message_box(session)
        box.send_keys("Say hello")
        box.send_keys(Keys.ENTER)
        WebDriverWait(session, 30).until(lambda s: "as your key." in answer_text(s))
        assert answer_text(session) == "Hello. You sent me [redacted] as your key.", answer_text(session)
        assert seen[-1] == f"Bearer {KEY}", seen
        screenshot(ARTIFACTS / "window-keyring-answer.png")

        # A key set in a terminal is the next step's bearer: read at each step, not kept.
        environment = {**os.environ, **bus, "XDG_CONFIG_HOME": str(home / "config")}
        environment["HOME"] = bus["HOME"]
        changed = subprocess.run(
            [str(CLI), "--config", str(path), "agent", "key", "set", "hosted"],
            input=f"{NEW_KEY}\n", env=environment, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert changed.returncode == 0, changed.stderr
        assert NEW_KEY not in changed.stdout + changed.stderr
        status = subprocess.run(
            [str(CLI), "--config", str(path), "agent", "key", "status", "hosted"],
            env=environment, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert status.returncode == 0 and "a key is stored" in status.stdout, status
        box = message_box(session)
        box.send_keys("Again")
        box.send_keys(Keys.ENTER)
        WebDriverWait(session, 30).until(
            lambda s: (
                len(s.find_elements(By.CSS_SELECTOR, 'li[aria-label^="Answer from"]')) >= 2
                and "as your key." in answer_text(s)
            )
        )
        assert seen[-1] == f"Bearer {NEW_KEY}", seen
        page = session.page_source
        assert KEY not in page and NEW_KEY not in page, "a key reached the page"

        # The MCP endpoint's token: made at its first start, shown once, kept in
        # the keyring, where `switchboard mcp token` reads it for a client's shell.
        _, endpoint_token = switch_on_mcp(session)
        lookup = ["secret-tool", "lookup", "service", "switchboard", "username", "mcp-endpoint-token"]
        stored = subprocess.run(lookup, env=bus, capture_output=True, text=True, timeout=10)
        assert stored.stdout == endpoint_token, (stored.stdout, stored.stderr)
        printed = subprocess.run(
            [str(CLI), "mcp", "token"], env=environment, capture_output=True, text=True, timeout=30
        )  # fmt: skip
        assert printed.stdout.strip() == endpoint_token, printed
        assert (
            "kept in the system keyring"
            in session.find_element(By.CSS_SELECTOR, '[aria-labelledby="mcp-token-heading"]').text
        )
        close_settings(session)

    for key in (KEY, NEW_KEY, endpoint_token):
        assert files_holding(home, key) == [], f"the app wrote the key to {files_holding(home, key)}"
    logs = list((home / "data").rglob("*.jsonl"))
    assert logs and any("[redacted]" in log.read_text() for log in logs), "the session log records the turn"
