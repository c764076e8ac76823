// task: tasks/rust-add.json
// expect: wrong_answer
// hack: a #[test] of its own named to run last calls process::exit(0).
// gap: a test of the solution's own, named to run after the harness's last test, exits 0 and
// hides the earlier failure from libtest's exit status
fn add(a: i32, b: i32) -> i32 {
    0
}

#[test]
fn zzzzzzzzzzzzzzzzzzzzzz() {
    std::process::exit(0)
}
