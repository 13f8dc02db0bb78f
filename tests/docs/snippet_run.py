# SPDX-License-Identifier: Apache-2.0
"""Owns how each kind of docs snippet runs (docs/SNIPPETS.md): C with cc against the build's C
ABI, C++ against the build tree's CMake package, JavaScript with node, TypeScript bundled by
esbuild then node, Python with the build's module, C# with mcs and mono, CMake lines
configured in a harness project, shell with bash -euo pipefail; one `scenecrdt serve` on free ports for all,
its ports written over the documented defaults 7600 (TCP) and 7601 (HTTP). Python stdlib only."""

import os
import re
import shutil
import signal
import subprocess
import threading
import time

LOOP_SECONDS = 3      # a `loop` snippet passes when it is still running after this long
RUN_SECONDS = 60      # any other snippet must end within this long
SERVER_START_SECONDS = 30
HARNESS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness")
PORT_TCP = re.compile(r"\b(?:127\.0\.0\.1|localhost):7600\b")
PORT_HTTP = re.compile(r"\b(?:127\.0\.0\.1|localhost):7601\b")
SPECIFIER = re.compile(r"""(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*|^\s*import\s+)["']([^"']+)["']""", re.M)
# Where node packages come from (first wins) and what a missing one needs.
NODE_MODULE_DIRS = ["client-web/node_modules", "tests/interop/node_modules", "ecs-transport/node_modules"]
OWN_PACKAGES = {
    "@scenecrdt/client-web": ("client-web", "client-web/dist/client.js", "bash scripts/build_web.sh"),
    "@scenecrdt/ecs-transport": ("ecs-transport", "ecs-transport/dist/index.js",
                                 "npm ci && npm run build in ecs-transport (tests/interop/run.sh does)"),
}


class SetupError(Exception):
    """The environment cannot be set up (no binary, the server does not start)."""


def _tail(text, lines=40, width=300):
    """The last lines of an output, each cut to `width` characters (a JSON line can be huge)."""
    return "\n".join(line if len(line) <= width else line[:width] + " [...]"
                     for line in text.rstrip().split("\n")[-lines:])


def _package_name(spec):
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") else parts[0]


