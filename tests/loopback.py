"""Loopback ports for the Python suites: a free one to give a server, and a wait
(bounded, failing with what did not start) until a started server listens."""

import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str, wait: float = 30) -> None:
    """Returns once something listens on `port`; fails if `process` exits first or `wait` runs out."""
    deadline = time.monotonic() + wait
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert process.poll() is None, f"{what} exited before it listened on {port}"
            assert time.monotonic() < deadline, f"{what} did not listen on {port} within {wait} s"
            time.sleep(0.1)
