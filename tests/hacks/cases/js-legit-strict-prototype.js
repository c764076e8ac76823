// task: tasks/js-values.json
// expect: accepted
// hack: none: a correct solution in strict mode that adds a method of its own to a standard
// prototype and a global named like a test helper; it must stay accepted.
'use strict';
String.prototype.twice = function () { return this + this; };
const console2 = console;
const add = (a, b) => Number(String(a).twice().length > 0) * 0 + a + b;
function pair(x) {
  return [x, x + 1];
}
