"""Every Lua script, kept together. Each touches the keys of one conversation or one turn, but
the trial's seat lookup, which reads classes (keys of the ``{trial-bookings}`` hash tag).

Scripts are registered once per client (``register(redis)``) and called through
``redis-py``'s ``Script`` objects, which use EVALSHA and reload on NOSCRIPT.

Every script checks its arguments (``ARG_CHECKS``) before its first write and fails with
``ERR bad argument: ...`` naming the argument: a script that failed halfway would leave its
keys half-changed (a lease taken, an inbox moved) with nobody to finish the job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from shared.contracts import EARLIEST_SENT_AT

EARLIEST_MS = int(EARLIEST_SENT_AT.timestamp() * 1000)

# Argument checks shared by every script: each raises a clear error reply (nothing written).
ARG_CHECKS = """
local function bad_arg(message) error('ERR bad argument: ' .. message, 0) end
local function need_keys(n)
  if #KEYS ~= n then bad_arg('expected ' .. n .. ' keys, got ' .. #KEYS) end
end
local function int_arg(i, name, least)
  local n = tonumber(ARGV[i])
  if n == nil or n ~= math.floor(n) or n == math.huge or n == -math.huge or n < least then
    bad_arg(name .. ' must be an integer >= ' .. least .. ', got ' .. tostring(ARGV[i]))
  end
  return n
end
local function str_arg(i, name)
  if ARGV[i] == nil or ARGV[i] == '' then bad_arg(name .. ' is required') end
  return ARGV[i]
end
local function table_arg(i, name)
  local ok, value = pcall(cjson.decode, ARGV[i] or '')
  if not ok or type(value) ~= 'table' then bad_arg(name .. ' must be a JSON object') end
  return value
end
-- A JSON object stored as it is, never read by the script: checked by its braces, not
-- decoded (a decode of a slice costs more than the rest of its commit).
local function object_arg(i, name)
  local text = ARGV[i]
  if text == nil or string.byte(text, 1) ~= 123 or string.byte(text, -1) ~= 125 then
    bad_arg(name .. ' must be a JSON object')
  end
  return text
end
-- The version `_v` of a slice as stored. Python writes it last (``shared.state.encoded_write``),
-- where it is found without decoding the slice; any other slice is decoded.
local function version_of(text)
  local v = string.match(string.sub(text, -24), '"_v": ?(%d+)}$')
  if v then return tonumber(v) end
  return cjson.decode(text)._v or 0
