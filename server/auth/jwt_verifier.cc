// SPDX-License-Identifier: Apache-2.0
// Owns the JWT acceptance rules (docs/AUTH.md): structure, algorithm, signature, time, claims.
// The order matters: bytes are bounded before any decoding, the algorithm comes from the key
// and is only compared with the header (so a token cannot pick HS256 over a public key), and
// claims are parsed only once the signature has verified.
#include "scenecrdt/server/auth/jwt_verifier.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "scenecrdt/server/auth/jwt_base64url.h"
#include "scenecrdt/server/auth/jwt_json.h"

namespace scenecrdt::server {

namespace {

using Json = nlohmann::json;
using std::chrono::seconds;
using std::chrono::sys_seconds;

constexpr int64_t kMaxNumericDate = 253402300799;  // 9999-12-31T23:59:59Z
constexpr seconds kMaxLeeway{600};
constexpr std::size_t kMinTokenLimit = 128;
constexpr std::size_t kMaxTokenLimit = 65536;
constexpr int kMinDepthLimit = 2;
constexpr int kMaxDepthLimit = 64;

Error Refuse(const char* reason) { return MakeError(ErrorCode::kUnauthorized, reason); }

const Json* Member(const Json& object, const char* name) {
  const auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

// A NumericDate (RFC 7519 section 2): a JSON number of seconds since the epoch, possibly
// fractional; negative, non-finite and far-future values are refused. Fractions are rounded
// towards the stricter side by the caller's choice (`round_up`).
std::optional<int64_t> NumericDate(const Json& value, bool round_up) {
  if (const auto* u = value.get_ptr<const Json::number_unsigned_t*>()) {
    if (*u > static_cast<uint64_t>(kMaxNumericDate)) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = value.get_ptr<const Json::number_integer_t*>()) {
    if (*i < 0 || *i > kMaxNumericDate) return std::nullopt;
    return *i;
  }
  if (const auto* f = value.get_ptr<const Json::number_float_t*>()) {
    if (!std::isfinite(*f) || *f < 0 || *f > static_cast<double>(kMaxNumericDate)) {
      return std::nullopt;
    }
    return static_cast<int64_t>(round_up ? std::ceil(*f) : std::floor(*f));
  }
  return std::nullopt;
}

// The subject goes into log lines: printable text only, so a token cannot forge log records.
bool IsLoggableSubject(const std::string& subject) {
  if (subject.empty() || subject.size() > JwtClaims::kMaxSubjectBytes) return false;
  for (const char c : subject) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return false;
  }
  return true;
}

bool ReadScenes(const Json& value, std::vector<std::string>& scenes) {
  if (const auto* text = value.get_ptr<const std::string*>()) {
    // The bare string form is only the wildcard; one scene is spelled ["name"].
    if (*text != "*") return false;
    scenes.push_back(*text);
    return true;
  }
  if (!value.is_array()) return false;
  for (const Json& item : value) {
    const auto* name = item.get_ptr<const std::string*>();
    if (!name || name->empty()) return false;
    scenes.push_back(*name);
  }
  return true;
}

// `entities`: an array of at most kMaxRanges [lo, hi] pairs of entity numbers.
bool ReadEntityRanges(const Json& value, std::vector<std::pair<uint32_t, uint32_t>>& out) {
  if (!value.is_array() || value.size() > JwtClaims::kMaxRanges) return false;
  for (const Json& range : value) {
    if (!range.is_array() || range.size() != 2) return false;
    const auto* lo = range[0].get_ptr<const Json::number_unsigned_t*>();
    const auto* hi = range[1].get_ptr<const Json::number_unsigned_t*>();
    if (!lo || !hi || *lo > *hi || *lo < JwtClaims::kMinRangeNumber ||
        *hi > JwtClaims::kMaxRangeNumber) {
      return false;
    }
    out.emplace_back(static_cast<uint32_t>(*lo), static_cast<uint32_t>(*hi));
  }
  return true;
}

bool AudienceHolds(const Json& aud, const std::string& audience) {
  if (const auto* text = aud.get_ptr<const std::string*>()) return *text == audience;
  if (!aud.is_array()) return false;
  for (const Json& item : aud) {
    const auto* text = item.get_ptr<const std::string*>();
    if (text && *text == audience) return true;
  }
  return false;
}

}  // namespace

bool JwtClaims::Allows(std::string_view scene) const {
  for (const std::string& s : scenes) {
    if (s == "*" || s == scene) return true;
  }
  return false;
}

JwtVerifier::JwtVerifier(std::vector<JwtKey> keys, JwtOptions options)
    : keys_(std::move(keys)), options_(std::move(options)) {}

Result<JwtVerifier> JwtVerifier::Create(std::vector<JwtKey> keys, JwtOptions options) {
  const auto bad = [](const char* why) { return MakeError(ErrorCode::kInvalidArgument, why); };
  if (keys.empty()) return bad("JWT verifier: no key (give --jwt-secret or --jwt-public-key)");
  for (const JwtKey& key : keys) {
    const auto same = std::count_if(keys.begin(), keys.end(), [&](const JwtKey& other) {
      return other.algorithm() == key.algorithm();
    });
    if (static_cast<std::size_t>(same) > kMaxKeysPerAlgorithm) {
      return bad("JWT verifier: more than 4 keys for one algorithm");
    }
  }
  if (options.leeway < seconds{0} || options.leeway > kMaxLeeway) {
    return bad("JWT verifier: leeway must be 0..600 s");
  }
  if (options.max_token_bytes < kMinTokenLimit || options.max_token_bytes > kMaxTokenLimit) {
    return bad("JWT verifier: max token bytes must be 128..65536");
  }
  if (options.max_json_depth < kMinDepthLimit || options.max_json_depth > kMaxDepthLimit) {
    return bad("JWT verifier: max JSON depth must be 2..64");
  }
  return JwtVerifier(std::move(keys), std::move(options));
}

bool JwtVerifier::HasKeyFor(JwtAlgorithm algorithm) const {
  return std::any_of(keys_.begin(), keys_.end(),
                     [&](const JwtKey& key) { return key.algorithm() == algorithm; });
}

bool JwtVerifier::VerifiedByAnyKey(JwtAlgorithm algorithm, std::string_view signing_input,
                                   std::span<const uint8_t> signature) const {
  return std::any_of(keys_.begin(), keys_.end(), [&](const JwtKey& key) {
    return key.algorithm() == algorithm && key.Verify(signing_input, signature);
  });
}

Result<JwtClaims> JwtVerifier::Verify(std::string_view token, sys_seconds now) const {
  namespace reason = auth_reason;
  if (token.size() > options_.max_token_bytes) return Refuse(reason::kTooLarge);

  // Structure: header.payload.signature, nothing more (a JWE has five parts).
  const std::size_t dot1 = token.find('.');
  if (dot1 == std::string_view::npos) return Refuse(reason::kMalformed);
  const std::size_t dot2 = token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return Refuse(reason::kMalformed);
  if (token.find('.', dot2 + 1) != std::string_view::npos) return Refuse(reason::kMalformed);
  const std::string_view signing_input = token.substr(0, dot2);
  auto header_bytes = Base64UrlDecode(token.substr(0, dot1));
  auto payload_bytes = Base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = Base64UrlDecode(token.substr(dot2 + 1));
  if (!header_bytes.has_value() || !payload_bytes.has_value() || !signature.has_value()) {
    return Refuse(reason::kMalformed);
  }

  // Header: the algorithm must be one a configured key was loaded for.
  const std::string_view header_text(reinterpret_cast<const char*>(header_bytes->data()),
                                     header_bytes->size());
  auto header = ParseJwtJson(header_text, options_.max_json_depth);
  if (!header.has_value() || !header->is_object()) return Refuse(reason::kMalformed);
  const Json* alg = Member(*header, "alg");
  if (!alg || !alg->is_string()) return Refuse(reason::kMalformed);
  const auto algorithm = JwtAlgorithmFromHeader(alg->get_ref<const std::string&>());
  if (!algorithm || !HasKeyFor(*algorithm)) return Refuse(reason::kWrongAlgorithm);
  // RFC 7515 section 4.1.11: extensions listed in `crit` must be understood; we know none.
  if (Member(*header, "crit")) return Refuse(reason::kUnsupportedHeader);

  // Key rotation: any key of the algorithm may have signed it (`kid` is not trusted to pick).
  if (!VerifiedByAnyKey(*algorithm, signing_input, *signature)) {
    return Refuse(reason::kBadSignature);
  }

  // Claims, now that they are known to come from the key holder.
  const std::string_view payload_text(reinterpret_cast<const char*>(payload_bytes->data()),
                                      payload_bytes->size());
  auto claims_json = ParseJwtJson(payload_text, options_.max_json_depth);
  if (!claims_json.has_value() || !claims_json->is_object()) return Refuse(reason::kMalformed);
  const Json& c = *claims_json;

  JwtClaims claims;
  const Json* exp = Member(c, "exp");
  if (!exp) return Refuse(reason::kMissingExp);
  const auto exp_s = NumericDate(*exp, /*round_up=*/false);
  if (!exp_s) return Refuse(reason::kBadTime);
  claims.expires_at = sys_seconds{seconds{*exp_s}};
  if (const Json* nbf = Member(c, "nbf")) {
    const auto nbf_s = NumericDate(*nbf, /*round_up=*/true);
    if (!nbf_s) return Refuse(reason::kBadTime);
    claims.not_before = sys_seconds{seconds{*nbf_s}};
  }
  // RFC 7519 4.1.4: valid only while now is before exp; 4.1.5: from nbf on.
  if (now >= claims.expires_at + options_.leeway) return Refuse(reason::kExpired);
  if (claims.not_before && now < *claims.not_before - options_.leeway) {
    return Refuse(reason::kNotYetValid);
  }

  if (!options_.issuer.empty()) {
    const Json* iss = Member(c, "iss");
    if (!iss || !iss->is_string() || iss->get_ref<const std::string&>() != options_.issuer) {
      return Refuse(reason::kWrongIssuer);
    }
  }
  if (!options_.audience.empty()) {
    const Json* aud = Member(c, "aud");
    if (!aud || !AudienceHolds(*aud, options_.audience)) return Refuse(reason::kWrongAudience);
  }

  const Json* sub = Member(c, "sub");
  if (!sub || !sub->is_string()) return Refuse(reason::kBadSubject);
  claims.subject = sub->get_ref<const std::string&>();
  if (!IsLoggableSubject(claims.subject)) return Refuse(reason::kBadSubject);

  const Json* scenes = Member(c, "scenes");
  if (!scenes || !ReadScenes(*scenes, claims.scenes)) return Refuse(reason::kBadScenes);

  const Json* role = Member(c, "role");
  const auto* role_text = role ? role->get_ptr<const std::string*>() : nullptr;
  if (!role_text || (*role_text != "read" && *role_text != "write" && *role_text != "admin")) {
    return Refuse(reason::kBadRole);
  }
  if (const Json* entities = Member(c, "entities")) {
    if (!ReadEntityRanges(*entities, claims.entities)) return Refuse(reason::kBadEntities);
  }
  claims.role = *role_text == "admin"   ? Role::kAdmin
                : *role_text == "write" ? Role::kWrite
                                        : Role::kRead;
  return claims;
}

Result<AccessGrant> JwtVerifier::Check(std::string_view token, std::string_view scene,
                                       sys_seconds now) const {
  Result<JwtClaims> claims = Verify(token, now);
  if (!claims.has_value()) return claims.error();
  if (!claims->Allows(scene)) return Refuse(auth_reason::kMissingGrant);
  std::string principal = claims->subject;
  return AccessGrant{claims->role, std::move(claims->subject), claims->expires_at + options_.leeway,
                     std::move(principal), std::move(claims->entities)};
}

}  // namespace scenecrdt::server
