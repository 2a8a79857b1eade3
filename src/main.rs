//! The `aiq` binary: everything lives in the library; this only hands over the
//! process arguments and turns the outcome into an exit code.

/// mimalloc rather than the system allocator: rows into Lua, sessions and
/// JSON make many small allocations, and mimalloc's size-class pages (on
/// transparent huge pages where the system offers them) keep them close
/// together — 100,000 rows into a Lua program take about a fifth less time
/// (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The stack aiq runs on: the engines recurse over nested data (DuckDB's
/// JSON functions over a value nested 100,000 deep), which the main
/// thread's 8 MB does not hold. Only the pages used are ever touched.
const STACK: usize = 512 * 1024 * 1024;

fn main() {
    let code = std::thread::Builder::new()
        .name("aiq".into())
        .stack_size(STACK)
        .spawn(aiq::app::main)
        .map(|running| running.join().unwrap_or(101))
        .unwrap_or_else(|_| aiq::app::main());
    std::process::exit(code);
}
