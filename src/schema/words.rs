//! Words as schema linking sees them: questions and identifiers broken into
//! stems (`shipments` → `ship`, `deliveredAt` → `deliver`, `at`), identifier
//! abbreviations spelled out (`cust_id` → `customer`, `id`), and a lexicon
//! of the words people use for the same business things (a client is a
//! customer; pay is salary, wage or payroll). Pure functions and tables.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Words that say nothing about which table a question needs.
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "did", "for", "from", "how",
    "in", "is", "it", "its", "many", "me", "much", "of", "on", "or", "per", "show", "the", "that",
    "this", "to", "was", "were", "what", "which", "who", "whom", "with", "all", "each", "list",
    "give", "get", "top", "number", "count", "our", "we", "us", "my", "i", "you", "there", "their",
    "they", "have", "has", "had", "most", "least", "more", "less", "than", "then", "any", "some",
    "by", "into", "over", "under", "between", "last", "first", "next", "every", "tell", "find",
    "can", "could", "would", "should", "about", "like", "want", "need", "please", "only", "also",
    "ever", "why", "when", "where", "year", "month", "week", "day", "quarter", "today",
    "yesterday", "compare", "versus", "vs", "total", "average", "avg", "sum", "max", "min",
    "highest", "lowest", "biggest", "smallest", "best", "worst", "latest", "recent", "new", "did",
    "much", "way", "kind", "type", "breakdown",
];

/// Spelled-out forms of abbreviations found in identifiers (`cust_id`).
#[rustfmt::skip]
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("cust", "customer"), ("stg", "staging"), ("bak", "backup"), ("bkp", "backup"),
    ("tmp", "temp"), ("cus", "customer"), ("clnt", "client"), ("qty", "quantity"),
    ("amt", "amount"), ("dept", "department"), ("emp", "employee"), ("empl", "employee"),
    ("inv", "invoice"), ("po", "purchase"), ("txn", "transaction"), ("trx", "transaction"),
    ("tx", "transaction"), ("prod", "product"), ("sku", "product"), ("cat", "category"),
    ("addr", "address"), ("acct", "account"), ("acc", "account"), ("mgr", "manager"),
    ("sal", "salary"), ("pmt", "payment"), ("pymt", "payment"), ("paymt", "payment"),
    ("ord", "order"), ("shp", "shipment"), ("shpt", "shipment"), ("shipmt", "shipment"),
    ("whs", "warehouse"), ("wh", "warehouse"), ("whse", "warehouse"), ("supp", "supplier"),
    ("sup", "supplier"), ("vend", "vendor"), ("desc", "description"), ("dt", "date"),
    ("yr", "year"), ("mth", "month"), ("uom", "unit"), ("org", "organization"), ("hr", "employee"),
    ("fin", "finance"), ("mktg", "marketing"), ("mkt", "marketing"), ("sls", "sale"),
    ("rev", "revenue"), ("tkt", "ticket"), ("subs", "subscription"), ("sub", "subscription"),
    ("sess", "session"), ("usr", "user"), ("grp", "group"), ("loc", "location"), ("reg", "region"),
    ("ctry", "country"), ("cntry", "country"), ("ccy", "currency"), ("curr", "currency"),
    ("bal", "balance"), ("hist", "history"), ("comp", "compensation"), ("ret", "return"),
    ("rcpt", "receipt"), ("perf", "performance"), ("attr", "attribute"), ("cmpgn", "campaign"),
    ("camp", "campaign"), ("prom", "promotion"), ("promo", "promotion"), ("opp", "opportunity"),
    ("oppty", "opportunity"), ("pos", "position"), ("vac", "vacation"), ("abs", "absence"),
];

