-- expect: field 'dump'
local bytes = string.dump(function() return 1 end)
