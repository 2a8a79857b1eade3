-- expect: time limit of 1 s
while true do
  pcall(function() while true do end end)
end
