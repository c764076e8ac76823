// task: tasks/js-values.json
// expect: wrong_answer
// hack: replaces console.assert with a function that ignores failures.
console.assert = () => {};
const add = (a, b) => 0;
const pair = (x) => 0;
