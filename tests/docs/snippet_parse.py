# SPDX-License-Identifier: Apache-2.0
"""Owns the extraction of the code snippets of the repository's markdown (docs/SNIPPETS.md):
fenced blocks, their language and their `<!-- snippet: ... -->` marker. Python stdlib only."""

import os
import re

# Folders never searched for markdown (build outputs, dependencies, git).
EXCLUDED_DIRS = {".git", "build", "node_modules", "dist", "third_party", "Library", "obj"}

# Fence info language -> the runner that runs it. Any other language is listed, not run.
LANGUAGES = {
    "c": "c",
    "cpp": "cpp", "c++": "cpp", "cxx": "cpp", "cc": "cpp",
    "js": "js", "javascript": "js", "mjs": "js", "cjs": "js", "node": "js",
    "ts": "ts", "typescript": "ts",
    "cmake": "cmake",
    "csharp": "csharp", "cs": "csharp", "c#": "csharp",
    "python": "python", "py": "python", "python3": "python",
    "sh": "sh", "bash": "sh", "shell": "sh", "console": "sh", "shell-session": "sh",
}

# Tags that are not code to run (output, data): a marker may name them for an indented block.
NOT_RUN_TAGS = {"text", "output", "json", "yaml", "toml", "ini", "diff", "html", "xml"}

MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`]*?)\s*$")


class Snippet:
    """One fenced block with a language tag: where it is, its text and its options."""

    def __init__(self, path, line, lang, text):
        self.path = path          # relative to the repository root
        self.line = line          # 1-based line of the opening fence (indented: first line)
        self.lang = lang          # the fence's language word, lower case
        self.kind = LANGUAGES.get(lang)  # c, cpp, js, ts, python, cmake, csharp, sh or None
        self.text = text          # the block, the fence's indentation removed
        self.skip = None          # the reason, for `skip (reason)`
        self.harness = None       # tests/docs/harness/<name>.<ext>, for `harness NAME`
        self.file = None          # for `file NAME`: written to the work folder, not run
        self.loop = False         # runs until stopped: passes when alive after the loop time
        self.marker_lang = None   # a language word of the marker (what an indented block is)
        self.rewrites = []        # (flag, value) of `with --FLAG VALUE`
        self.indented = False     # an indented code block (no fence, no tag of its own)
        self.errors = []          # malformed markers (they fail the run)

    def where(self):
        return f"{self.path}:{self.line}"

    def text_line(self):
        """The markdown line of the block's first text line."""
        return self.line if self.indented else self.line + 1


def _parse_options(snippet, words):
    """Reads the marker grammar of docs/SNIPPETS.md: skip (reason) | harness NAME | file NAME |
    loop | with --FLAG VALUE | a language | (comment)."""
    tokens = re.findall(r"\([^)]*\)|[^\s()]+", words)
    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if t == "skip":
            if nxt is None or not nxt.startswith("("):
                snippet.errors.append("`skip` needs a reason in parentheses: skip (why it cannot run)")
                snippet.skip = "no reason given"
            else:
                snippet.skip = nxt[1:-1].strip() or "no reason given"
                i += 1
        elif t in ("harness", "file"):
            if nxt is None or nxt.startswith("("):
                snippet.errors.append(f"`{t}` needs a name")
            else:
                setattr(snippet, t, nxt)
                i += 1
        elif t == "loop":
            snippet.loop = True
        elif t == "with":
            value = tokens[i + 2] if i + 2 < len(tokens) else None
            if nxt is None or not nxt.startswith("--") or value is None or value.startswith("("):
                snippet.errors.append("`with` needs a flag and a value: with --duration 2")
            else:
                snippet.rewrites.append((nxt, value))
                i += 2
        elif t in LANGUAGES or t in NOT_RUN_TAGS:
            snippet.marker_lang = t  # an indented block's language (a fenced one has its tag)
        elif t.startswith("("):
            pass  # a comment
        else:
            snippet.errors.append(f"unknown snippet marker word '{t}' (docs/SNIPPETS.md lists them)")
        i += 1


def parse_markdown(root, rel):
    """The snippets of one markdown file, in order."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            end = _indented_block_end(lines, i)
            if end > i:
                s = Snippet(rel, i + 1, "", "\n".join(line[4:] for line in lines[i:end]).rstrip("\n") + "\n")
                s.indented = True
                marker = _marker_before(lines, i)
                if marker is not None:
                    _parse_options(s, marker)
                    if s.marker_lang:
                        s.lang = s.marker_lang
                        s.kind = LANGUAGES.get(s.lang)
                out.append(s)
                i = end
                continue
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3)
        start = i
        body = []
        i += 1
        close = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        while i < len(lines) and not close.match(lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i].lstrip())
            i += 1
        i += 1  # the closing fence
        words = info.split(None, 1)
        if not words:
            continue  # no language: a diagram, a grammar, output
        s = Snippet(rel, start + 1, words[0].lower(), "\n".join(body) + "\n")
        if len(words) > 1:
            _parse_options(s, words[1])
        marker = _marker_before(lines, start)
        if marker is not None:
            _parse_options(s, marker)
        out.append(s)
    return out


def _marker_before(lines, i):
    """The words of a `<!-- snippet: ... -->` line before line i (blank lines between), or None."""
    j = i - 1
    while j >= 0 and lines[j].strip() == "":
        j -= 1
    m = MARKER.match(lines[j]) if j >= 0 else None
    return m.group(1) if m else None


LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s")


def _indented_block_end(lines, i):
    """The end of an indented code block starting at line i (i when none starts there): a
    line indented by 4 spaces after a blank line, not the continuation of a list item."""
    if not lines[i].startswith("    ") or not lines[i].strip() or i == 0 or lines[i - 1].strip():
        return i
    j = i - 1
    while j >= 0 and lines[j].strip() == "":
        j -= 1
    if j >= 0 and (LIST_ITEM.match(lines[j]) or lines[j].startswith("  ")):
        return i
    end = i
    k = i
    while k < len(lines) and (lines[k].startswith("    ") or not lines[k].strip()):
        if lines[k].strip():
            end = k + 1
        k += 1
    return end


def markdown_files(root):
    """Every markdown file of the repository outside EXCLUDED_DIRS, sorted."""
    found = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in EXCLUDED_DIRS and not x.startswith("."))
        for name in files:
            if name.endswith(".md"):
                found.append(os.path.relpath(os.path.join(d, name), root))
    return sorted(found)
