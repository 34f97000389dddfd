// The ptxas options a caller passes through (the Program's ptxasOptions, compile's
// --ptxas-options), checked before anything runs: each must be an option the ptxas to be run
// lists in its --help (probe.ts), and none may be one the harness sets itself (the target, the
// optimization level, the input, the output, ...), which would contradict the argv it builds or
// make ptxas print something other than a cubin. An option's value is the next token unless it
// is glued on (`--maxrregcount=32`), as ptxas parses them.

import { invalidType, invalidValue, ownElements, requireNoNul } from '../errors.js'
import { splitCommand } from '../split-command.js'
import type { PtxasOption, PtxasProbe } from './probe.js'

/**
 * The options the harness owns, long and short spelling, each with what to use instead. A
 * listing option (--help, --version, --list-version) makes ptxas print and write no cubin; an
 * options file could carry any of the others.
 */
const OWNED: ReadonlyArray<readonly [long: string, short: string, instead: string]> = [
  ['--gpu-name', '-arch', 'gpuName (--gpu-name)'],
  ['--opt-level', '-O', 'optLevel (-O)'],
  ['--output-file', '-o', 'the output (tileharness reads the cubin from ptxas\'s stdout)'],
  ['--input-as-string', '-ias', 'the input'],
  ['--device-debug', '-g', 'deviceDebug (--device-debug)'],
  ['--generate-line-info', '-lineinfo', 'lineinfo (--lineinfo)'],
  ['--sanitize', '-sanitize', 'sanitize (--sanitize)'],
  ['--compile-only', '-c', 'relocatable (--relocatable-device-code, -c)'],
  ['--options-file', '-optf', 'the options themselves'],
  ['--help', '-h', 'nothing: it prints and writes no cubin'],
  ['--version', '-V', 'nothing: it prints and writes no cubin'],
  ['--list-version', '-version-ls', 'nothing: it prints and writes no cubin'],
]

/** The tokens of `value`: an array of tokens as they are, or one string split as a shell would. */
export function ptxasOptionTokens(field: string, value: unknown): string[] {
  if (typeof value === 'string') return splitCommand(value, field)
  if (!Array.isArray(value)) throw invalidType(field, 'a string or an array of strings', value)
  // Every index, a hole as undefined (refused): map kept the hole, and the argv read it from Array.prototype.
  return ownElements(value, field).map((token: unknown) => {
    if (typeof token !== 'string') throw invalidType(field, 'a string or an array of strings', token)
    return requireNoNul(field, token)
  })
}

/**
 * Checks `tokens` against the harness's own options and, when there is a probe, against what
 * that ptxas accepts. Returns them unchanged; throws a TypeError (ERR_INVALID_ARG_VALUE) naming
 * `field` and the offending token.
 */
export function checkPtxasOptions(field: string, tokens: readonly string[], probe: PtxasProbe | null): readonly string[] {
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]
    if (!token.startsWith('-') || token === '-' || token === '--') {
      throw invalidValue(field, `has ${JSON.stringify(token)} where an option belongs: ptxas would take it for an input file`)
    }
    const name = token.split('=', 1)[0]
    const owned = OWNED.find(([long, short]) => name === long || name === short) ??
      (probe !== null && findOption(probe, name) !== undefined ? undefined : gluedOwned(name))
    if (owned !== undefined) {
      throw invalidValue(field, `has ${JSON.stringify(token)}, an option tileharness sets itself: use ${owned[2]}`)
    }
    if (probe === null) continue
    if (!probe.accepts(token)) {
      throw invalidValue(field, `has ${JSON.stringify(token)}, which is not an option of ${probe.path}` +
        `${probe.version === null ? '' : ` (ptxas ${probe.version})`}; see ptxas --help`)
    }
    const option = findOption(probe, name)
    // A value not glued on is the next token.
    if (option?.argument != null && !token.includes('=') && name === token) {
      if (i + 1 >= tokens.length) throw invalidValue(field, `has ${JSON.stringify(token)} without its value ${option.argument}`)
      i++
    }
  }
  return tokens
}

/**
 * `-O3`: a value glued to the owned option ptxas takes so. (Not -o: ptxas reads `-ofile.cubin`,
 * like `-opt-level=1`, as an unknown option of that name, not as -o with a value.)
 */
function gluedOwned(name: string): (typeof OWNED)[number] | undefined {
  return OWNED.find(([, short]) => short === '-O' && name.startsWith(short) && name.length > 2)
}

function findOption(probe: PtxasProbe, name: string): PtxasOption | undefined {
  return probe.options.find((o) => (name.startsWith('--') ? o.long === name : o.short === name))
}
