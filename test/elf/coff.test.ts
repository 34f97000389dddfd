// packageCoffObject (hostOs 'windows'), checked with real tools. For x86_64 and aarch64: LLVM's
// assembler (llvm-mc, for the *-pc-windows-msvc triples) makes the same object from assembly, and
// llvm-nm, llvm-objdump and llvm-readobj must see the same symbols, bytes and section flags in
// both. For x86_64, the mingw-w64 cross toolchain links a C program that reads the object through
// its symbols, and wine runs it. ARM64 Windows has no linker here (no lld, no aarch64 mingw-w64):
// its objects are checked against llvm-mc's only. Each test says what it skips and why.
import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import {
  COFF_MACHINES, hostObjectSymbols, IMAGE_FILE_MACHINE_AMD64, IMAGE_FILE_MACHINE_ARM64, packageCoffObject, packageHostObject,
  type HostArch, type HostObjectInput,
} from '../../lib/elf/index.js'
import { needs, run, which } from '../ptx/run.js'
import { checkerExpected, checkerSource, pattern, scratchDir } from './host.js'

const ARCHES: HostArch[] = ['x86_64', 'aarch64']
const TRIPLES: Record<HostArch, string> = { x86_64: 'x86_64-pc-windows-msvc', aarch64: 'aarch64-pc-windows-msvc' }

interface Row {
  name: string
  cubin: Buffer
  sass?: string
}

// Names whose symbols fit the 8-byte name field (k_cubin) and names that need the string table;
// lengths around the 8-byte alignment of the size symbols.
const rows: Row[] = [
  { name: 'k', cubin: pattern(1) },
  { name: 'k', cubin: pattern(8), sass: 'code for sm_100\n\tEXIT ;\n' },
  { name: 'vadd_sm_100', cubin: pattern(4097), sass: 'utf-8 → µ\n' },
  { name: '_', cubin: pattern(9), sass: '' },
]

function input(row: Row, hostArch: HostArch): HostObjectInput {
  return { cubin: row.cubin, name: row.name, hostArch, ...(row.sass === undefined ? {} : { sass: row.sass }) }
}

/** The assembly llvm-mc turns into the object packageCoffObject should write for `row`. */
function referenceAssembly(row: Row, cubinFile: string, sassFile: string): string {
  const lines = [
    '\t.section .rdata,"dr"', '\t.p2align 3',
    `\t.globl ${row.name}_cubin`, `${row.name}_cubin:`, `\t.incbin "${cubinFile}"`,
    '\t.p2align 3', `\t.globl ${row.name}_cubin_size`, `${row.name}_cubin_size:`, `\t.quad ${row.cubin.length}`,
  ]
  if (row.sass !== undefined) {
    lines.push(`\t.globl ${row.name}_sass_size`, `${row.name}_sass_size:`, `\t.quad ${Buffer.byteLength(row.sass)}`,
      '\t.section .nvdisasm,"dr"', '\t.p2align 0', `\t.globl ${row.name}_sass`, `${row.name}_sass:`, `\t.incbin "${sassFile}"`, '\t.byte 0')
  }
  return lines.join('\n') + '\n'
}

/** `<section>: <characteristics>` for every section llvm-readobj lists. */
function characteristics(object: string): Map<string, string> {
  const text = run('llvm-readobj', ['--sections', object]).stdout.toString('utf8')
  const out = new Map<string, string>()
  for (const m of text.matchAll(/Name: (\S+) \([^)]*\)[\s\S]*?Characteristics \[ \((0x[0-9A-F]+)\)/g)) out.set(m[1] ?? '', m[2] ?? '')
  return out
}

