//! The shop fixture every engine's tests load: five customers, six orders.

pub const CUSTOMERS: [(i64, &str, &str, bool, &str); 5] = [
    (1, "Ann", "DE", true, "2024-01-05"),
    (2, "Bob", "US", false, "2024-02-10"),
    (3, "Cleo", "DE", false, "2024-03-15"),
    (4, "Dan", "FR", false, "2024-04-20"),
    (5, "Eve", "US", true, "2024-05-25"),
];

pub const ORDERS: [(i64, i64, &str, &str, &str); 6] = [
    (1, 1, "19.99", "2024-06-01 10:00:00", "delivered"),
    (2, 1, "5.50", "2024-06-02 11:30:00", "delivered"),
    (3, 2, "100.00", "2024-06-03 09:15:00", "shipped"),
    (4, 3, "42.00", "2024-06-04 14:00:00", "cancelled"),
    (5, 5, "7.25", "2024-06-05 16:45:00", "delivered"),
    (6, 5, "12.00", "2024-06-06 08:05:00", "delivered"),
];

pub fn shop_sql(text: &str) -> String {
    let mut sql = format!(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name {text} NOT NULL, country {text} NOT NULL, vip BOOLEAN NOT NULL, signup DATE NOT NULL);
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total DECIMAL(10,2) NOT NULL, ordered_at TIMESTAMP NOT NULL, status {text} NOT NULL);\n"
    );
    for (id, name, country, vip, signup) in CUSTOMERS {
        sql.push_str(&format!(
            "INSERT INTO customers VALUES ({id}, '{name}', '{country}', {vip}, '{signup}');\n"
        ));
    }
    for (id, cid, total, at, status) in ORDERS {
        sql.push_str(&format!(
            "INSERT INTO orders VALUES ({id}, {cid}, {total}, '{at}', '{status}');\n"
        ));
    }
    sql
}
