-- expect: time limit of 1 s
while true do end
