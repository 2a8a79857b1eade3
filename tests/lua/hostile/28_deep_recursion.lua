-- expect: limit of 16 MB
local function f(n) return 1 + f(n + 1) end
print(f(1))
