'use strict';
// Which of this package's binaries fits the running Node, as
// `<platform>-<arch>[-<abi>]`. Shared by binding.js and by the loader of a
// vendored bundle (which carries a copy of this file as platform.cjs).
//
// On Linux the C library decides between the -gnu and -musl builds. It is
// read from the running Node's own executable (its ELF interpreter is
// ld-linux-* for glibc, ld-musl-* for musl): one small read, where
// `process.report.getReport()` costs milliseconds. /usr/bin/ldd's text and
// then the report are only asked when the executable does not say.

const fs = require('node:fs');

/** The platforms a binary is built for. */
const SUPPORTED = [
  'darwin-arm64',
  'darwin-x64',
  'linux-arm64-gnu',
  'linux-arm64-musl',
  'linux-x64-gnu',
  'linux-x64-musl',
  'win32-x64-msvc',
];

const PT_INTERP = 3;

/**
 * The program interpreter an ELF executable names (its PT_INTERP segment),
 * or null when the file is no ELF executable or names none (static).
 */
function elfInterpreter(file) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    const head = Buffer.allocUnsafe(4095);
    const got = fs.readSync(fd, head, 0, head.length, 0);
    if (got < 64 || head[0] !== 0x7f || head[1] !== 0x45 || head[2] !== 0x4c || head[3] !== 0x46) return null;
    const is64 = head[4] === 2;
    const le = head[5] === 1;
    // `length` bytes at `offset`: from the first read when it holds them
    // (the usual case), else read (an interpreter patchelf moved to the end).
    const bytes = (offset, length) => {
      if (offset + length <= got) return head.subarray(offset, offset + length);
      const buf = Buffer.allocUnsafe(length);
      if (fs.readSync(fd, buf, 0, length, offset) !== length) throw new Error('short read');
      return buf;
    };
    const u16 = (b, at) => (le ? b.readUInt16LE(at) : b.readUInt16BE(at));
    const u32 = (b, at) => (le ? b.readUInt32LE(at) : b.readUInt32BE(at));
    // ELF64 fields are 8 bytes; offsets and sizes past 4 GiB are not believed.
    const word = (b, at) => (!is64 ? u32(b, at) : u32(b, le ? at + 4 : at) !== 0 ? NaN : u32(b, le ? at : at + 4));
    const phoff = word(head, is64 ? 0x20 : 0x1c);
    const phentsize = u16(head, is64 ? 0x36 : 0x2a);
    const phnum = u16(head, is64 ? 0x38 : 0x2c);
    if (!(phentsize >= (is64 ? 56 : 32) && phnum > 0 && phnum < 256)) return null;
    const table = bytes(phoff, phentsize * phnum);
    for (let i = 0; i < phnum; i++) {
      const at = i * phentsize;
      if (u32(table, at) !== PT_INTERP) continue;
      const offset = word(table, at + (is64 ? 8 : 4));
      const size = word(table, at + (is64 ? 32 : 16));
      if (!(size > 0 && size <= 4096)) return null;
      return bytes(offset, size).latin1Slice(0, size).replace(/\0+$/, '');
    }
    return null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** 'musl' or 'gnu' from an interpreter path, or null when it is neither. */
function libcOfInterpreter(interp) {
  if (!interp) return null;
  // musl's loader is ld-musl-<arch>.so.1, or its libc.so named directly.
  if (interp.includes('musl')) return 'musl';
  if (interp.includes('/ld-linux') || interp.includes('/ld64.so')) return 'gnu';
  return null;
}

function libcOfLdd() {
  try {
    const text = fs.readFileSync('/usr/bin/ldd', 'latin1');
    if (text.includes('musl')) return 'musl';
    if (text.includes('GNU C Library') || text.includes('GLIBC')) return 'gnu';
  } catch {
    // no ldd: ask the report
  }
  return null;
}

function libcOfReport() {
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  if (!report?.header) return null;
  return report.header.glibcVersionRuntime ? 'gnu' : 'musl';
}

/** The C library the running Node uses on Linux: 'gnu' or 'musl'. */
function linuxLibc() {
  return libcOfInterpreter(elfInterpreter(process.execPath)) ?? libcOfLdd() ?? libcOfReport() ?? 'gnu';
}

function platformKey() {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${linuxLibc()}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

module.exports = { SUPPORTED, platformKey, linuxLibc, elfInterpreter, libcOfInterpreter };
