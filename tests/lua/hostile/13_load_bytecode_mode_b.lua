-- expect: attempt to load a binary chunk
-- Asking for binary mode does not help: the sandbox loads text only.
assert(load("\27LuaT\0", "chunk", "b"))
