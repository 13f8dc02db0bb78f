// SPDX-License-Identifier: Apache-2.0
// Owner: issue 23 items 8, 9, 10 and the certificate part of 15, end to end. SIGHUP on a
// server without TLS is logged and changes nothing (server.cc); --jwt-secret and
// --jwt-public-key may each be given several times and every key verifies (rotation,
// access_control.cc, jwt_verifier.cc); a JWT `sub` full of quotes reaches the event log as one
// escaped value (event_log.cc); a certificate outside its validity period is warned about at
// start and refused on reload (tls_context.cc).
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/server/auth/jwt_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

int64_t WallNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Collects the server's event lines (the sink runs on io threads).
class LogLines {
 public:
  std::function<void(std::string_view)> Sink() {
    return [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    };
  }
  // The first line holding `part` ("" when none).
  std::string Find(std::string_view part) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& l : lines_) {
      if (l.find(part) != std::string::npos) return l;
    }
    return "";
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const std::string& l : lines_) out += l;
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// The key=value fields after "<event> " of an event line, read as a log parser would: a value
// is bare up to the next space, or quoted with \" \\ \n \r \t \xHH escapes. nullopt when the
// line does not parse (an unterminated quote, a field without '=').
std::optional<std::multimap<std::string, std::string>> ParseFields(std::string_view line,
                                                                   std::string_view event) {
  const std::size_t at = line.find(" " + std::string(event) + " ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + event.size() + 2);
  while (!rest.empty() && (rest.back() == '\n')) rest.remove_suffix(1);
  std::multimap<std::string, std::string> fields;
  std::size_t i = 0;
  while (i < rest.size()) {
    if (rest[i] == ' ') {
      ++i;
      continue;
    }
    const std::size_t eq = rest.find('=', i);
    const std::size_t space = rest.find(' ', i);
    if (eq == std::string_view::npos || (space != std::string_view::npos && space < eq)) {
      if (rest[i] == '(') break;  // a trailing remark in parentheses
      return std::nullopt;
    }
    std::string key(rest.substr(i, eq - i));
    std::string value;
    i = eq + 1;
    if (i < rest.size() && rest[i] == '"') {
      ++i;
      bool closed = false;
      while (i < rest.size()) {
        const char c = rest[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          value += c;
          continue;
        }
        if (i >= rest.size()) return std::nullopt;
        const char e = rest[i++];
        if (e == 'n') {
          value += '\n';
        } else if (e == 'r') {
          value += '\r';
        } else if (e == 't') {
          value += '\t';
        } else if (e == 'x' && i + 2 <= rest.size()) {
          value += static_cast<char>(std::stoi(std::string(rest.substr(i, 2)), nullptr, 16));
          i += 2;
        } else {
          value += e;
        }
      }
      if (!closed) return std::nullopt;
    } else {
      const std::size_t end = rest.find(' ', i);
      value = std::string(rest.substr(i, end == std::string_view::npos ? end : end - i));
      i = end == std::string_view::npos ? rest.size() : end;
    }
    fields.emplace(std::move(key), std::move(value));
  }
  return fields;
}

std::string Claims(const std::string& sub_json, const std::string& role, int64_t exp) {
  return R"({"sub":")" + sub_json + R"(","scenes":["lobby"],"role":")" + role + R"(","exp":)" +
         std::to_string(exp) + "}";
}

class ServerEdgeTest : public JwtFixture {};

// Item 10: a subject made to look like more fields stays one value in the real log line.
TEST_F(ServerEdgeTest, HostileJwtSubjectCannotForgeLogFields) {
  LogLines log;
  server::ServerConfig config = TestServer::Config();
  config.access.jwt_secret_files = {keys().secret_file};
  config.log_sink = log.Sink();
  TestServer server(config);
  const uint16_t port = server.get().tcp_port();
  RawConnection setup(port);  // a writer creates the scene; the reader may then join it
  ASSERT_TRUE(
      setup.Join("lobby", ValidToken(TestSigner::kHs256, Claims("setup", "write", WallNow() + 600)))
          .has_value());
  // As JSON: alice" role=write scene=admin path=C:\x y="
  const std::string hostile_json = R"(alice\" role=write scene=admin path=C:\\x y=\")";
  const std::string hostile = R"(alice" role=write scene=admin path=C:\x y=")";
  RawConnection reader(port);
  ASSERT_TRUE(reader
                  .Join("lobby", ValidToken(TestSigner::kHs256,
                                            Claims(hostile_json, "read", WallNow() + 600)))
                  .has_value());
  std::string line;
  ASSERT_TRUE(WaitUntil([&] {
    line = log.Find("role=read");
    return !line.empty() && line.find(" auth ") != std::string::npos;
  })) << log.All();
  auto fields = ParseFields(line, "auth");
  ASSERT_TRUE(fields.has_value()) << line;
  EXPECT_EQ(fields->count("role"), 1u) << line;
  EXPECT_EQ(fields->count("scene"), 1u) << line;
  EXPECT_EQ(fields->count("path"), 0u) << line;
  EXPECT_EQ(fields->find("role")->second, "read") << line;
  EXPECT_EQ(fields->find("scene")->second, "lobby") << line;
  EXPECT_EQ(fields->find("subject")->second, hostile) << line;
}

#ifdef SCENECRDT_BINARY
// Item 8: SIGHUP without TLS used to end the process (exit by signal, no goodbye).
TEST(ServerSignalTest, SighupWithoutTlsIsLoggedAndTheServerGoesOn) {
  TempDir dir;
  ServerProcess server(dir.path());
  ASSERT_TRUE(server.started()) << server.log();
  RawConnection before(server.port());
  ASSERT_TRUE(before.Join("hup").has_value()) << server.log();
  server.Kill(SIGHUP);
  ASSERT_TRUE(
      WaitUntil([&] { return server.log().find("reload tls=off") != std::string::npos; }, 20s))
      << server.log();
  RawConnection after(server.port());
  EXPECT_TRUE(after.Join("hup").has_value()) << server.log();
  // The session from before SIGHUP is still there to be told goodbye.
  server.Kill(SIGTERM);
  auto goodbye = before.ReadError(20s);
  ASSERT_TRUE(goodbye.has_value()) << server.log();
  EXPECT_EQ(goodbye->code, ErrorCode::kShuttingDown);
  EXPECT_EQ(server.WaitExit(30s), 0) << server.log();
}

// SIGHUP reloads the --auth table too (issue 24 section 3): the log says so and new joins use it.
TEST(ServerSignalTest, SighupReloadsTheAuthTable) {
  TempDir dir;
  const std::string auth = dir.path() + "/auth.json";
  std::ofstream(auth)
      << R"({"tokens":[{"token":"tok-before-3f9a","scenes":["*"],"role":"write"}]})";
  TempDir data;
  ServerProcess server(data.path(), {"--auth", auth});
  ASSERT_TRUE(server.started()) << server.log();
  RawConnection first(server.port());
  ASSERT_TRUE(first.Join("hup", "tok-before-3f9a").has_value()) << server.log();
  std::ofstream(auth, std::ios::trunc)
      << R"({"tokens":[{"token":"tok-after-77c1","scenes":["*"],"role":"write"}]})";
  server.Kill(SIGHUP);
  ASSERT_TRUE(
      WaitUntil([&] { return server.log().find("auth_reload ok=yes") != std::string::npos; }, 20s))
      << server.log();
  auto cut = first.ReadError(20s);
  ASSERT_TRUE(cut.has_value()) << server.log();
  EXPECT_EQ(cut->code, ErrorCode::kUnauthorized);
  RawConnection after(server.port());
  EXPECT_TRUE(after.Join("hup", "tok-after-77c1").has_value()) << server.log();
  RawConnection before(server.port());
  EXPECT_FALSE(before.Join("hup", "tok-before-3f9a").has_value());
  EXPECT_EQ(server.log().find("tok-"), std::string::npos);  // no token in the log
  server.Kill(SIGTERM);
  EXPECT_EQ(server.WaitExit(30s), 0) << server.log();
}

// Item 9: each JWT key flag may be repeated; every key given verifies (rotation).
TEST_F(ServerEdgeTest, RepeatedJwtKeyFlagsAllVerify) {
  TempDir dir;
  const std::string second_secret = dir.path() + "/secret-2";
  {
    FILE* f = std::fopen(second_secret.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("a-second-secret-of-more-than-32-bytes-for-rotation\n", f);
    std::fclose(f);
  }
  ServerProcess server(dir.path(), {"--jwt-public-key", keys().ed25519_public, "--jwt-public-key",
                                    keys().ed25519_other_public, "--jwt-secret", keys().secret_file,
                                    "--jwt-secret", second_secret});
  ASSERT_TRUE(server.started()) << server.log();
  const std::string claims = Claims("rotating", "write", WallNow() + 600);
  const std::string ed = SigningInput(kEdDsaHeader, claims);
  const std::string hs = SigningInput(kHs256Header, claims);
  const std::vector<std::pair<std::string, std::string>> tokens = {
      {"first public key", JoinToken(ed, SignWithPem(keys().ed25519_private, ed))},
      {"second public key", JoinToken(ed, SignWithPem(keys().ed25519_other_private, ed))},
      {"first secret", JoinToken(hs, SignHs256(keys().secret, hs))},
      {"second secret",
       JoinToken(hs, SignHs256("a-second-secret-of-more-than-32-bytes-for-rotation", hs))},
  };
  for (const auto& [which, token] : tokens) {
    RawConnection raw(server.port());
    EXPECT_TRUE(raw.Join("lobby", token).has_value()) << which << "\n" << server.log();
  }
  RawConnection stranger(server.port());
  session::Hello hello;
  hello.scene = "lobby";
  hello.token = JoinToken(hs, SignHs256(std::string(48, 'z'), hs));
  ASSERT_TRUE(stranger.SendFrame(hello));
  auto refused = stranger.ReadError(20s);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->text, "bad_signature");
  server.Kill(SIGTERM);
  EXPECT_EQ(server.WaitExit(30s), 0) << server.log();
}
#endif

// A self-signed P-256 certificate for localhost valid from now + from_s to now + to_s, made
// through the OpenSSL API (the openssl 3.0 CLI cannot date a certificate in the past).
TestCert MakeDatedCert(const std::string& dir, const std::string& name, long from_s, long to_s) {
  TestCert out{dir + "/" + name + ".crt", dir + "/" + name + ".key"};
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  X509* x = X509_new();
  EXPECT_TRUE(key != nullptr && x != nullptr);
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
  X509_gmtime_adj(X509_getm_notBefore(x), from_s);
  X509_gmtime_adj(X509_getm_notAfter(x), to_s);
  X509_set_pubkey(x, key);
  X509_NAME* subject = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, subject);
  EXPECT_GT(X509_sign(x, key, EVP_sha256()), 0);
  FILE* c = std::fopen(out.cert.c_str(), "w");
  FILE* k = std::fopen(out.key.c_str(), "w");
  EXPECT_TRUE(c != nullptr && k != nullptr);
  EXPECT_EQ(PEM_write_X509(c, x), 1);
  EXPECT_EQ(PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr), 1);
  std::fclose(c);
  std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}

