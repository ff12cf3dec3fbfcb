"""The installable package as a user gets it: the `.deb` that `make package` builds
is unpacked into a temporary root (`dpkg-deb -x`, no installation), holds the app,
the `switchboard` CLI and a desktop entry, and its app starts and shows its window
under Xvfb (driven through tauri-driver, as the window tests do); its CLI answers."""

import configparser
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# `make test-package` builds the .deb from the debug programs (target/debug/bundle/deb);
# DEB=release checks the one `make package` builds.
BUNDLE = pathlib.Path(os.environ.get("DEB_DIR", ROOT / "target" / "debug" / "bundle" / "deb"))


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    packages = sorted(BUNDLE.glob("*.deb"))
    assert packages, f"no .deb in {BUNDLE}: build it with `make package-debug` or `make package`"
    root = tmp_path_factory.mktemp("deb-root")
    subprocess.run(["dpkg-deb", "-x", str(packages[-1]), str(root)], check=True)
    control = subprocess.run(["dpkg-deb", "-f", str(packages[-1])], check=True, capture_output=True, text=True).stdout
    return root, control


def test_the_deb_holds_the_app_the_cli_and_a_desktop_entry(unpacked):
    root, control = unpacked
    app = root / "usr" / "bin" / "switchboard-app"
    cli = root / "usr" / "bin" / "switchboard"
    for program in (app, cli):
        assert program.is_file() and os.access(program, os.X_OK), f"{program} is missing or not executable"
    entries = list((root / "usr" / "share" / "applications").glob("*.desktop"))
    assert len(entries) == 1, entries
    entry = configparser.ConfigParser(interpolation=None)
    entry.read(entries[0])
    desktop = entry["Desktop Entry"]
    assert desktop["Exec"].split()[0] == "switchboard-app" and desktop["Name"] == "Switchboard", dict(desktop)
    assert desktop.get("Icon"), "the entry names an icon"
    assert list((root / "usr" / "share" / "icons").rglob(desktop["Icon"] + ".png")), "the icon is in the package"
    assert "Package: switchboard" in control and "Depends:" in control and "libwebkit2gtk-4.1" in control, control


def test_the_packaged_cli_answers(unpacked, tmp_path):
    root, _ = unpacked
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"primary": "a", "agents": [{"name": "a", "provider": "demo"}]}))
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    cli = str(root / "usr" / "bin" / "switchboard")
    checked = subprocess.run([cli, "--config", str(config), "check"], capture_output=True, text=True, env=environment)
    assert checked.returncode == 0 and "valid" in checked.stdout, checked.stderr
    asked = subprocess.run(
        [cli, "--config", str(config), "--data-dir", str(tmp_path / "data"), "ask", "--events", "none", "hello"],
        capture_output=True,
        text=True,
        env=environment,
    )
    assert asked.returncode == 0 and asked.stdout.strip(), asked.stderr


def test_the_packaged_app_starts_and_shows_its_window(unpacked, tmp_path, monkeypatch):
    import test_window
    from tauri_driver import screenshot

    root, _ = unpacked
    monkeypatch.setattr(test_window, "APP", root / "usr" / "bin" / "switchboard-app")
    with test_window.launch(tmp_path) as session:
        test_window.open_settings(session, "Agents & tools")
        assert session.title == "Switchboard" or session.title.startswith("Switchboard")
        assert (tmp_path / "config" / "switchboard" / "config.json").exists(), "the first start wrote the demo config"
        screenshot(test_window.ARTIFACTS / "package-window.png")
