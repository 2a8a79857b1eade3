-- The sandbox prelude: runs once in every fresh Lua state, before the
-- program, with the host's functions as its only argument. It removes what
-- a program must not reach, wraps what it may use, and builds the `aiq`
-- table. The host table stays in this chunk's locals: no program sees it.
local host = ...

local type, select, error, tostring = type, select, error, tostring
local getmetatable, rawget, concat = getmetatable, rawget, table.concat
local raw_pcall, raw_xpcall, raw_load = pcall, xpcall, load
local raw_setmetatable, raw_collectgarbage = setmetatable, collectgarbage
local raw_resume, raw_close = coroutine.resume, coroutine.close
local check, stopped, pretty = host.check, host.stopped, host.pretty

-- Nothing that reaches files, the process or the interpreter's insides.
dofile, loadfile, require, package, io, debug, warn = nil, nil, nil, nil, nil, nil, nil
os = { time = os.time, clock = os.clock, date = os.date, difftime = os.difftime }
string.dump = nil
-- getmetatable("") gives nothing to change.
getmetatable("").__metatable = false

-- A limit or a cancel ends the run even inside pcall, xpcall or a
-- coroutine: `check` raises it again as soon as the protected call returns.
pcall = function(f, ...)
  return check(raw_pcall(f, ...))
end
-- Lua calls a message handler for an error raised by the limit hook with
-- hooks turned off, so once the run is stopped the program's handler is
-- not called at all: nothing of the program runs unwatched.
xpcall = function(f, handler, ...)
  if type(handler) ~= "function" then
    error("bad argument #2 to 'xpcall' (function expected, got " .. type(handler) .. ")", 2)
  end
  return check(raw_xpcall(f, function(e)
    if stopped() then
      return e
    end
    return handler(e)
  end, ...))
end
coroutine.resume = function(co, ...)
  return check(raw_resume(co, ...))
end
coroutine.close = function(co)
  return check(raw_close(co))
end

-- Source text only: no precompiled chunks.
load = function(chunk, name, mode, ...)
  if select("#", ...) > 0 then
    return raw_load(chunk, name, "t", ...)
  end
  return raw_load(chunk, name, "t")
end

-- Finalizers would run host code at any allocation; there are none.
setmetatable = function(t, mt)
  if type(t) ~= "table" then
    error("bad argument #1 to 'setmetatable' (table expected, got " .. type(t) .. ")", 2)
  end
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    error("__gc metamethods are not available in the sandbox", 2)
  end
  return raw_setmetatable(t, mt)
end

local gc_allowed = { collect = true, count = true, step = true, isrunning = true }
collectgarbage = function(opt, ...)
  if opt == nil then
    opt = "collect"
  end
  if not gc_allowed[opt] then
    error("collectgarbage(\"" .. tostring(opt) .. "\") is not available in the sandbox", 2)
  end
  return raw_collectgarbage(opt, ...)
end

-- A host function answers (true, results…) or (false, message); the
-- message becomes an error at the line that called the aiq function.
local function unwrap(ok, ...)
  if ok then
    return ...
  end
  error((...), 2)
end

local function show(v)
  if type(v) == "table" then
    local mt = getmetatable(v)
    if type(mt) == "table" and rawget(mt, "__tostring") ~= nil then
      return tostring(v)
    end
    return pretty(v)
  end
  return tostring(v)
end

local function sandbox_print(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do
    parts[i] = show((select(i, ...)))
  end
  return unwrap(host.write(concat(parts, "\t", 1, n) .. "\n"))
end
print = sandbox_print

aiq = {
  null = host.null,
  query = function(sql, params) return unwrap(host.query(sql, params)) end,
  tables = function() return unwrap(host.tables()) end,
  schema = function(name) return unwrap(host.schema(name)) end,
  print = sandbox_print,
  table = function(rows, columns) return unwrap(host.table(rows, columns)) end,
  json_encode = function(value) return unwrap(host.json_encode(value)) end,
  json_decode = function(text) return unwrap(host.json_decode(text)) end,
  read_file = function(path) return unwrap(host.read_file(path)) end,
  write_file = function(path, text) return unwrap(host.write_file(path, text)) end,
  log = function(level, message) return unwrap(host.log(level, message)) end,
}
