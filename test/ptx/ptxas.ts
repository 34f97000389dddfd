// Assembling PTX with the real ptxas, for the ptx and elf tests: PTX in a file, the cubin in a file
// (ptxas cannot write to Node's stdout socket, docs/toolchain-contract.md, "Measured: ptxas 13.0"), both in a fresh directory.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { needs, run, type RunResult } from './run.js'

/** The tap `skip` option of tests that run ptxas. */
export const skipWithoutPtxas = needs('ptxas')

export interface Assembled {
  result: RunResult
  /** The cubin, when ptxas exited 0 and wrote one. */
  cubin: Buffer | null
  stderr: string
}

/** `ptxas -arch <arch> [extra] in.ptx -o out.cubin` in a temporary directory removed afterwards. */
export function assemble(ptx: string, arch: string, extra: readonly string[] = []): Assembled {
  const dir = mkdtempSync(join(tmpdir(), 'tileharness-ptxas-'))
  try {
    const input = join(dir, 'in.ptx')
    const output = join(dir, 'out.cubin')
    writeFileSync(input, ptx)
    const result = run('ptxas', ['-arch', arch, ...extra, input, '-o', output])
    let cubin: Buffer | null = null
    if (result.exitCode === 0) {
      try {
        cubin = readFileSync(output)
      } catch {
        cubin = null
      }
    }
    return { result, cubin, stderr: result.stderr.toString('utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Registers per function from `ptxas -v`: "Function properties for k" ... "Used N registers". */
export function registersFromVerbose(stderr: string): Map<string, number> {
  const registers = new Map<string, number>()
  let current: string | undefined
  for (const line of stderr.split('\n')) {
    const fn = /Function properties for (\S+)/.exec(line)
    if (fn !== null) current = fn[1]
    const used = /Used (\d+) registers/.exec(line)
    if (used !== null && current !== undefined) registers.set(current, Number(used[1]))
  }
  return registers
}

export const ELF_MAGIC = Buffer.from([0x7f, 0x45, 0x4c, 0x46])

export function isElf(bytes: Buffer | null): boolean {
  return bytes !== null && bytes.length >= 4 && bytes.subarray(0, 4).equals(ELF_MAGIC)
}
