// SPDX-License-Identifier: Apache-2.0
// Owner: server/observability/event_log.* (issue 23 item 10). One escaping rule for every string
// value of an event line: bare when it is plain printable ASCII without space, '"', '\\' or '=';
// else quoted with escapes. Numbers are formatted as printf does; a long line is cut without
// leaving a quote open.
#include "scenecrdt/server/observability/event_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace scenecrdt::testing {
namespace {

std::string Value(std::string_view v, bool quoted = false) {
  std::string out;
  server::AppendLogValue(out, v, quoted);
  return out;
}

// The fields part of one line written with `format` (after "<event> ", without the newline).
template <class... Args>
std::string Fields(const char* format, Args... args) {
  std::string line;
  server::EventLog log([&](std::string_view l) { line = l; });
  log.Write(server::LogLevel::kInfo, "e", format, args...);
  const std::size_t at = line.find(" e ");
  if (at == std::string::npos || line.empty() || line.back() != '\n') return "<bad line>";
  return line.substr(at + 3, line.size() - at - 4);
}

TEST(EventLogTest, ValuesAreBareOnlyWhenPlain) {
  EXPECT_EQ(Value("lobby"), "lobby");
  EXPECT_EQ(Value("127.0.0.1:5000"), "127.0.0.1:5000");
  EXPECT_EQ(Value("[::1]:7600"), "[::1]:7600");
  EXPECT_EQ(Value(""), "\"\"");
  EXPECT_EQ(Value("two words"), "\"two words\"");
  EXPECT_EQ(Value("a=b"), "\"a=b\"");
  EXPECT_EQ(Value(R"(alice" role=write)"), R"("alice\" role=write")");
  EXPECT_EQ(Value(R"(C:\x)"), R"("C:\\x")");
  EXPECT_EQ(Value("a\nb\rc\td"), R"("a\nb\rc\td")");
  EXPECT_EQ(Value(std::string("\x01\x1b\x7f", 3)), R"("\x01\x1b\x7f")");
  EXPECT_EQ(Value("jos\xc3\xa9"), R"("jos\xc3\xa9")");
  // Inside quotes the format opened: escaping only.
  EXPECT_EQ(Value(R"(say "hi")", true), R"(say \"hi\")");
  EXPECT_EQ(Value("plain", true), "plain");
}

TEST(EventLogTest, EveryStringConversionIsEscaped) {
  const char* hostile = R"(alice" role=write scene=admin)";
  EXPECT_EQ(Fields("subject=\"%s\" role=%s", hostile, "read"),
            R"(subject="alice\" role=write scene=admin" role=read)");
  EXPECT_EQ(Fields("subject=%s role=%s", hostile, "read"),
            R"(subject="alice\" role=write scene=admin" role=read)");
  EXPECT_EQ(Fields("detail=\"%.*s\" n=%d", 5, "a\nbcdefg", 3), R"(detail="a\nbcd" n=3)");
  EXPECT_EQ(Fields("line=%s", "x\nscenecrdt serve: forged"),
            R"(line="x\nscenecrdt serve: forged")");
  EXPECT_EQ(Fields("c=%c", '"'), R"(c="\"")");
  // Not after '=' nor in quotes: text the server chose, written as it is but for line breaks
  // and other bytes outside printable ASCII.
  EXPECT_EQ(Fields("detail=\"%s\"%s", "x", " (later refusals: counted)"),
            R"(detail="x" (later refusals: counted))");
  EXPECT_EQ(Fields("%s", "a\nscenecrdt serve: forged"), R"(a\nscenecrdt serve: forged)");
}

TEST(EventLogTest, NumbersAreFormattedAsPrintfDoes) {
  EXPECT_EQ(
      Fields("a=%llu b=%lld c=%zu d=%u e=%d f=%g g=%5.2f h=%x i=%%",
             static_cast<unsigned long long>(18446744073709551615ull), static_cast<long long>(-9),
             static_cast<std::size_t>(42), 7u, -3, 0.5, 3.14159, 255u),
      "a=18446744073709551615 b=-9 c=42 d=7 e=-3 f=0.5 g= 3.14 h=ff i=%");
  EXPECT_EQ(Fields("w=%*d", 4, 7), "w=   7");
}

TEST(EventLogTest, LongLinesAreCutWithoutAnOpenQuote) {
  const std::string quotes(2000, '"');
  const std::string fields = Fields("detail=\"%s\" end=1", quotes.c_str());
  EXPECT_LT(fields.size(), server::EventLog::kMaxLineBytes);
  ASSERT_GE(fields.size(), 9u);
  EXPECT_EQ(fields.substr(fields.size() - 9), "\" cut=yes");
  // Every quote inside is escaped: the one before " cut=yes" closes the value.
  EXPECT_EQ(fields.substr(fields.size() - 11, 2), "\\\"");
  const std::string hex(2000, '\x01');
  const std::string cut = Fields("v=%s", hex.c_str());
  EXPECT_EQ(cut.substr(cut.size() - 9), "\" cut=yes");
  EXPECT_EQ((cut.size() - 12) % 4, 0u) << "an escape was cut in half";
}

// The json object of one event written with `format` (null when the line is no object).
template <class... Args>
nlohmann::json JsonFields(const char* format, Args... args) {
  std::string line;
  server::EventLog log([&](std::string_view l) { line = l; }, true, server::LogFormat::kJson);
  log.Write(server::LogLevel::kWarn, "e", format, args...);
  if (line.empty() || line.back() != '\n' || line.find('\n') != line.size() - 1) return nullptr;
  auto object = nlohmann::json::parse(line, nullptr, false);
  if (!object.is_object()) return nullptr;
  return object;
}

TEST(EventLogTest, JsonLineHasTheTextLinesFields) {
  const char* hostile = R"(alice" role=write scene=admin)";
  const nlohmann::json o =
      JsonFields("scene=%s session=%llu kind=%s peer=%s subject=\"%s\" role=%s expires_in_s=%lld",
                 "lobby", static_cast<unsigned long long>(7), "tcp", "127.0.0.1:5000", hostile,
                 "read", static_cast<long long>(-3));
  ASSERT_TRUE(o.is_object());
  EXPECT_EQ(o["level"], "warn");
  EXPECT_EQ(o["event"], "e");
  EXPECT_TRUE(o["ts"].is_string());
  EXPECT_EQ(o["scene"], "lobby");
  EXPECT_EQ(o["session"], 7u);
  EXPECT_TRUE(o["session"].is_number_unsigned());
  EXPECT_EQ(o["peer"], "127.0.0.1:5000");
  EXPECT_EQ(o["subject"], hostile) << "one value, not more fields";
  EXPECT_EQ(o["role"], "read");
  EXPECT_EQ(o["expires_in_s"], -3);
  EXPECT_EQ(o.size(), 10u) << o.dump();
}

