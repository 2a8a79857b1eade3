//! The deterministic "demo shop" data set behind `aiq demo` and the
//! `demo_shop` example.
//!
//! Writes one small e-commerce data set (customers, products, orders,
//! order_items) into a folder (created if missing; existing outputs are
//! replaced), in the forms asked for:
//!
//! - `shop.db`: SQLite with typed columns, PRIMARY/FOREIGN KEYs, ANALYZEd
//! - `shop.duckdb`: DuckDB with DECIMAL(10,2) money, DATE, TIMESTAMP, BOOLEAN
//! - `shop_csv/{customers,products,orders,order_items}.csv`: header row
//! - `shop_parquet/{...}.parquet`: exported by DuckDB from `shop.duckdb`
//!
//! At scale 1 there are 1,000 customers, 200 products, 5,000 orders and about
//! 12,000 order items; `--scale N` multiplies every count. Countries,
//! categories and prices are skewed, orders peak in Nov/Dec and dip in Feb, a
//! few power buyers place many orders, some customers none, ~3% of cities are
//! NULL, and every `orders.total` is exactly the sum of its items. Money is
//! computed in integer cents. A fixed-seed SplitMix64 PRNG (no clock) makes
//! every run produce byte-identical CSVs and identical table contents.
//!
//! `aiq demo` writes the SQLite file and the CSV folder; `cargo run
//! --release --example demo_shop -- OUT_DIR [--scale N]` writes all four.

use std::error::Error;
use std::fs;
use std::path::Path;

type Res<T> = Result<T, Box<dyn Error>>;

/// The tables, in the order they are written.
pub const TABLES: [&str; 4] = ["customers", "products", "orders", "order_items"];
const HEADERS: [&str; 4] = [
    "id,name,email,country,city,signup_date,is_vip",
    "id,name,category,price,in_stock",
    "id,customer_id,ordered_at,status,total",
    "id,order_id,product_id,quantity,unit_price",
];

/// Shared by SQLite and DuckDB: every type name here is valid in both.
const SCHEMA: &str = "
CREATE TABLE customers (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL, city TEXT, signup_date DATE NOT NULL,
    is_vip BOOLEAN NOT NULL);
CREATE TABLE products (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL,
    price DECIMAL(10,2) NOT NULL, in_stock BOOLEAN NOT NULL);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
    ordered_at TIMESTAMP NOT NULL, status TEXT NOT NULL, total DECIMAL(10,2) NOT NULL);
CREATE TABLE order_items (
    id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL, unit_price DECIMAL(10,2) NOT NULL);
";

const FIRST: &str = "James Mary John Patricia Robert Jennifer Michael Linda David Elizabeth \
    William Sarah Lukas Emma Leon Sophie Oliver Amelia Hugo Chloe Lars Astrid Pablo Lucia \
    Marco Giulia Liam Olivia Haruto Yui Mateus Isla";
const LAST: &str = "Smith Johnson Williams Brown Jones Miller Davis Wilson Taylor Moore Clark \
    Lewis Muller Schmidt Fischer Weber Martin Bernard Dubois Jansen Bakker Andersson Nilsson \
    Garcia Lopez Rossi Bianchi Tremblay Sato Suzuki Silva Walker";
const ADJECTIVES: &str = "Classic Compact Deluxe Eco Essential Everyday Premium Pro Rustic \
    Smart Sturdy Travel Ultra Vintage Wireless Cozy";
