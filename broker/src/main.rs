//! The `strata` binary.
fn main() {
    eprintln!("strata: the broker is not built yet (see issue: the broker)");
    std::process::exit(2);
}
