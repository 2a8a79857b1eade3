-- expect: contains itself
local t = {}
t.self = t
print(aiq.json_encode(t))