/// (code, weight in percent, cities)
const COUNTRIES: [(&str, u32, &str); 12] = [
    ("US", 30, "New York,Los Angeles,Chicago,Houston,Seattle"),
    ("DE", 15, "Berlin,Hamburg,Munich,Cologne"),
    ("GB", 12, "London,Manchester,Birmingham,Edinburgh"),
    ("FR", 10, "Paris,Lyon,Marseille,Toulouse"),
    ("NL", 6, "Amsterdam,Rotterdam,Utrecht"),
    ("SE", 4, "Stockholm,Gothenburg,Malmö"),
    ("ES", 6, "Madrid,Barcelona,Valencia,Seville"),
    ("IT", 5, "Rome,Milan,Naples,Turin"),
    ("CA", 5, "Toronto,Vancouver,Montreal"),
    ("JP", 3, "Tokyo,Osaka,Yokohama"),
    ("BR", 2, "São Paulo,Rio de Janeiro,Brasília"),
    ("AU", 2, "Sydney,Melbourne,Brisbane"),
];
/// (category, weight, price band shift, nouns)
const CATEGORIES: [(&str, u32, usize, &str); 8] = [
    ("Books", 18, 0, "Novel,Cookbook,Atlas,Guide,Anthology"),
    ("Electronics", 16, 2, "Headphones,Speaker,Charger,Monitor"),
    ("Home", 14, 1, "Lamp,Rug,Cushion,Mirror,Clock"),
    ("Kitchen", 13, 0, "Kettle,Skillet,Knife Set,Blender,Mug"),
    ("Clothing", 12, 1, "Jacket,Sweater,T-Shirt,Scarf,Sneakers"),
    ("Sports", 10, 1, "Yoga Mat,Dumbbell,Bike Helmet,Tent,Ball"),
    ("Toys", 9, 0, "Puzzle,Robot,Board Game,Teddy Bear,Kite"),
    ("Garden", 8, 1, "Planter,Hose,Shears,Bird Feeder,Lantern"),
];
/// Price bands: band i spans BAND_FLOORS[i]..BAND_FLOORS[i + 1] whole dollars
/// (prices end in .99, .49 or .00); weights make prices log-normal-ish.
const BAND_FLOORS: [i64; 8] = [2, 10, 25, 50, 100, 250, 500, 899];
const BAND_WEIGHTS: [u32; 7] = [20, 28, 22, 14, 9, 5, 2];
const STATUSES: &str = "delivered shipped processing cancelled returned";
const STATUS_WEIGHTS: [u32; 5] = [80, 8, 5, 5, 2];
/// Relative order volume per month (Jan..Dec, out of 20) and per hour of day.
const MONTH_WEIGHTS: [u64; 12] = [9, 6, 9, 9, 10, 10, 10, 10, 10, 11, 16, 20];
const HOUR_WEIGHTS: [u32; 24] = [
    2, 1, 1, 1, 1, 2, 3, 5, 7, 8, 9, 10, 11, 10, 9, 9, 10, 11, 12, 13, 12, 10, 7, 4,
];

/// One cell, kept abstract until each writer maps it to its own types.
enum F {
    Int(i64),
    Text(String),
    Null,
    Date(i64),  // days since 1970-01-01
    Ts(i64),    // seconds since 1970-01-01 00:00:00
    Money(i64), // cents
    Bool(bool),
}
type Table = Vec<Vec<F>>;

impl F {
    /// Text form for CSV (NULL = empty field; money as 12.34; true/false).
    fn text(&self) -> String {
        match self {
            F::Int(i) => i.to_string(),
            F::Text(s) => s.clone(),
            F::Null => String::new(),
            F::Date(d) => date_str(*d),
            F::Ts(t) => timestamp_str(*t),
            F::Money(c) => format!("{}.{:02}", c / 100, c % 100),
            F::Bool(b) => b.to_string(),
        }
    }
}

/// SplitMix64: tiny, fast and good enough for demo data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0), via a 128-bit multiply.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    /// Index into a cumulative weight table whose last element is > 0.
    fn cumulative(&mut self, cum: &[u64]) -> usize {
        let r = self.below(cum[cum.len() - 1]);
        cum.partition_point(|&w| w <= r)
    }
    fn weighted<const N: usize>(&mut self, weights: [u32; N]) -> usize {
        let mut r = self.below(weights.iter().map(|&w| u64::from(w)).sum());
        for (i, w) in weights.into_iter().enumerate() {
            if r < u64::from(w) {
                return i;
            }
            r -= u64::from(w);
        }
        N - 1
    }
}

