// SPDX-License-Identifier: Apache-2.0
// Owns percent-encoding (RFC 3986 section 2.1) and the lookup of one key in a query string: the
// one rule the viewer's routes, the WebSocket upgrades (?token=) and Redis URLs share.
//
// Decoding:
// - '%' must be followed by two hex digits (either case); anything else ("%", "%4", "%zz") makes
//   the whole text malformed: nullopt, never a partial value.
// - '+' is a space only in a form query (`Plus::kSpace`, as URLSearchParams writes it); in a URL's
//   user info, path or a Redis URL's options it is itself (`Plus::kLiteral`).
// - A decoded byte may be any byte, NUL included; callers that hand text to C strings reject NUL
//   themselves (cluster/redis_url.cc).
// Query lookup (`QueryParam`):
// - the query (without '?') is cut at '&'; a pair without '=' is its key with an empty value
//   ("a&b=1": a is ""), as URLSearchParams reads it; empty pairs ("&&") are skipped.
// - keys compare byte for byte, undecoded; the first pair with the key wins and later repeats are
//   ignored (callers that must refuse repeats, like Redis URLs, walk the pairs themselves).
// - the value is decoded with `Plus::kSpace`; nullopt when the key is absent or its value is
//   malformed.
// Encoding keeps the unreserved characters (A-Z a-z 0-9 - . _ ~), and '/' where asked, and writes
// every other byte as %XY with upper-case hex; decoding an encoded text gives it back.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace scenecrdt::protocol {

enum class Plus { kLiteral, kSpace };

std::optional<std::string> PercentDecode(std::string_view text, Plus plus = Plus::kLiteral);

std::optional<std::string> QueryParam(std::string_view query, std::string_view key);

enum class Slash { kEncode, kKeep };

void AppendPercentEncoded(std::string_view text, std::string& out, Slash slash = Slash::kEncode);
std::string PercentEncode(std::string_view text, Slash slash = Slash::kEncode);

}  // namespace scenecrdt::protocol
