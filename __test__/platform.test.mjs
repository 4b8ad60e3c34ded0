// platform.js: which binary fits the running Node, and on Linux which C
// library it runs on, read from the executable's ELF interpreter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { SUPPORTED, platformKey, linuxLibc, elfInterpreter, libcOfInterpreter } = require('../platform.js');

/**
 * A minimal ELF file: header, `phnum` program headers (the one at
 * `interpIndex` a PT_INTERP pointing at `interp`, placed at `interpAt`).
 */
function elf({ bits = 64, little = true, interp = '/lib64/ld-linux-x86-64.so.2', interpAt = null, phnum = 3, interpIndex = 1 } = {}) {
  const is64 = bits === 64;
  const ehsize = is64 ? 64 : 52;
  const phentsize = is64 ? 56 : 32;
  const phoff = ehsize;
  const text = interp === null ? null : Buffer.from(interp + '\0', 'latin1');
  const at = interpAt ?? phoff + phentsize * phnum;
  const size = Math.max(at + (text?.length ?? 0), phoff + phentsize * phnum);
  const b = Buffer.alloc(size);
  b.write('\x7fELF', 0, 'latin1');
  b[4] = is64 ? 2 : 1;
  b[5] = little ? 1 : 2;
  b[6] = 1;
  const u16 = (v, o) => (little ? b.writeUInt16LE(v, o) : b.writeUInt16BE(v, o));
  const u32 = (v, o) => (little ? b.writeUInt32LE(v, o) : b.writeUInt32BE(v, o));
  const word = (v, o) => (is64 ? (little ? b.writeBigUInt64LE(BigInt(v), o) : b.writeBigUInt64BE(BigInt(v), o)) : u32(v, o));
  u16(3, 16); // ET_DYN
  word(phoff, is64 ? 0x20 : 0x1c);
  u16(phentsize, is64 ? 0x36 : 0x2a);
  u16(phnum, is64 ? 0x38 : 0x2c);
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize;
    const isInterp = text !== null && i === interpIndex;
    u32(isInterp ? 3 : 1, p); // PT_INTERP or PT_LOAD
    if (isInterp) {
      word(at, p + (is64 ? 8 : 4));
      word(text.length, p + (is64 ? 32 : 16));
    }
  }
  if (text) text.copy(b, at);
  return b;
}

test('elfInterpreter reads PT_INTERP from 64- and 32-bit, little- and big-endian executables', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-platform-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const cases = [
    [{}, '/lib64/ld-linux-x86-64.so.2'],
    [{ interp: '/lib/ld-musl-x86_64.so.1' }, '/lib/ld-musl-x86_64.so.1'],
    [{ bits: 32, interp: '/lib/ld-linux.so.2' }, '/lib/ld-linux.so.2'],
    [{ little: false, interp: '/lib64/ld64.so.1' }, '/lib64/ld64.so.1'],
    [{ bits: 32, little: false, interp: '/lib/ld-musl-mips.so.1' }, '/lib/ld-musl-mips.so.1'],
    // patchelf puts a new interpreter at the end of the file, past the first page
    [{ interp: '/opt/musl/usr/lib/x86_64-linux-musl/libc.so', interpAt: 300_000 }, '/opt/musl/usr/lib/x86_64-linux-musl/libc.so'],
    [{ interpIndex: 0 }, '/lib64/ld-linux-x86-64.so.2'],
    [{ interp: null }, null], // static: no PT_INTERP
  ];
  cases.forEach(([spec, want], i) => {
    const file = path.join(dir, `elf-${i}`);
    fs.writeFileSync(file, elf(spec));
    assert.equal(elfInterpreter(file), want, JSON.stringify(spec));
  });
  fs.writeFileSync(path.join(dir, 'script'), '#!/bin/sh\necho hi\n'.repeat(10));
  assert.equal(elfInterpreter(path.join(dir, 'script')), null);
  fs.writeFileSync(path.join(dir, 'short'), Buffer.from('\x7fELF\x02\x01', 'latin1'));
  assert.equal(elfInterpreter(path.join(dir, 'short')), null);
  assert.equal(elfInterpreter(path.join(dir, 'absent')), null);
});

test('libcOfInterpreter: ld-musl and musl libc.so are musl; ld-linux and ld64.so are glibc; else unknown', () => {
  assert.equal(libcOfInterpreter('/lib/ld-musl-x86_64.so.1'), 'musl');
  assert.equal(libcOfInterpreter('/lib/ld-musl-aarch64.so.1'), 'musl');
  assert.equal(libcOfInterpreter('/usr/lib/x86_64-linux-musl/libc.so'), 'musl');
  assert.equal(libcOfInterpreter('/lib64/ld-linux-x86-64.so.2'), 'gnu');
  assert.equal(libcOfInterpreter('/lib/ld-linux-aarch64.so.1'), 'gnu');
  assert.equal(libcOfInterpreter('/nix/store/abc-glibc-2.39/lib/ld-linux-x86-64.so.2'), 'gnu');
  assert.equal(libcOfInterpreter('/lib64/ld64.so.2'), 'gnu');
  assert.equal(libcOfInterpreter('/system/bin/linker64'), null);
  assert.equal(libcOfInterpreter(null), null);
});

test('platformKey names a supported platform here, and on Linux agrees with process.report', { skip: process.platform !== 'linux' && 'not Linux' }, () => {
  const key = platformKey();
  assert.ok(SUPPORTED.includes(key), key);
  const report = process.report.getReport();
  assert.equal(linuxLibc(), report.header.glibcVersionRuntime ? 'gnu' : 'musl');
  assert.equal(key, `linux-${process.arch}-${linuxLibc()}`);
});

test('the running Node names its interpreter (no report needed on this host)', { skip: process.platform !== 'linux' && 'not Linux' }, () => {
  const interp = elfInterpreter(process.execPath);
  assert.notEqual(libcOfInterpreter(interp), null, `interpreter ${interp}`);
});
