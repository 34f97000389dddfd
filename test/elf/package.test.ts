// packageHostObject, checked from outside: readelf and objdump read every object without a complaint
// and see the sections, symbols and bytes the issue asks for; on the native host a C program linked
// with the object by cc (no warnings) reads the cubin and SASS through the symbols and prints hashes
// equal to ours. The same rows run for x86_64 and aarch64 (linked only where a linker exists).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import {
  gnuPropertyNote, hostObjectSymbols, packageCoffObject, packageHostObject, type HostArch, type HostObjectInput,
} from '../../lib/elf/index.js'
import { examplePtx } from '../../lib/ptx/index.js'
import { withPollutedPrototype } from '../helpers.js'
import { assemble, skipWithoutPtxas } from '../ptx/ptxas.js'
import { needs, run, which, type RunResult } from '../ptx/run.js'
import { checkerExpected, checkerSource, nativeHostArch, pattern, scratchDir } from './host.js'

const ARCHES: HostArch[] = ['x86_64', 'aarch64']
const MACHINE_LINE: Record<HostArch, RegExp> = {
  x86_64: /Machine:\s+Advanced Micro Devices X86-64/,
  aarch64: /Machine:\s+AArch64/,
}

/** What `readelf -n` says of the object's one property, per host. */
const NOTE_LINE: Record<HostArch, RegExp> = {
  x86_64: /GNU\s+0x00000010\s+NT_GNU_PROPERTY_TYPE_0\n\s+Properties: x86 feature: IBT, SHSTK\n/,
  aarch64: /GNU\s+0x00000010\s+NT_GNU_PROPERTY_TYPE_0\n\s+Properties: AArch64 feature: BTI, PAC\n/,
}

interface Row {
  name: string
  cubin: Uint8Array
  sass?: string | Uint8Array
}

// Lengths around the 8-byte alignment of the size symbols; SASS as text, bytes, empty and UTF-8.
const rows: Row[] = [
  { name: 'one', cubin: pattern(1) },
  { name: 'seven', cubin: pattern(7), sass: '' },
  { name: 'eight', cubin: pattern(8), sass: 'code for sm_100\n\tEXIT ;\n' },
  { name: '_nine_9', cubin: pattern(9), sass: Buffer.from('\tNOP ;\n') },
  { name: 'Page', cubin: pattern(4097), sass: 'utf-8 → µ\n' },
  // A view into a larger buffer: only the view's bytes may be packaged.
  { name: 'view', cubin: pattern(64).subarray(3, 40), sass: pattern(90).subarray(1, 50).map((b) => (b === 0 ? 1 : b)) },
]

function sassBytes(sass: string | Uint8Array | undefined): Buffer | null {
  if (sass === undefined) return null
  return typeof sass === 'string' ? Buffer.from(sass, 'utf8') : Buffer.from(sass)
}

/** The bytes of section `name`, from `readelf -x`'s hex dump (columns 13..48 of each line). */
function sectionBytes(object: string, name: string): Buffer {
  const dump = run('readelf', ['-x', name, object]).stdout.toString('utf8')
  const hex = dump.split('\n').filter((l) => /^\s+0x[0-9a-f]+ /.test(l)).map((l) => l.slice(13, 48).replace(/ /g, '')).join('')
  return Buffer.from(hex, 'hex')
}

interface SectionLine { index: number; type: string; flags: string; align: number; size: number }

function sections(object: string): Map<string, SectionLine> {
  const out = new Map<string, SectionLine>()
  for (const line of run('readelf', ['-S', '-W', object]).stdout.toString('utf8').split('\n')) {
    // [Nr] Name Type Address Off Size ES Flg Lk Inf Al
    const m = /^\s+\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([A-Za-z]*)\s+\d+\s+\d+\s+(\d+)$/.exec(line)
    if (m !== null) out.set(m[2] ?? '', { index: Number(m[1]), type: m[3] ?? '', size: parseInt(m[4] ?? '', 16), flags: m[5] ?? '', align: Number(m[6]) })
  }
  return out
}

interface SymbolLine { value: number; size: number; type: string; bind: string; vis: string; ndx: string }

