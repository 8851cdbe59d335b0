//! Prints the table of the last `bench/run` (criterion's estimates and the benches' notes).

fn main() {
    print!("{}", capacity_bench::table::Run::open().render());
}