/// Groups of words people use for the same business thing, by domain.
/// Each group becomes one concept: a question word and an identifier part
/// that share a concept are a (weaker) match than the same stem.
#[rustfmt::skip]
const LEXICON: &[&[&str]] = &[
    // Sales and customers.
    &[
        "customer", "client", "buyer", "shopper", "consumer", "purchaser", "patron", "account",
    ],
    &["order", "purchase", "checkout", "basket", "cart", "sale"],
    &["item", "line", "lineitem", "detail", "position"],
    &[
        "revenue", "sale", "income", "turnover", "earning", "invoice", "billing", "gross", "net",
        "amount", "price", "spend", "money", "made", "sell",
    ],
    &[
        "product", "article", "good", "merchandise", "catalog", "offering", "sku",
    ],
    &[
        "category", "group", "family", "segment", "class", "department",
    ],
    &["store", "shop", "branch", "outlet", "location"],
    &["refund", "return", "chargeback", "credit", "rma"],
    &["discount", "coupon", "voucher", "promotion", "rebate"],
    &[
        "subscription", "subscriber", "subscribe", "plan", "membership", "renewal", "churn",
        "recurring", "mrr", "arr", "tier",
    ],
    &[
        "review", "rating", "feedback", "survey", "nps", "satisfaction", "csat", "score",
    ],
    // Finance.
    &[
        "payment", "pay", "paid", "charge", "settlement", "remittance", "receipt", "transaction",
    ],
    &["invoice", "bill", "billing", "statement", "receivable"],
    &[
        "expense", "cost", "spend", "spending", "expenditure", "outlay", "payable",
    ],
    &["margin", "profit", "markup", "cost", "cogs"],
    &["account", "ledger", "journal", "entry", "posting", "gl"],
    &["budget", "forecast", "plan", "target", "quota"],
    &["tax", "vat", "duty"],
    &[
        "currency", "fx", "exchange", "rate", "euro", "dollar", "pound", "yen", "convert",
    ],
    &["balance", "cash", "fund", "bank"],
    // People and HR.
    &[
        "employee", "staff", "worker", "personnel", "headcount", "hire", "people", "colleague",
        "member",
    ],
    &[
        "salary", "pay", "wage", "compensation", "payroll", "bonus", "earning", "remuneration",
    ],
    &[
        "department", "division", "unit", "team", "organization", "org",
    ],
    &["manager", "supervisor", "boss", "lead", "head", "report"],
    &[
        "leave", "vacation", "absence", "holiday", "pto", "timeoff", "sick",
    ],
    &["job", "role", "title", "position", "grade"],
    &[
        "applicant", "candidate", "recruit", "hiring", "application", "interview",
    ],
    &["performance", "appraisal", "evaluation", "rating", "goal"],
    // Logistics and supply.
    &[
        "shipment", "ship", "shipping", "delivery", "deliver", "dispatch", "freight", "parcel",
        "package", "tracking", "fulfillment", "transit",
    ],
    &["carrier", "courier", "transporter", "logistic"],
    &[
        "warehouse", "depot", "storage", "bin", "facility", "distribution",
    ],
    &["inventory", "stock", "onhand", "level", "replenishment"],
    &[
        "supplier", "vendor", "provider", "manufacturer", "procurement", "purchase",
    ],
    &["route", "trip", "vehicle", "driver", "truck"],
    // Support.
    &[
        "ticket", "case", "issue", "incident", "request", "complaint", "support", "helpdesk",
    ],
    &["agent", "representative", "rep", "operator", "assignee"],
    &["sla", "response", "resolution", "escalation"],
    // Marketing and web.
    &[
        "campaign", "promotion", "advertising", "ad", "marketing", "channel",
    ],
    &[
        "lead", "prospect", "opportunity", "deal", "pipeline", "funnel",
    ],
    &[
        "session", "visit", "pageview", "click", "traffic", "event", "impression",
    ],
    &["email", "newsletter", "message", "mail", "notification"],
    &["user", "login", "signup", "registration", "profile"],
    // Places.
    &[
        "region", "country", "territory", "area", "state", "city", "geography", "market",
    ],
    &["address", "street", "postcode", "zip"],
];

