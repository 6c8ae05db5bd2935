-- Acquire an idempotency key in one atomic step: create the IN_PROGRESS record, or report the
-- existing one. A different fingerprint wins over every state (422 before 409).
-- KEYS[1] record key
-- ARGV[1] fingerprint   ARGV[2] owner token   ARGV[3] lock TTL (ms)
-- Record: hash { s = 'P' (in progress) | 'C' (completed), f = fingerprint, t = owner token, r = response }
-- The same token acquiring again (a retried round trip whose reply was lost) acquires again.
-- Returns {'A'} acquired | {'M'} mismatch | {'P', pttl} in progress | {'C', response, pttl} completed
local record = redis.call('HMGET', KEYS[1], 's', 'f', 'r', 't')
if not record[1] or (record[1] == 'P' and record[4] == ARGV[2]) then
  redis.call('HSET', KEYS[1], 's', 'P', 'f', ARGV[1], 't', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'A'}
end
if record[2] ~= ARGV[1] then
  return {'M'}
end
if record[1] == 'P' then
  return {'P', redis.call('PTTL', KEYS[1])}
end
return {'C', record[3], redis.call('PTTL', KEYS[1])}
