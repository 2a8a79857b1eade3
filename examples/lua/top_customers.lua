-- The five biggest customers by revenue, each with their last three orders:
-- one query ranks them, then one query with a bound parameter per customer.
--
--   aiq demo/shop.db --lua examples/lua/top_customers.lua

local top = aiq.query([[
  SELECT c.id, c.name, c.country, round(sum(o.total), 2) AS revenue
  FROM customers c JOIN orders o ON o.customer_id = c.id
  WHERE o.status <> 'cancelled'
  GROUP BY c.id, c.name, c.country
  ORDER BY revenue DESC, c.id
  LIMIT 5
]])

local rows = {}
for rank, c in ipairs(top) do
  local recent = aiq.query([[
    SELECT id, CAST(ordered_at AS TEXT) AS ordered_at, status, total
    FROM orders
    WHERE customer_id = ?
    ORDER BY ordered_at DESC, id DESC
    LIMIT 3
  ]], { c.id })
  for _, o in ipairs(recent) do
    rows[#rows + 1] = {
      rank = rank,
      customer = c.name,
      country = c.country,
      revenue = c.revenue,
      order_id = o.id,
      ordered_at = o.ordered_at,
      status = o.status,
      total = o.total,
    }
  end
end

aiq.table(rows, { "rank", "customer", "country", "revenue", "order_id", "ordered_at", "status", "total" })
