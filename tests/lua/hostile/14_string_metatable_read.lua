-- expect: attempt to index a boolean value
-- The string metatable is hidden: nothing to reach through it.
local dump = getmetatable("").__index.dump
dump(print)
