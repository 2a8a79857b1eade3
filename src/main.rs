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

/// The stack of threads the engines start themselves (DuckDB's workers):
/// DuckDB works out a JSON value's structure by recursion on them. Rust's
/// own threads name their stack size and are not changed.
const ENGINE_THREAD_STACK: usize = 64 * 1024 * 1024;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn engine_thread_stacks() {
    extern "C" {
        fn pthread_setattr_default_np(attr: *const libc::pthread_attr_t) -> libc::c_int;
    }
    // SAFETY: the attribute is initialised before use and destroyed after
    // glibc has copied it; no other thread runs yet.
    unsafe {
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
        if libc::pthread_attr_init(attr.as_mut_ptr()) != 0 {
            return;
        }
        if libc::pthread_attr_setstacksize(attr.as_mut_ptr(), ENGINE_THREAD_STACK) == 0 {
            pthread_setattr_default_np(attr.as_ptr());
        }
        libc::pthread_attr_destroy(attr.as_mut_ptr());
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn engine_thread_stacks() {}

fn main() {
    engine_thread_stacks();
    let code = std::thread::Builder::new()
        .name("aiq".into())
        .stack_size(STACK)
        .spawn(aiq::app::main)
        .map(|running| running.join().unwrap_or(101))
        .unwrap_or_else(|_| aiq::app::main());
    std::process::exit(code);
}
