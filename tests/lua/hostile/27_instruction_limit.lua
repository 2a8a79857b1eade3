-- expect: instruction limit of 1,000,000 Lua instructions
-- limits: max_instructions=1000000
local n = 0
for i = 1, 1e12 do n = n + i end
