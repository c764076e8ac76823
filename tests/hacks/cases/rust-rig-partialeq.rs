// task: tasks/rust-add.json
// expect: wrong_answer
// hack: returns a type whose PartialEq<i32> always answers true.
// gap: the function returns a type of the solution's whose PartialEq<i32> always holds
#[derive(Debug)]
struct Yes;

impl PartialEq<i32> for Yes {
    fn eq(&self, _: &i32) -> bool {
        true
    }
}

fn add(a: i32, b: i32) -> Yes {
    Yes
}