t.test('the same symbols, bytes and section flags as LLVM assembles them', { skip: needs('llvm-mc', 'llvm-nm', 'llvm-objdump', 'llvm-readobj') }, async (t) => {
  const dir = scratchDir(t)
  for (const hostArch of ARCHES) for (const [i, row] of rows.entries()) {
    const label = `${hostArch} ${row.name} (${row.cubin.length} bytes${row.sass === undefined ? '' : ', SASS'})`
    const cubinFile = join(dir, `${i}.cubin`)
    const sassFile = join(dir, `${i}.sass`)
    writeFileSync(cubinFile, row.cubin)
    writeFileSync(sassFile, row.sass ?? '')
    const ours = join(dir, `${hostArch}-${i}.o`)
    const theirs = join(dir, `${hostArch}-${i}-llvm.o`)
    writeFileSync(ours, packageCoffObject(input(row, hostArch)))
    writeFileSync(join(dir, `${i}.s`), referenceAssembly(row, cubinFile, sassFile))
    const assembled = run('llvm-mc', ['-triple', TRIPLES[hostArch], '-filetype=obj', '-o', theirs, join(dir, `${i}.s`)])
    t.equal(assembled.exitCode, 0, `${label}: llvm-mc assembles the reference`, { stderr: assembled.stderr.toString('utf8') })

    const header = run('llvm-readobj', ['--file-headers', ours])
    t.equal(header.stderr.toString('utf8'), '', `${label}: llvm-readobj reads it without a complaint`)
    t.match(header.stdout.toString('utf8'), hostArch === 'x86_64' ? /Machine: IMAGE_FILE_MACHINE_AMD64 \(0x8664\)/ : /Machine: IMAGE_FILE_MACHINE_ARM64 \(0xAA64\)/, `${label}: machine`)
    t.match(header.stdout.toString('utf8'), /TimeDateStamp: 1970-01-01 00:00:00 \(0x0\)/, `${label}: no time stamp`)

    const nm = (object: string) => run('llvm-nm', [object]).stdout.toString('utf8')
    t.equal(nm(ours), nm(theirs), `${label}: llvm-nm lists the same symbols, read-only data, at the same offsets`)
    t.same(nm(ours).trim().split('\n').map((l) => l.split(' ')[2]).sort(), hostObjectSymbols(row.name, row.sass !== undefined).sort(),
      `${label}: the ELF object's symbols, undecorated`)
    const contents = (object: string) => run('llvm-objdump', ['-s', '-j', '.rdata', '-j', '.nvdisasm', object]).stdout.toString('utf8').split('\n').slice(2).join('\n')
    t.equal(contents(ours), contents(theirs), `${label}: the same bytes in .rdata and .nvdisasm`)
    const ourFlags = characteristics(ours)
    const llvmFlags = characteristics(theirs)
    t.same([...ourFlags.keys()], row.sass === undefined ? ['.rdata'] : ['.rdata', '.nvdisasm'], `${label}: the sections`)
    for (const [section, flags] of ourFlags) t.equal(flags, llvmFlags.get(section), `${label}: ${section} is read-only data aligned as LLVM aligns it (${flags})`)
  }
})

const mingw = 'x86_64-w64-mingw32-gcc'
/** Debian's wine64 package installs its loader outside PATH. */
const wine = which('wine') ?? which('wine64') ?? (existsSync('/usr/lib/wine/wine64') ? '/usr/lib/wine/wine64' : null)

