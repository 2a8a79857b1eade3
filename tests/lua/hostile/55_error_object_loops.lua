-- expect: time limit of 1 s
error(setmetatable({}, { __tostring = function() while true do end end }))
