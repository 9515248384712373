"""The documentation site as a reader sees it: every page rendered by headless Chromium at a
desktop and a phone width, and checked for what `make docs` checks in the built HTML (leaked
markup, process text: docs/site_checks.py), plus what only a browser shows: diagrams that did
not draw, and pages wider than a phone's screen.

Needs Debian's `chromium` (scripts/install_chromium.sh installs it; without it the test skips)
and the `docs` extra (mkdocs; `make docs` installs it). The site is the one `make docs` built
into site/ when it is newer than its sources, otherwise it is built into a temporary folder.
Each page is served on 127.0.0.1 and rendered with `chromium --headless --dump-dom`, several
at a time; nothing is fetched from the network.
"""

from __future__ import annotations

import functools
import io
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))

import site_checks  # noqa: E402

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists()
                                        else None)
WIDTHS = {"desktop": "1280,900", "phone": "390,844"}
#: The sources the site is built from: a site/ older than any of them is built again.
SOURCES = ["docs", "mkdocs.yml", "python/delta_lifecycle", "bench/README.md", "bench/results",
           "scala/src/main/antlr4", "scala/src/main/resources/error"]

#: Set by the probe once the page has loaded and its diagrams have had time to draw: how many
#: CSS pixels the page is wider than the window.
PROBE = """<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var root = document.documentElement;
    document.body.setAttribute("data-probe-overflow", String(root.scrollWidth - window.innerWidth));
  }, 3000);
});
</script>"""

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed: run scripts/install_chromium.sh "
    "(apt-get install -y chromium) to render the documentation in a browser",
)


def _newest_source() -> float:
    newest = 0.0
    for source in SOURCES:
        path = ROOT / source
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
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


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the site, with the probe added to every page."""

    def send_head(self):  # type: ignore[no-untyped-def]
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix != ".html" or not path.exists():
            return super().send_head()
        body = path.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>", 1)
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        return io.BytesIO(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    handler = functools.partial(_Handler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _pages(site: Path) -> List[str]:
    """Every page of the site, as its URL path ("", "errors/", ...)."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        relative = index.parent.relative_to(site).as_posix()
        if relative.startswith(("assets", "search")):
            continue
        pages.append("" if relative == "." else relative + "/")
    return pages


def _render(url: str, size: str, profile: Path) -> str:
    result = subprocess.run(
        [
            str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
            f"--window-size={size}", "--hide-scrollbars", "--virtual-time-budget=15000",
            "--dump-dom", url,
        ],
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, f"chromium failed on {url}: {result.stderr[-2000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def rendered(site: Path, server: str, tmp_path_factory: pytest.TempPathFactory
             ) -> Dict[Tuple[str, str], str]:
    """(page, width name) -> the DOM Chromium rendered, for every page at every width."""
    jobs = [(page, name) for page in _pages(site) for name in WIDTHS]
    profiles = tmp_path_factory.mktemp("chromium")

    def run(job: Tuple[str, str]) -> Tuple[Tuple[str, str], str]:
        page, name = job
        profile = profiles / f"{name}-{page.strip('/').replace('/', '-') or 'home'}"
        return job, _render(server + page, WIDTHS[name], profile)

    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2))) as pool:
        return dict(pool.map(run, jobs))


def _commits() -> Optional[site_checks.CommitIndex]:
    commits = site_checks.repository_commits(ROOT)
    return None if commits is None else site_checks.CommitIndex(commits)


def test_every_page_renders_without_defects(rendered: Dict[Tuple[str, str], str]) -> None:
    commits = _commits()
    problems: List[str] = []
    for (page, name), dom in sorted(rendered.items()):
        if "data-probe-overflow" not in dom:
            problems.append(f"{page or 'home'} ({name}): the page did not finish loading")
        source = "benchmarks.md" if page == "benchmarks/" else (page or "index")
        for problem in site_checks.check_page(dom, source, commits):
            problems.append(f"{name}: {problem}")
    assert not problems, "\n".join(problems)


def test_diagrams_draw(rendered: Dict[Tuple[str, str], str]) -> None:
    """Every ```mermaid block is an SVG drawing once the page has loaded, not its text."""
    drawn = re.compile(r'<div class="diagram"[^>]*>\s*<svg')
    seen = False
    for (page, name), dom in sorted(rendered.items()):
        count = dom.count('<div class="diagram"')
        if not count:
            continue
        seen = seen or page == "concepts/"
        assert len(drawn.findall(dom)) == count, f"{page} ({name}): a diagram did not draw"
        assert "Syntax error in text" not in dom, f"{page} ({name}): mermaid could not parse one"
    assert seen, "the Concepts page has no diagram"


def test_pages_fit_a_phone(rendered: Dict[Tuple[str, str], str]) -> None:
    too_wide = []
    for (page, name), dom in sorted(rendered.items()):
        if name != "phone" or "data-probe-overflow" not in dom:
            continue
        overflow = int(dom.split('data-probe-overflow="', 1)[1].split('"', 1)[0])
        if overflow > 1:
            too_wide.append(f"{page or 'home'}: {overflow} px wider than the screen")
    assert not too_wide, "\n".join(too_wide)
