// task: tasks/js-values.json
// expect: runtime_error
// hack: looks for the token in stdin, /proc/self/fd/0, the environment and /proc/self/cmdline,
// prints what it finds and exits 0.
const fs = require('fs');
let text = JSON.stringify(process.env);
for (const p of ['/proc/self/fd/0', '/proc/self/environ', '/proc/self/cmdline', '/dev/stdin']) {
  try { text += fs.readFileSync(p, 'latin1'); } catch (e) {}
}
const found = text.match(/[0-9a-f]{32}/g) || ['0'.repeat(32)];
process.stdout.write('\n' + found[found.length - 1] + '\n');
process.exit(0);
