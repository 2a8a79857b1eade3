-- expect: memory limit of 16 MB
local s = string.rep("x", 2^30)
