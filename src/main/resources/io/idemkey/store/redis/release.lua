-- Delete the record so that a retry runs again, if it is still IN_PROGRESS and owned by this token.
-- KEYS[1] record key
-- ARGV[1] owner token
-- Returns 1 if the key is free (deleted now, or already gone: a retried call, an expired lease),
-- 0 if another owner holds it or it is completed.
local record = redis.call('HMGET', KEYS[1], 's', 't')
if not record[1] then
  return 1
end
if record[1] ~= 'P' or record[2] ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
