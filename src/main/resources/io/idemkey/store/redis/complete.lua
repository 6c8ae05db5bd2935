-- Record the response, if the record is still IN_PROGRESS and owned by this token (fencing).
-- KEYS[1] record key
-- ARGV[1] owner token   ARGV[2] response   ARGV[3] TTL (ms)
-- Returns 1 if completed, 0 if the lease was lost.
local record = redis.call('HMGET', KEYS[1], 's', 't')
if record[1] ~= 'P' or record[2] ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 's', 'C', 'r', ARGV[2])
redis.call('HDEL', KEYS[1], 't')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
