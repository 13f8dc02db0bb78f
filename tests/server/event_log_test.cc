// SPDX-License-Identifier: Apache-2.0
// Owner: server/observability/event_log.* (issue 23 item 10). One escaping rule for every string
// value of an event line: bare when it is plain printable ASCII without space, '"', '\\' or '=';
// else quoted with escapes. Numbers are formatted as printf does; a long line is cut without
// leaving a quote open.
#include "scenecrdt/server/observability/event_log.h"

#include <gtest/gtest.h>

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
  log.Write("e", format, args...);
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

}  // namespace
}  // namespace scenecrdt::testing