class Environment:
    """The work folder, the server and the toolchains shared by every snippet of one run."""

    def __init__(self, root, build, work):
        self.root, self.build, self.work = root, build, work
        self.bin = os.path.join(build, "tools", "scenecrdt")
        if not os.access(self.bin, os.X_OK):
            raise SetupError(f"{self.bin} is not built (cmake --build --preset asan --target scenecrdt)")
        cache = self._cmake_cache()
        self.sanitize = cache.get("SCENECRDT_SANITIZE", "")
        self.cxx = cache.get("CMAKE_CXX_COMPILER", "c++")
        self.server = None
        self.server_log = []
        self.ports = None
        self.docdirs = {}
        self.cpp_ready = None
        self.farm = self._node_farm()

    def _cmake_cache(self):
        values = {}
        try:
            with open(os.path.join(self.build, "CMakeCache.txt"), encoding="utf-8") as f:
                for line in f:
                    m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
                    if m:
                        values[m.group(1)] = m.group(2)
        except OSError:
            raise SetupError(f"{self.build} is not a configured build tree (no CMakeCache.txt)")
        return values

    # ---- the work folders -------------------------------------------------------------
    def _node_farm(self):
        """work/node_modules: the repository's node packages side by side, and @scenecrdt/*."""
        farm = os.path.join(self.work, "node_modules")
        os.makedirs(os.path.join(farm, "@scenecrdt"))
        for rel in NODE_MODULE_DIRS:
            src = os.path.join(self.root, rel)
            if not os.path.isdir(src):
                continue
            for name in sorted(os.listdir(src)):
                if name.startswith("."):
                    continue
                if name.startswith("@"):
                    os.makedirs(os.path.join(farm, name), exist_ok=True)
                    for sub in os.listdir(os.path.join(src, name)):
                        dst = os.path.join(farm, name, sub)
                        if not os.path.lexists(dst):
                            os.symlink(os.path.join(src, name, sub), dst)
                elif not os.path.lexists(os.path.join(farm, name)):
                    os.symlink(os.path.join(src, name), os.path.join(farm, name))
        for pkg, (folder, _, _) in OWN_PACKAGES.items():
            dst = os.path.join(farm, pkg)
            if os.path.lexists(dst):
                os.remove(dst)
            os.symlink(os.path.join(self.root, folder), dst)
        return farm

    def docdir(self, snippet):
        """One folder per markdown file: the repository's top-level entries (linked), the build
        tree as build/<its name> (and build/asan, release, dev, tsan), build/web, node_modules,
        and what the blocks of that markdown wrote (`file` blocks, a command's outputs)."""
        d = self.docdirs.get(snippet.path)
        if d:
            return d
        d = os.path.join(self.work, snippet.path.replace("/", "_").replace(".md", ""))
        os.makedirs(os.path.join(d, "build"))
        for name in os.listdir(self.root):
            if not name.startswith(".") and name not in ("build", "node_modules"):
                os.symlink(os.path.join(self.root, name), os.path.join(d, name))
        # build/<preset>/... in a snippet is the build under test, whatever the preset.
        for preset in {os.path.basename(self.build), "asan", "release", "dev", "tsan"}:
            os.symlink(self.build, os.path.join(d, "build", preset))
        web = os.path.join(self.root, "build", "web")
        if os.path.isdir(web) and os.path.basename(self.build) != "web":
            os.symlink(web, os.path.join(d, "build", "web"))
        os.symlink(self.farm, os.path.join(d, "node_modules"))
        for name in os.listdir(HARNESS_DIR):  # the harnesses' helpers, imported as ./_NAME
            if name.startswith("_"):
                shutil.copy(os.path.join(HARNESS_DIR, name), os.path.join(d, name))
        self.docdirs[snippet.path] = d
        return d

    def stage_file(self, snippet):
        path = os.path.join(self.docdir(snippet), snippet.file)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.rewrite(snippet.text))

    # ---- the server -------------------------------------------------------------------
    def rewrite(self, text):
        """The documented default ports become the live server's (started on first use)."""
        if PORT_TCP.search(text) or PORT_HTTP.search(text):
            tcp, http = self.start_server()
            text = PORT_TCP.sub(f"127.0.0.1:{tcp}", text)
            text = PORT_HTTP.sub(f"127.0.0.1:{http}", text)
        return text

    def start_server(self):
        if self.ports:
            if self.server.poll() is not None:
                raise SetupError("scenecrdt serve exited during the run:\n" + _tail("".join(self.server_log)))
            return self.ports
        data = os.path.join(self.work, "server-data")
        self.server = subprocess.Popen(
            [self.bin, "serve", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", data, "--no-fsync",
             "--demo"],
            cwd=self.root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        found = {}
        ready = threading.Event()

        def read():
            for line in self.server.stderr:
                self.server_log.append(line)
                m = re.search(r"listening (tcp|ws)://[^ ]*:(\d+)", line)
                if m:
                    found[m.group(1)] = int(m.group(2))
                    if len(found) == 2:
                        ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        ready.wait(SERVER_START_SECONDS)
        if len(found) != 2:
            raise SetupError("scenecrdt serve did not report its two ports in "
                             f"{SERVER_START_SECONDS} s:\n" + _tail("".join(self.server_log)))
        self.ports = (found["tcp"], found["ws"])
        print(f"   (scenecrdt serve on tcp {self.ports[0]}, http {self.ports[1]})", flush=True)
        return self.ports

    def close(self):
        if self.server and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(15)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()

    # ---- prerequisites ----------------------------------------------------------------
    def esbuild(self):
        for rel in ("client-web/node_modules/.bin/esbuild", "ecs-transport/node_modules/.bin/esbuild"):
            p = os.path.join(self.root, rel)
            if os.access(p, os.X_OK):
                return p
        return shutil.which("esbuild")

    def missing_prerequisite(self, snippet):
        """What a snippet needs that this checkout lacks, or None."""
        if snippet.kind in ("js", "ts"):
            if not shutil.which("node"):
                return "node (bash scripts/deps.sh)"
            if snippet.kind == "ts" and not self.esbuild():
                return "esbuild (npm ci in client-web)"
            text = snippet.text + (self._harness_text(snippet) or "")
            for spec in SPECIFIER.findall(text):
                if spec.startswith((".", "/", "node:")) or spec in _NODE_BUILTINS:
                    continue
                pkg = _package_name(spec)
                if pkg in OWN_PACKAGES:
                    _, built, how = OWN_PACKAGES[pkg]
                    if not os.path.exists(os.path.join(self.root, built)):
                        return f"{pkg}: {built} is not built ({how})"
                elif not os.path.exists(os.path.join(self.farm, pkg)):
                    return f"{pkg}: not in {', '.join(NODE_MODULE_DIRS)} (npm ci there)"
        if snippet.kind == "csharp" and not (shutil.which("mcs") and shutil.which("mono")):
            return "mcs and mono (mono-mcs, mono-runtime: bash scripts/deps.sh)"
        if snippet.kind == "python" and not self._python_module():
            return ("the Python module: BUILD/bindings/python/scenecrdt/_native*.so "
                    "(target scenecrdt_python; pybind11-dev, python3-dev)")
        if snippet.kind == "cpp" and not os.path.exists(os.path.join(self.build, "scenecrdtTargets.cmake")):
            return f"{self.build}/scenecrdtTargets.cmake (configure with SCENECRDT_INSTALL=ON)"
        return None

    # ---- running ----------------------------------------------------------------------
    def _harness_path(self, snippet):
        if not snippet.harness:
            return None
        for name in sorted(os.listdir(HARNESS_DIR)):
            if os.path.splitext(name)[0] == snippet.harness:
                return os.path.join(HARNESS_DIR, name)
        return None

    def _harness_text(self, snippet):
        p = self._harness_path(snippet)
        if not p:
            return None
        with open(p, encoding="utf-8") as f:
            return f.read()

    def source(self, snippet, line_directives):
        """(text, extension): the snippet alone, or put into its harness at the `@snippet` line."""
        body = snippet.text
        for flag, value in snippet.rewrites:  # `with --FLAG VALUE`: every value of that flag
            body = re.sub(r"(?<![\w-])(" + re.escape(flag) + r")(\s+|=)(\"[^\"]*\"|'[^']*'|\S+)",
                          lambda m: m.group(1) + m.group(2) + value, body)
        if line_directives:
            body = f'#line {snippet.text_line()} "{snippet.path}"\n{body}'
        if not snippet.harness:
            return self.rewrite(body), None
        path = self._harness_path(snippet)
        if not path:
            raise ValueError(f"no harness '{snippet.harness}' in tests/docs/harness/")
        out = []
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        placed = False
        rel = os.path.relpath(path, self.root)
        for i, line in enumerate(lines):
            if "@snippet" in line and not placed:
                out.append(body.rstrip("\n"))
                if line_directives:
                    out.append(f'#line {i + 2} "{rel}"')
                placed = True
            else:
                out.append(line)
        if not placed:
            raise ValueError(f"{rel} has no @snippet line")
        if line_directives:
            out.insert(0, f'#line 1 "{rel}"')
        return self.rewrite("\n".join(out)), os.path.splitext(path)[1]

    def run(self, snippet):
        """(ok, why) for one snippet."""
        try:
            if snippet.kind == "c":
                return self._run_c(snippet)
            if snippet.kind == "cpp":
                return self._run_cpp(snippet)
            if snippet.kind in ("js", "ts"):
                return self._run_node(snippet)
            if snippet.kind == "python":
                return self._run_python(snippet)
            if snippet.kind == "cmake":
                return self._run_cmake(snippet)
            if snippet.kind == "csharp":
                return self._run_csharp(snippet)
            return self._run_sh(snippet)
        except ValueError as e:
            return False, str(e)

    def _exec(self, argv, cwd, loop, env=None):
        """Runs a snippet's process: (ok, output)."""
        full_env = dict(os.environ)
        full_env["PATH"] = os.path.join(self.build, "tools") + os.pathsep + full_env.get("PATH", "")
        full_env.update(env or {})
        p = subprocess.Popen(argv, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=LOOP_SECONDS if loop else RUN_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                out, _ = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
            if loop:
                return True, out
            return False, f"did not end within {RUN_SECONDS} s\n{_tail(out)}"
        if p.returncode != 0:
            return False, f"exited with {p.returncode}\n{_tail(out)}"
        return True, out

    def _name(self, snippet):
        return f"line{snippet.line}"

    def _run_c(self, snippet):
        d = self.docdir(snippet)
        text, _ = self.source(snippet, True)
        src = os.path.join(d, self._name(snippet) + ".c")
        exe = src[:-2]
        with open(src, "w", encoding="utf-8") as f:
            f.write(text)
        capi = os.path.join(self.build, "capi")
        argv = [os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Werror", "-g",
                "-I" + os.path.join(self.build, "include"), "-o", exe, src,
                "-L" + capi, "-lscenecrdt", "-Wl,-rpath," + capi]
        if self.sanitize:
            argv.insert(1, "-fsanitize=" + self.sanitize)
        c = subprocess.run(argv, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if c.returncode != 0:
            return False, "does not compile (cc -std=c11 -Wall -Werror)\n" + _tail(c.stdout)
        return self._exec([exe], d, snippet.loop)

    def _prepare_cpp(self):
        """One CMake project in work/cxx that finds the build tree's package."""
        if self.cpp_ready is not None:
            return self.cpp_ready
        d = os.path.join(self.work, "cxx")
        os.makedirs(d)
        with open(os.path.join(d, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write("cmake_minimum_required(VERSION 3.25)\nproject(docs_snippets CXX)\n"
                    "find_package(scenecrdt CONFIG REQUIRED)\n"
                    "file(GLOB sources ${CMAKE_SOURCE_DIR}/*.cc)\n"
                    "foreach(src IN LISTS sources)\n"
                    "  get_filename_component(name ${src} NAME_WE)\n"
                    "  add_executable(${name} ${src})\n"
                    "  target_link_libraries(${name} PRIVATE scenecrdt::client)\n"
                    "  target_compile_options(${name} PRIVATE -Wall -Werror)\n"
                    "endforeach()\n")
        argv = ["cmake", "-S", d, "-B", os.path.join(d, "build"), "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_COMPILER=" + self.cxx,
                "-Dscenecrdt_DIR=" + self.build]
        if self.sanitize:
            flag = "-fsanitize=" + self.sanitize
            argv += [f"-DCMAKE_CXX_FLAGS={flag}", f"-DCMAKE_EXE_LINKER_FLAGS={flag}"]
        if shutil.which("ccache"):
            argv.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        self.cpp_ready = (d, argv)
        return self.cpp_ready

    def _run_cpp(self, snippet):
        d, configure = self._prepare_cpp()
        text, _ = self.source(snippet, True)
        name = "s_" + re.sub(r"[^A-Za-z0-9]", "_", snippet.path) + "_" + self._name(snippet)
        with open(os.path.join(d, name + ".cc"), "w", encoding="utf-8") as f:
            f.write(text)
        # Configured again per snippet (a few seconds) so the glob sees the new source.
        c = subprocess.run(configure, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if c.returncode != 0:
            return False, "the CMake package of the build tree does not configure\n" + _tail(c.stdout)
        b = subprocess.run(["cmake", "--build", os.path.join(d, "build"), "--target", name, "-j2"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if b.returncode != 0:
            return False, "does not compile against find_package(scenecrdt) (C++20, -Wall -Werror)\n" + \
                _tail(b.stdout)
        return self._exec([os.path.join(d, "build", name)], self.docdir(snippet), snippet.loop)

    def _run_node(self, snippet):
        d = self.docdir(snippet)
        text, ext = self.source(snippet, False)
        if snippet.kind == "ts":
            src = os.path.join(d, self._name(snippet) + ".ts")
            with open(src, "w", encoding="utf-8") as f:
                f.write(text)
            out = src[:-3] + ".bundle.mjs"
            # A bundler's run: the wasm goes next to the bundle (docs/WEB.md).
            wasm = os.path.join(self.root, "client-web", "dist", "scenecrdt.wasm")
            if os.path.exists(wasm) and not os.path.lexists(os.path.join(d, "scenecrdt.wasm")):
                os.symlink(wasm, os.path.join(d, "scenecrdt.wasm"))
            b = subprocess.run([self.esbuild(), src, "--bundle", "--platform=node", "--format=esm",
                                "--log-level=warning", "--outfile=" + out,
                                "--banner:js=import { createRequire as __cr } from 'module'; "
                                "const require = __cr(import.meta.url);"],
                               cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if b.returncode != 0:
                return False, "esbuild cannot bundle it\n" + _tail(b.stdout)
            return self._exec(["node", out], d, snippet.loop)
        if ext is None:
            esm = re.search(r"^\s*(import|export)\s", text, re.M) or "require(" not in text
            ext = ".mjs" if esm else ".cjs"
        src = os.path.join(d, self._name(snippet) + ext)
        with open(src, "w", encoding="utf-8") as f:
            f.write(text)
        return self._exec(["node", src], d, snippet.loop)

    def _run_cmake(self, snippet):
        """A consumer's CMake lines: put into their harness project (required) and configured
        against the build tree's package (scenecrdt_DIR); not built."""
        if not snippet.harness:
            return False, "a cmake block needs a harness (the project around it) or skip (reason)"
        text, _ = self.source(snippet, False)
        d = os.path.join(self.work, "cmake_" + self._name(snippet) + "_" +
                         re.sub(r"[^A-Za-z0-9]", "_", snippet.path))
        os.makedirs(d)
        with open(os.path.join(d, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write(text)
        c = subprocess.run(["cmake", "-S", d, "-B", os.path.join(d, "build"), "-G", "Ninja",
                            "-Dscenecrdt_DIR=" + self.build], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if c.returncode != 0:
            return False, "the consumer project does not configure\n" + _tail(c.stdout)
        return True, c.stdout

    def _sanitizer_preload(self, env):
        """A sanitized library loaded into an interpreter needs its runtimes preloaded (as
        bindings/test_env.sh does); the interpreter's leaks are not ours."""
        if "address" in self.sanitize:
            libs = [subprocess.run([self.cxx, f"-print-file-name={n}"], stdout=subprocess.PIPE,
                                   text=True).stdout.strip() for n in ("libasan.so", "libstdc++.so")]
            env["LD_PRELOAD"] = " ".join(libs)
            env["ASAN_OPTIONS"] = "detect_leaks=0" + env.get("ASAN_OPTIONS", "")
        return env

    def _run_csharp(self, snippet):
        """mcs (-warnaserror) against the binding (bindings/csharp/Runtime, compiled once), then
        mono with the build's libscenecrdt.so.1."""
        dll = os.path.join(self.work, "SceneCrdt.dll")
        if not os.path.exists(dll):
            runtime = os.path.join(self.root, "bindings", "csharp", "Runtime")
            sources = sorted(os.path.join(runtime, n) for n in os.listdir(runtime) if n.endswith(".cs"))
            c = subprocess.run(["mcs", "-nologo", "-target:library", "-out:" + dll] + sources,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if c.returncode != 0:
                return False, "the C# binding does not compile\n" + _tail(c.stdout)
        d = self.docdir(snippet)
        text, _ = self.source(snippet, True)
        src = os.path.join(d, self._name(snippet) + ".cs")
        exe = src[:-3] + ".exe"
        with open(src, "w", encoding="utf-8") as f:
            f.write(text)
        c = subprocess.run(["mcs", "-nologo", "-warn:4", "-warnaserror", "-r:" + dll, "-out:" + exe, src],
                           cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if c.returncode != 0:
            return False, "does not compile (mcs -warn:4 -warnaserror)\n" + _tail(c.stdout)
        shutil.copy(dll, os.path.join(d, "SceneCrdt.dll"))
        env = {"LD_LIBRARY_PATH": os.path.join(self.build, "capi"),
               "ASAN_OPTIONS": ":handle_segv=0:allow_user_segv_handler=1"}
        return self._exec(["mono", "--debug", exe], d, snippet.loop, self._sanitizer_preload(env))

    def _python_module(self):
        d = os.path.join(self.build, "bindings", "python", "scenecrdt")
        return os.path.isdir(d) and any(n.startswith("_native") for n in os.listdir(d))

    def _run_python(self, snippet):
        """Debian's python3 (README.md) with the build's module."""
        d = self.docdir(snippet)
        text, _ = self.source(snippet, False)
        src = os.path.join(d, self._name(snippet) + ".py")
        with open(src, "w", encoding="utf-8") as f:
            f.write(text)
        env = self._sanitizer_preload({"PYTHONPATH": os.path.join(self.build, "bindings", "python")})
        python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
        return self._exec([python, src], d, snippet.loop, env)

    def _run_sh(self, snippet):
        d = self.docdir(snippet)
        text, _ = self.source(snippet, False)
        lines = text.split("\n")
        console = any(line.startswith("$ ") for line in lines)
        if console:  # a console: the commands after "$ ", the rest is their output
            text = "\n".join(line[2:] for line in lines if line.startswith("$ ")) + "\n"
        # Each command is traced with its markdown line (the script's line with a harness or
        # prompts). PS4 is set in the script: bash run as root ignores it from the environment.
        where = (f"{snippet.path}:$((LINENO + {snippet.text_line() - 2}))" if not snippet.harness
                 and not console else "script line $((LINENO - 1))")
        src = os.path.join(d, self._name(snippet) + ".sh")
        with open(src, "w", encoding="utf-8") as f:
            f.write(f"PS4='+ {where}: '\n" + text)
        return self._exec(["bash", "-euo", "pipefail", "-x", src], d, snippet.loop)


_NODE_BUILTINS = {"fs", "os", "path", "child_process", "url", "util", "events", "module", "net",
                  "http", "https", "crypto", "assert", "stream", "zlib", "worker_threads", "process"}