// Item 15: an expired certificate at start is served (nothing better exists) with a warning
// line and the counter; the gauge says when it expired.
TEST(ServerCertificateTest, ExpiredCertificateAtStartIsWarnedAbout) {
  TempDir dir;
  LogLines log;
  const TestCert cert = MakeDatedCert(dir.path(), "old", -2 * 86400, -86400);
  server::ServerConfig config = TestServer::Config();
  config.tls_cert_file = cert.cert;
  config.tls_key_file = cert.key;
  config.log_sink = log.Sink();
  TestServer server(config);
  const std::string line = log.Find("tls_certificate");
  EXPECT_NE(line.find("when=start state=expired"), std::string::npos) << log.All();
  EXPECT_NE(line.find("warning="), std::string::npos) << line;
  const auto& m = server.get().metrics();
  EXPECT_EQ(m.tls_certificate_invalid.load(), 1u);
  EXPECT_NEAR(static_cast<double>(m.tls_certificate_not_after.load()),
              static_cast<double>(WallNow() - 86400), 60.0);
}

// Item 15: a reload refuses a certificate that is expired or not yet valid; the one in use
// stays (a client trusting it still joins), and a valid rotation is accepted and logged.
TEST(ServerCertificateTest, ReloadRefusesCertificatesOutsideTheirValidity) {
  TempDir dir;
  LogLines log;
  const TestCert good = MakeCert(dir.path(), "server");
  const std::string trusted = dir.path() + "/trusted.crt";
  int status = -1;
  RunShell("cp " + good.cert + " " + trusted, status);
  ASSERT_EQ(status, 0);
  server::ServerConfig config = TestServer::Config();
  config.tls_cert_file = good.cert;
  config.tls_key_file = good.key;
  config.log_sink = log.Sink();
  TestServer server(config);
  EXPECT_NE(log.Find("tls_certificate").find("when=start state=valid"), std::string::npos)
      << log.All();
  const auto& m = server.get().metrics();
  for (const auto& [name, from_s, to_s, state] :
       {std::tuple{"expired", -2L * 86400, -86400L, "is expired"},
        std::tuple{"future", 86400L, 2L * 86400, "is not_yet_valid"}}) {
    MakeDatedCert(dir.path(), "server", from_s, to_s);  // over the served files
    EXPECT_FALSE(server.get().ReloadTls()) << name;
    EXPECT_NE(log.All().find(state), std::string::npos) << log.All();
  }
  EXPECT_EQ(m.tls_certificate_invalid.load(), 2u);
  EXPECT_EQ(m.tls_reloads.load(), 0u);
  client::ClientOptions options;
  options.url = "tls://127.0.0.1:" + std::to_string(server.get().tcp_port());
  options.scene = "secure";
  options.connection.ca_file = trusted;
  client::Client c(options);
  ASSERT_TRUE(c.Start().has_value());
  EXPECT_TRUE(c.PollUntil([&] { return c.state_ready() || c.closed(); }, 30s));
  EXPECT_TRUE(c.state_ready()) << "the certificate in use before the refused reloads";
  MakeCert(dir.path(), "server");
  EXPECT_TRUE(server.get().ReloadTls());
  EXPECT_EQ(m.tls_reloads.load(), 1u);
  EXPECT_NE(log.All().find("tls_certificate when=reload state=valid"), std::string::npos)
      << log.All();
}

}  // namespace
}  // namespace scenecrdt::testing