t.test('x86_64: mingw-w64 links a C program that reads the object, and wine runs it', {
  skip: which(mingw) === null ? `${mingw} not on PATH (install mingw-w64; llvm-mc checks above still cover the object)` : needs('x86_64-w64-mingw32-objdump'),
}, async (t) => {
  const dir = scratchDir(t)
  const expected: Array<[string, string]> = []
  for (const [i, row] of rows.entries()) {
    const object = join(dir, `${i}.o`)
    writeFileSync(object, packageCoffObject(input(row, 'x86_64')))
    const dump = run('x86_64-w64-mingw32-objdump', ['-h', '-t', object])
    t.equal(dump.stderr.toString('utf8'), '', `${i}: objdump reads it without a complaint`)
    t.match(dump.stdout.toString('utf8'), /file format pe-x86-64/, `${i}: pe-x86-64`)
    t.match(dump.stdout.toString('utf8'), /\.rdata\s+[0-9a-f]+(\s+[0-9a-f]+){3}\s+2\*\*3\n\s+CONTENTS, ALLOC, LOAD, READONLY, DATA/, `${i}: .rdata is read-only data, 8-aligned`)
    for (const symbol of hostObjectSymbols(row.name, row.sass !== undefined)) {
      t.match(dump.stdout.toString('utf8'), new RegExp(`\\(scl   2\\) \\(nx 0\\) 0x[0-9a-f]+ ${symbol}\\n`), `${i}: ${symbol} is external`)
    }
    const source = join(dir, `${i}.c`)
    const program = join(dir, `${i}.exe`)
    writeFileSync(source, checkerSource(row.name, row.sass !== undefined))
    const linked = run(mingw, ['-std=c11', '-Wall', '-Wextra', '-Werror', '-Wl,--fatal-warnings', '-o', program, source, object])
    t.equal(linked.exitCode, 0, `${i}: ${mingw} links`, { stderr: linked.stderr.toString('utf8') })
    t.equal(linked.stderr.toString('utf8'), '', `${i}: and warns about nothing`)
    expected.push([program, checkerExpected(row.cubin, row.sass === undefined ? null : Buffer.from(row.sass))])
  }
  if (wine === null) {
    t.comment('wine is not installed (Debian: apt-get install wine64): linked but not run')
    return
  }
  // A prefix of its own; wineserver -w waits for the server this test started to exit.
  const env = { ...process.env, WINEPREFIX: join(dir, 'wine'), WINEDEBUG: '-all' }
  const wineserver = which('wineserver') ?? join(dirname(wine), 'wineserver')
  t.teardown(() => { run(wineserver, ['-w'], { env, timeout: 60000 }) })
  for (const [program, output] of expected) {
    const ran = run(wine, [program], { env, timeout: 300000 })
    t.equal(ran.exitCode, 0, `${program}: runs under wine`, { stderr: ran.stderr.toString('utf8') })
    // The C runtime writes text mode: \n goes out as \r\n.
    t.equal(ran.stdout.toString('utf8').replaceAll('\r\n', '\n'), output, `${program}: sizes and FNV-1a 64 hashes match`)
  }
})

t.test('deterministic, and the same checks as the ELF packager', async (t) => {
  for (const hostArch of ARCHES) for (const row of rows) {
    const first = packageCoffObject(input(row, hostArch))
    t.ok(first.equals(packageCoffObject({ ...input(row, hostArch), cubin: Buffer.from(row.cubin) })), `${hostArch} ${row.name}: the same bytes`)
    t.equal(first.readUInt16LE(0), COFF_MACHINES[hostArch])
  }
  t.equal(COFF_MACHINES.x86_64, IMAGE_FILE_MACHINE_AMD64)
  t.equal(COFF_MACHINES.aarch64, IMAGE_FILE_MACHINE_ARM64)
  const bad: Array<[string, unknown]> = [
    ['no input', null], ['empty cubin', { cubin: new Uint8Array(0), name: 'k', hostArch: 'x86_64' }],
    ['a name that is no C identifier', { cubin: pattern(8), name: 'my-kernel', hostArch: 'x86_64' }],
    ['arm64ec', { cubin: pattern(8), name: 'k', hostArch: 'arm64ec' }],
    ['SASS with a NUL', { cubin: pattern(8), name: 'k', hostArch: 'x86_64', sass: 'a\0b' }],
  ]
  for (const [name, value] of bad) {
    let elf: unknown
    try {
      packageHostObject(value as HostObjectInput)
    } catch (error) {
      elf = error
    }
    t.throws(() => packageCoffObject(value as HostObjectInput), elf as Error, `${name}: as packageHostObject throws`)
  }
})
