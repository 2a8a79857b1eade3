-- expect: output limit of 64 KB
while true do pcall(print, string.rep("x", 1000)) end
