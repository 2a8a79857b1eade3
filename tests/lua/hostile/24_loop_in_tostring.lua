-- expect: time limit of 1 s
-- A loop inside a metamethod that a C function calls.
local t = setmetatable({}, { __tostring = function() while true do end end })
while true do pcall(string.format, "%s", t) end