/// (year, month, day) for days since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let (y, d) = (
        yoe + era * 400 + i64::from(m <= 2),
        doy - (153 * mp + 2) / 5 + 1,
    );
    (y, m, d)
}
fn date_str(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}
fn timestamp_str(secs: i64) -> String {
    let (day, s) = (date_str(secs.div_euclid(86_400)), secs.rem_euclid(86_400));
    format!("{day} {:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The four tables, in TABLES order; ids are 1-based and dense.
fn generate(scale: usize) -> [Table; 4] {
    let mut rng = Rng(42);
    let split = |s: &'static str, sep| s.split(sep).collect::<Vec<_>>();
    let (first, last, adjectives) = (split(FIRST, ' '), split(LAST, ' '), split(ADJECTIVES, ' '));
    let statuses = split(STATUSES, ' ');
    let cities: Vec<_> = COUNTRIES.iter().map(|c| split(c.2, ',')).collect();
    let nouns: Vec<_> = CATEGORIES.iter().map(|c| split(c.3, ',')).collect();
    // Days since 1970-01-01 of 2022-01-01, 2023-01-01 and 2025-12-31.
    let (signup_lo, order_lo, last_day) = (18_993, 19_358, 20_453);

    let (mut customers, mut signups, mut buy_weight) = (Vec::new(), Vec::new(), Vec::new());
    let mut acc = 0u64;
    for id in 1..=1000 * scale as i64 {
        let (fname, lname) = (rng.pick(&first), rng.pick(&last));
        let country = rng.weighted(COUNTRIES.map(|c| c.1));
        let city = F::Text(rng.pick(&cities[country]).into());
        let signup = rng.range(signup_lo, last_day);
        // ~12% never order, ~2% are power buyers, the rest order now and then;
        // the chance also grows with the time since signing up.
        let kind = rng.below(100);
        let w = [0, 40, 1 + rng.below(6)][usize::from(kind >= 12) + usize::from(kind >= 14)];
        acc += w * (last_day - signup.max(order_lo) + 1) as u64;
        buy_weight.push(acc);
        signups.push(signup);
        let email = format!("{fname}.{lname}{id}@example.com").to_lowercase();
        customers.push(vec![
            F::Int(id),
            F::Text(format!("{fname} {lname}")),
            F::Text(email),
            F::Text(COUNTRIES[country].0.into()),
            if rng.percent(3) { F::Null } else { city },
            F::Date(signup),
            F::Bool((12..14).contains(&kind) || rng.percent(6)),
        ]);
    }

    let (mut products, mut prices, mut popularity) = (Vec::new(), Vec::new(), Vec::new());
    let mut acc = 0u64;
    for id in 1..=200 * scale as i64 {
        let cat = rng.weighted(CATEGORIES.map(|c| c.1));
        let band = (rng.weighted(BAND_WEIGHTS) + CATEGORIES[cat].2).min(BAND_WEIGHTS.len() - 1);
        let dollars = rng.range(BAND_FLOORS[band], BAND_FLOORS[band + 1] - 1);
        let cents = [99, 99, 99, 99, 99, 49, 0][rng.below(7) as usize];
        let mut price = (dollars * 100 + cents).max(299);
        if band == BAND_WEIGHTS.len() - 1 && rng.percent(10) {
            price = 89_900;
        }
        let name = format!("{} {}", rng.pick(&adjectives), rng.pick(&nouns[cat]));
        // Cheap items and a few bestsellers sell more often.
        let bestseller = if rng.percent(5) { 8 } else { 1 };
        acc += bestseller * (BAND_WEIGHTS.len() - band) as u64 * (1 + rng.below(4));
        popularity.push(acc);
        prices.push(price);
        products.push(vec![
            F::Int(id),
            F::Text(name),
            F::Text(CATEGORIES[cat].0.into()),
            F::Money(price),
            F::Bool(rng.percent(90)),
        ]);
    }

    let mut placed = Vec::new(); // (ordered_at, customer index, status)
    for _ in 0..5000 * scale {
        let c = rng.cumulative(&buy_weight);
        // Seasonality by rejection sampling: keep a day with its month's weight.
        let day = loop {
            let day = rng.range(signups[c].max(order_lo), last_day);
            if rng.below(20) < MONTH_WEIGHTS[civil_from_days(day).1 as usize - 1] {
                break day;
            }
        };
        let secs = rng.weighted(HOUR_WEIGHTS) as i64 * 3600 + rng.range(0, 3599);
        let status = F::Text(statuses[rng.weighted(STATUS_WEIGHTS)].into());
        placed.push((day * 86_400 + secs, c, status));
    }
    placed.sort_by_key(|p| p.0); // order ids follow time, as in a real shop

    let (mut orders, mut items, mut chosen) = (Vec::new(), Vec::new(), Vec::new());
    for (order_id, (at, c, status)) in (1..).zip(placed) {
        let mut total = 0;
        chosen.clear();
        for _ in 0..=rng.weighted([30, 30, 20, 12, 8]) {
            let p = loop {
                let p = rng.cumulative(&popularity);
                if !chosen.contains(&p) {
                    break p;
                }
            };
            chosen.push(p);
            let quantity = rng.weighted([65, 20, 8, 4, 3]) as i64 + 1;
            total += quantity * prices[p];
            let ids = [items.len() as i64 + 1, order_id, p as i64 + 1, quantity].map(F::Int);
            items.push(ids.into_iter().chain([F::Money(prices[p])]).collect());
        }
        let (id, cust) = (F::Int(order_id), F::Int(c as i64 + 1));
        orders.push(vec![id, cust, F::Ts(at), status, F::Money(total)]);
    }
    [customers, products, orders, items]
}

fn write_csv(path: &Path, header: &str, rows: &Table) -> Res<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(header.split(','))?;
    for row in rows {
        w.write_record(row.iter().map(F::text))?;
    }
    Ok(w.flush()?)
}

fn write_sqlite(path: &Path, tables: &[Table; 4]) -> Res<()> {
    use rusqlite::types::Value as V;
    let mut conn = rusqlite::Connection::open(path)?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA)?;
    for (name, rows) in TABLES.iter().zip(tables) {
        let marks = vec!["?"; rows.first().map_or(0, Vec::len)].join(", ");
        let mut st = tx.prepare(&format!("INSERT INTO {name} VALUES ({marks})"))?;
        for row in rows {
            st.execute(rusqlite::params_from_iter(row.iter().map(|f| match f {
                F::Int(i) => V::Integer(*i),
                F::Null => V::Null,
                F::Money(c) => V::Real(*c as f64 / 100.0),
                F::Bool(b) => V::Integer(i64::from(*b)),
                _ => V::Text(f.text()), // dates and timestamps as ISO text
            })))?;
        }
    }
    // SQLite does not index foreign keys by itself; DuckDB does.
    tx.execute_batch(
        "CREATE INDEX orders_customer_id ON orders(customer_id);
         CREATE INDEX order_items_order_id ON order_items(order_id);
         CREATE INDEX order_items_product_id ON order_items(product_id);",
    )?;
    tx.commit()?;
    Ok(conn.execute_batch("ANALYZE;")?)
}

