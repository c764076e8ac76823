// task: tasks/js-values.json
// expect: runtime_error
// hack: kills itself on the first call.
const add = (a, b) => process.kill(process.pid, 'SIGKILL');
const pair = (x) => 0;
