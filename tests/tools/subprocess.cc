// SPDX-License-Identifier: Apache-2.0
// Owns the process runner of the command-line tests (see subprocess.h).
#include "tests/tools/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

extern char** environ;

namespace scenecrdt::tools::test {

ScratchDir::ScratchDir() {
  std::string pattern = ::testing::TempDir() + "scenecrdt_tools_test_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed: " << std::strerror(errno);
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

// Reads both pipes until both reach end of file or the deadline passes; false on timeout.
bool DrainPipes(int out_fd, int err_fd, std::string& out, std::string& err,
                std::chrono::steady_clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int ready = poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll() skips negative descriptors
        --open_fds;
      }
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> ChildEnvironment(const std::vector<std::string>& changes) {
  std::vector<std::string> env;
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const bool changed = std::any_of(changes.begin(), changes.end(), [&](const std::string& c) {
      return name_of(c) == name_of(entry);
    });
    if (!changed) env.push_back(entry);
  }
  for (const std::string& c : changes) {
    if (c.find('=') != std::string::npos) env.push_back(c);
  }
  return env;
}

RunResult RunProcess(const std::string& program, const std::vector<std::string>& args,
                     const ScratchDir& scratch, const RunOptions& options) {
  RunResult result;
  const std::filesystem::path out_path = scratch.File("stdout.txt");
  const std::filesystem::path err_path = scratch.File("stderr.txt");
  const std::string in =
      options.stdin_path.empty() ? std::string("/dev/null") : options.stdin_path.string();
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if (options.pipes && (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return result;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, in.c_str(), O_RDONLY, 0);
  if (options.pipes) {
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }

  std::vector<std::string> argv_storage;
  argv_storage.push_back(program);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = ChildEnvironment(options.env);
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (options.pipes) {
    close(out_pipe[1]);
    close(err_pipe[1]);
  }
  if (spawned != 0) {
    ADD_FAILURE() << "posix_spawn " << program << ": " << std::strerror(spawned);
    if (options.pipes) {
      close(out_pipe[0]);
      close(err_pipe[0]);
    }
    return result;
  }
  if (options.pipes) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    if (!DrainPipes(out_pipe[0], err_pipe[0], result.out, result.err, deadline)) {
      ADD_FAILURE() << program << " still running after 120 s: killed";
      kill(pid, SIGKILL);
    }
    close(out_pipe[0]);
    close(err_pipe[0]);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      ADD_FAILURE() << "waitpid: " << std::strerror(errno);
      return result;
    }
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!options.pipes) {
    result.out = ReadText(out_path);
    result.err = ReadText(err_path);
  }
  return result;
}

RunResult RunProcess(const std::string& program, const std::vector<std::string>& args,
                     const ScratchDir& scratch, const std::filesystem::path& stdin_path) {
  RunOptions options;
  options.stdin_path = stdin_path;
  return RunProcess(program, args, scratch, options);
}

std::vector<uint8_t> ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot read " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot read " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) ADD_FAILURE() << "cannot write " << path;
}

void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) ADD_FAILURE() << "cannot write " << path;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

}  // namespace scenecrdt::tools::test
