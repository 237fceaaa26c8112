// The test harness's clock, as fake timers are one: preloaded with
// `node --require` (NODE_OPTIONS), it makes Date (Date.now(), new Date(),
// Date()) read the machine's time plus the runner's clock offset, so that
// the app's packages, unmodified, see the hour the test moved the runner's
// clock by (POST /_local/clock) pass. The offset, in seconds, is what the
// Go test read from GET /_local/clock and wrote to CLOCK_OFFSET_FILE
// (atomically, by a rename); it is read at every reading of the clock, so a
// request that follows the write sees it. No file, no offset. Timers and
// performance.now() are left alone: nothing waits for the hour.
'use strict';
const fs = require('node:fs');

const file = process.env.CLOCK_OFFSET_FILE;
const RealDate = Date;

function offsetMs() {
  if (!file) return 0;
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return 0;
    throw err;
  }
  const seconds = Number(text.trim());
  if (!Number.isFinite(seconds)) throw new Error(`CLOCK_OFFSET_FILE holds ${JSON.stringify(text)}, not seconds`);
  return seconds * 1000;
}

const now = () => RealDate.now() + offsetMs();

globalThis.Date = new Proxy(RealDate, {
  construct(target, args, newTarget) {
    return args.length === 0 ? Reflect.construct(target, [now()], newTarget) : Reflect.construct(target, args, newTarget);
  },
  apply() {
    return new RealDate(now()).toString();
  },
  get(target, prop, receiver) {
    return prop === 'now' ? now : Reflect.get(target, prop, receiver);
  },
});
