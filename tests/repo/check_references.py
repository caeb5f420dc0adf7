#!/usr/bin/env python3
"""The repository's text describes the present: no references to issue numbers, work sessions,
numbered rounds of past work, or design files that are not in the repository; and every
docs/NAME.md that a file names exists.

Usage: check_references.py SOURCE_DIR. Scans the files git tracks (a walk that skips build*/,
node_modules/ and .git/ when git or the repository is not available) and prints one line per
finding, `file:line: what`, then exits 1; exits 0 when there is none. Standard library only.
"""
import os
import re
import subprocess
import sys

# Each pattern names what it finds. They are written to miss code (`#include`, colours such as
# '#333', variables r0 and r1, `for (int round = 0; ...)`, "200 rounds of 100 steps").
PATTERNS = [
    (re.compile(r"\b(?:[Ii]ssues?|PR|[Pp]ull request|[Tt]icket|[Ff]ix(?:es|ed)?|[Cc]loses?)\s+#\d+\b"),
     "an issue number"),
    (re.compile(r"\(#\d+\)"), "an issue number"),
    (re.compile(r"\b[Ii]ssue\s+\d+\b"), "an issue number"),
    (re.compile(r"\b(?:the|this|that) issue's\b|\b(?:of|in) the issue\b"), "a reference to an issue"),
    (re.compile(r"\b[Ss]essions?\s+\d+\b"), "a work session"),
    (re.compile(r"\b(?:first|second|third|this|previous|next|last|earlier|later) session\b"),
     "a work session"),
    (re.compile(r"\b[Rr]ounds?\s+\d+(?:\s*(?:and|-)\s*\d+)?\b(?!\s*(?:of|steps|sweeps|times))"),
     "a numbered round of work"),
    (re.compile(r"\b[Ss]top\s+\d+\s+took\b"), "a numbered stop of work"),
    (re.compile(r"\b(?:DESIGN|STYLE|NOTES[-\w]*)\.md\b"), "a design file that is not in the repository"),
]
DOC_REF = re.compile(r"\bdocs/([\w./-]+\.md)\b")
SKIP_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".ico", ".stl", ".obj", ".dae", ".off", ".imprec",
                 ".imps", ".pdf", ".gz", ".zip", ".mp4", ".woff", ".woff2")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True)
        files = [f for f in out.stdout.decode("utf-8", "replace").split("\0") if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not (d.startswith("build") or d in ("node_modules", ".git"))]
        for n in names:
            files.append(os.path.relpath(os.path.join(top, n), root))
    return files


def main():
    if len(sys.argv) != 2:
        print("usage: check_references.py SOURCE_DIR", file=sys.stderr)
        return 2
    root = sys.argv[1]
    if not os.path.isdir(root):
        print(f"error: {root}: not a directory", file=sys.stderr)
        return 2
    me = os.path.realpath(__file__)
    findings = []
    scanned = 0
    for rel in sorted(tracked_files(root)):
        path = os.path.join(root, rel)
        if rel.lower().endswith(SKIP_SUFFIXES) or os.path.realpath(path) == me or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data:
            continue  # binary
        scanned += 1
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            for pattern, what in PATTERNS:
                m = pattern.search(line)
                if m:
                    findings.append(f"{rel}:{number}: {what}: {m.group(0)!r}")
            for m in DOC_REF.finditer(line):
                if not os.path.isfile(os.path.join(root, "docs", m.group(1))):
                    findings.append(f"{rel}:{number}: names docs/{m.group(1)}, which does not exist")
    for f in findings:
        print(f)
    if scanned == 0:
        print(f"error: {root}: no files to scan", file=sys.stderr)
        return 1
    print(f"{scanned} files scanned, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
