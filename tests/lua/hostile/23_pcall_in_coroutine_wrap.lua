-- expect: time limit of 1 s
local co = coroutine.wrap(function()
  while true do pcall(function() while true do end end) end
end)
while true do pcall(co) end
