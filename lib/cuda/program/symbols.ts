// The host object's symbols from a program's point of view: the prefix a program's symbols share
// (its `name`, checked here and only here, for create and the CLI's --name alike), and the
// symbols its object will define, so compileMany can tell before running anything that two
// programs' objects could not be linked into one program.

import { invalidValue, requireString } from '../../errors.js'
import { hostObjectSymbols } from '../../elf/package.js'
import { checkBaseName } from '../temp-file.js'
import type { ResolvedConfig } from './config.js'

/** The symbol prefix when none is given. */
export const DEFAULT_PROGRAM_NAME = 'program'

const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * `name` as a symbol prefix: a C identifier (it starts <name>_cubin in C code), short enough to
 * also name the program's temp files. Throws a TypeError with code ERR_INVALID_ARG_VALUE (or
 * ERR_INVALID_ARG_TYPE) and `field`.
 */
export function checkSymbolPrefix(field: string, name: unknown): string {
  if (!C_IDENTIFIER.test(requireString(field, name))) {
    throw invalidValue(field, 'must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)', name)
  }
  return checkBaseName(field, name)
}

/** The global symbols the host object of a compile with `config` defines. */
export function programSymbols(config: Pick<ResolvedConfig, 'name' | 'dumpSassCommand' | 'fatbin'>): string[] {
  return hostObjectSymbols(config.name, config.dumpSassCommand !== null, config.fatbin ? 'fatbin' : 'cubin')
}

/**
 * For each program (by index; null for none) that would define a symbol an earlier one defines,
 * the one-line reason it cannot be compiled in the same batch.
 */
export function symbolClashes(configs: ReadonlyArray<Pick<ResolvedConfig, 'name' | 'dumpSassCommand' | 'fatbin'> | null>): Map<number, string> {
  const owners = new Map<string, number>()
  const clashes = new Map<number, string>()
  for (const [i, config] of configs.entries()) {
    if (config === null) continue
    const symbols = programSymbols(config)
    const taken = symbols.filter((s) => owners.has(s))
    if (taken.length > 0) {
      const first = owners.get(taken[0]) as number
      clashes.set(i, `programs[${i}] would define ${taken.join(', ')}, as programs[${first}] does, so their objects ` +
        `could not be linked together; give each program its own name (name ${JSON.stringify(config.name)} is taken)`)
      continue
    }
    for (const s of symbols) owners.set(s, i)
  }
  return clashes
}
