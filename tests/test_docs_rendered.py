"""The documentation site as a reader sees it: every page rendered by headless Chromium at a
desktop and a phone width, and checked for what `make docs` checks in the built HTML (leaked
markup, process text: docs/site_checks.py), plus what only a browser shows: diagrams that did
not draw, and pages wider than a phone's screen.

Needs Debian's `chromium` (scripts/install_chromium.sh installs it; without it the test skips)
and the `docs` extra (mkdocs; `make docs` installs it). The site is the one `make docs` built
into site/ when it is newer than its sources, otherwise it is built into a temporary folder.
The pages are served on 127.0.0.1 and rendered by one headless Chromium, driven over its
DevTools pipe (`--remote-debugging-pipe`), a few tabs at a time; nothing is fetched from the
network.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))

import site_checks  # noqa: E402

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)
#: (width, height, mobile) of each way a page is looked at.
WIDTHS = {"desktop": (1280, 900, False), "phone": (390, 844, True)}
#: The sources the site is built from: a site/ older than any of them is built again.
SOURCES = ["docs", "mkdocs.yml", "python/delta_lifecycle", "bench/README.md", "bench/results",
           "scala/src/main/antlr4", "scala/src/main/resources/error"]
#: How long a page may take to load and draw its diagrams.
PAGE_TIMEOUT = 60.0

#: True once the page has loaded and every diagram has been drawn (or failed to).
READY = """document.readyState === "complete" &&
  Array.from(document.querySelectorAll("div.diagram")).every(function (d) {
    return d.querySelector("svg") !== null || d.getAttribute("data-processed") === "true";
  })"""
#: What the checks read: the DOM and how much wider than the window the page is.
SNAPSHOT = """JSON.stringify({
  dom: document.documentElement.outerHTML,
  overflow: document.documentElement.scrollWidth - window.innerWidth
})"""

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed: run scripts/install_chromium.sh "
    "(apt-get install -y chromium) to render the documentation in a browser",
)


def _newest_source() -> float:
    newest = 0.0
    for source in SOURCES:
        path = ROOT / source
        files = [path] if path.is_file() else [
            p for p in path.rglob("*") if p.is_file() and "maven" not in p.parts  # bundled jars
        ]
        newest = max([newest] + [f.stat().st_mtime for f in files])
    return newest


@pytest.fixture(scope="module")
def site() -> Iterator[Path]:
    built = ROOT / "site"
    index = built / "index.html"
    if index.exists() and index.stat().st_mtime >= _newest_source():
        yield built
        return
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (make docs installs it)")
    with tempfile.TemporaryDirectory(prefix="docs-site-") as tmp:
        result = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", tmp],
            cwd=ROOT, capture_output=True, text=True,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )
        assert result.returncode == 0, result.stderr[-4000:]
        yield Path(tmp)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


class Browser:
    """One headless Chromium, driven over the DevTools protocol on its pipe (fd 3 in, fd 4 out,
    messages separated by NUL bytes). Thread-safe: each call waits for its own answer."""

    def __init__(self, profile: Path) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        arguments = [
            str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
            f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank",
        ]
        # A small Python puts the pipe's ends on the fds Chromium expects, then becomes Chromium
        # (a shell's redirections would not survive Debian's chromium launcher script).
        trampoline = (
            "import os, sys; r, w = int(sys.argv[1]), int(sys.argv[2]); "
            "os.dup2(r, 100); os.dup2(w, 101); os.dup2(100, 3); os.dup2(101, 4); "
            "[os.close(fd) for fd in {r, w, 100, 101} - {3, 4}]; "
            "os.execvp(sys.argv[3], sys.argv[3:])"
        )
        self._process = subprocess.Popen(
            [sys.executable, "-c", trampoline, str(to_chrome_r), str(from_chrome_w), *arguments],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._lock = threading.Lock()
        self._next_id = 0
        self._waiting: Dict[int, "queue.Queue[Dict[str, Any]]"] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                for waiting in list(self._waiting.values()):
                    waiting.put({"error": {"message": "chromium exited"}})
                return
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                answer = json.loads(message)
                waiting = self._waiting.pop(answer.get("id", -1), None)
                if waiting is not None:
                    waiting.put(answer)

    def call(self, method: str, session: Optional[str] = None, **params: Any) -> Dict[str, Any]:
        answer: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        with self._lock:
            self._next_id += 1
            message: Dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
            if session:
                message["sessionId"] = session
            self._waiting[self._next_id] = answer
            os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        result = answer.get(timeout=PAGE_TIMEOUT)
        if "error" in result:
            raise RuntimeError(f"{method}: {result['error']}")
        return dict(result.get("result", {}))

    def evaluate(self, session: str, expression: str) -> Any:
        result = self.call("Runtime.evaluate", session, expression=expression,
                           returnByValue=True)
        return result.get("result", {}).get("value")

    def render(self, url: str, width: int, height: int, mobile: bool) -> Tuple[str, int]:
        """The page's DOM once loaded and drawn, and how many CSS pixels it is wider than the
        window."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        try:
            session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
                "sessionId"]
            self.call("Emulation.setDeviceMetricsOverride", session, width=width,
                      height=height, deviceScaleFactor=1, mobile=mobile)
            self.call("Page.navigate", session, url=url)
            deadline = time.monotonic() + PAGE_TIMEOUT
            while not self.evaluate(session, READY):
                if time.monotonic() > deadline:
                    raise AssertionError(f"{url} did not finish loading and drawing")
                time.sleep(0.1)
            snapshot = json.loads(self.evaluate(session, SNAPSHOT))
            return snapshot["dom"], int(snapshot["overflow"])
        finally:
            self.call("Target.closeTarget", targetId=target)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except RuntimeError:
            pass
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_chrome)


