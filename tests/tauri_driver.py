"""The real window over WebDriver: tauri-driver (with the WebKitWebDriver it starts)
on free loopback ports, and a session of an application once both listen; when the
session ends, whatever still runs below the driver is ended too. Shared by the window
tests, the package test and `make bench-memory`. Screenshots are read from the X
server (`screenshot`), as the user sees the screen."""

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import (
    ElementClickInterceptedException,
    ElementNotInteractableException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait as SeleniumWait

from loopback import free_port

# Debian's python3-gi, not the tests' virtual environment, has Gdk.
_CAPTURE = """
import sys, gi
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk
root = Gdk.get_default_root_window()
Gdk.pixbuf_get_from_window(root, 0, 0, root.get_width(), root.get_height()).savev(sys.argv[1], "png", [], [])
"""


class WebDriverWait(SeleniumWait):
    """Selenium's wait that also tries again while an element it found is replaced
    by a re-render (stale): under load the window may render a streamed answer
    again between finding an element and looking at it."""

    def __init__(self, driver, timeout, ignored_exceptions=()):
        super().__init__(driver, timeout, ignored_exceptions=(StaleElementReferenceException, *ignored_exceptions))


def click_when_ready(session, by: str, selector: str, timeout: float = 20) -> None:
    """Clicks the element once it is there and clickable, finding it again if it
    was re-rendered, or covered for a moment, when the click came."""

    def clicked(driver) -> bool:
        expected_conditions.element_to_be_clickable((by, selector))(driver).click()
        return True

    retried = (ElementClickInterceptedException, ElementNotInteractableException, AttributeError)
    WebDriverWait(session, timeout, ignored_exceptions=retried).until(clicked)


def screenshot(path: Path) -> None:
    """The X screen (Xvfb's, where the window is) as a PNG at `path`. WebKitWebDriver's
    own screenshot waits for the page's next presentation update, and with WebKit's
    accelerated compositing off (the app's default) a page that has stopped changing
    may not have one for minutes: seen after a turn ended, while the screen showed it."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["/usr/bin/python3", "-c", _CAPTURE, str(path)], check=True, timeout=30)


def children_by_parent() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            # The name in parentheses may hold spaces: the fields after the last ")" are fixed.
            stat = Path(f"/proc/{entry}/stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    return children


def process_tree(root: int) -> list[int]:
    """`root` and every process below it."""
    children = children_by_parent()
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextlib.contextmanager
def driven(application: Path, environment: dict[str, str]):
    """A WebDriver session of `application` started with `environment`; yields the
    session and tauri-driver's process (the application runs below it)."""
    port, native_port = free_port(), free_port()
    driver_process = subprocess.Popen(
        ["tauri-driver", "--port", str(port), "--native-port", str(native_port)],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    below: list[int] = []
    try:
        # Both must listen before a session is asked for: tauri-driver forwards to
        # WebKitWebDriver on the native port, and on a busy machine that one starts
        # later (a session asked for before then is dropped without an answer).
        deadline = time.monotonic() + 30
        for listening_port, name in ((port, "tauri-driver"), (native_port, "WebKitWebDriver")):
            while True:
                try:
                    socket.create_connection(("127.0.0.1", listening_port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or driver_process.poll() is not None:
                        raise RuntimeError(f"{name} did not start listening")
                    time.sleep(0.2)
        options = ArgOptions()
        options.set_capability("browserName", "wry")
        options.set_capability("tauri:options", {"application": str(application)})
        session = webdriver.Remote(command_executor=f"http://127.0.0.1:{port}", options=options)
        try:
            yield session, driver_process
        finally:
            below = process_tree(driver_process.pid)[1:]
            # A test may have ended the app itself (its last window closed).
            with contextlib.suppress(WebDriverException):
                session.quit()
    finally:
        driver_process.terminate()
        driver_process.wait(timeout=10)
        end_leftovers(below)


def end_leftovers(pids: list[int]) -> None:
    """WebKitWebDriver does not always close the application when its session ends
    (seen under load): what ran below the driver is ended here (SIGTERM, then SIGKILL
    after 10 s), so that no test sees the previous one's app."""
    for pid in (pid for pid in pids if alive(pid)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in (pid for pid in pids if alive(pid)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
