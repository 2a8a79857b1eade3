-- Month-over-month revenue: orders and revenue per month (cancelled and
-- returned orders left out), the change from the month before in percent,
-- and a flag on the months that fell more than 10 % below the one before.
--
--   aiq demo/shop.db --lua examples/lua/monthly_revenue.lua -f csv
--
-- Works on SQLite and DuckDB sources alike (no engine-specific functions).

local DROP = -10 -- percent

local months = aiq.query([[
  SELECT substr(CAST(ordered_at AS TEXT), 1, 7) AS month,
         count(*) AS orders,
         round(sum(total), 2) AS revenue
  FROM orders
  WHERE status NOT IN ('cancelled', 'returned')
  GROUP BY 1
  ORDER BY 1
]])

local report, previous, drops = {}, nil, 0
for _, m in ipairs(months) do
  local change = aiq.null
  local flag = ""
  if previous and previous.revenue > 0 then
    local pct = (m.revenue - previous.revenue) / previous.revenue * 100
    change = math.floor(pct * 10 + 0.5) / 10
    if pct < DROP then
      flag = "drop"
      drops = drops + 1
    end
  end
  report[#report + 1] = {
    month = m.month,
    orders = m.orders,
    revenue = m.revenue,
    change_pct = change,
    flag = flag,
  }
  previous = m
end

aiq.log("info", string.format("%d months, %d of them more than %d %% below the month before",
  #report, drops, -DROP))
aiq.table(report, { "month", "orders", "revenue", "change_pct", "flag" })
