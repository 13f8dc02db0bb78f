// SPDX-License-Identifier: Apache-2.0
// Owns the Lua scripts the cluster runs with EVAL (each runs atomically in Redis). Every key a
// script touches is passed in KEYS and shares the scene's `{scene}` hash tag (Redis Cluster).
#pragma once

namespace scenecrdt::cluster::internal {

// KEYS: snap, log. ARGV: page size. Returns {snapshot id|nil, snapshot data|nil, first page
// of entries after the snapshot}: the snapshot and the start of its tail, seen at one instant.
// A malformed snapshot id comes back with no entries, for the caller to refuse it.
inline constexpr const char* kLoadFirstPageScript = R"lua(
local snap = redis.call('HMGET', KEYS[1], 'id', 'data')
local from = '-'
if snap[1] then
  if not string.match(snap[1], '^%d+%-%d+$') then return {snap[1], snap[2], {}} end
  from = '(' .. snap[1]
end
return {snap[1], snap[2], redis.call('XRANGE', KEYS[2], from, '+', 'COUNT', ARGV[1])}
)lua";

// KEYS: lease, snap, log. ARGV: lease token, covered id, snapshot data, trim MINID ('' for
// none), node id. Writes the snapshot only while the lease is held and only if it covers more
// than the stored one; then removes the entries below MINID and, when it removed any, appends
// the trim marker naming the last one removed. Returns {trimmed count, XLEN} or {-1, 0} (lease
// lost), {-2, 0} (a snapshot as new already stored), {-3, 0} (stored snapshot id malformed).
inline constexpr const char* kCommitCompactionScript = R"lua(
local function parse(id)
  return string.match(id, '^(%d+)%-(%d+)$')
end
local function less(am, as, bm, bs)
  if #am ~= #bm then return #am < #bm end
  if am ~= bm then return am < bm end
  if #as ~= #bs then return #as < #bs end
  return as < bs
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {-1, 0} end
local current = redis.call('HGET', KEYS[2], 'id')
if current then
  local cm, cs = parse(current)
  local nm, ns = parse(ARGV[2])
  if not cm or not nm then return {-3, 0} end
  if not less(cm, cs, nm, ns) then return {-2, 0} end
end
redis.call('HSET', KEYS[2], 'id', ARGV[2], 'data', ARGV[3], 'by', ARGV[5], 'v', '1')
local trimmed = 0
if ARGV[4] ~= '' then
  local last = redis.call('XREVRANGE', KEYS[3], '(' .. ARGV[4], '-', 'COUNT', 1)
  if #last > 0 then
    trimmed = redis.call('XTRIM', KEYS[3], 'MINID', ARGV[4])
    redis.call('XADD', KEYS[3], '*', 'n', ARGV[5], 't', last[1][1])
  end
end
return {trimmed, redis.call('XLEN', KEYS[3])}
)lua";

// KEYS: log. ARGV: exclusive start ('(' .. cursor), count. Returns {{id, bytes}, ...} for the
// next `count` entries: each ID and about the RESP bytes an XRANGE of it takes (its fields plus
// 16 bytes of framing each; the caller adds the ID's framing), never the fields themselves, so
// the read loop can plan reads within its byte budget (docs/CLUSTER.md "The read loop").
inline constexpr const char* kEntrySizesScript = R"lua(
local r = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])
local out = {}
for i = 1, #r do
  local n = 0
  local f = r[i][2]
  for j = 1, #f do n = n + #f[j] + 16 end
  out[i] = {r[i][1], n}
end
return out
)lua";

// KEYS: lease. ARGV: token, ttl ms. 1 when the lease was ours and is extended, else 0.
inline constexpr const char* kRenewLeaseScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
)lua";

// KEYS: lease. ARGV: token. 1 when the lease was ours and is released, else 0.
inline constexpr const char* kReleaseLeaseScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
)lua";

}  // namespace scenecrdt::cluster::internal
