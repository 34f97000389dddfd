// Helpers of the elf tests: the FNV-1a 64 hash both sides compute, the C program that checks a
// packaged object from the inside, and a scratch directory per test.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { HostArch } from '../../lib/elf/index.js'

const FNV_OFFSET = 0xcbf29ce484222325n
const FNV_PRIME = 0x100000001b3n
const U64 = 0xffff_ffff_ffff_ffffn

/** FNV-1a 64 of `bytes`, as 16 lower-case hex digits (the C program prints the same). */
export function fnv1a64(bytes: Uint8Array): string {
  let hash = FNV_OFFSET
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & U64
  return hash.toString(16).padStart(16, '0')
}

/** Deterministic non-ELF bytes: the packagers must not care what the cubin holds. */
export function pattern(length: number): Buffer {
  const bytes = Buffer.alloc(length)
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + 7) & 0xff
  return bytes
}

/** The host arch of this machine, when the packager supports it. */
export function nativeHostArch(): HostArch | null {
  if (process.arch === 'x64') return 'x86_64'
  if (process.arch === 'arm64') return 'aarch64'
  return null
}

/** A C program that declares the packaged symbols and prints what it sees through them. */
export function checkerSource(name: string, withSass: boolean): string {
  const sass = withSass
    ? `extern const char ${name}_sass[];
extern const uint64_t ${name}_sass_size;
`
    : ''
  const printSass = withSass
    ? `  printf("sass_size=%llu sass_strlen=%llu sass_fnv=%016llx\\n",
         (unsigned long long)${name}_sass_size, (unsigned long long)strlen(${name}_sass),
         (unsigned long long)fnv1a64((const unsigned char *)${name}_sass, ${name}_sass_size));
`
    : ''
  return `#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern const unsigned char ${name}_cubin[];
extern const uint64_t ${name}_cubin_size;
${sass}
static uint64_t fnv1a64(const unsigned char *p, uint64_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint64_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

int main(void) {
  printf("cubin_size=%llu cubin_fnv=%016llx cubin_align8=%d\\n",
         (unsigned long long)${name}_cubin_size,
         (unsigned long long)fnv1a64(${name}_cubin, ${name}_cubin_size),
         (int)((uintptr_t)${name}_cubin % 8 == 0));
${printSass}  return 0;
}
`
}

/** What checkerSource's program must print for `cubin` and `sass`. */
export function checkerExpected(cubin: Uint8Array, sass: Uint8Array | null): string {
  let out = `cubin_size=${cubin.length} cubin_fnv=${fnv1a64(cubin)} cubin_align8=1\n`
  if (sass !== null) out += `sass_size=${sass.length} sass_strlen=${sass.length} sass_fnv=${fnv1a64(sass)}\n`
  return out
}

/** A fresh directory removed when `t` ends. */
export function scratchDir(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tileharness-elf-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** What fatbinary keeps of a PTX text (measured): each line without its `//` comment and leading blanks. */
export function fatbinPtxText(ptx: string): string {
  return ptx.split('\n').map((line) => line.replace(/\/\/.*$/, '').trimStart()).join('\n')
}

/** A PTX payload's text: up to the NUL that ends it (the rest is padding). */
export function payloadText(payload: Uint8Array): string {
  const end = payload.indexOf(0)
  return Buffer.from(payload.subarray(0, end === -1 ? payload.length : end)).toString('utf8')
}
