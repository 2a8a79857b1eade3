-- Quarterly retention cohorts: customers who signed up from 2023 on, grouped
-- by the quarter they signed up in, and the share (in percent) of each
-- cohort that ordered in that quarter (q0) and in each of the next three
-- (q1, q2, q3). Quarters after the last order are left empty.
--
--   aiq demo/shop.db --lua examples/lua/cohorts.lua
--
-- Two plain queries; the cohort arithmetic happens in Lua.

local function quarter(date) -- "2023-04-17" -> a running quarter number
  local y, m = date:match("^(%d%d%d%d)-(%d%d)")
  return tonumber(y) * 4 + (tonumber(m) - 1) // 3
end

local function label(q)
  return string.format("%d-Q%d", q // 4, q % 4 + 1)
end

local cohort_of, size = {}, {}
for _, c in ipairs(aiq.query([[
  SELECT id, CAST(signup_date AS TEXT) AS signup
  FROM customers
  WHERE CAST(signup_date AS TEXT) >= '2023-01-01'
]])) do
  local q = quarter(c.signup)
  cohort_of[c.id] = q
  size[q] = (size[q] or 0) + 1
end

local active = {} -- active[cohort][offset] = set of customer ids
local last = 0
for _, o in ipairs(aiq.query([[
  SELECT DISTINCT customer_id, substr(CAST(ordered_at AS TEXT), 1, 10) AS day
  FROM orders
  WHERE status <> 'cancelled'
]])) do
  local oq = quarter(o.day)
  if oq > last then last = oq end
  local q = cohort_of[o.customer_id]
  if q and oq - q >= 0 and oq - q <= 3 then
    local k = oq - q
    active[q] = active[q] or {}
    active[q][k] = active[q][k] or {}
    active[q][k][o.customer_id] = true
  end
end

local cohorts = {}
for q in pairs(size) do cohorts[#cohorts + 1] = q end
table.sort(cohorts)

local rows = {}
for _, q in ipairs(cohorts) do
  local row = { cohort = label(q), customers = size[q] }
  for k = 0, 3 do
    local name = "q" .. k
    if q + k > last then
      row[name] = aiq.null
    else
      local n = 0
      for _ in pairs((active[q] or {})[k] or {}) do n = n + 1 end
      row[name] = math.floor(n / size[q] * 1000 + 0.5) / 10
    end
  end
  rows[#rows + 1] = row
end

aiq.table(rows, { "cohort", "customers", "q0", "q1", "q2", "q3" })
