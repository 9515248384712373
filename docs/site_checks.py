"""Checks of the documentation site as it is built: what a reader would see that is not meant
for them. docs/hooks.py runs them on every page mkdocs renders (and on the links of the built
site), and tests/test_docs_rendered.py runs the same checks on the pages as headless Chromium
renders them.

What is checked, in each page's main content (the article):

- leaked markup: reStructuredText roles (`:func:`, `:class:`, ...) and double backticks in
  the text outside code, and unknown HTML elements (a type such as `array<string>` written
  outside code becomes an element `<string>` and disappears from the text);
- process text, which belongs to the project and not to its users: issue numbers, load
  averages, other engineers, changelog phrases ("the former ... is gone"), dates outside code
  and data from sources, and hashes of this repository's commits (when git can list them);
- links: every relative link of the built site points at a page that exists and, with a
  fragment, at an id on that page.

Pure functions of the HTML; nothing here imports mkdocs, so the tests use it directly.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple
from urllib.parse import unquote, urlsplit

# ---- what counts as a defect --------------------------------------------------------------

#: reStructuredText roles as they show when a renderer does not know them.
REST_ROLE = re.compile(
    r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|ref|doc|term|const|type)(?::|`)"
)

#: Phrases of the project's own process: who worked on it, when, on which machine.
PROCESS_PATTERNS: Tuple[Tuple[str, re.Pattern[str]], ...] = (
    ("an issue number", re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)),
    ("a load average", re.compile(r"\bload\s+(?:average|avg\b|≈|~|of\s+\d)", re.IGNORECASE)),
    ("other engineers", re.compile(r"\bother engineers?\b", re.IGNORECASE)),
    (
        "a changelog phrase",
        re.compile(r"\bthe former\b|\b(?:was|were) (?:removed|renamed) in\b", re.IGNORECASE),
    ),
    ("the project's design notes", re.compile(r"\bDESIGN\.md\b")),
)

#: A date as a run or a change is dated (2026-11-24); dates in code (example output) are fine.
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")

#: A word that may be an abbreviated commit hash: 7 to 40 hex digits, letters and digits both.
HEX_WORD = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")

#: HTML comments that open and close content taken from a data file (the compatibility matrix:
#: client versions and release dates come from the capability file's sources).
DATA_REGIONS: Tuple[Tuple[str, str], ...] = (
    ("compatibility matrix: generated", "end of compatibility matrix"),
)


#: Elements a page may contain: HTML, and the SVG and MathML that diagrams draw.
KNOWN_ELEMENTS: FrozenSet[str] = frozenset(
    """
    a abbr address area article aside audio b base bdi bdo blockquote body br button canvas
    caption cite code col colgroup data datalist dd del details dfn dialog div dl dt em embed
    fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe
    img input ins kbd label legend li link main map mark menu meta meter nav noscript object ol
    optgroup option output p param picture pre progress q rp rt ruby s samp script search
    section select slot small source span strong style sub summary sup table tbody td template
    textarea tfoot th thead time title tr track u ul var video wbr center font tt big
    svg g path rect circle ellipse line polyline polygon text tspan textpath defs marker
    clippath mask pattern lineargradient radialgradient stop symbol use image foreignobject
    filter fegaussianblur feoffset feblend feflood fecomposite femerge femergenode
    fecolormatrix fedropshadow desc metadata switch view animate animatetransform set
    math mi mn mo ms mtext mrow msup msub mfrac msqrt mroot mspace mtable mtr mtd semantics
    annotation
    """.split()
)


@dataclass
class PageText:
    """What a reader reads on a page: the article's text, with and without code."""

    prose: str = ""
    """Text outside code (inline and blocks) and outside data regions."""
    text_no_pre: str = ""
    """Text with inline code, without code blocks."""
    all_text: str = ""
    """Every text of the article, code included."""
    unknown_elements: List[str] = field(default_factory=list)
    ids: Set[str] = field(default_factory=set)
    """Every id in the whole document (link targets)."""
    links: List[str] = field(default_factory=list)
    """Every href in the whole document."""


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = PageText()
        self._prose: List[str] = []
        self._no_pre: List[str] = []
        self._all: List[str] = []
        self._article_depth = 0
        self._skip = 0  # script, style
        self._code = 0
        self._pre = 0
        self._data_region = False
        self._stack: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        tag = tag.lower()
        values = dict(attrs)
        if values.get("id"):
            self.page.ids.add(str(values["id"]))
        if values.get("name") and tag == "a":
            self.page.ids.add(str(values["name"]))
        if tag == "a" and values.get("href"):
            self.page.links.append(str(values["href"]))
        if tag in VOID:
            if self._article_depth and tag not in KNOWN_ELEMENTS and "-" not in tag:
                self.page.unknown_elements.append(tag)
            self._break()
            return
        self._stack.append(tag)
        if tag == "article":
            self._article_depth += 1
        if not self._article_depth:
            return
        if tag not in KNOWN_ELEMENTS and "-" not in tag:
            self.page.unknown_elements.append(tag)
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "code":
            self._code += 1
        elif tag == "pre":
            self._pre += 1
        if tag in BLOCKS:
            self._break()

    def handle_startendtag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag.lower() not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        tag = tag.lower()
        if tag in VOID or tag not in self._stack:
            return
        while self._stack:
            open_tag = self._stack.pop()
            self._close(open_tag)
            if open_tag == tag:
                break

    def _close(self, tag: str) -> None:
        if not self._article_depth:
            return
        if tag in ("script", "style"):
            self._skip -= 1
        elif tag == "code":
            self._code -= 1
        elif tag == "pre":
            self._pre -= 1
        if tag in BLOCKS:
            self._break()
        if tag == "article":
            self._article_depth -= 1

    def _break(self) -> None:
        for out in (self._prose, self._no_pre, self._all):
            out.append("\n")

    def handle_comment(self, data: str) -> None:
        text = data.strip()
        for start, end in DATA_REGIONS:
            if text.startswith(start):
                self._data_region = True
            elif text.startswith(end):
                self._data_region = False

    def handle_data(self, data: str) -> None:
        if not self._article_depth or self._skip:
            return
        self._all.append(data)
        if not self._pre:
            self._no_pre.append(data if not self._data_region else " ")
        if not self._pre and not self._code and not self._data_region:
            self._prose.append(data)
        elif self._code and not self._pre:
            # Inline code stands in the sentence as one word: keep a placeholder.
            self._prose.append("\u2063")

    def result(self) -> PageText:
        self.page.prose = "".join(self._prose)
        self.page.text_no_pre = "".join(self._no_pre)
        self.page.all_text = "".join(self._all)
        return self.page


VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
BLOCKS = frozenset(
    "p div li tr td th h1 h2 h3 h4 h5 h6 pre table ul ol dl dt dd blockquote section details "
    "summary figure figcaption br".split()
)


def page_text(html: str) -> PageText:
    parser = _Extractor()
    parser.feed(html)
    parser.close()
    return parser.result()


def _line_of(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    line = text[start : end if end >= 0 else len(text)].strip().replace("\u2063", "`…`")
    return line if len(line) <= 160 else line[:157] + "..."


def repository_commits(root: Path) -> Optional[List[str]]:
    """Every commit hash of the repository at root, or None when git cannot list them."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-list", "--all"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.split()


class CommitIndex:
    """Answers whether a hex word abbreviates one of the repository's commits."""

    def __init__(self, commits: Iterable[str]) -> None:
        self._by_prefix: Dict[str, List[str]] = {}
        for commit in commits:
            self._by_prefix.setdefault(commit[:7], []).append(commit)

    def __contains__(self, word: str) -> bool:
        word = word.lower()
        return any(c.startswith(word) for c in self._by_prefix.get(word[:7], []))


def check_page(html: str, page: str, commits: Optional[CommitIndex] = None) -> List[str]:
    """The defects a reader would see on one page. page is the page's source path
    (docs-relative, e.g. "errors.md") or URL path, used in messages and for exemptions."""
    text = page_text(html)
    problems: List[str] = []

    def report(kind: str, where: str, index: int) -> None:
        problems.append(f"{page}: {kind}: {_line_of(where, index)!r}")

    for match in REST_ROLE.finditer(text.text_no_pre):
        report("a reStructuredText role", text.text_no_pre, match.start())
    for match in re.finditer("``", text.prose):
        report("double backticks outside code", text.prose, match.start())
    for tag in sorted(set(text.unknown_elements)):
        problems.append(
            f"{page}: an unknown element <{tag}> (text in angle brackets outside code, such "
            f"as a type like array<{tag}>, is taken for a tag and disappears)"
        )
    for label, pattern in PROCESS_PATTERNS:
        for match in pattern.finditer(text.all_text):
            report(f"process text ({label})", text.all_text, match.start())
    for match in DATE.finditer(text.text_no_pre):
        report("a date (process text: when something ran or changed)", text.text_no_pre,
               match.start())
    if commits is not None:
        for match in HEX_WORD.finditer(text.all_text):
            if match.group(0) in commits:
                report(
                    "a commit hash of this repository (measured figures and their commits "
                    "live in bench/)",
                    text.all_text,
                    match.start(),
                )
    return problems


# ---- links of the built site --------------------------------------------------------------


def _target_file(site: Path, page_file: Path, path: str) -> Optional[Path]:
    if path.startswith("/"):  # the 404 page links from the site's root
        target = (site / unquote(path).lstrip("/")).resolve()
    else:
        target = (page_file.parent / unquote(path)).resolve() if path else page_file
    if target.is_dir():
        target = target / "index.html"
    return target if target.exists() else None


def check_links(site: Path) -> List[str]:
    """Every relative link of the built site reaches an existing file, and its fragment an id
    of that page."""
    site = site.resolve()
    pages: Dict[Path, PageText] = {}
    for html_file in sorted(site.rglob("*.html")):
        pages[html_file] = page_text(html_file.read_text(encoding="utf-8"))
    problems: List[str] = []
    for html_file, text in pages.items():
        where = html_file.relative_to(site)
        for href in text.links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            target = _target_file(site, html_file, parts.path)
            if target is None or site not in target.parents and target != site:
                problems.append(f"{where}: a broken link: {href}")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: a link to a missing anchor: {href}")
    return problems
