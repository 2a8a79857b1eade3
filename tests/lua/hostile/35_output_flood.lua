-- expect: output limit of 64 KB
while true do print(string.rep("x", 1000)) end
