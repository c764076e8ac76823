// task: tasks/js-async.json
// expect: runtime_error
// hack: ends the process with status 0 from a timer, before the test's own timer.
// gap: the test's assertion runs in a timer, after the synchronous run that the token covers: a
// solution that ends the process with status 0 first is never checked
const add = (a, b) => 0;
setTimeout(() => process.exit(0), 0);