end
-- Whether the meta slice as stored (`raw`) names `turn` as the conversation's current turn,
-- found without decoding the slice (three commits a turn ask): '"turn_id":"<turn>"' is its
-- member (a quote inside a JSON string is escaped), or a nested object's that would have to
-- hold this turn's id, which no writer but the turn's own start knows.
local function names_turn(raw, turn)
  -- A commit for no turn (an event's: its outbox key names none) names it when no turn does.
  if turn == nil then return cjson.decode(raw).turn_id == nil end
  return string.find(raw, '"turn_id":"' .. turn .. '"', 1, true) ~= nil
    or string.find(raw, '"turn_id": "' .. turn .. '"', 1, true) ~= nil
end
-- Append `entries` to a journal list: trimmed to its newest `max` entries only when longer,
-- and given `ttl` only when this append created it (a turn's start and every inbound message
-- keep an existing conversation's TTL fresh). One command per append, not three.
local function push_list(key, entries, max, ttl)
  if #entries == 0 then return end
  local length = redis.call('RPUSH', key, unpack(entries))
  if length > tonumber(max) then redis.call('LTRIM', key, -tonumber(max), -1) end
  if length == #entries then redis.call('EXPIRE', key, ttl) end
end
-- Whether the TTLs of a conversation's keys are due to be set again at `now` (wall-clock ms),
-- by the meta slice as read (nil when absent; ``ttl_set_ms``: when they were last set). They
-- count from the person's last message, set again at most once a period (a day, or a
-- hundredth of `ttl_s` when that is shorter): a conversation is forgotten between a period
-- before `ttl_s` and `ttl_s` after its last message, never later, and most messages of a
-- conversation set no TTL at all.
local function ttl_due(meta, now, ttl_s)
  local set = meta and meta.ttl_set_ms
  if not set then return true end
  return now < set or now - set >= math.min(86400000, tonumber(ttl_s) * 10)
end
-- Appends `field` = `value` to the stream `stream`, trimmed exactly to `maxlen`, and returns
-- its id. The stream gets `ttl` when `refresh` says so, and whenever this append creates it:
-- it is never left without one.
local function append_entry(stream, field, value, maxlen, ttl, refresh)
  local id = false
  if not refresh then
    id = redis.call('XADD', stream, 'NOMKSTREAM', 'MAXLEN', maxlen, '*', field, value)
  end
  if id then return id end
  id = redis.call('XADD', stream, 'MAXLEN', maxlen, '*', field, value)
  redis.call('EXPIRE', stream, ttl)
  return id
end
-- The same for ARGV[first..last].
local function push_journal(key, first, last, max, ttl)
  if first > last then return end
  push_list(key, {unpack(ARGV, first, last)}, max, ttl)
end
"""

# The gateway changes fields of the meta slice it owns (e.g. the handoff owner).
# KEYS: state. ARGV: patch_json, only_if_field, only_if_value ('' = unconditional), state_ttl_s.
# A patch that creates the state hash (an erased or expired conversation) gives it the state's
# TTL, as COMMIT does, so it cannot outlive the conversation.
# Returns the new meta JSON, or false when the condition did not hold.
META_PATCH = (
    ARG_CHECKS
    + """
need_keys(1)
local patch = table_arg(1, 'patch_json')
if ARGV[2] == nil or ARGV[3] == nil then bad_arg('only_if_field and only_if_value are required') end
local ttl = int_arg(4, 'state_ttl_s', 1)
local existed = redis.call('EXISTS', KEYS[1])
local raw = redis.call('HGET', KEYS[1], 'meta')
local meta = {}
if raw then meta = cjson.decode(raw) end
if ARGV[2] ~= '' and tostring(meta[ARGV[2]] or '') ~= ARGV[3] then return false end
for k, v in pairs(patch) do meta[k] = v end
meta._v = (meta._v or 0) + 1
local encoded = cjson.encode(meta)
redis.call('HSET', KEYS[1], 'meta', encoded)
if existed == 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return encoded
"""
)

# Starting a turn: take the lease, move waiting messages in flight, bump the turn sequence. The
# messages in flight are a field of the state hash (``inflight``: a JSON array of entries, no
# slice) until the turn's release: written with the meta slice, and read with it or with the
# whole state, they cost a start no command of their own. Messages left in flight by a turn
# whose lease expired are taken again (recovery), unless that turn's reply was delivered
# (TRY_START).
# Everything is read and computed before the first write. Entries are "<epoch ms>|<json>"; only
# a stamp from EARLIEST_MS to max_ts moves the turn clock (``last_turn_ms``). A malformed entry
# (only a writer that bypassed INGEST leaves one) is handed out with the rest: the gateway
# dead-letters it, so it cannot stop its conversation.
# Returns {'busy'} | {'empty', answered} | {'started', seq, previous_turn_ms, answered,
# n, state hash as n flat field/value items (without ``inflight``), entry...} (``answered``:
# see TRY_START; the state as the turn starts travels with the turn, so its first handlers need
# not read it again).
# A caller that took the lease itself passes the state as it read it (``hash``, an HGETALL
# answer from before the start's writes): the start then neither takes the lease nor reads the
# state again.
_START_TURN = (
    ARG_CHECKS
    + """
local function delivered(sent_prefix, turn_id)
  if redis.call('EXISTS', sent_prefix .. turn_id .. ':all') == 1 then return true end
  local first = redis.call('GET', sent_prefix .. turn_id .. ':0')
  return first ~= false and string.sub(first, 1, 5) == 'sent:'
end

-- The value of `field` in a flat HGETALL answer (nil when absent).
local function get_field(flat, field)
  for i = 1, #flat, 2 do
    if flat[i] == field then return flat[i + 1] end
  end
  return nil
end

-- What waits in the inbox: nothing to read when the meta slice as read says a start took it
-- all and nothing was queued since (``inbox_empty``: set by a start, cleared by INGEST as it
-- queues a message); `meta` may be nil (not read).
local function waiting(inbox, meta)
  if meta and meta.inbox_empty then return {} end
  return redis.call('LRANGE', inbox, 0, -1)
end

-- The messages in flight as stored in the state hash (`raw`: the field as read, or nil).
local function in_flight(raw)
  if not raw then return {} end
  return cjson.decode(raw)
end

-- A flat HGETALL answer without the messages in flight (they travel as the turn's entries).
local function slices_of(flat)
  local out = {}
  for i = 1, #flat, 2 do
    if flat[i] ~= 'inflight' then
      out[#out + 1] = flat[i]
      out[#out + 1] = flat[i + 1]
    end
  end
  return out
end

-- Sets `field` to `value` in a flat HGETALL answer (appended when absent).
local function set_field(flat, field, value)
  for i = 1, #flat, 2 do
    if flat[i] == field then
      flat[i + 1] = value
      return
    end
  end
  flat[#flat + 1] = field
  flat[#flat + 1] = value
end

local function start_with(inbox, lease, state, fresh, msgs, turn_id, ttl, max_ts, sent_prefix,
                          meta, in_inbox, hash)
  if #fresh + #msgs == 0 then return {'empty', ''} end
  if meta == nil then
    local raw = redis.call('HGET', state, 'meta')
    meta = {}
    if raw then meta = cjson.decode(raw) end
  end
  local answered = ''
  if sent_prefix and #msgs > 0 and meta.turn_id and delivered(sent_prefix, meta.turn_id) then
    answered = cjson.encode({meta.turn_id, msgs})
    msgs = {}
    if #fresh == 0 then
      redis.call('HDEL', state, 'inflight')
      return {'empty', answered}
    end
  end
  for _, m in ipairs(fresh) do msgs[#msgs + 1] = m end
  local prev = meta.last_turn_ms
  local latest = 0
  for _, m in ipairs(msgs) do
    local t = tonumber(string.match(m, '^(%d+)|'))
    if t and t >= EARLIEST_MS and t <= max_ts and t > latest then latest = t end
  end
  if in_inbox > 0 then redis.call('DEL', inbox) end
  if hash == nil then redis.call('SET', lease, turn_id, 'PX', ttl) end
  if latest > 0 and (prev == nil or latest > prev) then meta.last_turn_ms = latest end
  meta.turn_seq = (meta.turn_seq or 0) + 1
  meta.turn_id = turn_id
  -- The start took whatever waited (``waiting``).
  meta.inbox_empty = true
  meta._v = (meta._v or 0) + 1
  local encoded = cjson.encode(meta)
  redis.call('HSET', state, 'meta', encoded, 'inflight', cjson.encode(msgs))
  if hash == nil then
    hash = slices_of(redis.call('HGETALL', state))
  else
    hash = slices_of(hash)
    set_field(hash, 'meta', encoded)
  end
  local out = {'started', tostring(meta.turn_seq), tostring(prev or ''), answered,
               tostring(#hash)}
  for _, v in ipairs(hash) do out[#out + 1] = v end
  for _, m in ipairs(msgs) do out[#out + 1] = m end
  return out
end
local function start_turn(inbox, lease, state, turn_id, ttl, max_ts, sent_prefix)
  if redis.call('EXISTS', lease) == 1 then return {'busy'} end
  local fresh = redis.call('LRANGE', inbox, 0, -1)
  local read = redis.call('HMGET', state, 'meta', 'inflight')
  local meta = {}
  if read[1] then meta = cjson.decode(read[1]) end
  return start_with(inbox, lease, state, fresh, in_flight(read[2]), turn_id, ttl, max_ts,
                    sent_prefix, meta, #fresh)
end
""".replace("EARLIEST_MS", str(EARLIEST_MS))
)

# Message ingestion: dedupe claim, append to the inbox, update the meta slice, add the message
# to the conversation's history. While a human owns the conversation the message is recorded
# (meta, history) but not queued for the bot. A queued message sets the burst hold for hold_ms
# (a fragment), clears it (0) or leaves it ('').
# With the start's keys and arguments (a message that calls for no quiet window), a queued
# message also starts its turn at once if none is in flight, as TRY_START would: one round trip
# instead of two.
# The state's, the history's and the reply stream's TTLs are set when ``ttl_due`` (now_ms: the
# gateway's wall clock), and the meta slice records when (``ttl_set_ms``); a key the script
# creates (the history, the inbox) gets its TTL at once.
# On one Redis a message that may start its turn also scores the conversation's pending start
# by the lease (the sweeper's way back to a turn whose process died before publishing it): in
# the script, no release can run between the start and the score and take the score away.
# KEYS: dedupe, inbox, state, history, burst_hold, replies (the http channel's reply stream),
#       then to start: lease, sent_prefix, and on one Redis pending_starts.
# ARGV: entry, dedupe_ttl_s, meta_patch_json, ts_ms, state_ttl_s, history_json, history_kept,
#       hold_ms, now_ms, replies_ttl_s, then to start: turn_id, lease_ttl_ms, max_ts_ms, and
#       with pending_starts the conversation's member there.
# meta_patch_json = {"always": {...}, "latest": {...}, "first": {...}}
# Returns {0} duplicate | {1} queued | {2} held for the human owner; a start adds TRY_START's
# answer: {1, 'busy'} | {1, 'started', seq, ...}.
INGEST = (
    _START_TURN
    + """
if #KEYS < 6 or #KEYS == 7 or #KEYS > 9 then
  bad_arg('expected 6, 8 or 9 keys, got ' .. #KEYS)
end
local entry = str_arg(1, 'entry')
int_arg(2, 'dedupe_ttl_s', 1)
local patch = table_arg(3, 'meta_patch_json')
for _, part in ipairs({'always', 'latest', 'first'}) do
  if type(patch[part]) ~= 'table' then bad_arg('meta_patch_json.' .. part .. ' not an object') end
end
local ts = int_arg(4, 'ts_ms', 0)
int_arg(5, 'state_ttl_s', 1)
str_arg(6, 'history_json')
int_arg(7, 'history_kept', 1)
if ARGV[8] == nil then bad_arg('hold_ms is required') end
if ARGV[8] ~= '' then int_arg(8, 'hold_ms', 0) end
local now = int_arg(9, 'now_ms', 0)
int_arg(10, 'replies_ttl_s', 1)
if string.match(entry, '^(%d+)|') ~= ARGV[4] then bad_arg('entry must start with ts_ms and |') end
local starts = #KEYS >= 8
local max_ts = 0
if starts then
  str_arg(11, 'turn_id')
  local lease_ttl = int_arg(12, 'lease_ttl_ms', 1)
  max_ts = int_arg(13, 'max_ts_ms', 0)
  if #KEYS == 9 then redis.call('ZADD', KEYS[9], now + lease_ttl, str_arg(14, 'pending')) end
end
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) then
  -- A redelivery restarts the dedupe window. It is also a write, so a WAIT that follows on
  -- this connection waits until the replicas hold everything up to here, the first delivery
  -- included (shared/durability.py).
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return {0}
end
-- A message that may start its turn reads the whole state, which the turn then carries; any
-- other reads the meta slice alone.
local hash, raw = nil, nil
if starts then
  hash = redis.call('HGETALL', KEYS[3])
  raw = get_field(hash, 'meta')
else
  raw = redis.call('HGET', KEYS[3], 'meta')
end
local meta = {}
if raw then meta = cjson.decode(raw) end
local queued = 1
if meta.handoff == 'human' then queued = 2 end
if meta.first_message_ms == nil then
  meta.first_message_ms = ts
  for k, v in pairs(patch.first) do meta[k] = v end
end
for k, v in pairs(patch.always) do meta[k] = v end
if (meta.last_message_ms or 0) <= ts then
  meta.last_message_ms = ts
  for k, v in pairs(patch.latest) do meta[k] = v end
end
local refresh = ttl_due(meta, now, ARGV[5])
if refresh then meta.ttl_set_ms = now end
meta._v = (meta._v or 0) + 1
append_entry(KEYS[4], 'm', ARGV[6], ARGV[7], ARGV[5], refresh)
if refresh then redis.call('EXPIRE', KEYS[6], ARGV[10]) end
if queued == 1 and ARGV[8] ~= '' then
  if tonumber(ARGV[8]) > 0 then
    redis.call('SET', KEYS[5], '1', 'PX', ARGV[8])
  else
    redis.call('DEL', KEYS[5])
  end
end
-- A turn this message starts takes it straight in flight, with whatever waited in the inbox,
-- and writes the meta slice once: the inbox is not written only to be emptied.
local out = {queued}
if queued == 1 and starts then
  -- Taking the lease is the check that no turn is in flight.
  if not redis.call('SET', KEYS[7], ARGV[11], 'NX', 'PX', ARGV[12]) then
    out[2] = 'busy'
  else
    local fresh = waiting(KEYS[2], meta)
    local waited = #fresh
    fresh[waited + 1] = entry
    local msgs = in_flight(get_field(hash, 'inflight'))
    for _, v in ipairs(start_with(KEYS[2], KEYS[7], KEYS[3], fresh, msgs, ARGV[11], ARGV[12],
                                  max_ts, KEYS[8], meta, waited, hash)) do
      out[#out + 1] = v
    end
    if refresh then redis.call('EXPIRE', KEYS[3], ARGV[5]) end
    return out
  end
end
if queued == 1 then
  if redis.call('RPUSH', KEYS[2], entry) == 1 then redis.call('EXPIRE', KEYS[2], ARGV[5]) end
  meta.inbox_empty = nil
end
redis.call('HSET', KEYS[3], 'meta', cjson.encode(meta))
if refresh then redis.call('EXPIRE', KEYS[3], ARGV[5]) end
return out
"""
)

# Unusable entries taken out of the messages in flight (the gateway dead-letters them).
# KEYS: state. ARGV: the entries. Returns how many entries stay in flight.
DROP_IN_FLIGHT = (
    _START_TURN
    + """
need_keys(1)
local dropped = {}
for i = 1, #ARGV do dropped[ARGV[i]] = true end
local kept = {}
for _, m in ipairs(in_flight(redis.call('HGET', KEYS[1], 'inflight'))) do
  if not dropped[m] then kept[#kept + 1] = m end
end
if #kept == 0 then
  redis.call('HDEL', KEYS[1], 'inflight')
else
  redis.call('HSET', KEYS[1], 'inflight', cjson.encode(kept))
end
return #kept
"""
)

# Starting a turn when none is in flight. Messages still in flight belong to a turn whose lease
# expired; if that turn's reply was delivered (its delivery claim, ``Keys.sent``: the whole
# reply, or a first WhatsApp bubble recorded ``sent:<wamid>``), only its release was lost (the
# gateway died between the two, or a failover lost the write): they are dropped instead of
# answered again, and reported as ``[turn_id, entries]`` (JSON) in the answer's second (empty)
# or fourth (started) element.
# KEYS: inbox, lease, state, sent_prefix (``Keys.sent_prefix``: the conversation's delivery
# claims, read as sent_prefix .. turn_id .. ':all' / ':0', in the same slot).
# ARGV: turn_id, lease_ttl_ms, max_ts_ms.
TRY_START = (
    _START_TURN
    + """
need_keys(4)
str_arg(1, 'turn_id')
int_arg(2, 'lease_ttl_ms', 1)
local max_ts = int_arg(3, 'max_ts_ms', 0)
return start_turn(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], max_ts, KEYS[4])
"""
)

# Releasing a delivered turn (compare-and-delete on the turn id), then starting the next one
# when messages waited, unless the latest of them is a fragment still within its quiet window
# (the burst hold): the gateway's timer or sweeper starts that turn when the window ends. The
# turn's last journal entries (its reply's delivery) are appended first, whoever holds the lease.
# On one Redis it also acknowledges the reply's delivery to the gateway, whatever it finds (the
# delivery ends with the release), and takes the conversation off the pending starts when it
# finds nothing to start.
# KEYS: inbox, lease, state, burst_hold, journal, then the delivery's stream when the script
#       acknowledges it, then the pending starts when it removes the conversation there.
# ARGV: turn_id, next_turn_id, lease_ttl_ms, max_ts_ms, journal_max, state_ttl_s,
#       ack_group ('' for none), ack_id, pending_member ('' for none), then journal entries.
_RELEASE_TURN = (
    _START_TURN
    + """
-- The checks of RELEASE's keys and first nine arguments, with `more` keys after its own;
-- returns whether it acknowledges, whether it removes the pending start, its key count and
-- max_ts.
local function release_args(more)
  if #KEYS < 5 + more or #KEYS > 7 + more then
    bad_arg('expected ' .. (5 + more) .. ' to ' .. (7 + more) .. ' keys, got ' .. #KEYS)
  end
  str_arg(1, 'turn_id')
  str_arg(2, 'next_turn_id')
  int_arg(3, 'lease_ttl_ms', 1)
  local max_ts = int_arg(4, 'max_ts_ms', 0)
  int_arg(5, 'journal_max', 1)
  int_arg(6, 'state_ttl_s', 1)
  if ARGV[7] == nil then bad_arg('ack_group is missing') end
  local acks = ARGV[7] ~= ''
  if acks then str_arg(8, 'ack_id') end
  if ARGV[9] == nil then bad_arg('pending_member is missing') end
  local pending = ARGV[9] ~= ''
  local n_keys = 5
  if acks then n_keys = n_keys + 1 end
  if pending then n_keys = n_keys + 1 end
  need_keys(n_keys + more)
  return acks, pending, n_keys, max_ts
end
-- Append `entries`, then release the lease if this turn holds it (`holder`: the lease as
-- already read, or nil to read it) and start the next turn; then the pending start and the
-- acknowledgement, last, so a command that failed above leaves the delivery pending. `meta`:
-- the meta slice as already read, or nil (``waiting`` and the next turn's start use it).
local function release_turn(entries, holder, acks, pending, n_keys, max_ts, meta)
  push_list(KEYS[5], entries, ARGV[5], ARGV[6])
  local function release()
    if holder == nil then holder = redis.call('GET', KEYS[2]) end
    if holder ~= ARGV[1] then return {'not_owner'} end
    redis.call('DEL', KEYS[2])
    -- The lease is gone now: only the inbox can hold a next turn, whose start puts its own
    -- messages in flight; with none, the messages in flight go.
    local fresh = waiting(KEYS[1], meta)
    local result = {'held'}
    if #fresh == 0 or redis.call('EXISTS', KEYS[4]) == 0 then
      result = start_with(KEYS[1], KEYS[2], KEYS[3], fresh, {}, ARGV[2], ARGV[3], max_ts, nil,
                          meta, #fresh)
    end
    if result[1] ~= 'started' then redis.call('HDEL', KEYS[3], 'inflight') end
    return result
  end
  local result = release()
  if pending and result[1] == 'empty' then redis.call('ZREM', KEYS[n_keys], ARGV[9]) end
  if acks then redis.call('XACK', KEYS[6], ARGV[7], ARGV[8]) end
  return result
end
"""
)

RELEASE = (
    _RELEASE_TURN
    + """
local acks, pending, n_keys, max_ts = release_args(0)
return release_turn({unpack(ARGV, 10, #ARGV)}, nil, acks, pending, n_keys, max_ts)
"""
)

# Read on write (``shared.bus``): after an XADD to ``stream`` (its id ``id``), read one entry
# for each (group, consumer) pair of ``readers`` as that group's reader would, and add
# {stream, group, entry id, n, ''} to ``taken`` when it is the entry just added by item ``n``
# (the caller knows its data), or {stream, group, entry id, 0, hex data} for an older entry
# the group had not read yet (FastStream's binary format is not text). Blocked readers are
# served after the script, so the entry goes to the takers, never to them.
_TAKE = """
local function take(stream, id, readers, n, taken)
  for t = 1, #readers, 2 do
    local read = redis.call('XREADGROUP', 'GROUP', readers[t], readers[t + 1], 'COUNT', 1,
                            'STREAMS', stream, '>')
    if read then
      local entry = read[1][2][1]
      if entry[1] == id then
        taken[#taken + 1] = {stream, readers[t], id, n, ''}
      else
        local data = ''
        for f = 1, #entry[2], 2 do
          if entry[2][f] == '__data__' then data = entry[2][f + 1] end
        end
        taken[#taken + 1] = {stream, readers[t], entry[1], 0,
          (string.gsub(data, '.', function(c) return string.format('%02x', string.byte(c)) end))}
      end
    end
  end
end
-- A reply as one flat list: Redis 6.2 writes each table nested in a script's reply with a
-- write of its own (a commit's answer took three or four), Redis 7 gathers them (writev).
-- `head` first, then each entry's fields (what `take` gathered: five each).
local function flat(head, taken)
  for _, entry in ipairs(taken) do
    for f = 1, 5 do head[#head + 1] = entry[f] end
  end
  return head
end
local function takers_arg(at)
  local n = int_arg(at, 'n_takes', 0)
  local readers = {}
  for t = 1, n * 2 do readers[t] = str_arg(at + t, 'taking group or consumer') end
  return readers, at + 1 + n * 2
end
"""

# Publish one message and read it on write for this process's groups (``shared.bus``).
# KEYS: the stream. ARGV: maxlen, the encoded message, n_takes, (group, consumer) * n_takes.
# Returns what it took, as COMMIT does (``take``'s entries, flat).
PUBLISH = (
    ARG_CHECKS
    + _TAKE
    + """
need_keys(1)
local maxlen = int_arg(1, 'maxlen', 1)
local message = str_arg(2, 'message')
local readers = takers_arg(3)
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxlen, '*', '__data__', message)
local taken = {}
take(KEYS[1], id, readers, 1, taken)
return flat({}, taken)
"""
)

# Merger scripts share these helpers. A completed turn whose reply was not marked published
# within `republish_after_ms` is handed out again ('republish'): its publisher presumably died
# between completing and publishing. Within that grace period nobody republishes, so the normal
# path publishes exactly once even with several replicas.
_MERGE_COMMON = (
    ARG_CHECKS
    + """
local function everything(key, status)
  local out = {status}
  for _, v in ipairs(redis.call('HGETALL', key)) do out[#out + 1] = v end
  return out
end
local function finish(key, status, stamp)
  redis.call('HSET', key, '_done', status, '_done_at', stamp)
  return everything(key, status)
end
-- The sources a turn's plan expects parts from (``TurnPlan.expected``, a list of names). Read
-- off the plan's text when "expected" is a member of its top level (no object opened before
-- it; the plan's journal, which can be long, comes after it), else by decoding the plan.
local function expected_of(plan)
  local list = string.match(plan, '^{[^{]-"expected": ?(%b[])')
  if not list then return cjson.decode(plan).expected end
  local names = {}
  for name in string.gmatch(list, '"([^"]*)"') do names[#names + 1] = name end
  return names
end
local function settled(key, stamp, grace)
  if redis.call('HEXISTS', key, '_published') == 1 then return {'done'} end
  local at = tonumber(redis.call('HGET', key, '_done_at') or '0')
  if tonumber(stamp) - at < tonumber(grace) then return {'wait'} end
  redis.call('HSET', key, '_done_at', stamp)
  return everything(key, 'republish')
end
-- Record one input of a turn in its merge hash; report its completion exactly once. A caller
-- that publishes the completed turn in the same script (``publishes``) has it marked published
-- with its completion, in one write.
-- Returns {'done'} | {'dup'} | {'wait'} | {'complete' | 'republish', field, value, ...}, and
-- whether the input came late: added after its turn was done, so in no reply.
local function merge_input(key, field, value, ttl, stamp, grace, publishes)
  local added = redis.call('HSETNX', key, field, value)
  -- One read of the hash for every check below (a command each would be 4-6 per input).
  local flat = redis.call('HGETALL', key)
  -- The TTL counts from the hash's creation (the gateway opens it as the turn starts, with
  -- the TTL): only a hash this input created gets it here.
  if added == 1 and #flat == 2 then redis.call('EXPIRE', key, ttl) end
  local h = {}
  for i = 1, #flat, 2 do h[flat[i]] = flat[i + 1] end
  if h['_done'] then return settled(key, stamp, grace), added == 1 end
  if added == 0 then return {'dup'} end
  if (not h['plan']) or (not h['turn']) then return {'wait'} end
  for _, source in ipairs(expected_of(h['plan'])) do
    if not h['part:' .. source] then return {'wait'} end
  end
  if publishes then
    redis.call('HSET', key, '_done', 'complete', '_done_at', stamp, '_published', '1')
  else
    redis.call('HSET', key, '_done', 'complete', '_done_at', stamp)
  end
  local out = {'complete'}
  for _, v in ipairs(flat) do out[#out + 1] = v end
  out[#out + 1] = '_done'
  out[#out + 1] = 'complete'
  out[#out + 1] = '_done_at'
  out[#out + 1] = stamp
  return out
end
"""
)

# Merger: record one input of a turn; report completion exactly once across replicas.
# KEYS: merge hash, then the delivery's stream when the script acknowledges it.
# ARGV: field, json, ttl_s, now_ms, republish_after_ms, then ack_group and ack_id with that
#       stream: acknowledged when the input leaves the merger nothing more to do (one Redis).
# Returns {'done'} | {'dup'} | {'wait'} | {'complete' | 'republish', field, value, ...}.
MERGE_ADD = (
    _MERGE_COMMON
    + """
if #KEYS ~= 1 and #KEYS ~= 2 then bad_arg('expected 1 or 2 keys, got ' .. #KEYS) end
str_arg(1, 'field')
str_arg(2, 'json')
int_arg(3, 'ttl_s', 1)
int_arg(4, 'now_ms', 0)
int_arg(5, 'republish_after_ms', 0)
if #KEYS == 2 then
  str_arg(6, 'ack_group')
  str_arg(7, 'ack_id')
end
local result = merge_input(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if #KEYS == 2 and result[1] ~= 'complete' and result[1] ~= 'republish' then
  redis.call('XACK', KEYS[2], ARGV[6], ARGV[7])
end
return result
"""
)

# A service's effectively-once commit for one turn: compare-and-set of its state slices, its
# outbox (what it will publish, replayed on redelivery) and its journal entries, atomically.
# On one Redis (not a cluster, where the streams and merge hashes live in other slots) the same
# script also publishes the outbox and acknowledges the delivery the handler ran for: its
# publishes happen with the commit or not at all, and the acknowledgement comes last, so a
# failing script leaves the delivery pending and it is redelivered (and replays the stored
# outbox). A message for the merger is added to its turn's merge hash here (``merge_input``)
# instead of being delivered: only the input that completes the turn sends it on, as a
# ``MergeReady`` straight to the outbound stream (the gateway composes the reply from it), and
# marks the turn published and takes it off the merge deadlines in the same step: a complete
# turn needs no merger hop. A funnel step ('f', ``shared.funnel.Tally``) is counted here
# instead of being delivered to the scheduler: once per conversation, by its marker.
# KEYS: state, outbox, journal, then per item: a stream ('x'), a merge hash, the outbound
#       stream and the merge deadlines ('m') or the funnel's seen hash and day hash ('f'), then
#       the acknowledged delivery's stream when there is one.
# ARGV: n_writes, then (field, expected_v, json) * n_writes, outbox_json, outbox_ttl_s,
#       journal_max, state_ttl_s, ack_group ('' for none), ack_id, n_items, maxlen,
#       merge_ttl_s, now_ms, republish_after_ms, then the items ('x', encoded message,
#       takers | 'm', field, json, envelope, MergeReady JSON, deadline member, takers | 'f',
#       marker, at, step, source, seen_ttl_s, day_ttl_s), then journal entries; takers are
#       n_takes, (group, consumer) * n_takes. A MergeReady goes out as the
#       envelope (FastStream's encoding of an empty body: its format puts the body last)
#       followed by the MergeReady JSON with the merge hash as its ``fields``.
# An item's takers are consumer groups of the committing process (``shared.bus``, read on
# write): right after its XADD the script reads one entry for each (``take``), so the process
# runs it without a read of its own.
# A merge input may carry its commit's journal entries (its JSON's ``journal``, with no journal
# entries in ARGV): whoever ends the turn writes them with the reply's (one append per turn, not
# one per handler), unless the input comes once the turn is done, when they are written here.
# An empty outbox_json stores no outbox: allowed only to a commit that acknowledges its delivery
# and adds a merge input, i.e. publishes everything it decided in this script. Its first merge
# input (its field in the turn's merge hash, which has an outbox's TTL) then tells
# that it was committed, as the outbox would: the caller says so only when its snapshot cannot
# already hold such a commit (``shared.service.handle_once``).
# Returns {1, n_counted, counted step..., taken...} committed (``take``'s entries, five fields
# each, flat: ``flat``; a notice's with its MergeReady JSON, added after its envelope) |
# {-1} already committed, its outbox stored |
# {-2} already committed, published with its commit (no outbox) | {0, field} version
# conflict; only {1} publishes, counts, takes or acknowledges.
COMMIT = (
    _MERGE_COMMON
    + _TAKE
    + """
local n = int_arg(1, 'n_writes', 0)
if #ARGV < 12 + n * 3 then bad_arg('expected at least ' .. (12 + n * 3) .. ' arguments') end
for i = 0, n - 1 do
  str_arg(2 + i * 3, 'field')
  int_arg(3 + i * 3, 'expected_v', 0)
  object_arg(4 + i * 3, 'slice json')
end
local base = 2 + n * 3
if ARGV[base] == nil then bad_arg('outbox_json is missing') end
int_arg(base + 1, 'outbox_ttl_s', 1)
int_arg(base + 2, 'journal_max', 1)
int_arg(base + 3, 'state_ttl_s', 1)
local acks = ARGV[base + 4] ~= ''
if acks then str_arg(base + 5, 'ack_id') end
local n_items = int_arg(base + 6, 'n_items', 0)
local maxlen = int_arg(base + 7, 'maxlen', 1)
local merge_ttl = int_arg(base + 8, 'merge_ttl_s', 1)
local stamp = int_arg(base + 9, 'now_ms', 0)
local grace = int_arg(base + 10, 'republish_after_ms', 0)
local items, at, key = {}, base + 11, 4
for i = 1, n_items do
  local kind = ARGV[at]
  if kind == 'x' then
    local message = str_arg(at + 1, 'message')
    local readers, next_at = takers_arg(at + 2)
    items[i] = {kind, KEYS[key], message, readers}
    at, key = next_at, key + 1
  elseif kind == 'm' then
    items[i] = {kind, KEYS[key], KEYS[key + 1], str_arg(at + 1, 'merge field'),
                str_arg(at + 2, 'merge json'), str_arg(at + 3, 'ready envelope'),
                table_arg(at + 4, 'ready json'), KEYS[key + 2], str_arg(at + 5, 'deadline member')}
    local readers, next_at = takers_arg(at + 6)
    items[i][10] = readers
    at, key = next_at, key + 3
  elseif kind == 'f' then
    items[i] = {kind, KEYS[key], KEYS[key + 1], str_arg(at + 1, 'funnel marker'),
                str_arg(at + 2, 'funnel at'), str_arg(at + 3, 'funnel step'),
                str_arg(at + 4, 'funnel source'), int_arg(at + 5, 'seen_ttl_s', 1),
                int_arg(at + 6, 'day_ttl_s', 1)}
    at, key = at + 7, key + 2
  else
    bad_arg('item ' .. i .. ' must be x, m or f, got ' .. tostring(kind))
  end
end
if acks then key = key + 1 end
need_keys(key - 1)
-- No outbox (''): the commit publishes everything itself and its first merge input marks it.
local marker = nil
if ARGV[base] == '' then
  for _, item in ipairs(items) do
    if item[1] == 'm' then
      marker = item
      break
    end
  end
  if not (acks and marker) then
    bad_arg('only a commit that acknowledges and adds a merge input may store no outbox')
  end
end
local function committed_before()
  if redis.call('EXISTS', KEYS[2]) == 1 then return {-1} end
  if marker and redis.call('HEXISTS', marker[2], marker[4]) == 1 then return {-2} end
  return nil
end
local state_ttl = ARGV[base + 3]
if n == 0 then
  local before = committed_before()
  if before then return before end
end
if n > 0 then
  local fields = {}
  for i = 0, n - 1 do fields[i + 1] = ARGV[2 + i * 3] end
  fields[n + 1] = 'meta'
  local current = redis.call('HMGET', KEYS[1], unpack(fields))
  local stale = nil
  for i = 0, n - 1 do
    local v = 0
    if current[i + 1] then v = version_of(current[i + 1]) end
    if v ~= tonumber(ARGV[3 + i * 3]) then
      stale = fields[i + 1]
      break
    end
  end
  -- A commit bumps the versions of the slices it writes, so a turn committed before fails the
  -- check above; its outbox (``Keys.outbox``: "...out:<turn id>:<service>", or the empty one
  -- an erase stored) is looked for only then, or when the conversation's current turn is
  -- another (an erase deleted the state it checked, and a new turn may have begun since).
  local turn = string.match(KEYS[2], ':out:([^:]+):[^:]*$')
  if stale or not current[n + 1] or not names_turn(current[n + 1], turn) then
    local before = committed_before()
    if before then return before end
    if stale then return {0, stale} end
  end
  local writes = {}
  for i = 0, n - 1 do
    writes[#writes + 1] = ARGV[2 + i * 3]
    writes[#writes + 1] = ARGV[4 + i * 3]
  end
  redis.call('HSET', KEYS[1], unpack(writes))
  -- Every inbound message refreshes the TTL of a state that has its meta slice (INGEST); only
  -- a state without one (erased while the turn was in flight, or never ingested) gets it here.
  if not current[n + 1] then redis.call('EXPIRE', KEYS[1], state_ttl) end
end
if not marker then redis.call('SET', KEYS[2], ARGV[base], 'EX', ARGV[base + 1]) end
push_journal(KEYS[3], at, #ARGV, ARGV[base + 2], state_ttl)
local counted, taken = {}, {}
-- A key's TTL set once per commit, however many funnel steps it counts.
local expired = {}
local function expire_once(key, ttl)
  if not expired[key] then
    redis.call('EXPIRE', key, ttl)
    expired[key] = true
  end
end
for i, item in ipairs(items) do
  if item[1] == 'x' then
    local id = redis.call('XADD', item[2], 'MAXLEN', '~', maxlen, '*', '__data__', item[3])
    take(item[2], id, item[4], i, taken)
  elseif item[1] == 'f' then
    if redis.call('HSETNX', item[2], item[4], item[5]) == 1 then
      expire_once(item[2], item[8])
      redis.call('HINCRBY', item[3], item[6], 1)
      redis.call('HINCRBY', item[3], item[6] .. '|' .. item[7], 1)
      expire_once(item[3], item[9])
      counted[#counted + 1] = item[6]
    end
  else
    local result, late = merge_input(item[2], item[4], item[5], merge_ttl, stamp, grace, true)
    -- The journal an input carries is written with its turn's reply; a late one's, now.
    if late then
      push_list(KEYS[3], cjson.decode(item[5]).journal or {}, ARGV[base + 2], state_ttl)
    end
    if result[1] == 'complete' or result[1] == 'republish' then
      local ready, fields = item[7], {}
      for i = 2, #result, 2 do fields[result[i]] = tostring(result[i + 1]) end
      ready.fields = fields
      local text = cjson.encode(ready)
      local id = redis.call('XADD', item[3], 'MAXLEN', '~', maxlen, '*', '__data__',
                            item[6] .. text)
      local mine = #taken
      take(item[3], id, item[10], i, taken)
      -- What was added is the item's envelope and this JSON: the caller joins them.
      for t = mine + 1, #taken do
        if taken[t][4] == i then taken[t][5] = text end
      end
      if result[1] == 'republish' then redis.call('HSET', item[2], '_published', '1') end
      redis.call('ZREM', item[8], item[9])
    end
  end
end
if acks then redis.call('XACK', KEYS[key - 1], ARGV[base + 4], ARGV[base + 5]) end
local head = {1, #counted}
for _, step in ipairs(counted) do head[#head + 1] = step end
return flat(head, taken)
"""
)

# Merger: the deadline passed; take the turn for a partial reply unless it completed.
# KEYS: merge hash. ARGV: now_ms, republish_after_ms.
# Returns {'done'} | {'wait'} | {'expired' | 'republish', field, value, ...}.
MERGE_EXPIRE = (
    _MERGE_COMMON
    + """
need_keys(1)
int_arg(1, 'now_ms', 0)
int_arg(2, 'republish_after_ms', 0)
if redis.call('HEXISTS', KEYS[1], '_done') == 1 then return settled(KEYS[1], ARGV[1], ARGV[2]) end
if redis.call('HEXISTS', KEYS[1], 'turn') == 0 then return {'done'} end
return finish(KEYS[1], 'expired', ARGV[1])
"""
)

# A reply written into the conversation's history once, however often it is delivered.
# KEYS: history claim, history stream. ARGV: entry_json, claim_ttl_s, history_ttl_s, maxlen.
HISTORY_ONCE = (
    ARG_CHECKS
    + """
need_keys(2)
str_arg(1, 'entry_json')
int_arg(2, 'claim_ttl_s', 1)
int_arg(3, 'history_ttl_s', 1)
int_arg(4, 'maxlen', 1)
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) then return false end
return append_entry(KEYS[2], 'm', ARGV[1], ARGV[4], ARGV[3], true)
"""
)

# Delivery to a Redis-backed channel, once per key, with the reply's history line in the same
# step (so the history is in the order the person saw). With the conversation's state as a
# fourth key (a bot's reply), nothing is delivered while a person owns the conversation (its
# meta slice's ``handoff``): the check and the delivery are one step. With the conversation's
# lease as a fifth key and the reply's turn id (a reply to a turn), nothing is delivered when
# another turn started since (the meta slice names the last turn started; the lease's holder
# when the slice names none): that turn took up this one's messages again (this one outlived
# its lease, or its start was lost in a failover) and answers them itself, unless this reply
# was delivered before (a redelivery after its release: a duplicate).
# KEYS: sent, replies stream (trimmed exactly: "~" would keep whole 100-entry nodes of a small
# per-conversation stream), history, then the state for a bot's reply, then the lease.
# ARGV: payload_json, sent_ttl_s, stream_ttl_s, maxlen, history_json, history_ttl_s,
# history_kept, now_ms (wall clock), then the turn id with the lease.
# Returns {'sent', stream id} | {'duplicate'} | {'human'} | {'superseded'} (the last two not
# delivered).
_DELIVER = (
    ARG_CHECKS
    + """
-- The checks of a delivery's eight arguments from ARGV[at].
local function deliver_args(at)
  str_arg(at, 'payload_json')
  int_arg(at + 1, 'sent_ttl_s', 1)
  int_arg(at + 2, 'stream_ttl_s', 1)
  int_arg(at + 3, 'maxlen', 1)
  str_arg(at + 4, 'history_json')
  int_arg(at + 5, 'history_ttl_s', 1)
  int_arg(at + 6, 'history_kept', 1)
  int_arg(at + 7, 'now_ms', 0)
end
-- The delivery, with its arguments from ARGV[at]; `state` and `turn_id` (with `lease`) may be
-- nil. Also returns the lease's holder (nil when not read or not held; the turn that started
-- last, by the meta slice, when it names one) and the meta slice as read (nil when not read
-- or absent).
local function deliver(sent, replies, history, state, lease, at, turn_id)
  local meta = nil
  if state then
    local raw = redis.call('HGET', state, 'meta')
    if raw then meta = cjson.decode(raw) end
    if meta and meta.handoff == 'human' then return {'human'} end
  end
  local holder = nil
  if turn_id then
    -- Every start takes the lease and names its turn in the meta slice in the same step, so
    -- the meta slice as read says who holds the lease (or held it last), without reading it.
    if meta and meta.turn_id then holder = meta.turn_id else holder = redis.call('GET', lease) end
    if holder and holder ~= turn_id then
      -- Delivered before (a redelivery after the next turn began) rather than taken over.
      if redis.call('EXISTS', sent) == 1 then return {'duplicate'}, holder, meta end
      return {'superseded'}
    end
  end
  if not redis.call('SET', sent, '1', 'NX', 'EX', ARGV[at + 1]) then
    return {'duplicate'}, holder, meta
  end
  -- The reply stream's TTL is set with the conversation's others by the ingest of a message
  -- (``ttl_due``), and here while they are not (the person has not written for a while).
  local id = append_entry(replies, 'reply', ARGV[at], ARGV[at + 3], ARGV[at + 2],
                          ttl_due(meta, tonumber(ARGV[at + 7]), ARGV[at + 5]))
  -- The history's TTL counts from the person's last message, as the state's does: the ingest
  -- of a turn's messages keeps it, so a reply to a turn sets it only on a history it creates
  -- (one gone since).
  append_entry(history, 'm', ARGV[at + 4], ARGV[at + 6], ARGV[at + 5], turn_id == nil)
  return {'sent', id}, holder, meta
end
"""
)

DELIVER_ONCE = (
    _DELIVER
    + """
if #KEYS < 3 or #KEYS > 5 then bad_arg('expected 3 to 5 keys, got ' .. #KEYS) end
deliver_args(1)
local turn_id = nil
if #KEYS == 5 then turn_id = str_arg(9, 'turn_id') end
local result = deliver(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], 1, turn_id)
return result
"""
)

# A reply to a turn delivered to a Redis-backed channel and the turn released, in one step
# (DELIVER_ONCE with the state and the lease, then RELEASE): a delivered or duplicate reply
# releases its turn; a reply not delivered (a person owns the conversation, or another turn
# took its messages up) releases nothing (the caller journals the drop and releases). Only a
# delivery journals: the entries written before the reply's (its composition), then the
# reply's own, whose ``detail`` the script sets to the reply's stream id.
# KEYS: RELEASE's, then the delivery's sent, replies stream and history.
# ARGV: RELEASE's first nine, then DELIVER_ONCE's eight, then the reply's journal entry, then
#       the entries written before it.
# Returns {'human'} | {'superseded'} | {'sent' | 'duplicate', stream id or '', RELEASE's
# answer...}.
DELIVER_RELEASE = (
    _RELEASE_TURN
    + _DELIVER
    + """
local acks, pending, n_keys, max_ts = release_args(3)
deliver_args(10)
local delivered = table_arg(18, 'delivered entry')
local d = n_keys + 1
local result, holder, meta = deliver(KEYS[d], KEYS[d + 1], KEYS[d + 2], KEYS[3], KEYS[2], 10,
                                    ARGV[1])
if result[1] == 'human' or result[1] == 'superseded' then return result end
local entries = {}
if result[1] == 'sent' then
  entries = {unpack(ARGV, 19, #ARGV)}
  delivered.detail = result[2]
  entries[#entries + 1] = cjson.encode(delivered)
end
local out = {result[1], result[2] or ''}
for _, v in ipairs(release_turn(entries, holder or false, acks, pending, n_keys, max_ts, meta)) do
  out[#out + 1] = v
end
return out
"""
)


# Scheduler: create one scheduled message, idempotently (a redelivered event changes nothing).
# Nothing for a turn of a conversation erased since (its ``erased`` set names the turn).
# KEYS: item, conversation index, journal, erased turns.
# ARGV: item_json, status, due_ms, item_id, ttl_s, bucket, journal_entry, journal_max, the
#       turn whose event scheduled it ('' for none).
# Returns {1, status} when created, {0, existing status} when it existed, {0, 'erased'}.
SCHED_ADD = (
    ARG_CHECKS
    + """
need_keys(4)
str_arg(1, 'item_json')
str_arg(2, 'status')
int_arg(3, 'due_ms', 0)
str_arg(4, 'item_id')
int_arg(5, 'ttl_s', 1)
str_arg(6, 'bucket')
str_arg(7, 'journal_entry')
int_arg(8, 'journal_max', 1)
if ARGV[9] == nil then bad_arg('turn_id is missing') end
if ARGV[9] ~= '' and redis.call('SISMEMBER', KEYS[4], ARGV[9]) == 1 then return {0, 'erased'} end
local current = redis.call('HGET', KEYS[1], 'status')
if current then return {0, current} end
redis.call('HSET', KEYS[1], 'item', ARGV[1], 'status', ARGV[2], 'bucket', ARGV[6])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('RPUSH', KEYS[3], ARGV[7])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[8]), -1)
redis.call('EXPIRE', KEYS[3], ARGV[5])
return {1, ARGV[2]}
"""
)

# Scheduler: claim what is due in one bucket, so two replicas never take the same message.
# Claims carry an expiry; a claim its replica did not finish (it died) is handed out again.
# KEYS: due, claimed. ARGV: now_ms, claim_ms, limit.
# Returns {remaining (due + claimed), member...}.
SCHED_CLAIM = (
    ARG_CHECKS
    + """
need_keys(2)
int_arg(1, 'now_ms', 0)
int_arg(2, 'claim_ms', 1)
int_arg(3, 'limit', 1)
local now = tonumber(ARGV[1])
local until_ms = now + tonumber(ARGV[2])
local out = {0}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, ARGV[3])) do
  redis.call('ZADD', KEYS[2], until_ms, m)
  out[#out + 1] = m
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[3])) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZADD', KEYS[2], until_ms, m)
  out[#out + 1] = m
end
out[1] = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2])
return out
"""
)

# Scheduler: take a claimed message for sending. While a person owns the conversation it is
# held instead (journaled). A message left 'sending' by a replica that died is sent again: the
# channel's delivery claim on its turn id makes the second send a no-op.
# KEYS: item, state, journal. ARGV: held_entry, journal_max, ttl_s.
# Returns {'send', item_json} | {'held'} | {status} | {'gone'}.
SCHED_TAKE = (
    ARG_CHECKS
    + """
need_keys(3)
str_arg(1, 'held_entry')
int_arg(2, 'journal_max', 1)
int_arg(3, 'ttl_s', 1)
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'gone'} end
if status == 'sending' then return {'send', redis.call('HGET', KEYS[1], 'item')} end
if status ~= 'pending' then return {status} end
local raw = redis.call('HGET', KEYS[2], 'meta')
if raw and cjson.decode(raw).handoff == 'human' then
  redis.call('HSET', KEYS[1], 'status', 'held')
  redis.call('RPUSH', KEYS[3], ARGV[1])
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[2]), -1)
  redis.call('EXPIRE', KEYS[3], ARGV[3])
  return {'held'}
end
redis.call('HSET', KEYS[1], 'status', 'sending')
return {'send', redis.call('HGET', KEYS[1], 'item')}
"""
)

# Scheduler: move a message from one of the statuses in ARGV[1] (comma-separated) to ARGV[2],
# journaling the change once. KEYS: item, journal. ARGV: from, to, entry, journal_max, ttl_s.
# Returns 1 when it moved, 0 otherwise.
SCHED_MOVE = (
    ARG_CHECKS
    + """
need_keys(2)
str_arg(1, 'from')
str_arg(2, 'to')
str_arg(3, 'entry')
int_arg(4, 'journal_max', 1)
int_arg(5, 'ttl_s', 1)
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
if not string.find(',' .. ARGV[1] .. ',', ',' .. status .. ',', 1, true) then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[4]), -1)
redis.call('EXPIRE', KEYS[2], ARGV[5])
return 1
"""
)


# Trial seat lookup: the seats taken of every class asked for, in one MGET of the classes'
# seat counts (``shared/trial/bookings.py`` keeps a class's count equal to the size of its set
# in every script that changes the set). A class without a count yet (booked before the counts
# existed, never looked up, or its count expired) is counted from its set once and the count
# stored. The counts are a cache with bounded age: this script creates a count (the booking
# scripts only change one that exists, keeping its TTL) and gives it ``counts_ttl_s`` then, so
# a count some writer left wrong (a replica of an earlier version, during a rolling deploy) is
# counted again from the set within that time; the booking scripts' seat checks read the sets
# themselves, so a wrong count never books a seat that is not there.
# KEYS: the classes' counts, then their sets, in the same order. ARGV: how many classes,
# counts_ttl_s. Returns the seats taken, in that order.
SEATS_TAKEN = (
    ARG_CHECKS
    + """
local n = int_arg(1, 'slots', 1)
local ttl = int_arg(2, 'counts_ttl_s', 1)
need_keys(n * 2)
local counts = redis.call('MGET', unpack(KEYS, 1, n))
for i = 1, n do
  if counts[i] then
    counts[i] = tonumber(counts[i])
  else
    counts[i] = redis.call('SCARD', KEYS[n + i])
    redis.call('SET', KEYS[i], counts[i], 'EX', ttl)
  end
end
return counts
"""
)

# A channel's send claim on one slot of a reply (``services/gateway/channels/once.py``): taken
# once (``SET NX``), and for a reply to a turn only while that turn holds the conversation's
# lease; another holder took the turn's messages up again and answers them itself (as
# ``DELIVER_ONCE`` checks for the HTTP channel).
# KEYS: slot, then the lease for a reply to a turn. ARGV: token, ttl_s, then the turn id.
# Returns {'claimed'} | {'taken'} | {'superseded'} (nothing written for the last two).
SEND_CLAIM = (
    ARG_CHECKS
    + """
if #KEYS < 1 or #KEYS > 2 then bad_arg('expected 1 or 2 keys, got ' .. #KEYS) end
str_arg(1, 'token')
int_arg(2, 'ttl_s', 1)
if #KEYS == 2 then
  local turn_id = str_arg(3, 'turn_id')
  local holder = redis.call('GET', KEYS[2])
  if holder and holder ~= turn_id then return {'superseded'} end
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return {'claimed'} end
return {'taken'}
"""
)

# A claim given back by its holder only: delete KEYS[1] if it still holds ARGV[1] (a WhatsApp
# send claim no replica confirmed, ``shared/durability.py``).
DEL_IF_EQUAL = (
    ARG_CHECKS
    + """
need_keys(1)
str_arg(1, 'value')
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
)


@dataclass(frozen=True)
class Scripts:
    ingest: AsyncScript
    meta_patch: AsyncScript
    try_start: AsyncScript
    drop_in_flight: AsyncScript
    release: AsyncScript
    commit: AsyncScript
    publish: AsyncScript
    merge_add: AsyncScript
    merge_expire: AsyncScript
    deliver_once: AsyncScript
    deliver_release: AsyncScript
    history_once: AsyncScript
    sched_add: AsyncScript
    sched_claim: AsyncScript
    sched_take: AsyncScript
    sched_move: AsyncScript


# The text of each script ``queue`` sent by its SHA1, for ``execute`` to send again.
_TEXTS: dict[str, str] = {}


def compact(script: str) -> str:
    """``script`` as it is sent: without its comment lines and indentation, its lines where
    they were (an error's line number still points into the source): a third less to send
    and for Redis to hash when one goes by its text (a cluster's pipeline, ``queue``; a
    script Redis lost)."""
    return "\n".join(
        "" if line.lstrip().startswith("--") else line.strip() for line in script.split("\n")
    )


def load(redis: Redis, script: str) -> AsyncScript:
    """``script`` registered on ``redis`` as it is sent (``compact``)."""
    return redis.register_script(compact(script))


def register(redis: Redis) -> Scripts:
    return Scripts(
        ingest=load(redis, INGEST),
        meta_patch=load(redis, META_PATCH),
        try_start=load(redis, TRY_START),
        drop_in_flight=load(redis, DROP_IN_FLIGHT),
        release=load(redis, RELEASE),
        commit=load(redis, COMMIT),
        publish=load(redis, PUBLISH),
        merge_add=load(redis, MERGE_ADD),
        merge_expire=load(redis, MERGE_EXPIRE),
        deliver_once=load(redis, DELIVER_ONCE),
        deliver_release=load(redis, DELIVER_RELEASE),
        history_once=load(redis, HISTORY_ONCE),
        sched_add=load(redis, SCHED_ADD),
        sched_claim=load(redis, SCHED_CLAIM),
        sched_take=load(redis, SCHED_TAKE),
        sched_move=load(redis, SCHED_MOVE),
    )


def queue(pipe: Pipeline, script: AsyncScript, *, keys: list[str], args: list[Any]) -> None:
    """Queue ``script`` on a pipeline by its SHA1 (``EVALSHA``); run the pipeline with
    ``execute``, which sends a call Redis no longer knows again by its text.

    Calling the script with ``client=pipe`` instead makes redis-py ask ``SCRIPT EXISTS``
    before every such pipeline: one more round trip each time. Sending the text every time
    costs Redis a SHA1 of it and both sides its bytes (a turn's ingest and publish: 16 KB).
    A cluster's pipeline sends the text: redis-py keeps its queued commands apart by node,
    where ``execute`` cannot read them back."""
    if isinstance(pipe, ClusterPipeline):
        pipe.eval(cast(str, script.script), len(keys), *keys, *args)
        return
    _TEXTS[script.sha] = cast(str, script.script)
    pipe.evalsha(script.sha, len(keys), *keys, *args)


async def execute(pipe: Pipeline, *, raise_on_error: bool = True) -> list[Any]:
    """Run a pipeline that ``queue`` may have put script calls on; its results.

    A call Redis answered ``NOSCRIPT`` (a restart, a failover or ``SCRIPT FLUSH`` emptied its
    cache) did not run: it is sent again by its text, after the pipeline's other commands,
    which ran once (a journal's ``RPUSH`` must not run twice); a ``WAIT`` of the pipeline is
    sent again after it, so that it covers the call. A script queued on a pipeline must
    therefore not need to run before the commands queued after it."""
    if isinstance(pipe, ClusterPipeline):
        return list(await pipe.execute(raise_on_error=raise_on_error))
    stack = [args for args, _ in pipe.command_stack]
    results = list(await pipe.execute(raise_on_error=False))
    lost = [i for i, result in enumerate(results) if isinstance(result, NoScriptError)]
    if lost:
        for i in lost:
            _, sha, *rest = stack[i]
            pipe.execute_command("EVAL", _TEXTS[cast(str, sha)], *rest)
        waits = [i for i, args in enumerate(stack) if args[0] == "WAIT"]
        for i in waits:
            pipe.execute_command(*stack[i])
        again = await pipe.execute(raise_on_error=False)
        for i, result in zip(lost + waits, again, strict=True):
            results[i] = result
    if raise_on_error:
        for result in results:
            if isinstance(result, Exception):
                raise result
    return results
