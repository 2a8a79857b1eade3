//! The `aiq` binary: everything lives in the library; this only hands over the
//! process arguments and turns the outcome into an exit code.

/// mimalloc rather than the system allocator: rows into Lua, sessions and
/// JSON make many small allocations, and mimalloc's size-class pages (on
/// transparent huge pages where the system offers them) keep them close
/// together — 100,000 rows into a Lua program take about a fifth less time
/// (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(aiq::app::main());
}
