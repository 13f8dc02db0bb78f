# SPDX-License-Identifier: Apache-2.0
"""Owns the docs snippet test (docs/SNIPPETS.md): runs every C, C++, JavaScript, TypeScript and
shell block of the repository's markdown against a build tree and one live `scenecrdt serve`,
lists what it did not run and why, and fails with file:line on any block that fails.
Usage: python3 tests/docs/snippets.py --build build/asan [--strict] [--only TEXT] [--keep]
Python stdlib only."""

import argparse
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snippet_parse  # noqa: E402
import snippet_run  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build tree (build/asan)")
    ap.add_argument("--strict", action="store_true",
                    help="a missing prerequisite (client-web/dist, node_modules) fails the run")
    ap.add_argument("--only", default="", help="run only the snippets whose file:line contains TEXT")
    ap.add_argument("--keep", action="store_true", help="keep the work folder (its path is printed)")
    args = ap.parse_args()
    started = time.monotonic()
    build = os.path.abspath(args.build)

    snippets = []
    for rel in snippet_parse.markdown_files(ROOT):
        snippets.extend(snippet_parse.parse_markdown(ROOT, rel))

    failures = []     # (where, why)
    skipped = []      # (where, reason)
    other = {}        # language -> [where]
    missing = []      # (where, prerequisite)
    ran = []
    run_failed = 0
    runnable = []
    for s in snippets:
        for e in s.errors:
            failures.append((s.where(), e))
        if s.errors:
            continue
        if s.file and s.skip is None:
            runnable.append(s)  # staged for the blocks after it, whatever its language
        elif s.skip is not None:
            skipped.append((s.where(), s.skip))
        elif s.kind is None:
            other.setdefault(s.lang or "(indented, no language marker)", []).append(s.where())
        elif args.only and args.only not in s.where():
            continue
        else:
            runnable.append(s)

    work = tempfile.mkdtemp(prefix="scenecrdt-snippets-")
    env = None
    try:
        env = snippet_run.Environment(ROOT, build, work)
        # Files first (a `file` block is used by the blocks after it in the same markdown).
        for s in runnable:
            if s.file:
                env.stage_file(s)
        todo = [s for s in runnable if not s.file]
        for s in todo:
            need = env.missing_prerequisite(s)
            if need:
                if args.strict:
                    failures.append((s.where(), f"missing prerequisite: {need}"))
                else:
                    missing.append((s.where(), need))
                continue
            print(f"-- {s.where()} ({s.lang}{', harness ' + s.harness if s.harness else ''}"
                  f"{', loop' if s.loop else ''})", flush=True)
            t0 = time.monotonic()
            ok, why = env.run(s)
            ran.append(s)
            print(f"   {'ok' if ok else 'FAILED'} in {time.monotonic() - t0:.1f} s", flush=True)
            if not ok:
                run_failed += 1
                failures.append((s.where(), why))
    except snippet_run.SetupError as e:
        failures.append(("(setup)", str(e)))
    finally:
        if env:
            env.close()
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    print(f"\n== docs snippets: {len(ran)} run, {len(ran) - run_failed} passed, "
          f"{len(skipped)} skipped, {len(missing)} not run (prerequisite), "
          f"{sum(len(v) for v in other.values())} in other languages, "
          f"{len(failures)} failed ({time.monotonic() - started:.0f} s)")
    if skipped:
        print("skipped (marked in the markdown):")
        for where, reason in skipped:
            print(f"  {where}: {reason}")
    if missing:
        print("not run, a prerequisite is missing (--strict makes this a failure):")
        for where, need in missing:
            print(f"  {where}: {need}")
    if other:
        print("not run, a language this test does not run (or an indented block without a marker):")
        for lang in sorted(other):
            print(f"  {lang}: {', '.join(other[lang])}")
    if failures:
        print("FAILED:")
        for where, why in failures:
            print(f"  {where}: {why.splitlines()[0] if why else ''}")
        for where, why in failures:
            if why and len(why.splitlines()) > 1:
                print(f"\n---- {where}\n{why}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
