//! The `aiq` binary: everything lives in the library; this only hands over the
//! process arguments and turns the outcome into an exit code.

fn main() {
    std::process::exit(aiq::app::main());
}
