-- expect: time limit of 1 s
table.sort({ 3, 2, 1 }, function(a, b) while true do end end)
