-- expect: memory limit of 16 MB
for i = 1, 100 do pcall(string.rep, "x", 2^30) end
print("survived")