function symbols(object: string): Map<string, SymbolLine> {
  const out = new Map<string, SymbolLine>()
  for (const line of run('readelf', ['-s', '-W', object]).stdout.toString('utf8').split('\n')) {
    const m = /^\s+\d+:\s+([0-9a-f]+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$/.exec(line)
    if (m !== null) out.set(m[7] ?? '', { value: parseInt(m[1] ?? '', 16), size: Number(m[2]), type: m[3] ?? '', bind: m[4] ?? '', vis: m[5] ?? '', ndx: m[6] ?? '' })
  }
  return out
}

function expectedRodata(cubin: Uint8Array, sass: Buffer | null): Buffer {
  const padded = Math.ceil(cubin.length / 8) * 8
  const out = Buffer.alloc(padded + (sass === null ? 8 : 16))
  out.set(cubin, 0)
  out.writeBigUInt64LE(BigInt(cubin.length), padded)
  if (sass !== null) out.writeBigUInt64LE(BigInt(sass.length), padded + 8)
  return out
}

t.test('readelf and objdump read every object without a complaint', { skip: needs('readelf', 'objdump') }, async (t) => {
  const dir = scratchDir(t)
  for (const hostArch of ARCHES) {
    for (const row of rows) {
      const label = `${hostArch} ${row.name}`
      const object = join(dir, `${row.name}-${hostArch}.o`)
      const input: HostObjectInput = { cubin: row.cubin, name: row.name, hostArch, ...(row.sass === undefined ? {} : { sass: row.sass }) }
      writeFileSync(object, packageHostObject(input))
      const sass = sassBytes(row.sass)

      const all = run('readelf', ['-a', '-W', object])
      t.equal(all.exitCode, 0, `${label}: readelf -a -W exits 0`)
      t.equal(all.stderr.toString('utf8'), '', `${label}: readelf -a -W has nothing on stderr`)
      const dump = run('objdump', ['-x', object])
      t.equal(dump.exitCode, 0, `${label}: objdump -x exits 0`)
      t.equal(dump.stderr.toString('utf8'), '', `${label}: objdump -x has nothing on stderr`)

      const header = run('readelf', ['-h', object]).stdout.toString('utf8')
      t.match(header, MACHINE_LINE[hostArch], `${label}: machine`)
      t.match(header, /Class:\s+ELF64/, `${label}: ELF64`)
      t.match(header, /Data:\s+2's complement, little endian/, `${label}: little-endian`)
      t.match(header, /Type:\s+REL \(Relocatable file\)/, `${label}: relocatable`)

      const secs = sections(object)
      t.match(secs.get('.rodata'), { type: 'PROGBITS', flags: 'A', align: 8 }, `${label}: .rodata is read-only, allocated, 8-aligned`)
      t.match(secs.get('.note.GNU-stack'), { type: 'PROGBITS', flags: '', size: 0 }, `${label}: .note.GNU-stack`)
      t.match(secs.get('.note.gnu.property'), { type: 'NOTE', flags: 'A', align: 8, size: 32 }, `${label}: .note.gnu.property`)
      t.match(run('readelf', ['-n', object]).stdout.toString('utf8'), NOTE_LINE[hostArch], `${label}: readelf -n reads the feature bits`)
      if (sass === null) t.notOk(secs.has('.nvdisasm'), `${label}: no .nvdisasm without SASS`)
      else t.match(secs.get('.nvdisasm'), { type: 'PROGBITS', flags: 'A', size: sass.length + 1 }, `${label}: .nvdisasm`)

      const syms = symbols(object)
      const names = hostObjectSymbols(row.name, sass !== null)
      t.same([...syms.keys()].filter((n) => n !== '').sort(), [...names].sort(), `${label}: exactly the issue's symbols`)
      const rodataIndex = String(secs.get('.rodata')?.index)
      const global = { type: 'OBJECT', bind: 'GLOBAL', vis: 'DEFAULT' }
      t.match(syms.get(`${row.name}_cubin`), { ...global, value: 0, size: row.cubin.length, ndx: rodataIndex }, `${label}: _cubin`)
      t.match(syms.get(`${row.name}_cubin_size`), { ...global, value: Math.ceil(row.cubin.length / 8) * 8, size: 8, ndx: rodataIndex }, `${label}: _cubin_size`)
      if (sass !== null) {
        t.match(syms.get(`${row.name}_sass`), { ...global, value: 0, size: sass.length + 1 }, `${label}: _sass`)
        t.match(syms.get(`${row.name}_sass_size`), { ...global, size: 8, ndx: rodataIndex }, `${label}: _sass_size`)
      }

      t.ok(sectionBytes(object, '.rodata').equals(expectedRodata(row.cubin, sass)), `${label}: .rodata holds the cubin and the sizes`)
      if (sass !== null) {
        t.ok(sectionBytes(object, '.nvdisasm').equals(Buffer.concat([sass, Buffer.alloc(1)])), `${label}: .nvdisasm holds the SASS and a NUL`)
      }
    }
  }
})

const native = nativeHostArch()

/** Links `object` with the checker program by `compiler`, warnings fatal; returns the program path. */
function linkChecker(compiler: string, dir: string, object: string, name: string, withSass: boolean): { program: string; linked: RunResult } {
  const source = join(dir, `${name}-checker.c`)
  const program = join(dir, `${name}-checker`)
  writeFileSync(source, checkerSource(name, withSass))
  const linked = run(compiler, ['-std=c11', '-Wall', '-Wextra', '-Werror', '-Wl,--fatal-warnings', '-o', program, source, object])
  return { program, linked }
}

t.test(`a C program linked with the object reads it (${native ?? 'no native arch'})`, {
  skip: native === null ? `the packager has no ELF host arch for ${process.arch}` : needs('cc'),
}, async (t) => {
  const hostArch = native as HostArch
  const dir = scratchDir(t)
  for (const row of rows) {
    const object = join(dir, `${row.name}.o`)
    writeFileSync(object, packageHostObject({ cubin: row.cubin, name: row.name, hostArch, ...(row.sass === undefined ? {} : { sass: row.sass }) }))
    const sass = sassBytes(row.sass)
    const { program, linked } = linkChecker('cc', dir, object, row.name, sass !== null)
    t.equal(linked.exitCode, 0, `${row.name}: cc links`, { stderr: linked.stderr.toString('utf8') })
    t.equal(linked.stderr.toString('utf8'), '', `${row.name}: and warns about nothing`)
    const ran = run(program, [])
    t.equal(ran.exitCode, 0, `${row.name}: the program runs`)
    t.equal(ran.stdout.toString('utf8'), checkerExpected(row.cubin, sass), `${row.name}: sizes and FNV-1a 64 hashes match`)
  }
})

t.test('a real cubin survives the round trip through cc', { skip: native === null ? `no ELF host arch for ${process.arch}` : skipWithoutPtxas || needs('cc') }, async (t) => {
  const hostArch = native as HostArch
  const dir = scratchDir(t)
  for (const [kernel, gpu] of [['reduce', 'sm_100'], ['cluster', 'sm_121']] as const) {
    const { cubin } = assemble(examplePtx(kernel, gpu), gpu)
    if (cubin === null) throw new Error(`ptxas produced no cubin for ${kernel} ${gpu}`)
    const name = `${kernel}_${gpu}`
    const sass = `// stand-in SASS text for ${name}: nvdisasm is not installed here\n`
    const object = join(dir, `${name}.o`)
    writeFileSync(object, packageHostObject({ cubin, sass, name, hostArch }))
    const { program, linked } = linkChecker('cc', dir, object, name, true)
    t.equal(linked.exitCode, 0, `${name}: cc links`, { stderr: linked.stderr.toString('utf8') })
    t.equal(linked.stderr.toString('utf8'), '', `${name}: and warns about nothing`)
    const ran = run(program, [])
    t.equal(ran.stdout.toString('utf8'), checkerExpected(cubin, Buffer.from(sass)), `${name}: hashes match`)
  }
})

t.test('.note.GNU-stack is what keeps the linker quiet', { skip: native === null ? `no ELF host arch for ${process.arch}` : needs('cc', 'objcopy') }, async (t) => {
  const dir = scratchDir(t)
  const object = join(dir, 'stack.o')
  const stripped = join(dir, 'stack-stripped.o')
  writeFileSync(object, packageHostObject({ cubin: pattern(16), name: 'stack', hostArch: native as HostArch }))
  t.equal(run('objcopy', ['--remove-section', '.note.GNU-stack', object, stripped]).exitCode, 0, 'objcopy removes the note')
  writeFileSync(join(dir, 'stack.c'), checkerSource('stack', false))
  const linked = run('cc', ['-o', join(dir, 'stack'), join(dir, 'stack.c'), stripped])
  t.match(linked.stderr.toString('utf8'), /missing \.note\.GNU-stack section implies executable stack/, 'without it, ld warns')
})

t.test('objects are deterministic: the same input, the same bytes', async (t) => {
  for (const hostArch of ARCHES) for (const row of rows) {
    const input: HostObjectInput = { cubin: row.cubin, name: row.name, hostArch, ...(row.sass === undefined ? {} : { sass: row.sass }) }
    const first = packageHostObject(input)
    t.ok(first.equals(packageHostObject({ ...input, cubin: Buffer.from(row.cubin) })), `${hostArch} ${row.name}`)
    const note = gnuPropertyNote(hostArch)
    t.equal(first.indexOf(note), first.lastIndexOf(note), `${hostArch} ${row.name}: one note`)
    t.ok(first.indexOf(note) > 0 && first.indexOf(note) % 8 === 0, `${hostArch} ${row.name}: the note is in it, 8-aligned`)
  }
  // The note, byte for byte: namesz 4, descsz 16, NT_GNU_PROPERTY_TYPE_0, "GNU", one FEATURE_1_AND property.
  t.equal(gnuPropertyNote('x86_64').toString('hex'), '04000000' + '10000000' + '05000000' + '474e5500' + '020000c0' + '04000000' + '03000000' + '00000000')
  t.equal(gnuPropertyNote('aarch64').toString('hex'), '04000000' + '10000000' + '05000000' + '474e5500' + '000000c0' + '04000000' + '03000000' + '00000000')
})

/**
 * Control-flow protection through a real linker, for `compiler` (native cc or a cross gcc): a
 * relocatable link (`-r`) of the hardened checker with the object keeps every feature bit,
 * with the linker's report turned into an error; the same object without its note is reported by
 * name. Then the whole program: the linker names no input of ours (the distribution's own start
 * files may lack the note; that is theirs), and the program runs.
 */
function checkHardenedLink(t: Test, compiler: string, hostArch: HostArch, hardening: string[], report: string[], bits: RegExp): string {
  const dir = scratchDir(t)
  const row = rows[4] as Row
  const object = join(dir, `${row.name}.o`)
  writeFileSync(object, packageHostObject({ cubin: row.cubin, sass: row.sass ?? '', name: row.name, hostArch }))
  writeFileSync(join(dir, 'checker.c'), checkerSource(row.name, true))
  const compiled = run(compiler, [...hardening, '-std=c11', '-c', '-o', join(dir, 'checker.o'), join(dir, 'checker.c')])
  t.equal(compiled.exitCode, 0, `${compiler} ${hardening.join(' ')} compiles the checker`, { stderr: compiled.stderr.toString('utf8') })
  t.match(run('readelf', ['-n', join(dir, 'checker.o')]).stdout.toString('utf8'), bits, 'the hardened checker carries the bits itself')

  const combined = join(dir, 'combined.o')
  const linked = run(compiler, ['-r', '-nostdlib', ...report.map((o) => `-Wl,${o}`), '-o', combined, join(dir, 'checker.o'), object])
  t.equal(linked.exitCode, 0, `${compiler} -r ${report.join(' ')}: linked`, { stderr: linked.stderr.toString('utf8') })
  t.equal(linked.stderr.toString('utf8'), '', 'and the linker reports nothing')
  t.match(run('readelf', ['-n', combined]).stdout.toString('utf8'), bits, 'the linked object keeps every bit')

  const stripped = join(dir, 'stripped.o')
  const objcopy = compiler === 'cc' ? 'objcopy' : compiler.replace(/gcc$/, 'objcopy')
  t.equal(run(objcopy, ['--remove-section', '.note.gnu.property', object, stripped]).exitCode, 0, `${objcopy} removes the note`)
  const without = run(compiler, ['-r', '-nostdlib', ...report.map((o) => `-Wl,${o}`), '-o', join(dir, 'lost.o'), join(dir, 'checker.o'), stripped])
  t.match(without.stderr.toString('utf8'), /stripped\.o: (error: missing IBT and SHSTK properties|warning: BTI turned on by -z force-bti)/, 'without the note, the linker names the object')

  const reported = run(compiler, [...hardening, ...report.filter((o) => o !== '--fatal-warnings').map((o) => `-Wl,${o.replace('=error', '=warning')}`),
    '-o', join(dir, 'reported'), join(dir, 'checker.o'), object])
  t.equal(reported.exitCode, 0, 'the whole program links with the report on', { stderr: reported.stderr.toString('utf8') })
  t.notMatch(reported.stderr.toString('utf8'), /(checker|Page)\.o:/, 'and the linker reports none of our inputs')
  // The program to run is linked without forcing anything: with -z force-bti, the distribution's
  // start files (no BTI landing pads) fault under qemu before main, with or without our object.
  const program = join(dir, 'checker')
  const whole = run(compiler, [...hardening, '-o', program, join(dir, 'checker.o'), object])
  t.equal(whole.exitCode, 0, 'the hardened program links', { stderr: whole.stderr.toString('utf8') })
  return program
}

t.test('x86_64: the object keeps IBT and SHSTK on (-fcf-protection, -z cet-report=error)', {
  skip: native !== 'x86_64' ? 'not an x86_64 machine' : needs('cc', 'readelf', 'objcopy'),
}, async (t) => {
  const program = checkHardenedLink(t, 'cc', 'x86_64', ['-fcf-protection'], ['-z,cet-report=error'], /x86 feature: IBT, SHSTK/)
  const row = rows[4] as Row
  t.equal(run(program, []).stdout.toString('utf8'), checkerExpected(row.cubin, sassBytes(row.sass)), 'the program reads the object')
})

const crossCompiler = 'aarch64-linux-gnu-gcc'
t.test('aarch64: a cross-linked C program reads the object', {
  skip: native === 'aarch64' ? 'aarch64 is native here, covered above' : which(crossCompiler) === null ? `${crossCompiler} not on PATH (readelf checks above still cover aarch64)` : false,
}, async (t) => {
  const dir = scratchDir(t)
  const row = rows[4] as Row
  const object = join(dir, `${row.name}.o`)
  writeFileSync(object, packageHostObject({ cubin: row.cubin, sass: row.sass ?? '', name: row.name, hostArch: 'aarch64' }))
  const { program, linked } = linkChecker(crossCompiler, dir, object, row.name, true)
  t.equal(linked.exitCode, 0, `${crossCompiler} links`, { stderr: linked.stderr.toString('utf8') })
  t.equal(linked.stderr.toString('utf8'), '', 'and warns about nothing')
  const emulator = which('qemu-aarch64')
  if (emulator === null) {
    t.comment('qemu-aarch64 not on PATH: linked but not run')
    return
  }
  const ran = run(emulator, ['-L', '/usr/aarch64-linux-gnu', program])
  t.equal(ran.stdout.toString('utf8'), checkerExpected(row.cubin, sassBytes(row.sass)))
})

t.test('aarch64: the object keeps BTI and PAC on (-mbranch-protection=standard, -z force-bti)', {
  skip: native === 'aarch64' ? needs('cc', 'readelf', 'objcopy') : which(crossCompiler) === null ? `${crossCompiler} not on PATH (readelf -n above still reads the note)` : needs('readelf', 'aarch64-linux-gnu-objcopy'),
}, async (t) => {
  const compiler = native === 'aarch64' ? 'cc' : crossCompiler
  // binutils 2.40's ld has no -z bti-report; -z force-bti warns about every input without BTI, made fatal.
  const program = checkHardenedLink(t, compiler, 'aarch64', ['-mbranch-protection=standard'], ['-z,force-bti', '--fatal-warnings'], /AArch64 feature: BTI, PAC/)
  const row = rows[4] as Row
  const emulator = native === 'aarch64' ? null : which('qemu-aarch64')
  if (native !== 'aarch64' && emulator === null) {
    t.comment('qemu-aarch64 not on PATH: linked but not run')
    return
  }
  const ran = emulator === null ? run(program, []) : run(emulator, ['-L', '/usr/aarch64-linux-gnu', program])
  t.equal(ran.stdout.toString('utf8'), checkerExpected(row.cubin, sassBytes(row.sass)), 'the BTI program reads the object')
})

t.test('bad input is an error naming the field', async (t) => {
  const ok = { cubin: pattern(8), name: 'k', hostArch: 'x86_64' }
  const bad: [string, unknown, string, string, RegExp][] = [
    ['no input', null, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^input: /],
    ['cubin a string', { ...ok, cubin: 'ELF' }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^cubin: expected a Uint8Array or Buffer/],
    ['cubin an array', { ...ok, cubin: [0x7f] }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^cubin: /],
    ['cubin empty', { ...ok, cubin: new Uint8Array(0) }, 'RangeError', 'ERR_ELF_INVALID_VALUE', /^cubin: is empty/],
    ['name missing', { ...ok, name: undefined }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^name: /],
    ['name empty', { ...ok, name: '' }, 'RangeError', 'ERR_ELF_INVALID_NAME', /^name: "" is not a C identifier/],
    ['name with a digit first', { ...ok, name: '1k' }, 'RangeError', 'ERR_ELF_INVALID_NAME', /^name: "1k"/],
    ['name with a dash', { ...ok, name: 'my-kernel' }, 'RangeError', 'ERR_ELF_INVALID_NAME', /^name: /],
    ['name with a dot', { ...ok, name: 'k.o' }, 'RangeError', 'ERR_ELF_INVALID_NAME', /^name: /],
    ['name with a space', { ...ok, name: 'k ' }, 'RangeError', 'ERR_ELF_INVALID_NAME', /^name: /],
    ['name with a NUL', { ...ok, name: 'k\0' }, 'RangeError', 'ERR_ELF_INVALID_NAME', /^name: /],
    ['name not ASCII', { ...ok, name: 'kërnel' }, 'RangeError', 'ERR_ELF_INVALID_NAME', /^name: /],
    ['hostArch missing', { ...ok, hostArch: undefined }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^hostArch: /],
    ['hostArch arm64ec', { ...ok, hostArch: 'arm64ec' }, 'RangeError', 'ERR_ELF_UNSUPPORTED_HOST_ARCH', /^hostArch: "arm64ec" is not supported; supported: x86_64, aarch64/],
    ['hostArch x64', { ...ok, hostArch: 'x64' }, 'RangeError', 'ERR_ELF_UNSUPPORTED_HOST_ARCH', /^hostArch: /],
    ['hostArch from the prototype', { ...ok, hostArch: 'toString' }, 'RangeError', 'ERR_ELF_UNSUPPORTED_HOST_ARCH', /^hostArch: /],
    ['sass a number', { ...ok, sass: 1 }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^sass: /],
    ['sass with a NUL', { ...ok, sass: 'a\0b' }, 'RangeError', 'ERR_ELF_INVALID_VALUE', /^sass: contains a NUL byte at offset 1/],
    ['sass bytes with a NUL', { ...ok, sass: new Uint8Array([65, 0]) }, 'RangeError', 'ERR_ELF_INVALID_VALUE', /^sass: contains a NUL byte at offset 1/],
    ['fatbin empty', { name: 'k', hostArch: 'x86_64', fatbin: new Uint8Array(0) }, 'RangeError', 'ERR_ELF_INVALID_VALUE', /^fatbin: is empty/],
    ['fatbin a string', { name: 'k', hostArch: 'x86_64', fatbin: 'x' }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^fatbin: /],
    ['fatbin and cubin both', { ...ok, fatbin: pattern(8) }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^cubin: expected undefined when fatbin is given/],
    ['neither cubin nor fatbin', { name: 'k', hostArch: 'x86_64' }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^cubin: /],
    // Look-alikes that pass instanceof Uint8Array: V8's uncoded "incompatible receiver" (for sass,
    // "this is not a typed array") came from inside.
    ['cubin a Proxy of a Uint8Array', { ...ok, cubin: new Proxy(pattern(8), {}) }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^cubin: expected a Uint8Array or Buffer/],
    ['cubin made with its prototype', { ...ok, cubin: Object.create(Uint8Array.prototype) }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^cubin: expected a Uint8Array or Buffer/],
    ['fatbin a Proxy of a Uint8Array', { name: 'k', hostArch: 'x86_64', fatbin: new Proxy(pattern(8), {}) }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^fatbin: expected a Uint8Array or Buffer/],
    ['sass a Proxy of a Uint8Array', { ...ok, sass: new Proxy(new Uint8Array([65]), {}) }, 'TypeError', 'ERR_ELF_INVALID_ARG_TYPE', /^sass: expected a string or Uint8Array/],
  ]
  for (const [name, input, errorName, code, message] of bad) {
    t.throws(() => packageHostObject(input as HostObjectInput), { name: errorName, code, message }, name)
  }
})

// The input's own fields only: a sass inherited from a polluted Object.prototype had been packaged
// into every object (as <name>_sass), and an inherited fatbin had failed every one.
t.test('fields inherited from a polluted Object.prototype are never read', async (t) => {
  const input = { cubin: pattern(8), name: 'k', hostArch: 'x86_64' } as const
  for (const packageObject of [packageHostObject, packageCoffObject]) {
    const expected = packageObject(input)
    for (const field of ['sass', 'fatbin'] as const) {
      const object = await withPollutedPrototype({ [field]: pattern(16) }, () => packageObject(input)).catch((error: unknown) => error)
      t.same(object, expected, `${packageObject.name}: an inherited ${field}, the same bytes`)
    }
    const inherited = { cubin: pattern(8), name: 'k', hostArch: 'x86_64' }
    for (const field of ['cubin', 'name', 'hostArch'] as const) {
      const { [field]: _, ...without } = input
      const outcome = await withPollutedPrototype(inherited, () => packageObject(without as HostObjectInput)).then(() => 'packaged', (e: unknown) => e)
      t.match(outcome, { code: 'ERR_ELF_INVALID_ARG_TYPE', message: new RegExp(`^${field}: `) }, `${packageObject.name}: ${field} only inherited is missing`)
    }
  }
})

t.test('a fat binary instead of a cubin: <name>_fatbin and <name>_fatbin_size, laid out as a cubin is', { skip: needs('readelf') }, async (t) => {
  const dir = scratchDir(t)
  for (const hostArch of ARCHES) {
    const bytes = pattern(4097)
    const object = join(dir, `fat-${hostArch}.o`)
    writeFileSync(object, packageHostObject({ fatbin: bytes, name: 'vadd', hostArch }))
    const syms = symbols(object)
    t.same([...syms.keys()].filter((n) => n !== '').sort(), hostObjectSymbols('vadd', false, 'fatbin').sort(), `${hostArch}: the fatbin symbols`)
    t.same(hostObjectSymbols('vadd', false, 'fatbin'), ['vadd_fatbin', 'vadd_fatbin_size'])
    t.match(syms.get('vadd_fatbin'), { type: 'OBJECT', bind: 'GLOBAL', value: 0, size: bytes.length }, `${hostArch}: _fatbin`)
    t.match(syms.get('vadd_fatbin_size'), { value: 4104, size: 8 }, `${hostArch}: _fatbin_size after the 8-aligned bytes`)
    t.ok(sectionBytes(object, '.rodata').equals(expectedRodata(bytes, null)), `${hostArch}: .rodata holds the fat binary and its size`)
  }
})
