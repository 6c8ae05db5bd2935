-- Extend the lease of an IN_PROGRESS record, if it is still owned by this token.
-- KEYS[1] record key
-- ARGV[1] owner token   ARGV[2] lock TTL (ms)
-- Returns 1 if renewed, 0 if the lease was lost.
local record = redis.call('HMGET', KEYS[1], 's', 't')
if record[1] ~= 'P' or record[2] ~= ARGV[1] then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
