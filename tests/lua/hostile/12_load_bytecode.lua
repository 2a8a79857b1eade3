-- expect: attempt to load a binary chunk
-- A hand-made binary chunk header: refused before it is read.
local f, err = load("\27LuaT\0\25\147\13\10\26\10\4\8\8", "chunk")
assert(f, err)