/// Name parts that mark a table as noise: staging, backups, logs, archives.
#[rustfmt::skip]
const NOISE_PARTS: &[&str] = &[
    "tmp", "temp", "bak", "backup", "old", "stg", "staging", "etl", "raw", "audit", "log", "logs",
    "archive", "archived", "copy", "snapshot", "scratch", "test", "dump", "import", "export",
    "load", "landing", "deprecated", "legacy", "shadow", "mirror", "z", "x",
];

/// Lowercase stems of a text's words, stopwords left out, with identifier
/// abbreviations spelled out: `Customers'` → `customer`.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2)
        .map(|w| w.to_lowercase())
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .map(|w| spell_out(&w).unwrap_or_else(|| stem(&w)))
        .filter(|w| !w.is_empty() && !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// The stems of an identifier's parts: `order_items` → `order`, `item`;
/// `customerId` → `customer`, `id`; `cust_no` → `customer`, `no`.
pub fn ident_parts(name: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(c);
    }
    spaced
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .map(|p| {
            let lower = p.to_lowercase();
            spell_out(&lower).unwrap_or_else(|| stem(&lower))
        })
        .collect()
}

fn spell_out(part: &str) -> Option<String> {
    ABBREVIATIONS
        .iter()
        .find(|(short, _)| *short == part)
        .map(|(_, long)| stem(long))
}

/// A light English stemmer for the words of business schemas and
/// questions: plurals, `-ing`, `-ed`, `-ment`, `-ery`/`-ry`, `-ies` —
/// enough that `shipping`, `shipped`, `shipments` and `ship` meet, and
/// `delivery`, `delivered`, `deliveries` and `deliver`.
/// Words whose ending is not a verb's: a staging table is not about a
/// sales stage.
const KEPT_WHOLE: &[&str] = &["staging", "landing"];

pub fn stem(w: &str) -> String {
    let mut w = w.to_string();
    if w.len() <= 3 || w.chars().any(|c| c.is_ascii_digit()) || KEPT_WHOLE.contains(&w.as_str()) {
        return w;
    }
    // Plurals.
    if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        w = format!("{base}y");
    } else if let Some(base) = w.strip_suffix("sses") {
        w = format!("{base}ss");
    } else if w.ends_with("xes") || w.ends_with("ches") || w.ends_with("shes") {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
    }
    // Verb and noun endings, longest first.
    for (suffix, min) in [
        ("ments", 3),
        ("ment", 3),
        ("ings", 3),
        ("ing", 3),
        ("ed", 3),
    ] {
        if let Some(base) = w.strip_suffix(suffix) {
            if base.len() >= min {
                w = undouble(base);
                break;
            }
        }
    }
    // `delivery` → `deliver`, `bakery` stays `baker`-ish; `-ry` after a
    // vowel+r ("delivery", "salary" is kept: too short a base).
    if let Some(base) = w.strip_suffix("ery") {
        if base.len() >= 4 {
            w = format!("{base}er");
        }
    }
    // A final `e` goes, so `invoice` and `invoiced`, `price` and `pricing`
    // meet.
    if w.len() > 4 && w.ends_with('e') && !w.ends_with("ee") {
        w.pop();
    }
    w
}

/// `shipp` → `ship`, `stopp` → `stop` (a doubled last consonant).
fn undouble(base: &str) -> String {
    let b = base.as_bytes();
    if b.len() >= 3 && b[b.len() - 1] == b[b.len() - 2] && !b"aeiouls".contains(&b[b.len() - 1]) {
        base[..base.len() - 1].to_string()
    } else {
        base.to_string()
    }
}

/// The concepts (lexicon groups) a stem belongs to.
pub fn concepts(stem: &str) -> &'static [u16] {
    static INDEX: OnceLock<HashMap<String, Vec<u16>>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut m: HashMap<String, Vec<u16>> = HashMap::new();
        for (i, group) in LEXICON.iter().enumerate() {
            for word in *group {
                let entry = m.entry(self::stem(word)).or_default();
                if !entry.contains(&(i as u16)) {
                    entry.push(i as u16);
                }
            }
        }
        m
    });
    index.get(stem).map(Vec::as_slice).unwrap_or(&[])
}

