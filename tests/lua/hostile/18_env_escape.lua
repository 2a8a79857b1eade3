-- expect: io is gone
-- A fresh environment for load is still the sandbox: no io in _G.
local f = load("return rawget(_G, 'io')")
assert(f() ~= nil, "io is gone")
