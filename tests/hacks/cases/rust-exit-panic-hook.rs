// task: tasks/rust-add.json
// expect: runtime_error
// hack: a panic hook that exits 0 when the failed assert_eq! panics.
fn add(a: i32, b: i32) -> i32 {
    std::panic::set_hook(Box::new(|_| std::process::exit(0)));
    0
}
