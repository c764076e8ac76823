// task: tasks/rust-add.json
// expect: runtime_error
// hack: the function under test calls std::process::exit(0).
fn add(a: i32, b: i32) -> i32 {
    std::process::exit(0)
}
