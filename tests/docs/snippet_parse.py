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

MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`]*?)\s*$")


class Snippet:
    """One fenced block with a language tag: where it is, its text and its options."""

    def __init__(self, path, line, lang, text):
        self.path = path          # relative to the repository root
        self.line = line          # 1-based line of the opening fence
        self.lang = lang          # the fence's language word, lower case
        self.kind = LANGUAGES.get(lang)  # c, cpp, js, ts, python, cmake, csharp, sh or None
        self.text = text          # the block, the fence's indentation removed
        self.skip = None          # the reason, for `skip (reason)`
        self.harness = None       # tests/docs/harness/<name>.<ext>, for `harness NAME`
        self.file = None          # for `file NAME`: written to the work folder, not run
        self.loop = False         # runs until stopped: passes when alive after the loop time
        self.errors = []          # malformed markers (they fail the run)

    def where(self):
        return f"{self.path}:{self.line}"

    def text_line(self):
        """The markdown line of the block's first text line."""
        return self.line + 1


def _parse_options(snippet, words):
    """Reads the marker grammar of docs/SNIPPETS.md: skip (reason) | harness NAME | file NAME |
    loop | node | (comment)."""
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
        elif t == "node":
            pass  # run with node: what a js block gets anyway
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
        j = start - 1
        while j >= 0 and lines[j].strip() == "":
            j -= 1
        if j >= 0:
            mm = MARKER.match(lines[j])
            if mm:
                _parse_options(s, mm.group(1))
        out.append(s)
    return out


def markdown_files(root):
    """Every markdown file of the repository outside EXCLUDED_DIRS, sorted."""
    found = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in EXCLUDED_DIRS and not x.startswith("."))
        for name in files:
            if name.endswith(".md"):
                found.append(os.path.relpath(os.path.join(d, name), root))
    return sorted(found)