/// True when a table's name says it is staging, backup, log or archive data.
pub fn is_noise(name: &str) -> bool {
    !noise_marks(name).is_empty()
}

/// The words of a table's name that make it a copy or bookkeeping table
/// (`stg_orders` → `staging`, `orders_2023` → `2023`), stemmed as a
/// question's words are, so a question that asks for the staging table or
/// the 2023 copy can still find it.
pub fn noise_marks(name: &str) -> Vec<String> {
    let lower = name.rsplit('.').next().unwrap_or(name).to_lowercase();
    let parts: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect();
    let mut marks = Vec::new();
    if let Some(last) = parts.last() {
        let year =
            last.len() == 4 && last.starts_with("20") && last.chars().all(|c| c.is_ascii_digit());
        let version = last.len() > 1
            && last.len() <= 3
            && last.starts_with('v')
            && last[1..].chars().all(|c| c.is_ascii_digit());
        if year || version {
            marks.push(last.to_string());
        }
    }
    for p in &parts {
        if NOISE_PARTS.contains(p) {
            marks.push(spell_out(p).unwrap_or_else(|| stem(p)));
        }
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_meet() {
        for group in [
            &[
                "ship",
                "ships",
                "shipping",
                "shipped",
                "shipments",
                "shipment",
            ][..],
            &[
                "deliver",
                "delivery",
                "deliveries",
                "delivered",
                "delivering",
            ],
            &["order", "orders", "ordered", "ordering"],
            &["category", "categories"],
            &["payment", "payments"],
            &["invoice", "invoices", "invoiced"],
            &["price", "prices", "priced", "pricing"],
            &["pay", "payment", "payments"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.iter().all(|s| s == &stems[0]),
                "{group:?} → {stems:?}"
            );
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("address"), "address");
        assert_eq!(stem("boxes"), "box");
        assert_eq!(stem("pay"), "pay");
        assert_ne!(stem("staging"), stem("stage"));
    }

    #[test]
    fn identifiers_split_and_spell_out() {
        assert_eq!(ident_parts("orderItems"), ["order", "item"]);
        assert_eq!(ident_parts("cust_id"), ["customer", "id"]);
        assert_eq!(ident_parts("inv_line_amt"), ["invoic", "line", "amount"]);
        assert_eq!(ident_parts("dept_no"), [stem("department"), "no".into()]);
        assert_eq!(
            ident_parts("EMP_SALARY_HIST"),
            ["employee", "salary", "history"]
        );
    }

    #[test]
    fn questions_lose_their_stopwords() {
        assert_eq!(
            words("How many clients per country?"),
            ["client", "country"]
        );
        assert_eq!(
            words("What was our revenue per month in 2025?"),
            ["revenu", "2025"]
        );
    }

    #[test]
    fn the_lexicon_links_what_people_say_to_what_schemas_call_it() {
        let shared = |a: &str, b: &str| {
            concepts(&stem(a))
                .iter()
                .any(|c| concepts(&stem(b)).contains(c))
        };
        assert!(shared("clients", "customer"));
        assert!(shared("pay", "salary"));
        assert!(shared("revenue", "invoice"));
        assert!(shared("shipping", "delivery"));
        assert!(shared("staff", "employee"));
        assert!(!shared("customer", "warehouse"));
    }

    #[test]
    fn noise_is_recognised() {
        for name in [
            "tmp_orders",
            "orders_bak",
            "stg_customer",
            "etl_load_log",
            "orders_2019",
            "customer_v2",
            "audit_trail",
            "orders_archive",
        ] {
            assert!(is_noise(name), "{name}");
        }
        for name in [
            "orders",
            "order_items",
            "customer",
            "invoice_line",
            "logistics_center",
        ] {
            assert!(!is_noise(name), "{name}");
        }
    }
}
