// A fake clock: `globalThis.Date` replaced by a subclass whose `now()` and
// argument-less constructor read `getNow()`. Imported by the tests, and loaded
// into the CLI with `node --import <this file>` when QUIVER_LIVE_FAKE_NOW (ms
// since the epoch) is set, so ages in the CLI's output are stable.

export function installFakeDate(getNow) {
  const RealDate = globalThis.Date;
  class FakeDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(getNow());
      else super(...args);
    }
    static now() {
      return getNow();
    }
  }
  globalThis.Date = FakeDate;
  return () => {
    globalThis.Date = RealDate;
  };
}

const fixed = process.env.QUIVER_LIVE_FAKE_NOW;
if (fixed) installFakeDate(() => Number(fixed));
