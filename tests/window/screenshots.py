"""The docs' screenshots of the real window (`make screenshots`), under an Xvfb screen
of the size given: one turn on the demo agents (both delegates approved), the
researcher's call picked in the tree, in the light theme and then the dark one.
Writes docs/screenshots/window-WIDTHxHEIGHT-light.png and -dark.png. Not a test: it
asserts only what it needs to reach the picture."""

import sys
import tempfile
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tauri_driver import WebDriverWait, screenshot
from test_window import ROOT, answer_a_demo_turn, launch, treeitem

OUT = ROOT / "docs" / "screenshots"


def main(width: int, height: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="switchboard-screenshots-"))
    with launch(home) as session:
        session.set_window_rect(x=0, y=0, width=width, height=height)
        WebDriverWait(session, 10).until(lambda s: s.execute_script("return window.innerWidth") == width)
        answer_a_demo_turn(session)
        treeitem(session, "researcher, ok").click()
        session.execute_script("document.activeElement?.blur()")
        for theme in ("light", "dark"):
            Select(session.find_element(By.CSS_SELECTOR, 'select[aria-label="Theme"]')).select_by_value(theme)
            WebDriverWait(session, 10).until(
                lambda s, theme=theme: s.execute_script("return document.documentElement.dataset.theme") == theme
            )
            screenshot(OUT / f"window-{width}x{height}-{theme}.png")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
