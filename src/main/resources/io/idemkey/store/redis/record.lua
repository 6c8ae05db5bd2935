-- Idemkey's record operations, each one atomic step (one round trip).
--
-- A record is one string, expired by Redis itself:
--   state (1 byte: 'P' in progress, 'C' completed) | fingerprint length (1 byte) | fingerprint
--   | owner token length (1 byte) | owner token | response (completed records only)
-- A completed record keeps the first 8 bytes of its owner's token: enough to know a retried
-- complete from another owner's, and 8 bytes fewer in every record.
--
-- The store sends an acquire without a rate limit as SET key <record> NX PX <lock TTL> GET and
-- PTTL key instead (RedisIdempotencyStore.acquire: the same step, cheaper for Redis), and reads the
-- record it finds in Java (existing(), inProgressRecord()): the layout above is written in both
-- places; this acquire stays for rate-limited acquires and a Redis before 7.0. Where Redis has
-- SET ... IFEQ (Valkey 8.1, Redis 8.4), a completion is SET key <completed record> IFEQ <the owner's
-- record in progress> PX <TTL> first (RedisIdempotencyStore.complete, completedRecord(): the completed
-- layout is written in Java too), and this complete only where that wrote nothing.
--
-- KEYS[1] the record key; ARGV[1] the operation, then its arguments:
--   acquire  fingerprint, token, lock TTL (ms)  -> {'A'} | {'M'} | {'P', pttl} | {'C', response, pttl}
--            [, permits, window (ms)]              | {'R', window pttl}
--            creates the in-progress record, or reports the existing one; a different fingerprint
--            wins over every state (422 before 409); the same token acquiring again (a retried
--            round trip whose reply was lost) acquires again. With a rate limit, KEYS[2] counts the
--            key's requests in a window that starts with the first (expired by Redis); beyond the
--            permits the answer is {'R', time left in the window} and nothing else happens. A retried
--            round trip that finds its own record is the same request: it is not counted again
--   complete token, response, TTL (ms)          -> 1 completed (now, or by this token before) | 0 lease lost
--   release  token                              -> 1 the key is free (deleted, or already gone) | 0 not ours
--   renew    token, lock TTL (ms)               -> 1 renewed | 0 lease lost
--   inspect                                     -> {} no record | {record, pttl} (for operators)
--   listed                                      -> {} no record, or a completed one | {record, pttl} in progress
--            (the list of records in progress: a completed record's response is never sent)
--   purge    force ('1' or '0')                 -> 1 deleted | 0 no record | -1 in progress, not forced

local key = KEYS[1]
local operation = ARGV[1]
local record = redis.call('GET', key)

local state, fingerprint, token, header
if record then
  state = string.sub(record, 1, 1)
  local fingerprintLength = string.byte(record, 2)
  fingerprint = string.sub(record, 3, 2 + fingerprintLength)
  local tokenLength = string.byte(record, 3 + fingerprintLength)
  token = string.sub(record, 4 + fingerprintLength, 3 + fingerprintLength + tokenLength)
  header = 3 + fingerprintLength + tokenLength
end

if operation == 'acquire' then
  if state == 'P' and token == ARGV[3] then
    -- this token's own acquire, sent again after its reply was lost: the same request, so
    -- acquired again and, with a rate limit, not counted again
    redis.call('PEXPIRE', key, ARGV[4])
    return {'A'}
  end
  if ARGV[5] then
    local count = redis.call('INCR', KEYS[2])
    if count == 1 then
      redis.call('PEXPIRE', KEYS[2], ARGV[6])
    end
    if count > tonumber(ARGV[5]) then
      local left = redis.call('PTTL', KEYS[2])
      if left < 0 then -- a counter without expiry must not block the key for ever
        redis.call('PEXPIRE', KEYS[2], ARGV[6])
        left = tonumber(ARGV[6])
      end
      return {'R', left}
    end
  end
  if not record then
    redis.call('SET', key, 'P' .. string.char(#ARGV[2]) .. ARGV[2] .. string.char(#ARGV[3]) .. ARGV[3], 'PX', ARGV[4])
    return {'A'}
  end
  if fingerprint ~= ARGV[2] then
    return {'M'}
  end
  if state == 'P' then
    return {'P', redis.call('PTTL', key)}
  end
  return {'C', string.sub(record, header + 1), redis.call('PTTL', key)}
end

if operation == 'complete' then
  if not record then
    return 0
  end
  if state == 'C' then
    if token ~= string.sub(ARGV[2], 1, 8) then
      return 0
    end
    -- this token's own completion, retried after its reply was lost: written again as it is, so
    -- that a WAIT after it on this connection also waits for the first write (from Redis 7.2 on,
    -- WAIT only waits for what its own connection wrote)
    redis.call('SET', key, record, 'KEEPTTL')
    return 1
  end
  if token ~= ARGV[2] then
    return 0
  end
  local kept = string.sub(ARGV[2], 1, 8)
  redis.call('SET', key, 'C' .. string.char(#fingerprint) .. fingerprint .. string.char(#kept) .. kept .. ARGV[3],
    'PX', ARGV[4])
  return 1
end

if operation == 'release' then
  if not record then
    return 1
  end
  if state ~= 'P' or token ~= ARGV[2] then
    return 0
  end
  redis.call('DEL', key)
  return 1
end

if operation == 'renew' then
  if state ~= 'P' or token ~= ARGV[2] then
    return 0
  end
  redis.call('PEXPIRE', key, ARGV[3])
  return 1
end

if operation == 'inspect' then
  if not record then
    return {}
  end
  return {record, redis.call('PTTL', key)}
end

if operation == 'listed' then
  if state ~= 'P' then
    return {}
  end
  return {record, redis.call('PTTL', key)}
end

if operation == 'purge' then
  if not record then
    return 0
  end
  if state == 'P' and ARGV[2] ~= '1' then
    return -1
  end
  redis.call('DEL', key)
  return 1
end

return redis.error_reply('unknown operation ' .. tostring(operation))
