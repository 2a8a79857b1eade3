-- expect: bad argument #1 to 'setmetatable' (table expected, got string)
setmetatable("", { __index = { x = 1 } })
