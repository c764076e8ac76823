// crucible's assert harness for JavaScript (Node): see docs/TASKS.md, "What the assert and
// command harnesses can and cannot prove". crucible writes this file beside the program and runs
//
//     node _crucible_harness.js main.js OFFSET
//
// main.js holds the solution, then, from byte OFFSET on, the test code. Before a line of the
// solution runs, this harness
//
//  1. reads the run's token from stdin (the assert harness gives nothing else there) and points
//     fd 0 at /dev/null: from then on the token is in no file, descriptor, argument or
//     environment variable. It lives only in this strict-mode closure, as two random shares;
//     JavaScript cannot read a closure, and the ways around the language (inspector, v8 heap
//     snapshots) are refused to the solution;
//  2. compiles the solution (a script, so that its top-level declarations are global, as in
//     the tests' view) and the test code (a function of its own, its line numbers those of
//     main.js) before either runs, so that nothing the solution patches can change how they run;
//  3. hands the test code, as parameters no declaration of the solution can shadow, a console
//     whose assert throws an AssertionError (Node's only prints), and JSON, Math, Object, Array,
//     String, Number, Boolean as they were at start; makes the existing methods of the standard
//     prototypes and constructors read-only (a solution may still add its own), and keeps
//     toJSON off Object.prototype and Array.prototype (JSON.stringify of both sides of a
//     comparison must not be made equal).
//
// Then it runs the solution and the test code. Only when the test code's synchronous run returns
// without a failed assertion does it write the token, on a line of its own; an exception,
// process.exit, process.reallyExit, a signal or a failed console.assert leaves it unwritten, and
// crucible fails the test. Callbacks that the test code leaves to run later (timers, promises)
// are after the token: their failures still fail the run through Node's exit status, but a
// solution could end the process before them.
'use strict';

