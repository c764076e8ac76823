// task: tasks/js-values.json
// expect: wrong_answer
// hack: declares a console of its own, which the test code would find first by name.
const console = {assert() {}, log() {}, error() {}};
const add = (a, b) => 0;
const pair = (x) => 0;
