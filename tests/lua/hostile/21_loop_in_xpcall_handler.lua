-- expect: time limit of 1 s
while true do
  xpcall(function() error("x") end, function() while true do end end)
end
