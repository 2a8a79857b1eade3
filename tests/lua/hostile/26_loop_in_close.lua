-- expect: time limit of 1 s
do
  local x <close> = setmetatable({}, { __close = function() while true do end end })
end
