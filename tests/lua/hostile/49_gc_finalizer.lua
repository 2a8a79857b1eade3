-- expect: __gc metamethods are not available
setmetatable({}, { __gc = function() while true do end end })