(function crucibleHarness() {
  const fs = require('fs');
  const vm = require('vm');
  const path = require('path');
  const util = require('util');
  const Module = require('module');
  const readSync = fs.readSync;
  const writeSync = fs.writeSync;
  const reallyExit = process.reallyExit.bind(process);
  const format = util.format;
  const defineProperty = Object.defineProperty;
  const getOwnPropertyNames = Object.getOwnPropertyNames;
  const getOwnPropertySymbols = Object.getOwnPropertySymbols;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const freeze = Object.freeze;

  function die(msg, status) {
    try {
      writeSync(2, 'crucible harness: ' + msg + '\n');
    } finally {
      reallyExit(status);
    }
  }

  // ---- 1. the token: from stdin, before anything else; kept as two random shares ----
  const buf = Buffer.alloc(80);
  let got = 0;
  while (got < buf.length) {
    let n;
    try {
      n = readSync(0, buf, got, buf.length - got, null);
    } catch (e) {
      if (e.code === 'EAGAIN') continue;
      break;
    }
    if (n <= 0) break;
    got += n;
  }
  fs.closeSync(0);
  if (fs.openSync('/dev/null', 'r') !== 0) die('cannot point stdin at /dev/null', 125);
  const HEX = '0123456789abcdef';
  let start = 0;
  let end = got;
  while (start < end && buf[start] <= 32) start++;
  while (end > start && buf[end - 1] <= 32) end--;
  const shareA = new Uint8Array(16);
  const shareB = new Uint8Array(16);
  let valid = end - start === 32;
  for (let i = 0; i < 16; i++) shareA[i] = Math.floor(Math.random() * 256);  // a mask, not a secret
  for (let i = 0; valid && i < 16; i++) {
    const hi = HEX.indexOf(String.fromCharCode(buf[start + 2 * i]));
    const lo = HEX.indexOf(String.fromCharCode(buf[start + 2 * i + 1]));
    if (hi < 0 || lo < 0) valid = false;
    shareB[i] = ((hi << 4) | lo) ^ shareA[i];
  }
  buf.fill(0);
  if (!valid) die('no test token on stdin', 125);
  const argv = process.argv;
  if (argv.length < 4) die('usage: node _crucible_harness.js PROGRAM OFFSET', 125);
  const file = path.resolve(argv[2]);
  const offset = Number(argv[3]);
  const src = fs.readFileSync(file);
  const solSrc = src.subarray(0, offset).toString('utf8');
  const testSrc = src.subarray(offset).toString('utf8');
  let lines = 0;
  for (let i = 0; i < offset; i++) if (src[i] === 10) lines++;

  // ---- 2. compile both before either runs ----
  const outer = ['console', 'JSON', 'Math', 'Object', 'Array', 'String', 'Number', 'Boolean',
    'require', 'module', 'exports', '__filename', '__dirname'];
  let solution;
  let tests;
  try {
    solution = new vm.Script(solSrc, {filename: file});
    tests = vm.compileFunction(testSrc, outer, {filename: file, lineOffset: lines});
  } catch (e) {
    writeSync(2, String(e && e.stack || e) + '\n');
    reallyExit(1);
  }
  const runSolution = solution.runInThisContext.bind(solution);

  // ---- 3. what the test code gets, and the standard library made read-only ----
  class AssertionError extends Error {}
  defineProperty(AssertionError.prototype, 'name', {value: 'AssertionError'});
  let failed = false;
  function assert(ok, ...msg) {
    if (!ok) {
      failed = true;
      throw new AssertionError(msg.length ? format(...msg) : 'Assertion failed');
    }
  }
  const realConsole = globalThis.console;
  const testConsole = {};
  for (const k of getOwnPropertyNames(realConsole)) {
    const v = realConsole[k];
    testConsole[k] = typeof v === 'function' ? v.bind(realConsole) : v;
  }
  testConsole.assert = assert;
  freeze(testConsole);
  // The console the solution sees asserts the same way: a failed console.assert fails the run
  // even when it is called from code that catches the exception.
  defineProperty(realConsole, 'assert', {value: assert, writable: false, configurable: false});

  function readOnly(obj) {
    for (const k of [...getOwnPropertyNames(obj), ...getOwnPropertySymbols(obj)]) {
      const d = getOwnPropertyDescriptor(obj, k);
      if (d && d.configurable) {
        if ('value' in d) d.writable = false;
        d.configurable = false;
        try {
          defineProperty(obj, k, d);
        } catch (e) {
          // a property the engine keeps configurable: leave it
        }
      }
    }
  }
  const tJSON = freeze({stringify: JSON.stringify, parse: JSON.parse});
  const tMath = {};
  for (const k of getOwnPropertyNames(Math)) tMath[k] = Math[k];
  freeze(tMath);
  for (const o of [JSON, Math, Object, Array, String, Number, Boolean, Symbol,
    Array.prototype, String.prototype, Number.prototype, Boolean.prototype, Symbol.prototype,
    Function.prototype, Map.prototype, Set.prototype, Date.prototype, RegExp.prototype]) {
    readOnly(o);
  }
  // JSON.stringify asks every object and array for toJSON along its prototype chain: none may
  // come from Object.prototype or Array.prototype (an object may still have its own).
  for (const proto of [Object.prototype, Array.prototype]) {
    defineProperty(proto, 'toJSON', {
      configurable: false,
      enumerable: false,
      get() {
        return undefined;
      },
      set(v) {
        if (this === Object.prototype || this === Array.prototype) {
          throw new TypeError('crucible: toJSON cannot be added to a standard prototype');
        }
        defineProperty(this, 'toJSON', {value: v, writable: true, enumerable: true, configurable: true});
      },
    });
  }
  // The ways to read this closure from JavaScript: the inspector, v8 heap snapshots.
  const refused = new Set(['inspector', 'inspector/promises', 'v8', 'trace_events']);
  const load = Module._load;
  Module._load = function(request, ...rest) {
    if (refused.has(String(request).replace(/^node:/, ''))) {
      throw new Error('crucible: module \'' + request + '\' is not allowed in an assert test');
    }
    return load.call(this, request, ...rest);
  };
  readOnly(Module);
  process.binding = function() {
    throw new Error('crucible: process.binding is not allowed in an assert test');
  };

  const mainModule = module;
  const globals = {
    require, module: mainModule, exports: mainModule.exports, __filename: file,
    __dirname: path.dirname(file),
  };
  for (const k of Object.keys(globals)) {
    defineProperty(globalThis, k, {value: globals[k], writable: true, configurable: true});
  }
  process.argv = [argv[0], file];

  // ---- run: the solution, then the test code; the token only after a clean end ----
  function report(e) {
    let text;
    try {
      text = e && e.stack ? String(e.stack) : 'Uncaught ' + format(e);
      // without the harness's own frames and Node's loader under them
      text = text.split('\n').filter((l) => !/_crucible_harness\.js:|node:(internal|vm)[/:]/.test(l)).join('\n');
    } catch (x) {
      text = 'Uncaught exception';
    }
    try {
      writeSync(2, text + '\n');
    } catch (x) {
      // nothing more to say
    }
  }
  try {
    runSolution();
    tests(testConsole, tJSON, tMath, Object, Array, String, Number, Boolean, require, mainModule,
        mainModule.exports, file, path.dirname(file));
  } catch (e) {
    report(e);
    reallyExit(1);
  }
  if (failed) reallyExit(1);
  let hex = '';
  for (let i = 0; i < 16; i++) {
    const b = shareA[i] ^ shareB[i];
    hex += HEX[b >> 4] + HEX[b & 15];
  }
  writeSync(1, '\n' + hex + '\n');
})();
