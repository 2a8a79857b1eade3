-- expect: global 'io'
local f = io.open("data.txt", "w")
f:write("pwned")
