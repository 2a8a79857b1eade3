-- expect: attempt to index a boolean value
getmetatable("").__index = { upper = function() return os.execute end }
