"""The syntax of a statement as users write it, rendered from the ANTLR grammar's rule.

docs/hooks.py puts it in the SQL reference, so the syntax shown is the grammar's and cannot
drift from it. The notation is the one Spark's and Delta's references use:

- keywords in capitals, placeholders in lower case (`table_name`, `version`), each explained in
  the section's parameter table;
- `[ ... ]` optional, `{ a | b }` one of, `x [, ...]` one or more separated by commas;
- sub-rules other than names (such as a redirect rule) are defined below the statement.

Pure functions of the grammar's text; nothing here imports mkdocs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

#: Lexer tokens that stand for punctuation.
PUNCTUATION = {
    "LEFT_PAREN": "(",
    "RIGHT_PAREN": ")",
    "COMMA": ",",
    "DOT": ".",
    "MINUS": "-",
    "SEMICOLON": ";",
}
#: Lexer tokens that carry a value the user writes: shown by their label.
VALUE_TOKENS = {"STRING", "INTEGER_VALUE", "IDENTIFIER", "BACKQUOTED_IDENTIFIER"}
#: Parser rules that are names, shown as a placeholder and never expanded.
NAME_RULES = {"tableName", "featureName", "identifier"}

_TOKEN = re.compile(r"\w+\+?=\w+|\w+|[()|?*+]")


@dataclass
class Word:
    text: str
    label: Optional[str] = None
    list_label: bool = False  # label+=rule


@dataclass
class Group:
    alternatives: List[List["Item"]]


@dataclass
class Item:
    atom: Union[Word, Group]
    suffix: str = ""


@dataclass
class Rendered:
    text: str
    placeholders: List[str] = field(default_factory=list)
    subrules: List[str] = field(default_factory=list)
    kind: str = "word"  # word, optional, choice


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def parser_rules(grammar: str) -> Dict[str, List[str]]:
    """Parser rule name -> the text of each alternative (labels `#name` removed)."""
    text = re.sub(r"//[^\n]*", "", grammar)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    rules: Dict[str, List[str]] = {}
    for name, body in re.findall(r"^([a-z]\w*)\s*:(.*?)^\s*;", text, re.MULTILINE | re.DOTALL):
        alternatives = []
        for alternative in _split_top(body):
            alternatives.append(" ".join(re.sub(r"#\w+", "", alternative).split()))
        rules[name] = alternatives
    return rules


def statement_alternatives(grammar: str) -> Dict[str, str]:
    """Label of each alternative of the `statement` rule -> its text."""
    text = re.sub(r"//[^\n]*", "", grammar)
    match = re.search(r"^statement\s*\n\s*:(.*?)^\s*;", text, re.MULTILINE | re.DOTALL)
    if match is None:
        raise ValueError("the grammar has no `statement` rule")
    return {
        label: " ".join(alternative.strip().lstrip("|").split())
        for alternative, label in re.findall(r"(.*?)#(\w+)", match.group(1), re.DOTALL)
    }


def _split_top(body: str) -> List[str]:
    parts, depth, current = [], 0, []
    for char in body:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "|" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in (p.strip() for p in parts) if p]


def parse(text: str) -> List[Item]:
    tokens = _TOKEN.findall(text)
    position = 0

    def sequence() -> List[List[Item]]:
        nonlocal position
        alternatives: List[List[Item]] = [[]]
        while position < len(tokens):
            token = tokens[position]
            if token == ")":
                break
            if token == "|":
                position += 1
                alternatives.append([])
                continue
            position += 1
            atom: Union[Word, Group]
            if token == "(":
                atom = Group(sequence())
                position += 1  # ")"
            elif "=" in token:
                label, rule = re.split(r"\+?=", token)
                atom = Word(rule, label=label, list_label="+=" in token)
            else:
                atom = Word(token)
            suffix = ""
            if position < len(tokens) and tokens[position] in ("?", "*", "+"):
                suffix = tokens[position]
                position += 1
            alternatives[-1].append(Item(atom, suffix))
        return alternatives

    alternatives = sequence()
    if len(alternatives) != 1:
        return [Item(Group(alternatives))]
    return alternatives[0]


class Renderer:
    def __init__(self, rules: Dict[str, List[str]]) -> None:
        self.rules = rules

    def inline(self, rule: str) -> Optional[List[str]]:
        """The alternatives of a rule made of keywords only (READER WRITER | WRITER ONLY)."""
        alternatives = self.rules.get(rule)
        if not alternatives:
            return None
        for alternative in alternatives:
            for word in alternative.split():
                if not re.fullmatch(r"[A-Z_]+", word) or word in PUNCTUATION:
                    return None
        return alternatives

    def placeholder(self, word: Word) -> str:
        rule = word.text
        label = snake(word.label) if word.label else ""
        if rule in VALUE_TOKENS:
            return label or snake(rule)
        if rule == "identifier":
            singular = label[:-1] if label.endswith("s") else label
            return singular or "identifier"
        name = snake(rule)
        if not label or word.list_label or name.startswith(label):
            return name
        return f"{label}_{name}"

    def word(self, word: Word) -> Rendered:
        rule = word.text
        if rule in PUNCTUATION:
            return Rendered(PUNCTUATION[rule])
        if re.fullmatch(r"[A-Z_]+", rule) and rule not in VALUE_TOKENS:
            return Rendered(rule)
        choices = self.inline(rule) if rule[0].islower() else None
        if choices is not None:
            return Rendered("{ " + " | ".join(choices) + " }", kind="choice")
        text = self.placeholder(word)
        subrules = [] if rule in NAME_RULES or not rule[0].islower() else [rule]
        return Rendered(text, placeholders=[text], subrules=subrules)

    def items(self, items: List[Item]) -> List[Rendered]:
        out: List[Rendered] = []
        for item in items:
            if isinstance(item.atom, Group):
                inner = [self.items(alternative) for alternative in item.atom.alternatives]
                # x (COMMA x)*  ->  x [, ...]
                if (
                    item.suffix == "*"
                    and len(inner) == 1
                    and len(inner[0]) == 2
                    and inner[0][0].text == ","
                    and out
                    and out[-1].text == inner[0][1].text
                ):
                    out[-1] = Rendered(out[-1].text + " [, ...]", out[-1].placeholders,
                                       out[-1].subrules)
                    continue
                texts = [" ".join(r.text for r in alternative) for alternative in inner]
                placeholders = [p for alt in inner for r in alt for p in r.placeholders]
                subrules = [s for alt in inner for r in alt for s in r.subrules]
                if item.suffix in ("?", "*"):
                    rendered = Rendered("[ " + " | ".join(texts) + " ]", placeholders, subrules,
                                        "optional")
                elif len(texts) > 1:
                    rendered = Rendered("{ " + " | ".join(texts) + " }", placeholders, subrules,
                                        "choice")
                else:
                    rendered = Rendered(texts[0], placeholders, subrules)
                out.append(rendered)
                continue
            rendered = self.word(item.atom)
            if item.suffix == "?":
                body = rendered.text
                if rendered.kind == "choice":
                    body = body[2:-2]
                rendered = Rendered(f"[ {body} ]", rendered.placeholders, rendered.subrules,
                                    "optional")
            out.append(rendered)
        return out


def layout(pieces: List[Rendered], width: int = 60) -> str:
    """One line when it fits; otherwise a new, indented line before each optional clause and
    before the keyword that opens a choice after one."""
    flat = " ".join(p.text for p in pieces)
    if len(flat) <= width:
        return flat
    lines: List[List[str]] = [[]]
    for i, piece in enumerate(pieces):
        opens_choice = (
            piece.kind == "word"
            and i + 1 < len(pieces)
            and pieces[i + 1].kind == "choice"
            and i > 0
            and pieces[i - 1].kind == "optional"
        )
        if lines[-1] and (piece.kind == "optional" or opens_choice):
            lines.append([])
        lines[-1].append(piece.text)
    return "\n".join(("    " if n else "") + " ".join(line) for n, line in enumerate(lines))


def render(grammar: str, label: str) -> Tuple[str, List[str]]:
    """The syntax of the statement alternative `label`, and its placeholders in order (those of
    the sub-rules defined below it included)."""
    rules = parser_rules(grammar)
    statements = statement_alternatives(grammar)
    renderer = Renderer(rules)
    pieces = renderer.items(parse(statements[label]))
    text = layout(pieces)
    placeholders = [p for piece in pieces for p in piece.placeholders]
    pending = [s for piece in pieces for s in piece.subrules]
    seen: List[str] = []
    while pending:
        rule = pending.pop(0)
        if rule in seen or rule not in rules:
            continue
        seen.append(rule)
        for alternative in rules[rule]:
            sub = renderer.items(parse(alternative))
            text += f"\n\n{snake(rule)}\n    " + " ".join(p.text for p in sub)
            placeholders += [p for piece in sub for p in piece.placeholders]
            pending += [s for piece in sub for s in piece.subrules]
    unique: List[str] = []
    for p in placeholders:
        if p not in unique:
            unique.append(p)
    return text, unique
