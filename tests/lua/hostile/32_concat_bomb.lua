-- expect: memory limit of 16 MB
local s = "x"
while true do s = s .. s end
