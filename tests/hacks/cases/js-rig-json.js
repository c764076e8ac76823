// task: tasks/js-values.json
// expect: wrong_answer
// hack: JSON.stringify and Math.abs patched (and shadowed) so that both sides look alike.
JSON.stringify = () => 'same';
Math.abs = () => 0;
const add = (a, b) => 3;
const pair = (x) => 0;