TEST(EventLogTest, JsonValuesAreStringsNumbersNullOrNote) {
  const nlohmann::json o =
      JsonFields("scene=- session=- detail=\"%.*s\"%s ratio=%g hex=%x quoted=\"%d\" mixed=%dms", 5,
                 "a\nbcdefg", " (later refusals: counted)", 0.5, 255u, 4, 9);
  ASSERT_TRUE(o.is_object());
  EXPECT_TRUE(o["scene"].is_null());
  EXPECT_TRUE(o["session"].is_null());
  EXPECT_EQ(o["detail"], "a\nbcd");
  EXPECT_EQ(o["note"], "(later refusals: counted)");
  EXPECT_EQ(o["ratio"], 0.5);
  EXPECT_EQ(o["hex"], "ff");
  EXPECT_EQ(o["quoted"], "4");
  EXPECT_EQ(o["mixed"], "9ms");
  const nlohmann::json words = JsonFields("ok=no detail=%s (the old one stays)", "bad file");
  EXPECT_EQ(words["detail"], "bad file");
  EXPECT_EQ(words["note"], "(the old one stays)");
  // Numbers the format wrote itself are numbers too (messages=0 here, messages=%llu elsewhere).
  const nlohmann::json literal = JsonFields("messages=0 http=429 name=%s", "123");
  EXPECT_EQ(literal["messages"], 0);
  EXPECT_EQ(literal["http"], 429);
  EXPECT_EQ(literal["name"], "123") << "a string conversion stays a string";
  // Bytes that are not UTF-8 cannot break the object.
  const nlohmann::json bytes = JsonFields("v=%s", "\xff\xfe\x01\"}");
  ASSERT_TRUE(bytes.is_object());
  EXPECT_TRUE(bytes["v"].is_string());
}

TEST(EventLogTest, JsonLongLinesAreCutToTheBound) {
  const std::string quotes(3000, '"');
  std::string line;
  server::EventLog log([&](std::string_view l) { line = l; }, true, server::LogFormat::kJson);
  log.Write(server::LogLevel::kError, "e", "detail=\"%s\" end=1", quotes.c_str());
  EXPECT_LE(line.size(), server::EventLog::kMaxLineBytes);
  const auto o = nlohmann::json::parse(line, nullptr, false);
  ASSERT_TRUE(o.is_object()) << line;
  EXPECT_EQ(o["cut"], true);
  EXPECT_EQ(o["end"], 1);
}

TEST(EventLogTest, LevelsBelowTheMinimumAreNotWritten) {
  std::vector<std::string> lines;
  server::EventLog log([&](std::string_view l) { lines.emplace_back(l); }, true,
                       server::LogFormat::kText, server::LogLevel::kWarn);
  log.Write(server::LogLevel::kDebug, "a", "x=%d", 1);
  log.Write(server::LogLevel::kInfo, "b", "x=%d", 1);
  log.Write(server::LogLevel::kWarn, "c", "x=%d", 1);
  log.Write(server::LogLevel::kError, "d", "x=%d", 1);
  log.Message(server::LogLevel::kInfo, "serve", "listening");
  log.Message(server::LogLevel::kWarn, "serve", "no --auth");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find(" c x=1"), std::string::npos);
  EXPECT_NE(lines[1].find(" d x=1"), std::string::npos);
  // The text form of a message is the line `scenecrdt serve` always wrote.
  EXPECT_EQ(lines[2], "scenecrdt serve: no --auth\n");
  EXPECT_EQ(server::ParseLogLevel("warn"), server::LogLevel::kWarn);
  EXPECT_FALSE(server::ParseLogLevel("verbose").has_value());
  EXPECT_EQ(server::ParseLogFormat("json"), server::LogFormat::kJson);
  EXPECT_FALSE(server::ParseLogFormat("xml").has_value());
}

}  // namespace
}  // namespace scenecrdt::testing