def _pages(site: Path) -> List[str]:
    """Every page of the site, as its URL path ("", "errors/", ...)."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        relative = index.parent.relative_to(site).as_posix()
        if relative.startswith(("assets", "search")):
            continue
        pages.append("" if relative == "." else relative + "/")
    return pages


@pytest.fixture(scope="module")
def rendered(site: Path, server: str, tmp_path_factory: pytest.TempPathFactory
             ) -> Dict[Tuple[str, str], Tuple[str, int]]:
    """(page, width name) -> (the DOM Chromium rendered, its overflow), for every page at
    every width."""
    browser = Browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        jobs = [(page, name) for page in _pages(site) for name in WIDTHS]

        def run(job: Tuple[str, str]) -> Tuple[Tuple[str, str], Tuple[str, int]]:
            page, name = job
            return job, browser.render(server + page, *WIDTHS[name])

        with ThreadPoolExecutor(max_workers=4) as pool:
            return dict(pool.map(run, jobs))
    finally:
        browser.close()


def _commits() -> Optional[site_checks.CommitIndex]:
    commits = site_checks.repository_commits(ROOT)
    return None if commits is None else site_checks.CommitIndex(commits)


def test_every_page_renders_without_defects(
    rendered: Dict[Tuple[str, str], Tuple[str, int]]
) -> None:
    commits = _commits()
    problems: List[str] = []
    for (page, name), (dom, _) in sorted(rendered.items()):
        source = "benchmarks.md" if page == "benchmarks/" else (page or "index")
        for problem in site_checks.check_page(dom, source, commits):
            problems.append(f"{name}: {problem}")
    assert len(rendered) >= 2 * 20, sorted(rendered)
    assert not problems, "\n".join(problems)


def test_diagrams_draw(rendered: Dict[Tuple[str, str], Tuple[str, int]]) -> None:
    """Every ```mermaid block is an SVG drawing once the page has loaded, not its text."""
    drawn = re.compile(r'<div class="diagram"[^>]*>\s*<svg')
    seen = False
    for (page, name), (dom, _) in sorted(rendered.items()):
        count = dom.count('<div class="diagram"')
        if not count:
            continue
        seen = seen or page == "concepts/"
        assert len(drawn.findall(dom)) == count, f"{page} ({name}): a diagram did not draw"
        assert "Syntax error in text" not in dom, f"{page} ({name}): mermaid could not parse one"
    assert seen, "the Concepts page has no diagram"


def test_pages_fit_a_phone(rendered: Dict[Tuple[str, str], Tuple[str, int]]) -> None:
    too_wide = [
        f"{page or 'home'}: {overflow} px wider than the screen"
        for (page, name), (_, overflow) in sorted(rendered.items())
        if name == "phone" and overflow > 1
    ]
    assert not too_wide, "\n".join(too_wide)