fn write_duckdb(path: &Path, tables: &[Table; 4]) -> Res<duckdb::Connection> {
    use duckdb::types::{Decimal, TimeUnit, Value as V};
    let conn = duckdb::Connection::open(path)?;
    conn.execute_batch(SCHEMA)?;
    for (name, rows) in TABLES.iter().zip(tables) {
        let mut app = conn.appender(name)?;
        for row in rows {
            let mut values = Vec::with_capacity(row.len());
            for f in row {
                values.push(match f {
                    F::Int(i) => V::BigInt(*i),
                    F::Text(s) => V::Text(s.clone()),
                    F::Null => V::Null,
                    F::Date(d) => V::Date32(i32::try_from(*d)?),
                    F::Ts(t) => V::Timestamp(TimeUnit::Second, *t),
                    F::Money(c) => V::Decimal(Decimal::new(10, 2, i128::from(*c))?),
                    F::Bool(b) => V::Boolean(*b),
                });
            }
            app.append_row(duckdb::appender_params_from_iter(values))?;
        }
        app.flush()?;
    }
    Ok(conn)
}

/// Prefixes an error with the path it concerns.
fn at<T>(path: &Path, r: Result<T, impl std::fmt::Display>) -> Res<T> {
    r.map_err(|e| format!("{}: {e}", path.display()).into())
}

fn remove_if_exists(path: &Path) -> Res<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => at(path, Err(e)),
        _ => Ok(()),
    }
}

/// Which forms [`write`] produces besides SQLite and CSV.
#[derive(Debug, Clone, Copy, Default)]
pub struct Forms {
    /// `shop.duckdb` and `shop_parquet/`.
    pub duckdb: bool,
}

/// Writes the shop at `scale` (1 = 1,000 customers) into `out`; returns a
/// line per file written.
pub fn write(out: &Path, scale: usize, forms: Forms) -> Result<Vec<String>, String> {
    write_all(out, scale.max(1), forms).map_err(|e| e.to_string())
}

fn write_all(out: &Path, scale: usize, forms: Forms) -> Res<Vec<String>> {
    let mut written = Vec::new();
    let tables = generate(scale);
    let total: usize = tables.iter().map(Vec::len).sum();
    let (csv_dir, pq_dir) = (out.join("shop_csv"), out.join("shop_parquet"));
    at(&csv_dir, fs::create_dir_all(&csv_dir))?;

    for ((name, header), rows) in TABLES.iter().zip(HEADERS).zip(&tables) {
        let path = csv_dir.join(format!("{name}.csv"));
        at(&path, write_csv(&path, header, rows))?;
        written.push(format!("wrote {} ({} rows)", path.display(), rows.len()));
    }

    let db = out.join("shop.db");
    for suffix in ["", "-journal", "-wal", "-shm"] {
        remove_if_exists(&out.join(format!("shop.db{suffix}")))?;
    }
    at(&db, write_sqlite(&db, &tables))?;
    written.push(format!("wrote {} (4 tables, {total} rows)", db.display()));
    if !forms.duckdb {
        return Ok(written);
    }

    at(&pq_dir, fs::create_dir_all(&pq_dir))?;
    let duck = out.join("shop.duckdb");
    for suffix in ["", ".wal"] {
        remove_if_exists(&out.join(format!("shop.duckdb{suffix}")))?;
    }
    let conn = at(&duck, write_duckdb(&duck, &tables))?;
    written.push(format!("wrote {} (4 tables, {total} rows)", duck.display()));

    for (name, rows) in TABLES.iter().zip(&tables) {
        let path = pq_dir.join(format!("{name}.parquet"));
        remove_if_exists(&path)?;
        let lit = path.display().to_string().replace('\'', "''");
        let sql = format!("COPY (SELECT * FROM {name} ORDER BY id) TO '{lit}' (FORMAT parquet)");
        at(&path, conn.execute_batch(&sql))?;
        written.push(format!("wrote {} ({} rows)", path.display(), rows.len()));
    }
    at(&duck, conn.close().map_err(|(_, e)| e))?;
    Ok(written)
}
