-- Record the response, if the record is still IN_PROGRESS and owned by this token (fencing).
-- The token stays in the completed record, so a retried call (its first reply lost) succeeds again.
-- KEYS[1] record key
-- ARGV[1] owner token   ARGV[2] response   ARGV[3] TTL (ms)
-- Returns 1 if completed (now or by this token before), 0 if the lease was lost.
local record = redis.call('HMGET', KEYS[1], 's', 't')
if record[2] ~= ARGV[1] then
  return 0
end
if record[1] == 'C' then
  return 1
end
redis.call('HSET', KEYS[1], 's', 'C', 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
